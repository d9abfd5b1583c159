//! One export call in a fresh sandbox: the store set up for it (its caps, its state, the
//! guest-time check at every epoch tick), the WASI of [`crate::sandbox`] with stdout and
//! stderr captured, the plugin instantiated and its export run by the call's wall deadline,
//! and, if the sandbox stopped it, the report of why and where.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::Result;
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store, StoreLimitsBuilder, UpdateDeadline};
use wasmtime_wasi::WasiCtx;

use crate::model::digest::Sha256;
use crate::model::stop::{StopKind, StopReason};
use crate::model::{Export, Stopped};
use crate::sandbox::deadline::Deadline;
use crate::sandbox::limits::Limits;
use crate::sandbox::state::{Caps, RunEnv, RunState};
use crate::sandbox::{self, Captured, MeshMonotonicClock, MeshWallClock};

/// How much of a plugin's stdout and of its stderr is kept for a stop report.
const OUTPUT_CAPTURE_BYTES: usize = 16 << 10;

/// The plugin a call runs, as the store is made for it and a stop report names it.
pub(crate) struct Callee<'a> {
    /// The file it was loaded from.
    pub(crate) path: &'a Path,
    /// Its sha256, hex.
    pub(crate) digest: &'a Sha256,
    /// The engine its code was compiled for.
    pub(crate) engine: &'a Engine,
}

/// One export call in a fresh sandbox: a store set up for it, `export` (which instantiates
/// the plugin and calls it) run by the call's wall deadline, and a stop report if it was
/// stopped.
pub(crate) async fn call<T>(
    limits: &Limits,
    plugin: Callee<'_>,
    env: &RunEnv,
    phase: Export,
    export: impl AsyncFnOnce(&mut Store<RunState>) -> Result<T>,
) -> std::result::Result<T, Stopped> {
    let output = Output::new();
    let deadline = Deadline::new(env.mesh.clone(), limits.wall_time, limits.wasi_wait);
    let mut store = store(limits, plugin.engine, env, phase, wasi(env, &output), deadline.clone());
    let outcome = run_by_deadline(&mut store, &deadline, export).await;
    outcome.map_err(|error| {
        let state = store.data_mut();
        let last_call = std::mem::take(&mut state.last_call);
        let kind = if state.store_limits.memory_refused { StopKind::Memory } else { StopKind::of(&error) };
        stop_report(limits, &plugin, env, state.phase, &last_call, &output, (error, kind))
    })
}

/// The WASI of [`crate::sandbox`] for one call: stdout and stderr captured into
/// `output`, the mesh's clocks, no network, and random numbers seeded from the run's seed
/// (per module) when the mesh has one.
fn wasi(env: &RunEnv, output: &Output) -> WasiCtx {
    let mut wasi = WasiCtx::builder();
    wasi.stdout(output.stdout.clone())
        .stderr(output.stderr.clone())
        .wall_clock(MeshWallClock { mesh: env.mesh.clone() })
        .monotonic_clock(MeshMonotonicClock { mesh: env.mesh.clone() })
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    if let Some(seed) = env.mesh.seed() {
        use rand::SeedableRng as _;
        let seed = sandbox::module_seed(seed, &env.module);
        wasi.secure_random(rand::rngs::StdRng::seed_from_u64(seed))
            .insecure_random(rand::rngs::StdRng::seed_from_u64(seed.rotate_left(32)))
            .insecure_random_seed(u128::from(seed) << 64 | u128::from(!seed));
    }
    wasi.build()
}

/// A store for one call, on the engine of the plugin's code: its caps (memory, instances, memories, tables), its state, and
/// the guest-time check at every epoch tick.
fn store(
    limits: &Limits,
    engine: &Engine,
    env: &RunEnv,
    phase: Export,
    wasi: WasiCtx,
    deadline: Arc<Deadline>,
) -> Store<RunState> {
    let state = RunState {
        wasi,
        table: ResourceTable::new(),
        store_limits: Caps {
            limits: StoreLimitsBuilder::new()
                .memory_size(limits.memory_bytes)
                .instances(limits.core_instances_per_plugin as usize)
                .memories(limits.memories_per_plugin as usize)
                .tables(limits.tables_per_plugin as usize)
                .trap_on_grow_failure(true)
                .build(),
            memory_refused: false,
        },
        env: env.clone(),
        phase,
        limits: limits.clone(),
        said: 0,
        started: Instant::now(),
        in_host: Duration::ZERO,
        last_call: String::new(),
        pending_timeout: None,
        plan: None,
        calls: 0,
        carried_secrets: Default::default(),
        carried_manifests: Default::default(),
        cap_reached: None,
        deadline,
    };
    let mut store = Store::new(engine, state);
    store.limiter(|s| &mut s.store_limits);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|ctx| at_epoch_tick(ctx.data()));
    store
}

/// Runs `export`, ending by the wall deadline whatever the plugin waits on: past it, the
/// plugin's future is dropped, its instance with it.
async fn run_by_deadline<T>(
    store: &mut Store<RunState>,
    deadline: &Deadline,
    export: impl AsyncFnOnce(&mut Store<RunState>) -> Result<T>,
) -> Result<T> {
    let work = export(store);
    tokio::select! {
        biased;
        outcome = work => outcome,
        (kind, why) = deadline.stopped() => Err(StopReason::error(kind, why)),
    }
}

/// The report of a plugin the sandbox stopped: why (with the limit to raise, if one was
/// hit), its last host call, what it wrote (scrubbed of secrets, a line at a time with
/// control characters made visible, so none of it can pass for a line of the report's
/// own), what it had already done, and where it was.
fn stop_report(
    limits: &Limits,
    plugin: &Callee<'_>,
    env: &RunEnv,
    phase: Export,
    last_call: &str,
    output: &Output,
    (error, kind): (wasmtime::Error, StopKind),
) -> Stopped {
    let (mut why, backtrace) = stop_words(&error);
    if let Some(hint) = limits.limit_hint(&why).filter(|hint| !why.contains(hint.as_str())) {
        why.push_str(&format!(" ({hint})"));
    }
    let mut message = format!(
        "the `{}` plugin (`{}`, sha256 {}) was stopped during `{phase}`: {why}",
        env.module,
        plugin.path.display(),
        plugin.digest.short()
    );
    if !last_call.is_empty() {
        message.push_str(&format!("\nits last host call: {}", crate::record::screen::visible(last_call)));
    }
    for (name, captured) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        let text = captured.text(|text, cut| scrubbed_output(env, text, cut, &format!("its {name}")));
        if !text.is_empty() {
            let lines: Vec<String> =
                text.lines().map(|l| format!("  | {}", crate::record::screen::visible(l))).collect();
            message.push_str(&format!("\nits {name}:\n{}", lines.join("\n")));
        }
    }
    let done = env.transcript.effects(&env.module);
    if done.is_empty() {
        message.push_str("\nit had changed nothing on the mesh");
    } else {
        message.push_str(&format!("\nwhat it had already done:\n  {}", done.join("\n  ")));
    }
    if let Some(backtrace) = backtrace {
        message.push_str(&format!("\nwhere it was:\n  {}", backtrace.replace('\n', "\n  ")));
    }
    Stopped { during: phase, kind, report: message }
}

/// What one call's plugin writes to stdout and stderr, kept for a stop report.
struct Output {
    stdout: Captured,
    stderr: Captured,
}

impl Output {
    fn new() -> Output {
        Output { stdout: Captured::new(OUTPUT_CAPTURE_BYTES), stderr: Captured::new(OUTPUT_CAPTURE_BYTES) }
    }
}

/// What the store checks at every epoch tick: a cap the plugin reached stops it, and so
/// does more than its guest time (its time apart from host calls and WASI waits). Otherwise
/// it yields to the executor, so a plugin computing without host calls still lets the
/// program notice an interrupt (SIGINT) or another deadline.
fn at_epoch_tick(state: &RunState) -> wasmtime::Result<UpdateDeadline> {
    if let Some(cap) = &state.cap_reached {
        return Err(StopReason::error(StopKind::Limit, cap.to_string()));
    }
    let waited = state.in_host + state.deadline.waited();
    let guest = state.started.elapsed().saturating_sub(waited);
    if guest > state.limits.guest_time {
        return Err(StopReason::error(
            StopKind::GuestTime,
            format!("it ran for more than its {:?} of guest time", state.limits.guest_time),
        ));
    }
    Ok(UpdateDeadline::Yield(1))
}

/// `text` a plugin wrote at `place` with secret values replaced by their names (and, when
/// the capture was `cut`, what is left of one at its end); a value found is recorded as
/// shown there, which fails the run.
fn scrubbed_output(env: &RunEnv, text: String, cut: bool, place: &str) -> String {
    let (text, found) = if cut { env.credentials.redact_cut(text) } else { env.credentials.redact(text) };
    if let Some(secret) = found {
        env.transcript.record(crate::record::transcript::Entry::SecretShown {
            module: env.module.clone(),
            secret,
            place: place.into(),
        });
    }
    text
}

/// How many frames of a plugin's wasm backtrace a stop report shows.
const BACKTRACE_FRAMES: usize = 8;

/// Why a plugin was stopped, and apart from it the innermost frames of its wasm backtrace
/// when there is one: the reason comes first in a report, not after the frames.
fn stop_words(error: &wasmtime::Error) -> (String, Option<String>) {
    let Some(backtrace) = error.downcast_ref::<wasmtime::WasmBacktrace>() else {
        return (format!("{error:#}"), None);
    };
    // Each frame is written here, its names (the plugin's own, from its name section) with
    // control characters made visible: a name holding a newline cannot forge a line.
    let frames: Vec<String> = backtrace
        .frames()
        .iter()
        .enumerate()
        .map(|(i, frame)| {
            let module = frame.module().name().unwrap_or("<unknown>");
            let func =
                frame.func_name().map_or_else(|| format!("<wasm function {}>", frame.func_index()), String::from);
            let at = frame.module_offset().map_or(String::new(), |o| format!("{o:#x} - "));
            crate::record::screen::visible(&format!("{i}: {at}{module}!{func}"))
        })
        .collect();
    let mut shown = frames.iter().take(BACKTRACE_FRAMES).cloned().collect::<Vec<_>>().join("\n");
    if frames.len() > BACKTRACE_FRAMES {
        shown.push_str(&format!("\n… ({} more frames)", frames.len() - BACKTRACE_FRAMES));
    }
    (error.root_cause().to_string(), (!frames.is_empty()).then_some(shown))
}
