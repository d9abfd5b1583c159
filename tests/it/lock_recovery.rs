//! Locks that recover and carry no secret, through the binary on the live stand-ins and on
//! the simulator: a damaged lock file of this machine's is named as such, never read through a
//! link, and cleared by `unlock --damaged`; `check` says when who holds the lock cannot be
//! read; the state directory is the one the XDG rule gives; a waiter stops once its holder is
//! known gone; a holder on another machine of the same name is not judged from here; a
//! credential's value in any option is refused before any lock is taken.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::live::StandIn;
use crate::lock::{catalogue, ended, events, held_here_by, locked_config, run, unlock};
use crate::support::{SUPERUSER, mesh_adopt};

/// This machine's lock file for the stand-ins reached by `config` from `dir`'s catalogue: a run
/// is left holding it (killed outright while its first carry hangs), and the file is named.
fn machine_lock_file(standin: &StandIn, config: &Path, dir: &Path) -> PathBuf {
    let hang = standin.path().join("hang-carry");
    std::fs::write(&hang, "").unwrap();
    let mut child = run(config, dir, "held.jsonl", &[]).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let locks = dir.join("state/mesh-adopt/locks");
    let started = Instant::now();
    let file = loop {
        let found = std::fs::read_dir(&locks).ok().and_then(|mut d| d.next()).map(|e| e.unwrap().path());
        if let Some(file) = found.filter(|f| f.extension().is_some_and(|e| e == "lock")) {
            break file;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the run placed no lock file");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(hang).unwrap();
    std::fs::remove_file(&file).unwrap();
    file
}

#[test]
fn a_damaged_machine_lock_is_named_as_such_never_read_through_a_link_and_cleared_by_unlock_damaged() {
    let standin = StandIn::new();
    let config = standin.config(None);
    let dir = catalogue();
    let file = machine_lock_file(&standin, &config, dir.path());
    let marker = dir.path().join("marker");
    std::fs::write(&marker, "MARKER-5e1f0a: root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let line = held_here_by(4242, "2025-01-01T00:00:00Z", "5ca1ab1e00000000").to_string();
    type Damage<'a> = Box<dyn Fn(&Path) + 'a>;
    let damages: [(&str, Damage); 7] = [
        ("it is empty", Box::new(|f| std::fs::write(f, "").unwrap())),
        ("it was cut short (20 bytes, no line end)", Box::new(move |f| std::fs::write(f, &line[..20]).unwrap())),
        ("its 11 bytes name no lock holder", Box::new(|f| std::fs::write(f, "not a lock\n").unwrap())),
        ("it is a symbolic link", Box::new(|f| std::os::unix::fs::symlink(&marker, f).unwrap())),
        ("it is a symbolic link", Box::new(|f| std::os::unix::fs::symlink("/nowhere/at/all", f).unwrap())),
        ("it is a directory", Box::new(|f| std::fs::create_dir(f).unwrap())),
        (
            "it is a FIFO",
            Box::new(|f| assert!(std::process::Command::new("mkfifo").arg(f).status().unwrap().success())),
        ),
    ];
    for (damage, make) in damages {
        make(&file);
        let refused = run(&config, dir.path(), "refused.jsonl", &[]).output();
        let said = format!("{}{}", String::from_utf8_lossy(&refused.stdout), String::from_utf8_lossy(&refused.stderr));
        assert_eq!(refused.status.code(), Some(1), "{damage}: {said}");
        let named = format!("this machine's lock `{}` is damaged: {damage}", file.display());
        assert!(said.contains(&named), "{damage}: expected {named:?} in:\n{said}");
        let clear = format!("mesh-adopt unlock --damaged {}", file.display());
        assert!(said.contains(&clear), "{damage}: {said}");
        let recorded = std::fs::read_to_string(dir.path().join("refused.jsonl")).unwrap();
        assert!(!said.contains("MARKER") && !recorded.contains("MARKER"), "{damage}: read through the link:\n{said}");
        let lock = events(&dir.path().join("refused.jsonl")).into_iter().find(|e| e["event"] == "lock").unwrap();
        assert_eq!((&lock["outcome"], &lock["holder"]), (&Value::from("unreadable"), &Value::Null), "{lock}");
        assert_eq!(lock["remedy"]["action"], "clear-damaged-lock", "{lock}");
        assert!(!standin.read("argv.log").contains("carry"), "{damage}: the refused run reached the mesh");
        // The refused run's own id breaks nothing; the documented form clears the file.
        let cleared = mesh_adopt()
            .args(["unlock", "--damaged"])
            .arg(&file)
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .output();
        let told = String::from_utf8_lossy(&cleared.stdout);
        assert_eq!(cleared.status.code(), Some(0), "{damage}: {told}{}", String::from_utf8_lossy(&cleared.stderr));
        assert!(told.contains(&format!("cleared this machine's damaged lock `{}`", file.display())), "{told}");
        assert!(!told.contains("MARKER"), "{told}");
        assert!(file.symlink_metadata().is_err(), "{damage}: not cleared");
    }
    assert!(marker.exists(), "clearing the link removed what it pointed at");
    let adopted = run(&config, dir.path(), "adopted.jsonl", &[]).output();
    assert_eq!(adopted.status.code(), Some(0), "{}", String::from_utf8_lossy(&adopted.stdout));
}

#[test]
fn check_says_when_who_holds_the_lock_cannot_be_read_and_why() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    let quick = standin.path().join("mesh-adopt-quick.toml");
    std::fs::write(&quick, format!("lock_command_timeout_seconds = 1\n{}", std::fs::read_to_string(&config).unwrap()))
        .unwrap();
    let dir = catalogue();
    let check = || {
        let out = mesh_adopt()
            .args(["check", "postgres", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git"])
            .arg("--config")
            .arg(&quick)
            .catalogue(dir.path())
            .output();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let faults: [(&str, &str, &str); 3] = [
        (
            "fail-lock-holder",
            "the control plane is restarting",
            "exited with status 3: the control plane is restarting",
        ),
        ("hang-lock-holder", "", "gave no answer within 1s"),
        ("lock.json", "garbage\n", "said another holds the lock, but `garbage` is not a lock holder"),
    ];
    for (file, text, why) in faults {
        std::fs::write(standin.path().join(file), text).unwrap();
        let (status, said) = check();
        assert_eq!(status, Some(0), "{file}: {said}");
        assert!(said.contains("error: who holds the lock could not be read"), "{file}: {said}");
        assert!(said.contains(why), "{file}: expected {why:?} in:\n{said}");
        std::fs::remove_file(standin.path().join(file)).unwrap();
    }
    let (status, said) = check();
    assert_eq!(status, Some(0), "{said}");
    assert!(!said.contains("could not be read"), "{said}");
}

#[test]
fn a_relative_xdg_state_home_is_not_used_for_the_locks_or_the_plan_key() {
    let standin = StandIn::new();
    let config = standin.config(None);
    std::fs::write(standin.path().join("slow-push"), "2").unwrap();
    let dir = catalogue();
    let home = dir.path().join("home");
    let relative = |command: crate::support::Cli| {
        command.env("XDG_STATE_HOME", "state-here").env("HOME", &home).current_dir(dir.path())
    };
    let child = relative(run(&config, dir.path(), "run.jsonl", &[])).spawn();
    let locks = home.join(".local/state/mesh-adopt/locks");
    let started = Instant::now();
    while std::fs::read_dir(&locks).map_or(true, |mut d| d.next().is_none()) {
        assert!(started.elapsed() < Duration::from_secs(60), "no lock under HOME's state directory");
        std::thread::sleep(Duration::from_millis(20));
    }
    let ran = ended(child);
    assert_eq!(ran.status, Some(0), "{}", ran.said);
    let checked = relative(
        mesh_adopt()
            .args(["check", "postgres", "--catalog-source", "https://git.mesh.test/c.git", "--out"])
            .arg(dir.path().join("plan.json"))
            .catalogue(dir.path()),
    )
    .output();
    assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stderr));
    assert!(home.join(".local/state/mesh-adopt").read_dir().unwrap().count() >= 2, "the plan key is under HOME too");
    assert!(!dir.path().join("state-here").exists(), "the relative XDG_STATE_HOME was used");
}

#[test]
fn a_waiter_stops_as_soon_as_its_holder_is_known_gone_and_says_so() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    std::fs::write(standin.path().join("slow-push"), "30").unwrap();
    let (one, two) = (catalogue(), catalogue());
    let mut holder = run(&config, one.path(), "run.jsonl", &[]).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let started = Instant::now();
    while !standin.read("argv.log").contains("push ") {
        assert!(started.elapsed() < Duration::from_secs(60), "the push never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Waiting already when the holder is killed outright: it stops within moments, not at 25s.
    let waiter = run(&config, two.path(), "run.jsonl", &["--lock-timeout", "25s"]).spawn();
    std::thread::sleep(Duration::from_secs(2));
    holder.kill().unwrap();
    holder.wait().unwrap();
    let killed = Instant::now();
    let waited = ended(waiter);
    assert!(killed.elapsed() < Duration::from_secs(6), "it waited on for {:?}", killed.elapsed());
    assert_eq!(waited.status, Some(1), "{}", waited.said);
    assert!(waited.said.contains("its holder's process is gone, so waiting would not free it"), "{}", waited.said);
    assert!(waited.said.contains("break the lock with `mesh-adopt unlock"), "{}", waited.said);
    let outcomes: Vec<String> = events(&two.path().join("run.jsonl"))
        .iter()
        .filter(|e| e["event"] == "lock")
        .map(|e| e["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outcomes, ["waiting", "held"]);
    // Asked afresh, a waiter does not begin waiting for a holder known gone.
    let again = Instant::now();
    let refused = run(&config, two.path(), "again.jsonl", &["--lock-timeout", "25s"]).output();
    assert_eq!(refused.status.code(), Some(1));
    assert!(again.elapsed() < Duration::from_secs(10), "it waited {:?}", again.elapsed());
}

#[test]
fn a_lock_directory_that_cannot_be_made_is_an_error_and_no_warning() {
    let standin = StandIn::new();
    let config = standin.config(None);
    let dir = catalogue();
    std::fs::create_dir_all(dir.path().join("state/mesh-adopt")).unwrap();
    std::fs::write(dir.path().join("state/mesh-adopt/locks"), "").unwrap();
    let out = run(&config, dir.path(), "run.jsonl", &[]).output();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("error: the mesh's lock could not be taken"), "{said}");
    assert!(said.contains("this machine's lock directory"), "{said}");
    assert!(!said.contains("warning"), "{said}");
    assert!(!standin.read("argv.log").contains("carry"), "{said}");
}

#[test]
fn a_holder_on_another_machine_of_this_hosts_name_is_not_judged_from_here() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    // This host's name and a process that runs here, but another machine's id.
    let mut holder = held_here_by(std::process::id(), "2020-01-01T00:00:00Z", "5ca1ab1e00000009");
    holder["machine"] = "0123456789abcdef0123456789abcdef".into();
    std::fs::write(standin.path().join("lock.json"), format!("{holder}\n")).unwrap();
    let dir = catalogue();
    let unlock = |force: bool| unlock(&config, dir.path(), "5ca1ab1e00000009", force);
    let asked = unlock(false);
    let said = String::from_utf8_lossy(&asked.stderr);
    assert_eq!(asked.status.code(), Some(1), "{said}");
    assert!(said.contains("on another machine"), "{said}");
    assert!(said.contains("that run is then fenced"), "{said}");
    assert_eq!(unlock(true).status.code(), Some(0));
}

#[test]
fn a_preflight_hold_says_every_outcome_before_the_lock_goes_and_a_simulated_lock_is_named_simulated() {
    let dir = catalogue();
    let path = dir.path().join("foundation.json");
    let mut foundation: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for resource in foundation["resources"].as_array_mut().unwrap() {
        if resource["name"] == "mesh-store" {
            resource["image"] = "postgres:9.6".into();
        }
    }
    std::fs::write(&path, foundation.to_string()).unwrap();
    let out = mesh_adopt()
        .args(["run", "postgres", "--json", "--catalog-source", "https://git.mesh.test/c.git"])
        .catalogue(dir.path())
        .output();
    let stream: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(out.status.code(), Some(1), "{stream:?}");
    let kinds: Vec<String> = stream
        .iter()
        .filter(|e| ["lock", "outcome", "summary"].contains(&e["event"].as_str().unwrap()))
        .map(|e| format!("{}:{}", e["event"].as_str().unwrap(), e["outcome"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(kinds, ["lock:taken", "outcome:refused", "lock:released", "summary:"], "{stream:?}");
    assert_eq!(stream.iter().find(|e| e["event"] == "lock").unwrap()["scope"], "simulated");
}

#[test]
fn a_credentials_value_in_any_option_is_refused_before_any_lock_is_taken_or_command_run() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    let dir = catalogue();
    let at = |name: &str| dir.path().join(format!("{SUPERUSER}{name}")).display().to_string();
    let cases: [(&str, &str, String); 5] = [
        ("run", "--record", at(".rec")),
        ("check", "--out", at(".json")),
        ("run", "--plan", at(".json")),
        ("run", "--cache", at("-cache")),
        ("run", "--config", at(".toml")),
    ];
    for (command, option, value) in &cases {
        let mut cli = mesh_adopt()
            .args([*command, "postgres", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git"])
            .args([*option, value.as_str()]);
        if *option != "--config" {
            cli = cli.arg("--config").arg(&config);
        }
        let out = cli.catalogue(dir.path()).output();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{option}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("{option} holds the value of the genesis credential `store-superuser`")),
            "{option}: {stderr}"
        );
        assert!(!stdout.contains(SUPERUSER) && !stderr.contains(SUPERUSER), "{option}: the value was shown");
        assert!(!dir.path().join("state/mesh-adopt/locks").exists(), "{option}: a lock was placed");
        assert!(!standin.path().join("argv.log").exists(), "{option}: a command was run: {}", standin.read("argv.log"));
    }
    // Another run holds the lock, and a check shows its holder: no value anywhere.
    std::fs::write(standin.path().join("slow-push"), "3").unwrap();
    let holding = run(&config, dir.path(), "run.jsonl", &[]).spawn();
    let started = Instant::now();
    while !standin.read("argv.log").contains("push ") {
        assert!(started.elapsed() < Duration::from_secs(60), "the push never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let other = catalogue();
    let checked = mesh_adopt()
        .args(["check", "postgres", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git", "--config"])
        .arg(&config)
        .catalogue(other.path())
        .output();
    let shown = String::from_utf8_lossy(&checked.stdout);
    assert!(shown.contains("held by another run"), "{shown}");
    let held = ended(holding);
    assert_eq!(held.status, Some(0), "{}", held.said);
    let mut seen = vec![shown.into_owned(), held.said];
    for log in ["argv.log", "env.log", "fence.log"] {
        seen.push(standin.read(log));
    }
    for text in seen {
        assert!(!text.contains(SUPERUSER), "a credential's value was shown or kept:\n{text}");
    }
}

/// An embedder's mesh that keeps the holder each `lock` is handed: the simulator's calls, the
/// trait's defaults for the rest.
struct KeepsHolder(std::sync::Arc<mesh_adopt_runtime::mesh::simulated::SimulatedMesh>);

#[async_trait::async_trait]
impl mesh_adopt_runtime::mesh::Mesh for KeepsHolder {
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
    async fn lock(
        &self,
        holder: &mesh_adopt_runtime::mesh::lock::LockHolder,
    ) -> Result<mesh_adopt_runtime::mesh::lock::Locking, mesh_adopt_runtime::mesh::MeshError> {
        self.0.lock(holder).await
    }
    async fn lock_holder(
        &self,
    ) -> Result<
        Option<(mesh_adopt_runtime::mesh::lock::LockHolder, mesh_adopt_runtime::mesh::lock::LockScope)>,
        mesh_adopt_runtime::mesh::MeshError,
    > {
        self.0.lock_holder().await
    }
}

#[tokio::test]
async fn the_holders_command_line_reaches_the_mesh_with_every_credentials_value_taken_out() {
    let dir = catalogue();
    let catalogue = mesh_adopt_runtime::Catalogue::at(dir.path());
    let foundation = mesh_adopt_runtime::Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let simulated = std::sync::Arc::new(mesh_adopt_runtime::mesh::simulated::SimulatedMesh::new(
        mesh_adopt_runtime::mesh::simulated::SimSetup::new(foundation.clone(), "node-1"),
    ));
    let run = mesh_adopt_runtime::Run::builder(
        crate::support::host(),
        &catalogue,
        &foundation,
        std::sync::Arc::new(KeepsHolder(simulated.clone())),
    )
    .credentials(std::sync::Arc::new(mesh_adopt_runtime::Credentials::open(&dir.path().join("genesis/credentials"))))
    .options(crate::support::TestMesh::new().options)
    .lock_holder(format!("installer --token {SUPERUSER} --record /runs/{SUPERUSER}.rec"))
    .build();
    // Nothing releases the lock this mesh was handed: the holder stays for the test to read.
    let report = run.run(&["postgres".to_string()], mesh_adopt_runtime::Mode::Adopt).await;
    assert!(report.succeeded(), "{:?}", report.modules);
    use mesh_adopt_runtime::mesh::Mesh as _;
    let (held, _) = simulated.lock_holder().await.unwrap().expect("the lock the run took is held");
    assert!(!held.command.contains(SUPERUSER), "{}", held.command);
    assert_eq!(held.command, "installer --token <secret store-superuser> --record /runs/<secret store-superuser>.rec");
}

/// Interrupted while the mesh's `lock` command has taken the lock and not yet answered: the
/// run lets it go under its id as it stops, so nothing is left and the next run adopts; when
/// that release fails too, the `interrupted` event names the lock left.
#[test]
fn an_interrupt_after_the_mesh_took_the_lock_and_before_it_answered_leaves_no_lock_unnamed() {
    for fails in [false, true] {
        let standin = StandIn::new();
        let config = locked_config(&standin);
        std::fs::write(standin.path().join("slow-after-lock"), "20").unwrap();
        if fails {
            std::fs::write(standin.path().join("fail-unlock"), "the control plane is restarting").unwrap();
        }
        let dir = catalogue();
        let child = run(&config, dir.path(), "run.jsonl", &[]).spawn();
        let started = Instant::now();
        while !standin.read("fence.log").contains("locked ") {
            assert!(started.elapsed() < Duration::from_secs(60), "the lock was never taken");
            std::thread::sleep(Duration::from_millis(20));
        }
        let pid = child.id().to_string();
        assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
        let stopped = ended(child);
        assert_eq!(stopped.status, Some(130), "{}", stopped.said);
        let last = events(&dir.path().join("run.jsonl")).pop().unwrap();
        assert_eq!(last["event"], "interrupted", "{last}");
        let id = standin.read("fence.log").lines().find_map(|l| l.strip_prefix("locked ")).unwrap().to_string();
        if fails {
            assert_eq!(last["lock_left"], id.as_str(), "{last}");
            assert!(standin.path().join("lock.json").exists());
        } else {
            assert_eq!(last["lock_left"], Value::Null, "{last}");
            assert!(!standin.path().join("lock.json").exists(), "the lock taken was left");
            std::fs::remove_file(standin.path().join("slow-after-lock")).unwrap();
            let next = run(&config, dir.path(), "next.jsonl", &[]).output();
            assert_eq!(next.status.code(), Some(0), "{}", String::from_utf8_lossy(&next.stdout));
        }
    }
}

/// A `lock` command that took the lock and then gave no answer within its bound: the run
/// fails without changing anything, and lets the lock go, so the next run is not kept out.
#[test]
fn a_lock_command_that_took_the_lock_and_timed_out_leaves_no_lock() {
    let standin = StandIn::new();
    let config = locked_config(&standin);
    let quick = standin.path().join("mesh-adopt-quick.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&quick, format!("lock_command_timeout_seconds = 1\n{text}")).unwrap();
    std::fs::write(standin.path().join("slow-after-lock"), "5").unwrap();
    let dir = catalogue();
    let out = run(&quick, dir.path(), "run.jsonl", &[]).output();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("the mesh's lock could not be taken: timed out"), "{said}");
    assert!(standin.read("fence.log").contains("unlocked "), "{}", standin.read("fence.log"));
    assert!(!standin.path().join("lock.json").exists(), "the lock the timed-out command took was left");
    let end = events(&dir.path().join("run.jsonl")).pop().unwrap();
    assert_eq!((&end["code"], &end["remedy"]["action"]), (&"lock-failed".into(), &"retry-later".into()), "{end}");
}
