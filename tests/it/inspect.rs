//! `mesh-adopt inspect` as an operator runs it: what a plugin is and may do, by module, by
//! module directory or by file, and why one built for another contract would not load.

use crate::support::{catalogue, mesh_adopt, plugin, text};

#[test]
fn inspect_shows_a_modules_plugin_digest_grants_and_imports() {
    use sha2::Digest;
    let dir = catalogue();
    let out = mesh_adopt().args(["inspect", "nats"]).catalogue(dir.path()).output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let digest = format!("{:x}", sha2::Sha256::digest(std::fs::read(plugin("adopt_nats")).unwrap()));
    for expected in [
        format!("sha256       {digest}"),
        "targets      mesh:adopt@0.2.0".into(),
        "loads        yes, on this host (it speaks mesh:adopt@0.1.0 and 0.2.0)".into(),
        "             inspect: mesh-bus".into(),
        "             fetch: http://127.0.0.1:8222/healthz".into(),
        "mesh:adopt/machine@0.2.0".into(),
        "exports      init, check, adopt".into(),
    ] {
        assert!(stdout.contains(&expected), "expected {expected:?} in:\n{stdout}");
    }
}

#[test]
fn inspect_says_why_a_plugin_for_another_contract_would_not_load() {
    let dir = catalogue();
    let path = plugin("future_world");
    let out = mesh_adopt().args(["inspect", path.to_str().unwrap()]).catalogue(dir.path()).output();
    let stdout = text(&out.stdout);
    assert!(stdout.contains("targets      mesh:adopt@0.3.0"), "{stdout}");
    assert!(stdout.contains("loads        no: it targets mesh:adopt@0.3.0"), "{stdout}");
}

#[test]
fn inspect_takes_a_module_directory() {
    let dir = catalogue();
    let module_dir = dir.path().join("modules/postgres");
    let out = mesh_adopt().arg("inspect").arg(&module_dir).output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stdout.contains("module       postgres"), "{stdout}");
}
