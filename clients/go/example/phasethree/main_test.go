package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The example adopts phase three on the simulated mesh as its comment says it does, against
// the built command ($MESH_ADOPT_BIN, else the project's debug build).
func TestPhaseThreeAdoptsOnTheSimulator(t *testing.T) {
	top, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	binary := os.Getenv("MESH_ADOPT_BIN")
	if binary == "" {
		binary = filepath.Join(top, "target", "debug", "mesh-adopt")
	}
	out, err := exec.Command("go", "run", ".", "-mesh-adopt", binary, "-dir", top).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "phase three done") {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, said := range []string{"postgres   plan:", "adopted: mesh-store is now the postgres module's store", "mesh-vault created"} {
		if !strings.Contains(string(out), said) {
			t.Errorf("no %q in:\n%s", said, out)
		}
	}
}
