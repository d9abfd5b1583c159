//! `mesh-adopt replay` as an operator runs it on a recording made elsewhere: the recording
//! names the catalogue, foundation and credentials its run read, so it replays from any
//! directory (and `--catalogue` still wins), and a recording of an interrupted run replays
//! as far as that run went, saying where it stopped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::live::StandIn;
use crate::support::{Cli, TestMesh, assert_mentions, catalogue, mesh_adopt, plugin, root, text};

const SOURCE: &str = "https://git.mesh.test/catalogue.git@v3";

/// The binary run from `dir`, with no `--catalogue`, its compile cache and state in `keep`.
fn from(dir: &Path, keep: &Path) -> Cli {
    mesh_adopt().current_dir(dir).env("XDG_CACHE_HOME", keep.join("cache")).env("XDG_STATE_HOME", keep.join("state"))
}

/// The recording's events, each line as JSON.
fn events(record: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(record).unwrap();
    text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// `path`, links resolved: what a record names.
fn real(path: &Path) -> String {
    path.canonicalize().unwrap().to_str().unwrap().to_string()
}

#[test]
fn a_recording_replays_from_any_directory_with_the_catalogue_foundation_and_credentials_it_names() {
    // The foundation and the credentials kept apart from the catalogue, as an installer may.
    let dir = catalogue();
    let site = tempfile::tempdir().unwrap();
    let foundation = site.path().join("bundle.json");
    let credentials = site.path().join("secrets");
    std::fs::rename(dir.path().join("foundation.json"), &foundation).unwrap();
    std::fs::rename(dir.path().join("genesis/credentials"), &credentials).unwrap();
    let record = site.path().join("run.jsonl");
    let recorded = from(dir.path(), site.path())
        .args(["run", "--catalogue", ".", "--catalog-source", SOURCE, "--record"])
        .arg(&record)
        .args(["--foundation", foundation.to_str().unwrap(), "--credentials", credentials.to_str().unwrap()])
        .output();
    assert_eq!(recorded.status.code(), Some(0), "{}", text(&recorded.stderr));
    let header = &events(&record)[0];
    assert_eq!(
        header["catalogue"],
        serde_json::json!({"dir": real(dir.path()), "foundation": real(&foundation), "credentials": real(&credentials)}),
        "the record names what its run read, by absolute paths"
    );

    // From a directory with no catalogue, nothing given: the recorded catalogue, foundation
    // and credentials (the superuser's hand-over is replayed, so the credential was found).
    let elsewhere = tempfile::tempdir().unwrap();
    let again = site.path().join("replay.jsonl");
    let replayed = from(elsewhere.path(), site.path()).arg("replay").arg(&record).arg("--record").arg(&again).output();
    let stdout = text(&replayed.stdout);
    assert_eq!(replayed.status.code(), Some(0), "{stdout}{}", text(&replayed.stderr));
    assert!(stdout.contains(&format!("with the catalogue `{}`", real(dir.path()))), "{stdout}");
    assert!(stdout.contains("the plugin made every recorded call, in order"), "{stdout}");
    // The replay's own record names the same, and replays from anywhere in turn.
    assert_eq!(events(&again)[0]["catalogue"], header["catalogue"]);
    let twice = from(Path::new("/"), site.path()).arg("replay").arg(&again).output();
    assert_eq!(twice.status.code(), Some(0), "{}", text(&twice.stdout));

    // `--catalogue` wins, with its own foundation and credentials: a catalogue whose
    // postgres plugin pushes before handing the superuser over is stopped in preflight.
    let other = crate::support::example_catalogue(&plugin("pushes_before_secret"));
    let overridden =
        from(elsewhere.path(), site.path()).arg("replay").arg(&record).arg("--catalogue").arg(other.path());
    let out = overridden.output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains(&format!("with the catalogue `{}`", other.path().display())), "{stdout}");
    assert!(stdout.contains("diverged at call 1"), "{stdout}");

    // A recorded catalogue that is gone is named, with what to do about it; given where it
    // went, the replay runs from there.
    let (recorded_dir, moved) = (real(dir.path()), site.path().join("moved"));
    std::fs::rename(dir.path(), &moved).unwrap();
    let gone = from(elsewhere.path(), site.path()).arg("replay").arg(&record).output();
    assert_eq!(gone.status.code(), Some(2), "{}", text(&gone.stdout));
    assert_eq!(
        text(&gone.stderr).trim(),
        format!(
            "error: the recording `{}` was made with the catalogue `{recorded_dir}`, which is not a directory here \
             (pass --catalogue DIR)",
            record.display()
        )
    );
    let out = from(elsewhere.path(), site.path())
        .arg("replay")
        .arg(&record)
        .arg("--catalogue")
        .arg(&moved)
        .args(["--foundation", foundation.to_str().unwrap(), "--credentials", credentials.to_str().unwrap()])
        .output();
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
}

/// A live run of `mesh-vault` through the stand-ins, whose build hangs, interrupted by
/// SIGINT while the build is under way: its record, and the catalogue it was made with.
fn interrupted_live_run() -> (tempfile::TempDir, PathBuf) {
    let standin = StandIn::new();
    std::fs::write(standin.path().join("hang-build"), "").unwrap();
    let config = standin.config(None);
    let catalogue = tempfile::tempdir().unwrap();
    TestMesh::new().write_catalogue(catalogue.path());
    std::fs::copy(root().join("catalogue/foundation.json"), catalogue.path().join("foundation.json")).unwrap();
    let record = catalogue.path().join("run.jsonl");
    let child = mesh_adopt()
        .args(["run", "mesh-vault", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git", "--config"])
        .arg(&config)
        .arg("--record")
        .arg(&record)
        .catalogue(catalogue.path())
        .spawn();
    let started = Instant::now();
    while !standin.read("argv.log").contains("build ") {
        assert!(started.elapsed() < Duration::from_secs(60), "the build never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    (catalogue, record)
}

#[test]
fn a_recording_of_an_interrupted_run_replays_as_far_as_the_run_went_and_says_where_it_stopped() {
    let (catalogue, record) = interrupted_live_run();
    let recorded = events(&record);
    assert_eq!(recorded.last().unwrap()["event"], "interrupted");
    let build =
        "tell `build https://git.mesh.test/c.git --path modules/mesh-vault --ref main --wait 1200s` (mesh-vault)";

    // From elsewhere, with the recorded catalogue: every recorded call made as recorded, then
    // the build the run was in when it stopped, and no further. Not a divergence: exit 0.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = from(elsewhere.path(), catalogue.path()).arg("replay").arg(&record).arg("--json").output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for line in &lines {
        assert_eq!(crate::events::invalid(line), None, "{line}");
    }
    let verdict = lines.iter().find(|l| l["event"] == "replay").expect("a verdict");
    let calls = recorded.iter().filter(|e| e["event"] == "call" && e["op"] != "credential").count();
    assert_eq!(verdict["divergence"], serde_json::Value::Null, "{verdict}");
    assert_eq!(verdict["answered"], calls, "{verdict}");
    assert_eq!(verdict["interrupted"], serde_json::json!({"signal": "SIGINT", "calls": calls, "during": build}));
    // The plugin's build was answered as no mesh answered it: it went no further.
    let outcome = lines.iter().find(|l| l["event"] == "outcome").unwrap();
    assert!(outcome["message"].as_str().unwrap().contains("interrupted (SIGINT) during this call"), "{outcome}");
    assert!(!lines.iter().any(|l| l["event"] == "call" && l["args"][0] == "assign"), "nothing past the build");

    // The same in words.
    let out = from(elsewhere.path(), catalogue.path()).arg("replay").arg(&record).output();
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "the plugin made every recorded call, in order, up to where the recorded run was interrupted (SIGINT) \
             during {build}: the replay went no further"
        )),
        "{stdout}"
    );

    // A plugin that would build from elsewhere diverges at the call the run was in.
    let out = from(elsewhere.path(), catalogue.path())
        .arg("replay")
        .arg(&record)
        .args(["--catalog-source", "https://git.mesh.test/other.git"])
        .output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "diverged at call {}: the recorded run was interrupted (SIGINT) during {build}, the plugin made tell \
             `build https://git.mesh.test/other.git",
            calls + 1
        )),
        "{stdout}"
    );
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
            r#"{"event":"run","schema":6,"mesh_adopt":"0.2.0","command":"run","modules":["postgres"],"#,
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
    assert!(stderr.contains("is not an event of schema 6"), "{stderr}");
    assert!(stderr.contains("missing field `wait_s`"), "{stderr}");
}
