//! What a plugin costs: cold compile, a cache-hit load (alone, beside wasmtime's own floor,
//! and with an instantiation), a host call's round trip, one `check` export, phase three on
//! the simulator beside the same rules written natively, and the fault sweep of the shipped
//! scenarios.
//!
//! Run with `just bench` (plugins built first). Figures and ratios go in BENCHMARKS.md.

mod native;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::bench::{self, Permissions, RunEnv};
use mesh_adopt_runtime::mesh::simulated::{FaultEffect, SimSetup, SimulatedMesh};
use mesh_adopt_runtime::plan::Context;
use mesh_adopt_runtime::plugin::CodeKind;
use mesh_adopt_runtime::plugin::CompileCache;
use mesh_adopt_runtime::record::transcript::Transcript;
use mesh_adopt_runtime::{Catalogue, Foundation};
use mesh_adopt_runtime::{Mode, PHASE_THREE, Run, RunOptions};
use mesh_adopt_testkit as scenario;
use wasmtime::component::Component;

fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).canonicalize().unwrap()
}

fn built(crate_name: &str) -> PathBuf {
    let path = root().join("plugins/target/wasm32-wasip2/release").join(format!("{crate_name}.wasm"));
    assert!(path.is_file(), "`{}` is missing: run `just build-plugins`", path.display());
    path
}

struct Fixture {
    catalogue: Catalogue,
    foundation: Foundation,
    credentials: Arc<Credentials>,
    options: RunOptions,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = root().join("catalogue");
        Fixture {
            foundation: Foundation::load(&dir.join("foundation.json")).unwrap(),
            credentials: Arc::new(Credentials::open(&dir.join("genesis/credentials"))),
            catalogue: Catalogue::at(dir),
            options: RunOptions {
                node: "node-1".into(),
                catalog_source: Some(mesh_adopt_runtime::options::CatalogSource {
                    repository: "https://git.mesh.local/catalogue.git".into(),
                    reference: None,
                }),
                wait: Duration::from_secs(120),
            },
        }
    }

    fn mesh(&self) -> Arc<SimulatedMesh> {
        Arc::new(SimulatedMesh::new(SimSetup::new(self.foundation.clone(), &self.options.node)))
    }

    /// The context a run would hand `module`'s plugin.
    fn context(&self, host: &PluginHost, env: &RunEnv, module: &str, manifest: Vec<u8>) -> Context {
        let declared = Arc::new(mesh_adopt_runtime::manifest::ModuleManifest::parse(&manifest).unwrap_or_default());
        let run = Run::builder(host, &self.catalogue, &self.foundation, env.mesh.clone())
            .credentials(self.credentials.clone())
            .record(env.transcript.clone())
            .options(self.options.clone())
            .build();
        run.context(module, manifest, declared)
    }

    fn env(&self, module: &str) -> RunEnv {
        RunEnv {
            module: module.into(),
            turns_at_calls: true,
            mesh: self.mesh(),
            credentials: self.credentials.clone(),
            transcript: Arc::new(Transcript::default()),
            permissions: Permissions {
                module: module.into(),
                node: self.options.node.clone(),
                catalog_source: None,
                secrets: Vec::new(),
                manifest_bytes: std::sync::Arc::from(&b"{}"[..]),
                granted: Default::default(),
                manifest: String::new(),
                credential_holders: Default::default(),
                hands_over: Default::default(),
            },
        }
    }
}

const PLUGINS: [(&str, &str); 3] =
    [("postgres", "adopt_postgres"), ("nats", "adopt_nats"), ("mesh-vault", "adopt_mesh_vault")];

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()
}

fn cold_compile(c: &mut Criterion) {
    let host = PluginHost::new(Limits::default()).unwrap();
    let mut group = c.benchmark_group("cold_compile");
    group.sample_size(10);
    for (module, crate_name) in PLUGINS {
        let bytes = std::fs::read(built(crate_name)).unwrap();
        // Optimised code by its plugin's name, as before there were two kinds.
        group.bench_function(module, |b| b.iter(|| host.precompile(&bytes).unwrap()));
        group.bench_function(format!("baseline/{module}"), |b| {
            b.iter(|| host.precompile_as(CodeKind::Baseline, &bytes).unwrap())
        });
    }
    group.finish();
}

/// A cache-hit load alone: with the in-process table of linked plugins emptied, the plugin
/// found by its file's identity (its sha256 known from the first load in this process), its
/// compile cache entry mapped and checked (trailer, key, checksum), deserialized from that
/// mapping, its world checked and linked. Nothing is instantiated, and dropping the plugin
/// loaded before is not timed. Beside it, `engine_floor`: wasmtime alone mapping and
/// deserializing the same precompiled artefact from a plain file, what no cache can beat.
fn cache_hit_load(c: &mut Criterion) {
    let cache_dir = tempfile::tempdir().unwrap();
    let host =
        PluginHost::new(Limits::default()).unwrap().with_cache(CompileCache::open(cache_dir.path()).unwrap()).unwrap();
    let mut group = c.benchmark_group("cache_hit_load");
    for (module, crate_name) in PLUGINS {
        let path = built(crate_name);
        host.load(&path).unwrap();
        group.bench_function(module, |b| {
            b.iter_batched(|| host.forget_linked(), |()| host.load(&path).unwrap(), BatchSize::PerIteration)
        });
        // The cache's own part: open, map, checksum and key checked, then wasmtime's load.
        let cache = CompileCache::open(cache_dir.path()).unwrap();
        let digest = host.describe(&path).unwrap().digest;
        group.bench_function(format!("cache_get/{module}"), |b| {
            b.iter_with_large_drop(|| {
                bench::cache_get(&cache, bench::engine(&host), CodeKind::Optimised, &digest).unwrap()
            })
        });
        let plain = cache_dir.path().join(format!("{module}.plain.cwasm"));
        std::fs::write(&plain, host.precompile(&std::fs::read(&path).unwrap()).unwrap()).unwrap();
        group.bench_function(format!("engine_floor/{module}"), |b| {
            // SAFETY: the file was written just above by this engine's own compiler.
            b.iter_with_large_drop(|| unsafe { Component::deserialize_file(bench::engine(&host), &plain) }.unwrap())
        });
    }
    group.finish();
}

fn load_and_instantiate(c: &mut Criterion) {
    let rt = runtime();
    let fixture = Fixture::new();
    let cache_dir = tempfile::tempdir().unwrap();
    let host =
        PluginHost::new(Limits::default()).unwrap().with_cache(CompileCache::open(cache_dir.path()).unwrap()).unwrap();
    let mut group = c.benchmark_group("load_instantiate");
    for (module, crate_name) in PLUGINS {
        let path = built(crate_name);
        host.load(&path).unwrap();
        let env = fixture.env(module);
        // From the disk cache: map, verify, deserialize, link, instantiate.
        group.bench_function(format!("cache_hit/{module}"), |b| {
            b.to_async(&rt).iter(|| async {
                host.forget_linked();
                let plugin = host.load(&path).unwrap();
                bench::instantiate_idle(&host, &plugin, &env).await.unwrap();
            })
        });
        // Already linked in this process: instantiate only.
        let plugin = host.load(&path).unwrap();
        group.bench_function(format!("linked/{module}"), |b| {
            b.to_async(&rt).iter(|| async { bench::instantiate_idle(&host, &plugin, &env).await.unwrap() })
        });
    }
    group.finish();
}

fn host_call(c: &mut Criterion) {
    let rt = runtime();
    let fixture = Fixture::new();
    let host = PluginHost::new(Limits::default()).unwrap();
    let plugin = host.load(&built("calls_clock")).unwrap();
    let env = fixture.env("calls-clock");
    let ctx = fixture.context(&host, &env, "calls-clock", b"{}".to_vec());
    let mut group = c.benchmark_group("host_call");
    group.throughput(Throughput::Elements(100_000));
    group.sample_size(20);
    group.bench_function("clock_now_x100000", |b| {
        let plan = mesh_adopt_runtime::plan::Plan { summary: Vec::new(), commands: Vec::new() };
        b.to_async(&rt)
            .iter(|| async { bench::adopt(&host, &plugin, &env, &ctx, &plan).await.unwrap().result.unwrap() })
    });
    group.finish();
}

/// `check` alone on a plugin already linked: instantiating, lowering the context into it,
/// the plugin's own reading of its manifest and foundation, and lifting the plan it returns.
/// Beside `load_instantiate/linked/*` it shows what one export call adds to an instance.
fn check_export(c: &mut Criterion) {
    let rt = runtime();
    let fixture = Fixture::new();
    let host = PluginHost::new(Limits::default()).unwrap();
    let mut group = c.benchmark_group("check");
    for (module, crate_name) in PLUGINS {
        let plugin = host.load(&built(crate_name)).unwrap();
        let found = fixture.catalogue.module(module).unwrap();
        let mut env = fixture.env(module);
        env.permissions.granted = found.adopt.grants.clone();
        let ctx = fixture.context(&host, &env, module, found.manifest);
        group.bench_function(module, |b| {
            b.to_async(&rt).iter(|| async { bench::check(&host, &plugin, &env, &ctx).await.unwrap().unwrap() })
        });
    }
    group.finish();
}

fn phase_three(c: &mut Criterion) {
    let rt = runtime();
    let fixture = Fixture::new();
    let host = PluginHost::new(Limits::default()).unwrap();
    let modules: Vec<String> = PHASE_THREE.iter().map(|m| m.to_string()).collect();
    let mut group = c.benchmark_group("phase_three");
    // The shipped plugins as built now (contract 0.2.0) and as built for 0.1.0, kept as
    // fixtures: the same rules, each version's way of handing them the manifest and commands.
    let fixtures = root().join("tests/fixtures/contract-0.1.0");
    for (name, contract_0_1) in [("plugins", false), ("plugins_0.1.0", true)] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter_batched(
                || fixture.mesh(),
                |mesh| {
                    let (host, fixture, modules, fixtures) = (&host, &fixture, &modules, &fixtures);
                    async move {
                        let mut run = Run::builder(host, &fixture.catalogue, &fixture.foundation, mesh)
                            .credentials(fixture.credentials.clone())
                            .record(Arc::new(Transcript::default()))
                            .options(fixture.options.clone());
                        if contract_0_1 {
                            for module in modules {
                                run = run.plugin_override(module, fixtures.join(format!("{module}.wasm")));
                            }
                        }
                        assert!(run.build().run(modules, Mode::Adopt).await.succeeded());
                    }
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.bench_function("native", |b| {
        b.to_async(&rt).iter_batched(
            || fixture.mesh(),
            |mesh| {
                let fixture = &fixture;
                async move {
                    let native = native::Native {
                        catalogue: &fixture.catalogue,
                        foundation: &fixture.foundation,
                        credentials: &fixture.credentials,
                        mesh: mesh.as_ref(),
                        options: &fixture.options,
                    };
                    native.phase_three().await.unwrap();
                }
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// The fault sweep of every shipped scenario, as `mesh-adopt test --sweep` runs it but with
/// the plugins already linked: each scenario read and made ready in memory, its clean run
/// and rerun, then every call failed in turn and timed out in turn, each faulted run run
/// again. Beside it, one step of one scenario: a faulted run and its rerun.
fn sweep(c: &mut Criterion) {
    let rt = runtime();
    let host = PluginHost::new(Limits::default()).unwrap();
    let catalogue = root().join("catalogue");
    let files = scenario::discover(&[root().join("plugins"), catalogue.clone()]).unwrap();
    // Each sweep shares its steps among a thread per core, on runtimes of their own.
    let sweep_all = || {
        let mut steps = 0;
        for file in &files {
            let swept = scenario::sweep(&host, &catalogue, file).unwrap();
            assert_eq!(swept.survived, swept.steps, "{}: {:?}", file.label, swept.problems);
            steps += swept.steps;
        }
        steps
    };
    let steps = sweep_all();
    let mut group = c.benchmark_group("sweep");
    // A sweep takes about a second: one per sample, not criterion's growing batches.
    group.sample_size(10).sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(15));
    group.throughput(Throughput::Elements(steps as u64));
    group.bench_function("shipped", |b| b.iter(sweep_all));
    let file = files.iter().find(|f| f.label == "postgres/adopts-in-place").unwrap();
    let prepared = scenario::prepare(&scenario::Documents::read(&catalogue).unwrap(), file).unwrap();
    let fault = || Some((3, FaultEffect::Fail("injected fault: the mesh said no".into())));
    group.throughput(Throughput::Elements(1));
    group.sample_size(50).sampling_mode(SamplingMode::Auto).measurement_time(Duration::from_secs(5));
    group.bench_function("one_step/postgres-adopts-in-place", |b| {
        b.to_async(&rt).iter(|| async {
            let faulted = prepared.run(&host, fault()).await;
            prepared.run_again(&host, &faulted).await
        })
    });
    group.finish();
}

/// How soon a run cancelled while its plugins compile cold ends: each sample a host with no
/// cache (so every plugin compiles), a run of phase three's check on a current-thread runtime,
/// cancelled 20 ms in, timed from when the cancel fell due to when the run's future was gone.
/// A compile holding the executor's thread would hold the cancel until it ended.
fn cancel_during_compile(c: &mut Criterion) {
    let fixture = Fixture::new();
    let modules: Vec<String> = PHASE_THREE.iter().map(|m| m.to_string()).collect();
    let mut group = c.benchmark_group("cancel");
    group.sample_size(20).sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(20));
    group.bench_function("during_cold_compile", |b| {
        b.iter_custom(|iterations| {
            let mut late = Duration::ZERO;
            for _ in 0..iterations {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                let cold = PluginHost::new(Limits::default()).unwrap();
                late += rt.block_on(async {
                    let run = Run::builder(&cold, &fixture.catalogue, &fixture.foundation, fixture.mesh())
                        .credentials(fixture.credentials.clone())
                        .options(fixture.options.clone())
                        .build();
                    let due = tokio::time::Instant::now() + Duration::from_millis(20);
                    tokio::select! {
                        _ = run.run(&modules, Mode::Check) => panic!("three cold compiles ended within 20 ms"),
                        () = tokio::time::sleep_until(due) => {}
                    }
                    due.elapsed()
                });
            }
            late
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    cancel_during_compile,
    cold_compile,
    cache_hit_load,
    load_and_instantiate,
    host_call,
    check_export,
    phase_three,
    sweep
);
criterion_main!(benches);
