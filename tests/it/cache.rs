//! The compile cache: a hit skips compiling; a corrupt or foreign entry is a miss that is
//! compiled again and replaced, never an error.

use std::path::Path;

use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::plugin::CompileCache;

use crate::support::plugin;

fn cached_host(dir: &Path) -> PluginHost {
    PluginHost::new(Limits::default()).unwrap().with_cache(CompileCache::open(dir).unwrap()).unwrap()
}

/// The compiled entries in the cache directory (beside them: each entry's lock file, and the
/// plugin files' digests).
fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let all = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path());
    all.filter(|p| p.extension().is_some_and(|e| e == "cwasm")).collect()
}

/// The one entry in the cache directory.
fn entry(dir: &Path) -> std::path::PathBuf {
    let entries = entries(dir);
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

#[test]
fn a_second_host_loads_what_the_first_compiled() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = cached_host(dir.path()).load(&plugin("adopt_postgres")).unwrap();
    let written = entry(dir.path());
    let before = std::fs::metadata(&written).unwrap().modified().unwrap();
    // A new process's host finds the entry and does not rewrite it.
    let again = cached_host(dir.path()).load(&plugin("adopt_postgres")).unwrap();
    assert_eq!(loaded.digest, again.digest);
    assert_eq!(std::fs::metadata(&written).unwrap().modified().unwrap(), before);
}

#[test]
fn a_corrupt_entry_is_recompiled_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    cached_host(dir.path()).load(&plugin("adopt_nats")).unwrap();
    let written = entry(dir.path());
    let mut bytes = std::fs::read(&written).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&written, &bytes).unwrap();

    let host = cached_host(dir.path());
    host.load(&plugin("adopt_nats")).expect("a corrupt entry is a miss, not an error");
    assert_ne!(std::fs::read(&written).unwrap(), bytes, "the entry was replaced");
}

#[test]
fn a_foreign_entry_with_a_valid_checksum_is_not_loaded() {
    let dir = tempfile::tempdir().unwrap();
    cached_host(dir.path()).load(&plugin("adopt_mesh_vault")).unwrap();
    let written = entry(dir.path());
    // Bytes with a correct checksum that no compatible engine wrote.
    let payload = b"\x7fELF not a component this host compiled".to_vec();
    let mut stored = xxhash_rust::xxh3::xxh3_128(&payload).to_le_bytes().to_vec();
    stored.extend(&payload);
    std::fs::write(&written, &stored).unwrap();

    cached_host(dir.path()).load(&plugin("adopt_mesh_vault")).expect("a foreign entry is a miss");
    assert_ne!(std::fs::read(&written).unwrap(), stored, "the entry was replaced");
}

#[tokio::test]
async fn an_entry_copied_over_another_plugins_is_a_miss_and_the_pinned_plugin_runs() {
    use mesh_adopt_runtime::Mode;
    let dir = tempfile::tempdir().unwrap();
    // Compile both into one cache: the real postgres plugin, and one that plans a push first.
    let host = cached_host(dir.path());
    let real = host.load(&plugin("adopt_postgres")).unwrap();
    let other = host.load(&plugin("tells_off_plan")).unwrap();
    let entries = entries(dir.path());
    let named = |digest: &str| entries.iter().find(|p| p.to_string_lossy().contains(digest)).unwrap().clone();
    // The other plugin's native code is copied over the real plugin's entry.
    std::fs::copy(named(&other.digest), named(&real.digest)).unwrap();

    // A new process's host, loading the real plugin by its pin, must not run the other's code.
    let fresh: &'static PluginHost = Box::leak(Box::new(cached_host(dir.path())));
    let loaded = fresh.load_pinned(&plugin("adopt_postgres"), Some(&real.digest)).unwrap();
    assert_eq!(loaded.digest, real.digest);
    let mut mesh = crate::support::TestMesh::new();
    mesh.host = Some(fresh);
    let ran = mesh.run_modules(&["postgres"], Mode::Adopt).await;
    ran.assert_adopted("postgres");
    // And the entry was replaced by the real plugin's own.
    assert_ne!(std::fs::read(named(&real.digest)).unwrap(), std::fs::read(named(&other.digest)).unwrap());
}

#[test]
fn a_plugin_file_rewritten_in_place_is_hashed_again_and_held_to_its_pin() {
    let dir = tempfile::tempdir().unwrap();
    let host = cached_host(&dir.path().join("cache"));
    let file = dir.path().join("adopt.wasm");
    std::fs::copy(plugin("adopt_mesh_vault"), &file).unwrap();
    let pinned = host.load(&file).unwrap().digest;
    // The same file again: known by its identity, loaded from what this process linked.
    assert_eq!(host.load_pinned(&file, Some(&pinned)).unwrap().digest, pinned);
    host.forget_linked();
    // And from the compile cache, without reading the file.
    assert_eq!(host.load_pinned(&file, Some(&pinned)).unwrap().digest, pinned);
    // Another plugin written over it, in place (same inode): its identity changed, so it is
    // read and hashed again, and the pin refuses it.
    std::fs::write(&file, std::fs::read(plugin("adopt_nats")).unwrap()).unwrap();
    let refused = host.load_pinned(&file, Some(&pinned)).err().expect("a rewritten plugin is held to its pin");
    assert!(refused.to_string().contains("the manifest pins"), "{refused:#}");
}

#[test]
fn hosts_loading_one_cold_plugin_together_leave_one_sound_entry() {
    let dir = tempfile::tempdir().unwrap();
    // Two hosts stand for two processes sharing the cache; two threads on one host for two
    // runs of one process. Each waits for whichever compile came first.
    let (first, second) = (cached_host(dir.path()), cached_host(dir.path()));
    let digests: Vec<mesh_adopt_runtime::plugin::Sha256> = std::thread::scope(|s| {
        let loads =
            [&first, &second, &first].map(|host| s.spawn(move || host.load(&plugin("adopt_nats")).unwrap().digest));
        loads.into_iter().map(|load| load.join().unwrap()).collect()
    });
    assert!(digests.windows(2).all(|pair| pair[0] == pair[1]), "{digests:?}");
    let written = entry(dir.path());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // What was written loads in a third host without compiling again: it is not rewritten.
    let before = std::fs::metadata(&written).unwrap().modified().unwrap();
    cached_host(dir.path()).load(&plugin("adopt_nats")).unwrap();
    assert_eq!(std::fs::metadata(&written).unwrap().modified().unwrap(), before);
}

/// A plugin compiled with the functions another plugin's compile left (the standard library,
/// serde, the SDK) is the very native code a host without a cache compiles from it.
#[test]
fn a_plugin_compiled_from_functions_compiled_before_is_the_same_native_code() {
    let dir = tempfile::tempdir().unwrap();
    cached_host(dir.path()).load(&plugin("adopt_postgres")).unwrap();
    let bytes = std::fs::read(plugin("adopt_nats")).unwrap();
    let host = cached_host(dir.path());
    let reusing = host.precompile(&bytes).unwrap();
    let reused = host.functions_reused().unwrap();
    assert!(reused.reused * 4 > reused.looked_up, "{reused:?}: a good part of the functions are shared");
    let afresh = PluginHost::new(Limits::default()).unwrap().precompile(&bytes).unwrap();
    assert!(reusing == afresh, "the native code differs from a compile afresh");
    // Once compiled, its own functions are found too: most, not all. Cranelift 0.135 keys a
    // function by a hash of its IR, and its `DataFlowGraph::clear` does not clear exception
    // tables, so a function compiled on a thread's context after a trampoline (whose `try_call`
    // has one) hashes with that table in it: which functions get such a key depends on how
    // the compile's threads were scheduled. In the runs measured (33), 87-96 % were found.
    let again = cached_host(dir.path());
    again.precompile(&bytes).unwrap();
    let found = again.functions_reused().unwrap();
    assert!(found.reused > reused.reused && found.reused * 5 > found.looked_up * 4, "{found:?} after {reused:?}");
}
