//! The conformance suite: `mesh-vault` and `postgres` written in JavaScript and in Python
//! (`plugins/js/`, `plugins/python/`) pass the very scenarios the Rust plugins ship with, and
//! the fault sweep over them, in the shipped catalogue with phase three's `nats` beside them.
//! Each language's plugins are built by `mesh-adopt build` from the manifests' `adopt.source`,
//! with the toolchains `just setup-langs` installs.
//!
//! The compile cache is the suite's shared one ([`shared_compile_cache`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{mesh_adopt, root, shared_compile_cache};

pub(crate) fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The path from directory `from` to `to`, both absolute: manifests name their source
/// relative to themselves.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let (from, to): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut path: PathBuf = from[shared..].iter().map(|_| std::path::Component::ParentDir).collect();
    path.extend(&to[shared..]);
    path
}

/// A copy of the shipped catalogue whose `mesh-vault` and `postgres` manifests take their
/// plugin from `plugins/<language>/<module>`; `nats` keeps its Rust plugin.
fn catalogue_in(language: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let shipped = root().join("catalogue");
    let copied = Command::new("cp").arg("-r").arg(shipped.join(".")).arg(dir.path()).status().unwrap();
    assert!(copied.success());
    for module in ["mesh-vault", "postgres"] {
        let module_dir = dir.path().join("modules").join(module);
        let manifest_path = module_dir.join("manifest.json");
        let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
        let source = root().join("plugins").join(language).join(module);
        assert!(source.is_dir(), "`{}` is missing", source.display());
        manifest["adopt"]["source"] =
            relative(&module_dir.canonicalize().unwrap(), &source).display().to_string().into();
        std::fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
        // What the Rust build left there must not pass for this language's.
        std::fs::remove_file(module_dir.join("adopt.wasm")).unwrap();
    }
    dir
}

/// The shipped scenarios of the three modules, and the catalogue's own in `catalogue`.
pub(crate) fn shipped_scenarios(catalogue: &Path) -> Vec<String> {
    let mut scenarios: Vec<String> = ["postgres", "mesh-vault", "nats"]
        .iter()
        .map(|module| root().join("plugins").join(module).join("scenarios").display().to_string())
        .collect();
    scenarios.push(catalogue.join("scenarios").display().to_string());
    scenarios
}

/// `test --sweep` of the shipped scenarios in `catalogue`, its plugins running as `code`
/// (`--code`): its report, and whether it passed.
pub(crate) fn sweep(catalogue: &Path, code: &str) -> (String, bool) {
    let scenarios = shipped_scenarios(catalogue);
    let mut args = vec!["test", "--catalogue", catalogue.to_str().unwrap(), "--sweep", "--code", code];
    args.extend(scenarios.iter().map(String::as_str));
    let tested = mesh_adopt().args(args).env("XDG_CACHE_HOME", shared_compile_cache()).output();
    (said(&tested), tested.status.success())
}

/// The sweep's closing line, which counts its steps and faults.
pub(crate) fn sweep_line(report: &str) -> &str {
    report.lines().find(|line| line.starts_with("sweep: ")).unwrap_or_else(|| panic!("no sweep line in:\n{report}"))
}

/// The Rust plugins' sweep of the shipped catalogue: what every language's must equal.
pub(crate) fn rust_sweep() -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| {
        let (report, passed) = sweep(&root().join("catalogue"), "auto");
        assert!(passed, "the Rust plugins do not pass:\n{report}");
        sweep_line(&report).to_string()
    })
}

/// Builds `language`'s plugins into a catalogue, then runs every shipped scenario of the
/// three modules and the catalogue, and the sweep over them, which must take the same steps
/// and survive the same faults as the Rust plugins': on the optimised code the build made,
/// and again on baseline code.
fn conforms(language: &str) {
    let catalogue = catalogue_in(language);
    let at = catalogue.path().to_str().unwrap();
    let built = mesh_adopt()
        .args(["build", "--no-pin", "--catalogue", at, "mesh-vault", "postgres"])
        .env("XDG_CACHE_HOME", shared_compile_cache())
        .output();
    assert!(built.status.success(), "`mesh-adopt build` of the {language} plugins failed:\n{}", said(&built));
    for module in ["mesh-vault", "postgres"] {
        let placed = String::from_utf8_lossy(&built.stdout);
        assert!(placed.contains(&format!("placed {module}")), "{placed}");
        // The JavaScript SDK builds without StarlingMonkey's `http`: its plugins import no
        // `wasi:http`, which the host does not give.
        if language == "js" {
            let inspected = mesh_adopt().args(["inspect", module, "--no-cache", "--catalogue", at]).output();
            let imports = String::from_utf8_lossy(&inspected.stdout);
            assert!(imports.contains("wasi:random/") && !imports.contains("wasi:http/"), "{imports}");
        }
    }
    let shipped: usize =
        shipped_scenarios(catalogue.path()).iter().map(|dir| std::fs::read_dir(dir).unwrap().count()).sum();
    for code in ["optimised", "baseline"] {
        let (report, passed) = sweep(catalogue.path(), code);
        assert!(passed, "the {language} plugins do not pass the shipped scenarios on {code} code:\n{report}");
        assert!(report.contains(&format!("\n{shipped} passed, 0 failed")), "{report}");
        let line = sweep_line(&report);
        assert_eq!(line, rust_sweep(), "the {language} plugins' sweep on {code} code differs from the Rust plugins'");
    }
}

#[test]
fn mesh_vault_and_postgres_in_javascript_pass_the_shipped_scenarios_and_the_sweep() {
    conforms("js");
}

#[test]
fn mesh_vault_and_postgres_in_python_pass_the_shipped_scenarios_and_the_sweep() {
    conforms("python");
}
