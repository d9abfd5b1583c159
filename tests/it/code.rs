//! Which native code plugins run as: a run says, for each plugin, which code it ran as and
//! whether it compiled it; `--code` forces a kind; `cache optimise` puts optimised code in
//! the place of baseline code; `cache prune` holds the cache to a size; and the shipped
//! scenarios and their sweep pass on each kind of code.

use std::path::Path;

use serde_json::Value;

use crate::support::{catalogue, text};
use crate::support::{mesh_adopt, root};

const SOURCE: &str = "https://git.mesh.test/catalogue.git@v3";

/// The `loaded` events of phase three run in `dir` (its cache inside it) with `options`,
/// which must adopt.
fn loaded(dir: &Path, options: &[&str]) -> Vec<Value> {
    let out = mesh_adopt().args(["run", "--json", "--catalog-source", SOURCE]).args(options).catalogue(dir).output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let events: Vec<Value> = stdout.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let loaded: Vec<Value> = events.into_iter().filter(|e| e["event"] == "loaded").collect();
    let modules: Vec<&str> = loaded.iter().map(|e| e["module"].as_str().unwrap()).collect();
    assert_eq!(modules, ["postgres", "nats", "mesh-vault"], "{stdout}");
    loaded
}

/// Whether every event says it ran as `code` made by `compiler`, compiled by this run or not.
fn all_ran_as(events: &[Value], code: &str, compiler: &str, compiled: bool) -> bool {
    events.iter().all(|e| {
        e["code"] == code
            && e["compiler"] == compiler
            && e["compiled"] == compiled
            && e["compile_ms"].is_u64() == compiled
            && e["compile_ms"].is_null() != compiled
    })
}

/// The names of the compiled entries in `dir`'s compile cache.
fn entries(dir: &Path) -> Vec<String> {
    let cache = dir.join("cache/mesh-adopt");
    let names = std::fs::read_dir(cache).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
    names.filter(|name| name.ends_with(".cwasm")).collect()
}

#[test]
fn a_run_says_which_code_each_plugin_ran_as_and_whether_it_compiled_it() {
    let dir = catalogue();
    // Rust plugins are small: optimised at once, on their first run ...
    let first = loaded(dir.path(), &[]);
    assert!(all_ran_as(&first, "optimised", "cranelift", true), "{first:#?}");
    // ... and taken from the cache after.
    let second = loaded(dir.path(), &[]);
    assert!(all_ran_as(&second, "optimised", "cranelift", false), "{second:#?}");
}

#[test]
fn baseline_code_adopts_phase_three_and_cache_optimise_puts_optimised_code_in_its_place() {
    let dir = catalogue();
    let baseline = loaded(dir.path(), &["--code", "baseline"]);
    assert!(all_ran_as(&baseline, "baseline", "winch", true), "{baseline:#?}");
    assert!(entries(dir.path()).iter().all(|name| name.contains("-baseline-")), "{:?}", entries(dir.path()));
    // A person is told how to have the faster code.
    let human = |code: &str| {
        let out = mesh_adopt().args(["run", "--code", code, "--catalog-source", SOURCE]).catalogue(dir.path()).output();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let noted = human("baseline");
    assert!(
        noted.contains("postgres, nats, mesh-vault ran on baseline code")
            && noted.contains("mesh-adopt cache optimise"),
        "{noted}"
    );
    let inspected = mesh_adopt().args(["inspect", "postgres"]).catalogue(dir.path()).output();
    assert!(text(&inspected.stdout).contains("\ncode         baseline (winch), "), "{}", text(&inspected.stdout));

    let optimised = mesh_adopt().args(["cache", "optimise"]).catalogue(dir.path()).output();
    let said = text(&optimised.stdout);
    assert_eq!(optimised.status.code(), Some(0), "{said}{}", text(&optimised.stderr));
    for module in ["mesh-vault", "nats", "postgres"] {
        assert!(said.lines().any(|l| l.starts_with(&format!("optimised {module} ")) && l.ends_with(" s")), "{said}");
    }
    // The baseline code is gone; runs take the optimised code without compiling.
    let names = entries(dir.path());
    assert!(names.len() == 3 && names.iter().all(|name| name.contains("-optimised-")), "{names:?}");
    let auto = loaded(dir.path(), &[]);
    assert!(all_ran_as(&auto, "optimised", "cranelift", false), "{auto:#?}");
    assert!(!human("auto").contains("baseline"), "no note on optimised code");
    let again = mesh_adopt().args(["cache", "optimise", "postgres"]).catalogue(dir.path()).output();
    assert!(text(&again.stdout).trim_end().ends_with("in the cache already"), "{}", text(&again.stdout));
    // Baseline code asked for again is compiled again: it was removed, not kept beside.
    let forced = loaded(dir.path(), &["--code", "baseline"]);
    assert!(all_ran_as(&forced, "baseline", "winch", true), "{forced:#?}");
}

#[test]
fn cache_prune_holds_the_cache_to_a_size_and_a_run_after_compiles_again() {
    let dir = catalogue();
    loaded(dir.path(), &[]);
    assert_eq!(entries(dir.path()).len(), 3);
    let cache = dir.path().join("cache/mesh-adopt");
    let pruned = mesh_adopt().args(["cache", "prune", "--to", "0", "--cache"]).arg(&cache).output();
    let said = text(&pruned.stdout);
    assert_eq!(pruned.status.code(), Some(0), "{said}{}", text(&pruned.stderr));
    assert!(said.starts_with("removed ") && said.contains("` holds 0.0 MiB of compiled code"), "{said}");
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    let after = loaded(dir.path(), &[]);
    assert!(all_ran_as(&after, "optimised", "cranelift", true), "{after:#?}");

    let refused = mesh_adopt().args(["cache", "prune", "--to", "lots", "--cache"]).arg(&cache).output();
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused.stderr).contains("`lots` is not a size"), "{}", text(&refused.stderr));
}

#[test]
fn the_shipped_scenarios_and_their_sweep_pass_on_each_kind_of_code() {
    let swept: Vec<String> = ["baseline", "optimised"]
        .map(|code| {
            let cache = tempfile::tempdir().unwrap();
            let out = mesh_adopt()
                .args(["test", "--sweep", "--code", code])
                .current_dir(root())
                .env("XDG_CACHE_HOME", cache.path())
                .output();
            let report = format!("{}{}", text(&out.stdout), text(&out.stderr));
            assert_eq!(out.status.code(), Some(0), "on {code} code:\n{report}");
            let line = report.lines().find(|l| l.starts_with("sweep: ")).unwrap_or_else(|| panic!("{report}"));
            line.to_string()
        })
        .into();
    assert_eq!(swept[0], swept[1], "the sweep differs between the kinds of code");
}

#[test]
fn a_small_plugin_is_not_left_on_baseline_code_a_forced_run_compiled() {
    let dir = catalogue();
    loaded(dir.path(), &["--code", "baseline"]);
    let auto = loaded(dir.path(), &[]);
    assert!(all_ran_as(&auto, "optimised", "cranelift", true), "{auto:#?}");
    // The optimised code took the baseline code's place.
    let names = entries(dir.path());
    assert!(names.len() == 3 && names.iter().all(|name| name.contains("-optimised-")), "{names:?}");
}

#[test]
fn cache_optimise_holds_plugins_to_their_pins_and_compiles_nothing_for_a_module_not_there() {
    let dir = catalogue();
    let out = mesh_adopt().args(["cache", "optimise", "postgres", "nosuch"]).catalogue(dir.path()).output();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("nosuch"), "{}", text(&out.stderr));
    assert!(!dir.path().join("cache/mesh-adopt").exists() || entries(dir.path()).is_empty());

    // nats's manifest pins another plugin than the one in place: not optimised, and said so;
    // the other modules still are.
    let manifest_path = dir.path().join("modules/nats/manifest.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["adopt"]["sha256"] = "0".repeat(64).into();
    std::fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    let out = mesh_adopt().args(["cache", "optimise"]).catalogue(dir.path()).output();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("the `nats` module's plugin was not optimised") && stderr.contains("pins"), "{stderr}");
    assert!(stdout.contains("optimised postgres ") && stdout.contains("optimised mesh-vault "), "{stdout}");
    assert_eq!(entries(dir.path()).len(), 2);
}

#[test]
fn an_entry_that_is_not_sound_is_not_shown_and_is_replaced_by_the_next_run() {
    let dir = catalogue();
    loaded(dir.path(), &[]);
    let cache = dir.path().join("cache/mesh-adopt");
    for name in entries(dir.path()) {
        let path = cache.join(name);
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
    }
    let inspected = mesh_adopt().args(["inspect", "postgres"]).catalogue(dir.path()).output();
    assert!(text(&inspected.stdout).contains("\ncode         none compiled yet"), "{}", text(&inspected.stdout));
    let again = loaded(dir.path(), &[]);
    assert!(all_ran_as(&again, "optimised", "cranelift", true), "{again:#?}");
    let after = loaded(dir.path(), &[]);
    assert!(all_ran_as(&after, "optimised", "cranelift", false), "{after:#?}");
}

#[test]
fn cache_optimise_fails_when_the_cache_cannot_keep_what_it_compiled_and_names_every_module_not_there() {
    let dir = catalogue();
    let out =
        mesh_adopt().args(["cache", "optimise", "bogus-one", "postgres", "bogus-two"]).catalogue(dir.path()).output();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("nothing was optimised") && stderr.contains("bogus-one") && stderr.contains("bogus-two"),
        "{stderr}"
    );

    // Where postgres's optimised entry goes, a directory with something in it: no entry can
    // be renamed there.
    loaded(dir.path(), &[]);
    let cache = dir.path().join("cache/mesh-adopt");
    let postgres = entries(dir.path()).into_iter().find(|name| {
        let digest = name.split('-').next().unwrap();
        text(&mesh_adopt().args(["inspect", "postgres"]).catalogue(dir.path()).output().stdout).contains(digest)
    });
    let entry = cache.join(postgres.expect("postgres's entry"));
    std::fs::remove_file(&entry).unwrap();
    std::fs::create_dir_all(entry.join("in-the-way")).unwrap();
    let out = mesh_adopt().args(["cache", "optimise", "postgres"]).catalogue(dir.path()).output();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}{stderr}", text(&out.stdout));
    assert!(stderr.contains("was compiled, but the compile cache could not keep it"), "{stderr}");
}
