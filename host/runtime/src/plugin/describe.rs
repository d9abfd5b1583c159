//! What `mesh-adopt inspect` shows of a plugin file without running it: its digest, size,
//! contract, imports and exports, whether this host would load it, and the code the compile
//! cache holds for it.

use std::path::{Path, PathBuf};

use super::{NoPlugin, PluginError, PluginHost, WorldFault, looks_like_a_component, read_plugin};
use crate::model::code::{CodeKind, CodeOrigin};
use crate::model::contract::PACKAGE;
use crate::model::digest::Sha256;

/// A plugin file as `mesh-adopt inspect` shows it.
#[derive(Debug, Clone)]
pub struct PluginInfo {
    /// The file inspected.
    pub path: PathBuf,
    /// Its sha256: what a manifest pins.
    pub digest: crate::model::digest::Sha256,
    /// Its size in bytes.
    pub size: usize,
    /// The contract it targets, e.g. `mesh:adopt@0.1.0`, read from its imports.
    pub contract: Option<String>,
    /// Every import, WASI's included.
    pub imports: Vec<String>,
    /// Every export.
    pub exports: Vec<String>,
    /// Whether this host would load it, and why not.
    pub loads: Result<(), WorldFault>,
    /// The kinds of code the compile cache holds for it on this host, with each entry's
    /// size in bytes; empty without a cache or before its first run.
    pub cached: Vec<(CodeKind, u64)>,
}

impl PluginHost {
    /// Describes a plugin file without running it: what it targets, imports and exports, and
    /// whether this host would load it.
    pub fn describe(&self, path: &Path) -> Result<PluginInfo, PluginError> {
        if std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
            return Err(NoPlugin { module: None, path: path.to_path_buf() }.into());
        }
        let bytes = read_plugin(path)?;
        // Before any digest of it is taken, shown or recorded: the file may be anything.
        looks_like_a_component(path, &bytes)?;
        let digest = Sha256::of(&bytes);
        // Code already compiled serves; otherwise Winch's, which is quickest to make, and is
        // not kept: inspecting a plugin is no run of it.
        let (component, code) = match self.cached_component(&digest, Some(bytes.len() as u64))? {
            Some(cached) => cached,
            None => {
                let compiled = self
                    .compile(&self.tier_of(CodeKind::Baseline)?.engine, &bytes)
                    .map_err(|fault| fault.at(Some(path)))?;
                (compiled, CodeOrigin { kind: CodeKind::Baseline, compiled: None })
            }
        };
        let tier = self.tier_of(code.kind)?;
        let ty = component.component_type();
        let imports: Vec<String> = ty.imports(&tier.engine).map(|(name, _)| name.to_string()).collect();
        let exports: Vec<String> = ty.exports(&tier.engine).map(|(name, _)| name.to_string()).collect();
        let contract = imports
            .iter()
            .find_map(|name| name.strip_prefix(&format!("{PACKAGE}/")))
            .map(|rest| format!("{PACKAGE}@{}", rest.split_once('@').map(|(_, v)| v).unwrap_or("(unversioned)")));
        let loads = self
            .contract_of(&tier.engine, &component)
            .and_then(|contract| self.link(tier, &component, contract).map(|_| ()));
        let mut cached = Vec::new();
        if let Some(cache) = &self.cache {
            for kind in CodeKind::ALL {
                if let Some(size) = cache.sound_entry_size(&self.tier_of(kind)?.engine, kind, &digest) {
                    cached.push((kind, size));
                }
            }
        }
        Ok(PluginInfo {
            path: path.to_path_buf(),
            digest,
            size: bytes.len(),
            contract,
            imports,
            exports,
            loads,
            cached,
        })
    }
}
