//! Scenarios and the sweep: the shipped scenarios pass and survive every fault, and a
//! plugin that is data-unsafe under one fault is caught, naming the step.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mesh_adopt_runtime::events::OutcomeWord;
use mesh_adopt_runtime::mesh::simulated::FaultEffect;

use crate::support::{catalogue, example_catalogue, host, mesh_adopt, plugin, root, text};

fn shipped() -> Vec<mesh_adopt_testkit::ScenarioFile> {
    mesh_adopt_testkit::discover(&[root().join("plugins"), root().join("catalogue")]).unwrap()
}

#[tokio::test]
async fn every_shipped_scenario_passes() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let files = shipped();
    assert!(files.len() >= 26, "{} scenarios", files.len());
    for file in &files {
        let ran = mesh_adopt_testkit::run(host(), catalogue.path(), file, None).await.unwrap();
        let differences = mesh_adopt_testkit::differences(&file.scenario, &ran);
        assert!(differences.is_empty(), "{}:\n{}", file.label, differences.join("\n"));
    }
}

#[tokio::test]
async fn a_scenario_that_does_not_hold_says_how_with_a_diff() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let mut file = mesh_adopt_testkit::read(&root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    let commands = file.scenario.expect.commands.as_mut().unwrap();
    commands.remove(2);
    commands.push("push node-2".into());
    let ran = mesh_adopt_testkit::run(host(), catalogue.path(), &file, None).await.unwrap();
    let differences = mesh_adopt_testkit::differences(&file.scenario, &ran).join("\n");
    assert!(differences.contains("commands (- expected, + actual):"), "{differences}");
    assert!(differences.contains("    + module issue postgres --node node-1"), "{differences}");
    assert!(differences.contains("    - push node-2"), "{differences}");
}

#[tokio::test]
async fn a_wrong_outcome_and_a_missing_message_show_the_message_once() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let mut file = mesh_adopt_testkit::read(&root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    file.scenario.expect.outcome = OutcomeWord::Refused;
    file.scenario.expect.messages = vec!["a line no plugin says".into()];
    let ran = mesh_adopt_testkit::run(host(), catalogue.path(), &file, None).await.unwrap();
    let differences = mesh_adopt_testkit::differences(&file.scenario, &ran).join("\n");
    assert!(differences.starts_with("outcome: expected refused, got adopted: "), "{differences}");
    assert!(differences.contains("message: no \"a line no plugin says\" in the adopted message"), "{differences}");
    assert!(differences.contains("\n  adopted: (above)"), "{differences}");
    assert!(!differences.contains("  adopted: mesh-store"), "{differences}");
}

#[tokio::test]
async fn a_fragment_said_where_none_is_expected_and_other_files_carried_are_named() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let mut file = mesh_adopt_testkit::read(&root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    file.scenario.expect.absent = vec!["accepted superuser".into(), "a line no plugin says".into()];
    file.scenario.expect.carried = Some(BTreeMap::from([
        ("/accepting-superuser".to_string(), "file".to_string()),
        ("/postgres-module.json".to_string(), "file".to_string()),
    ]));
    let ran = mesh_adopt_testkit::run(host(), catalogue.path(), &file, None).await.unwrap();
    let differences = mesh_adopt_testkit::differences(&file.scenario, &ran).join("\n");
    assert!(
        differences.starts_with(
            "message: \"accepted superuser\" in the adopted message or the lines said, where the scenario expects none"
        ),
        "{differences}"
    );
    assert!(!differences.contains("a line no plugin says"), "{differences}");
    assert!(
        differences.contains(
            "carried: expected {\"/accepting-superuser\": \"file\", \"/postgres-module.json\": \"file\"}, got \
             {\"/accepting-superuser\": \"secret\", \"/postgres-module.json\": \"file\"}"
        ),
        "{differences}"
    );
    // Without the two, the same run passes: left out, what was carried is not compared.
    file.scenario.expect.absent.clear();
    file.scenario.expect.carried = None;
    assert!(mesh_adopt_testkit::differences(&file.scenario, &ran).is_empty());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("postgres/scenarios/carried.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        "name = \"x\"\n[expect]\noutcome = \"adopted\"\nstrict = false\ncarried = { \"/a\" = \"plain\" }\n",
    )
    .unwrap();
    let err = mesh_adopt_testkit::read(&path).unwrap_err().to_string();
    assert!(err.contains("expects `/a` carried as `plain`: say `file` or `secret`"), "{err}");
}

/// A scenario of a misbehaving plugin that expects the invariant it breaks passes, and its
/// sweep counts that breach as the scenario's, not as the fault's.
#[tokio::test]
async fn a_scenario_that_expects_a_broken_invariant_passes_and_survives_its_sweep() {
    // The example catalogue's genesis superuser (`catalogue/genesis/credentials/`).
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let vault = catalogue.path().join("modules/mesh-vault");
    std::fs::copy(plugin("says_from_its_manifest"), vault.join("adopt.wasm")).unwrap();
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(vault.join("manifest.json")).unwrap()).unwrap();
    manifest["hostile-say"] = "the password is genesis-demo-superuser-7f3a9c2e".into();
    std::fs::write(vault.join("manifest.json"), serde_json::to_vec(&manifest).unwrap()).unwrap();
    let path = catalogue.path().join("leaks.toml");
    std::fs::write(
        &path,
        "name = \"the vault says the superuser\"\nmodules = [\"postgres\", \"mesh-vault\"]\n[expect]\n\
         outcome = \"adopted\"\nstrict = false\nkept = [\"mesh-store\"]\naccepted = [\"postgres/superuser\"]\n\
         broken = [\"secret-never-shown\"]\n",
    )
    .unwrap();
    let file = mesh_adopt_testkit::read(&path).unwrap();
    let ran = mesh_adopt_testkit::run(host(), catalogue.path(), &file, None).await.unwrap();
    let differences = mesh_adopt_testkit::differences(&file.scenario, &ran);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    let swept = mesh_adopt_testkit::sweep(host(), catalogue.path(), &file).unwrap();
    assert!(swept.steps >= 10, "{swept:?}");
    assert_eq!(swept.survived, swept.steps, "{:?}", swept.problems);
    // Expecting none, the same run fails naming the invariant and how it broke.
    let mut expecting_none = file.clone();
    expecting_none.scenario.expect.broken.clear();
    let differences = mesh_adopt_testkit::differences(&expecting_none.scenario, &ran).join("\n");
    assert!(differences.starts_with("invariants broken: expected [], got [\"secret-never-shown\"]"), "{differences}");
    assert!(
        differences.contains("\n  invariant `secret-never-shown` broken: the `mesh-vault` plugin"),
        "{differences}"
    );
}

#[tokio::test]
async fn the_sweep_catches_a_plugin_that_is_data_unsafe_under_one_fault() {
    let catalogue = example_catalogue(&plugin("ignores_accept_failure"));
    let file = mesh_adopt_testkit::read(&root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    let swept = mesh_adopt_testkit::sweep(host(), catalogue.path(), &file).unwrap();
    let problems = swept.problems.join("\n");
    assert!(swept.survived < swept.steps);
    assert!(
        problems.contains("(`tell secret accept node-1 postgres superuser --from /accepting-superuser`) failed"),
        "{problems}"
    );
    assert!(problems.contains("credential-never-replaced"), "{problems}");
}

#[tokio::test]
async fn the_sweep_fails_a_plugin_whose_every_second_run_refuses() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let vault = catalogue.path().join("modules/mesh-vault");
    std::fs::copy(plugin("refuses_once_installed"), vault.join("adopt.wasm")).unwrap();
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(vault.join("manifest.json")).unwrap()).unwrap();
    manifest["adopt"]["grants"] = serde_json::json!({"inspect": ["mesh-vault"]});
    std::fs::write(vault.join("manifest.json"), serde_json::to_vec(&manifest).unwrap()).unwrap();
    let file = mesh_adopt_testkit::read(&root().join("plugins/mesh-vault/scenarios/installs.toml")).unwrap();
    // Its own run adopts, as the scenario expects: only running it again shows the flaw.
    let ran = mesh_adopt_testkit::run(host(), catalogue.path(), &file, None).await.unwrap();
    assert_eq!(mesh_adopt_testkit::outcome_of(&ran.report).0, Some(OutcomeWord::Adopted));
    let swept = mesh_adopt_testkit::sweep(host(), catalogue.path(), &file).unwrap();
    assert_eq!(swept.survived, 0, "every step's rerun refuses: {:?}", swept.problems);
    let problems = swept.problems.join("\n");
    assert!(problems.contains("running again ended refused, and the scenario expects adopted"), "{problems}");
}

#[tokio::test]
async fn the_sweep_kills_the_host_after_every_call_and_reruns() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let file = mesh_adopt_testkit::read(&root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    let swept = mesh_adopt_testkit::sweep(host(), catalogue.path(), &file).unwrap();
    // Each of the clean run's calls failed, timed out, and went through with the host then
    // killed: three steps a call.
    let clean = mesh_adopt_testkit::run(host(), catalogue.path(), &file, None).await.unwrap();
    assert_eq!(swept.steps, 3 * clean.mesh.calls().len(), "{swept:?}");
    assert_eq!(swept.survived, swept.steps, "{:?}", swept.problems);
}

#[tokio::test]
async fn the_real_postgres_plugin_survives_the_same_sweep() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let file = mesh_adopt_testkit::read(&root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    let swept = mesh_adopt_testkit::sweep(host(), catalogue.path(), &file).unwrap();
    assert!(swept.steps >= 18, "{swept:?}");
    assert_eq!(swept.survived, swept.steps, "{:?}", swept.problems);
}

#[test]
fn a_scenario_without_commands_is_refused_unless_loose() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("postgres/scenarios/loose.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "name = \"x\"\n[expect]\noutcome = \"adopted\"\n").unwrap();
    let err = mesh_adopt_testkit::read(&path).unwrap_err().to_string();
    assert!(err.contains("lists no `expect.commands`"), "{err}");
}

/// A scenario file written for a test: `dir/<module>/scenarios/<name>.toml`.
fn scenario_file(dir: &Path, module: &str, name: &str, text: &str) -> mesh_adopt_testkit::ScenarioFile {
    let path = dir.join(module).join("scenarios").join(format!("{name}.toml"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    mesh_adopt_testkit::read(&path).unwrap()
}

/// Every entry under `dir` with what tells one version of it from another.
fn tree(dir: &Path) -> BTreeMap<PathBuf, (u64, u64, std::time::SystemTime)> {
    use std::os::unix::fs::MetadataExt;
    let mut entries = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                pending.push(path.clone());
            }
            entries.insert(path, (meta.ino(), meta.size(), meta.modified().unwrap()));
        }
    }
    entries
}

/// Makes every directory under `dir`, and `dir`, read-only (or writable again).
fn read_only(dir: &Path, yes: bool) {
    use std::os::unix::fs::PermissionsExt;
    for path in tree(dir).into_keys().chain([dir.to_path_buf()]).filter(|p| p.is_dir()) {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(if yes { 0o555 } else { 0o755 })).unwrap();
    }
}

#[test]
fn a_sweep_writes_no_file_anywhere_per_step() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let scenarios = tempfile::tempdir().unwrap();
    let shipped = std::fs::read_to_string(root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    let in_place = scenario_file(scenarios.path(), "postgres", "adopts-in-place", &shipped);
    // One that edits a manifest and gives its own credentials: what a copy was once written for.
    let edited = scenario_file(
        scenarios.path(),
        "postgres",
        "edited",
        r#"name = "refuses another store image, with its own superuser"
[mesh]
credentials = { "store-superuser" = "a-scenario-superuser-value" }
[[edit]]
file = "manifest:postgres"
set = "/resources/0/image"
to = "postgres:17.0"
[expect]
outcome = "refused"
messages = ["`postgres:17.0`"]
commands = []
"#,
    );
    let (cwd, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // A temporary directory that does not exist: making any temporary file or directory
    // fails, even one removed again before the run ends.
    let tmp = cwd.path().join("no-such-tmp");
    let before = (tree(catalogue.path()), tree(scenarios.path()));
    read_only(catalogue.path(), true);
    read_only(scenarios.path(), true);
    let out = crate::support::mesh_adopt()
        .args(["test", "--sweep", "--catalogue"])
        .arg(catalogue.path())
        .args([&in_place.path, &edited.path])
        .current_dir(cwd.path())
        .env("TMPDIR", &tmp)
        .env("XDG_CACHE_HOME", cache.path())
        .output();
    read_only(catalogue.path(), false);
    read_only(scenarios.path(), false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let swept: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("sweep: ")?.split_once(" steps swept")?.0.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(swept >= 18, "{stdout}");
    // Nothing was written to the catalogue, beside the scenarios, in the working directory
    // or among temporary files...
    assert_eq!((tree(catalogue.path()), tree(scenarios.path())), before);
    assert!(!tmp.exists());
    assert_eq!(tree(cwd.path()), BTreeMap::new());
    // ...and the compile cache holds one entry for each plugin compiled, not one a step.
    let cached = tree(cache.path()).into_keys().filter(|p| p.is_file()).count();
    assert!((1..=3).contains(&cached), "{cached} files cached for {swept} steps");
}

#[tokio::test]
async fn messages_name_the_authors_files_never_a_copy() {
    let catalogue = root().join("catalogue");
    let scenarios = tempfile::tempdir().unwrap();
    let manifest = catalogue.join("modules/postgres/manifest.json");
    let outcome_message = |ran: &mesh_adopt_testkit::ScenarioRun| match ran.report.outcome("postgres") {
        Some(mesh_adopt_runtime::ModuleOutcome::Unusable(unusable)) => unusable.message.clone(),
        other => panic!("expected unusable, got {other:?}"),
    };

    // A manifest the scenario renames is named by the catalogue's path.
    let renamed = scenario_file(
        scenarios.path(),
        "postgres",
        "renamed",
        "name = \"x\"\n[[edit]]\nfile = \"manifest:postgres\"\nset = \"/name\"\nto = \"other\"\n\
         [expect]\noutcome = \"unusable\"\ncommands = []\n",
    );
    let ran = mesh_adopt_testkit::run(host(), &catalogue, &renamed, None).await.unwrap();
    let message = outcome_message(&ran);
    assert!(message.contains(&format!("the manifest `{}` is named `other`", manifest.display())), "{message}");
    // The catalogue is the checkout's, not a temporary copy of it.
    // No temporary copy is named (a checkout may itself live under the temporary directory).
    assert!(!message.contains("/.tmp"), "{message}");
    assert!(mesh_adopt_testkit::differences(&renamed.scenario, &ran).is_empty());

    // A credential the scenario's own table lacks is named with the scenario file.
    let lacking = scenario_file(
        scenarios.path(),
        "postgres",
        "lacking",
        "name = \"x\"\n[mesh]\ncredentials = { other = \"some-other-value\" }\n\
         [expect]\noutcome = \"unusable\"\ncommands = []\n",
    );
    let ran = mesh_adopt_testkit::run(host(), &catalogue, &lacking, None).await.unwrap();
    let message = outcome_message(&ran);
    assert!(message.contains(&format!("the `postgres` module's manifest `{}`", manifest.display())), "{message}");
    assert!(
        message.contains(&format!(
            "no credential `store-superuser` in `mesh.credentials` of `{}`",
            lacking.path.display()
        )),
        "{message}"
    );

    // An edit the catalogue cannot take names the scenario file and the foundation's path.
    let broken = scenario_file(
        scenarios.path(),
        "postgres",
        "broken",
        "name = \"x\"\n[[edit]]\nfile = \"foundation\"\nremove = \"/resources/1/image\"\n\
         [expect]\noutcome = \"unusable\"\ncommands = []\n",
    );
    let err = format!("{:#}", mesh_adopt_testkit::run(host(), &catalogue, &broken, None).await.err().unwrap());
    assert!(err.contains(&format!("failed to run the scenario `{}`", broken.path.display())), "{err}");
    assert!(
        err.contains(&format!(
            "the foundation bundle `{}`, as the scenario edits it, is malformed",
            catalogue.join("foundation.json").display()
        )),
        "{err}"
    );
    let unknown = scenario_file(
        scenarios.path(),
        "postgres",
        "unknown",
        "name = \"x\"\n[[edit]]\nfile = \"manifest:nope\"\nremove = \"/name\"\n\
         [expect]\noutcome = \"unusable\"\ncommands = []\n",
    );
    let err = format!("{:#}", mesh_adopt_testkit::run(host(), &catalogue, &unknown, None).await.err().unwrap());
    assert!(err.contains(&format!("failed to run the scenario `{}`", unknown.path.display())), "{err}");
    assert!(err.contains("edit 1 (of `manifest:nope`): the catalogue has no module `nope`"), "{err}");
}

#[tokio::test]
async fn the_sweep_catches_a_plugin_that_reports_success_over_a_failed_call() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    std::fs::copy(plugin("swallows_failures"), catalogue.path().join("modules/mesh-vault/adopt.wasm")).unwrap();
    let file = mesh_adopt_testkit::read(&root().join("plugins/mesh-vault/scenarios/installs.toml")).unwrap();
    // The host does not take its word: a failed command it went past means not adopted,
    // naming the command.
    let clean = mesh_adopt_testkit::run(host(), catalogue.path(), &file, None).await.unwrap();
    let push = clean.mesh.calls().iter().position(|c| c == "tell push node-1").unwrap();
    let failed = FaultEffect::Fail("node-1 is cordoned".into());
    let ran = mesh_adopt_testkit::run(host(), catalogue.path(), &file, Some((push, failed))).await.unwrap();
    let (outcome, message) = mesh_adopt_testkit::outcome_of(&ran.report);
    assert_eq!(outcome, Some(OutcomeWord::Refused), "{message}");
    assert!(message.contains("not adopted: `tell push node-1` failed (node-1 is cordoned)"), "{message}");
    // And where it pushes past a failed step, the node is not what was predicted.
    let swept = mesh_adopt_testkit::sweep(host(), catalogue.path(), &file).unwrap();
    let problems = swept.problems.join("\n");
    assert_eq!(swept.not_converged, 0, "{problems}");
    assert!(
        problems.contains("(`tell prepare node-1 mesh-vault`) failed: invariant `effect-as-predicted` broken"),
        "{problems}"
    );
}

#[tokio::test]
async fn a_fault_no_call_matches_is_reported_and_an_unknown_outcome_refused() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let dir = tempfile::tempdir().unwrap();
    let scenario = "name = \"x\"\n[[mesh.faults]]\nop = \"tell\"\nmatching = \"pushh\"\nfail = \"no\"\n\
                    [expect]\noutcome = \"adopted\"\nstrict = false\nkept = [\"mesh-store\"]\naccepted = [\"postgres/superuser\"]\n";
    let file = scenario_file(dir.path(), "postgres", "typo", scenario);
    let ran = mesh_adopt_testkit::run(host(), catalogue.path(), &file, None).await.unwrap();
    let differences = mesh_adopt_testkit::differences(&file.scenario, &ran).join("\n");
    assert_eq!(differences, "fault 1 (`tell` matching \"pushh\") was never applied: no call matched it");

    let path = dir.path().join("postgres/scenarios/exploded.toml");
    std::fs::write(&path, "name = \"x\"\n[expect]\noutcome = \"exploded\"\nstrict = false\n").unwrap();
    let err = format!("{:#}", mesh_adopt_testkit::read(&path).unwrap_err());
    assert!(err.contains("expects the outcome `exploded`: say one of adopted, refused"), "{err}");
}

/// With no paths, `test` runs the scenarios beside each module and in the catalogue's own
/// `scenarios/`, and no other `scenarios/` the checkout holds (a vendored project's, an
/// example's): with one of those broken, the run still passes, and names only its own.
#[test]
fn test_with_no_paths_runs_the_catalogues_scenarios_and_no_others_in_its_checkout() {
    let dir = crate::support::catalogue();
    let own = dir.path().join("scenarios");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::copy(root().join("catalogue/scenarios/phase-three.toml"), own.join("phase-three.toml")).unwrap();
    let elsewhere = dir.path().join("vendor/other-catalogue/scenarios");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("broken.toml"), "this is = not [a scenario").unwrap();
    let out = crate::support::mesh_adopt().args(["test"]).catalogue(dir.path()).output();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("phase-three") && !said.contains("broken"), "{said}");
}

/// `test` tests the plugin in place: when a file of the plugin's source changed after it was
/// placed (an edit not built yet, or a build that failed), it says so, naming the file and the
/// build to run; a plugin placed after its source changed draws no warning.
#[test]
fn test_warns_when_the_plugin_in_place_is_older_than_its_source() {
    let dir = crate::support::catalogue();
    let manifest_path = dir.path().join("modules/postgres/manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    // Named relative to the manifest, as `build` requires.
    let up = dir.path().join("modules/postgres").components().count() - 1;
    let source = format!(
        "{}{}",
        "../".repeat(up),
        root().join("plugins/postgres").display().to_string().trim_start_matches('/')
    );
    manifest["adopt"]["source"] = source.into();
    std::fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    let placed = dir.path().join("modules/postgres/adopt.wasm");
    let set_placed_at = |when: std::time::SystemTime| {
        std::fs::File::options().write(true).open(&placed).unwrap().set_modified(when).unwrap();
    };
    let test = || {
        let out = crate::support::mesh_adopt()
            .args(["test", root().join("catalogue/scenarios/phase-three.toml").to_str().unwrap()])
            .catalogue(dir.path())
            .output();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    set_placed_at(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1));
    let warned = test();
    assert!(warned.contains("warning: the `postgres` plugin in place"), "{warned}");
    assert!(warned.contains("plugins/postgres/") && warned.contains("`mesh-adopt build postgres`"), "{warned}");
    set_placed_at(std::time::SystemTime::now());
    let quiet = test();
    assert!(!quiet.contains("warning"), "{quiet}");
}

/// A scenario file reached by two of the searched paths (a module's directory and its source
/// inside it, or a link) is run once.
#[test]
fn a_scenario_reached_by_two_paths_is_found_once() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("modules/postgres/plugin/scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::copy(root().join("plugins/postgres/scenarios/image-drift.toml"), scenarios.join("image-drift.toml"))
        .unwrap();
    let module = dir.path().join("modules/postgres");
    std::fs::copy(root().join("catalogue/modules/postgres/manifest.json"), module.join("manifest.json")).unwrap();
    let found =
        mesh_adopt_testkit::discover(&[module.clone(), module.join("./plugin"), module.join("plugin")]).unwrap();
    assert_eq!(found.len(), 1, "{:?}", found.iter().map(|f| &f.path).collect::<Vec<_>>());
    assert_eq!(found[0].label, "postgres/image-drift");
}

#[test]
fn a_scenario_starts_from_an_adopted_mesh_and_runs_on_its_own_node_or_a_second_one() {
    // The shipped scenarios: a re-run on the adopted node, and a run on a second node.
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let scenarios = root().join("catalogue/scenarios");
    let test = |files: &[&str], expected: i32| {
        let out = crate::support::mesh_adopt()
            .arg("test")
            .args(files.iter().map(|f| scenarios.join(f)))
            .catalogue(dir.path())
            .output();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(expected), "{said}");
        said
    };
    let said = test(&["mesh-adopted-rerun.toml", "second-node-after-the-first.toml"], 0);
    assert!(said.contains("2 passed, 0 failed"), "{said}");
    // What the second node is said to do is its own: the first node's state would be `kept`.
    let wrong = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(scenarios.join("second-node-after-the-first.toml")).unwrap();
    let file = wrong.path().join("second-node-kept.toml");
    std::fs::write(&file, text.replace("created = [\"mesh-vault\"]", "kept = [\"mesh-vault\"]")).unwrap();
    let said = test(&[file.to_str().unwrap()], 1);
    assert!(said.contains("created: expected [], got [\"mesh-vault\"]"), "{said}");
    // A start that cannot be adopted cleanly is no adopted start: the scenario fails for it,
    // even where its own run does what it expects.
    let unadoptable = wrong.path().join("no-clean-start.toml");
    let text = std::fs::read_to_string(scenarios.join("vault-named-store.toml")).unwrap();
    std::fs::write(&unadoptable, text.replace("[expect]", "[mesh]\nadopted_on = \"node-1\"\n\n[expect]")).unwrap();
    let said = test(&[unadoptable.to_str().unwrap()], 1);
    assert!(
        said.contains("setup: `mesh.adopted_on` could not adopt postgres, nats, mesh-vault on `node-1` cleanly"),
        "{said}"
    );
    assert!(said.contains("genesis-touched-as-declared broken"), "{said}");
    // What the start accepted is not the scenario's run's: the vault alone accepts nothing.
    let vault_alone = wrong.path().join("vault-alone.toml");
    std::fs::write(
        &vault_alone,
        "name = \"the vault alone again\"\nmodules = [\"mesh-vault\"]\n[mesh]\nadopted_on = \"node-1\"\n[expect]\n\
         outcome = \"adopted\"\nstrict = false\nkept = [\"mesh-store\", \"mesh-bus\", \"mesh-vault\"]\naccepted = []\n",
    )
    .unwrap();
    let said = test(&[vault_alone.to_str().unwrap()], 0);
    assert!(said.contains("1 passed, 0 failed"), "{said}");
}

#[test]
fn a_scenario_whose_sweep_finds_a_problem_is_not_counted_passed() {
    let dir = catalogue();
    std::fs::copy(plugin("swallows_failures"), dir.path().join("modules/mesh-vault/adopt.wasm")).unwrap();
    let scenario = crate::support::root().join("plugins/mesh-vault/scenarios/installs.toml");
    let out = mesh_adopt().args(["test", "--sweep", scenario.to_str().unwrap()]).catalogue(dir.path()).output();
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}{}", text(&out.stderr));
    assert!(said.starts_with("FAIL  ") && said.contains("invariant `effect-as-predicted` broken"), "{said}");
    assert!(said.contains("\n0 passed, 1 failed\n"), "{said}");
}
