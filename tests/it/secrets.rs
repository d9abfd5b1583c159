//! The genesis credentials as the command keeps them: never on the screen, in a record or a
//! plan, refused where an operator gives one's value in an option, and a secret carried but
//! never accepted named in the module's outcome as left in the control plane.

use crate::support::{assert_mentions, catalogue, mesh_adopt, text};

const SOURCE: &str = "https://git.mesh.test/catalogue.git@v3";

#[test]
fn run_keeps_the_genesis_superuser_off_the_screen() {
    // What the run prints is pinned by the `screens` snapshots; here, what it must not print.
    let dir = catalogue();
    let out = mesh_adopt()
        .args(["run", "-v", "--catalog-source", "https://git.mesh.test/catalogue.git@v3"])
        .catalogue(dir.path())
        .output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{}", text(&out.stderr));
    let secret = std::fs::read_to_string(dir.path().join("genesis/credentials/store-superuser")).unwrap();
    assert!(!stdout.contains(secret.trim()) && !text(&out.stderr).contains(secret.trim()));
}

#[test]
fn a_credential_whose_value_is_in_a_planned_command_stops_preflight_naming_it() {
    // The superuser's password is a word the plans use: no command can be told without
    // showing it, so nothing runs, and the value is shown nowhere.
    let dir = catalogue();
    std::fs::write(dir.path().join("genesis/credentials/store-superuser"), "modules/postgres\n").unwrap();
    let out = mesh_adopt()
        .args(["run", "-v", "--catalog-source", "https://git.mesh.test/catalogue.git"])
        .catalogue(dir.path())
        .output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("holds the value of credential `store-superuser`"), "{stdout}");
    assert!(!stdout.contains("--path modules/postgres"), "a planned command was shown: {stdout}");
}

#[test]
fn a_credential_given_in_an_option_is_refused_before_the_option_is_shown_or_recorded() {
    let dir = catalogue();
    let value = std::fs::read_to_string(dir.path().join("genesis/credentials/store-superuser")).unwrap();
    let value = value.trim_end();
    let record = dir.path().join("run.jsonl");
    let url = format!("https://operator:{value}@git.mesh.test/c.git");
    for args in [vec!["--catalog-source", url.as_str()], vec!["--catalog-source", SOURCE, "--node", value]] {
        for style in [None, Some("--json")] {
            let mut all = vec!["run", "--record", record.to_str().unwrap()];
            all.extend(&args);
            all.extend(style);
            let out = mesh_adopt().args(all).catalogue(dir.path()).output();
            let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
            assert_eq!(out.status.code(), Some(2), "{said}");
            assert!(said.contains("the genesis credential `store-superuser`"), "{said}");
            assert!(!said.contains(value), "{said}");
            assert!(!std::fs::read_to_string(&record).unwrap_or_default().contains(value));
        }
    }
}

#[test]
fn a_credential_value_in_the_catalogue_is_never_written_out_whoever_would_write_it() {
    // A manifest whose image is the superuser's password: the host's own words about the
    // manifest (the predicted effect, the changes) would show it.
    let dir = catalogue();
    let value = std::fs::read_to_string(dir.path().join("genesis/credentials/store-superuser")).unwrap();
    let value = value.trim_end().to_string();
    let manifest = dir.path().join("modules/mesh-vault/manifest.json");
    let mut edited: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    edited["resources"][0]["image"] = value.clone().into();
    std::fs::write(&manifest, edited.to_string()).unwrap();
    let record = dir.path().join("run.jsonl");
    for style in [None, Some("--json"), Some("-v")] {
        let mut args = vec!["run", "mesh-vault", "--catalog-source", SOURCE, "--record", record.to_str().unwrap()];
        args.extend(style);
        let out = mesh_adopt().args(args).catalogue(dir.path()).output();
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!said.contains(&value), "{said}");
        assert!(said.contains("<secret store-superuser>"), "{said}");
        assert!(!std::fs::read_to_string(&record).unwrap().contains(&value));
    }
    // Nor is a plan holding it written.
    let plan = dir.path().join("plan.json");
    let out = mesh_adopt()
        .args(["check", "mesh-vault", "--catalog-source", SOURCE, "--out", plan.to_str().unwrap()])
        .catalogue(dir.path())
        .output();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("no plan was written"), "{}", text(&out.stderr));
    assert!(!plan.exists());
    // Nor an error quoting a configuration line that holds it.
    let config = dir.path().join("bad.toml");
    std::fs::write(&config, format!("control = [\"a\"]\ninspect_absent = 5 # {value}\n")).unwrap();
    let out = mesh_adopt()
        .args(["check", "--mesh", "live", "--config", config.to_str().unwrap()])
        .catalogue(dir.path())
        .output();
    assert_eq!(out.status.code(), Some(2));
    assert!(!format!("{}{}", text(&out.stdout), text(&out.stderr)).contains(&value));
}

#[test]
fn a_secret_carried_and_never_accepted_is_named_in_the_outcome_as_left_in_the_control_plane() {
    // A control plane that takes the superuser's carry and then refuses its acceptance.
    let standin = crate::live::StandIn::new();
    std::fs::write(standin.path().join("fail-secret"), "the secret store is read-only\n").unwrap();
    let catalogue = tempfile::tempdir().unwrap();
    crate::support::TestMesh::new().write_catalogue(catalogue.path());
    std::fs::copy(crate::support::root().join("catalogue/foundation.json"), catalogue.path().join("foundation.json"))
        .unwrap();
    let live = |json: bool| {
        let mut cli = mesh_adopt()
            .args(["run", "postgres", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git", "--config"])
            .arg(standin.config(None))
            .catalogue(catalogue.path());
        if json {
            cli = cli.arg("--json");
        }
        cli.output()
    };
    let out = live(false);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert_mentions(
        &stdout,
        &[
            "the secret store is read-only",
            "The secret it carried, `store-superuser` at `/accepting-superuser`, stays in the control plane until it is \
             accepted or carried over",
        ],
    );
    assert!(!stdout.contains(crate::support::SUPERUSER), "{stdout}");
    let out = live(true);
    let stdout = text(&out.stdout);
    let outcome = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["event"] == "outcome" && e["module"] == "postgres")
        .unwrap_or_else(|| panic!("no outcome: {stdout}"));
    assert_eq!(
        outcome["secrets_left"],
        serde_json::json!([{ "secret": "store-superuser", "at": "/accepting-superuser" }]),
        "{outcome}"
    );
    assert!(outcome["message"].as_str().unwrap().contains("stays in the control plane"), "{outcome}");
    assert!(!stdout.contains(crate::support::SUPERUSER), "{stdout}");
}

#[test]
fn an_adopted_module_names_no_secret_left() {
    let dir = catalogue();
    let out = mesh_adopt().args(["run", "--json", "--catalog-source", SOURCE]).catalogue(dir.path()).output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for line in stdout.lines().filter(|l| l.contains("\"event\":\"outcome\"")) {
        assert!(!line.contains("secrets_left"), "{line}");
    }
}
