//! The live mesh: the control plane and the container engine are stand-in executables
//! (`tests/live/`) run as real processes through the same configuration file an operator
//! writes, and the bus is a real NATS server whose `/healthz` the nats plugin waits on.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mesh_adopt_live::{LiveConfig, LiveMesh};
use mesh_adopt_runtime::PHASE_THREE;
use mesh_adopt_runtime::mesh::{Mesh, MeshError};

use serde_json::json;

use crate::support::{Cli, SUPERUSER, TestMesh, mesh_adopt, root};

const MODULE_IMAGE: &str = "registry.mesh.local/nats-snapshot:2.10.22-mesh.3";

/// A port nothing listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A NATS server with JetStream and its monitor, on free loopback ports, stopped on drop.
pub(crate) struct Nats {
    child: Child,
    monitor: u16,
    _store: tempfile::TempDir,
}

impl Nats {
    fn start() -> Nats {
        let store = tempfile::tempdir().unwrap();
        let (port, monitor) = (free_port(), free_port());
        let child = Command::new("nats-server")
            .args(["-js", "-sd"])
            .arg(store.path())
            .args(["-a", "127.0.0.1", "-p", &port.to_string(), "-m", &monitor.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server is installed (Debian's nats-server package; .ci/run installs it)");
        let nats = Nats { child, monitor, _store: store };
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if accepts_connections(&format!("http://127.0.0.1:{monitor}/healthz")) {
                return nats;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("nats-server did not answer on its monitor port {monitor}");
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether the monitor accepts connections yet.
fn accepts_connections(url: &str) -> bool {
    let address = url.trim_start_matches("http://").split('/').next().unwrap().parse().unwrap();
    std::net::TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok()
}

/// The stand-ins' state directory, seeded with the foundation's running containers.
pub(crate) struct StandIn {
    state: tempfile::TempDir,
}

impl StandIn {
    pub(crate) fn new() -> StandIn {
        let state = tempfile::tempdir().unwrap();
        // The containers genesis raised, as the foundation bundle has them and as genesis
        // raises them (each labelled with its spec digest): the store and the bus.
        let bundle: serde_json::Value =
            serde_json::from_slice(&std::fs::read(root().join("catalogue/foundation.json")).unwrap()).unwrap();
        let raised: Vec<&serde_json::Value> = bundle["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["name"] == "mesh-store" || r["name"] == "mesh-bus")
            .collect();
        let raised_path = state.path().join("raised.json");
        std::fs::write(&raised_path, serde_json::json!({ "resources": raised }).to_string()).unwrap();
        let genesis = std::process::Command::new(root().join("tests/live/control-plane"))
            .args(["genesis", raised_path.to_str().unwrap()])
            .env("STANDIN_STATE", state.path())
            .output()
            .unwrap();
        assert!(genesis.status.success(), "{}", String::from_utf8_lossy(&genesis.stderr));
        // Nothing was told yet: what genesis did is not a command of the run's.
        std::fs::remove_file(state.path().join("argv.log")).unwrap();
        std::fs::remove_file(state.path().join("env.log")).unwrap();
        StandIn { state }
    }

    /// Leaves `container` as an engine answering in the word forms shows it, with no spec
    /// recorded: its image and, unless `with_mounts` is false, its mounts.
    pub(crate) fn unlabelled(&self, container: &str, with_mounts: bool) {
        std::fs::remove_file(self.path().join("specs").join(container)).unwrap();
        if !with_mounts {
            std::fs::remove_file(self.path().join("volumes").join(container)).unwrap();
        }
    }

    pub(crate) fn path(&self) -> &Path {
        self.state.path()
    }

    pub(crate) fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path().join(name)).unwrap_or_default()
    }

    /// The configuration file an operator would write, pointing at the stand-ins.
    pub(crate) fn config(&self, monitor: Option<u16>) -> PathBuf {
        let bin = root().join("tests/live");
        let env = format!("STANDIN_STATE={}", self.path().display());
        let control = bin.join("control-plane").display().to_string();
        let engine = bin.join("container-engine").display().to_string();
        let rewrite = monitor
            .map(|m| format!("[fetch_rewrite]\n\"http://127.0.0.1:8222\" = \"http://127.0.0.1:{m}\"\n"))
            .unwrap_or_default();
        let text = format!(
            r#"control = ["env", "{env}", "{control}"]
carry = ["env", "{env}", "{control}", "carry", "{{remote}}"]
carry_secret = ["env", "{env}", "{control}", "carry", "--secret", "{{remote}}"]
inspect = ["env", "{env}", "{engine}", "inspect", "{{container}}"]
inspect_absent = "No such object"
fetch_timeout_seconds = 2
{rewrite}"#
        );
        let path = self.path().join("mesh-adopt.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The configuration with the live protocol's read-only `state` and `images` commands, and
    /// `{node}` in `inspect`: a prediction that reads what the control plane holds on the run's
    /// node, and asks the node whether it has the modules' images.
    pub(crate) fn config_with_state(&self, monitor: Option<u16>) -> PathBuf {
        let env = format!("STANDIN_STATE={}", self.path().display());
        let control = root().join("tests/live/control-plane").display().to_string();
        let engine = root().join("tests/live/container-engine").display().to_string();
        let text = std::fs::read_to_string(self.config(monitor)).unwrap().replace(
            &format!(r#"inspect = ["env", "{env}", "{engine}", "inspect", "{{container}}"]"#),
            &format!(
                r#"inspect = ["env", "{env}", "{engine}", "inspect", "{{container}}", "--node", "{{node}}"]
state = ["env", "{env}", "{control}", "state", "{{node}}"]
images = ["env", "{env}", "{control}", "images", "{{node}}"]"#
            ),
        );
        assert!(text.contains("state = "), "{text}");
        let path = self.path().join("mesh-adopt-state.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    pub(crate) fn mesh(&self, monitor: Option<u16>) -> Arc<LiveMesh> {
        Arc::new(LiveMesh::new(LiveConfig::load(&self.config(monitor)).unwrap()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopts_phase_three_on_real_processes_and_a_real_bus() {
    let nats = Nats::start();
    let standin = StandIn::new();
    let catalogue = tempfile::tempdir().unwrap();
    let (report, transcript) =
        TestMesh::new().run_live(catalogue.path(), standin.mesh(Some(nats.monitor)), &PHASE_THREE).await;
    assert!(report.succeeded(), "{:?}\n{:#?}", report.modules, transcript.said("nats"));
    // The nats plugin read the real monitor after the stand-in engine showed the new image.
    assert!(transcript.said("nats").iter().any(|l| l.contains(&format!("bus answers: mesh-bus on {MODULE_IMAGE}"))));
    // The control plane heard the provider sequence, in order, through real processes.
    let argv = standin.read("argv.log");
    assert!(argv.contains("module add /postgres-module.json\n"), "{argv}");
    assert!(argv.contains("secret accept node-1 postgres superuser --from /accepting-superuser\n"), "{argv}");
    // The superuser arrived on stdin, as a secret, and nowhere else.
    assert_eq!(standin.read("carried/_accepting-superuser"), SUPERUSER);
    assert_eq!(standin.read("carried/_accepting-superuser.kind").trim(), "secret");
    assert!(!argv.contains(SUPERUSER), "a secret on a command line");
    assert!(!standin.read("env.log").contains(SUPERUSER), "a secret in an environment");
    assert!(transcript.visible_text().iter().all(|t| !t.contains(SUPERUSER)));
}

#[tokio::test]
async fn a_control_plane_that_hangs_is_cut_at_the_timeout_and_stopped() {
    let standin = StandIn::new();
    std::fs::write(standin.path().join("hang-build"), "").unwrap();
    let mesh = standin.mesh(None);
    let started = Instant::now();
    let build = mesh_adopt_runtime::mesh::Command::Build {
        repository: "repo".into(),
        module: "x".into(),
        reference: "main".into(),
    };
    let answer = mesh.tell(&build, Duration::from_secs(1)).await;
    let MeshError::TimedOut(message) = answer.unwrap_err() else { panic!("expected a timeout") };
    assert!(message.contains("gave no answer within 1s and was stopped"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(10), "cut at the timeout, not after the hang");
    // The stand-in's `sleep` was in the same process group and is gone too: this stand-in's
    // processes only (others' run in parallel), looked for until they are gone.
    assert_none_left(&standin, "the hung process outlived its timeout");
}

#[tokio::test]
async fn a_control_plane_that_fails_is_reported_with_its_status_and_stderr() {
    let standin = StandIn::new();
    std::fs::write(standin.path().join("fail-assign"), "node-1 is cordoned\nsee `mesh node show node-1`\n").unwrap();
    let catalogue = tempfile::tempdir().unwrap();
    let (report, _) = TestMesh::new().run_live(catalogue.path(), standin.mesh(None), &["mesh-vault"]).await;
    let Some(mesh_adopt_runtime::ModuleOutcome::Refused { message, .. }) = report.outcome("mesh-vault") else {
        panic!("{:?}", report.modules)
    };
    for expected in
        ["assign node-1 mesh-vault", "exited with status 3", "node-1 is cordoned | see `mesh node show node-1`"]
    {
        assert!(message.contains(expected), "expected {expected:?} in {message}");
    }
}

#[tokio::test]
async fn an_unreachable_monitor_is_refused_after_the_wait() {
    let standin = StandIn::new();
    let catalogue = tempfile::tempdir().unwrap();
    let mut mesh = TestMesh::new();
    mesh.options.wait = Duration::from_secs(1);
    // Nothing listens on the port the monitor is rewritten to.
    let (report, _) = mesh.run_live(catalogue.path(), standin.mesh(Some(free_port())), &["nats"]).await;
    let Some(mesh_adopt_runtime::ModuleOutcome::Refused { message, .. }) = report.outcome("nats") else {
        panic!("{:?}", report.modules)
    };
    assert!(message.contains("did not answer ok within 1s"), "{message}");
    assert!(message.contains("unavailable"), "{message}");
}

#[test]
fn the_cli_records_every_call_as_json_lines_without_secrets() {
    let nats = Nats::start();
    let standin = StandIn::new();
    let config = standin.config(Some(nats.monitor));
    let catalogue = tempfile::tempdir().unwrap();
    let record = catalogue.path().join("run.jsonl");
    let out = live_cli("run", &config, catalogue.path(), &["--json", "--record", record.to_str().unwrap()]).output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // --json: every stdout line is an object; the run ends with each module's outcome, the
    // summary, and the end with the exit status.
    let events: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let [.., summary, end] = events.as_slice() else { panic!("too few events: {stdout}") };
    assert_eq!(summary["event"], "summary");
    assert_eq!(summary["succeeded"], true);
    // A live mesh cannot show what its node sealed: the rules were predicted, and each push's
    // containers inspected, never called verified.
    assert_eq!(summary["rules"], "inspected", "{summary}");
    let checked = |rule: &str| {
        summary["rule_checks"].as_array().unwrap().iter().find(|c| c["rule"] == rule).unwrap()["checked"].clone()
    };
    assert_eq!(checked("credential-never-replaced"), "predicted", "{summary}");
    assert_eq!(checked("effect-as-predicted"), "inspected", "{summary}");
    assert_eq!((end["event"].as_str(), end["exit"].as_u64()), (Some("end"), Some(0)));
    let adopted = events.iter().filter(|e| e["event"] == "outcome" && e["outcome"] == "adopted").count();
    assert_eq!(adopted, 3, "{stdout}");
    assert_eq!(events.iter().filter(|e| e["event"] == "plan").count(), 3, "each module's plan: {stdout}");
    // --record: every host call with its result and duration, as it happened.
    let recorded = std::fs::read_to_string(&record).unwrap();
    let calls: Vec<serde_json::Value> = recorded
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["event"] == "call")
        .collect();
    let find = |op: &str, args: &[&str]| calls.iter().find(|c| c["op"] == op && c["args"] == json!(args)).cloned();
    let add = find("tell", &["module", "add", "/postgres-module.json"]).expect("the register call is recorded");
    assert_eq!(add["module"], "postgres");
    assert!(add["result"]["ok"].is_string(), "a tell answers its output: {add}");
    assert!(add["took_ms"].as_f64().unwrap() > 0.0);
    let carry = find("carry", &["store-superuser", "/accepting-superuser"]).expect("the secret's carry is recorded");
    assert_eq!(carry["payload"], json!({"kind": "secret"}));
    // What the container engine answered, as a value: the image the bus runs.
    let inspect = calls.iter().find(|c| c["op"] == "inspect").unwrap();
    assert!(inspect["result"]["ok"]["image"].as_str().is_some_and(|image| !image.is_empty()), "{inspect}");
    assert!(inspect["result"]["ok"]["running"].is_boolean(), "{inspect}");
    assert!(!recorded.contains(SUPERUSER), "a secret in the recording");
    // The record starts with the run, and no seed: a live run's plugins draw from the system.
    let first: serde_json::Value = serde_json::from_str(recorded.lines().next().unwrap()).unwrap();
    assert_eq!(
        (first["event"].as_str(), first["schema"].as_u64()),
        (Some("run"), Some(u64::from(mesh_adopt_runtime::events::SCHEMA)))
    );
    assert!(first["seed"].is_null(), "{first}");
    // The record ends as --json does: a finished run can be told from an interrupted one.
    let last: serde_json::Value = serde_json::from_str(recorded.lines().last().unwrap()).unwrap();
    assert_eq!((last["event"].as_str(), last["exit"].as_u64()), (Some("end"), Some(0)));
    assert!(!stdout.contains(SUPERUSER));
}

/// `mesh-adopt COMMAND --mesh live ARGS` (`check` or `run`) on phase three's catalogue,
/// written with its foundation in `catalogue`, against the stand-ins as `config` describes
/// them: ready to run or spawn.
fn live_cli(command: &str, config: &Path, catalogue: &Path, args: &[&str]) -> Cli {
    TestMesh::new().write_catalogue(catalogue);
    std::fs::copy(root().join("catalogue/foundation.json"), catalogue.join("foundation.json")).unwrap();
    mesh_adopt()
        .args([command, "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git"])
        .args(args)
        .arg("--config")
        .arg(config)
        .catalogue(catalogue)
}

/// `mesh-adopt ARGS` against the live stand-ins, on a catalogue written in `dir`.
/// (`--config` only with `--mesh live`: the simulator takes none.)
fn live_command(standin: &StandIn, dir: &Path, nats: &Nats, args: &[&str]) -> std::process::Output {
    let mut cli = mesh_adopt().args(args).args(["--catalog-source", "https://git.mesh.test/c.git"]).catalogue(dir);
    if args.contains(&"live") {
        cli = cli.arg("--config").arg(standin.config(Some(nats.monitor)));
    }
    cli.output()
}

/// A catalogue of phase three, with its foundation, written in a new directory.
pub(crate) fn live_catalogue() -> tempfile::TempDir {
    let catalogue = tempfile::tempdir().unwrap();
    TestMesh::new().write_catalogue(catalogue.path());
    std::fs::copy(root().join("catalogue/foundation.json"), catalogue.path().join("foundation.json")).unwrap();
    catalogue
}

#[test]
fn a_live_node_that_applies_a_push_wrongly_stops_the_run_naming_expected_and_found() {
    let nats = Nats::start();
    let standin = StandIn::new();
    // The stand-in node raises the store on another image when the store's module is pushed.
    std::fs::write(standin.path().join("wrong-image-mesh-store"), "postgres:17").unwrap();
    let catalogue = live_catalogue();
    let out = live_command(&standin, catalogue.path(), &nats, &["run", "--mesh", "live", "--wait", "3s"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("effect-as-predicted"), "{stdout}");
    assert!(
        stdout.contains("after `postgres`'s push, waited 3s: `mesh-store` runs postgres:17, where the prediction has it run postgres:16.4-bookworm"),
        "{stdout}"
    );
    // The phase stopped there: the bus was never pushed.
    assert!(!standin.read("argv.log").contains("prepare node-1 nats"), "{}", standin.read("argv.log"));
}

#[test]
fn a_running_container_the_foundation_does_not_list_is_not_replaced_by_a_module_that_names_it() {
    let nats = Nats::start();
    let standin = StandIn::new();
    std::fs::write(standin.path().join("images/mesh-control"), "registry.mesh.local/mesh-control:1.8.2").unwrap();
    let catalogue = live_catalogue();
    // The bundle leaves the control plane's container out, and the vault takes its name.
    let foundation_path = catalogue.path().join("foundation.json");
    let mut foundation: serde_json::Value = serde_json::from_slice(&std::fs::read(&foundation_path).unwrap()).unwrap();
    foundation["resources"].as_array_mut().unwrap().retain(|r| r["id"] != "control");
    std::fs::write(&foundation_path, serde_json::to_vec(&foundation).unwrap()).unwrap();
    let manifest_path = catalogue.path().join("modules/mesh-vault/manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["resources"][0]["name"] = "mesh-control".into();
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let out = live_command(&standin, catalogue.path(), &nats, &["run", "--mesh", "live"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("`mesh-control` runs on the node (registry.mesh.local/mesh-control:1.8.2)"), "{stdout}");
    assert!(stdout.contains("one-owner"), "{stdout}");
    assert!(standin.read("argv.log").is_empty(), "nothing was told: {}", standin.read("argv.log"));
}

#[test]
fn a_live_engine_that_shows_no_mounts_leaves_the_volume_rules_predicted_only() {
    let nats = Nats::start();
    let standin = StandIn::new();
    // The engine answers in the older two-word form: images only.
    standin.unlabelled("mesh-store", false);
    standin.unlabelled("mesh-bus", false);
    let catalogue = live_catalogue();
    let out = live_command(&standin, catalogue.path(), &nats, &["run", "postgres", "--mesh", "live", "--json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let summary: serde_json::Value = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["event"] == "summary")
        .unwrap();
    let checked = |rule: &str| {
        summary["rule_checks"].as_array().unwrap().iter().find(|c| c["rule"] == rule).unwrap()["checked"].clone()
    };
    assert_eq!(checked("adopted-keeps-volumes"), "predicted", "{summary}");
    assert_eq!(checked("genesis-volumes-held-once"), "predicted", "{summary}");
    assert_eq!(checked("genesis-touched-as-declared"), "inspected", "{summary}");
}

#[test]
fn a_live_summary_opens_with_how_far_the_rules_were_checked() {
    let nats = Nats::start();
    let standin = StandIn::new();
    let catalogue = live_catalogue();
    let out = live_command(&standin, catalogue.path(), &nats, &["run", "postgres", "--mesh", "live"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let rules = stdout.lines().find(|l| l.trim_start().starts_with("rules")).expect("a rules line");
    // A live mesh shows containers, not what its node sealed: most rules were only predicted,
    // and the first line says so rather than "all held".
    assert!(!rules.contains("all held"), "{rules}");
    let counts = rules.split_once("none broken: ").map(|(_, rest)| rest).unwrap_or_else(|| panic!("{rules}"));
    let numbers: Vec<usize> = counts.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok()).collect();
    let [inspected, all, predicted] = numbers[..] else { panic!("{rules}") };
    assert!(inspected > 0 && predicted > 0 && inspected + predicted == all, "{rules}");
}

#[test]
fn a_new_container_may_not_mount_what_a_live_genesis_container_really_mounts() {
    let nats = Nats::start();
    let standin = StandIn::new();
    // The store runs on another path than the bundle says, and the vault asks for that path.
    std::fs::write(standin.path().join("volumes/mesh-store"), "/srv/realstore:/var/lib/postgresql/data").unwrap();
    let catalogue = live_catalogue();
    let manifest_path = catalogue.path().join("modules/mesh-vault/manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["resources"][0]["volumes"].as_array_mut().unwrap().push("/srv/realstore:/stolen".into());
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let out = live_command(&standin, catalogue.path(), &nats, &["check", "mesh-vault", "--mesh", "live"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("genesis-volumes-held-once"), "{stdout}");
    assert!(stdout.contains("would mount `/srv/realstore`"), "{stdout}");
}

#[test]
fn a_plan_binds_the_mesh_it_was_made_on_and_what_its_pushes_were_to_do() {
    let nats = Nats::start();
    let standin = StandIn::new();
    let catalogue = live_catalogue();
    let plan = catalogue.path().join("plan.json");
    let plan_arg = plan.to_str().unwrap();
    // Made on the simulator, refused on the live mesh, naming both.
    let checked = live_command(&standin, catalogue.path(), &nats, &["check", "--out", plan_arg]);
    assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stderr));
    let elsewhere = live_command(&standin, catalogue.path(), &nats, &["run", "--mesh", "live", "--plan", plan_arg]);
    let said = String::from_utf8_lossy(&elsewhere.stdout);
    assert_eq!(elsewhere.status.code(), Some(1), "{said}");
    assert!(said.contains("this run is on the live mesh"), "{said}");
    assert!(said.contains("the plan was made on the simulated mesh"), "{said}");
    assert!(standin.read("argv.log").is_empty(), "nothing was told: {}", standin.read("argv.log"));
    // Made on the live mesh, it adopts once; run again, the bus it would recreate already runs
    // the module's image, so its words no longer hold.
    let checked = live_command(&standin, catalogue.path(), &nats, &["check", "--mesh", "live", "--out", plan_arg]);
    assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stdout));
    let first = live_command(&standin, catalogue.path(), &nats, &["run", "--mesh", "live", "--plan", plan_arg]);
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stdout));
    let told = standin.read("argv.log").lines().count();
    let again = live_command(&standin, catalogue.path(), &nats, &["run", "--mesh", "live", "--plan", plan_arg]);
    let said = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(1), "{said}");
    assert!(said.contains("the mesh moved since the plan was made"), "{said}");
    assert!(said.contains("mesh-bus kept"), "{said}");
    assert!(said.contains(&format!("mesh-bus recreated nats:2.10.22-alpine → {MODULE_IMAGE}")), "{said}");
    assert_eq!(standin.read("argv.log").lines().count(), told, "the second run told nothing");
}

/// Runs `mesh-adopt run` on the live stand-ins for `mesh-vault`, whose build the stand-in
/// makes take `build_seconds`, on a pseudo-terminal or not.
fn run_vault_with_a_slow_build(on_a_terminal: bool, build_seconds: &str) -> (Option<i32>, String) {
    let standin = StandIn::new();
    std::fs::write(standin.path().join("slow-build"), build_seconds).unwrap();
    let config = standin.config(None);
    let catalogue = tempfile::tempdir().unwrap();
    let cli = live_cli("run", &config, catalogue.path(), &["mesh-vault"]);
    let out = if on_a_terminal { cli.on_a_terminal() } else { cli }.output();
    let shown = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code(), shown)
}

#[test]
fn a_long_tell_is_announced_as_a_line_when_no_one_watches_a_terminal() {
    let (status, shown) = run_vault_with_a_slow_build(false, "0");
    assert_eq!(status, Some(0), "{shown}");
    let waiting = shown.lines().find(|l| l.contains("waiting for `build")).expect(&shown);
    assert!(waiting.contains("mesh-vault │ waiting for `build https://git.mesh.test/c.git"), "{waiting}");
    assert!(waiting.ends_with("(up to 1500s)"), "{waiting}");
    assert!(!shown.contains("\x1b["), "no terminal control codes in a pipe: {shown:?}");
}

#[test]
fn on_a_terminal_a_long_tell_shows_a_spinner_with_its_elapsed_time_then_clears_it() {
    // `script` (util-linux) runs the command on a pseudo-terminal and copies what it shows.
    let (status, shown) = run_vault_with_a_slow_build(true, "1.5");
    assert_eq!(status, Some(0), "{shown}");
    let frames: Vec<&str> = shown.split(['\r', '\n']).filter(|f| f.contains("waiting for `build")).collect();
    assert!(frames.len() >= 2, "the spinner is redrawn while the build runs: {shown:?}");
    assert!(frames.iter().all(|f| f.contains("(up to 1500s) ")), "{frames:?}");
    assert!(frames.iter().any(|f| f.contains("(up to 1500s) 0s")), "the elapsed time is shown: {frames:?}");
    assert!(frames.iter().any(|f| f.contains("(up to 1500s) 1s")), "and counts up: {frames:?}");
    // Once the build answers its spinner line is cleared before anything else is shown, and
    // the run goes on below it.
    let after = &shown[shown.rfind("waiting for `build").unwrap()..];
    let before_next = &after[..after.find("mesh-vault │").unwrap_or(after.len())];
    assert!(before_next.contains("\r\x1b[2K"), "the spinner line is cleared: {before_next:?}");
    assert!(after.contains("pushed node-1"), "the run continues after the wait: {after:?}");
}

/// Whether any process still running was started with this stand-in's state directory in its
/// environment (the control plane's processes and whatever they started).
/// Waits up to two seconds for every process of `standin` to end; fails saying `why` if some
/// are left.
pub(crate) fn assert_none_left(standin: &StandIn, why: &str) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !standin_processes_alive(standin).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(standin_processes_alive(standin), Vec::<String>::new(), "{why}");
}

pub(crate) fn standin_processes_alive(standin: &StandIn) -> Vec<String> {
    let marker = format!("STANDIN_STATE={}", standin.path().display());
    let mut alive = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        if environ.split(|b| *b == 0).any(|v| v == marker.as_bytes()) {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // A zombie has ended; only its exit status is left to collect.
            if !stat.contains(") Z ") {
                alive
                    .push(std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default().replace('\0', " "));
            }
        }
    }
    alive
}

#[test]
fn sigint_or_sigterm_during_a_hanging_tell_ends_the_run_within_two_seconds_and_records_it() {
    for signal in ["INT", "TERM"] {
        let standin = StandIn::new();
        std::fs::write(standin.path().join("hang-build"), "").unwrap();
        let config = standin.config(None);
        let catalogue = tempfile::tempdir().unwrap();
        let record = catalogue.path().join("run.jsonl");
        let child =
            live_cli("run", &config, catalogue.path(), &["mesh-vault", "--record", record.to_str().unwrap()]).spawn();
        // Wait until the build is under way (the stand-in hangs in it), at most a minute.
        let started = Instant::now();
        while !standin.read("argv.log").contains("build ") || standin_processes_alive(&standin).is_empty() {
            assert!(started.elapsed() < Duration::from_secs(60), "the build never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        let sent = Instant::now();
        let status = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
        assert!(status.success());
        let out = child.wait_with_output().unwrap();
        let stopped_in = sent.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "SIG{signal}: {stderr}");
        assert!(stopped_in < Duration::from_secs(2), "SIG{signal}: stopped after {stopped_in:?}");
        assert!(stderr.contains(&format!("interrupted by SIG{signal}")), "{stderr}");
        assert!(stderr.contains("module add /mesh-vault-module.json"), "what had been done is said: {stderr}");
        // The control plane's processes the run started were ended with it: the whole group.
        assert_none_left(&standin, "the run's control-plane processes outlived it");
        // The record says so in its last event.
        let recorded = std::fs::read_to_string(&record).unwrap();
        let last: serde_json::Value = serde_json::from_str(recorded.lines().last().unwrap()).unwrap();
        assert_eq!(last["event"], "interrupted", "{recorded}");
        let expected = format!("SIG{signal}");
        assert_eq!((last["signal"].as_str(), last["exit"].as_u64()), (Some(expected.as_str()), Some(130)));
    }
}

#[test]
fn a_run_killed_outright_mid_push_leaves_no_control_plane_command_to_land_later() {
    let standin = StandIn::new();
    // The push takes three seconds before it applies anything.
    std::fs::write(standin.path().join("slow-push"), "3").unwrap();
    let config = standin.config(None);
    let catalogue = tempfile::tempdir().unwrap();
    let mut child =
        live_cli("run", &config, catalogue.path(), &["mesh-vault"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let started = Instant::now();
    while !standin.read("argv.log").contains("push ") {
        assert!(started.elapsed() < Duration::from_secs(60), "the push never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let control_plane =
        || standin_processes_alive(&standin).into_iter().filter(|p| p.contains("control-plane")).collect::<Vec<_>>();
    assert!(!control_plane().is_empty(), "the push is under way");
    // SIGKILL: no handler runs, nothing is dropped, no process group is signalled by the host.
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !control_plane().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(control_plane(), Vec::<String>::new(), "the control-plane command died with the host");
    // Well past the three seconds the push would have taken: it never landed.
    std::thread::sleep(Duration::from_secs(4));
    assert!(!standin.path().join("images/mesh-vault").exists(), "the killed run's push landed after it");
}

#[test]
fn a_command_that_floods_its_output_is_kept_to_its_bound_in_memory() {
    let standin = StandIn::new();
    // A gibibyte to each of stdout and stderr, where the configuration keeps 256 KiB.
    std::fs::write(standin.path().join("flood-assign"), "1024").unwrap();
    let config = standin.config(None);
    let catalogue = tempfile::tempdir().unwrap();
    let record = catalogue.path().join("run.jsonl");
    let mut child = live_cli("run", &config, catalogue.path(), &["mesh-vault", "--record", record.to_str().unwrap()])
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn();
    let status_of = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    let status = loop {
        if let Ok(status) = std::fs::read_to_string(&status_of) {
            let hwm = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            peak_kib = peak_kib.max(hwm.unwrap_or(0));
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0), "{}", std::fs::read_to_string(&record).unwrap_or_default());
    assert!(peak_kib < 300 << 10, "the host grew to {} MiB", peak_kib >> 10);
    // What the plugin was answered is the bound's worth.
    let recorded = std::fs::read_to_string(&record).unwrap();
    let assign = recorded.lines().find(|l| l.contains("\"assign\"") && l.contains("\"call\"")).unwrap();
    assert!(assign.len() < 300 << 10 && assign.contains("xxxx"), "{} bytes", assign.len());
}

#[test]
fn a_command_that_exits_leaving_a_daemon_on_its_output_is_answered_when_it_exits() {
    let standin = StandIn::new();
    std::fs::write(standin.path().join("daemon-push"), "").unwrap();
    let config = standin.config(None);
    let catalogue = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = live_cli("run", &config, catalogue.path(), &["mesh-vault"]).output();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // Not the push's timeout: the push exited at once; its daemon is its own.
    assert!(took < Duration::from_secs(20), "took {took:?}: {stdout}");
}

#[test]
fn a_container_engine_that_errs_or_hangs_is_not_taken_for_absent_containers() {
    for trouble in ["engine-down", "engine-hangs"] {
        let standin = StandIn::new();
        std::fs::write(standin.path().join(trouble), "").unwrap();
        // A short inspect timeout, so a hanging engine is given up on quickly.
        let config = standin.config(None);
        let text = std::fs::read_to_string(&config).unwrap() + "inspect_timeout_seconds = 1\n";
        std::fs::write(&config, text).unwrap();
        for command in ["check", "run"] {
            let catalogue = tempfile::tempdir().unwrap();
            let out = live_cli(command, &config, catalogue.path(), &["postgres"]).output();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(1), "{trouble} {command}: {stdout}");
            assert!(stdout.contains("preflight could not look at the mesh"), "{trouble} {command}: {stdout}");
            assert!(stdout.contains("`mesh-store`"), "{trouble} {command}: {stdout}");
            assert!(!standin.read("argv.log").contains("push"), "{trouble} {command}: it pushed");
        }
    }
    // Down once the push is made: the check after it names the engine's failure, not a
    // container missing from the node.
    let standin = StandIn::new();
    std::fs::write(standin.path().join("engine-down-after-push"), "").unwrap();
    let config = standin.config(None);
    let catalogue = tempfile::tempdir().unwrap();
    let out = live_cli("run", &config, catalogue.path(), &["postgres", "--wait", "2s"]).output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("the node could not be looked at"), "{stdout}");
    assert!(stdout.contains("Cannot connect to the Docker daemon"), "{stdout}");
    assert!(!stdout.contains("is not on the node"), "{stdout}");
}

#[tokio::test]
async fn a_live_run_draws_fresh_random_numbers_and_keeps_no_seed() {
    let standin = StandIn::new();
    let live = standin.mesh(None);
    assert_eq!(live.seed(), None, "nothing a record holds decides a live run's draws");
    let said = async |dir: &Path| {
        let (_, ran) = TestMesh::new()
            .with_plugin("mesh-vault", "random_is_seeded")
            .run_live(dir, standin.mesh(None), &["mesh-vault"])
            .await;
        ran.said("mesh-vault")
    };
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (first, second) = (said(first.path()).await, said(second.path()).await);
    assert!(first.iter().any(|l| l.starts_with("random: ")), "{first:?}");
    assert_ne!(first[0], second[0], "two live runs draw other numbers");
}

#[tokio::test]
async fn a_replay_of_a_live_run_says_where_a_random_draw_made_it_differ() {
    let standin = StandIn::new();
    let catalogue = tempfile::tempdir().unwrap();
    let mut mesh = TestMesh::new().with_plugin("mesh-vault", "fetches_by_chance");
    mesh.manifest("mesh-vault")["adopt"]["grants"]["fetch"] = json!(["http://127.0.0.1:8222/*"]);
    let (_, recorded) = mesh.run_live(catalogue.path(), standin.mesh(None), &["mesh-vault"]).await;
    let calls: Vec<_> = recorded
        .events()
        .iter()
        .filter_map(|e| match e.to_event() {
            mesh_adopt_runtime::events::Event::Call(call) => Some(call),
            _ => None,
        })
        .collect();
    assert!(calls.iter().any(|c| c.request.words().contains("draw=")), "{calls:?}");
    // The record of a live run holds no seed: the replay draws afresh and says so where it
    // then does otherwise.
    let replay = Arc::new(mesh_adopt_runtime::mesh::replay::ReplayMesh::new(calls, None));
    let replayed_in = tempfile::tempdir().unwrap();
    let mut mesh = TestMesh::new().with_plugin("mesh-vault", "fetches_by_chance");
    mesh.manifest("mesh-vault")["adopt"]["grants"]["fetch"] = json!(["http://127.0.0.1:8222/*"]);
    mesh.run_live(replayed_in.path(), replay.clone(), &["mesh-vault"]).await;
    let divergence = replay.divergence().expect("the replay drew another number and fetched another URL");
    assert!(divergence.message.contains("draw="), "{divergence}");
    assert!(divergence.message.contains("a random draw made it differ here"), "{divergence}");
}

/// `mesh-adopt ARGS --mesh live --config CONFIG` on `catalogue` (written already).
pub(crate) fn live_with(config: &Path, catalogue: &Path, args: &[&str]) -> std::process::Output {
    mesh_adopt()
        .args(args)
        .args(["--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git", "--config"])
        .arg(config)
        .catalogue(catalogue)
        .output()
}

/// The `effect` event of a `--json` stream.
pub(crate) fn effect_event(stdout: &[u8]) -> serde_json::Value {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["event"] == "effect")
        .unwrap_or_else(|| panic!("no effect event: {}", String::from_utf8_lossy(stdout)))
}

/// Stand-ins with a `state` command, phase three adopted on them by a first run (node-1):
/// the bus they answer on, the stand-ins, their configuration and the catalogue.
pub(crate) fn adopted_stand_ins_with_state() -> (Nats, StandIn, PathBuf, tempfile::TempDir) {
    let nats = Nats::start();
    let standin = StandIn::new();
    let config = standin.config_with_state(Some(nats.monitor));
    let catalogue = live_catalogue();
    let first = live_with(&config, catalogue.path(), &["run"]);
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stdout));
    (nats, standin, config, catalogue)
}

/// A run of one module on an adopted node still pushes every module the node has prepared:
/// their containers are read as well, predicted kept (not created), and held to the
/// prediction before the push, so one moved while the run builds stops it.
#[test]
fn a_run_of_one_module_reads_and_rereads_the_containers_of_every_module_the_node_applies() {
    let (_nats, standin, config, catalogue) = adopted_stand_ins_with_state();
    let checked = live_with(&config, catalogue.path(), &["check", "postgres", "--json"]);
    assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stdout));
    let effect = effect_event(&checked.stdout);
    let containers: Vec<&serde_json::Value> =
        effect["pushes"].as_array().unwrap().iter().flat_map(|p| p["containers"].as_array().unwrap()).collect();
    for name in ["mesh-store", "mesh-bus", "mesh-vault"] {
        let touched = containers.iter().find(|c| c["container"] == name).unwrap_or_else(|| panic!("{name}: {effect}"));
        assert_eq!(touched["change"], "kept", "{effect}");
    }

    // The vault's spec changes on the node while postgres builds: the push is not told.
    std::fs::write(standin.path().join("slow-build"), "2").unwrap();
    let before = standin.read("argv.log");
    let child = mesh_adopt()
        .args(["run", "postgres", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git", "--config"])
        .arg(&config)
        .catalogue(catalogue.path())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let started = Instant::now();
    while !standin.read("argv.log")[before.len()..].lines().any(|l| l.starts_with("build ")) {
        assert!(started.elapsed() < Duration::from_secs(120), "postgres never built: {}", standin.read("argv.log"));
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(standin.path().join("specs/mesh-vault"), "2".repeat(64)).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("mesh-moved"), "{said}");
    assert!(said.contains("container `mesh-vault` spec digest"), "{said}");
    let this_run = standin.read("argv.log")[before.len()..].to_string();
    assert!(!this_run.lines().any(|l| l.starts_with("push")), "postgres pushed: {this_run}");
}

#[test]
fn a_rerun_on_the_adopted_stand_ins_reads_their_state_and_recreates_and_seals_nothing() {
    let (_nats, standin, config, catalogue) = adopted_stand_ins_with_state();
    assert_eq!(standin.read("seals.log"), "sealed mesh-vault/unseal-key\n");
    let (key, applied) = (standin.read("sealed/mesh-vault/unseal-key"), standin.read("applied.log"));
    assert!(!key.is_empty());

    // Run again: the node holds the vault's key and the store's hand-over, every spec is the
    // one running. Nothing is predicted recreated, created or sealed, and nothing is; the
    // store's hand-over is accepted again, and the prediction says so.
    let again = live_with(&config, catalogue.path(), &["run", "--json"]);
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stdout));
    let effect = effect_event(&again.stdout);
    assert_eq!(effect["complete"], true, "{effect}");
    for push in effect["pushes"].as_array().unwrap() {
        for container in push["containers"].as_array().unwrap() {
            assert_eq!(container["change"], "kept", "{effect}");
        }
        assert_eq!(push["secrets"], json!([]), "a secret the node holds settled again: {effect}");
    }
    assert_eq!(
        effect["held"],
        json!([
            {"module": "postgres", "secret": "superuser", "accepted_again": true, "credential": "store-superuser"},
            {"module": "mesh-vault", "secret": "unseal-key"}
        ]),
        "{effect}"
    );
    assert_eq!(standin.read("seals.log"), "sealed mesh-vault/unseal-key\n", "the re-run sealed again");
    assert_eq!(standin.read("sealed/mesh-vault/unseal-key"), key, "the vault's key was sealed over");
    let new_lines: Vec<String> = standin.read("applied.log")[applied.len()..].lines().map(String::from).collect();
    assert!(!new_lines.is_empty() && new_lines.iter().all(|l| l.starts_with("kept ")), "{new_lines:?}");

    // And says so, to a person.
    let checked = live_with(&config, catalogue.path(), &["check"]);
    let said = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(0), "{said}");
    assert!(said.contains("secret unseal-key held by the node already: not sealed again"), "{said}");
    // The store's hand-over is accepted again: said, and nothing is not claimed.
    assert!(
        said.contains(
            "secret superuser held by the node already: not sealed, but accepted again before the push, from genesis \
             credential store-superuser"
        ),
        "{said}"
    );
    assert!(
        said.contains("no container recreated or created, no secret sealed; a held secret accepted again"),
        "{said}"
    );
    assert!(!said.contains("nothing changes"), "{said}");
    assert!(!said.contains("sealed fresh by the node"), "{said}");
}

#[test]
fn an_empty_second_node_is_read_as_itself_and_its_containers_predicted_created() {
    let (_nats, standin, config, catalogue) = adopted_stand_ins_with_state();
    // node-1 runs the vault and holds its key; node-2 has nothing, and is read as it is.
    let checked = live_with(&config, catalogue.path(), &["check", "mesh-vault", "--node", "node-2", "--json"]);
    assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stdout));
    let effect = effect_event(&checked.stdout);
    let containers: Vec<(String, String)> = effect["pushes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["containers"].as_array().unwrap().clone())
        .map(|c| (c["container"].as_str().unwrap().to_string(), c["change"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(containers, [("mesh-vault".to_string(), "created".to_string())], "{effect}");
    assert_eq!(effect["pushes"][0]["secrets"][0]["accepted"], false, "node-2 holds no key: {effect}");
    assert_eq!(effect["held"], json!([]), "{effect}");
    let argv = standin.read("argv.log");
    assert!(argv.contains("state node-2\n"), "{argv}");
    // The same check on node-1 reads node-1: the vault is kept there.
    let on_one = live_with(&config, catalogue.path(), &["check", "mesh-vault", "--json"]);
    let effect = effect_event(&on_one.stdout);
    assert_eq!(effect["pushes"][0]["containers"][0]["change"], "kept", "{effect}");
}

/// Genesis raised the foundation on node-1 alone: on node-2 there is no store for postgres,
/// which declares it keeps it, to adopt. The prediction still says what the push would do (the
/// store created), and the run is refused before any effect, naming the container, the node and
/// that genesis did not raise it there; the genesis credential goes nowhere.
#[test]
fn adopting_a_genesis_container_on_a_node_genesis_did_not_raise_it_on_is_refused_before_any_effect() {
    let standin = StandIn::new();
    let config = standin.config_with_state(None);
    let catalogue = live_catalogue();
    let out = live_with(&config, catalogue.path(), &["run", "--node", "node-2", "--json"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let effect = effect_event(&out.stdout);
    let store: Vec<&serde_json::Value> = effect["pushes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["containers"].as_array().unwrap())
        .filter(|c| c["container"] == "mesh-store")
        .collect();
    assert_eq!(store[0]["change"], "created", "the prediction is shown as it is: {effect}");
    assert!(said.contains("genesis-touched-as-declared"), "{said}");
    for fragment in [
        "`mesh-store` (the bundle's `store`), which `postgres` declares it keeps, does not run on node `node-2`",
        "genesis did not raise it there, so there is nothing to adopt",
    ] {
        assert!(said.contains(fragment), "expected {fragment:?} in {said}");
    }
    assert!(!said.contains("kept in place"), "{said}");
    let argv = standin.read("argv.log");
    assert!(
        argv.lines().all(|l| l.starts_with("state ") || l.starts_with("images ")),
        "nothing was told or carried: {argv}"
    );
    assert!(!standin.path().join("nodes/node-2/images/mesh-store").exists());
    // On node-1, where genesis raised it, the same catalogue is adopted as before.
    let checked = live_with(&config, catalogue.path(), &["check", "--json"]);
    assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stdout));
}

#[test]
fn without_state_a_push_that_would_seal_a_running_containers_secret_is_refused_before_any_effect() {
    let nats = Nats::start();
    let standin = StandIn::new();
    let config = standin.config(Some(nats.monitor));
    let catalogue = live_catalogue();
    let first = live_with(&config, catalogue.path(), &["run"]);
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stdout));
    let (told, key) = (standin.read("argv.log").lines().count(), standin.read("sealed/mesh-vault/unseal-key"));
    let again = live_with(&config, catalogue.path(), &["run"]);
    let said = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(1), "{said}");
    assert!(said.contains("credential-never-replaced"), "{said}");
    for fragment in [
        "seal fresh bytes for `mesh-vault`'s secret `unseal-key`, but `mesh-vault` (raised by `mesh-vault`) already runs",
        "The data comes first: configure the live mesh's `state` command",
    ] {
        assert!(said.contains(fragment), "expected {fragment:?} in {said}");
    }
    assert_eq!(standin.read("argv.log").lines().count(), told, "the refused run told the control plane something");
    assert_eq!(standin.read("sealed/mesh-vault/unseal-key"), key);
}

#[test]
fn a_run_on_another_node_through_a_template_that_sees_one_node_is_refused_naming_why() {
    let standin = StandIn::new();
    let catalogue = live_catalogue();
    let out = live_with(&standin.config(None), catalogue.path(), &["check", "--node", "node-2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for fragment in [
        "the run is on node `node-2`, and the live mesh's `inspect` has no `{node}` word",
        "it answers for node `node-1` alone",
    ] {
        assert!(stderr.contains(fragment), "expected {fragment:?} in {stderr}");
    }
    assert!(standin.read("argv.log").is_empty(), "{}", standin.read("argv.log"));
    // A `node` key that names the node the templates see lets the run through to it.
    let config = standin.config(None);
    let text = std::fs::read_to_string(&config).unwrap() + "node = \"node-2\"\n";
    std::fs::write(&config, text).unwrap();
    let out = live_with(&config, catalogue.path(), &["check", "mesh-vault", "--node", "node-2"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_state_command_that_fails_or_answers_otherwise_stops_the_run_before_any_effect() {
    let standin = StandIn::new();
    let config = standin.config_with_state(None);
    for (trouble, content, said) in [
        ("fail-state", "the registry is down", "the registry is down"),
        ("flood-state", "1", "answered what is not the state of node `node-1`"),
    ] {
        std::fs::write(standin.path().join(trouble), content).unwrap();
        let catalogue = live_catalogue();
        let out = live_with(&config, catalogue.path(), &["run", "postgres"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{trouble}: {stdout}");
        assert!(stdout.contains("the control plane could not say what it holds on node `node-1`"), "{stdout}");
        assert!(stdout.contains(said), "{trouble}: {stdout}");
        assert!(!standin.read("argv.log").contains("push"), "{trouble}: it pushed");
        std::fs::remove_file(standin.path().join(trouble)).unwrap();
    }
}

/// A `state` that fails on an adopted mesh stops the run and predicts nothing: no effect
/// read from the containers alone, no rule said broken for want of a `state` command.
#[test]
fn a_state_command_that_fails_on_an_adopted_mesh_has_nothing_predicted_or_held_to_the_rules() {
    let (_nats, standin, config, catalogue) = adopted_stand_ins_with_state();
    std::fs::write(standin.path().join("fail-state"), "the registry is down").unwrap();
    let out = live_with(&config, catalogue.path(), &["run", "--json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let events: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!events.iter().any(|e| e["event"] == "effect"), "{stdout}");
    let summary = events.iter().find(|e| e["event"] == "summary").expect("a summary");
    assert_eq!(summary["violations"], json!([]), "{summary}");
    let shown = live_with(&config, catalogue.path(), &["check"]);
    let said = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(shown.status.code(), Some(1), "{said}");
    assert!(said.contains("preflight could not look at the mesh"), "{said}");
    for absent in ["effect:", "credential-never-replaced", "configure the live mesh's `state` command"] {
        assert!(!said.contains(absent), "{absent:?} in {said}");
    }
}

/// The stand-ins' configuration with `edit` made to its text, as `NAME` in the stand-in state.
fn edited_config(standin: &StandIn, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let text = edit(&std::fs::read_to_string(standin.config(None)).unwrap());
    let path = standin.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Asserts `check` and `run` on `config` exit 2 before anything reaches the mesh, saying
/// each of `named` (the file and the key among them).
fn refused_at_load(standin: &StandIn, config: &Path, named: &[&str]) {
    for command in ["check", "run"] {
        let catalogue = tempfile::tempdir().unwrap();
        let out = live_cli(command, config, catalogue.path(), &["postgres"]).output();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{command} {named:?}: {said}");
        for fragment in named.iter().copied().chain([config.to_str().unwrap()]) {
            assert!(said.contains(fragment), "{command}: expected {fragment:?} in {said}");
        }
        assert!(standin.read("argv.log").is_empty(), "{command} {named:?}: told {}", standin.read("argv.log"));
        assert!(!said.contains("predicted"), "{command} {named:?}: nothing is predicted: {said}");
    }
}

#[test]
fn a_configuration_that_could_read_an_engine_that_errs_as_an_empty_mesh_is_refused_naming_the_key() {
    let standin = StandIn::new();
    // The engine is down: a configuration that took its error for "absent" would predict
    // every genesis container created and push the store.
    std::fs::write(standin.path().join("engine-down"), "").unwrap();
    let absent = |to: &'static str| move |text: &str| text.replace("\"No such object\"", to);
    type Edit = Box<dyn Fn(&str) -> String>;
    let cases: [(Edit, &[&str]); 7] = [
        (Box::new(absent("\"\"")), &["`inspect_absent`", "is empty"]),
        (Box::new(absent("\"  \"")), &["`inspect_absent`", "is empty"]),
        (Box::new(absent("\"e\"")), &["`inspect_absent`", "holds no word of 4 letters or more"]),
        (Box::new(absent("\"Docker daemon\"")), &["`inspect_absent`", "is found in what an engine that cannot answer"]),
        (
            Box::new(|text: &str| text.replace("{container}", "{contaner}")),
            &["`inspect`", "`{contaner}`", "no placeholder"],
        ),
        (Box::new(|text: &str| text.replace(", \"{container}\"]", "]")), &["`inspect`", "has no `{container}` word"]),
        (
            Box::new(|text: &str| format!("state = [\"mesh\", \"state\", \"{{nodes}}\"]\n{text}")),
            &["`state`", "`{nodes}`", "it is given `{node}` only"],
        ),
    ];
    for (edit, named) in cases {
        refused_at_load(&standin, &edited_config(&standin, "edited.toml", edit), named);
    }
    // The engine's own words, matched as a whole phrase, still load, and the engine that is
    // down is still not read as absent containers.
    let config = edited_config(&standin, "kept.toml", absent("\"no such object\""));
    let catalogue = tempfile::tempdir().unwrap();
    let out = live_cli("check", &config, catalogue.path(), &["postgres"]).output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("preflight could not look at the mesh"), "{stdout}");
}

#[test]
fn a_carry_without_its_remote_word_is_refused_naming_the_key() {
    let standin = StandIn::new();
    for (key, from, to) in [
        ("carry", "\"carry\", \"{remote}\"]", "\"carry\"]"),
        ("carry_secret", "\"--secret\", \"{remote}\"]", "\"--secret\"]"),
        ("carry_secret", "\"--secret\", \"{remote}\"]", "\"--secret\", \"{remotes}\"]"),
    ] {
        let config = edited_config(&standin, "edited.toml", |text| {
            assert!(text.contains(from), "{text}");
            text.replacen(from, to, 1)
        });
        let why = if to.contains("remotes") { "`{remotes}`" } else { "has no `{remote}` word" };
        refused_at_load(&standin, &config, &[&format!("`{key}` in"), why]);
    }
}

#[test]
fn a_credentials_value_in_any_text_of_the_configuration_is_refused_naming_the_key_never_the_value() {
    let standin = StandIn::new();
    let with = |key: &str, text: &str| -> String {
        let word = format!("\"{SUPERUSER}\"");
        match key {
            "carry" => text.replacen("\"carry\", \"{remote}\"]", &format!("\"carry\", \"{{remote}}\", {word}]"), 1),
            "carry_secret" => {
                text.replacen("\"--secret\", \"{remote}\"]", &format!("\"--secret\", \"{{remote}}\", {word}]"), 1)
            }
            "inspect" => text.replacen("\"{container}\"]", &format!("\"{{container}}\", {word}]"), 1),
            "state" => format!("state = [\"mesh\", \"state\", {word}]\n{text}"),
            "lock" => format!("lock = [\"mesh\", {word}]\nunlock = [\"mesh\", \"{{id}}\"]\n{text}"),
            "unlock" => format!("lock = [\"mesh\"]\nunlock = [\"mesh\", \"{{id}}\", {word}]\n{text}"),
            "lock_holder" => {
                format!("lock = [\"mesh\"]\nunlock = [\"mesh\", \"{{id}}\"]\nlock_holder = [\"mesh\", {word}]\n{text}")
            }
            "fetch_rewrite" => format!("{text}[fetch_rewrite]\n\"http://{SUPERUSER}/\" = \"http://127.0.0.1:1/\"\n"),
            _ => unreachable!(),
        }
    };
    for key in ["carry", "carry_secret", "inspect", "state", "lock", "unlock", "lock_holder", "fetch_rewrite"] {
        let config = edited_config(&standin, "edited.toml", |text| {
            let edited = with(key, text);
            assert!(edited.contains(SUPERUSER), "{key}: {edited}");
            edited
        });
        for command in ["check", "run"] {
            let catalogue = tempfile::tempdir().unwrap();
            let out = live_cli(command, &config, catalogue.path(), &["postgres"]).output();
            let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert_eq!(out.status.code(), Some(2), "{key} {command}: {said}");
            let named = format!(
                "`{key}` in `{}` holds the value of the genesis credential `store-superuser`",
                config.display()
            );
            assert!(said.contains(&named), "{key} {command}: expected {named:?} in {said}");
            assert!(!said.contains(SUPERUSER), "{key} {command}: the value was shown: {said}");
            assert!(standin.read("argv.log").is_empty(), "{key} {command}: told {}", standin.read("argv.log"));
        }
    }
}

/// A configuration's relative program is looked for from the directory the run started in: a
/// run started elsewhere is told which file it looked for, and from where.
#[tokio::test]
async fn a_program_not_found_is_named_as_the_file_looked_for() {
    let config = LiveConfig::from_toml(
        "control = [\"node/no-such-control\"]\ninspect = [\"no-such-engine\", \"{container}\"]\n",
        Path::new("m.toml"),
    )
    .unwrap();
    let mesh = LiveMesh::new(config);
    let push = mesh_adopt_runtime::mesh::Command::Push { node: "node-1".into() };
    let MeshError::Unavailable(said) = mesh.tell(&push, Duration::from_secs(5)).await.unwrap_err() else {
        panic!("not unavailable")
    };
    let looked = std::env::current_dir().unwrap().join("node/no-such-control");
    assert!(said.contains(&format!("there is no file `{}`", looked.display())), "{said}");
    assert!(said.contains("looked for from the directory the run started in"), "{said}");
    let MeshError::Unavailable(said) = mesh.inspect("node-1", "mesh-bus").await.unwrap_err() else {
        panic!("not unavailable")
    };
    assert!(said.contains("there is no program `no-such-engine` on the PATH"), "{said}");
}

/// The host and the stand-ins' node digest a spec alike (RFC 8785) where their JSON readers take
/// its numbers apart: `-0`, `1.0` and `1e-7`, which serde_json reads as floats and Python's
/// json as an int, a float and a float it writes `1e-07`. Adopted once, the vault is then found
/// as predicted, and a re-run predicts and finds every container kept.
#[test]
fn a_spec_whose_numbers_json_readers_take_apart_is_digested_alike_and_kept_on_a_rerun() {
    let nats = Nats::start();
    let standin = StandIn::new();
    let config = standin.config_with_state(Some(nats.monitor));
    let catalogue = live_catalogue();
    let vault = catalogue.path().join("modules/mesh-vault/manifest.json");
    let shipped = std::fs::read_to_string(&vault).unwrap();
    let image = r#""image": "registry.mesh.local/mesh-vault:0.9.1","#;
    assert!(shipped.contains(image), "{shipped}");
    let numbers = format!(r#"{image} "user": -0, "environment": {{"ZERO": -0, "ONE": 1.0, "SMALL": 1e-7}},"#);
    std::fs::write(&vault, shipped.replace(image, &numbers)).unwrap();

    let first = live_with(&config, catalogue.path(), &["run"]);
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stdout));
    let applied = standin.read("applied.log");
    assert!(applied.contains("created mesh-vault by mesh-vault"), "{applied}");

    let again = live_with(&config, catalogue.path(), &["run", "--json"]);
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stdout));
    let effect = effect_event(&again.stdout);
    for push in effect["pushes"].as_array().unwrap() {
        for container in push["containers"].as_array().unwrap() {
            assert_eq!(container["change"], "kept", "{effect}");
        }
    }
    let new_lines: Vec<String> = standin.read("applied.log")[applied.len()..].lines().map(String::from).collect();
    assert!(new_lines.contains(&"kept mesh-vault by mesh-vault".to_string()), "{new_lines:?}");
    assert!(new_lines.iter().all(|l| l.starts_with("kept ")), "{new_lines:?}");
}
