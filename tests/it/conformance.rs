//! The conformance suite: `mesh-vault` and `postgres` written in JavaScript and in Python
//! (`plugins/js/`, `plugins/python/`) pass the very scenarios the Rust plugins ship with, and
//! the fault sweep over them, in the shipped catalogue with phase three's `nats` beside them.
//! Each language's plugins are built by `mesh-adopt build` from the manifests' `adopt.source`,
//! with the toolchains `just setup-langs` installs.
//!
//! The guide's hand-over example (docs/writing-a-plugin.md, "A hand-over in each language")
//! is held here too: what the guide shows in each language is the file the tests build, and
//! each language's build adopts in the walkthrough's catalogue as the guide says.
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

/// The hand-over example of docs/writing-a-plugin.md in each language: the fence its code
/// block has in the guide, the file the block shows, and the directory `mesh-adopt build`
/// builds it from (all relative to the project).
const HAND_OVER: [(&str, &str, &str); 3] = [
    ("rust", "plugins/examples/redis/src/lib.rs", "plugins/examples/redis"),
    ("js", "plugins/js/examples/redis/app.js", "plugins/js/examples/redis"),
    ("python", "plugins/python/examples/redis/app.py", "plugins/python/examples/redis"),
];

fn guide() -> String {
    std::fs::read_to_string(root().join("docs/writing-a-plugin.md")).unwrap()
}

/// The guide's section headed `title` (`### …`), up to the next heading of its level.
fn section<'a>(guide: &'a str, title: &str) -> &'a str {
    let start = guide.find(&format!("\n{title}\n")).unwrap_or_else(|| panic!("the guide has no section `{title}`"));
    let rest = &guide[start + title.len() + 2..];
    let level = title.split(' ').next().unwrap();
    rest.find(&format!("\n{level} ")).map_or(rest, |end| &rest[..end])
}

/// The text of the first code block fenced as ```` ```fence ```` after `after` in `text`.
fn block_after<'a>(text: &'a str, after: &str, fence: &str) -> &'a str {
    let rest = text.split_once(after).unwrap_or_else(|| panic!("the guide does not say `{after}`")).1;
    let code =
        rest.split_once(&format!("```{fence}\n")).unwrap_or_else(|| panic!("no ```{fence} block after `{after}`")).1;
    &code[..code.find("```\n").expect("the block ends")]
}

/// The guide shows each language's hand-over as the file the tests build and run, word for
/// word, each after a link to its file.
#[test]
fn the_guides_hand_over_example_in_each_language_is_the_file_the_tests_build() {
    let guide = guide();
    let section = section(&guide, "### A hand-over in each language");
    for (fence, file, _) in HAND_OVER {
        let shown = block_after(section, &format!("](../{file})"), fence);
        let kept = std::fs::read_to_string(root().join(file)).unwrap();
        assert_eq!(shown, kept, "docs/writing-a-plugin.md shows another {fence} hand-over than `{file}` holds");
    }
}

/// The catalogue of the guide's walkthrough: the shipped foundation with the container its
/// step 1 adds, and the shipped genesis credentials with the cache's.
fn walkthrough_catalogue(guide: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let shipped = root().join("catalogue");
    let mut foundation: serde_json::Value =
        serde_json::from_slice(&std::fs::read(shipped.join("foundation.json")).unwrap()).unwrap();
    let step_1 = section(guide, "### 1. A catalogue repository");
    let added = block_after(step_1, "then add the container below", "json");
    foundation["resources"].as_array_mut().unwrap().push(serde_json::from_str(added).unwrap());
    std::fs::write(dir.path().join("foundation.json"), serde_json::to_vec_pretty(&foundation).unwrap()).unwrap();
    let credentials = dir.path().join("genesis/credentials");
    std::fs::create_dir_all(&credentials).unwrap();
    for credential in std::fs::read_dir(shipped.join("genesis/credentials")).unwrap() {
        let credential = credential.unwrap().path();
        std::fs::copy(&credential, credentials.join(credential.file_name().unwrap())).unwrap();
    }
    assert!(step_1.contains("printf 's3cret-cache-password\\n' > genesis/credentials/cache-password"), "{step_1}");
    std::fs::write(credentials.join("cache-password"), "s3cret-cache-password\n").unwrap();
    std::fs::create_dir_all(dir.path().join("modules")).unwrap();
    dir
}

/// The module `new redis --adopts cache` writes in `catalogue`, its plugin built from
/// `source` (relative to the project).
fn add_hand_over(catalogue: &Path, source: &str) {
    let made = mesh_adopt().args(["new", "redis", "--adopts", "cache"]).catalogue(catalogue).output();
    assert!(made.status.success(), "`mesh-adopt new redis --adopts cache` failed:\n{}", said(&made));
    let module_dir = catalogue.join("modules/redis");
    let manifest_path = module_dir.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["adopt"]["source"] =
        relative(&module_dir.canonicalize().unwrap(), &root().join(source)).display().to_string().into();
    std::fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
}

/// The guide's way to a JavaScript or Python hand-over, its shell lines run as written in the
/// walkthrough's catalogue (the SDK by path, as `new` takes it from this checkout): what it
/// leaves in `modules/redis/` is the manifest and scenarios of `new --adopts` and a package of
/// the language whose SDK its new place still reaches. (Its builds, which install the
/// package's toolchain, are those of `a_new_module_in` in scaffold.rs.)
#[test]
fn the_guides_way_to_a_javascript_or_python_hand_over_leaves_a_package_that_reaches_its_sdk() {
    let guide = guide();
    let section = section(&guide, "### A hand-over in each language");
    let lines = block_after(section, "put a package of your language in place of the crate", "sh");
    for (language, package, sdk) in
        [("js", "package.json", "plugins/js/sdk"), ("python", "pyproject.toml", "plugins/python/sdk")]
    {
        let catalogue = walkthrough_catalogue(&guide);
        let module_dir = catalogue.path().join("modules/redis");
        for line in lines.lines() {
            let line = line.split('#').next().unwrap().trim().replace("--lang js", &format!("--lang {language}"));
            let done = match line.strip_prefix("mesh-adopt ") {
                Some(args) => mesh_adopt().current_dir(catalogue.path()).args(args.split_whitespace()).output(),
                None => Command::new("sh").arg("-c").arg(&line).current_dir(catalogue.path()).output().unwrap(),
            };
            assert!(done.status.success(), "`{line}` failed:\n{}", said(&done));
        }
        let plugin = module_dir.join("plugin");
        assert!(plugin.join(package).is_file() && !plugin.join("Cargo.toml").exists(), "{}", plugin.display());
        assert!(!catalogue.path().join("modules/scratch").exists());
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(module_dir.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(manifest["adopts"][0]["credential"], "cache-password");
        assert_eq!(manifest["adopt"]["source"], "plugin");
        assert!(module_dir.join("scenarios/adopts-in-place.toml").is_file());
        // Where the package takes the SDK from, relative to its new place.
        let named = match language {
            "js" => {
                let package: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(plugin.join("package.json")).unwrap()).unwrap();
                package["dependencies"]["@mesh-adopt/sdk"].as_str().unwrap().trim_start_matches("file:").to_string()
            }
            _ => std::fs::read_to_string(plugin.join("requirements.txt"))
                .unwrap()
                .lines()
                .find(|line| !line.starts_with('#'))
                .unwrap()
                .to_string(),
        };
        let reached = plugin.join(&named).canonicalize().unwrap_or_else(|e| panic!("`{named}`: {e}"));
        assert_eq!(reached, root().join(sdk).canonicalize().unwrap(), "{named}");
    }
}

/// The guide's hand-over in `language`, built from its source into the walkthrough's
/// catalogue: it passes the scenarios `new redis --adopts cache` wrote and their sweep, and
/// `mesh-adopt run` prints what the walkthrough's step 5 shows, line for line.
fn the_guides_hand_over_adopts_in(language: &str) {
    let guide = guide();
    let (_, file, source) = HAND_OVER.iter().find(|(fence, ..)| *fence == language).unwrap();
    let catalogue = walkthrough_catalogue(&guide);
    add_hand_over(catalogue.path(), source);
    let cli = || mesh_adopt().catalogue(catalogue.path()).env("XDG_CACHE_HOME", shared_compile_cache());
    let built = cli().args(["build", "--no-pin", "redis"]).output();
    assert!(built.status.success(), "`mesh-adopt build` of `{file}` failed:\n{}", said(&built));
    let tested = cli().args(["test", "--sweep"]).arg(catalogue.path().join("modules/redis")).output();
    let report = said(&tested);
    assert!(tested.status.success(), "`{file}` does not pass the scenarios `new --adopts` writes:\n{report}");
    assert!(report.contains("\n4 passed, 0 failed") && report.contains(" 0 runs did not converge"), "{report}");
    let step_5 = section(&guide, "### 5. `mesh-adopt run`");
    let command: Vec<&str> = block_after(step_5, "", "sh").split_whitespace().collect();
    assert_eq!(command[..2], ["mesh-adopt", "run"], "{step_5}");
    let ran = cli().args(&command[1..]).output();
    assert!(ran.status.success(), "`{file}` does not adopt:\n{}", said(&ran));
    let shown = block_after(step_5, "```\n\n", "");
    assert_eq!(String::from_utf8_lossy(&ran.stdout), shown, "`{file}` runs otherwise than the guide's step 5 shows");
}

#[test]
fn the_guides_hand_over_in_rust_adopts_as_the_walkthrough_shows() {
    the_guides_hand_over_adopts_in("rust");
}

#[test]
fn the_guides_hand_over_in_javascript_adopts_as_the_walkthrough_shows() {
    the_guides_hand_over_adopts_in("js");
}

#[test]
fn the_guides_hand_over_in_python_adopts_as_the_walkthrough_shows() {
    the_guides_hand_over_adopts_in("python");
}
