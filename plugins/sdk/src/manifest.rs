//! A catalogue module's `manifest.json`, as adoption rules read it. The types are the ones the
//! host reads manifests with (the `mesh-adopt-manifest` crate), so a plugin and its host
//! never disagree on what a manifest says.

pub use mesh_adopt_manifest::{
    Access, AdoptSection, Grants, ManifestResource, ModuleManifest as Manifest, ParseError, mounts,
};

use crate::{Refusal, refuse};

/// Reads a module's manifest, refusing with the module's name when it is not JSON of the
/// expected shape.
pub fn read(module: &str, bytes: &[u8]) -> Result<Manifest, Refusal> {
    Manifest::parse(bytes).map_err(|e| refuse(format!("cannot read the `{module}` module's manifest: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_module() {
        let refusal = read("nats", b"[1]").unwrap_err();
        assert_eq!(refusal.message, "cannot read the `nats` module's manifest: not a JSON object");
    }
}
