//! One run at a time on a mesh: the mesh's lock (the stand-in control plane's `lock` and
//! `unlock`) and this machine's, held by a run from before preflight to its end, through the
//! binary on the live stand-ins. The overlap is made by the stand-in's `slow-push`: the first
//! run holds the lock for as long as its push takes, whatever the machine's speed.

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::live::StandIn;
use crate::support::{Cli, TestMesh, mesh_adopt, root};

/// The stand-ins' configuration with the mesh's own lock: the control plane's `lock`,
/// `unlock` and `lock-holder` verbs.
pub(crate) fn locked_config(standin: &StandIn) -> PathBuf {
    let config = standin.config(None);
    let control = std::fs::read_to_string(&config).unwrap();
    let words = control.lines().find(|l| l.starts_with("control = ")).unwrap().trim_start_matches("control = ");
    let with = |verb: &str| format!("{}, {verb}]", words.trim_end_matches(']'));
    let text = format!(
        "lock = {}\nunlock = {}\nlock_holder = {}\nlock_fences = true\n{control}",
        with("\"lock\""),
        with("\"unlock\", \"{id}\""),
        with("\"lock-holder\"")
    );
    let path = standin.path().join("mesh-adopt-locked.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A catalogue of phase three with its foundation, in a directory of its own (its own
/// compile cache and state: this machine's locks are kept apart, so only the mesh's lock
/// stands between two runs in two such directories).
pub(crate) fn catalogue() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    TestMesh::new().write_catalogue(dir.path());
    std::fs::copy(root().join("catalogue/foundation.json"), dir.path().join("foundation.json")).unwrap();
    dir
}

/// `mesh-adopt run postgres --mesh live ARGS`, recorded to `catalogue/run-N.jsonl`.
pub(crate) fn run(config: &Path, catalogue: &Path, record: &str, args: &[&str]) -> Cli {
    mesh_adopt()
        .args(["run", "postgres", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git"])
        .args(args)
        .arg("--record")
        .arg(catalogue.join(record))
        .arg("--config")
        .arg(config)
        .catalogue(catalogue)
}

/// `mesh-adopt unlock ID [--force] --config CONFIG`, with the state directory of the runs made
/// in `catalogue` (this machine's locks are kept there).
pub(crate) fn unlock(config: &Path, catalogue: &Path, id: &str, force: bool) -> Output {
    mesh_adopt()
        .args(["unlock", id, "--config"])
        .arg(config)
        .args(force.then_some("--force"))
        .env("XDG_STATE_HOME", catalogue.join("state"))
        .output()
}

/// The events of a record.
pub(crate) fn events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// What a finished child said, and how it ended.
pub(crate) struct Ended {
    pub(crate) status: Option<i32>,
    pub(crate) said: String,
    pub(crate) pid: u32,
}

pub(crate) fn ended(child: Child) -> Ended {
    let pid = child.id();
    let Output { status, stdout, stderr } = child.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&stdout), String::from_utf8_lossy(&stderr));
    Ended { status: status.code(), said, pid }
}

/// Asserts `refused` was kept out by `holder`'s lock: exit 75 (try again later), nothing it did
/// reached the mesh (no call in its record), its `end` says `lock-held` and the holder's lock
/// to wait for, and its words name the holder's host, process and command.
fn assert_kept_out(refused: &Ended, record: &Path, holder: &Ended) {
    assert_eq!(refused.status, Some(75), "{}", refused.said);
    let events = events(record);
    assert_eq!(events.iter().filter(|e| e["event"] == "call").count(), 0, "no call: {events:?}");
    let held = events.iter().find(|e| e["event"] == "lock").expect("the record says who held the lock");
    assert_eq!(held["outcome"], "held", "{held}");
    // Which lock: this machine's lock file, or the mesh's own.
    assert!(held["scope"] == "machine" || held["scope"] == "mesh", "{held}");
    assert_eq!(held["holder"]["pid"].as_u64(), Some(u64::from(holder.pid)), "{held}");
    let end = events.last().unwrap();
    assert_eq!(end["event"], "end");
    assert_eq!((&end["exit"], &end["code"]), (&json!(75), &json!("lock-held")), "{end}");
    assert_eq!(end["remedy"], json!({"action": "wait-for-lock", "id": held["holder"]["id"]}), "{end}");
    let host = mesh_adopt_runtime::mesh::lock::this_host();
    for named in [format!("process {} on host `{host}`", holder.pid), "mesh-adopt run postgres --mesh live".into()] {
        assert!(refused.said.contains(&named), "expected {named:?} in:\n{}", refused.said);
    }
    assert!(refused.said.contains("the mesh is locked by another run"), "{}", refused.said);
}

#[test]
fn two_runs_started_together_one_adopts_and_the_other_changes_nothing_naming_the_holder() {
    // Two plain runs, then a run of a saved plan against a plain run, in both orders.
    for (first_plans, second_plans) in [(false, false), (true, false), (false, true)] {
        let standin = StandIn::new();
        let config = locked_config(&standin);
        std::fs::write(standin.path().join("slow-push"), "2").unwrap();
        let (one, two) = (catalogue(), catalogue());
        let args = |dir: &Path, plans: bool| -> Vec<String> {
            if !plans {
                return Vec::new();
            }
            let plan = dir.join("plan.json");
            let checked = mesh_adopt()
                .args(["check", "postgres", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git"])
                .arg("--out")
                .arg(&plan)
                .arg("--config")
                .arg(&config)
                .catalogue(dir)
                .output();
            assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stdout));
            vec!["--plan".into(), plan.display().to_string()]
        };
        let (args_one, args_two) = (args(one.path(), first_plans), args(two.path(), second_plans));
        let first =
            run(&config, one.path(), "run.jsonl", &args_one.iter().map(String::as_str).collect::<Vec<_>>()).spawn();
        let second =
            run(&config, two.path(), "run.jsonl", &args_two.iter().map(String::as_str).collect::<Vec<_>>()).spawn();
        let (first, second) = (ended(first), ended(second));
        let case = format!("first with a plan: {first_plans}, second with a plan: {second_plans}");
        let (winner, loser, lost_in) = match (first.status, second.status) {
            (Some(0), _) => (&first, &second, two.path()),
            (_, Some(0)) => (&second, &first, one.path()),
            _ => panic!("{case}: neither adopted:\n{}\n---\n{}", first.said, second.said),
        };
        assert_kept_out(loser, &lost_in.join("run.jsonl"), winner);
        // The winner pushed once, and released the lock at its end.
        let argv = standin.read("argv.log");
        assert_eq!(argv.lines().filter(|l| l.starts_with("push ")).count(), 1, "{case}: {argv}");
        assert!(!standin.path().join("lock.json").exists(), "{case}: the lock was released");
    }
}

#[test]
fn without_a_lock_command_each_run_says_so_and_this_machines_lock_keeps_a_second_run_out() {
    let standin = StandIn::new();
    let config = standin.config(None);
    std::fs::write(standin.path().join("slow-push"), "2").unwrap();
    // One catalogue, so one state directory: this machine's lock is the runs' to share.
    let dir = catalogue();
    let first = run(&config, dir.path(), "first.jsonl", &[]).spawn();
    let second = run(&config, dir.path(), "second.jsonl", &[]).spawn();
    let (first, second) = (ended(first), ended(second));
    let (winner, loser, record) = match (first.status, second.status) {
        (Some(0), _) => (&first, &second, "second.jsonl"),
        (_, Some(0)) => (&second, &first, "first.jsonl"),
        _ => panic!("neither adopted:\n{}\n---\n{}", first.said, second.said),
    };
    assert_kept_out(loser, &dir.path().join(record), winner);
    assert!(winner.said.contains("only this machine's lock keeps another run out"), "{}", winner.said);
    let winners = if record == "second.jsonl" { "first.jsonl" } else { "second.jsonl" };
    let taken = events(&dir.path().join(winners)).into_iter().find(|e| e["event"] == "lock").unwrap();
    assert_eq!((taken["outcome"].as_str(), taken["scope"].as_str()), (Some("taken"), Some("machine")), "{taken}");
    // Nothing of this machine's lock is left once the winner ended.
    let locks = dir.path().join("state/mesh-adopt/locks");
    assert_eq!(std::fs::read_dir(&locks).unwrap().count(), 0, "{locks:?}");
}

#[test]
fn a_run_killed_outright_leaves_its_lock_named_as_such_until_unlock_breaks_it() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    std::fs::write(standin.path().join("slow-push"), "30").unwrap();
    let dir = catalogue();
    let mut killed = run(&config, dir.path(), "killed.jsonl", &[]).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let started = Instant::now();
    while !standin.read("argv.log").contains("push ") {
        assert!(started.elapsed() < Duration::from_secs(60), "the push never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SIGKILL: nothing of the run's is left to release its lock.
    killed.kill().unwrap();
    killed.wait().unwrap();
    std::fs::remove_file(standin.path().join("slow-push")).unwrap();
    let refused = run(&config, dir.path(), "refused.jsonl", &[]).output();
    let said = format!("{}{}", String::from_utf8_lossy(&refused.stdout), String::from_utf8_lossy(&refused.stderr));
    assert_eq!(refused.status.code(), Some(1), "{said}");
    let held = events(&dir.path().join("refused.jsonl")).into_iter().find(|e| e["event"] == "lock").unwrap();
    assert_eq!(held["holder"]["pid"].as_u64(), Some(u64::from(killed.id())), "{held}");
    assert_eq!(held["process_gone"], true, "{held}");
    let id = held["holder"]["id"].as_str().unwrap().to_string();
    // Waiting would not free a lock whose process is gone: the remedy is to break it.
    let end = events(&dir.path().join("refused.jsonl")).pop().unwrap();
    assert_eq!(end["code"], "lock-abandoned", "{end}");
    assert_eq!(end["remedy"], json!({"action": "unlock", "id": id, "force": false}), "{end}");
    assert!(said.contains(&format!("process {} on host", killed.id())), "{said}");
    assert!(said.contains("its process is gone, and left the lock behind"), "{said}");
    assert!(said.contains(&format!("break the lock with `mesh-adopt unlock {id}`")), "{said}");
    // The operator breaks it, with the same state directory as the runs.
    let broken = unlock(&config, dir.path(), &id, false);
    let told = String::from_utf8_lossy(&broken.stdout);
    assert_eq!(broken.status.code(), Some(0), "{told}{}", String::from_utf8_lossy(&broken.stderr));
    assert!(told.contains(&format!("released lock `{id}`, held by process {}", killed.id())), "{told}");
    assert!(!standin.path().join("lock.json").exists());
    // Broken once; a second time there is nothing to break.
    let again = unlock(&config, dir.path(), &id, false);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains(&format!("no lock `{id}` is held")));
    let adopted = run(&config, dir.path(), "adopted.jsonl", &[]).output();
    assert_eq!(adopted.status.code(), Some(0), "{}", String::from_utf8_lossy(&adopted.stdout));
}

/// A holder on another machine, placed in the stand-in control plane's lock.
pub(crate) fn held_elsewhere(standin: &StandIn) -> Value {
    let holder = serde_json::json!({
        "id": "5ca1ab1e00000000", "host": "ops-2.mesh.local", "pid": 4242,
        "command": "mesh-adopt run --mesh live", "since": "2025-01-01T00:00:00Z", "node": "node-1"
    });
    std::fs::write(standin.path().join("lock.json"), format!("{holder}\n")).unwrap();
    holder
}

#[test]
fn check_takes_no_lock_and_says_who_holds_it() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    held_elsewhere(&standin);
    let dir = catalogue();
    let checked = mesh_adopt()
        .args(["check", "postgres", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git", "--config"])
        .arg(&config)
        .catalogue(dir.path())
        .output();
    let said = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(0), "{said}");
    assert!(
        said.contains("held by another run: process 4242 on host `ops-2.mesh.local` (`mesh-adopt run --mesh live`)"),
        "{said}"
    );
    let argv = standin.read("argv.log");
    assert!(argv.lines().any(|l| l == "lock-holder"), "{argv}");
    assert!(!argv.lines().any(|l| l.starts_with("lock ") || l == "lock" || l.starts_with("unlock")), "{argv}");
    // The lock is still the other machine's, and a run is kept out, nothing told.
    let refused = run(&config, dir.path(), "run.jsonl", &[]).output();
    assert_eq!(refused.status.code(), Some(75));
    assert!(!standin.read("argv.log").contains("module add"));
    // With `--json` the same exit, and the stream's last line says why as a code, and whose lock.
    let streamed = run(&config, dir.path(), "json.jsonl", &["--json"]).output();
    assert_eq!(streamed.status.code(), Some(75));
    let last: Value =
        serde_json::from_slice(streamed.stdout.trim_ascii_end().rsplit(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(
        last,
        json!({"event": "end", "exit": 75, "code": "lock-held",
               "remedy": {"action": "wait-for-lock", "id": "5ca1ab1e00000000"}})
    );
    // The mesh's own lock, fenced, as its `lock` command answered: which lock, by name.
    let held = events(&dir.path().join("json.jsonl")).into_iter().find(|e| e["event"] == "lock").unwrap();
    assert_eq!((&held["outcome"], &held["scope"]), (&json!("held"), &json!("mesh")), "{held}");
    // Another machine's run may still be running: unlock says so, and breaks it only with
    // `--force`, saying what becomes of that run.
    let asked = unlock(&config, dir.path(), "5ca1ab1e00000000", false);
    let said = String::from_utf8_lossy(&asked.stderr);
    assert_eq!(asked.status.code(), Some(1), "{said}");
    assert!(said.contains("on another machine, which this one cannot see: its run may still be running"), "{said}");
    assert!(said.contains("`mesh-adopt unlock 5ca1ab1e00000000 --force`"), "{said}");
    assert!(standin.path().join("lock.json").exists(), "the lock was broken without --force");
    let broken = unlock(&config, dir.path(), "5ca1ab1e00000000", true);
    assert_eq!(broken.status.code(), Some(0), "{}", String::from_utf8_lossy(&broken.stderr));
    assert!(!standin.path().join("lock.json").exists());
}

#[test]
fn a_run_given_a_lock_timeout_waits_for_the_lock_and_then_adopts() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    std::fs::write(standin.path().join("slow-push"), "2").unwrap();
    let (one, two) = (catalogue(), catalogue());
    let first = run(&config, one.path(), "run.jsonl", &[]).spawn();
    let started = Instant::now();
    while !standin.path().join("lock.json").exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "the first run never took the lock");
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = run(&config, two.path(), "run.jsonl", &["--lock-timeout", "2m"]).output();
    let first = ended(first);
    assert_eq!(first.status, Some(0), "{}", first.said);
    assert_eq!(second.status.code(), Some(0), "{}", String::from_utf8_lossy(&second.stdout));
    let outcomes: Vec<String> = events(&two.path().join("run.jsonl"))
        .into_iter()
        .filter(|e| e["event"] == "lock")
        .map(|e| e["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outcomes, ["waiting", "taken", "released"]);
    // Held by another machine's run that does not end: it waits its timeout, then is refused.
    held_elsewhere(&standin);
    let refused = run(&config, two.path(), "again.jsonl", &["--lock-timeout", "2s"]).output();
    let said = String::from_utf8_lossy(&refused.stdout);
    assert_eq!(refused.status.code(), Some(75), "{said}");
    assert!(said.contains("the mesh is locked by another run (waited 2s for it)"), "{said}");
}

#[tokio::test]
async fn a_run_the_sweep_kills_leaves_the_simulated_mesh_locked_until_the_lock_is_broken() {
    use mesh_adopt_runtime::events::OutcomeWord;
    use mesh_adopt_runtime::mesh::Mesh as _;
    use mesh_adopt_runtime::mesh::simulated::FaultEffect;
    let catalogue = crate::support::example_catalogue(&crate::support::plugin("adopt_postgres"));
    let file = mesh_adopt_testkit::read(&root().join("plugins/postgres/scenarios/adopts-in-place.toml")).unwrap();
    let documents = mesh_adopt_testkit::Documents::read(catalogue.path()).unwrap();
    let prepared = mesh_adopt_testkit::prepare(&documents, &file).unwrap();
    let host = crate::support::host();
    // Killed after its third call: nothing it asks afterwards reaches the mesh, its lock included.
    let killed = prepared.run(host, Some((2, FaultEffect::HostKilledAfter))).await;
    let (left, lock) = killed.mesh.lock_holder().await.unwrap().expect("the killed run's lock is left");
    assert_eq!(lock, mesh_adopt_runtime::mesh::lock::LockScope::Simulated);
    assert_eq!(left.pid, std::process::id());
    let calls = killed.mesh.calls().len();
    // Run again as it is, the next run is kept out, naming the lock, and makes no call.
    let kept_out = prepared.run_again(host, &killed).await;
    assert_eq!(mesh_adopt_testkit::outcome_of(&kept_out.report).0, Some(OutcomeWord::NotRun));
    assert!(matches!(&kept_out.report.held, Some(mesh_adopt_runtime::Held::Locked { holder }) if holder.id == left.id));
    assert_eq!(kept_out.mesh.calls().len(), calls, "the kept-out run made a call");
    // Broken, as an operator would, the run adopts and releases its own lock.
    let again = prepared.run_again_unlocked(host, &killed).await;
    assert_eq!(
        mesh_adopt_testkit::outcome_of(&again.report).0,
        Some(OutcomeWord::Adopted),
        "{:?}",
        again.report.modules
    );
    assert_eq!(again.mesh.lock_holder().await, Ok(None));
}

#[test]
fn an_interrupted_run_releases_both_locks_as_it_stops() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    std::fs::write(standin.path().join("hang-push"), "").unwrap();
    let dir = catalogue();
    let child = run(&config, dir.path(), "run.jsonl", &[]).spawn();
    let locks = dir.path().join("state/mesh-adopt/locks");
    let started = Instant::now();
    while !standin.read("argv.log").contains("push ") {
        assert!(started.elapsed() < Duration::from_secs(60), "the push never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(standin.path().join("lock.json").exists(), "the mesh's lock is held during the push");
    assert_eq!(std::fs::read_dir(&locks).unwrap().count(), 1, "and this machine's");
    let sent = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let stopped = ended(child);
    assert_eq!(stopped.status, Some(130), "{}", stopped.said);
    assert!(!standin.path().join("lock.json").exists(), "the mesh's lock was released");
    assert_eq!(std::fs::read_dir(&locks).unwrap().count(), 0, "this machine's lock was released");
    assert_eq!(events(&dir.path().join("run.jsonl")).last().unwrap()["event"], "interrupted");
}

/// An embedder's mesh that implements none of the lock: the simulator's calls, the trait's
/// defaults for the rest.
struct Unlockable(std::sync::Arc<mesh_adopt_runtime::mesh::simulated::SimulatedMesh>);

#[async_trait::async_trait]
impl mesh_adopt_runtime::mesh::Mesh for Unlockable {
    fn summary(&self) -> String {
        "an embedder's mesh".into()
    }
    async fn carry(
        &self,
        name: &str,
        payload: mesh_adopt_runtime::mesh::Payload,
        remote: &str,
    ) -> Result<(), mesh_adopt_runtime::mesh::MeshError> {
        self.0.carry(name, payload, remote).await
    }
    async fn tell(
        &self,
        command: &mesh_adopt_runtime::mesh::Command,
        timeout: Duration,
    ) -> Result<String, mesh_adopt_runtime::mesh::MeshError> {
        self.0.tell(command, timeout).await
    }
    async fn inspect(
        &self,
        node: &str,
        container: &str,
    ) -> Result<Option<mesh_adopt_runtime::mesh::ContainerState>, mesh_adopt_runtime::mesh::MeshError> {
        self.0.inspect(node, container).await
    }
    async fn fetch(
        &self,
        url: &str,
    ) -> Result<mesh_adopt_runtime::mesh::Response, mesh_adopt_runtime::mesh::MeshError> {
        self.0.fetch(url).await
    }
    fn now(&self) -> Duration {
        self.0.now()
    }
    async fn sleep(&self, duration: Duration) {
        self.0.sleep(duration).await
    }
}

#[tokio::test]
async fn a_mesh_with_no_lock_says_nothing_keeps_another_run_out_and_is_asked_nothing_at_the_end() {
    use mesh_adopt_runtime::events::{Event, LockOutcome};
    use mesh_adopt_runtime::mesh::lock::LockScope;
    let dir = catalogue();
    let catalogue = mesh_adopt_runtime::Catalogue::at(dir.path());
    let foundation = mesh_adopt_runtime::Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let simulated = std::sync::Arc::new(mesh_adopt_runtime::mesh::simulated::SimulatedMesh::new(
        mesh_adopt_runtime::mesh::simulated::SimSetup::new(foundation.clone(), "node-1"),
    ));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Event>::new()));
    let into = seen.clone();
    let run = mesh_adopt_runtime::Run::builder(
        crate::support::host(),
        &catalogue,
        &foundation,
        std::sync::Arc::new(Unlockable(simulated)),
    )
    .credentials(std::sync::Arc::new(mesh_adopt_runtime::Credentials::open(&dir.path().join("genesis/credentials"))))
    .options(TestMesh::new().options)
    .events(std::sync::Arc::new(move |event: &Event| into.lock().unwrap().push(event.clone())))
    .build();
    let report = run.run(&["postgres".to_string()], mesh_adopt_runtime::Mode::Adopt).await;
    assert!(report.succeeded(), "{:?}", report.modules);
    let locks: Vec<_> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Lock(lock) => Some((lock.outcome, lock.scope)),
            _ => None,
        })
        .collect();
    assert_eq!(locks, [(LockOutcome::Taken, Some(LockScope::None))]);
}

#[test]
fn a_replay_takes_and_releases_the_recordings_lock_without_a_warning() {
    let dir = catalogue();
    let record = dir.path().join("run.jsonl");
    let ran = mesh_adopt()
        .args(["run", "postgres", "--catalog-source", "https://git.mesh.test/c.git", "--record"])
        .arg(&record)
        .catalogue(dir.path())
        .output();
    assert_eq!(ran.status.code(), Some(0), "{}", String::from_utf8_lossy(&ran.stdout));
    let replayed = mesh_adopt().arg("replay").arg(&record).arg("--json").catalogue(dir.path()).output();
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    assert_eq!(replayed.status.code(), Some(0), "{stdout}");
    let outcomes: Vec<String> = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "lock")
        .map(|e| e["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outcomes, ["taken", "released"], "{stdout}");
}

/// A holder on this machine whose process is `pid`, taken at `since`, under `id`.
pub(crate) fn held_here_by(pid: u32, since: &str, id: &str) -> Value {
    serde_json::json!({
        "id": id, "host": mesh_adopt_runtime::mesh::lock::this_host(), "pid": pid,
        "command": "mesh-adopt run postgres --mesh live", "since": since, "node": "node-1"
    })
}

#[test]
fn unlock_breaks_a_lock_whose_process_id_now_names_a_process_started_after_it_was_taken() {
    let standin = StandIn::new();
    let dir = catalogue();
    // The id the holder had, given again after the machine lost power and came back: a live
    // process of another program, started long after the lock was taken.
    let mut other = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let unlock = |config: &Path, id: &str| unlock(config, dir.path(), id, false);
    let long_ago = "2020-01-01T00:00:00Z";
    // Taken now, by a process that started before: that run still runs, and its lock is kept.
    let now = mesh_adopt_runtime::mesh::lock::LockHolder::this_process("mesh-adopt run", "node-1").since;
    // The mesh's own lock, kept by the control plane.
    let mesh_locked = locked_config(&standin);
    let lock_json = standin.path().join("lock.json");
    std::fs::write(&lock_json, format!("{}\n", held_here_by(other.id(), &now, "5ca1ab1e00000001"))).unwrap();
    let kept = unlock(&mesh_locked, "5ca1ab1e00000001");
    let said = String::from_utf8_lossy(&kept.stderr);
    assert_eq!(kept.status.code(), Some(1), "{said}");
    assert!(said.contains("which still runs on this machine"), "{said}");
    assert!(lock_json.exists(), "the lock of a run that still runs was broken");
    std::fs::write(&lock_json, format!("{}\n", held_here_by(other.id(), long_ago, "5ca1ab1e00000002"))).unwrap();
    let broken = unlock(&mesh_locked, "5ca1ab1e00000002");
    let told = String::from_utf8_lossy(&broken.stdout);
    assert_eq!(broken.status.code(), Some(0), "{told}{}", String::from_utf8_lossy(&broken.stderr));
    assert!(told.contains(&format!("released lock `5ca1ab1e00000002`, held by process {}", other.id())), "{told}");
    assert!(told.contains("its process is gone"), "{told}");
    assert!(!lock_json.exists());
    // This machine's lock, the same.
    let machine_locked = standin.config(None);
    let locks = dir.path().join("state/mesh-adopt/locks");
    std::fs::create_dir_all(&locks).unwrap();
    let lock_file = locks.join("left.lock");
    std::fs::write(&lock_file, format!("{}\n", held_here_by(other.id(), &now, "5ca1ab1e00000003"))).unwrap();
    assert_eq!(unlock(&machine_locked, "5ca1ab1e00000003").status.code(), Some(1));
    assert!(lock_file.exists());
    std::fs::write(&lock_file, format!("{}\n", held_here_by(other.id(), long_ago, "5ca1ab1e00000004"))).unwrap();
    let broken = unlock(&machine_locked, "5ca1ab1e00000004");
    assert_eq!(broken.status.code(), Some(0), "{}", String::from_utf8_lossy(&broken.stderr));
    assert!(!lock_file.exists());
    // Only the lock was broken: the other program runs on.
    assert_eq!(other.try_wait().unwrap(), None);
    other.kill().unwrap();
    other.wait().unwrap();
}

#[test]
fn a_lock_command_answering_a_holder_whose_id_is_no_lock_id_is_refused_as_malformed() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    let mut holder = held_elsewhere(&standin);
    holder["id"] = "../../etc".into();
    std::fs::write(standin.path().join("lock.json"), format!("{holder}\n")).unwrap();
    let dir = catalogue();
    let refused = run(&config, dir.path(), "run.jsonl", &[]).output();
    let said = format!("{}{}", String::from_utf8_lossy(&refused.stdout), String::from_utf8_lossy(&refused.stderr));
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(said.contains("its id `../../etc` is not a lock id"), "{said}");
    assert!(!standin.read("argv.log").contains("module add"), "{}", standin.read("argv.log"));
}

/// On a current-thread runtime and the simulator, whose clock is virtual, a run kept out by
/// another's lock with a 5 s `lock_timeout` waits 5 s of the operator's time, then is kept out.
#[test]
fn a_lock_timeout_waits_in_real_time_on_the_simulator() {
    use mesh_adopt_runtime::mesh::Mesh as _;
    use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
    use mesh_adopt_runtime::{Catalogue, Credentials, Foundation, Mode, Run};
    let dir = crate::support::example_catalogue(&crate::support::plugin("adopt_postgres"));
    let foundation = Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let catalogue = Catalogue::at(dir.path());
    let mesh = std::sync::Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), "node-1")));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let other = mesh_adopt_runtime::mesh::lock::LockHolder::this_process("mesh-adopt run", "node-1");
        assert!(matches!(mesh.lock(&other).await, Ok(mesh_adopt_runtime::mesh::lock::Locking::Taken { .. })));
        let run = Run::builder(crate::support::host(), &catalogue, &foundation, mesh.clone())
            .credentials(std::sync::Arc::new(Credentials::open(&dir.path().join("genesis/credentials"))))
            .options(crate::support::TestMesh::new().options)
            .lock_timeout(Duration::from_secs(5))
            .build();
        let began = Instant::now();
        let report = run.run(&["postgres".to_string()], Mode::Adopt).await;
        let waited = began.elapsed();
        assert!(matches!(&report.held, Some(mesh_adopt_runtime::Held::Locked { holder }) if holder.id == other.id));
        assert_eq!(report.exit_code(), 75);
        assert!(waited >= Duration::from_millis(4_900) && waited < Duration::from_secs(9), "waited {waited:?}");
    });
}
