//! The `mesh-adopt` binary as an operator runs it.

use std::path::Path;
use std::process::Command;

use crate::support::{assert_mentions, example_catalogue, mesh_adopt, plugin};

/// A copy of the example catalogue with freshly built plugins beside its manifests.
pub(crate) fn catalogue() -> tempfile::TempDir {
    example_catalogue(&plugin("adopt_postgres"))
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

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
fn inspect_shows_a_modules_plugin_digest_grants_and_imports() {
    use sha2::Digest;
    let dir = catalogue();
    let out = mesh_adopt().args(["inspect", "nats"]).catalogue(dir.path()).output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let digest = format!("{:x}", sha2::Sha256::digest(std::fs::read(plugin("adopt_nats")).unwrap()));
    for expected in [
        format!("sha256       {digest}"),
        "targets      mesh:adopt@0.2.0".into(),
        "loads        yes, on this host (it speaks mesh:adopt@0.1.0 and 0.2.0)".into(),
        "             inspect: mesh-bus".into(),
        "             fetch: http://127.0.0.1:8222/healthz".into(),
        "mesh:adopt/machine@0.2.0".into(),
        "exports      init, check, adopt".into(),
    ] {
        assert!(stdout.contains(&expected), "expected {expected:?} in:\n{stdout}");
    }
}

#[test]
fn inspect_says_why_a_plugin_for_another_contract_would_not_load() {
    let dir = catalogue();
    let path = plugin("future_world");
    let out = mesh_adopt().args(["inspect", path.to_str().unwrap()]).catalogue(dir.path()).output();
    let stdout = text(&out.stdout);
    assert!(stdout.contains("targets      mesh:adopt@0.3.0"), "{stdout}");
    assert!(stdout.contains("loads        no: it targets mesh:adopt@0.3.0"), "{stdout}");
}

#[test]
fn replay_answers_a_plugin_from_a_recording_and_names_where_another_diverges() {
    let dir = catalogue();
    let record = dir.path().join("run.jsonl");
    let recorded = mesh_adopt()
        .args([
            "run",
            "--node",
            "node-7",
            "--wait",
            "30s",
            "--catalog-source",
            "https://git.mesh.test/c.git@v2",
            "--record",
            record.to_str().unwrap(),
        ])
        .catalogue(dir.path())
        .output();
    assert_eq!(recorded.status.code(), Some(0), "{}", text(&recorded.stderr));

    // The same plugins make every recorded call, in order, on the recorded node and source
    // without being told them again.
    let same = mesh_adopt().args(["replay", record.to_str().unwrap()]).catalogue(dir.path()).output();
    let stdout = text(&same.stdout);
    assert_eq!(same.status.code(), Some(0), "{stdout}{}", text(&same.stderr));
    assert!(
        stdout.contains("on node node-7, built from https://git.mesh.test/c.git@v2, waiting up to 30s"),
        "{stdout}"
    );
    assert!(stdout.contains("the plugin made every recorded call, in order"), "{stdout}");

    // An option given on the command line wins over the recorded one, and shows where the
    // run would have differed.
    let elsewhere =
        mesh_adopt().args(["replay", record.to_str().unwrap(), "--node", "node-1"]).catalogue(dir.path()).output();
    let stdout = text(&elsewhere.stdout);
    assert_eq!(elsewhere.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "diverged at call 4: the recording has tell `module issue postgres --node node-7` (postgres), the plugin made tell `module issue postgres --node node-1`"
        ),
        "{stdout}"
    );

    // A postgres plugin that skips the superuser diverges where the recording delivers it.
    let changed = plugin("pushes_before_secret");
    let other = mesh_adopt()
        .args(["replay", record.to_str().unwrap(), "--module", "postgres", "--plugin", changed.to_str().unwrap()])
        .catalogue(dir.path())
        .output();
    let stdout = text(&other.stdout);
    assert_eq!(other.status.code(), Some(1), "{stdout}");
    // A candidate whose plan would push before handing the superuser over is stopped in
    // preflight, by the rule, before its first call.
    assert_mentions(&stdout, &["break rule `credential-never-replaced`", "diverged at call 1"]);
}

#[test]
fn replay_refuses_a_recording_whose_run_options_are_malformed() {
    let dir = catalogue();
    let record = dir.path().join("run.jsonl");
    std::fs::write(
        &record,
        concat!(
            r#"{"event":"run","schema":5,"mesh_adopt":"0.2.0","command":"run","modules":["postgres"],"#,
            r#""options":{"node":"node-1","catalog_source":null},"mesh":"simulated","seed":null}"#,
            "\n",
            r#"{"event":"call","module":"postgres","phase":"adopt","op":"tell","args":["push","node-1"],"#,
            r#""result":{"ok":""},"at_ms":0.0,"took_ms":0.0}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = mesh_adopt().args(["replay", record.to_str().unwrap()]).catalogue(dir.path()).output();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("line 1 of the recording"), "{stderr}");
    assert!(stderr.contains("is not an event of schema 5"), "{stderr}");
    assert!(stderr.contains("missing field `wait_s`"), "{stderr}");
}

const SOURCE: &str = "https://git.mesh.test/catalogue.git@v3";

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
        // A saved plan's option given to the other command is one that command does not take.
        (vec!["check", "--plan", "p.json"], "unexpected argument '--plan'"),
        (vec!["run", "--out", "p.json"], "unexpected argument '--out'"),
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
fn a_saved_plan_applies_to_its_inputs_and_refuses_after_an_edit() {
    let dir = catalogue();
    let plan = dir.path().join("plan.json");
    let plan_arg = plan.to_str().unwrap();
    let checked =
        mesh_adopt().args(["check", "--catalog-source", SOURCE, "--out", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(saved["schema"], 3);
    assert_eq!(saved["modules"].as_array().unwrap().len(), 3);
    // The plan binds the mesh and what its pushes were predicted to do there.
    assert_eq!(saved["mesh"], "the simulated mesh (node `node-1`)");
    assert!(
        saved["effect"].as_array().unwrap().iter().any(|l| l == "mesh-store kept postgres:16.4-bookworm (by postgres)"),
        "{saved}"
    );
    assert_eq!(saved["modules"][0]["commands"][0], serde_json::json!(["module", "add", "/postgres-module.json"]));

    // One edit to the foundation (a resource added that no module adopts): every module still
    // checks, but the plan no longer applies, and nothing moves.
    let foundation = dir.path().join("foundation.json");
    let original = std::fs::read_to_string(&foundation).unwrap();
    let mut edited: serde_json::Value = serde_json::from_str(&original).unwrap();
    edited["resources"].as_array_mut().unwrap().push(serde_json::json!({"id": "cache", "kind": "file", "path": "/c"}));
    std::fs::write(&foundation, edited.to_string()).unwrap();
    let stale =
        mesh_adopt().args(["run", "--catalog-source", SOURCE, "--plan", plan_arg]).catalogue(dir.path()).output();
    let stdout = text(&stale.stdout);
    assert_eq!(stale.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("the saved plan does not apply: the foundation bundle changed"), "{stdout}");
    assert!(!stdout.contains("adopted   ") && !stdout.contains("registered"), "{stdout}");

    // A credential changed since the plan was made: refused too.
    std::fs::write(&foundation, &original).unwrap();
    let credential = dir.path().join("genesis/credentials/store-superuser");
    let superuser = std::fs::read_to_string(&credential).unwrap();
    std::fs::write(&credential, "another-superuser-value\n").unwrap();
    let stale =
        mesh_adopt().args(["run", "--catalog-source", SOURCE, "--plan", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(stale.status.code(), Some(1));
    let stdout = text(&stale.stdout);
    assert!(stdout.contains("the credentials the `postgres` module's manifest grants changed"), "{stdout}");
    std::fs::write(&credential, superuser).unwrap();

    // The inputs it was made from: adopted.
    std::fs::write(&foundation, original).unwrap();
    let applied =
        mesh_adopt().args(["run", "--catalog-source", SOURCE, "--plan", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(applied.status.code(), Some(0), "{}", text(&applied.stdout));
    // Another option than the plan's: refused, naming it.
    let other = mesh_adopt()
        .args(["run", "--catalog-source", SOURCE, "--node", "node-2", "--plan", plan_arg])
        .catalogue(dir.path())
        .output();
    assert!(text(&other.stdout).contains("the node is `node-2` now"), "{}", text(&other.stdout));
}

#[test]
fn a_plan_file_holds_nothing_a_guess_at_a_credential_can_be_checked_against() {
    use sha2::{Digest as _, Sha256};
    let dir = catalogue();
    let plan = dir.path().join("plan.json");
    let plan_arg = plan.to_str().unwrap();
    let checked =
        mesh_adopt().args(["check", "--catalog-source", SOURCE, "--out", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
    let saved = std::fs::read_to_string(&plan).unwrap();
    // Neither the value's digest nor that of the credential as the host once framed it (name
    // and value with their lengths) is there: a digest keyed outside the file is.
    let name = "store-superuser";
    let value = std::fs::read_to_string(dir.path().join("genesis/credentials").join(name)).unwrap();
    let value = value.trim_end_matches('\n');
    let mut framed = Vec::new();
    framed.extend((name.len() as u64).to_le_bytes());
    framed.extend(name.as_bytes());
    framed.extend((value.len() as u64).to_le_bytes());
    framed.extend(value.as_bytes());
    for guess in [Sha256::digest(value.as_bytes()), Sha256::digest(&framed)] {
        let hex: String = guess.iter().map(|b| format!("{b:02x}")).collect();
        assert!(!saved.contains(&hex), "the plan holds the plain sha256 of the credential:\n{saved}");
    }
    let parsed: serde_json::Value = serde_json::from_str(&saved).unwrap();
    let digest = parsed["modules"][0]["credentials_digest"].as_str().unwrap();
    assert_eq!(digest.len(), 64, "{saved}");
    let key = std::fs::read(dir.path().join("state/mesh-adopt/plan-key")).unwrap();
    assert!(!saved.contains(&key.iter().map(|b| format!("{b:02x}")).collect::<String>()));

    // Taken to another machine (another plan key): it says it cannot check the credentials,
    // and nothing moves.
    let elsewhere = mesh_adopt()
        .args(["run", "--catalog-source", SOURCE, "--plan", plan_arg])
        .catalogue(dir.path())
        .env("XDG_STATE_HOME", dir.path().join("another-machine"))
        .output();
    let stdout = text(&elsewhere.stdout);
    assert_eq!(elsewhere.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("another plan key") && stdout.contains("cannot check"), "{stdout}");
    assert!(!stdout.contains("registered"), "{stdout}");
    // Here it applies.
    let applied =
        mesh_adopt().args(["run", "--catalog-source", SOURCE, "--plan", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(applied.status.code(), Some(0), "{}", text(&applied.stdout));
}

#[test]
fn inspect_takes_a_module_directory() {
    let dir = catalogue();
    let module_dir = dir.path().join("modules/postgres");
    let out = mesh_adopt().arg("inspect").arg(&module_dir).output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stdout.contains("module       postgres"), "{stdout}");
}

#[test]
fn a_closed_stdout_does_not_stop_a_run_half_way() {
    let dir = catalogue();
    let record = dir.path().join("run.jsonl");
    let mut child =
        mesh_adopt().args(["run", "--catalog-source", SOURCE, "--record"]).arg(&record).catalogue(dir.path()).spawn();
    // Read one line, as `| head -1` does, then close the pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(stderr.is_empty(), "quietly: {stderr}");
    // The run went on to its end: everything adopted, and the record finished.
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let recorded = std::fs::read_to_string(&record).unwrap();
    let last: serde_json::Value = serde_json::from_str(recorded.lines().last().unwrap()).unwrap();
    assert_eq!((last["event"].as_str(), last["exit"].as_u64()), (Some("end"), Some(0)));
}

#[test]
fn a_full_stdout_is_warned_of_once_and_the_run_finishes() {
    let dir = catalogue();
    let full = std::fs::File::options().write(true).open("/dev/full").unwrap();
    let out = mesh_adopt().args(["run", "--catalog-source", SOURCE]).catalogue(dir.path()).stdout(full).output();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr.matches("warning: stdout cannot be written").count(), 1, "{stderr}");
}

#[test]
fn a_changed_bus_layout_or_an_empty_bus_plugin_changes_nothing_at_all() {
    for (edit, exit) in [("layout", 1), ("empty plugin", 2)] {
        let dir = catalogue();
        let nats = dir.path().join("modules/nats");
        if edit == "layout" {
            let manifest = std::fs::read_to_string(nats.join("manifest.json")).unwrap();
            let mut manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
            manifest["bus-users"] = "/srv/elsewhere/accounts.conf".into();
            std::fs::write(nats.join("manifest.json"), manifest.to_string()).unwrap();
        } else {
            std::fs::write(nats.join("adopt.wasm"), b"").unwrap();
        }
        let record = dir.path().join("run.jsonl");
        let out = mesh_adopt()
            .args(["run", "--catalog-source", SOURCE, "--record", record.to_str().unwrap()])
            .catalogue(dir.path())
            .output();
        assert_eq!(out.status.code(), Some(exit), "{edit}: {}", text(&out.stdout));
        let events: Vec<serde_json::Value> =
            std::fs::read_to_string(&record).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let effects: Vec<&serde_json::Value> = events
            .iter()
            .filter(|e| {
                e["event"] == "call" && (e["op"] == "carry" || e["op"] == "tell") && e["result"].get("ok").is_some()
            })
            .collect();
        assert!(effects.is_empty(), "{edit}: {effects:?}");
        let summary = events.iter().find(|e| e["event"] == "summary").expect("a summary");
        assert!(summary["modules"].as_array().unwrap().iter().all(|m| m["outcome"] != "adopted"), "{summary}");
        assert_eq!(summary["changes"], serde_json::json!([]), "{edit}");
        assert_eq!(events.last().unwrap()["exit"], exit, "{edit}");
    }
}

#[test]
fn sigint_while_a_plugin_computes_exits_130_at_once() {
    let dir = example_catalogue(&plugin("loops_forever"));
    let record = dir.path().join("run.jsonl");
    let child = mesh_adopt()
        .args(["run", "postgres", "--catalog-source", SOURCE, "--plugin-time", "60s", "--record"])
        .arg(&record)
        .catalogue(dir.path())
        .spawn();
    // Wait until the plugin is in its endless loop: its plan is recorded before adopt.
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&record).unwrap_or_default().contains("\"event\":\"plan\"") {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the plugin never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = std::time::Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(sent.elapsed() < std::time::Duration::from_secs(3), "stopped after {:?}", sent.elapsed());
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(recorded.lines().last().unwrap().contains("\"event\":\"interrupted\""), "{recorded}");
    // An interrupted record is as valid as a finished one, line by line.
    for line in recorded.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(crate::events::invalid(&value), None, "{line}");
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

/// Runs `mesh-vault` with the `says_a_lot` plugin and a tight compute deadline, its stdout a
/// pipe nobody reads for now.
fn run_saying_a_lot(dir: &Path) -> std::process::Child {
    let vault = dir.join("modules/mesh-vault");
    std::fs::copy(plugin("says_a_lot"), vault.join("adopt.wasm")).unwrap();
    mesh_adopt().args(["run", "mesh-vault", "--plugin-time", "1s", "--catalog-source", SOURCE]).catalogue(dir).spawn()
}

#[test]
fn a_reader_that_stops_reading_is_not_billed_to_the_plugin() {
    let dir = catalogue();
    let child = run_saying_a_lot(dir.path());
    // Nobody reads for three seconds: far past the plugin's one second of compute.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let out = child.wait_with_output().unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stdout.lines().rev().take(8).collect::<Vec<_>>().join("\n"));
    assert!(stdout.contains("mesh-vault   adopted"), "the last lines are all there");
}

#[test]
fn sigint_is_answered_while_stdout_is_blocked() {
    let dir = catalogue();
    let mut child = run_saying_a_lot(dir.path());
    std::thread::sleep(std::time::Duration::from_secs(2));
    let sent = std::time::Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    // Still nobody reads stdout: the program must end all the same.
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(sent.elapsed() < std::time::Duration::from_secs(5), "still running {:?} after SIGINT", sent.elapsed());
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // Interrupted mid-run (130), or, its run already over and recorded, ended by the signal
    // while it waited to hand stdout its last lines.
    use std::os::unix::process::ExitStatusExt;
    assert!(status.code() == Some(130) || status.signal() == Some(2), "{status:?}");
}

#[test]
fn a_full_stdout_and_stderr_do_not_stop_a_run_half_way() {
    let dir = catalogue();
    let record = dir.path().join("run.jsonl");
    let full = || std::fs::File::options().write(true).open("/dev/full").unwrap();
    let status = mesh_adopt()
        .args(["run", "--catalog-source", SOURCE, "--record"])
        .arg(&record)
        .catalogue(dir.path())
        .stdout(full())
        .stderr(full())
        .output()
        .status;
    assert_eq!(status.code(), Some(0));
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(recorded.lines().last().unwrap().contains("\"event\":\"end\""), "the record is complete");
}

#[test]
fn a_plan_written_over_an_existing_file_is_made_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = catalogue();
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, "").unwrap();
    std::fs::set_permissions(&plan, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = mesh_adopt()
        .args(["check", "--catalog-source", SOURCE, "--out", plan.to_str().unwrap()])
        .catalogue(dir.path())
        .output();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::metadata(&plan).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn a_fifo_in_place_of_a_manifest_foundation_plan_or_recording_is_refused_not_waited_on() {
    let dir = catalogue();
    let fifo = |path: &Path| {
        let _ = std::fs::remove_file(path);
        assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
    };
    let source = "https://git.mesh.test/catalogue.git@v3";
    // The manifest: that module is unusable, the run exits 2, and nothing waits for a writer.
    fifo(&dir.path().join("modules/nats/manifest.json"));
    let out = mesh_adopt().args(["check", "--catalog-source", source]).catalogue(dir.path()).output();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("is not a regular file"), "{}", text(&out.stdout));
    // The foundation, a saved plan and a recording: refused before anything runs.
    let pipe = dir.path().join("pipe");
    fifo(&pipe);
    let pipe_arg = pipe.to_str().unwrap();
    for args in [
        vec!["check", "postgres", "--foundation", pipe_arg],
        vec!["run", "postgres", "--catalog-source", source, "--plan", pipe_arg],
        vec!["replay", pipe_arg],
    ] {
        let out = mesh_adopt().args(&args).catalogue(dir.path()).output();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("is not a regular file"), "{args:?}: {}", text(&out.stderr));
    }
}

#[test]
fn outputs_that_are_one_file_or_a_hard_link_to_an_input_are_refused() {
    let dir = catalogue();
    let out_path = dir.path().join("..").join(format!("same-{}.out", std::process::id()));
    let same = out_path.to_str().unwrap();
    let out = mesh_adopt().args(["check", "--out", same, "--record", same]).catalogue(dir.path()).output();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("name the same file"), "{}", text(&out.stderr));
    assert!(!out_path.exists());
    // A hard link to a manifest is that manifest under another name.
    let manifest = dir.path().join("modules/mesh-vault/manifest.json");
    let before = std::fs::read(&manifest).unwrap();
    let link = dir.path().join("..").join(format!("link-{}.jsonl", std::process::id()));
    std::fs::hard_link(&manifest, &link).unwrap();
    let out = mesh_adopt().args(["run", "--record", link.to_str().unwrap()]).catalogue(dir.path()).output();
    let _ = std::fs::remove_file(&link);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is the same file as one of this run's inputs"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&manifest).unwrap(), before, "the manifest is unchanged");
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

/// A component whose one core module has `functions` functions of `length` arithmetic steps
/// each, and nothing of the contract: what takes long to compile and then cannot be used.
fn slow_to_compile(functions: usize, length: usize) -> Vec<u8> {
    let body = "local.get 0 i32.const 7 i32.add i32.const 3 i32.mul local.set 0 ".repeat(length);
    let funcs: String = (0..functions)
        .map(|i| format!("(func (export \"f{i}\") (param i32) (result i32) {body} local.get 0)\n"))
        .collect();
    wat::parse_str(format!("(component (core module {funcs}))")).expect("the component's text parses")
}

#[test]
fn an_interrupt_while_a_plugin_compiles_ends_the_program_within_two_seconds_record_closed() {
    let dir = catalogue();
    std::fs::write(dir.path().join("modules/postgres/adopt.wasm"), slow_to_compile(4000, 150)).unwrap();
    let record = dir.path().join("run.jsonl");
    // Cranelift's compile, which is the slow one: Winch's may be over before the interrupt.
    let child = mesh_adopt()
        .args(["check", "--no-cache", "--code", "optimised", "--catalog-source", SOURCE, "postgres", "--record"])
        .arg(&record)
        .catalogue(dir.path())
        .spawn();
    // The record's first line is written before the plugin is loaded: the compile is next.
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&record).map_or(true, |r| r.is_empty()) {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "the run never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let sent = std::time::Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let stopped_in = sent.elapsed();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stopped_in < std::time::Duration::from_secs(2), "stopped after {stopped_in:?}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    let recorded = std::fs::read_to_string(&record).unwrap();
    let last: serde_json::Value = serde_json::from_str(recorded.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "interrupted", "{recorded}");
}

#[test]
fn a_plugin_that_swallows_its_denials_is_not_adopted_and_the_summary_says_why_without_v() {
    let dir = catalogue();
    std::fs::copy(plugin("registers_without_carrying"), dir.path().join("modules/postgres/adopt.wasm")).unwrap();
    let out = mesh_adopt().args(["run", "--catalog-source", SOURCE, "postgres"]).catalogue(dir.path()).output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let summary = stdout.split("\nsummary\n").nth(1).expect("a summary");
    assert!(summary.contains("postgres") && !summary.contains("adopted   "), "{summary}");
    assert!(
        summary.contains("not adopted: its plugin was denied `tell module add /postgres-module.json`"),
        "{summary}"
    );
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

/// An output whose directory is not there is refused before anything runs, as one that is a
/// FIFO or a directory is, not after the whole check.
#[test]
fn an_output_in_a_directory_that_is_not_there_is_refused_before_the_check() {
    let dir = crate::support::example_catalogue(&crate::support::plugin("adopt_postgres"));
    let out = mesh_adopt()
        .args(["check", "--catalog-source", "https://git.mesh.test/c.git", "--out", "/nonexistent/plan.json"])
        .catalogue(dir.path())
        .output();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("its directory `/nonexistent` does not exist"), "{stderr}");
    assert!(!text(&out.stdout).contains("summary"), "nothing ran");
}

/// Sends SIGTERM to `child` and waits for it, at most five seconds: what an operator's
/// `kill`, or a service manager stopping the command, does.
fn terminated(mut child: std::process::Child) -> (std::process::Output, std::time::Duration) {
    let sent = std::time::Instant::now();
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    while child.try_wait().unwrap().is_none() {
        if sent.elapsed() > std::time::Duration::from_secs(5) {
            let _ = child.kill();
            panic!("still running {:?} after SIGTERM", sent.elapsed());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (child.wait_with_output().unwrap(), sent.elapsed())
}

#[test]
fn sigterm_during_a_sweep_ends_it_with_130_and_says_so() {
    use std::io::BufRead as _;
    let catalogue = crate::support::root().join("catalogue");
    let cache = tempfile::tempdir().unwrap();
    let mut child =
        mesh_adopt().args(["test", "--sweep"]).catalogue(&catalogue).env("XDG_CACHE_HOME", cache.path()).spawn();
    // The first scenario's line: the sweep is under way, with minutes of it to go.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(!first.is_empty(), "the sweep said nothing");
    let (out, took) = terminated(child);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(took < std::time::Duration::from_secs(2), "stopped after {took:?}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("error:"), "{stderr}");
}

#[test]
fn sigterm_during_a_build_ends_it_and_its_toolchain_with_130() {
    // The build's cargo is one that answers `metadata` as cargo does and then builds for as
    // long as it is let: what a long compile looks like to the command.
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("cargo-build.pid");
    let fake = dir.path().join("cargo");
    let real = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nif [ \"$1\" = metadata ]; then exec '{real}' \"$@\"; fi\necho $$ > '{}'\nexec sleep 60\n",
            started.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let child = mesh_adopt()
        .args(["build", "--check", "--no-pin", "postgres"])
        .catalogue(crate::support::root().join("catalogue"))
        .env("CARGO", &fake)
        .env("XDG_CACHE_HOME", dir.path())
        .spawn();
    let waited = std::time::Instant::now();
    while std::fs::read_to_string(&started).map_or(true, |p| !p.ends_with('\n')) {
        assert!(waited.elapsed() < std::time::Duration::from_secs(60), "the build never started cargo");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let cargo = std::fs::read_to_string(&started).unwrap().trim().to_string();
    let (out, took) = terminated(child);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(took < std::time::Duration::from_secs(2), "stopped after {took:?}");
    assert!(stderr.contains("interrupted by SIGTERM: the toolchain commands it had started were ended"), "{stderr}");
    assert!(!stderr.contains("error:"), "an interrupt is no error: {stderr}");
    // The build's cargo went with it, not left compiling.
    let gone = std::time::Instant::now();
    while Command::new("kill").args(["-0", &cargo]).stderr(std::process::Stdio::null()).status().unwrap().success() {
        assert!(gone.elapsed() < std::time::Duration::from_secs(2), "cargo {cargo} still runs");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
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
