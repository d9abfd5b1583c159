//! Every parser of outside input — manifest, foundation bundle, credentials, plan file,
//! recording, scenario, live configuration, and the command line's durations, sources and
//! names — fed arbitrary bytes and mutations of valid inputs: each answers with a value or a
//! clean error, never a panic or a hang. Case counts are bounded so `just test` stays quick.

use std::path::Path;

use mesh_adopt_live::LiveConfig;
use mesh_adopt_manifest::command::Command;
use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::Foundation;
use mesh_adopt_runtime::manifest::ModuleManifest;
use mesh_adopt_runtime::mesh::replay::read_recording;
use mesh_adopt_runtime::options::check_module_name;
use mesh_adopt_runtime::options::parse_catalog_source;
use mesh_adopt_runtime::options::parse_duration;
use mesh_adopt_runtime::plan::SavedPlan;
use proptest::prelude::*;

use crate::support::root;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() }
}

fn shipped(path: &str) -> Vec<u8> {
    std::fs::read(root().join(path)).unwrap()
}

/// A valid document with one mutation: a byte changed, a span cut out, or bytes spliced in.
fn mutated(valid: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = valid.len().max(1);
    (0..len, 0..len, prop::collection::vec(any::<u8>(), 0..8), 0..3u8).prop_map(move |(at, to, bytes, how)| {
        let mut doc = valid.clone();
        let (at, to) = (at.min(doc.len()), to.min(doc.len()));
        match how {
            0 if at < doc.len() => doc[at] = bytes.first().copied().unwrap_or(b'"'),
            1 => {
                let (from, to) = (at.min(to), at.max(to));
                doc.drain(from..to);
            }
            _ => {
                doc.splice(at..at, bytes);
            }
        }
        doc
    })
}

/// Arbitrary bytes, or one mutation of `valid`.
fn input(valid: &str) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![prop::collection::vec(any::<u8>(), 0..256), mutated(shipped(valid))]
}

fn written(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn manifests(bytes in input("catalogue/modules/nats/manifest.json")) {
        let _ = ModuleManifest::parse(&bytes);
    }

    #[test]
    fn foundation_bundles(bytes in input("catalogue/foundation.json")) {
        let _ = Foundation::parse(&bytes);
    }

    #[test]
    fn credentials(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let dir = tempfile::tempdir().unwrap();
        written(dir.path(), "c", &bytes);
        let credentials = Credentials::open(dir.path());
        if credentials.verify("c").is_ok() {
            prop_assert!(credentials.read("c").is_ok());
        }
    }

    #[test]
    fn plan_files(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = SavedPlan::parse(&bytes);
    }

    #[test]
    fn recordings(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let dir = tempfile::tempdir().unwrap();
        let _ = read_recording(&written(dir.path(), "r.jsonl", &bytes));
    }

    #[test]
    fn scenarios(bytes in input("plugins/nats/scenarios/layout-every-field.toml")) {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("m/scenarios");
        std::fs::create_dir_all(&at).unwrap();
        let _ = mesh_adopt_testkit::read(&written(&at, "s.toml", &bytes));
    }

    #[test]
    fn live_configurations(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let dir = tempfile::tempdir().unwrap();
        let _ = LiveConfig::load(&written(dir.path(), "mesh-adopt.toml", &bytes));
    }

    #[test]
    fn command_line_values(text in "\\PC{0,40}") {
        let _ = parse_duration(&text);
        let _ = parse_catalog_source(&text);
        let _ = check_module_name(&text);
        let words: Vec<&str> = text.split(' ').collect();
        if let Ok(command) = Command::parse(&words) {
            // What parses reads back as the same words.
            prop_assert_eq!(command.words(), words.iter().map(|w| w.to_string()).collect::<Vec<_>>());
        }
    }
}
