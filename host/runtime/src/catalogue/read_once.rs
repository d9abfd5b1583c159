//! Module manifests read once. The same bytes come back again and again — every run of a sweep
//! reads the catalogue's manifests, and the simulated control plane registers what was carried
//! to it — so bytes already parsed and found valid give back the same shared manifest, and
//! with it what its pushes were worked out to (`effect::pushed_containers`), instead of
//! parsing and checking it afresh.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use mesh_adopt_manifest::validity::Invalid;
use mesh_adopt_manifest::{ModuleManifest, ParseError};

/// How many manifests are remembered: a catalogue's modules, and a few of their edits.
const REMEMBERED: usize = 16;

/// The largest manifest remembered: real ones are a few KiB; a larger one is read each time.
const LARGEST_REMEMBERED: usize = 64 * 1024;

/// Why bytes are not a manifest a reader may use, in the order a reader finds it out.
#[derive(Debug)]
pub(crate) enum Unusable {
    /// They do not parse as a manifest.
    Unparsed(ParseError),
    /// They parse, as `manifest`, but break a rule every reader holds them to.
    Invalid {
        /// The manifest as parsed: a reader may check its name before saying it is invalid.
        manifest: Box<ModuleManifest>,
        /// The first rule broken.
        invalid: Invalid,
    },
}

/// Manifests read so far, oldest first, each with the bytes it was read from.
#[derive(Default)]
struct Remembered {
    manifests: VecDeque<(Box<[u8]>, Arc<ModuleManifest>)>,
}

impl Remembered {
    /// The manifest read from exactly these bytes, if it is remembered.
    fn find(&self, bytes: &[u8]) -> Option<Arc<ModuleManifest>> {
        self.manifests.iter().find(|(read, _)| **read == *bytes).map(|(_, manifest)| manifest.clone())
    }

    /// Remembers `manifest` as what `bytes` hold, forgetting the oldest beyond [`REMEMBERED`].
    fn keep(&mut self, bytes: &[u8], manifest: &Arc<ModuleManifest>) {
        // Another thread may have read the same bytes meanwhile: one entry serves both.
        if self.find(bytes).is_some() {
            return;
        }
        if self.manifests.len() == REMEMBERED {
            self.manifests.pop_front();
        }
        self.manifests.push_back((bytes.into(), manifest.clone()));
    }
}

/// The manifests this process has read.
static READ: Mutex<Remembered> = Mutex::new(Remembered { manifests: VecDeque::new() });

/// The manifest `bytes` hold, parsed and held valid ([`ModuleManifest::check_valid`]); the
/// same one each time for the same bytes while they are remembered.
pub(crate) fn valid_manifest(bytes: &[u8]) -> Result<Arc<ModuleManifest>, Unusable> {
    valid_manifest_in(&READ, bytes)
}

/// [`valid_manifest`], remembered in `memory`.
fn valid_manifest_in(memory: &Mutex<Remembered>, bytes: &[u8]) -> Result<Arc<ModuleManifest>, Unusable> {
    let lock = || memory.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(manifest) = lock().find(bytes) {
        return Ok(manifest);
    }
    // Parsed and checked outside the lock: another run's reads need not wait for this one.
    let manifest = ModuleManifest::parse(bytes).map_err(Unusable::Unparsed)?;
    if let Err(invalid) = manifest.check_valid(bytes) {
        return Err(Unusable::Invalid { manifest: Box::new(manifest), invalid });
    }
    let manifest = Arc::new(manifest);
    if bytes.len() <= LARGEST_REMEMBERED {
        lock().keep(bytes, &manifest);
    }
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(image: &str) -> String {
        format!(
            r#"{{"name": "store", "version": "1.0.0",
                "resources": [{{"id": "server", "type": "container", "name": "mesh-store", "image": "{image}"}}]}}"#
        )
    }

    fn read(memory: &Mutex<Remembered>, image: &str) -> Arc<ModuleManifest> {
        valid_manifest_in(memory, manifest(image).as_bytes()).expect("the example is valid")
    }

    #[test]
    fn the_same_bytes_read_again_are_the_same_manifest_and_other_bytes_another() {
        let memory = Mutex::default();
        let first = read(&memory, "postgres:16.1");
        assert!(Arc::ptr_eq(&first, &read(&memory, "postgres:16.1")));
        let other = read(&memory, "postgres:16.2");
        assert!(!Arc::ptr_eq(&first, &other));
        assert_eq!(other.resolved_containers()[0].image, "postgres:16.2");
    }

    #[test]
    fn bytes_that_are_no_manifest_or_an_invalid_one_are_refused_every_time_and_not_remembered() {
        let memory = Mutex::default();
        for _ in 0..2 {
            assert!(matches!(valid_manifest_in(&memory, b"[1, 2]"), Err(Unusable::Unparsed(ParseError::NotAnObject))));
            let greedy = manifest("postgres:16.3").replacen(
                r#""version""#,
                r#""adopt": {"grants": {"credentials": ["../x"]}}, "version""#,
                1,
            );
            match valid_manifest_in(&memory, greedy.as_bytes()) {
                Err(Unusable::Invalid { manifest, invalid: Invalid::GrantsTooMuch(_) }) => {
                    assert_eq!(manifest.name, "store")
                }
                other => panic!("a manifest granting too much was taken: {other:?}"),
            }
        }
        assert!(memory.lock().unwrap().manifests.is_empty());
    }

    #[test]
    fn no_more_than_so_many_are_remembered_and_the_oldest_goes_first() {
        let memory = Mutex::default();
        let first = read(&memory, "postgres:0");
        let second = read(&memory, "postgres:1");
        for n in 2..=REMEMBERED {
            read(&memory, &format!("postgres:{n}"));
        }
        assert_eq!(memory.lock().unwrap().manifests.len(), REMEMBERED);
        assert!(Arc::ptr_eq(&second, &read(&memory, "postgres:1")), "the second oldest is forgotten");
        assert!(!Arc::ptr_eq(&first, &read(&memory, "postgres:0")), "the oldest is still remembered");
    }
}
