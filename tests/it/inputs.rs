//! Inputs the command cannot use (its arguments and options, and the catalogue, foundation
//! and manifests they name) refused with exit 2, naming the value and the rule, before
//! anything reaches the mesh.

use std::path::Path;

use crate::support::{assert_mentions, catalogue, mesh_adopt, text};

const SOURCE: &str = "https://git.mesh.test/catalogue.git@v3";

#[test]
fn an_unusable_catalogue_exits_2_with_an_error() {
    let out = mesh_adopt().args(["run"]).catalogue(Path::new("/nonexistent/catalogue")).output();
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
    let out = mesh_adopt().args(["check"]).catalogue(dir.path()).output();
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("the foundation bundle `") && stderr.contains("foundation.json` is malformed"), "{stderr}");
}

#[test]
fn inputs_that_cannot_be_used_exit_2_naming_the_value_before_any_effect() {
    let dir = catalogue();
    let record = dir.path().join("genesis/credentials/store-superuser");
    let credential = std::fs::read_to_string(&record).unwrap();
    let record_arg = record.to_str().unwrap();
    for (args, expected) in [
        (vec!["run", "--catalog-source", ""], "--catalog-source"),
        (vec!["run", "--catalog-source", "@v1"], "the repository before `@` is empty"),
        (vec!["run", "--catalog-source", "repo@"], "the ref after `@` is empty"),
        (vec!["run", "--catalog-source", "repo@--upload-pack=x"], "could be read as an option"),
        (vec!["run", "--catalog-source", SOURCE, "../../elsewhere/x"], "the module `../../elsewhere/x`"),
        (vec!["run", "--catalog-source", SOURCE, ""], "the module ``"),
        (vec!["run", "--catalog-source", SOURCE, "a b"], "whitespace"),
        (vec!["run", "--catalog-source", SOURCE, "postgres", "postgres"], "asked for twice"),
        (vec!["run", "--catalog-source", SOURCE, "--node=--all"], "--node `--all`"),
        (vec!["run", "--catalog-source", SOURCE, "--wait", "9999999999999999999h"], "too long"),
        (vec!["run", "--catalog-source", SOURCE, "--record", record_arg], "is one of this run's inputs"),
    ] {
        let out = mesh_adopt().args(&args).catalogue(dir.path()).output();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: expected {expected:?} in {stderr}");
        assert!(text(&out.stdout).lines().all(|l| !l.contains("adopted   ")), "{args:?}");
    }
    // The credential named by --record was not written over.
    assert_eq!(std::fs::read_to_string(&record).unwrap(), credential);
}

/// `--out` is only `check`'s and `--plan` only `run`'s: clap refuses either on the other
/// command, and its tip names the command that takes it, not the nearest spelling of an
/// option that has nothing to do with plans.
#[test]
fn a_saved_plans_option_on_the_other_command_is_refused_naming_the_command_that_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    for (args, tip) in [
        (["run", "--out", "p.json"], "tip: --out writes a plan, which `check` makes: `mesh-adopt check --out PLAN`"),
        (
            ["check", "--plan", "p.json"],
            "tip: --plan applies a saved plan, which `run` does: `mesh-adopt run --plan PLAN`",
        ),
    ] {
        let out = mesh_adopt().args(args).catalogue(dir.path()).output();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with(&format!("error: unexpected argument '{}' found", args[1])), "{args:?}: {stderr}");
        assert!(stderr.contains(tip), "{args:?}: {stderr}");
        assert!(stderr.contains(&format!("Usage: mesh-adopt {} [OPTIONS] [MODULES]...", args[0])), "{stderr}");
        assert!(!stderr.contains("similar argument"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(!dir.path().join("p.json").exists());
}

#[test]
fn a_node_name_that_is_no_rfc_1123_subdomain_exits_2_saying_the_rule_wherever_it_is_given() {
    let dir = catalogue();
    let rule = "a node name is an RFC 1123 subdomain";
    let long_label = "n".repeat(64);
    let bad = ["node-1;rm", "~", "$HOME", ".", "nöde", "Node-1", "-node", "node..1", "node_1", long_label.as_str()];
    for node in bad {
        for command in ["check", "run"] {
            // `--node=…`, so that clap takes a name beginning with `-` as the option's value.
            let option = format!("--node={node}");
            let out = mesh_adopt().args([command, &option, "--catalog-source", SOURCE]).catalogue(dir.path()).output();
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{command} --node {node:?}: {stderr}");
            assert!(stderr.contains(&format!("--node `{}` cannot be used: {rule}", node.escape_debug())), "{stderr}");
            assert!(out.stdout.is_empty(), "{command} --node {node:?} ran: {}", text(&out.stdout));
        }
    }
    // One that is: a run.
    let out = mesh_adopt().args(["check", "--node", "node-2.mesh.local", "--catalog-source", SOURCE]);
    let out = out.catalogue(dir.path()).output();
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));

    // A saved plan's node is held to the same rule.
    let plan = dir.path().join("plan.json");
    let plan_arg = plan.to_str().unwrap();
    let saved = mesh_adopt().args(["check", "--catalog-source", SOURCE, "--out", plan_arg]).catalogue(dir.path());
    assert_eq!(saved.output().status.code(), Some(0));
    let mut edited: serde_json::Value = serde_json::from_slice(&std::fs::read(&plan).unwrap()).unwrap();
    edited["node"] = "node-1;rm".into();
    std::fs::write(&plan, edited.to_string()).unwrap();
    let out = mesh_adopt().args(["run", "--catalog-source", SOURCE, "--plan", plan_arg]).catalogue(dir.path()).output();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("its `node` `node-1;rm` cannot be used: {rule}")), "{stderr}");

    // So is a scenario's.
    let scenario = dir.path().join("odd-node.toml");
    std::fs::write(
        &scenario,
        "name = \"runs on a node named like a command\"\nmodules = [\"postgres\"]\n\n[mesh]\nnode = \"$HOME\"\n\n\
         [expect]\noutcome = \"adopted\"\nstrict = false\n",
    )
    .unwrap();
    let out = mesh_adopt().args(["test", scenario.to_str().unwrap()]).catalogue(dir.path()).output();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}{stderr}", text(&out.stdout));
    assert!(stderr.contains("odd-node.toml"), "{stderr}");
    assert!(stderr.contains(&format!("`mesh.node` `$HOME` cannot be used: {rule}")), "{stderr}");
}

#[test]
fn a_node_name_longer_than_a_host_name_is_refused_before_anything_runs() {
    let dir = catalogue();
    let node = "n".repeat(254);
    let out = mesh_adopt()
        .args(["check", "--node", &node, "--catalog-source", "https://git.mesh.test/c.git"])
        .catalogue(dir.path())
        .output();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("--node is 254 bytes long; a name is at most 253 bytes"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_manifest_whose_access_path_is_relative_exits_2_naming_the_manifest_and_the_access() {
    let dir = catalogue();
    let manifest = dir.path().join("modules/postgres/manifest.json");
    let mut edited: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    edited["accesses"][0]["path"] = "var/lib/mesh/store".into();
    std::fs::write(&manifest, serde_json::to_vec_pretty(&edited).unwrap()).unwrap();
    let fault = "its access `data` has the path `var/lib/mesh/store`, which is not absolute";
    for args in
        [vec!["check", "--catalog-source", SOURCE], vec!["run", "--catalog-source", SOURCE], vec!["build", "postgres"]]
    {
        let out = mesh_adopt().args(&args).catalogue(dir.path()).output();
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(said.contains(&format!("manifest `{}` is malformed", manifest.display())), "{args:?}: {said}");
        assert!(said.contains(fault), "{args:?}: {said}");
        assert!(!said.contains(" adopted "), "{args:?}: {said}");
    }
}

#[test]
fn a_config_on_the_simulated_mesh_and_a_malformed_pin_exit_2() {
    let dir = catalogue();
    let out = mesh_adopt()
        .args(["run", "--catalog-source", SOURCE, "--config", "/nonexistent.toml"])
        .catalogue(dir.path())
        .output();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--config describes how a live mesh is reached"), "{}", text(&out.stderr));

    let manifest = dir.path().join("modules/postgres/manifest.json");
    let mut edited: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    edited["adopt"]["sha256"] = "ZZ".into();
    std::fs::write(&manifest, edited.to_string()).unwrap();
    let out = mesh_adopt().args(["run", "--catalog-source", SOURCE]).catalogue(dir.path()).output();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("pins `ZZ`, which is not a sha256"), "{}", text(&out.stdout));
}

#[test]
fn a_wait_shorter_than_the_simulated_nodes_restart_is_refused_before_any_effect() {
    // The simulated node applies a push after 5s and its recreated bus answers 6s later: a
    // wait of 10s would run out on the bus after the store was adopted.
    let dir = catalogue();
    let source = "https://git.mesh.test/catalogue.git@v3";
    let out = mesh_adopt()
        .args(["run", "--json", "--wait", "10s", "--catalog-source", source])
        .catalogue(dir.path())
        .output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "stdout:\n{stdout}\nstderr:\n{}", text(&out.stderr));
    let calls: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["event"] == "call")
        .collect();
    let effects: Vec<_> = calls.iter().filter(|c| c["op"] == "tell" || c["op"] == "carry").collect();
    assert!(effects.is_empty(), "the mesh was changed: {effects:?}");
    assert!(!calls.is_empty(), "preflight's checks ran: {stdout}");
    let out = mesh_adopt().args(["run", "--wait", "10s", "--catalog-source", source]).catalogue(dir.path()).output();
    assert_eq!(out.status.code(), Some(2));
    assert_mentions(&text(&out.stdout), &["the wait (--wait) is 10s", "takes 11s", "Give a --wait of at least 11s"]);
    // As long as the node takes is enough.
    let out = mesh_adopt().args(["run", "--wait", "11s", "--catalog-source", source]).catalogue(dir.path()).output();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn a_wait_of_nothing_or_a_fraction_of_a_second_is_refused() {
    let dir = catalogue();
    for wait in ["0", "0s", "1.5s", "500ms"] {
        let out = mesh_adopt().args(["check", "--wait", wait]).catalogue(dir.path()).output();
        assert_eq!(out.status.code(), Some(2), "{wait}");
        assert!(text(&out.stderr).contains("whole number of seconds"), "{wait}: {}", text(&out.stderr));
    }
}
