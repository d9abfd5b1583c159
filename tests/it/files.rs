//! No file a command opens can hold it: what is not a regular file (a FIFO nobody reads or
//! writes, a device, a directory) is refused, exit 2, naming it, before anything runs; and no
//! output the command writes can be one of its inputs or land where it cannot be written.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crate::support::{catalogue, mesh_adopt, text};

const SOURCE: &str = "https://git.mesh.test/catalogue.git";

/// `mesh-adopt ARGS` in `dir` on the catalogue `catalogue`, killed (and the test failed) if it
/// has not ended within 20 s: what the test is about is that it ends.
fn ends(dir: &Path, catalogue: &Path, args: &[&str]) -> Output {
    mesh_adopt().args(args).catalogue(catalogue).current_dir(dir).timeout(Duration::from_secs(20)).output()
}

fn refused(out: &Output, mentions: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(mentions), "{stderr}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("plan:"),
        "it ran: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A FIFO at `at`, made by `mkfifo`; its path.
fn fifo(at: &Path) -> String {
    let made = Command::new("mkfifo").arg(at).status().unwrap();
    assert!(made.success(), "mkfifo {}", at.display());
    at.to_str().unwrap().to_string()
}

#[test]
fn a_record_or_plan_that_is_not_a_regular_file_is_refused_before_anything_runs() {
    let dir = catalogue();
    let pipe = fifo(&dir.path().join("nobody-reads"));
    let out = ends(dir.path(), dir.path(), &["run", "--catalog-source", SOURCE, "--record", &pipe]);
    refused(&out, &format!("`{pipe}` is a FIFO: a recording is written only to a regular file"));
    let out = ends(dir.path(), dir.path(), &["check", "--catalog-source", SOURCE, "--out", "/dev/full"]);
    refused(&out, "`/dev/full` is a device: a plan is written only to a regular file");
    let out =
        ends(dir.path(), dir.path(), &["check", "--catalog-source", SOURCE, "--out", dir.path().to_str().unwrap()]);
    refused(&out, "is a directory: a plan is written only to a regular file");
}

#[test]
fn a_live_configuration_that_is_not_a_regular_file_or_sets_a_zero_limit_is_refused() {
    let dir = catalogue();
    let pipe = fifo(&dir.path().join("nobody-writes"));
    let out = ends(dir.path(), dir.path(), &["run", "--mesh", "live", "--catalog-source", SOURCE, "--config", &pipe]);
    refused(&out, &format!("`{pipe}` is not a regular file"));
    // The configuration found beside the command, when it is no file, is not skipped for
    // the defaults.
    let here = tempfile::tempdir().unwrap();
    std::fs::create_dir(here.path().join("mesh-adopt.toml")).unwrap();
    let out = ends(here.path(), dir.path(), &["run", "--mesh", "live", "--catalog-source", SOURCE]);
    refused(&out, "mesh-adopt.toml` is not a regular file");
    let zero = dir.path().join("zero.toml");
    std::fs::write(&zero, "output_bytes = 0\n").unwrap();
    let out = ends(
        dir.path(),
        dir.path(),
        &["run", "--mesh", "live", "--catalog-source", SOURCE, "--config", zero.to_str().unwrap()],
    );
    refused(&out, "`output_bytes` in");
}

#[test]
fn a_plugin_linked_out_of_the_catalogue_is_refused_and_no_digest_of_it_shown() {
    let dir = catalogue();
    let plugin = dir.path().join("modules/postgres/adopt.wasm");
    std::fs::remove_file(&plugin).unwrap();
    std::os::unix::fs::symlink("../../genesis/credentials/store-superuser", &plugin).unwrap();
    // Inside the checkout, but out of its modules: refused, even pinned, its digest unshown.
    let manifest_path = dir.path().join("modules/postgres/manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["adopt"]["sha256"] = "0".repeat(64).into();
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let inside = ends(dir.path(), dir.path(), &["check", "postgres", "--catalog-source", SOURCE]);
    refused_stdout(&inside, "outside the catalogue's modules");
    let credential = std::fs::read(dir.path().join("genesis/credentials/store-superuser")).unwrap();
    let digest = mesh_adopt_runtime::catalogue::sha256_hex(&credential);
    let said = format!("{}{}", String::from_utf8_lossy(&inside.stdout), String::from_utf8_lossy(&inside.stderr));
    assert!(!said.contains(&digest), "the credential's digest was shown: {said}");
    // Out of the catalogue altogether: refused, naming where it leads.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "an operator's password").unwrap();
    std::fs::remove_file(&plugin).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), &plugin).unwrap();
    let out = ends(dir.path(), dir.path(), &["check", "postgres", "--catalog-source", SOURCE]);
    refused_stdout(&out, "outside the catalogue");
    let digest = mesh_adopt_runtime::catalogue::sha256_hex(b"an operator's password");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(&digest));
}

#[test]
fn a_modules_directory_linked_out_of_the_catalogue_is_refused() {
    let dir = catalogue();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::rename(dir.path().join("modules"), elsewhere.path().join("modules")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("modules"), dir.path().join("modules")).unwrap();
    let out = ends(dir.path(), dir.path(), &["check", "postgres", "--catalog-source", SOURCE]);
    refused_stdout(&out, "outside the catalogue's modules");
}

/// Exit 2, with `mentions` in what the command printed for a person.
fn refused_stdout(out: &Output, mentions: &str) {
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains(mentions), "{said}");
}

#[test]
fn a_manifest_that_is_not_utf8_is_refused_though_the_byte_sits_in_a_field_the_host_skips() {
    let dir = catalogue();
    let path = dir.path().join("modules/mesh-vault/manifest.json");
    let mut bytes = b"{\"note\": \"\xff\", ".to_vec();
    bytes.extend_from_slice(&std::fs::read(&path).unwrap()[1..]);
    std::fs::write(&path, bytes).unwrap();
    let out = ends(dir.path(), dir.path(), &["run", "mesh-vault", "--catalog-source", SOURCE]);
    refused_stdout(&out, "is not UTF-8 (the byte at offset 10 is not)");
}

#[test]
fn fifos_in_place_of_the_compile_cache_s_files_hold_nothing_up() {
    let dir = catalogue();
    let first = ends(dir.path(), dir.path(), &["check", "--catalog-source", SOURCE]);
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    // Every file the cache holds (entries, locks, function packs, digest records) becomes a
    // FIFO nobody writes or reads.
    let mut replaced = 0;
    let mut dirs = vec![dir.path().join("cache/mesh-adopt")];
    while let Some(at) = dirs.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                std::fs::remove_file(&path).unwrap();
                fifo(&path);
                replaced += 1;
            }
        }
    }
    assert!(replaced >= 4, "the cache held {replaced} files");
    let again = ends(dir.path(), dir.path(), &["check", "--catalog-source", SOURCE]);
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stderr));
}

#[test]
fn a_scenario_found_in_a_catalogue_that_is_not_a_regular_file_is_refused_and_a_link_cycle_ends() {
    let dir = catalogue();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    let pipe = fifo(&scenarios.join("nobody-writes.toml"));
    let out = ends(dir.path(), dir.path(), &["test"]);
    refused(&out, &format!("`{pipe}` is not a regular file"));
    std::fs::remove_file(&pipe).unwrap();
    std::os::unix::fs::symlink("/dev/zero", scenarios.join("endless.toml")).unwrap();
    let out = ends(dir.path(), dir.path(), &["test"]);
    refused(&out, "endless.toml` is not a regular file");
    std::fs::remove_file(scenarios.join("endless.toml")).unwrap();
    // A link back up the tree: each directory is searched once.
    let shipped = crate::support::root().join("catalogue/scenarios/phase-three.toml");
    std::fs::copy(shipped, scenarios.join("phase-three.toml")).unwrap();
    std::fs::create_dir_all(scenarios.join("nested")).unwrap();
    std::os::unix::fs::symlink("..", scenarios.join("nested/up")).unwrap();
    let out = ends(dir.path(), dir.path(), &["test"]);
    let said = String::from_utf8_lossy(&out.stdout);
    let once = ends(dir.path(), dir.path(), &["test", scenarios.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(said.lines().last(), Some("1 passed, 0 failed"), "{said}");
    assert_eq!(said, String::from_utf8_lossy(&once.stdout));
}

#[test]
fn a_credential_that_cannot_be_read_stops_the_run_before_anything_is_shown() {
    let dir = catalogue();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("value"), "another-secret-value-999\n").unwrap();
    let credentials = dir.path().join("genesis/credentials");
    std::os::unix::fs::symlink(outside.path().join("value"), credentials.join("linked-out")).unwrap();
    // The value would be the node's name, shown in every line: the run never gets that far.
    let out =
        ends(dir.path(), dir.path(), &["check", "--catalog-source", SOURCE, "--node", "another-secret-value-999"]);
    refused(&out, "the credentials directory holds `linked-out`, which cannot be read as a credential");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("another-secret-value-999"));
    std::fs::remove_file(credentials.join("linked-out")).unwrap();
    fifo(&credentials.join("a-fifo"));
    let out = ends(dir.path(), dir.path(), &["run", "--catalog-source", SOURCE]);
    refused(&out, "`a-fifo`, which cannot be read as a credential");
}

/// An input that is a FIFO nobody writes is refused, not waited on: a manifest makes its
/// module unusable; the foundation, a saved plan and a recording stop the command before
/// anything runs.
#[test]
fn a_fifo_in_place_of_a_manifest_foundation_plan_or_recording_is_refused_not_waited_on() {
    let dir = catalogue();
    let manifest = dir.path().join("modules/nats/manifest.json");
    std::fs::remove_file(&manifest).unwrap();
    fifo(&manifest);
    let out = ends(dir.path(), dir.path(), &["check", "--catalog-source", SOURCE]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("is not a regular file"), "{}", text(&out.stdout));
    let pipe = fifo(&dir.path().join("pipe"));
    for args in [
        ["check", "postgres", "--foundation", &pipe].as_slice(),
        &["run", "postgres", "--catalog-source", SOURCE, "--plan", &pipe],
        &["replay", &pipe],
    ] {
        refused(&ends(dir.path(), dir.path(), args), "is not a regular file");
    }
}

#[test]
fn outputs_that_are_one_file_or_a_hard_link_to_an_input_are_refused() {
    let dir = catalogue();
    let out_path = dir.path().join("..").join(format!("same-{}.out", std::process::id()));
    let same = out_path.to_str().unwrap();
    let out = mesh_adopt().args(["check", "--out", same, "--record", same]).catalogue(dir.path()).output();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("name the same file"), "{}", text(&out.stderr));
    assert!(!out_path.exists());
    // A hard link to a manifest is that manifest under another name.
    let manifest = dir.path().join("modules/mesh-vault/manifest.json");
    let before = std::fs::read(&manifest).unwrap();
    let link = dir.path().join("..").join(format!("link-{}.jsonl", std::process::id()));
    std::fs::hard_link(&manifest, &link).unwrap();
    let out = mesh_adopt().args(["run", "--record", link.to_str().unwrap()]).catalogue(dir.path()).output();
    let _ = std::fs::remove_file(&link);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is the same file as one of this run's inputs"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&manifest).unwrap(), before, "the manifest is unchanged");
}

/// An output whose directory is not there is refused before anything runs, as one that is a
/// FIFO or a directory is, not after the whole check.
#[test]
fn an_output_in_a_directory_that_is_not_there_is_refused_before_the_check() {
    let dir = catalogue();
    let out = mesh_adopt()
        .args(["check", "--catalog-source", SOURCE, "--out", "/nonexistent/plan.json"])
        .catalogue(dir.path())
        .output();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("its directory `/nonexistent` does not exist"), "{stderr}");
    assert!(!text(&out.stdout).contains("summary"), "nothing ran");
}
