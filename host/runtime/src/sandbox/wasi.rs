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

use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, HasSelf, Linker, Resource, ResourceAny, ResourceType, Val};
use wasmtime::{Engine, StoreContextMut};
use wasmtime::{Result, format_err};
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock;

use crate::model::stop::{StopKind, StopReason};
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
fn fit(
    engine: &Engine,
    component: &Component,
) -> std::result::Result<Vec<(String, &'static str)>, crate::model::faults::WorldFault> {
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
        return Err(crate::model::faults::WorldFault::NotOffered {
            refused: refused.join(", "),
            offered: offered_in_words(),
        });
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
) -> std::result::Result<Option<Linker<RunState>>, crate::model::faults::WorldFault> {
    let stubs = fit(engine, component)?;
    if stubs.is_empty() {
        return Ok(None);
    }
    stubbed(base, engine, component, &stubs)
        .map(Some)
        .map_err(|e| crate::model::faults::WorldFault::Unread(crate::model::faults::EngineWords::of(&e)))
}

/// `base` with a stub of every interface of `stubs` the component imports.
fn stubbed(
    base: &Linker<RunState>,
    engine: &Engine,
    component: &Component,
    stubs: &[(String, &'static str)],
) -> Result<Linker<RunState>> {
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
        let mut stub = linker.instance(name).map_err(|e| format_err!("cannot stub `{name}`: {e}"))?;
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
    Ok(linker)
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
}
