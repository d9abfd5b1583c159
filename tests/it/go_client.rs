//! The Go client (`clients/go`): its event types are generated from the types that write the
//! stream (`host/runtime/examples/events-go.rs`, `just go-types`), so a field added to an event
//! reaches the Go types with no hand edit, and this test fails until the generated file is
//! made again.

use std::path::PathBuf;
use std::process::Command;

use crate::support::{root, text};

/// Builds the generator as `cargo test` built the runtime (so its build is reused) and names
/// its program.
fn generator() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.current_dir(root()).args([
        "build",
        "--quiet",
        "-p",
        "mesh-adopt-runtime",
        "--example",
        "events-go",
        "--message-format=json",
    ]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    let out = build.output().expect("cargo runs");
    assert!(out.status.success(), "cargo build --example events-go: {}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "events-go")
        .and_then(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("the generator's program")
}

#[test]
fn go_client_event_types_are_what_the_generator_prints() {
    let printed = Command::new(generator()).output().unwrap();
    assert!(printed.status.success(), "{}", text(&printed.stderr));
    let kept = std::fs::read_to_string(root().join("clients/go/events_gen.go")).unwrap();
    let printed = text(&printed.stdout);
    if printed != kept {
        let line = printed.lines().zip(kept.lines()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "clients/go/events_gen.go is not what `just go-types` prints (first difference at line {}): run it\n\
             printed: {:?}\n   kept: {:?}",
            line + 1,
            printed.lines().nth(line),
            kept.lines().nth(line)
        );
    }
}

/// The generator follows the types: every event kind of the schema has its Go struct and its
/// case in `Decode`, and every field of every kind is a field of that struct.
#[test]
fn go_client_has_every_event_and_field_of_the_schema() {
    let schema = mesh_adopt_runtime::events::json_schema();
    let go = std::fs::read_to_string(root().join("clients/go/events_gen.go")).unwrap();
    for kind in schema["oneOf"].as_array().unwrap() {
        let event = kind["properties"]["event"]["const"].as_str().unwrap();
        assert!(go.contains(&format!("\tcase {event:?}:\n\t\tevent = new(")), "no case for `{event}` in Decode");
        for field in kind["properties"].as_object().unwrap().keys().filter(|k| *k != "event") {
            assert!(
                go.contains(&format!("`json:\"{field}\"`")) || go.contains(&format!("`json:\"{field},omitempty\"`")),
                "the `{event}` event's `{field}` has no Go field"
            );
        }
    }
}
