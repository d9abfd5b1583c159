//! `mesh-adopt new`, tried as a new user would from docs/writing-a-plugin.md: scaffold a
//! module in a copy of the project, build its plugin, run its first scenario.

use std::path::Path;
use std::process::Command;

use crate::support::root;

/// Copies a directory's source files, leaving build output behind.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap();
        if name == "target" {
            continue;
        }
        if path.is_dir() {
            copy_tree(&path, &to.join(name));
        } else {
            std::fs::copy(&path, to.join(name)).unwrap();
        }
    }
}

#[test]
fn a_new_module_builds_and_passes_its_first_scenario_unchanged() {
    let project = tempfile::tempdir().unwrap();
    for part in ["plugins", "wit", "catalogue", "tests/plugins"] {
        copy_tree(&root().join(part), &project.path().join(part));
    }
    let mesh_adopt = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mesh-adopt"))
            .current_dir(project.path())
            .env("XDG_CACHE_HOME", project.path().join("cache"))
            .args(args)
            .output()
            .unwrap()
    };
    let made = mesh_adopt(&["new", "demo-cache"]);
    let said = String::from_utf8_lossy(&made.stdout);
    assert!(made.status.success(), "{said}{}", String::from_utf8_lossy(&made.stderr));
    assert!(said.contains("next: `just build-plugins`"), "{said}");

    // Build as `just build-plugins` does, sharing the project's build cache.
    let target = root().join("plugins/target");
    let built = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--release", "--target", "wasm32-wasip2", "-p", "adopt-demo-cache"])
        .arg("--manifest-path")
        .arg(project.path().join("plugins/Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    std::fs::copy(
        target.join("wasm32-wasip2/release/adopt_demo_cache.wasm"),
        project.path().join("catalogue/modules/demo-cache/adopt.wasm"),
    )
    .unwrap();

    let tested = mesh_adopt(&["test", "plugins/demo-cache"]);
    let out = String::from_utf8_lossy(&tested.stdout);
    assert!(tested.status.success(), "{out}{}", String::from_utf8_lossy(&tested.stderr));
    assert!(out.contains("ok    demo-cache/installs"), "{out}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
}
