//! The sandbox's WASI and its wall deadline, through real components from `tests/plugins/`
//! (and hand-written ones from `tests/components/`): whatever a plugin waits on, its call
//! ends by its deadline; what a plugin may import is a stated list; fetches stay inside
//! their grants.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::mesh::Mesh;
use mesh_adopt_runtime::{Mode, ModuleOutcome};
use serde_json::json;

use crate::live::StandIn;
use crate::support::{Ran, TestMesh, assert_mentions, mesh_adopt, root};

/// The wall deadline the tests run plugins with.
const WALL: Duration = Duration::from_secs(2);
/// Longer than any run here should take: a test fails instead of hanging if one does.
const HANG: Duration = Duration::from_secs(60);

/// A host whose plugins may take two seconds in all per call.
fn wall_host() -> &'static PluginHost {
    static HOST: OnceLock<PluginHost> = OnceLock::new();
    HOST.get_or_init(|| {
        let limits = Limits { wall_time: WALL, guest_time: Duration::from_secs(1), ..Limits::default() };
        PluginHost::new(limits).expect("plugin host")
    })
}

/// A host with no wall deadline to speak of, to see what the clock does unbounded.
fn unbounded_host() -> &'static PluginHost {
    static HOST: OnceLock<PluginHost> = OnceLock::new();
    HOST.get_or_init(|| PluginHost::new(Limits { wall_time: Duration::MAX, ..Limits::default() }).expect("host"))
}

/// Runs the plugin `name` as the postgres plugin on `host` (loading it first, so the time
/// measured is the run's, not the compiler's) and says how long the run took.
async fn run_on(host: &'static PluginHost, name: &str, edit: impl FnOnce(&mut TestMesh)) -> (Ran, Duration) {
    host.load(&crate::support::plugin(name)).expect("the plugin loads");
    let mut mesh = TestMesh::new().with_plugin("postgres", name);
    mesh.host = Some(host);
    edit(&mut mesh);
    let started = Instant::now();
    let ran = tokio::time::timeout(HANG, mesh.run_modules(&["postgres"], Mode::Adopt)).await.expect("the run ended");
    (ran, started.elapsed())
}

/// Asserts nothing reached the mesh: no command, no carry, no call at all.
fn untouched(ran: &Ran) {
    assert!(ran.mesh.calls().is_empty(), "{:?}", ran.mesh.calls());
    assert!(ran.mesh.carried().is_empty(), "{:?}", ran.mesh.carried());
}

#[tokio::test]
async fn a_wasi_sleep_of_an_hour_is_stopped_at_the_wall_deadline() {
    let (ran, took) = run_on(wall_host(), "wasi_sleeps", |_| {}).await;
    assert_mentions(
        ran.failure("postgres"),
        &[
            "during `adopt`",
            "stopped: waited past its deadline of 2s",
            "a WASI sleep (`wasi:clocks/monotonic-clock.subscribe-duration` of 3600s)",
            "it had changed nothing on the mesh",
        ],
    );
    assert_eq!(ran.stop_kind("postgres"), mesh_adopt_runtime::error::StopKind::WallTime);
    // On the simulator the deadline is virtual: the clock went to it, and no further, at once.
    assert_eq!(ran.mesh.now(), WALL);
    assert!(took < WALL, "stopped in {took:?}");
    untouched(&ran);
}

#[tokio::test]
async fn a_blocked_monotonic_clock_pollable_is_stopped_at_the_wall_deadline() {
    let (ran, took) = run_on(wall_host(), "wasi_polls", |_| {}).await;
    assert_mentions(
        ran.failure("postgres"),
        &["stopped: waited past its deadline of 2s", "`wasi:clocks/monotonic-clock.subscribe-duration` of 3600s"],
    );
    assert_eq!(ran.mesh.now(), WALL);
    assert!(took < WALL, "stopped in {took:?}");
    untouched(&ran);
}

#[tokio::test]
async fn a_clock_sleep_of_a_year_is_stopped_at_the_wall_deadline() {
    let (ran, took) = run_on(wall_host(), "clock_sleeps_a_year", |_| {}).await;
    assert_mentions(
        ran.failure("postgres"),
        &["stopped: waited past its deadline of 2s", "`clock.sleep` of 31536000000 ms"],
    );
    assert_eq!(ran.mesh.now(), WALL);
    assert!(took < WALL, "stopped in {took:?}");
    untouched(&ran);
}

#[tokio::test]
async fn sleeping_u64_max_milliseconds_over_and_over_saturates_the_clock() {
    // Unbounded, the clock runs to its end and stays there: no overflow, no panic.
    let (ran, _) = run_on(unbounded_host(), "clock_overflows", |_| {}).await;
    ran.assert_adopted("postgres");
    assert!(ran.said("postgres", "before: 0"), "{:?}", ran.transcript.said("postgres"));
    assert!(ran.said("postgres", &format!("after: {}", u64::MAX)), "{:?}", ran.transcript.said("postgres"));
    assert_eq!(ran.mesh.now(), Duration::MAX);
    // With a deadline the first such sleep is stopped there.
    let (ran, took) = run_on(wall_host(), "clock_overflows", |_| {}).await;
    assert_mentions(
        ran.failure("postgres"),
        &["stopped: waited past its deadline of 2s", &format!("`clock.sleep` of {} ms", u64::MAX)],
    );
    assert!(took < WALL, "stopped in {took:?}");
    untouched(&ran);
}

#[tokio::test]
async fn wasi_clocks_read_the_mesh_clock() {
    let (ran, took) = run_on(crate::support::host(), "reads_wasi_clocks", |_| {}).await;
    ran.assert_adopted("postgres");
    let said = ran.transcript.said("postgres");
    // The simulator's wall clock starts on 2025-01-01 and moves with its virtual time: the
    // ninety-second sleep cost no real time and shows on every clock.
    assert_eq!(said[0], "wall before: 1735689600", "{said:?}");
    assert_eq!(said[1], "slept: 90s by the monotonic clock", "{said:?}");
    assert_eq!(said[2], "wall after: 1735689690", "{said:?}");
    assert_eq!(said[3], "mesh clock moved: 90000ms", "{said:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    untouched(&ran);
}

#[tokio::test]
async fn two_simulator_runs_draw_the_same_random_numbers_and_another_seed_others() {
    let said = |ran: &Ran| ran.transcript.said("postgres");
    let (first, _) = run_on(wall_host(), "random_is_seeded", |_| {}).await;
    let (second, _) = run_on(wall_host(), "random_is_seeded", |_| {}).await;
    first.assert_adopted("postgres");
    assert_eq!(said(&first).len(), 3, "{:?}", said(&first));
    assert_eq!(said(&first), said(&second));
    let (reseeded, _) = run_on(wall_host(), "random_is_seeded", |mesh| {
        mesh.setup = Box::new(|setup| setup.seed = 7);
    })
    .await;
    reseeded.assert_adopted("postgres");
    for (a, b) in said(&first).iter().zip(said(&reseeded).iter()) {
        assert_ne!(a, b, "another seed draws other numbers");
    }
    // The seed is the simulator's, for a record to keep.
    assert_eq!(reseeded.mesh.seed(), Some(7));
}

#[tokio::test]
async fn reading_a_file_stops_the_plugin_saying_the_sandbox_gives_no_filesystem_access() {
    let (ran, took) = run_on(wall_host(), "reads_files", |_| {}).await;
    assert!(took < WALL, "{took:?}");
    assert_mentions(
        ran.failure("postgres"),
        &["the sandbox gives no filesystem access", "`wasi:filesystem/types.[method]descriptor.open-at`", "etc/passwd"],
    );
    assert!(ran.transcript.said("postgres").is_empty(), "it never got an answer to say");
    untouched(&ran);
}

#[tokio::test]
async fn the_preopen_answers_what_a_runtime_asks_at_startup_and_stops_a_real_use() {
    // What a C library or the preview1 adapter (componentize-js's) asks of a preopen before
    // any path is used is answered; the first real use stops the plugin.
    let (ran, took) = run_on(wall_host(), "queries_preopen", |_| {}).await;
    assert_eq!(ran.transcript.said("postgres"), ["/: Ok(DescriptorType::Directory), Ok(DescriptorFlags(READ))"]);
    assert_mentions(
        ran.failure("postgres"),
        &[
            "the sandbox gives no filesystem access",
            "the plugin called `wasi:filesystem/types.[method]descriptor.stat`",
        ],
    );
    assert!(took < WALL, "{took:?}");
    untouched(&ran);
}

#[tokio::test]
async fn opening_a_socket_stops_the_plugin_saying_the_sandbox_gives_no_network_access() {
    let (ran, took) = run_on(wall_host(), "opens_socket", |_| {}).await;
    assert!(took < WALL, "{took:?}");
    assert_mentions(ran.failure("postgres"), &["the sandbox gives no network access", "`wasi:sockets/"]);
    assert_eq!(ran.stop_kind("postgres"), mesh_adopt_runtime::error::StopKind::Sandbox);
    assert!(ran.transcript.said("postgres").is_empty(), "it never got an answer to say");
    untouched(&ran);
}

#[tokio::test]
async fn a_plugin_importing_wasi_http_loads_and_checks_and_is_stopped_only_when_it_calls_it() {
    let plugin = crate::support::plugin("imports_http");
    let info = wall_host().describe(&plugin).unwrap();
    assert!(info.imports.iter().any(|i| i.starts_with("wasi:http/outgoing-handler@")), "{:?}", info.imports);
    assert!(info.loads.is_ok(), "{:?}", info.loads);
    let mut mesh = TestMesh::new().with_plugin("postgres", "imports_http");
    mesh.host = Some(wall_host());
    let checked = mesh.run_modules(&["postgres"], Mode::Check).await;
    assert!(matches!(checked.report.outcome("postgres"), Some(ModuleOutcome::Checked(_))));
    let (ran, took) = run_on(wall_host(), "imports_http", |_| {}).await;
    assert!(took < WALL, "{took:?}");
    assert_mentions(
        ran.failure("postgres"),
        &["the sandbox gives no http access", "the plugin called `wasi:http/types.[constructor]fields`"],
    );
    untouched(&ran);
}

#[tokio::test]
async fn what_a_plugin_prints_shows_in_its_stop_report() {
    let (ran, took) = run_on(wall_host(), "prints_stdout", |_| {}).await;
    assert!(took < WALL, "{took:?}");
    assert_mentions(
        ran.failure("postgres"),
        &[
            "its stdout:\n  | hello from stdout: adopting postgres",
            "its stderr:\n  | hello from stderr",
            "printed and gave up",
        ],
    );
    untouched(&ran);
}

#[tokio::test]
async fn a_dot_dot_under_a_prefix_grant_is_denied_before_the_mesh() {
    let urls = [
        "http://127.0.0.1:8222/api/../healthz",
        "http://127.0.0.1:8222/api/%2e%2e/healthz",
        "http://127.0.0.1:8222/api/.%2E/healthz",
        "http://127.0.0.1:8222/api/..\\healthz",
    ];
    let (ran, _) = run_on(wall_host(), "fetches_listed", |mesh| {
        mesh.manifest("postgres")["adopt"]["grants"]["fetch"] = json!(["http://127.0.0.1:8222/api/*"]);
        mesh.manifest("postgres")["hostile-fetch"] = json!(urls);
    })
    .await;
    // It went on past its denials: not adopted, the first denial named.
    assert_mentions(
        ran.refusal("postgres"),
        &["not adopted: its plugin was denied `fetch http://127.0.0.1:8222/api/../healthz`"],
    );
    let said = ran.transcript.said("postgres");
    assert_eq!(said.len(), urls.len(), "{said:?}");
    for (url, line) in urls.iter().zip(&said) {
        assert_mentions(line, &[url, "denied", "is not granted", "adopt.grants.fetch"]);
    }
    untouched(&ran);
}

/// A one-route HTTP server on the loopback for `requests` requests at most, answering each
/// with `answer`; counts the requests it got.
fn serve(answer: &'static str, requests: usize) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let Ok(mut stream) = stream else { continue };
            counted.fetch_add(1, Ordering::SeqCst);
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    (port, hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_fetch_answered_by_a_redirect_gets_the_3xx_and_does_not_follow_it() {
    let (secret_port, secret_hits) = serve("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret", 1);
    let redirect: &'static str = Box::leak(
        format!(
            "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{secret_port}/secret\r\nContent-Length: 5\r\n\r\nmoved"
        )
        .into_boxed_str(),
    );
    let (port, hits) = serve(redirect, 1);
    let url = format!("http://127.0.0.1:{port}/healthz");
    let standin = StandIn::new();
    let mut mesh = TestMesh::new().with_plugin("postgres", "fetches_listed");
    mesh.host = Some(wall_host());
    mesh.manifest("postgres")["adopt"]["grants"]["fetch"] = json!([url]);
    mesh.manifest("postgres")["hostile-fetch"] = json!([url]);
    let catalogue = tempfile::tempdir().unwrap();
    let (report, transcript) = mesh.run_live(catalogue.path(), standin.mesh(None), &["postgres"]).await;
    assert!(report.succeeded(), "{:?}", report.modules);
    assert_eq!(transcript.said("postgres"), [format!("{url}: status 302 body moved")]);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    assert_eq!(secret_hits.load(Ordering::SeqCst), 0, "the redirect was followed to an ungranted URL");
}

#[tokio::test]
async fn on_a_live_mesh_wasi_waits_have_their_own_bound_far_below_the_wall_deadline() {
    static HOST: OnceLock<PluginHost> = OnceLock::new();
    // The wall deadline is the default hour; WASI waits may take a second in all.
    let host = HOST.get_or_init(|| {
        PluginHost::new(Limits { wasi_wait: Duration::from_secs(1), ..Limits::default() }).expect("plugin host")
    });
    for plugin in ["wasi_sleeps", "wasi_polls"] {
        let standin = StandIn::new();
        let catalogue = tempfile::tempdir().unwrap();
        let mut mesh = TestMesh::new().with_plugin("postgres", plugin);
        mesh.host = Some(host);
        let started = Instant::now();
        let (report, _) =
            tokio::time::timeout(HANG, mesh.run_live(catalogue.path(), standin.mesh(None), &["postgres"]))
                .await
                .expect("the run ended");
        let took = started.elapsed();
        let failure = match &report.modules[0].1 {
            ModuleOutcome::Failed(stopped) => {
                assert_eq!(stopped.kind, mesh_adopt_runtime::error::StopKind::Limit);
                stopped.report.clone()
            }
            other => panic!("{plugin}: {other:?}"),
        };
        assert_mentions(
            &failure,
            &["stopped: its WASI sleeps and polls took more than the 1s", "limits.wasi_wait", "subscribe-duration"],
        );
        assert!(took >= Duration::from_secs(1) && took < Duration::from_secs(30), "{plugin}: stopped after {took:?}");
    }
}

#[test]
fn on_a_live_mesh_a_wasi_sleep_of_an_hour_is_stopped_at_its_wall_deadline() {
    let standin = StandIn::new();
    let config = standin.config(None);
    let catalogue = tempfile::tempdir().unwrap();
    TestMesh::new().with_plugin("postgres", "wasi_sleeps").write_catalogue(catalogue.path());
    std::fs::copy(root().join("catalogue/foundation.json"), catalogue.path().join("foundation.json")).unwrap();
    let cli = |wall: &str| {
        // Killed at `HANG`, so a run that hangs fails the test instead.
        mesh_adopt()
            .args(["run", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git", "--config"])
            .arg(&config)
            .args(["--plugin-wall-time", wall, "postgres"])
            .catalogue(catalogue.path())
            .timeout(HANG)
            .output()
    };
    // Once to compile the plugin into the cache, so the second run's time is the run's.
    cli("1s");
    let started = Instant::now();
    let out = cli("2s");
    let took = started.elapsed();
    let shown = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert_mentions(
        &shown,
        &["stopped: waited past its deadline of 2s", "`wasi:clocks/monotonic-clock.subscribe-duration` of 3600s"],
    );
    // Real time, here: stopped at the deadline, not an hour later.
    assert!(took >= WALL && took < WALL + Duration::from_secs(3), "stopped after {took:?}");
    assert!(standin.read("argv.log").is_empty(), "the control plane heard: {}", standin.read("argv.log"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_live_mesh_a_clock_sleep_is_stopped_at_its_wall_deadline() {
    wall_host().load(&crate::support::plugin("clock_sleeps_a_year")).unwrap();
    let standin = StandIn::new();
    let mut mesh = TestMesh::new().with_plugin("postgres", "clock_sleeps_a_year");
    mesh.host = Some(wall_host());
    let catalogue = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (report, _) = tokio::time::timeout(HANG, mesh.run_live(catalogue.path(), standin.mesh(None), &["postgres"]))
        .await
        .expect("the run ended");
    let took = started.elapsed();
    let Some(ModuleOutcome::Failed(stopped)) = report.outcome("postgres") else { panic!("{:?}", report.modules) };
    assert_eq!(stopped.kind, mesh_adopt_runtime::error::StopKind::WallTime);
    assert_mentions(&stopped.report, &["stopped: waited past its deadline of 2s", "`clock.sleep` of 31536000000 ms"]);
    assert!(took >= WALL && took < WALL + Duration::from_secs(2), "stopped after {took:?}");
    assert!(standin.read("argv.log").is_empty(), "the control plane heard: {}", standin.read("argv.log"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_live_mesh_a_tell_that_hangs_is_cut_at_the_wall_deadline_with_what_it_started() {
    // The stand-in's push sleeps an hour.
    // (A plan that builds is refused in preflight under a 2 s wall deadline: the build alone
    // may take longer, so this plugin plans a push alone.)
    wall_host().load(&crate::support::plugin("hangs_in_a_push")).unwrap();
    let standin = StandIn::new();
    std::fs::write(standin.path().join("slow-push"), "3600").unwrap();
    let mut mesh = TestMesh::new().with_plugin("mesh-vault", "hangs_in_a_push");
    mesh.host = Some(wall_host());
    let catalogue = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (report, _) = tokio::time::timeout(HANG, mesh.run_live(catalogue.path(), standin.mesh(None), &["mesh-vault"]))
        .await
        .expect("the run ended");
    let took = started.elapsed();
    let message = match report.outcome("mesh-vault") {
        Some(ModuleOutcome::Failed(stopped)) => stopped.report.clone(),
        Some(ModuleOutcome::Refused { message, .. }) => message.clone(),
        other => panic!("{other:?}"),
    };
    assert_mentions(&message, &["stopped: waited past its deadline of 2s", "in `tell push node-1`"]);
    assert!(took < WALL + Duration::from_secs(2), "stopped after {took:?}");
    crate::live::assert_none_left(&standin, "the hung push outlived its plugin's deadline");
}

/// The hand-written component of 24 core instances, built from its text.
fn many_instances(extra_imports: &str) -> PathBuf {
    let text = std::fs::read_to_string(root().join("tests/components/many-instances.wat")).unwrap();
    let text = text.replacen("(component\n", &format!("(component\n{extra_imports}\n"), 1);
    let bytes = wat::parse_str(&text).expect("the component's text parses");
    let dir = tempfile::tempdir().unwrap().keep();
    let path = dir.join("many_instances.wasm");
    std::fs::write(&path, bytes).unwrap();
    path
}

async fn run_component(host: &'static PluginHost, path: PathBuf) -> Ran {
    let mut mesh = TestMesh::new();
    mesh.host = Some(host);
    mesh.plugins.retain(|(m, _)| m != "postgres");
    mesh.plugins.push(("postgres".into(), path));
    mesh.run_modules(&["postgres"], Mode::Adopt).await
}

#[tokio::test]
async fn a_component_of_24_core_instances_loads_and_runs() {
    let ran = run_component(crate::support::host(), many_instances("")).await;
    ran.assert_adopted("postgres");
    let Some(ModuleOutcome::Adopted(summary)) = ran.report.outcome("postgres") else { unreachable!() };
    assert_eq!(summary, "adopted by a component of 24 core instances");
}

#[tokio::test]
async fn a_component_past_the_core_instance_limit_is_refused_naming_the_limit() {
    static HOST: OnceLock<PluginHost> = OnceLock::new();
    let host = HOST.get_or_init(|| {
        PluginHost::new(Limits { core_instances_per_plugin: 16, ..Limits::default() }).expect("plugin host")
    });
    let ran = run_component(host, many_instances("")).await;
    assert_mentions(
        ran.failure("postgres"),
        &[
            "failed to load plugin",
            "24 core module instances",
            "this host allows 16 core instances per plugin",
            "limits.core_instances_per_plugin",
        ],
    );
    assert_eq!(ran.failure("postgres").matches("this host allows 16").count(), 1, "{}", ran.failure("postgres"));
    untouched(&ran);
}

#[tokio::test]
async fn a_component_whose_memory_starts_past_the_cap_is_stopped_naming_the_limit_once() {
    static HOST: OnceLock<PluginHost> = OnceLock::new();
    let host = HOST.get_or_init(|| PluginHost::new(Limits { memory_bytes: 1 << 20, ..Limits::default() }).unwrap());
    // 17 pages (1.06 MiB) to start with, past a cap of 1 MiB.
    let ran = run_component(host, many_instances("")).await;
    let failure = ran.failure("postgres");
    assert_mentions(failure, &["this host allows each memory 1 MiB", "raise limits.memory_bytes"]);
    assert_eq!(failure.matches("limits.memory_bytes").count(), 1, "{failure}");
    untouched(&ran);
}

#[tokio::test]
async fn imports_outside_the_sandbox_are_refused_naming_each_and_what_is_offered() {
    let imports = r#"  (import "wasi:keyvalue/store@0.2.0" (instance))
  (import "wasi:cli/stdout@0.3.0" (instance))"#;
    let ran = run_component(crate::support::host(), many_instances(imports)).await;
    assert_mentions(
        ran.failure("postgres"),
        &[
            "it imports what this sandbox does not offer",
            "`wasi:keyvalue/store@0.2.0`",
            "`wasi:cli/stdout@0.3.0` is WASI 0.3; this host offers `wasi:cli/stdout` at 0.2.x",
            "a plugin may import the contract (mesh:adopt@0.1.0 and 0.2.0)",
            "wasi:clocks/monotonic-clock (the mesh's clock",
            "wasi:http/*",
        ],
    );
    untouched(&ran);
}

#[test]
fn the_plugin_limits_are_range_checked_naming_the_option_the_value_and_the_range() {
    let dir = tempfile::tempdir().unwrap();
    for (option, value, range) in [
        ("--plugin-wall-time", "0s", "1s..=86400s"),
        ("--plugin-wall-time", "25h", "1s..=86400s"),
        ("--plugin-time", "2h", "1s..=3600s"),
        ("--plugin-memory", "8", "16..=4096"),
    ] {
        let out = mesh_adopt().args(["check", option, value, "--catalogue"]).arg(dir.path()).output();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_mentions(&stderr, &[option, value, range]);
    }
}

/// A plugin written in Python, built by componentize-py from `tests/python/app.py`. Not run
/// by default: it needs `componentize-py` on the PATH (`pip install componentize-py`), and a
/// debug host takes a minute or two to compile its 18 MB.
#[tokio::test]
#[ignore = "needs componentize-py; run with `cargo test --test it -- --ignored componentize_py`"]
async fn a_componentize_py_plugin_loads_is_seeded_and_stopped_at_its_wall_deadline() {
    let out = tempfile::tempdir().unwrap().keep();
    let wasm = out.join("adopt_python.wasm");
    let built = Command::new("componentize-py")
        .arg("-d")
        .arg(root().join("wit/0.1.0"))
        .args(["-w", "adopter", "componentize", "app", "-p"])
        .arg(root().join("tests/python"))
        .arg("-o")
        .arg(&wasm)
        .output()
        .expect("componentize-py is installed (pip install componentize-py)");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let info = wall_host().describe(&wasm).unwrap();
    assert!(info.loads.is_ok(), "{:?}", info.loads);
    assert!(info.imports.iter().any(|i| i.starts_with("wasi:filesystem/")), "{:?}", info.imports);
    let run = || async {
        let mut mesh = TestMesh::new();
        mesh.host = Some(wall_host());
        mesh.plugins.retain(|(m, _)| m != "postgres");
        mesh.plugins.push(("postgres".into(), wasm.clone()));
        let started = Instant::now();
        let ran = tokio::time::timeout(Duration::from_secs(600), mesh.run_modules(&["postgres"], Mode::Adopt))
            .await
            .expect("the run ended");
        (ran, started.elapsed())
    };
    let (first, _) = run().await;
    let (second, took) = run().await;
    assert_mentions(
        first.failure("postgres"),
        &[
            "stopped: waited past its deadline of 2s",
            "`wasi:clocks/monotonic-clock.subscribe-instant` of an instant 3600s ahead",
            "its stdout:\n  python checks postgres",
        ],
    );
    let said = first.transcript.said("postgres");
    assert!(said[0].starts_with("random: "), "{said:?}");
    assert_eq!(said[1], "time: 1735689600");
    assert_eq!(said, second.transcript.said("postgres"), "the same seed draws the same numbers");
    assert!(took < WALL, "stopped in {took:?} once compiled");
    untouched(&first);
}

/// A plugin written in JavaScript, built by componentize-js from `tests/js/app.js`. Not run
/// by default: it needs node and npm (`npx` fetches componentize-js), and a debug host takes
/// a minute to compile its 12 MB.
#[tokio::test]
#[ignore = "needs node and npm; run with `cargo test --test it -- --ignored componentize_js`"]
async fn a_componentize_js_plugin_loads_is_seeded_and_stopped_when_it_fetches() {
    let out = tempfile::tempdir().unwrap().keep();
    let wasm = out.join("adopt_js.wasm");
    let built = Command::new("npx")
        .args(["--yes", "--package", "@bytecodealliance/componentize-js@0.23.0", "componentize-js"])
        .arg(root().join("tests/js/app.js"))
        .arg("--wit")
        .arg(root().join("wit/0.1.0"))
        .args(["--world-name", "adopter", "--out"])
        .arg(&wasm)
        .current_dir(&out)
        .output()
        .expect("npx is installed");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let run = || async {
        let mut mesh = TestMesh::new();
        mesh.host = Some(wall_host());
        mesh.plugins.retain(|(m, _)| m != "postgres");
        mesh.plugins.push(("postgres".into(), wasm.clone()));
        tokio::time::timeout(Duration::from_secs(600), mesh.run_modules(&["postgres"], Mode::Adopt))
            .await
            .expect("the run ended")
    };
    let (first, second) = (run().await, run().await);
    assert_mentions(
        first.failure("postgres"),
        &["the sandbox gives no http access: the plugin called `wasi:http/types.", "its stdout:\n  js checks postgres"],
    );
    let said = first.transcript.said("postgres");
    assert!(said[0].starts_with("random: "), "{said:?}");
    assert_eq!(said[1], "time: 1735689600000");
    assert_eq!(said, second.transcript.said("postgres"), "the same seed draws the same numbers");
    untouched(&first);
}

#[tokio::test]
async fn host_calls_are_counted_per_export_call_even_when_adopt_follows_check_on_one_instance() {
    static HOST: std::sync::OnceLock<mesh_adopt_runtime::PluginHost> = std::sync::OnceLock::new();
    let host = HOST.get_or_init(|| {
        let limits = mesh_adopt_runtime::Limits { host_calls: 50, ..mesh_adopt_runtime::Limits::default() };
        mesh_adopt_runtime::PluginHost::new(limits).expect("plugin host")
    });
    // Thirty calls in check and some forty in adopt: each export within fifty, the two
    // together over it.
    let mut mesh = TestMesh::new().with_plugin("postgres", "calls_in_both");
    mesh.host = Some(host);
    let ran = mesh.run_modules(&["postgres"], mesh_adopt_runtime::Mode::Adopt).await;
    ran.assert_adopted("postgres");
}
