//! The WASI a plugin gets, as a stated list, and the stubs for what toolchains import but a
//! plugin may not use.
//!
//! Offered ([`OFFERED`]): standard input (empty), output and error (captured for the stop
//! report), the environment (empty: no variables, no arguments, no working directory), exit,
//! the clocks (the mesh's: virtual on the simulator, and every wait bounded by the call's
//! deadline), random numbers (seeded from the run's seed on the simulator), and the
//! `wasi:io` plumbing these need.
//!
//! Stubbed ([`STUBBED`]): `wasi:filesystem/*`, `wasi:sockets/*` and `wasi:http/*`. Toolchains
//! import them whether or not a program uses them (componentize-js with its default
//! features imports `wasi:http`; the JavaScript SDK's build leaves that feature out), so a
//! component importing them loads; each of their functions stops the plugin
//! with "the sandbox gives no filesystem access" (or network, or http) when called. The one
//! preopened directory is `/`, so a path a plugin opens reaches such a stub and is named in
//! the message, instead of failing as a file that is not there.
//!
//! Anything else a component imports is refused at load, naming each such import and
//! listing what is offered.

pub(crate) mod call;
pub(crate) mod deadline;
pub mod grants;
pub(crate) mod imports;
pub mod limits;
pub(crate) mod state;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Result, anyhow, bail};
use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, HasSelf, Linker, Resource, ResourceAny, ResourceType, Val};
use wasmtime::{Engine, StoreContextMut};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock;
use wasmtime_wasi::p2::{DynPollable, OutputStream, Pollable, StreamError, StreamResult, subscribe};
use wasmtime_wasi::{HostMonotonicClock, HostWallClock};

use crate::error::{StopKind, StopReason};
use crate::mesh::Mesh;
use crate::sandbox::deadline::Deadline;
use crate::sandbox::state::RunState;

/// The WASI interfaces a plugin may import (any `0.2.x` version), with what each gives.
pub const OFFERED: &[(&str, &str)] = &[
    ("wasi:cli/environment", "no variables, no arguments"),
    ("wasi:cli/exit", ""),
    ("wasi:cli/stdin", "empty"),
    ("wasi:cli/stdout", "captured for the stop report"),
    ("wasi:cli/stderr", "captured for the stop report"),
    ("wasi:cli/terminal-input", "not a terminal"),
    ("wasi:cli/terminal-output", "not a terminal"),
    ("wasi:cli/terminal-stdin", "not a terminal"),
    ("wasi:cli/terminal-stdout", "not a terminal"),
    ("wasi:cli/terminal-stderr", "not a terminal"),
    ("wasi:clocks/monotonic-clock", "the mesh's clock; waits end by the call's deadline"),
    ("wasi:clocks/wall-clock", "the mesh's clock"),
    ("wasi:random/random", "seeded per run on the simulator, the system's on a live mesh"),
    ("wasi:random/insecure", "seeded per run on the simulator, the system's on a live mesh"),
    ("wasi:random/insecure-seed", "seeded per run on the simulator, the system's on a live mesh"),
    ("wasi:io/error", ""),
    ("wasi:io/poll", ""),
    ("wasi:io/streams", ""),
];

/// WASI namespaces a plugin may import but not use: each call stops it. Keyed by prefix, with
/// the access the message says the sandbox does not give.
pub const STUBBED: &[(&str, &str)] =
    &[("wasi:filesystem/", "filesystem"), ("wasi:sockets/", "network"), ("wasi:http/", "http")];

/// The contract's interfaces; their version is checked apart, naming both versions.
const CONTRACT_INTERFACES: &[&str] = &["types", "control", "machine", "log", "clock"];

/// The WASI version line this host implements.
const WASI_VERSION: &str = "0.2";

/// One import as the sandbox sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fit {
    /// Linked as offered.
    Offered,
    /// Linked as a stub; calls stop the plugin saying the sandbox gives no `access`.
    Stubbed { access: &'static str },
    /// Refused, with why.
    Refused(String),
}

/// `wasi:cli/stdout@0.2.3` as (`wasi:cli/stdout`, `Some("0.2.3")`).
fn split_version(name: &str) -> (&str, Option<&str>) {
    match name.split_once('@') {
        Some((base, version)) => (base, Some(version)),
        None => (name, None),
    }
}

/// How the sandbox links the import `name`, an interface (an instance) or not.
fn classify(name: &str, is_interface: bool) -> Fit {
    if !is_interface {
        return Fit::Refused(format!("`{name}` is not an interface"));
    }
    let (base, version) = split_version(name);
    if let Some(rest) = base.strip_prefix(&format!("{}/", crate::model::contract::PACKAGE)) {
        return if CONTRACT_INTERFACES.contains(&rest) {
            Fit::Offered
        } else {
            Fit::Refused(format!("`{name}` is not an interface of the contract"))
        };
    }
    if let Some((_, access)) = STUBBED.iter().find(|(prefix, _)| base.starts_with(prefix)) {
        return Fit::Stubbed { access };
    }
    if OFFERED.iter().any(|(offered, _)| *offered == base) {
        let line = version.map(|v| v.split('.').take(2).collect::<Vec<_>>().join("."));
        return match line.as_deref() {
            Some(WASI_VERSION) => Fit::Offered,
            Some(other) => {
                Fit::Refused(format!("`{name}` is WASI {other}; this host offers `{base}` at {WASI_VERSION}.x"))
            }
            None => Fit::Refused(format!("`{name}` has no version; this host offers `{base}@{WASI_VERSION}.x`")),
        };
    }
    Fit::Refused(format!("`{name}`"))
}

/// What the sandbox offers, in words, for a refusal.
pub fn offered_in_words() -> String {
    let offered: Vec<String> = OFFERED
        .iter()
        .map(|(name, what)| if what.is_empty() { name.to_string() } else { format!("{name} ({what})") })
        .collect();
    let stubbed: Vec<String> = STUBBED.iter().map(|(prefix, _)| format!("{prefix}*")).collect();
    format!(
        "a plugin may import the contract ({}@{}) and these WASI {WASI_VERSION}.x interfaces: {}; it may also import {}, \
         which load but stop the plugin when called",
        crate::model::contract::PACKAGE,
        crate::model::contract::Contract::spoken(),
        offered.join(", "),
        stubbed.join(", ")
    )
}

/// The imports of `component` to link as stubs, or an error naming every import that does
/// not fit and what is offered instead.
fn fit(engine: &Engine, component: &Component) -> Result<Vec<(String, &'static str)>> {
    let ty = component.component_type();
    let mut stubs = Vec::new();
    let mut refused = Vec::new();
    for (name, item) in ty.imports(engine) {
        match classify(name, matches!(item.ty, ComponentItem::ComponentInstance(_))) {
            Fit::Offered => {}
            Fit::Stubbed { access } => stubs.push((name.to_string(), access)),
            Fit::Refused(why) => refused.push(why),
        }
    }
    if !refused.is_empty() {
        bail!("it imports what this sandbox does not offer: {}. {}", refused.join(", "), offered_in_words());
    }
    Ok(stubs)
}

/// A resource of a stubbed interface: the plugin may hold and drop one, never use it.
struct Unavailable;

/// Links what every plugin may import, except the contract: the offered WASI interfaces,
/// with the monotonic clock served by the sandbox itself.
pub(crate) fn add_offered_to_linker(linker: &mut Linker<RunState>) -> Result<()> {
    use wasmtime_wasi::p2::bindings::{cli, clocks, random};
    use wasmtime_wasi::{cli::WasiCli, clocks::WasiClocks, random::WasiRandom};
    let l = linker;
    wasmtime_wasi_io::add_to_linker_async(l)?;
    monotonic_clock::add_to_linker::<RunState, HasSelf<RunState>>(l, |s| s)?;
    clocks::wall_clock::add_to_linker::<RunState, WasiClocks>(l, RunState::clocks)?;
    use wasmtime_wasi::clocks::WasiClocksView;
    /// Every draw is told to the mesh, so a replay can say where one may have made it differ.
    fn drawing(s: &mut RunState) -> &mut wasmtime_wasi::random::WasiRandomCtx {
        s.env.mesh.random_drawn(&s.env.module);
        wasmtime_wasi::random::WasiRandomView::random(s)
    }
    random::random::add_to_linker::<RunState, WasiRandom>(l, drawing)?;
    random::insecure::add_to_linker::<RunState, WasiRandom>(l, drawing)?;
    random::insecure_seed::add_to_linker::<RunState, WasiRandom>(l, drawing)?;
    fn cli_view(s: &mut RunState) -> wasmtime_wasi::cli::WasiCliCtxView<'_> {
        wasmtime_wasi::cli::WasiCliView::cli(s)
    }
    cli::exit::add_to_linker::<RunState, WasiCli>(l, cli_view)?;
    cli::environment::add_to_linker::<RunState, WasiCli>(l, cli_view)?;
    cli::stdin::add_to_linker::<RunState, WasiCli>(l, cli_view)?;
    cli::stdout::add_to_linker::<RunState, WasiCli>(l, cli_view)?;
    cli::stderr::add_to_linker::<RunState, WasiCli>(l, cli_view)?;
    cli::terminal_input::add_to_linker::<RunState, WasiCli>(l, cli_view)?;
    cli::terminal_output::add_to_linker::<RunState, WasiCli>(l, cli_view)?;
    cli::terminal_stdin::add_to_linker::<RunState, WasiCli>(l, cli_view)?;
    cli::terminal_stdout::add_to_linker::<RunState, WasiCli>(l, cli_view)?;
    cli::terminal_stderr::add_to_linker::<RunState, WasiCli>(l, cli_view)?;
    Ok(())
}

/// The linker for `component`: `base` when it imports nothing stubbed, else a copy of it
/// with the stubs it imports defined. An error names every import that does not fit.
pub(crate) fn linker_for(
    base: &Linker<RunState>,
    engine: &Engine,
    component: &Component,
) -> Result<Option<Linker<RunState>>> {
    let stubs = fit(engine, component)?;
    if stubs.is_empty() {
        return Ok(None);
    }
    let mut linker = base.clone();
    // A resource an interface only uses (`wasi:io/poll.pollable` in `wasi:sockets/tcp`) was
    // introduced by an import before it and must not be defined again.
    let mut seen: Vec<ResourceType> = Vec::new();
    let ty = component.component_type();
    for (name, item) in ty.imports(engine) {
        let ComponentItem::ComponentInstance(instance) = &item.ty else { continue };
        let access = stubs.iter().find(|(stub, _)| stub == name).map(|(_, access)| *access);
        let Some(access) = access else {
            seen.extend(instance.exports(engine).filter_map(|(_, e)| match e.ty {
                ComponentItem::Resource(r) => Some(r),
                _ => None,
            }));
            continue;
        };
        let (base_name, _) = split_version(name);
        let mut stub = linker.instance(name).map_err(|e| anyhow!("cannot stub `{name}`: {e}"))?;
        for (export, e) in instance.exports(engine) {
            match e.ty {
                ComponentItem::ComponentFunc(func) => {
                    define_stub_func(&mut stub, base_name, export, access, func)?;
                }
                ComponentItem::Resource(r) if !seen.contains(&r) => {
                    seen.push(r);
                    stub.resource(export, ResourceType::host::<Unavailable>(), |_, _| Ok(()))?;
                }
                _ => {}
            }
        }
    }
    Ok(Some(linker))
}

fn define_stub_func(
    stub: &mut wasmtime::component::LinkerInstance<'_, RunState>,
    interface: &str,
    func_name: &str,
    access: &'static str,
    _ty: ComponentFunc,
) -> Result<()> {
    let called = format!("`{interface}.{func_name}`");
    match (interface, func_name) {
        // The one preopened directory, so a path a plugin opens reaches a stub below.
        ("wasi:filesystem/preopens", "get-directories") => {
            stub.func_new(func_name, |mut store: StoreContextMut<'_, RunState>, _, _, results| {
                let root = ResourceAny::try_from_resource(Resource::<Unavailable>::new_own(0), &mut store)?;
                results[0] = Val::List(vec![Val::Tuple(vec![Val::Resource(root), Val::String("/".into())])]);
                Ok(())
            })?;
        }
        // Asked by a C library turning a stream error into errno: not a use of files.
        ("wasi:filesystem/types", "filesystem-error-code") => {
            stub.func_new(func_name, |_, _, _, results| {
                results[0] = Val::Option(None);
                Ok(())
            })?;
        }
        // Bookkeeping a C library does on a preopen before any path is used.
        ("wasi:filesystem/types", "[method]descriptor.get-type") => {
            stub.func_new(func_name, |mut store, _, params, results| {
                release_borrows(&mut store, params);
                results[0] = Val::Result(Ok(Some(Box::new(Val::Enum("directory".into())))));
                Ok(())
            })?;
        }
        ("wasi:filesystem/types", "[method]descriptor.get-flags") => {
            stub.func_new(func_name, |mut store, _, params, results| {
                release_borrows(&mut store, params);
                results[0] = Val::Result(Ok(Some(Box::new(Val::Flags(vec!["read".into()])))));
                Ok(())
            })?;
        }
        _ => {
            stub.func_new(func_name, move |_, _, params, _| {
                let path = params.iter().find_map(|p| match p {
                    Val::String(s) => Some(format!(" of `{s}`")),
                    _ => None,
                });
                Err(StopReason::error(
                    StopKind::Sandbox,
                    format!(
                        "the sandbox gives no {access} access: the plugin called {called}{}",
                        path.unwrap_or_default()
                    ),
                ))
            })?;
        }
    }
    Ok(())
}

/// Ends the borrows of stub resources a stub that answers was handed (its `self`): a call
/// may not return while it still holds a borrow.
fn release_borrows(store: &mut StoreContextMut<'_, RunState>, params: &[Val]) {
    for param in params {
        if let Val::Resource(handle) = param
            && !handle.owned()
        {
            let _ = Resource::<Unavailable>::try_from_resource_any(*handle, &mut *store);
        }
    }
}

/// The mesh's clock as WASI's wall clock: the mesh's start date plus its time.
pub struct MeshWallClock {
    pub mesh: Arc<dyn Mesh>,
}

impl HostWallClock for MeshWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }

    fn now(&self) -> Duration {
        let opened = self.mesh.opened_at().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
        opened.saturating_add(self.mesh.now())
    }
}

/// The mesh's clock as WASI's monotonic clock, in nanoseconds since the mesh opened.
pub struct MeshMonotonicClock {
    pub mesh: Arc<dyn Mesh>,
}

/// A duration in nanoseconds, saturating.
fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

impl HostMonotonicClock for MeshMonotonicClock {
    fn resolution(&self) -> u64 {
        1
    }

    fn now(&self) -> u64 {
        nanos(self.mesh.now())
    }
}

/// A WASI timer: ready when the mesh's clock reaches `at`. Blocking on it waits on the
/// mesh's clock (at once on the simulator), never past the call's deadline.
struct Timer {
    deadline: Arc<Deadline>,
    at: Duration,
    what: String,
}

#[async_trait::async_trait]
impl Pollable for Timer {
    async fn ready(&mut self) {
        let now = self.deadline.mesh_now();
        if now >= self.at {
            return;
        }
        // Not due: a check that does not block sees that, and a poll of several pollables
        // sees any other that is ready, before the clock moves.
        tokio::task::yield_now().await;
        let now = self.deadline.mesh_now();
        if now >= self.at {
            return;
        }
        let _waiting = self.deadline.waiting(&self.what);
        self.deadline.wasi_wait(&self.what, self.at - now).await;
    }
}

impl RunState {
    fn timer(&mut self, at: Duration, what: String) -> wasmtime::Result<Resource<DynPollable>> {
        let deadline = self.deadline.clone();
        let timer = self.table().push(Timer { deadline, at, what })?;
        subscribe(self.table(), timer)
    }
}

impl monotonic_clock::Host for RunState {
    fn now(&mut self) -> wasmtime::Result<u64> {
        Ok(nanos(self.env.mesh.now()))
    }

    fn resolution(&mut self) -> wasmtime::Result<u64> {
        Ok(1)
    }

    fn subscribe_instant(&mut self, when: u64) -> wasmtime::Result<Resource<DynPollable>> {
        let at = Duration::from_nanos(when);
        let ahead = at.saturating_sub(self.env.mesh.now());
        let what =
            format!("a WASI sleep (`wasi:clocks/monotonic-clock.subscribe-instant` of an instant {ahead:?} ahead)");
        self.timer(at, what)
    }

    fn subscribe_duration(&mut self, duration: u64) -> wasmtime::Result<Resource<DynPollable>> {
        let what = format!(
            "a WASI sleep (`wasi:clocks/monotonic-clock.subscribe-duration` of {:?})",
            Duration::from_nanos(duration)
        );
        let at = self.env.mesh.now().saturating_add(Duration::from_nanos(duration));
        self.timer(at, what)
    }
}

impl wasmtime_wasi_io::IoView for RunState {
    fn table(&mut self) -> &mut wasmtime::component::ResourceTable {
        RunState::table(self)
    }
}

/// A plugin's standard output or error, kept in memory up to a cap for the stop report;
/// what comes after the cap is dropped, not refused, so a chatty plugin keeps running.
#[derive(Clone)]
pub struct Captured {
    inner: Arc<std::sync::Mutex<CapturedBytes>>,
}

struct CapturedBytes {
    bytes: Vec<u8>,
    cap: usize,
    cut: bool,
}

impl Captured {
    pub fn new(cap: usize) -> Captured {
        Captured { inner: Arc::new(std::sync::Mutex::new(CapturedBytes { bytes: Vec::new(), cap, cut: false })) }
    }

    fn push(&self, bytes: &[u8]) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let room = inner.cap.saturating_sub(inner.bytes.len());
        if bytes.len() > room {
            inner.cut = true;
        }
        let take = bytes.len().min(room);
        inner.bytes.extend_from_slice(&bytes[..take]);
    }

    /// What was written, as text, with a note when the cap cut it.
    pub fn text(&self) -> String {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut text = String::from_utf8_lossy(&inner.bytes).trim().to_string();
        if inner.cut {
            text.push_str(&format!("\n… (cut at {} bytes)", inner.cap));
        }
        text
    }
}

impl IsTerminal for Captured {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Captured {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// Writes are accepted in pieces this big at most.
const CAPTURE_PERMIT: usize = 64 << 10;

#[async_trait::async_trait]
impl OutputStream for Captured {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(CAPTURE_PERMIT)
    }
}

#[async_trait::async_trait]
impl Pollable for Captured {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for Captured {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.push(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// A seed for one module's random numbers, drawn from the run's: each module its own
/// stream, the same on every run with that seed.
pub fn module_seed(seed: u64, module: &str) -> u64 {
    // FNV-1a over the module's name, mixed into the run's seed.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in module.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    seed ^ hash.rotate_left(17)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_imports_by_name_and_version() {
        let fit = |name: &str| classify(name, true);
        for offered in ["wasi:cli/stdout@0.2.0", "wasi:clocks/monotonic-clock@0.2.12", "mesh:adopt/control@0.1.0"] {
            assert_eq!(fit(offered), Fit::Offered, "{offered}");
        }
        assert_eq!(fit("wasi:http/outgoing-handler@0.2.3"), Fit::Stubbed { access: "http" });
        assert_eq!(fit("wasi:filesystem/preopens@0.2.0"), Fit::Stubbed { access: "filesystem" });
        assert_eq!(fit("wasi:sockets/tcp@0.2.0"), Fit::Stubbed { access: "network" });
        for (refused, why) in [
            ("wasi:cli/stdout@0.3.0", "is WASI 0.3"),
            ("wasi:cli/stdout", "has no version"),
            ("wasi:keyvalue/store@0.2.0", "`wasi:keyvalue/store@0.2.0`"),
            ("mesh:adopt/secrets@0.1.0", "not an interface of the contract"),
        ] {
            assert!(matches!(fit(refused), Fit::Refused(w) if w.contains(why)), "{refused}");
        }
        // A bare function or type at the top level is no interface at all.
        assert!(matches!(classify("wasi:cli/stdout@0.2.0", false), Fit::Refused(w) if w.contains("not an interface")));
    }

    #[test]
    fn says_what_is_offered() {
        let words = offered_in_words();
        for name in ["wasi:cli/stdout", "wasi:clocks/monotonic-clock", "wasi:random/random", "wasi:http/*"] {
            assert!(words.contains(name), "{words}");
        }
    }

    #[test]
    fn captured_output_keeps_the_first_bytes_and_says_it_was_cut() {
        let out = Captured::new(5);
        out.push(b"hello world");
        assert_eq!(out.text(), "hello\n… (cut at 5 bytes)");
    }

    #[test]
    fn module_seeds_differ_by_module_and_repeat() {
        assert_eq!(module_seed(7, "nats"), module_seed(7, "nats"));
        assert_ne!(module_seed(7, "nats"), module_seed(7, "postgres"));
        assert_ne!(module_seed(7, "nats"), module_seed(8, "nats"));
    }
}
