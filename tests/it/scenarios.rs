//! Scenarios and the sweep: the shipped scenarios pass and survive every fault, and a
//! plugin that is data-unsafe under one fault is caught, naming the step.

use std::path::PathBuf;

use mesh_adopt::scenario;

use crate::support::{example_catalogue, host, plugin, root};

fn shipped() -> Vec<scenario::ScenarioFile> {
    scenario::discover(&[root().join("plugins"), root().join("catalogue")]).unwrap()
}

#[tokio::test]
async fn every_shipped_scenario_passes() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let files = shipped();
    assert!(files.len() >= 26, "{} scenarios", files.len());
    for file in &files {
        let ran = scenario::run(host(), catalogue.path(), file, None).await.unwrap();
        let differences = scenario::differences(&file.scenario, &ran);
        assert!(differences.is_empty(), "{}:\n{}", file.label, differences.join("\n"));
    }
}

#[tokio::test]
async fn a_scenario_that_does_not_hold_says_how_with_a_diff() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let mut file = scenario::read(&root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    let commands = file.scenario.expect.commands.as_mut().unwrap();
    commands.remove(2);
    commands.push("push node-2".into());
    let ran = scenario::run(host(), catalogue.path(), &file, None).await.unwrap();
    let differences = scenario::differences(&file.scenario, &ran).join("\n");
    assert!(differences.contains("commands (- expected, + actual):"), "{differences}");
    assert!(differences.contains("    + module issue postgres --node node-1"), "{differences}");
    assert!(differences.contains("    - push node-2"), "{differences}");
}

#[tokio::test]
async fn the_sweep_catches_a_plugin_that_is_data_unsafe_under_one_fault() {
    let catalogue = example_catalogue(&plugin("ignores_accept_failure"));
    let file = scenario::read(&root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    let swept = scenario::sweep(host(), catalogue.path(), &file).await.unwrap();
    let problems = swept.problems.join("\n");
    assert!(swept.survived < swept.steps);
    assert!(
        problems.contains("(`tell secret accept node-1 postgres superuser --from /accepting-superuser`) failed"),
        "{problems}"
    );
    assert!(problems.contains("credential-never-replaced"), "{problems}");
}

#[tokio::test]
async fn the_real_postgres_plugin_survives_the_same_sweep() {
    let catalogue = example_catalogue(&plugin("adopt_postgres"));
    let file = scenario::read(&root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    let swept = scenario::sweep(host(), catalogue.path(), &file).await.unwrap();
    assert!(swept.steps >= 18, "{swept:?}");
    assert_eq!(swept.survived, swept.steps, "{:?}", swept.problems);
}

#[test]
fn a_scenario_without_commands_is_refused_unless_loose() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("postgres/scenarios/loose.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "name = \"x\"\n[expect]\noutcome = \"adopted\"\n").unwrap();
    let err = scenario::read(&path).unwrap_err().to_string();
    assert!(err.contains("lists no `expect.commands`"), "{err}");
}
