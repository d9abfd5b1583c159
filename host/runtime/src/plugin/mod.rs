//! Loading plugins, and calling their exports: each call in a sandbox of its own
//! (the sandbox's `call`).
//!
//! One engine and one linker per kind of code (see [`CodeKind`]) serve every plugin
//! of a process: Cranelift's for optimised code, and Winch's, built when a plugin first needs
//! it, for baseline code. Each call of `check` or `adopt` gets a fresh store: its own memory
//! cap, its own guest-time deadline and wall deadline, the sandbox's WASI (no files, no
//! network, no environment, the mesh's clocks), and a captured stdout and stderr for the
//! report if it is stopped.

pub(crate) mod cache;
mod describe;
pub(crate) mod digests;
mod engine;
mod error;
pub(crate) mod exports;
pub(crate) mod functions;
mod optimise;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::contract::AdopterPre;
pub use crate::model::code::{CodeKind, CodeOrigin, CodePolicy, OPTIMISE_AT_ONCE_BYTES};
pub use crate::model::contract::{Contract, WORLD};
use crate::plugin::digests::FileIdentity;
use crate::plugin::engine::Tier;
use crate::plugin::functions::FunctionStore;
pub use crate::sandbox::limits::Limits;
pub use cache::{CacheError, CompileCache, DEFAULT_BOUND, Pruned};
pub use describe::PluginInfo;
pub use error::{ComponentFault, EngineError, EngineWords, NoPlugin, PinMismatch, PluginError, WorldFault};
pub use functions::FunctionsReused;
pub use optimise::Optimised;

/// How every WebAssembly component begins: the magic `\0asm`, version 13, layer 1 (a core
/// module's layer is 0).
const COMPONENT_PREAMBLE: &[u8] = b"\0asm\x0d\x00\x01\x00";

/// The engines and linkers every plugin of this process runs on.
pub struct PluginHost {
    /// Which code plugins run as.
    policy: CodePolicy,
    /// Everything else, shared with a load that compiles on a thread of its own (see
    /// [`PluginHost::load_off_thread`]), which outlives the run that asked for it when that run
    /// is cancelled.
    parts: Arc<HostParts>,
}

/// What a host is made of, behind its `Arc`.
struct HostParts {
    /// Cranelift's, for optimised code.
    optimised: Tier,
    /// Winch's, for baseline code: built when a plugin first needs it.
    baseline: OnceLock<Tier>,
    limits: Limits,
    /// Plugins already compiled and linked in this process, by sha256: a module adopted on
    /// many meshes is compiled once.
    linked: Mutex<HashMap<Sha256, (AdopterPre, CodeKind)>>,
    /// Native code kept across processes, when the host has a cache directory.
    cache: Option<CompileCache>,
    /// The functions Cranelift compiled before, beside the cache: what a new plugin's
    /// compile reuses.
    functions: Option<Arc<FunctionStore>>,
    /// A gate per plugin being compiled, by sha256, so that runs asking for the same cold
    /// plugin together compile it once; removed when that compile ends.
    compiling: Mutex<HashMap<Sha256, Arc<Mutex<()>>>>,
    /// Digests of plugin files already read, by file identity, so a fleet that loads the
    /// same file for every site reads and hashes it once, and a plugin loaded again from the
    /// compile cache is not read at all. A file replaced or rewritten has another identity
    /// and is read and hashed again (see [`crate::plugin::digests`], which also remembers digests
    /// across processes beside the compile cache).
    seen: Mutex<HashMap<FileIdentity, Sha256>>,
    /// One permit per instance the engines' pools hold ([`Limits::concurrent_instances`]): a
    /// call takes one before it instantiates its plugin, so calls past the pool wait for an
    /// instance to end instead of being refused by the pool.
    slots: tokio::sync::Semaphore,
}

/// Refuses a plugin whose digest is not the one its manifest pins, naming both.
fn check_pin(path: &Path, digest: &Sha256, pin: Option<&str>) -> Result<(), PinMismatch> {
    match pin {
        Some(pin) if Sha256::parse(pin).as_ref() != Some(digest) => Err(PinMismatch {
            path: path.to_path_buf(),
            digest: digest.to_string(),
            pin: pin.trim().to_string(),
            module: None,
            manifest: None,
        }),
        _ => Ok(()),
    }
}

/// The largest plugin read: an interpreter and its standard library (componentize-py's are
/// about 18 MB) with room to grow, far below what would strain memory.
pub const PLUGIN_BYTES: u64 = 256 << 20;

/// A plugin file's bytes: a regular file of at most [`PLUGIN_BYTES`], opened without waiting
/// on anything else.
fn read_plugin(path: &Path) -> Result<Vec<u8>, PluginError> {
    crate::files::read_bounded(path, PLUGIN_BYTES)
        .map_err(|source| PluginError::Unreadable { path: path.to_path_buf(), source })
}

/// Refuses bytes that are not framed as a component, before any digest of them is taken: its
/// preamble, then sections (an id, a size, that many bytes) that end exactly where the file
/// does. A file cut short, junk after a preamble, anything else: no digest of it is shown.
fn looks_like_a_component(path: &Path, bytes: &[u8]) -> Result<(), PluginError> {
    let not = |fault| PluginError::NotAComponent { path: Some(path.to_path_buf()), fault };
    if !bytes.starts_with(COMPONENT_PREAMBLE) {
        return Err(not(ComponentFault::Preamble));
    }
    if top_level_custom_sections(bytes).is_none() {
        return Err(not(ComponentFault::Sections));
    }
    Ok(())
}

/// The custom sections at a WebAssembly binary's top level (not those of the modules and
/// components nested in it), as name and payload; `None` when its sections are not framed as
/// a binary's are (cut short, junk after a preamble). Only the framing is read: what is
/// checked of a file before it is trusted enough to be digested or compiled.
pub fn top_level_custom_sections(binary: &[u8]) -> Option<Vec<(&str, &[u8])>> {
    use wasmparser::Payload;
    let mut depth = 0usize;
    let mut found = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(binary) {
        match payload.ok()? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::CustomSection(section) if depth == 0 => found.push((section.name(), section.data())),
            _ => {}
        }
    }
    Some(found)
}

/// A plugin compiled and linked, ready to instantiate.
pub struct Plugin {
    /// The file it was loaded from.
    pub path: PathBuf,
    /// Its sha256: what a catalogue pins and a report names.
    pub digest: Sha256,
    /// The code it runs as, and whether this load compiled it.
    pub code: CodeOrigin,
    pre: AdopterPre,
}

impl Plugin {
    /// The contract version it was built for.
    pub fn contract(&self) -> Contract {
        self.pre.contract()
    }
}

impl PluginHost {
    /// Builds the engine (epoch interruption on, a ticker thread driving it) and the linker.
    pub fn new(limits: Limits) -> Result<PluginHost, EngineError> {
        Self::assemble(limits, None, None)
    }

    /// The host, compiling with `functions` as Cranelift's incremental cache when given.
    fn assemble(
        limits: Limits,
        functions: Option<Arc<FunctionStore>>,
        cache: Option<CompileCache>,
    ) -> Result<PluginHost, EngineError> {
        limits.validate()?;
        let optimised = Tier::build(&limits, CodeKind::Optimised, functions.as_ref())?;
        if let (Some(functions), Some(cache)) = (&functions, &cache) {
            functions.serve(cache.engine_hash(&optimised.engine));
        }
        let parts = HostParts {
            optimised,
            baseline: OnceLock::new(),
            linked: Mutex::new(HashMap::new()),
            cache,
            functions,
            seen: Mutex::new(HashMap::new()),
            compiling: Mutex::new(HashMap::new()),
            slots: tokio::sync::Semaphore::new(limits.concurrent_instances.max(1) as usize),
            limits,
        };
        Ok(PluginHost { policy: CodePolicy::default(), parts: Arc::new(parts) })
    }

    /// The engine and linker of `kind` of code, the baseline's built on first use.
    fn tier_of(&self, kind: CodeKind) -> Result<&Tier, EngineError> {
        if kind == CodeKind::Optimised {
            return Ok(&self.parts.optimised);
        }
        if let Some(tier) = self.parts.baseline.get() {
            return Ok(tier);
        }
        let built = Tier::build(&self.parts.limits, kind, None)?;
        // Two threads building it at once: one is kept, the other dropped with its ticker.
        Ok(self.parts.baseline.get_or_init(|| built))
    }

    /// The engine optimised plugins of this host are compiled for and run on: what an
    /// embedder or a benchmark needs to measure wasmtime's own share of loading a plugin.
    #[cfg(feature = "bench")]
    pub(crate) fn engine(&self) -> &Engine {
        &self.parts.optimised.engine
    }

    /// This host running its plugins as `policy` says (by default [`CodePolicy::Auto`]):
    /// the plugins it linked are forgotten, so each is loaded again as the policy asks.
    pub fn with_code(mut self, policy: CodePolicy) -> PluginHost {
        self.policy = policy;
        self.forget_linked();
        self
    }

    /// Which code this host runs its plugins as.
    pub fn code_policy(&self) -> CodePolicy {
        self.policy
    }

    /// The limits every plugin of this host runs under.
    pub fn limits(&self) -> &Limits {
        &self.parts.limits
    }

    /// A host that keeps compiled plugins in `cache` and loads them from it; a plugin
    /// compiled afresh reuses every function compiled before with this cache (see
    /// `functions.rs`).
    pub fn cached(limits: Limits, cache: CompileCache) -> Result<PluginHost, EngineError> {
        let functions = Arc::new(FunctionStore::in_cache(cache.dir()));
        Self::assemble(limits, Some(functions), Some(cache))
    }

    /// This host's limits with `cache` (see [`PluginHost::cached`]): the engine is built
    /// again, with the cache's functions in its compiler.
    pub fn with_cache(self, cache: CompileCache) -> Result<PluginHost, EngineError> {
        Ok(Self::cached(self.parts.limits.clone(), cache)?.with_code(self.policy))
    }

    /// Whether this host keeps compiled plugins in a compile cache.
    pub fn has_cache(&self) -> bool {
        self.parts.cache.is_some()
    }

    /// How many functions this host's compiles looked up among those compiled before, and
    /// how many they reused; `None` without a cache.
    pub fn functions_reused(&self) -> Option<FunctionsReused> {
        self.parts.functions.as_ref().map(|functions| functions.reused())
    }

    /// Forgets the plugins linked in this process, so the next load reads the cache (or
    /// compiles) again: after a catalogue update, or to measure a cold load.
    pub fn forget_linked(&self) {
        self.parts.linked.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Compiles plugin bytes to optimised native code, as the cache stores it.
    pub fn precompile(&self, bytes: &[u8]) -> Result<Vec<u8>, PluginError> {
        self.precompile_as(CodeKind::Optimised, bytes)
    }

    /// Compiles plugin bytes to `kind` of native code, as the cache stores it.
    pub fn precompile_as(&self, kind: CodeKind, bytes: &[u8]) -> Result<Vec<u8>, PluginError> {
        self.precompiled(kind, bytes).map_err(|fault| fault.at(None))
    }

    fn precompiled(&self, kind: CodeKind, bytes: &[u8]) -> Result<Vec<u8>, CompileFault> {
        if !bytes.starts_with(b"\0asm") {
            return Err(CompileFault::Component(ComponentFault::NotWebAssembly));
        }
        let compiled = self.tier_of(kind)?.engine.precompile_component(bytes);
        if kind == CodeKind::Optimised
            && let Some(functions) = &self.parts.functions
        {
            functions.write_pack();
        }
        compiled.map_err(|e| self.compile_fault(&e))
    }

    /// What a compile that failed ran into: one of the sandbox's limits (a component too big
    /// for the pool), else a component the engine refuses.
    fn compile_fault(&self, error: &wasmtime::Error) -> CompileFault {
        match self.parts.limits.limit_hit(error) {
            Some(hit) => CompileFault::Limit(hit),
            None => CompileFault::Component(ComponentFault::Invalid(EngineWords::of(error))),
        }
    }

    /// Loads a plugin file, refusing anything that is not a component for this contract.
    pub fn load(&self, path: &Path) -> Result<Plugin, PluginError> {
        self.load_pinned(path, None)
    }

    /// Loads a plugin file whose sha256 must be `pin` when one is given: a catalogue that
    /// pins its plugin gets that plugin or none.
    pub fn load_pinned(&self, path: &Path, pin: Option<&str>) -> Result<Plugin, PluginError> {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(NoPlugin { module: None, path: path.to_path_buf() }.into())
            }
            metadata => self.load_pinned_as(path, metadata.ok().as_ref(), pin),
        }
    }

    /// `load_pinned` for a file whose metadata the caller read just now (finding it in the
    /// catalogue), so the file is not looked at twice.
    pub fn load_pinned_as(
        &self,
        path: &Path,
        metadata: Option<&std::fs::Metadata>,
        pin: Option<&str>,
    ) -> Result<Plugin, PluginError> {
        if let Some(plugin) = self.load_if_known(path, metadata, pin)? {
            return Ok(plugin);
        }
        self.load_unknown(path, metadata, pin)
    }

    /// Reads, digests, checks and compiles (or takes from the cache) a plugin that
    /// [`PluginHost::load_if_known`] did not know, and remembers its digest by the file.
    fn load_unknown(
        &self,
        path: &Path,
        metadata: Option<&std::fs::Metadata>,
        pin: Option<&str>,
    ) -> Result<Plugin, PluginError> {
        let identity = metadata.map(FileIdentity::of);
        let bytes = read_plugin(path)?;
        // Before any digest of it is taken, shown or recorded: the file may be anything.
        looks_like_a_component(path, &bytes)?;
        let digest = Sha256::of(&bytes);
        // Checked before compiling: a file the manifest does not pin is never compiled.
        check_pin(path, &digest, pin)?;
        let plugin = self.load_digested(path, &bytes, digest)?;
        if let Some(id) = identity {
            self.parts.seen.lock().unwrap_or_else(|p| p.into_inner()).insert(id, plugin.digest.clone());
            if let Some(cache) = &self.parts.cache {
                cache.digests().remember(path, &id, &plugin.digest);
            }
        }
        Ok(plugin)
    }

    /// [`PluginHost::load_pinned_as`] for a run, which must not hold its executor's thread: a
    /// plugin linked already, or whose code the compile cache holds, is loaded here; one to
    /// read, digest and compile is loaded on a thread of its own, awaited, so a run cancelled
    /// meanwhile ends at once. An abandoned load runs to its end on its thread: its code is
    /// kept in the compile cache and linked in this host, for the next load to take.
    pub(crate) async fn load_off_thread(
        &self,
        path: &Path,
        metadata: Option<&std::fs::Metadata>,
        pin: Option<&str>,
    ) -> Result<Plugin, PluginError> {
        if let Some(plugin) = self.load_if_known(path, metadata, pin)? {
            return Ok(plugin);
        }
        let host = PluginHost { policy: self.policy, parts: self.parts.clone() };
        let (path, metadata, pin) = (path.to_path_buf(), metadata.cloned(), pin.map(String::from));
        let (sender, answer) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("mesh-adopt-compile".into())
            .spawn(move || {
                // Nobody to tell when the run was cancelled: the plugin is kept all the same. What
                // the host knew was looked up before the thread was started.
                let loaded = match &metadata {
                    Some(metadata) => host.load_unknown(&path, Some(metadata), pin.as_deref()),
                    None => host.load_pinned(&path, pin.as_deref()),
                };
                let _ = sender.send(loaded);
            })
            .map_err(|e| EngineError::CompileThread(EngineWords::said(e.to_string())))?;
        answer.await.unwrap_or_else(|_| Err(EngineError::CompileThread(EngineWords::said("it panicked")).into()))
    }

    /// The plugin at `path` without reading it, when this version of the file was digested
    /// before (in this process, or beside the cache) and its plugin is linked or its code
    /// cached: `None` when it must be read and perhaps compiled.
    fn load_if_known(
        &self,
        path: &Path,
        metadata: Option<&std::fs::Metadata>,
        pin: Option<&str>,
    ) -> Result<Option<Plugin>, PluginError> {
        let Some(id) = metadata.map(FileIdentity::of) else { return Ok(None) };
        let seen = self.parts.seen.lock().unwrap_or_else(|p| p.into_inner()).get(&id).cloned();
        let Some(digest) = seen.or_else(|| self.parts.cache.as_ref()?.digests().recall(path, &id)) else {
            return Ok(None);
        };
        // This very version of the file was hashed to `digest` before.
        check_pin(path, &digest, pin)?;
        self.load_known(path, &digest, metadata.map(std::fs::Metadata::len))
    }

    /// The plugin with this digest, if this process has linked it already.
    fn linked_plugin(&self, path: &Path, digest: Sha256) -> Option<Plugin> {
        let (pre, kind) = self.parts.linked.lock().unwrap_or_else(|p| p.into_inner()).get(&digest)?.clone();
        Some(Plugin { path: path.to_path_buf(), digest, code: CodeOrigin { kind, compiled: None }, pre })
    }

    /// The plugin with this digest without its bytes: linked already, or loaded from a
    /// sound compile cache entry of a kind of code the policy takes, the better kind first.
    /// `None` when it must be compiled from its file.
    /// `size`, the plugin file's length when known, rules out baseline code for a plugin
    /// small enough to be optimised at once.
    fn load_known(&self, path: &Path, digest: &Sha256, size: Option<u64>) -> Result<Option<Plugin>, PluginError> {
        if let Some(plugin) = self.linked_plugin(path, digest.clone()) {
            return Ok(Some(plugin));
        }
        let Some(component) = self.cached_component(digest, size)? else { return Ok(None) };
        self.finish_load(path, digest.clone(), &component).map(Some)
    }

    /// The plugin with this digest from a sound compile cache entry of a kind of code the
    /// policy takes, the better kind first, with that kind.
    fn cached_component(
        &self,
        digest: &str,
        size: Option<u64>,
    ) -> Result<Option<(Component, CodeOrigin)>, EngineError> {
        let Some(cache) = &self.parts.cache else { return Ok(None) };
        for &kind in self.policy.accepts(size) {
            if let Ok(component) = cache.get(&self.tier_of(kind)?.engine, kind, digest) {
                return Ok(Some((component, CodeOrigin { kind, compiled: None })));
            }
        }
        Ok(None)
    }

    /// Loads a plugin from bytes already read; `path` names it in messages.
    pub fn load_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Plugin, PluginError> {
        self.load_digested(path, bytes, Sha256::of(bytes))
    }

    fn load_digested(&self, path: &Path, bytes: &[u8], digest: Sha256) -> Result<Plugin, PluginError> {
        if let Some(plugin) = self.load_known(path, &digest, Some(bytes.len() as u64))? {
            return Ok(plugin);
        }
        // One compile per plugin: a caller that finds another thread (or, through the cache,
        // another process) compiling it waits for that compile and takes its result.
        let gate =
            self.parts.compiling.lock().unwrap_or_else(|p| p.into_inner()).entry(digest.clone()).or_default().clone();
        let _compiling_here = gate.lock().unwrap_or_else(|p| p.into_inner());
        let kind = self.policy.compiles(bytes.len());
        let engine = &self.tier_of(kind)?.engine;
        let _compiling_anywhere = self.parts.cache.as_ref().and_then(|cache| cache.lock_entry(engine, kind, &digest));
        if let Some(plugin) = self.load_known(path, &digest, Some(bytes.len() as u64))? {
            return Ok(plugin);
        }
        // A file that does not compile is no component: no digest of it is shown.
        let started = Instant::now();
        let loaded =
            self.compile_and_store(kind, &digest, bytes).map_err(|fault| fault.at(Some(path))).and_then(|component| {
                let code = CodeOrigin { kind, compiled: Some(started.elapsed()) };
                self.finish_load(path, digest.clone(), &(component, code))
            });
        // Callers already waiting hold the gate itself; later ones find the plugin linked
        // (or, failing, compile again under a gate of their own).
        self.parts.compiling.lock().unwrap_or_else(|p| p.into_inner()).remove(&digest);
        loaded
    }

    /// Checks a component's world, links it, and keeps it as linked in this process.
    fn finish_load(
        &self,
        path: &Path,
        digest: Sha256,
        (component, code): &(Component, CodeOrigin),
    ) -> Result<Plugin, PluginError> {
        let misfit = |fault| PluginError::OtherWorld { path: path.to_path_buf(), digest: Some(digest.clone()), fault };
        let tier = self.tier_of(code.kind)?;
        let contract = self.contract_of(&tier.engine, component).map_err(misfit)?;
        let pre = self.link(tier, component, contract).map_err(misfit)?;
        self.parts.linked.lock().unwrap_or_else(|p| p.into_inner()).insert(digest.clone(), (pre.clone(), code.kind));
        Ok(Plugin { path: path.to_path_buf(), digest, code: *code, pre })
    }

    /// The component compiled from `bytes` to `kind` of code, and stored in the cache when
    /// there is one (optimised code taking the place of the same plugin's baseline code). A
    /// cache that cannot be written is no reason to refuse a plugin: it is compiled again
    /// next time.
    fn compile_and_store(&self, kind: CodeKind, digest: &str, bytes: &[u8]) -> Result<Component, CompileFault> {
        self.compile_and_keep(kind, digest, bytes).map(|(component, _)| component)
    }

    /// [`Self::compile_and_store`], saying too whether the cache kept the code: `None` when
    /// it did (or there is no cache), the error when it could not be written.
    fn compile_and_keep(
        &self,
        kind: CodeKind,
        digest: &str,
        bytes: &[u8],
    ) -> Result<(Component, Option<CacheError>), CompileFault> {
        let engine = &self.tier_of(kind)?.engine;
        let Some(cache) = &self.parts.cache else { return Ok((self.compile(engine, bytes)?, None)) };
        let precompiled = self.precompiled(kind, bytes)?;
        let kept = cache.put(engine, kind, digest, &precompiled);
        // Winch's engine is built to name the baseline entry only when there may be one: an
        // optimised compile of a plugin never run on baseline code (every small one) does
        // not pay for an engine it has no use for.
        if kept.is_ok()
            && kind == CodeKind::Optimised
            && cache.may_hold(CodeKind::Baseline, digest)
            && let Ok(baseline) = self.tier_of(CodeKind::Baseline)
        {
            cache.remove(&baseline.engine, CodeKind::Baseline, digest);
        }
        // From the bytes in memory, not the entry: the process that compiled a plugin runs
        // code nothing else can change under it.
        // SAFETY: these bytes were produced just now by this engine's own compiler.
        let component = unsafe { Component::deserialize(engine, &precompiled) }.map_err(|e| self.compile_fault(&e))?;
        Ok((component, kept.err()))
    }

    fn compile(&self, engine: &Engine, bytes: &[u8]) -> Result<Component, CompileFault> {
        if !bytes.starts_with(b"\0asm") {
            return Err(CompileFault::Component(ComponentFault::NotWebAssembly));
        }
        Component::new(engine, bytes).map_err(|e| self.compile_fault(&e))
    }

    /// Links a component as the first of `contracts` whose world it fits; when it fits none,
    /// says why it does not fit the first.
    fn link(&self, tier: &Tier, component: &Component, contracts: Vec<Contract>) -> Result<AdopterPre, WorldFault> {
        let stubbed = crate::sandbox::linker_for(&tier.linker, &tier.engine, component)?;
        let misfit =
            |contract: Contract, e: wasmtime::Error| WorldFault::Misfit { contract, engine: EngineWords::of(&e) };
        let first = contracts.first().copied().unwrap_or(Contract::NEWEST);
        let pre = stubbed.as_ref().unwrap_or(&tier.linker).instantiate_pre(component).map_err(|e| misfit(first, e))?;
        let mut first_misfit = None;
        for contract in contracts {
            match AdopterPre::new(contract, pre.clone()) {
                Ok(adopter) => return Ok(adopter),
                Err(e) => {
                    first_misfit.get_or_insert_with(|| misfit(contract, e));
                }
            }
        }
        Err(first_misfit.unwrap_or(WorldFault::NoVersion))
    }

    /// The contract versions a component may be built for, most likely first: the one its
    /// imports name, or, for a component that imports nothing of the contract, each version
    /// from the newest. One this host does not speak is refused naming both sides.
    fn contract_of(&self, engine: &Engine, component: &Component) -> Result<Vec<Contract>, WorldFault> {
        match crate::contract::of_component(engine, component)? {
            Some(found) => Ok(vec![found]),
            None => Ok(Contract::ALL.into_iter().rev().collect()),
        }
    }
}

/// Why bytes did not compile into a component: the component itself, one of the sandbox's
/// limits, or the engine.
#[derive(Debug)]
pub(crate) enum CompileFault {
    /// The bytes are no component the engine takes.
    Component(ComponentFault),
    /// A limit of the sandbox's is too low for it.
    Limit(crate::sandbox::limits::LimitHit),
    /// The engine could not be set up.
    Engine(EngineError),
}

impl From<EngineError> for CompileFault {
    fn from(error: EngineError) -> Self {
        CompileFault::Engine(error)
    }
}

impl CompileFault {
    /// The fault as a plugin's error, the file named where there is one.
    pub(crate) fn at(self, path: Option<&Path>) -> PluginError {
        match self {
            CompileFault::Component(fault) => PluginError::NotAComponent { path: path.map(Path::to_path_buf), fault },
            CompileFault::Limit(hit) => {
                PluginError::Limit { path: path.map_or_else(PathBuf::new, Path::to_path_buf), hit }
            }
            CompileFault::Engine(error) => PluginError::Engine(error),
        }
    }
}

pub use crate::model::digest::Sha256;
