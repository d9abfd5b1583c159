fn main() -> std::process::ExitCode {
    mesh_adopt::cli::main()
}
