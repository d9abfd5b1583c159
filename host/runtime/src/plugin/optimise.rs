//! Optimised code made ahead of the runs that would otherwise go without it: what
//! `mesh-adopt build` and `mesh-adopt cache optimise` do, so that no run waits for Cranelift.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{PluginError, PluginHost, check_pin, looks_like_a_component, read_plugin};
use crate::model::code::CodeKind;
use crate::model::digest::Sha256;

/// What [`PluginHost::optimise`] did for a plugin file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Optimised {
    /// The plugin's sha256.
    pub digest: Sha256,
    /// How long compiling it took; `None` when its optimised code was cached already.
    pub compiled: Option<Duration>,
}

impl PluginHost {
    /// Compiles the plugin file at `path` to optimised code into the compile cache, unless
    /// its optimised code is there already: what `mesh-adopt build` and `mesh-adopt cache
    /// optimise` do, so that no run waits for Cranelift. Its baseline code, no longer
    /// needed, is removed. A file whose sha256 is not `pin`, when given, is refused.
    pub fn optimise(&self, path: &Path, pin: Option<&str>) -> Result<Optimised, PluginError> {
        let Some(cache) = &self.cache else { return Err(PluginError::NoCache) };
        let bytes = read_plugin(path)?;
        looks_like_a_component(path, &bytes)?;
        let digest = Sha256::of(&bytes);
        // A file its manifest does not pin is not the module's plugin: no run would load it.
        check_pin(path, &digest, pin)?;
        let engine = &self.optimised.engine;
        let _compiling_anywhere = cache.lock_entry(engine, CodeKind::Optimised, &digest);
        if cache.get(engine, CodeKind::Optimised, &digest).is_ok() {
            return Ok(Optimised { digest, compiled: None });
        }
        let started = Instant::now();
        let (component, unkept) =
            self.compile_and_keep(CodeKind::Optimised, &digest, &bytes).map_err(|fault| fault.at(Some(path)))?;
        let compiled = Some(started.elapsed());
        // Code compiled and not kept is no code for later runs: said, not passed over.
        if let Some(source) = unkept {
            return Err(PluginError::Unkept { path: path.to_path_buf(), source });
        }
        self.contract_of(engine, &component).map_err(|fault| PluginError::OtherWorld {
            path: path.to_path_buf(),
            digest: Some(digest.clone()),
            fault,
        })?;
        Ok(Optimised { digest, compiled })
    }
}
