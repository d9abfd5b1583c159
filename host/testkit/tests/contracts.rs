//! A plugin's contract, as the run's `loaded` events say it, decides whether a refusal may go
//! without a code: the shipped plugins as built for contract 0.1.0 (kept as binaries in
//! `tests/fixtures/contract-0.1.0/`) refuse without one, and pass the shipped scenario that
//! expects `image-differs`.

use std::path::{Path, PathBuf};

use mesh_adopt_runtime::plugin::Contract;
use mesh_adopt_runtime::{Limits, PluginHost};

/// The repository's top directory.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A copy, under `dir`, of the shipped catalogue's foundation, genesis credentials and
/// manifests, every module running its plugin as built for contract 0.1.0, its manifest
/// saying so.
fn catalogue_of_0_1_0_plugins(dir: &Path) -> PathBuf {
    let shipped = root().join("catalogue");
    let catalogue = dir.join("catalogue");
    std::fs::create_dir_all(catalogue.join("genesis/credentials")).unwrap();
    std::fs::copy(shipped.join("foundation.json"), catalogue.join("foundation.json")).unwrap();
    for credential in std::fs::read_dir(shipped.join("genesis/credentials")).unwrap() {
        let credential = credential.unwrap();
        std::fs::copy(credential.path(), catalogue.join("genesis/credentials").join(credential.file_name())).unwrap();
    }
    for module in ["postgres", "nats", "mesh-vault"] {
        let module_dir = catalogue.join("modules").join(module);
        std::fs::create_dir_all(&module_dir).unwrap();
        let fixture = root().join("tests/fixtures/contract-0.1.0").join(format!("{module}.wasm"));
        std::fs::copy(fixture, module_dir.join("adopt.wasm")).unwrap();
        let shipped_manifest = std::fs::read(shipped.join("modules").join(module).join("manifest.json")).unwrap();
        let mut manifest: serde_json::Value = serde_json::from_slice(&shipped_manifest).unwrap();
        manifest["adopt"]["world"] = "mesh:adopt/adopter@0.1.0".into();
        std::fs::write(module_dir.join("manifest.json"), serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    }
    catalogue
}

#[test]
fn a_0_1_0_plugins_refusal_passes_without_its_code_because_its_contract_says_so() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("testkit-contracts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let catalogue = catalogue_of_0_1_0_plugins(&dir);
    let file = mesh_adopt_testkit::read(&root().join("plugins/postgres/scenarios/image-drift.toml")).unwrap();
    assert_eq!(file.scenario.expect.code.as_deref(), Some("image-differs"));
    let host = PluginHost::new(Limits::default()).unwrap();
    let ran = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(mesh_adopt_testkit::run(&host, &catalogue, &file, None))
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(ran.report.contracts.get("postgres"), Some(&Contract::V0_1), "{:?}", ran.report.contracts);
    assert_eq!(mesh_adopt_testkit::refusal_code(&ran.report), None);
    let differences = mesh_adopt_testkit::differences(&file.scenario, &ran);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
