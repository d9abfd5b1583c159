//! Where the command's lines go: a stdout closed, full or not read for a while never stops a
//! run half-way nor is billed to a plugin's compute time, and the record is finished all the
//! same.

use std::path::Path;

use crate::support::{catalogue, mesh_adopt, plugin, text};

const SOURCE: &str = "https://git.mesh.test/catalogue.git@v3";

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

/// Runs `mesh-vault` with the `says_a_lot` plugin and a tight compute deadline, its stdout a
/// pipe nobody reads for now.
pub(crate) fn run_saying_a_lot(dir: &Path) -> std::process::Child {
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
