//! A catalogue module's `manifest.json`, as adoption rules read it. The types are the ones the
//! host reads manifests with (the `mesh-adopt-manifest` crate), so a plugin and its host
//! never disagree on what a manifest says.

pub use mesh_adopt_manifest::{
    Access, AdoptSection, Grants, ManifestResource, ModuleManifest as Manifest, ParseError, mounts,
};

use std::cell::RefCell;
use std::rc::Rc;

use crate::{Refusal, refuse};

thread_local! {
    /// The last manifest read and the bytes it was read from: `check` and `adopt` run on one
    /// instance with the same manifest, so `adopt` finds it here instead of parsing it again.
    static LAST_READ: RefCell<Option<(Vec<u8>, Rc<Manifest>)>> = const { RefCell::new(None) };
}

/// Reads a module's manifest, refusing with the module's name when it is not JSON of the
/// expected shape. Reading the same bytes again hands back the manifest already read.
pub fn read(module: &str, bytes: &[u8]) -> Result<Rc<Manifest>, Refusal> {
    if let Some(manifest) = LAST_READ.with_borrow(|last| {
        last.as_ref().filter(|(read_from, _)| read_from.as_slice() == bytes).map(|(_, manifest)| manifest.clone())
    }) {
        return Ok(manifest);
    }
    let manifest = Rc::new(
        Manifest::parse(bytes).map_err(|e| refuse(format!("cannot read the `{module}` module's manifest: {e}")))?,
    );
    LAST_READ.set(Some((bytes.to_vec(), manifest.clone())));
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_module() {
        let refusal = read("nats", b"[1]").unwrap_err();
        assert_eq!(refusal.message, "cannot read the `nats` module's manifest: not a JSON object");
    }

    #[test]
    fn the_same_bytes_are_read_once_and_other_bytes_afresh() {
        let first = read("nats", br#"{"name":"nats"}"#).unwrap();
        assert!(Rc::ptr_eq(&first, &read("nats", br#"{"name":"nats"}"#).unwrap()));
        let other = read("nats", br#"{"name":"other"}"#).unwrap();
        assert_eq!(other.name, "other");
        assert!(read("nats", b"[1]").is_err(), "a bad manifest after a good one is still refused");
    }
}
