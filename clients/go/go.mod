module meshadopt.example/meshadopt

go 1.19
