//! Both contract versions, side by side: the shipped plugins as they were built for 0.1.0
//! (`tests/fixtures/contract-0.1.0/`, kept as binaries) pass every shipped scenario and the
//! sweep, alone and beside 0.2.0 plugins in one run; a 0.2.0 refusal carries its code, a 0.1.0
//! one none; and what 0.2.0 adds is held to the same rules as the rest.

use std::path::{Path, PathBuf};
use std::process::Command;

use mesh_adopt_runtime::{Mode, ModuleOutcome};

use crate::conformance::{rust_sweep, said, shipped_scenarios, sweep, sweep_line};
use crate::support::{TestMesh, assert_mentions, mesh_adopt, root, shared_compile_cache};

/// The shipped plugin of `module` as built for contract 0.1.0.
fn fixture(module: &str) -> PathBuf {
    root().join("tests/fixtures/contract-0.1.0").join(format!("{module}.wasm"))
}

/// A copy of the shipped catalogue in which `modules` run their 0.1.0 plugins, their
/// manifests saying so.
fn catalogue_with_0_1_0(modules: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let copied = Command::new("cp").arg("-r").arg(root().join("catalogue/.")).arg(dir.path()).status().unwrap();
    assert!(copied.success());
    for module in modules {
        let module_dir = dir.path().join("modules").join(module);
        std::fs::copy(fixture(module), module_dir.join("adopt.wasm")).unwrap();
        let manifest_path = module_dir.join("manifest.json");
        let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
        manifest["adopt"]["world"] = "mesh:adopt/adopter@0.1.0".into();
        std::fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    }
    dir
}

/// The contract `inspect` says the plugin of `module` in `catalogue` targets.
fn targets(catalogue: &Path, module: &str) -> String {
    let out = mesh_adopt().args(["inspect", module, "--no-cache", "--catalogue", catalogue.to_str().unwrap()]).output();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let line = stdout.lines().find(|l| l.starts_with("targets")).unwrap_or_else(|| panic!("no targets in:\n{stdout}"));
    line.trim_start_matches("targets").trim().to_string()
}

#[test]
fn the_shipped_plugins_built_for_0_1_0_pass_every_shipped_scenario_and_the_sweep() {
    let catalogue = catalogue_with_0_1_0(&["postgres", "nats", "mesh-vault"]);
    for module in ["postgres", "nats", "mesh-vault"] {
        assert_eq!(targets(catalogue.path(), module), "mesh:adopt@0.1.0");
    }
    let (report, passed) = sweep(catalogue.path(), "auto");
    assert!(passed, "the 0.1.0 plugins do not pass the shipped scenarios:\n{report}");
    let shipped: usize =
        shipped_scenarios(catalogue.path()).iter().map(|dir| std::fs::read_dir(dir).unwrap().count()).sum();
    assert!(report.contains(&format!("\n{shipped} passed, 0 failed")), "{report}");
    // Their refusals have no code, and the report says a scenario's was not compared.
    assert!(report.contains("code `image-differs` not compared: the plugin that refused is built for contract 0.1.0"));
    assert_eq!(sweep_line(&report), rust_sweep(), "the 0.1.0 plugins' sweep differs from the 0.2.0 plugins'");
}

/// `mesh-vault` as the JavaScript or Python SDK 0.1.0 built it, unpacked into `dir` and
/// checked against the digest the fixtures' README gives.
fn language_fixture(language: &str, digest: &str, dir: &Path) -> PathBuf {
    let packed = root().join(format!("tests/fixtures/contract-0.1.0/mesh-vault-{language}.wasm.xz"));
    let out = Command::new("xz").arg("-dc").arg(&packed).output().expect("xz unpacks the fixture");
    assert!(out.status.success(), "xz could not unpack {}", packed.display());
    assert_eq!(
        mesh_adopt_runtime::catalogue::sha256_hex(&out.stdout),
        digest,
        "{} is not the fixture it was",
        packed.display()
    );
    let path = dir.join(format!("mesh-vault-{language}.wasm"));
    std::fs::write(&path, out.stdout).unwrap();
    path
}

#[test]
fn the_0_1_0_javascript_and_python_mesh_vault_pass_the_shipped_scenarios_and_the_sweep_beside_0_2_0_plugins() {
    let unpacked = tempfile::tempdir().unwrap();
    for (language, digest) in [
        ("js", "ae424c50514559b361adedf5856f4cf24a3cc463fd97d710a15f428ef2c97871"),
        ("python", "096e561fb1dbb11d7796629bbd01541cacbfe126286b1c078dcb1726ca404136"),
    ] {
        let catalogue = catalogue_with_0_1_0(&["mesh-vault"]);
        let plugin = language_fixture(language, digest, unpacked.path());
        std::fs::copy(plugin, catalogue.path().join("modules/mesh-vault/adopt.wasm")).unwrap();
        assert_eq!(targets(catalogue.path(), "mesh-vault"), "mesh:adopt@0.1.0");
        assert_eq!(targets(catalogue.path(), "postgres"), "mesh:adopt@0.2.0");
        let (report, passed) = sweep(catalogue.path(), "auto");
        assert!(passed, "the 0.1.0 {language} mesh-vault does not pass the shipped scenarios:\n{report}");
        assert_eq!(sweep_line(&report), rust_sweep(), "the 0.1.0 {language} mesh-vault's sweep differs");
    }
}

#[test]
fn plugins_of_both_versions_adopt_phase_three_in_one_run() {
    let catalogue = catalogue_with_0_1_0(&["postgres", "mesh-vault"]);
    assert_eq!(targets(catalogue.path(), "nats"), "mesh:adopt@0.2.0");
    let out = mesh_adopt()
        .args(["run", "--json", "--catalog-source", "https://git.mesh.local/catalogue.git@v3.2.0"])
        .catalogue(catalogue.path())
        .env("XDG_CACHE_HOME", shared_compile_cache())
        .output();
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let events: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let contract_of = |module: &str| {
        events
            .iter()
            .find(|e| e["event"] == "loaded" && e["module"] == module)
            .map(|e| e["contract"].as_str().unwrap().to_string())
    };
    assert_eq!(contract_of("postgres").as_deref(), Some("0.1.0"));
    assert_eq!(contract_of("nats").as_deref(), Some("0.2.0"));
    assert_eq!(contract_of("mesh-vault").as_deref(), Some("0.1.0"));
    let adopted = events.iter().filter(|e| e["event"] == "outcome" && e["outcome"] == "adopted").count();
    assert_eq!(adopted, 3, "{}", said(&out));
}

/// Phase three with the store's image drifted, `postgres` running `plugin`.
async fn image_drift_with(plugin: PathBuf) -> Option<ModuleOutcome> {
    let mut mesh = TestMesh::new();
    mesh.plugins.retain(|(m, _)| m != "postgres");
    mesh.plugins.push(("postgres".into(), plugin));
    mesh.manifest("postgres")["resources"][0]["image"] = "postgres:17.0".into();
    mesh.run_modules(&["postgres"], Mode::Adopt).await.report.outcome("postgres").cloned()
}

#[tokio::test]
async fn a_refusal_of_0_2_0_carries_its_code_and_one_of_0_1_0_none() {
    let newer = image_drift_with(crate::support::plugin("adopt_postgres")).await;
    let older = image_drift_with(fixture("postgres")).await;
    let (
        Some(ModuleOutcome::Refused { code: newer_code, message: newer_message, .. }),
        Some(ModuleOutcome::Refused { code: older_code, message: older_message, .. }),
    ) = (newer, older)
    else {
        panic!("both plugins refuse a store on another image");
    };
    assert_eq!(newer_code.as_deref(), Some("image-differs"));
    assert_eq!(older_code, None);
    // The words are the same rules' in both versions.
    assert_eq!(newer_message, older_message);
}

#[tokio::test]
async fn a_refusal_code_that_is_not_kebab_case_stops_the_plugin_naming_it() {
    let ran = TestMesh::new()
        .with_plugin("postgres", "refuses_with_a_bad_code")
        .run_modules(&["postgres"], Mode::Adopt)
        .await;
    assert_mentions(
        ran.failure("postgres"),
        &["\"Image Differs!\"", "is not kebab-case", "its refusal said: the store's image differs"],
    );
    assert!(ran.commands().is_empty());
}

#[tokio::test]
async fn a_typed_command_is_held_to_the_rules_its_words_are() {
    let mut mesh = TestMesh::new().with_plugin("postgres", "tells_an_option_as_a_node").handover_undeclared();
    mesh.tight = true;
    let ran = mesh.run_modules(&["postgres"], Mode::Adopt).await;
    // Its own refusal: the host's "no", which the SDK names as the call it answered.
    let refused = ran.refusal("postgres");
    assert_mentions(refused, &["push --all", "denied", "its node `--all` starts with `-`"]);
    assert!(!ran.commands().iter().any(|c| c.contains("--all")), "{:?}", ran.commands());
}
