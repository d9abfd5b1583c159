//! The rules of the mesh come from what a catalogue declares, never from phase three's names:
//! every scenario of the shipped catalogue (the edits the rules refuse, and the clean phase),
//! run again on a copy where every container, module, bundle id, credential and secret is
//! renamed, ends the same way, with a plugin that knows no name of its own.

use std::path::Path;

use mesh_adopt_runtime::PHASE_THREE;

use crate::support::{host, plugin, root};

/// Each name the shipped catalogue uses and what the copy calls it, in the order they are
/// replaced (a longer name before one it contains). Quoted or backticked where the bare word
/// is also part of something else (`postgres` of `postgres:16.4-bookworm`).
const RENAMES: [(&str, &str); 28] = [
    ("store-superuser", "cred-a"),
    ("postgres/superuser", "pg-alt/su"),
    ("mesh-vault/unseal-key", "kv-alt/uk"),
    ("\"superuser\"", "\"su\""),
    ("\"unseal-key\"", "\"uk\""),
    ("mesh-store", "db-7"),
    ("mesh-bus", "queue-3"),
    ("mesh-control", "ctl-9"),
    ("mesh-vault", "kv-alt"),
    ("mesh-network", "net-5"),
    ("bus-accounts", "f-1"),
    ("\"postgres\"", "\"pg-alt\""),
    ("manifest:postgres", "manifest:pg-alt"),
    ("`postgres`", "`pg-alt`"),
    ("\"nats\"", "\"q-alt\""),
    ("manifest:nats", "manifest:q-alt"),
    ("`nats`", "`q-alt`"),
    ("\"store\"", "\"s-1\""),
    ("`store`", "`s-1`"),
    ("\"broker\"", "\"b-1\""),
    ("`broker`", "`b-1`"),
    ("\"control\"", "\"c-1\""),
    ("`control`", "`c-1`"),
    ("\"server\"", "\"main\""),
    ("\"data\"", "\"d-1\""),
    ("${access:data}", "${access:d-1}"),
    ("\"streams\"", "\"st-1\""),
    ("${access:streams}", "${access:st-1}"),
];

fn renamed(text: &str) -> String {
    RENAMES.iter().fold(text.to_string(), |text, (from, to)| text.replace(from, to))
}

fn copy_renamed(from: &Path, to: &Path) {
    std::fs::write(to, renamed(&std::fs::read_to_string(from).unwrap())).unwrap();
}

/// The shipped catalogue, renamed throughout, every module's plugin one that hands over what
/// its manifest declares and otherwise runs the provider sequence.
fn renamed_catalogue() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let (shipped, at) = (root().join("catalogue"), dir.path());
    copy_renamed(&shipped.join("foundation.json"), &at.join("foundation.json"));
    std::fs::create_dir_all(at.join("genesis/credentials")).unwrap();
    std::fs::copy(shipped.join("genesis/credentials/store-superuser"), at.join("genesis/credentials/cred-a")).unwrap();
    for module in PHASE_THREE {
        let name = renamed(&format!("\"{module}\"")).trim_matches('"').to_string();
        let module_dir = at.join("modules").join(&name);
        std::fs::create_dir_all(&module_dir).unwrap();
        copy_renamed(&shipped.join("modules").join(module).join("manifest.json"), &module_dir.join("manifest.json"));
        std::fs::copy(plugin("hands_over_as_declared"), module_dir.join("adopt.wasm")).unwrap();
    }
    std::fs::create_dir_all(at.join("scenarios")).unwrap();
    for scenario in std::fs::read_dir(shipped.join("scenarios")).unwrap() {
        let scenario = scenario.unwrap().path();
        copy_renamed(&scenario, &at.join("scenarios").join(scenario.file_name().unwrap()));
    }
    dir
}

#[tokio::test]
async fn every_catalogue_scenario_ends_the_same_on_a_catalogue_renamed_throughout() {
    let dir = renamed_catalogue();
    // Nothing of phase three's names is left for a rule to hang on.
    for file in ["foundation.json", "modules/pg-alt/manifest.json", "modules/q-alt/manifest.json"] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        for old in ["mesh-store", "mesh-bus", "mesh-control", "\"store\"", "\"broker\"", "\"postgres\"", "superuser"] {
            assert!(!text.contains(old), "{file} still says {old}: {text}");
        }
    }
    let control = std::fs::read_to_string(dir.path().join("scenarios/vault-named-control.toml")).unwrap();
    assert!(control.contains("`kv-alt`'s manifest raises a container named `ctl-9`"), "{control}");
    let files = mesh_adopt_testkit::discover(&[dir.path().join("scenarios")]).unwrap();
    assert!(files.len() >= 10, "{} scenarios", files.len());
    let mut refused = 0;
    for file in &files {
        let ran = mesh_adopt_testkit::run(host(), dir.path(), file, None).await.unwrap();
        let differences = mesh_adopt_testkit::differences(&file.scenario, &ran);
        assert!(differences.is_empty(), "{}:\n{}", file.path.display(), differences.join("\n"));
        if !file.scenario.expect.broken.is_empty() {
            refused += 1;
            assert!(ran.mesh.commands().is_empty(), "{}: something was told", file.path.display());
            // What the run carried (a mesh that starts adopted holds what its adoption did).
            let carried = ran.transcript.events().iter().any(|e| {
                matches!(e, mesh_adopt_runtime::record::transcript::Entry::Call { request, .. }
                    if request.op == mesh_adopt_runtime::events::Op::Carry)
            });
            assert!(!carried, "{}: something was carried", file.path.display());
        }
    }
    assert!(refused >= 9, "{refused} of the renamed edits were refused");
}
