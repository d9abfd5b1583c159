//! A registered manifest's containers as a push applies them: resolved, each with its whole
//! spec and that spec's digest. The prediction, every re-read before a push and the simulated
//! node ask for them at every push of every run, of the same few manifests, so they are worked
//! out once for each manifest and shared while it lives.

use std::sync::{Arc, Mutex, Weak};

use mesh_adopt_manifest::{ManifestResource, ModuleManifest};

use super::{Spec, SpecDigest};

/// One container a manifest declares, as a push applies it.
#[derive(Debug)]
pub(crate) struct PushedContainer {
    /// The container, its volumes resolved.
    pub resource: ManifestResource,
    /// Its whole spec (docs/push-rule.md).
    pub spec: Spec,
    /// The digest of that spec: what a node compares with the running container's.
    pub digest: SpecDigest,
}

/// The manifests worked out so far. A manifest is known by where it lives: the weak handle
/// keeps that allocation from being reused while the entry stands, and an entry goes once its
/// manifest is dropped. A manifest behind an `Arc` cannot change while another handle to it
/// exists, so an entry never goes stale.
type Worked = Vec<(Weak<ModuleManifest>, Arc<[PushedContainer]>)>;

static WORKED: Mutex<Worked> = Mutex::new(Vec::new());

/// The containers `manifest` declares, as a push applies them, in the manifest's order.
pub(crate) fn pushed_containers(manifest: &Arc<ModuleManifest>) -> Arc<[PushedContainer]> {
    let lock = || WORKED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let known = |worked: &Worked| {
        let found = worked.iter().find(|(known, _)| std::ptr::eq(known.as_ptr(), Arc::as_ptr(manifest)));
        found.map(|(_, containers)| containers.clone())
    };
    if let Some(containers) = known(&lock()) {
        return containers;
    }
    // Worked out outside the lock: another run's pushes need not wait for this one.
    let containers: Arc<[PushedContainer]> = manifest
        .resolved_containers()
        .into_iter()
        .map(|resource| {
            let spec = Spec::of_module(&resource);
            let digest = spec.digest();
            PushedContainer { resource, spec, digest }
        })
        .collect();
    let mut worked = lock();
    if let Some(theirs) = known(&worked) {
        return theirs;
    }
    worked.retain(|(known, _)| known.strong_count() > 0);
    worked.push((Arc::downgrade(manifest), containers.clone()));
    containers
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"{"name": "store", "version": "1.0.0",
        "resources": [{"id": "server", "type": "container", "name": "mesh-store", "image": "postgres:16",
                       "volumes": ["${access:data}:/var/lib/data"], "environment": {"PGDATA": "/var/lib/data"}}],
        "accesses": [{"id": "data", "path": "/srv/data"}]}"#;

    fn manifest(text: &str) -> Arc<ModuleManifest> {
        Arc::new(ModuleManifest::parse(text.as_bytes()).expect("the example parses"))
    }

    #[test]
    fn a_manifest_is_worked_out_as_a_push_applies_it() {
        let store = manifest(MANIFEST);
        let pushed = pushed_containers(&store);
        let resolved = store.resolved_containers();
        assert_eq!(pushed.len(), resolved.len());
        assert_eq!(pushed[0].resource.volumes, vec!["/srv/data:/var/lib/data".to_string()]);
        assert_eq!(pushed[0].spec, Spec::of_module(&resolved[0]));
        assert_eq!(pushed[0].digest, Spec::of_module(&resolved[0]).digest());
    }

    #[test]
    fn a_manifest_asked_again_is_not_worked_out_again_and_another_is() {
        let store = manifest(MANIFEST);
        let first = pushed_containers(&store);
        assert!(Arc::ptr_eq(&first, &pushed_containers(&store.clone())));
        // Equal text parsed again is another manifest: worked out on its own, to the same digest.
        let again = manifest(MANIFEST);
        let second = pushed_containers(&again);
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(first[0].digest, second[0].digest);
        let moved = manifest(&MANIFEST.replace("postgres:16", "postgres:17"));
        assert_ne!(pushed_containers(&moved)[0].digest, first[0].digest);
    }

    #[test]
    fn a_dropped_manifest_leaves_no_entry_behind() {
        let gone = manifest(MANIFEST);
        let weak = Arc::downgrade(&gone);
        pushed_containers(&gone);
        drop(gone);
        pushed_containers(&manifest(MANIFEST));
        let worked = WORKED.lock().unwrap();
        assert!(worked.iter().all(|(known, _)| !known.ptr_eq(&weak)));
    }
}
