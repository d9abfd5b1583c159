//! What the benchmarks time below a run: one plugin's compile, load and export calls, with the
//! engine's own types. Built only with the `bench` feature, so none of it, and no wasmtime
//! type, is part of what an embedder builds against.

use wasmtime::Engine;
use wasmtime::component::Component;

pub use crate::model::Context;
pub use crate::plugin::cache::Miss;
pub use crate::plugin::exports::Adopted;
pub use crate::sandbox::grants::Permissions;
pub use crate::sandbox::state::RunEnv;

use crate::model::{Plan, Refusal, Stopped};
use crate::plugin::{CodeKind, CompileCache, Plugin, PluginHost};

/// The engine a host compiles its optimised code with.
pub fn engine(host: &PluginHost) -> &Engine {
    host.engine()
}

/// A compile cache entry, loaded as a run loads it.
pub fn cache_get(cache: &CompileCache, engine: &Engine, kind: CodeKind, digest: &str) -> Result<Component, Miss> {
    cache.get(engine, kind, digest)
}

/// Stores precompiled bytes as the cache's entry for the plugin with sha256 `digest`.
pub fn cache_put(
    cache: &CompileCache,
    engine: &Engine,
    kind: CodeKind,
    digest: &str,
    precompiled: &[u8],
) -> Result<(), crate::plugin::CacheError> {
    cache.put(engine, kind, digest, precompiled)
}

/// Instantiates the plugin in a fresh sandbox and drops it: what starting costs.
pub async fn instantiate_idle(host: &PluginHost, plugin: &Plugin, env: &RunEnv) -> Result<(), Stopped> {
    host.instantiate_idle(plugin, env).await
}

/// One `check` call, as preflight makes it.
pub async fn check(
    host: &PluginHost,
    plugin: &Plugin,
    env: &RunEnv,
    ctx: &Context,
) -> Result<Result<Plan, Refusal>, Stopped> {
    host.check(plugin, env, ctx).await
}

/// One `adopt` call held to `plan`, as a module's turn makes it.
pub async fn adopt(
    host: &PluginHost,
    plugin: &Plugin,
    env: &RunEnv,
    ctx: &Context,
    plan: &Plan,
) -> Result<Adopted, Stopped> {
    host.adopt(plugin, env, ctx, plan).await
}
