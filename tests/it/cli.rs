//! The `mesh-adopt` binary as an operator runs it.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{example_catalogue, plugin};

/// A copy of the example catalogue with freshly built plugins beside its manifests.
fn catalogue() -> tempfile::TempDir {
    example_catalogue(&plugin("adopt_postgres"))
}

fn mesh_adopt(catalogue: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mesh-adopt"))
        // Keep the compile cache inside the test's own directory.
        .env("XDG_CACHE_HOME", catalogue.join("cache"))
        .args(args)
        .arg("--catalogue")
        .arg(catalogue)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn run_adopts_phase_three_and_summarises() {
    let dir = catalogue();
    let out = mesh_adopt(dir.path(), &["run", "--catalog-source", "https://git.mesh.test/catalogue.git@v3"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{}", text(&out.stderr));
    for expected in [
        "postgres │ adopting mesh-store",
        "nats │ restarting mesh-bus once",
        "postgres     adopted",
        "nats         adopted",
        "mesh-vault   adopted",
        "kept         mesh-store (postgres:16.4-bookworm)",
        "recreated    mesh-bus (nats:2.10.22-alpine → registry.mesh.local/nats-snapshot:2.10.22-mesh.3)",
        "created      mesh-vault",
        "invariants   all held",
    ] {
        assert!(stdout.contains(expected), "expected {expected:?} in:\n{stdout}");
    }
    // The genesis superuser never reaches the operator's screen.
    let secret = std::fs::read_to_string(dir.path().join("genesis/credentials/store-superuser")).unwrap();
    assert!(!stdout.contains(secret.trim()));
}

#[test]
fn a_refusal_exits_1_and_says_why() {
    let dir = catalogue();
    let out = mesh_adopt(dir.path(), &["run"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // Preflight checks every module and lists every refusal, and nothing is adopted.
    for module in ["postgres    ", "nats        ", "mesh-vault  "] {
        assert!(stdout.contains(&format!("{module} refused   (in check)")), "{stdout}");
    }
    assert!(!stdout.contains("adopted"), "{stdout}");
}

#[test]
fn an_unusable_catalogue_exits_2_with_an_error() {
    let out = mesh_adopt(Path::new("/nonexistent/catalogue"), &["run"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).trim(),
        "error: the catalogue `/nonexistent/catalogue` is not a directory (pass --catalogue DIR)"
    );
}

#[test]
fn a_malformed_foundation_exits_2_naming_the_file() {
    let dir = catalogue();
    std::fs::write(dir.path().join("foundation.json"), "{\"resources\": [").unwrap();
    let out = mesh_adopt(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("the foundation bundle `") && stderr.contains("foundation.json` is malformed"), "{stderr}");
}

#[test]
fn inspect_shows_a_modules_plugin_digest_grants_and_imports() {
    use sha2::Digest;
    let dir = catalogue();
    let out = mesh_adopt(dir.path(), &["inspect", "nats"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let digest = format!("{:x}", sha2::Sha256::digest(std::fs::read(plugin("adopt_nats")).unwrap()));
    for expected in [
        format!("sha256       {digest}"),
        "targets      mesh:adopt@0.1.0".into(),
        "loads        yes".into(),
        "             inspect: mesh-bus".into(),
        "             fetch: http://127.0.0.1:8222/healthz".into(),
        "mesh:adopt/machine@0.1.0".into(),
        "exports      check, adopt".into(),
    ] {
        assert!(stdout.contains(&expected), "expected {expected:?} in:\n{stdout}");
    }
}

#[test]
fn inspect_says_why_a_plugin_for_another_contract_would_not_load() {
    let dir = catalogue();
    let path = plugin("future_world");
    let out = mesh_adopt(dir.path(), &["inspect", path.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("targets      mesh:adopt@0.2.0"), "{stdout}");
    assert!(stdout.contains("loads        no: it targets mesh:adopt@0.2.0"), "{stdout}");
}

#[test]
fn replay_answers_a_plugin_from_a_recording_and_names_where_another_diverges() {
    let dir = catalogue();
    let record = dir.path().join("run.jsonl");
    let recorded = mesh_adopt(
        dir.path(),
        &[
            "run",
            "--node",
            "node-7",
            "--wait",
            "30s",
            "--catalog-source",
            "https://git.mesh.test/c.git@v2",
            "--record",
            record.to_str().unwrap(),
        ],
    );
    assert_eq!(recorded.status.code(), Some(0), "{}", text(&recorded.stderr));

    // The same plugins make every recorded call, in order, on the recorded node and source
    // without being told them again.
    let same = mesh_adopt(dir.path(), &["replay", record.to_str().unwrap()]);
    let stdout = text(&same.stdout);
    assert_eq!(same.status.code(), Some(0), "{stdout}{}", text(&same.stderr));
    assert!(
        stdout.contains("on node node-7, built from https://git.mesh.test/c.git@v2, waiting up to 30s"),
        "{stdout}"
    );
    assert!(stdout.contains("the plugin made every recorded call, in order"), "{stdout}");

    // An option given on the command line wins over the recorded one, and shows where the
    // run would have differed.
    let elsewhere = mesh_adopt(dir.path(), &["replay", record.to_str().unwrap(), "--node", "node-1"]);
    let stdout = text(&elsewhere.stdout);
    assert_eq!(elsewhere.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "diverged at call 4: the recording has tell `module issue postgres --node node-7` (postgres), the plugin made tell `module issue postgres --node node-1`"
        ),
        "{stdout}"
    );

    // A postgres plugin that skips the superuser diverges where the recording delivers it.
    let changed = plugin("pushes_before_secret");
    let other = mesh_adopt(
        dir.path(),
        &["replay", record.to_str().unwrap(), "--module", "postgres", "--plugin", changed.to_str().unwrap()],
    );
    let stdout = text(&other.stdout);
    assert_eq!(other.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "diverged at call 7: the recording has carry `secret store-superuser to /accepting-superuser` (postgres), the plugin made tell `push node-7`"
        ),
        "{stdout}"
    );
}

#[test]
fn replay_refuses_a_recording_whose_run_options_are_malformed() {
    let dir = catalogue();
    let record = dir.path().join("run.jsonl");
    std::fs::write(
        &record,
        concat!(
            r#"{"event":"run","modules":["postgres"],"options":{"node":"node-1"},"mesh":"simulated"}"#,
            "\n",
            r#"{"event":"call","module":"postgres","op":"tell","args":"push node-1","ok":true,"result":""}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = mesh_adopt(dir.path(), &["replay", record.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("line 1 of the recording"), "{stderr}");
    assert!(stderr.contains("has malformed run options"), "{stderr}");
    assert!(stderr.contains("no `wait_s`"), "{stderr}");
}
