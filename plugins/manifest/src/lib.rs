//! What the mesh-adopt host and its plugins both read, declared once so the two never
//! disagree: a catalogue module's `manifest.json` (the host finds and bounds the module's
//! plugin with it, the simulated node applies it; with the `json` feature, on by default, with
//! the [`numbers`] a document may write), the kinds of resource the contract knows
//! ([`ResourceKind`]) and the control-plane [`command`] vocabulary. Built for the host and for `wasm32-wasip2`
//! alike; without `json` it depends on nothing, so a plugin handed its manifest parsed links
//! no JSON parser.

pub mod command;
#[cfg(feature = "json")]
mod document;
#[cfg(feature = "json")]
pub mod numbers;
mod resource_kind;
pub mod urls;
#[cfg(feature = "json")]
pub mod validity;

use std::collections::BTreeMap;

#[cfg(feature = "json")]
pub use document::*;
pub use resource_kind::ResourceKind;

/// The file a module's plugin ships as, beside its manifest, unless the manifest names another.
pub const PLUGIN_FILE: &str = "adopt.wasm";

/// Maps each inside path to the host path mounted there, from `host:inside[:opts]` entries.
pub fn mounts(volumes: &[String]) -> BTreeMap<String, String> {
    volumes
        .iter()
        .filter_map(|v| {
            let mut parts = v.splitn(3, ':');
            let host = parts.next()?;
            let inside = parts.next()?;
            Some((inside.to_string(), host.to_string()))
        })
        .collect()
}
