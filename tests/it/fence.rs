//! The mesh's lock as the control plane holds a run to it, through the binary on the live
//! stand-ins: a run whose lock is broken under it is stopped by the control plane's own check
//! (the fence, exit 77) with nothing more sent; a lock is let go only once the control plane
//! runs nothing the run sent, waited for up to `--wait`; a release that fails or outlasts its
//! bound fails the run, naming the lock and the command that breaks it.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::live::StandIn;
use crate::lock::{catalogue, ended, events, locked_config, run};
use crate::support::root;

/// Waits up to a minute for `done`, naming `what` when it does not come.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(60), "{what} never came");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The lock events of a record, as (outcome, scope).
fn lock_events(record: &Path) -> Vec<Value> {
    events(record).into_iter().filter(|e| e["event"] == "lock").collect()
}

/// The id of the lock a record's run took.
fn taken_id(record: &Path) -> String {
    let taken = lock_events(record).into_iter().find(|e| e["outcome"] == "taken").expect("the run took a lock");
    taken["holder"]["id"].as_str().unwrap().to_string()
}

/// Where `line` first is in the stand-in's fence log, which says every lock taken, released
/// and broken and every changing command applied or refused, in order.
fn at(log: &str, line: &str) -> usize {
    log.lines().position(|l| l.starts_with(line)).unwrap_or_else(|| panic!("no `{line}` in the fence log:\n{log}"))
}

/// The stand-in control plane run directly, as a command sent under `lock` would be.
fn sent_under(standin: &StandIn, lock: &str, words: &[&str]) -> std::process::Output {
    std::process::Command::new(root().join("tests/live/control-plane"))
        .args(words)
        .env("STANDIN_STATE", standin.path())
        .env("MESH_ADOPT_LOCK_ID", lock)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_lock_broken_under_a_run_is_caught_by_the_control_planes_own_check_and_the_next_run_adopts() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    // The fourth changing command is `module issue`, whose failure the provider sequence would
    // go on past: only the fence stops the run there.
    std::fs::write(standin.path().join("break-lock-at"), "4").unwrap();
    let (one, two) = (catalogue(), catalogue());
    let first = run(&config, one.path(), "run.jsonl", &[]).spawn();
    wait_for("the lock broken under the first run", || standin.path().join("lock-broken").exists());
    let second = run(&config, two.path(), "run.jsonl", &[]).output();
    let first = ended(first);
    assert_eq!(second.status.code(), Some(0), "{}", String::from_utf8_lossy(&second.stdout));
    assert_eq!(first.status, Some(1), "{}", first.said);
    let (one_id, two_id) = (taken_id(&one.path().join("run.jsonl")), taken_id(&two.path().join("run.jsonl")));

    // The first run says its lock was broken, by whom, at which command, and sent nothing more.
    let recorded = events(&one.path().join("run.jsonl"));
    let outcome = recorded.iter().find(|e| e["event"] == "outcome").unwrap();
    assert_eq!((&outcome["outcome"], &outcome["code"]), (&Value::from("refused"), &Value::from("lock-broken")));
    let broken = recorded.iter().find(|e| e["event"] == "lock" && e["outcome"] == "broken").unwrap();
    assert_eq!(broken["holder"]["id"], two_id.as_str(), "{broken}");
    assert_eq!(broken["remedy"]["action"], "inspect-mesh", "{broken}");
    assert!(first.said.contains("the control plane refused `module issue postgres --node node-1`"), "{}", first.said);
    assert!(first.said.contains(&format!("this run's lock `{one_id}` was broken under it")), "{}", first.said);
    let effects: Vec<&Value> = recorded
        .iter()
        .filter(|e| e["event"] == "call" && e["result"].get("error").is_none_or(|e| e["kind"] != "denied"))
        .filter(|e| e["op"] == "tell" || e["op"] == "carry")
        .collect();
    assert_eq!(effects.last().unwrap()["args"][0], "module", "nothing went out after the refused command");

    // The control plane's log: the refused command, and nothing under the first lock applied
    // once the second was taken.
    let log = standin.read("fence.log");
    let (broke, taken) = (at(&log, &format!("broken {one_id}")), at(&log, &format!("locked {two_id}")));
    assert!(broke < taken, "{log}");
    let refused = at(&log, &format!("refused module issue postgres --node node-1 under {one_id}"));
    assert!(refused > taken, "{log}");
    let under_first = format!("under {one_id}");
    let after: Vec<&str> = log.lines().skip(taken).filter(|l| l.contains(&under_first)).collect();
    assert_eq!(after, [log.lines().nth(refused).unwrap()], "only the refusal under the first lock: {log}");
    assert!(log.contains(&format!("applied push node-1 under {two_id}")), "{log}");
    // Every later command under the first lock is refused too, whoever sends it, held or free.
    let later = sent_under(&standin, &one_id, &["assign", "node-1", "postgres"]);
    assert_eq!(later.status.code(), Some(77), "{}", String::from_utf8_lossy(&later.stderr));
}

#[test]
fn a_configuration_whose_control_plane_does_not_fence_warns_as_one_without_a_lock_does() {
    let standin = StandIn::new();
    let fenced = locked_config(&standin);
    let text = std::fs::read_to_string(&fenced).unwrap().replace("lock_fences = true\n", "");
    let advisory = standin.path().join("mesh-adopt-advisory.toml");
    std::fs::write(&advisory, text).unwrap();
    let dir = catalogue();
    let out = run(&advisory, dir.path(), "run.jsonl", &[]).output();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("warning: this mesh's configuration does not declare `lock_fences`"), "{said}");
    assert_eq!(lock_events(&dir.path().join("run.jsonl"))[0]["scope"], "advisory");
    // Even so, every command the run sent carried its lock.
    let id = taken_id(&dir.path().join("run.jsonl"));
    assert!(standin.read("fence.log").contains(&format!("applied push node-1 under {id}")));
    let fenced_run = run(&fenced, dir.path(), "fenced.jsonl", &[]).output();
    assert_eq!(fenced_run.status.code(), Some(0));
    let said = String::from_utf8_lossy(&fenced_run.stdout);
    assert!(!said.contains("`lock_fences`") && !said.contains("keeps another run out"), "{said}");
    assert_eq!(lock_events(&dir.path().join("fenced.jsonl"))[0]["scope"], "mesh");
}

#[test]
fn an_interrupted_run_lets_its_lock_go_only_once_the_push_it_began_has_landed() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    // The push lands in a worker of its own session, whatever becomes of the command that began
    // it, and not before the test lets it (however slowly a loaded machine stops the run).
    std::fs::write(standin.path().join("push-worker"), "1").unwrap();
    std::fs::write(standin.path().join("push-held"), "").unwrap();
    let (one, two) = (catalogue(), catalogue());
    let first = run(&config, one.path(), "run.jsonl", &[]).spawn();
    wait_for("the push's worker", || {
        std::fs::read_dir(standin.path().join("inflight")).is_ok_and(|mut d| {
            d.any(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default().contains("(worker)"))
        })
    });
    let sent = std::process::Command::new("kill").args(["-INT", &first.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let second = run(&config, two.path(), "run.jsonl", &["--lock-timeout", "1m"]).spawn();
    let first = ended(first);
    assert_eq!(first.status, Some(130), "{}", first.said);
    // The first run is gone; its lock is not, while the push it began has not landed, and the
    // second run waits for it.
    assert!(standin.path().join("lock.json").exists(), "the lock went before the push landed");
    wait_for("the second run waiting", || {
        std::fs::read_to_string(two.path().join("run.jsonl")).is_ok_and(|r| r.contains(r#""outcome":"waiting""#))
    });
    std::fs::remove_file(standin.path().join("push-held")).unwrap();
    let second = ended(second);
    assert_eq!(second.status, Some(0), "{}", second.said);

    // The first run names the push under way, and that the control plane still lands it.
    let stopped = events(&one.path().join("run.jsonl")).pop().unwrap();
    assert_eq!(stopped["event"], "interrupted", "{stopped}");
    let flying = &stopped["in_flight"];
    assert_eq!((&flying["op"], &flying["args"]), (&Value::from("tell"), &serde_json::json!(["push", "node-1"])));
    assert_eq!(flying["landing"], "still_running", "{stopped}");
    assert!(first.said.contains("under way when it stopped:"), "{}", first.said);
    assert!(first.said.contains("the control plane still runs it and finishes it"), "{}", first.said);

    // The second run waited while the lock was being released, then took it.
    let seen: Vec<String> =
        lock_events(&two.path().join("run.jsonl")).iter().map(|e| e["outcome"].as_str().unwrap().to_string()).collect();
    assert_eq!(seen, ["waiting", "taken", "released"]);
    let log = standin.read("fence.log");
    let (one_id, two_id) = (taken_id(&one.path().join("run.jsonl")), taken_id(&two.path().join("run.jsonl")));
    let landed = at(&log, &format!("applied push node-1 (worker) under {one_id}"));
    assert!(landed < at(&log, &format!("unlocked {one_id}")), "{log}");
    assert!(at(&log, &format!("unlocked {one_id}")) < at(&log, &format!("locked {two_id}")), "{log}");
}

#[test]
fn a_push_outlasting_the_runs_bound_leaves_the_lock_named_and_the_control_plane_lets_it_go_once_landed() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    // The push command answers at once; its worker lands it six seconds on.
    std::fs::write(standin.path().join("push-worker"), "6").unwrap();
    std::fs::write(standin.path().join("push-returns"), "").unwrap();
    let dir = catalogue();
    let out = run(&config, dir.path(), "run.jsonl", &["--wait", "2s"]).output();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{said}");
    let id = taken_id(&dir.path().join("run.jsonl"));
    let locks = lock_events(&dir.path().join("run.jsonl"));
    let outcomes: Vec<&str> = locks.iter().map(|e| e["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["taken", "releasing", "failed"], "{locks:?}");
    assert_eq!(locks[2]["remedy"], serde_json::json!({"action": "unlock", "id": id, "force": false}));
    assert!(said.contains("releasing lock"), "the wait is said on screen:\n{said}");
    assert!(said.contains(&format!("left: `{id}`: the control plane still ran `push node-1 (worker)")), "{said}");
    assert!(said.contains(&format!("mesh-adopt unlock {id}")), "{said}");
    // The module adopted; the run failed on the lock alone, and said so in its summary.
    assert!(said.contains("postgres     adopted"), "{said}");
    assert!(standin.path().join("lock.json").exists(), "the lock was let go before the push landed");
    // Once the push lands, the control plane lets the lock go, as the run asked.
    wait_for("the lock let go", || !standin.path().join("lock.json").exists());
    let log = standin.read("fence.log");
    assert!(at(&log, &format!("applied push node-1 (worker) under {id}")) < at(&log, &format!("unlocked {id}")));
}

#[test]
fn an_unlock_that_fails_or_hangs_at_a_runs_end_fails_the_run_naming_the_lock_and_the_command_that_breaks_it() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    let quick = standin.path().join("mesh-adopt-quick.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&quick, format!("lock_command_timeout_seconds = 1\n{text}")).unwrap();
    for fault in ["fail-unlock", "hang-unlock"] {
        let dir = catalogue();
        std::fs::write(standin.path().join(fault), "the control plane is restarting").unwrap();
        let out = run(&quick, dir.path(), "run.jsonl", &[]).output();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{fault}: {said}");
        let id = taken_id(&dir.path().join("run.jsonl"));
        let end = events(&dir.path().join("run.jsonl")).pop().unwrap();
        assert_eq!(
            (&end["code"], &end["remedy"]["action"], &end["remedy"]["id"]),
            (&"lock-left".into(), &"unlock".into(), &id.clone().into()),
            "{fault}: {end}"
        );
        let last = lock_events(&dir.path().join("run.jsonl")).pop().unwrap();
        assert_eq!((&last["outcome"], &last["remedy"]["id"]), (&Value::from("failed"), &Value::from(id.as_str())));
        assert!(said.contains(&format!("left: `{id}` was not released")), "{fault}: {said}");
        assert!(said.contains(&format!("break the lock with `mesh-adopt unlock {id}`")), "{fault}: {said}");
        // Both locks are left, and the next run is told so; the operator's unlock breaks them.
        assert!(standin.path().join("lock.json").exists(), "{fault}");
        std::fs::remove_file(standin.path().join(fault)).unwrap();
        let unlocked = crate::lock::unlock(&quick, dir.path(), &id, false);
        assert_eq!(unlocked.status.code(), Some(0), "{fault}: {}", String::from_utf8_lossy(&unlocked.stderr));
        assert_eq!(std::fs::read_dir(dir.path().join("state/mesh-adopt/locks")).unwrap().count(), 0, "{fault}");
    }
}

#[test]
fn an_interrupt_while_the_release_hangs_ends_the_run_naming_the_lock_left() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    std::fs::write(standin.path().join("hang-unlock"), "").unwrap();
    let dir = catalogue();
    let child = run(&config, dir.path(), "run.jsonl", &[]).spawn();
    wait_for("the run's release", || standin.read("argv.log").lines().any(|l| l.starts_with("unlock ")));
    let sent = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let started = Instant::now();
    let stopped = ended(child);
    assert_eq!(stopped.status, Some(130), "{}", stopped.said);
    assert!(started.elapsed() < Duration::from_secs(5), "it took {:?}", started.elapsed());
    let id = taken_id(&dir.path().join("run.jsonl"));
    let last = events(&dir.path().join("run.jsonl")).pop().unwrap();
    assert_eq!((&last["event"], &last["lock_left"]), (&Value::from("interrupted"), &Value::from(id.as_str())));
    assert!(stopped.said.contains(&format!("the run's lock `{id}` could not be released")), "{}", stopped.said);
    assert!(stopped.said.contains(&format!("mesh-adopt unlock {id}")), "{}", stopped.said);
}
