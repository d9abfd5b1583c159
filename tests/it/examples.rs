//! The runtime's examples (`host/runtime/examples/`), built by cargo as a reader of the crate
//! builds them and run: the event schema one prints is the one `docs/events.schema.json`
//! holds, and the fleet adopts phase three on several simulated meshes at once.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use crate::support::root;
use crate::support::text;

/// Builds every example of the workspace's default members, as `cargo test` would (so the
/// libraries it compiled are reused), and names each one's program.
fn built_examples() -> BTreeMap<String, PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.current_dir(root()).args(["build", "--quiet", "--examples", "--message-format=json"]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    let out = build.output().expect("cargo runs");
    assert!(out.status.success(), "cargo build --examples: {}", text(&out.stderr));
    let mut examples = BTreeMap::new();
    for line in text(&out.stdout).lines() {
        let message: serde_json::Value = serde_json::from_str(line).unwrap();
        let is_example = message["target"]["kind"].as_array().is_some_and(|kinds| kinds.iter().any(|k| k == "example"));
        if message["reason"] == "compiler-artifact"
            && is_example
            && let Some(program) = message["executable"].as_str()
        {
            examples.insert(message["target"]["name"].as_str().unwrap().to_string(), PathBuf::from(program));
        }
    }
    examples
}

#[test]
fn the_runtimes_examples_build_and_run() {
    let examples = built_examples();
    let on_disk: Vec<String> = std::fs::read_dir(root().join("host/runtime/examples"))
        .unwrap()
        .map(|entry| entry.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for example in &on_disk {
        assert!(examples.contains_key(example), "the example `{example}` was not built: {examples:?}");
    }
    // events-go, the Go client's types, is run by go_client.rs.
    assert_eq!(on_disk.len(), 3, "a new example is run here too: {on_disk:?}");

    let schema = Command::new(&examples["events-schema"]).output().unwrap();
    assert!(schema.status.success(), "{}", text(&schema.stderr));
    let printed: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("docs/events.schema.json")).unwrap()).unwrap();
    assert!(printed == kept, "docs/events.schema.json is not what `just schema` prints: run it");

    // Three meshes, two in flight at a time: each one's phase three adopted.
    let fleet = Command::new(&examples["fleet"]).args(["3", "2"]).output().unwrap();
    let stdout = text(&fleet.stdout);
    assert!(fleet.status.success(), "{stdout}{}", text(&fleet.stderr));
    assert!(stdout.starts_with("meshes=3 in_flight=2 adopted=3 wall_ms="), "{stdout}");
}
