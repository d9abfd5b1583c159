//! Plugins that are not components for this contract are refused before they run, naming
//! the file.

use std::path::PathBuf;

use mesh_adopt_runtime::Mode;

use crate::support::{TestMesh, assert_mentions, plugin};

/// Runs postgres with `bytes` as its adopt.wasm and returns the failure.
async fn load_failure(bytes: Vec<u8>) -> (String, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("adopt_broken.wasm");
    std::fs::write(&path, bytes).unwrap();
    let mut mesh = TestMesh::new();
    mesh.plugins.retain(|(m, _)| m != "postgres");
    mesh.plugins.push(("postgres".into(), path));
    let ran = mesh.run_modules(&["postgres"], Mode::Adopt).await;
    (ran.failure("postgres").to_string(), ran.commands())
}

#[tokio::test]
async fn refuses_a_file_that_is_not_webassembly() {
    let (failure, commands) = load_failure(b"#!/bin/sh\necho adopted\n".to_vec()).await;
    assert_mentions(&failure, &["plugin", "adopt.wasm", "is not a WebAssembly component: it does not begin as one"]);
    assert!(commands.is_empty());
}

#[tokio::test]
async fn refuses_a_truncated_component() {
    let mut bytes = std::fs::read(plugin("adopt_postgres")).unwrap();
    bytes.truncate(bytes.len() / 2);
    let digest = mesh_adopt_runtime::catalogue::sha256_hex(&bytes);
    let (failure, commands) = load_failure(bytes).await;
    // Its sections run past its end: refused before any digest of it is taken.
    assert_mentions(&failure, &["adopt.wasm", "is not a WebAssembly component", "sections do not fit"]);
    assert!(!failure.contains(&digest[..12]), "{failure}");
    assert!(commands.is_empty());
}

#[tokio::test]
async fn refuses_a_core_module_that_is_not_a_component() {
    let (failure, _) = load_failure(b"\0asm\x01\0\0\0".to_vec()).await;
    assert_mentions(&failure, &["adopt.wasm", "is not a WebAssembly component", "layer 1"]);
}

#[tokio::test]
async fn refuses_corrupt_bytes_inside_a_component() {
    let mut bytes = std::fs::read(plugin("adopt_postgres")).unwrap();
    let middle = bytes.len() / 2;
    for b in &mut bytes[middle..middle + 64] {
        *b = 0xff;
    }
    let (failure, commands) = load_failure(bytes).await;
    // Where the bytes break decides which check names them: the component's sections, or
    // its compile. Either way the plugin is named and nothing runs.
    assert_mentions(&failure, &["plugin `", "adopt.wasm`"]);
    assert!(failure.contains("not a WebAssembly component") || failure.contains("failed to load plugin"), "{failure}");
    assert!(commands.is_empty());
}

#[tokio::test]
async fn refuses_a_module_that_ships_no_plugin() {
    let mut mesh = TestMesh::new();
    mesh.plugins.retain(|(m, _)| m != "mesh-vault");
    let ran = mesh.run_modules(&["mesh-vault"], Mode::Adopt).await;
    assert_mentions(ran.failure("mesh-vault"), &["ships no plugin", "modules/mesh-vault/adopt.wasm"]);
}

#[tokio::test]
async fn refuses_a_malformed_manifest_naming_it() {
    let mut mesh = TestMesh::new();
    *mesh.manifest("postgres") = serde_json::json!(["not", "an", "object"]);
    let ran = mesh.run_modules(&["postgres"], Mode::Adopt).await;
    assert_mentions(ran.failure("postgres"), &["modules/postgres/manifest.json", "malformed", "not a JSON object"]);
}

#[tokio::test]
async fn refuses_a_plugin_built_for_another_contract_version_naming_both() {
    let (failure, commands) = load_failure(std::fs::read(plugin("future_world")).unwrap()).await;
    assert_mentions(
        &failure,
        &["adopt.wasm", "it targets mesh:adopt@0.3.0", "this host implements mesh:adopt@0.1.0 and 0.2.0"],
    );
    assert!(commands.is_empty());
}

#[test]
fn refuses_a_manifest_that_gives_its_adopt_section_twice() {
    // Which of two sections would count is up to the reader; a second, wider grant must not
    // slip past a review of the first.
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("modules/postgres");
    std::fs::create_dir_all(&module).unwrap();
    std::fs::write(
        module.join("manifest.json"),
        r#"{"name": "postgres",
            "adopt": {"plugin": "adopt.wasm"},
            "adopt": {"plugin": "adopt.wasm", "grants": {"credentials": ["store-superuser"]}}}"#,
    )
    .unwrap();
    let err = mesh_adopt_runtime::Catalogue::at(dir.path()).module("postgres").unwrap_err();
    assert!(matches!(err, mesh_adopt_runtime::error::CatalogueError::Malformed { .. }), "{err:?}");
    let said = mesh_adopt_runtime::Error::from(err).chain_text();
    assert_mentions(&said, &["modules/postgres/manifest.json", "malformed", "duplicate field `adopt`"]);
}
