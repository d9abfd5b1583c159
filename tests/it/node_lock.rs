//! The mesh's lock on the reference node, whose control plane fences it: a run whose lock is
//! broken under it is stopped by the control plane's own check and the next run adopts, and a
//! run interrupted as a push begins lets its lock go only once the node has landed that push.
//! The node is taken one test at a time, as `node.rs` takes it.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::node::{NODE_ROOT, events, inspect, node, node_log, shown};
use crate::support::root;

/// A file removed when the test ends, however it ends: a push held on by it is never left
/// holding the node.
struct Removed(std::path::PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The id of the lock a run's events say it took.
fn taken_lock(events: &[Value]) -> String {
    let taken = events.iter().find(|e| e["event"] == "lock" && e["outcome"] == "taken");
    taken.unwrap_or_else(|| panic!("no lock taken: {}", shown(events)))["holder"]["id"].as_str().unwrap().to_string()
}

/// Where the first line of the node's log that starts with `line` is.
fn logged_at(log: &str, line: &str) -> usize {
    log.lines().position(|l| l.starts_with(line)).unwrap_or_else(|| panic!("no `{line}` in the node's log:\n{log}"))
}

/// Waits up to two minutes for the node's log to hold `line`, while `run` still runs.
fn wait_in_log(line: &str, run: &mut std::process::Child) {
    let began = Instant::now();
    while !node_log().contains(line) {
        assert!(began.elapsed() < Duration::from_secs(120), "no `{line}` in the node's log: {}", node_log());
        assert!(run.try_wait().unwrap().is_none(), "the run ended before `{line}`: {}", node_log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_lock_broken_under_a_run_on_the_node_is_caught_by_its_control_plane_and_the_next_run_adopts() {
    let node = node();
    node.genesis();
    // Broken at the first run's fourth changing command (postgres's `module issue`, whose failure
    // the provider sequence goes on past), as another host's `mesh-adopt unlock` would.
    std::fs::write(Path::new(NODE_ROOT).join("control/break-lock-at"), "4").unwrap();
    let mut first = node.mesh_adopt("run", &root().join("node/catalogue")).spawn();
    wait_in_log("mesh broken", &mut first);
    let elsewhere = tempfile::tempdir().unwrap();
    let second =
        node.mesh_adopt("run", &root().join("node/catalogue")).env("XDG_STATE_HOME", elsewhere.path()).output();
    let first = first.wait_with_output().unwrap();
    let (first_events, second_events) = (events(&first.stdout), events(&second.stdout));
    assert_eq!(second.status.code(), Some(0), "{}", shown(&second_events));
    assert_eq!(first.status.code(), Some(1), "{}", shown(&first_events));
    let outcome = first_events.iter().find(|e| e["event"] == "outcome" && e["module"] == "postgres").unwrap();
    assert_eq!(outcome["code"], "lock-broken", "{}", shown(&first_events));
    for module in ["nats", "mesh-vault"] {
        let left = first_events.iter().find(|e| e["event"] == "outcome" && e["module"] == module).unwrap();
        assert_eq!(left["outcome"], "not_run", "{left}");
    }
    let (one, two) = (taken_lock(&first_events), taken_lock(&second_events));
    let broken = first_events.iter().find(|e| e["event"] == "lock" && e["outcome"] == "broken").unwrap();
    assert_eq!(broken["holder"]["id"], two.as_str(), "{broken}");
    // The control plane's own log: the first run's command refused once the second had the
    // lock, and nothing under the first lock applied after that.
    let log = node_log();
    let taken = logged_at(&log, &format!("mesh locked {two}"));
    assert!(logged_at(&log, &format!("mesh broken {one}")) < taken, "{log}");
    let refused = logged_at(&log, "refused `module issue postgres --node node-1`");
    assert!(refused > taken && log.lines().nth(refused).unwrap().contains(&one), "{log}");
    let applied_under_first = format!("under {one}");
    let late: Vec<&str> =
        log.lines().skip(taken).filter(|l| l.starts_with("applied") && l.contains(&applied_under_first)).collect();
    assert!(late.is_empty(), "applied under the first lock after the second was taken: {late:?}\n{log}");
    assert!(log.contains(&format!("applied `push node-1 (worker)` under {two}")), "{log}");
    assert_eq!(inspect("mesh-bus")["Config"]["Image"], "localhost/mesh-node/bus:2.9-mesh.1");
}

#[test]
fn an_interrupt_as_a_push_begins_on_the_node_lets_the_lock_go_only_once_that_push_has_landed() {
    let node = node();
    node.genesis();
    // A push of at least three seconds, held on until the test lets it land (however slowly a
    // loaded machine stops the run).
    std::fs::write(Path::new(NODE_ROOT).join("control/slow-push"), "3").unwrap();
    let hold = Removed(Path::new(NODE_ROOT).join("control/hold-push"));
    std::fs::write(&hold.0, "").unwrap();
    let mut first = node.mesh_adopt("run", &root().join("node/catalogue")).spawn();
    wait_in_log("push begun", &mut first);
    let sent = Command::new("kill").args(["-INT", &first.id().to_string()]).status().unwrap();
    assert!(sent.success());
    // A second run started at once, from elsewhere, waits for the lock.
    let elsewhere = tempfile::tempdir().unwrap();
    let second = node
        .mesh_adopt("run", &root().join("node/catalogue"))
        .args(["--lock-timeout", "3m"])
        .env("XDG_STATE_HOME", elsewhere.path())
        .spawn();
    let first = first.wait_with_output().unwrap();
    let first_events = events(&first.stdout);
    assert_eq!(first.status.code(), Some(130), "{}", shown(&first_events));
    // The first run is gone; its lock is not, while the push it began has not landed.
    assert!(Path::new(NODE_ROOT).join("control/mesh-lock.json").exists(), "the lock went before the push");
    std::thread::sleep(Duration::from_secs(1));
    drop(hold);
    let second = second.wait_with_output().unwrap();
    let second_events = events(&second.stdout);
    assert_eq!(second.status.code(), Some(0), "{}", shown(&second_events));
    // The first run names the push it was stopped in, which the node went on to land.
    let stopped = first_events.last().unwrap();
    assert_eq!(stopped["event"], "interrupted", "{stopped}");
    assert_eq!(stopped["in_flight"]["args"], serde_json::json!(["push", "node-1"]), "{stopped}");
    assert_eq!(stopped["in_flight"]["landing"], "still_running", "{stopped}");
    // In the control plane's log, that push ended before the first lock went, and the second
    // run took the lock only after.
    let (one, two) = (taken_lock(&first_events), taken_lock(&second_events));
    let log = node_log();
    let landed = logged_at(&log, "push finished node-1");
    let let_go = logged_at(&log, &format!("mesh unlocked {one}"));
    let taken = logged_at(&log, &format!("mesh locked {two}"));
    assert!(landed < let_go && let_go < taken, "{log}");
    assert!(log.contains(&format!("mesh releasing {one} once push node-1")), "{log}");
    let waited: Vec<&str> =
        second_events.iter().filter(|e| e["event"] == "lock").map(|e| e["outcome"].as_str().unwrap()).collect();
    assert_eq!(waited, ["waiting", "taken", "released"], "{}", shown(&second_events));
}
