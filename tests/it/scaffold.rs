//! A catalogue in its own repository, worked on as its authors would from
//! docs/writing-a-plugin.md: `new`, `build`, `test --sweep`, `run` and `build --check`, all
//! through the binary, in a directory outside the project with its own `git init`, the SDK
//! taken as a package by path.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::Digest as _;

use crate::support::{Cli, mesh_adopt, plugin, root, shared_compile_cache, text};

/// A catalogue repository outside the project: the shipped foundation with a `cache`
/// container genesis raised beside the store, the store's credential and the cache's, and
/// phase three's modules as shipped (their plugins prebuilt, their scenarios beside them).
struct CatalogueRepo {
    dir: tempfile::TempDir,
    /// The compile cache of the author's machine, outside the repository: the repository's
    /// own, or the suite's.
    cache: PathBuf,
    _own_cache: Option<tempfile::TempDir>,
}

impl CatalogueRepo {
    fn new() -> CatalogueRepo {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path();
        let shipped = root().join("catalogue");
        let mut foundation: serde_json::Value =
            serde_json::from_slice(&std::fs::read(shipped.join("foundation.json")).unwrap()).unwrap();
        foundation["resources"].as_array_mut().unwrap().push(serde_json::json!({
            "id": "cache", "kind": "container", "name": "mesh-cache", "image": "redis:7.4-alpine",
            "volumes": ["/var/lib/mesh/cache:/data"]
        }));
        std::fs::write(at.join("foundation.json"), serde_json::to_vec_pretty(&foundation).unwrap()).unwrap();
        std::fs::create_dir_all(at.join("genesis/credentials")).unwrap();
        std::fs::copy(
            shipped.join("genesis/credentials/store-superuser"),
            at.join("genesis/credentials/store-superuser"),
        )
        .unwrap();
        std::fs::write(at.join("genesis/credentials/cache-password"), "s3cret-cache-password\n").unwrap();
        for module in ["postgres", "nats", "mesh-vault"] {
            let module_dir = at.join("modules").join(module);
            std::fs::create_dir_all(module_dir.join("scenarios")).unwrap();
            // Shipped prebuilt: this catalogue holds no source for them.
            let mut manifest: serde_json::Value = serde_json::from_slice(
                &std::fs::read(shipped.join("modules").join(module).join("manifest.json")).unwrap(),
            )
            .unwrap();
            manifest["adopt"].as_object_mut().unwrap().remove("source");
            std::fs::write(module_dir.join("manifest.json"), serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
            std::fs::copy(plugin(&format!("adopt_{}", module.replace('-', "_"))), module_dir.join("adopt.wasm"))
                .unwrap();
            for scenario in std::fs::read_dir(root().join("plugins").join(module).join("scenarios")).unwrap() {
                let scenario = scenario.unwrap().path();
                std::fs::copy(&scenario, module_dir.join("scenarios").join(scenario.file_name().unwrap())).unwrap();
            }
        }
        let repo = CatalogueRepo::in_dir(dir);
        repo.git(&["init", "--quiet"]);
        repo
    }

    /// The repository in `dir` as it is, with a compile cache of its own.
    fn in_dir(dir: tempfile::TempDir) -> CatalogueRepo {
        let own = tempfile::tempdir().unwrap();
        CatalogueRepo { dir, cache: own.path().to_path_buf(), _own_cache: Some(own) }
    }

    /// The repository, compiling into the suite's shared cache: for a big JavaScript or
    /// Python plugin, whose compile then reuses the functions the others' compiles left.
    fn sharing_compiles(self) -> CatalogueRepo {
        CatalogueRepo { cache: shared_compile_cache(), _own_cache: None, ..self }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(self.path())
            .args(["-c", "user.name=author", "-c", "user.email=author@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `mesh-adopt` in the repository, as its author runs it there, to be given its arguments.
    /// The plugins' crates build into the project's plugin build directory, so the SDK and
    /// its dependencies compile once for every test. A JavaScript plugin's toolchain is
    /// installed from what npm's cache holds since `just setup-langs` fetched it, without
    /// asking the registry again.
    fn mesh_adopt(&self) -> Cli {
        mesh_adopt()
            .current_dir(self.path())
            .env("XDG_CACHE_HOME", &self.cache)
            .env("CARGO_TARGET_DIR", root().join("plugins/target"))
            .env("npm_config_prefer_offline", "true")
    }

    /// Makes a module's crate resolve the dependencies the project's plugins are built with,
    /// so its first build needs neither the network nor a compile of its dependencies.
    fn lock_like_the_project(&self, module: &str) {
        std::fs::copy(
            root().join("plugins/Cargo.lock"),
            self.path().join("modules").join(module).join("plugin/Cargo.lock"),
        )
        .unwrap();
    }
}

/// Asserts the command exited `code`, showing all it said when it did not.
fn exited(out: &Output, code: i32) -> String {
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(code), "{said}");
    text(&out.stdout)
}

fn sdk() -> String {
    format!("path:{}", root().join("plugins/sdk").display())
}

fn sha256_of(path: &Path) -> String {
    format!("{:x}", sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn a_catalogue_in_its_own_repository_adopts_a_new_module_with_phase_three() {
    let repo = CatalogueRepo::new();
    let made = exited(&repo.mesh_adopt().args(["new", "redis", "--adopts", "cache", "--sdk", &sdk()]).output(), 0);
    for file in [
        "modules/redis/manifest.json",
        "modules/redis/plugin/Cargo.toml",
        "modules/redis/plugin/src/lib.rs",
        "modules/redis/scenarios/adopts-in-place.toml",
    ] {
        assert!(made.contains(&format!("created {file}")), "{made}");
    }
    assert!(made.contains("mesh-adopt build redis"), "{made}");
    // The SDK is taken by a path relative to the plugin, so the catalogue can move.
    let cargo_toml = std::fs::read_to_string(repo.path().join("modules/redis/plugin/Cargo.toml")).unwrap();
    assert!(cargo_toml.contains("mesh-adopt-sdk = { path = \"../"), "{cargo_toml}");
    // The manifest's server is the container genesis raised, by name and image.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo.path().join("modules/redis/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["resources"][0]["name"], "mesh-cache");
    assert_eq!(manifest["resources"][0]["image"], "redis:7.4-alpine");
    assert_eq!(manifest["adopt"]["grants"]["credentials"][0], "cache-password");

    repo.lock_like_the_project("redis");
    let manifest_path = repo.path().join("modules/redis/manifest.json");
    let before = std::fs::read_to_string(&manifest_path).unwrap();
    let built = exited(&repo.mesh_adopt().args(["build"]).output(), 0);
    assert!(built.contains("placed redis"), "{built}");
    let placed = repo.path().join("modules/redis/adopt.wasm");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo.path().join("modules/redis/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["adopt"]["sha256"], sha256_of(&placed), "the build pins what it placed");
    // The pin is one line added; the rest of the manifest is byte for byte as it was.
    let after = std::fs::read_to_string(&manifest_path).unwrap();
    let pin_line = format!("\n    \"sha256\": \"{}\",", sha256_of(&placed));
    assert_eq!(after.replacen(&pin_line, "", 1), before, "{after}");
    // Built again from the same source, the plugin is the one placed: nothing to place.
    let again = exited(&repo.mesh_adopt().args(["build"]).output(), 0);
    assert!(again.contains("unchanged redis") && !again.contains("placed redis"), "{again}");
    // A build that fails places nothing, and says which plugin runs meanwhile.
    let source = repo.path().join("modules/redis/plugin/src/lib.rs");
    let code = std::fs::read_to_string(&source).unwrap();
    std::fs::write(&source, format!("{code}\nthis does not compile\n")).unwrap();
    let out = repo.mesh_adopt().args(["build"]).output();
    exited(&out, 2);
    let failed = text(&out.stderr);
    assert!(
        failed.contains("the `redis` module was not built; nothing was placed")
            && failed.contains(&format!("is still the plugin built before (sha256 {})", sha256_of(&placed))),
        "{failed}"
    );
    std::fs::write(&source, code).unwrap();
    // Readable by whoever builds or runs the catalogue, as files the author writes are.
    use std::os::unix::fs::PermissionsExt as _;
    for file in [&placed, &manifest_path] {
        assert_eq!(std::fs::metadata(file).unwrap().permissions().mode() & 0o777, 0o644, "{}", file.display());
    }

    // The whole run of four modules, two of which hand a credential over, in either order:
    // its sweep (every call failed, timed out, and the host killed after it, each then run
    // again) must converge with no rule broken.
    std::fs::create_dir_all(repo.path().join("scenarios")).unwrap();
    for (name, modules, kept) in [
        ("four-modules", r#"["postgres", "nats", "mesh-vault", "redis"]"#, r#"["mesh-store", "mesh-cache"]"#),
        (
            "four-modules-redis-first",
            r#"["redis", "postgres", "nats", "mesh-vault"]"#,
            r#"["mesh-cache", "mesh-store"]"#,
        ),
    ] {
        let scenario = format!(
            "name = \"phase three and redis, each handing its credential over\"\nmodules = {modules}\n[expect]\n\
             outcome = \"adopted\"\nstrict = false\nkept = {kept}\nrecreated = [\"mesh-bus\"]\n\
             created = [\"mesh-vault\"]\naccepted = [\"postgres/superuser\", \"redis/password\"]\n"
        );
        std::fs::write(repo.path().join("scenarios").join(format!("{name}.toml")), scenario).unwrap();
    }
    let tested = exited(&repo.mesh_adopt().args(["test", "--sweep"]).output(), 0);
    for scenario in ["redis/adopts-in-place", "redis/image-drift", "postgres/adopts-in-place", "nats/layout-name"] {
        assert!(tested.contains(&format!("ok    {scenario}")), "{tested}");
    }
    for scenario in ["/four-modules ", "/four-modules-redis-first "] {
        assert!(tested.lines().any(|l| l.starts_with("ok ") && l.contains(scenario)), "{tested}");
    }
    assert!(!tested.contains("FAIL"), "{tested}");
    assert!(tested.contains(" 0 failed"), "{tested}");
    assert!(tested.contains("0 runs did not converge"), "{tested}");

    let ran = exited(
        &repo
            .mesh_adopt()
            .args(["run", "postgres", "nats", "mesh-vault", "redis", "--catalog-source", "https://git.mesh.test/c.git"])
            .output(),
        0,
    );
    assert!(ran.contains("mesh-cache"), "{ran}");

    repo.git(&["add", "-A"]);
    repo.git(&["commit", "--quiet", "-m", "the redis module"]);
    let checked = exited(&repo.mesh_adopt().args(["build", "--check"]).output(), 0);
    assert!(checked.contains("ok     redis"), "{checked}");
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "building leaves nothing to commit");
    // Another checkout, elsewhere, builds the same bytes, so a catalogue's CI can check the pin.
    // (At the same depth, so the SDK's relative path still leads to it.)
    let elsewhere = tempfile::tempdir().unwrap();
    repo.git(&["clone", "--quiet", ".", &elsewhere.path().display().to_string()]);
    let checked = exited(&repo.mesh_adopt().current_dir(elsewhere.path()).args(["build", "--check"]).output(), 0);
    assert!(checked.contains("ok     redis"), "{checked}");

    // A pin that is there and wrong fails the check, even one that leaves pins alone.
    std::fs::write(&manifest_path, after.replace(&sha256_of(&placed), &"0".repeat(64))).unwrap();
    let wrong = exited(&repo.mesh_adopt().args(["build", "--check", "--no-pin"]).output(), 1);
    assert!(wrong.contains("STALE  redis"), "{wrong}");
    std::fs::write(&manifest_path, &after).unwrap();
    // The source changes and the shipped plugin is now not what it builds to.
    let lib_rs = repo.path().join("modules/redis/plugin/src/lib.rs");
    let source = std::fs::read_to_string(&lib_rs).unwrap();
    std::fs::write(&lib_rs, source.replacen("\"adopting ", "\"now adopting ", 1)).unwrap();
    let stale = exited(&repo.mesh_adopt().args(["build", "--check"]).output(), 1);
    assert!(stale.contains("STALE  redis"), "{stale}");
    assert!(stale.contains("run `mesh-adopt build redis`"), "{stale}");
    assert_eq!(sha256_of(&placed), manifest["adopt"]["sha256"], "--check places nothing");

    // A redis plugin that pushes after its hand-over failed is caught by the rule derived
    // from redis's own declaration, in its own scenario run, not only by a sweep.
    let careless = source.replacen(
        "Some(handover) => handover.deliver(),",
        "Some(handover) => { let _ = handover.deliver(); Ok(()) }",
        1,
    );
    assert_ne!(careless, source, "the template hands over in one place");
    std::fs::write(&lib_rs, careless).unwrap();
    exited(&repo.mesh_adopt().args(["build", "redis"]).output(), 0);
    let scenario = repo.path().join("scenarios/redis-hand-over-fails.toml");
    std::fs::write(
        &scenario,
        "name = \"pushes though its hand-over failed\"\nmodules = [\"redis\"]\n\
         [[mesh.faults]]\nop = \"tell\"\nmatching = \"secret accept\"\nfail = \"no\"\n\
         [expect]\noutcome = \"refused\"\nstrict = false\nkept = [\"mesh-cache\"]\n\
         messages = [\"not adopted: `tell secret accept node-1 redis password\"]\n\
         broken = [\"credential-never-replaced\"]\n",
    )
    .unwrap();
    let caught = exited(&repo.mesh_adopt().args(["test", scenario.to_str().unwrap()]).output(), 0);
    assert!(caught.contains("ok    ") && caught.contains("redis-hand-over-fails"), "{caught}");
    // Expecting no rule broken, the same scenario fails, naming the credential sealed over.
    let text = std::fs::read_to_string(&scenario).unwrap();
    std::fs::write(&scenario, text.replace("broken = [\"credential-never-replaced\"]\n", "")).unwrap();
    let failed = exited(&repo.mesh_adopt().args(["test", scenario.to_str().unwrap()]).output(), 1);
    assert!(
        failed.contains("`redis`'s secret `password`, but `mesh-cache` runs with genesis credential `cache-password`"),
        "{failed}"
    );
}

#[test]
fn a_stale_pin_exits_2_and_says_how_to_mend_it() {
    let repo = CatalogueRepo::new();
    let module_dir = repo.path().join("modules/nats");
    let manifest_path = module_dir.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["adopt"]["sha256"] = serde_json::Value::String("0".repeat(64));
    std::fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    let out = repo.mesh_adopt().args(["check", "nats"]).output();
    let said = exited(&out, 2);
    assert!(said.contains("mesh-adopt build nats"), "{said}");
    assert!(said.contains(&sha256_of(&module_dir.join("adopt.wasm"))), "{said}");
}

#[test]
fn replay_tries_a_candidate_plugin_whatever_the_pin_and_exits_2_on_an_unusable_one() {
    let repo = CatalogueRepo::new();
    let source = ["--catalog-source", "https://git.mesh.test/c.git"];
    exited(&repo.mesh_adopt().args([&["run", "--record", "run.jsonl"][..], &source[..]].concat()).output(), 0);
    let manifest_path = repo.path().join("modules/nats/manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["adopt"]["sha256"] = serde_json::Value::String("0".repeat(64));
    std::fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    // The catalogue's own plugin no longer matches its pin: not a divergence, bad input.
    let out = repo.mesh_adopt().args(["replay", "run.jsonl"]).output();
    let said = exited(&out, 2);
    assert!(said.contains("not replayed: a plugin could not be used"), "{said}");
    // A candidate given on purpose is the one tried.
    let candidate = plugin("adopt_nats").display().to_string();
    let out = repo.mesh_adopt().args(["replay", "run.jsonl", "--module", "nats", "--plugin", &candidate]).output();
    let said = exited(&out, 0);
    assert!(said.contains("the plugin made every recorded call"), "{said}");
}

#[test]
fn a_new_plain_module_builds_and_passes_its_first_scenario_unchanged() {
    let repo = CatalogueRepo::new();
    exited(&repo.mesh_adopt().args(["new", "demo-store", "--sdk", &sdk()]).output(), 0);
    repo.lock_like_the_project("demo-store");
    let built = exited(&repo.mesh_adopt().args(["build", "demo-store"]).output(), 0);
    assert!(built.contains("placed demo-store"), "{built}");
    let tested = exited(&repo.mesh_adopt().args(["test", "modules/demo-store"]).output(), 0);
    assert!(tested.contains("ok    demo-store/installs"), "{tested}");
    assert!(tested.contains("1 passed, 0 failed"), "{tested}");
}

/// `new --lang js` and `--lang python` write a plugin that `build` makes with its language's
/// toolchain (installed for the plugin from npm, or into a virtual environment made in it)
/// and that passes its first scenario unchanged; what the toolchain installs stays out of
/// the catalogue's commits. With `check_again`, `build --check` then finds the placed plugin
/// current, though the toolchain never builds the same bytes twice: both languages' builds
/// mark their source the same way, so one language's second build (the cheaper) shows it.
fn a_new_module_in(language: &str, module: &str, sdk: &str, check_again: bool) {
    let repo = CatalogueRepo::new().sharing_compiles();
    let sdk = format!("path:{}", root().join(sdk).display());
    let made = exited(&repo.mesh_adopt().args(["new", module, "--lang", language, "--sdk", &sdk]).output(), 0);
    assert!(made.contains(&format!("created modules/{module}/plugin/")), "{made}");
    let built = exited(&repo.mesh_adopt().args(["build", module]).output(), 0);
    assert!(built.contains(&format!("placed {module}")) && built.contains("pinned"), "{built}");
    let tested = exited(&repo.mesh_adopt().args(["test", &format!("modules/{module}")]).output(), 0);
    assert!(tested.contains(&format!("ok    {module}/installs")), "{tested}");
    assert!(tested.contains("1 passed, 0 failed"), "{tested}");
    if check_again {
        // The toolchain builds other bytes each time; the same source is still the same build.
        let placed = sha256_of(&repo.path().join("modules").join(module).join("adopt.wasm"));
        let checked = exited(&repo.mesh_adopt().args(["build", "--check", module]).output(), 0);
        assert!(checked.contains(&format!("ok     {module:<16} sha256 {placed}")), "{checked}");
    }
    if language == "python" {
        // Requirements changed since the environment was made: a check installs nothing.
        let requirements = repo.path().join("modules").join(module).join("plugin/requirements.txt");
        std::fs::write(&requirements, std::fs::read(&requirements).unwrap()).unwrap();
        let out = repo.mesh_adopt().args(["build", "--check", module]).output();
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("a check installs nothing") && said.contains("requirements.txt"), "{said}");
    }
    let untracked = repo.git(&["status", "--porcelain", "--untracked-files=all"]);
    for product in ["node_modules", ".venv", "__pycache__", "target/"] {
        assert!(!untracked.contains(product), "{product} would be committed:\n{untracked}");
    }
    assert!(untracked.contains(&format!("modules/{module}/plugin/")), "{untracked}");
    // A bug is not a refusal: an exception leaving `check` stops the plugin, and the report
    // shows the exception as the plugin printed it, not a filesystem call or a refusal.
    let (app, planning, bug, printed) = match language {
        "js" => (
            "app.js",
            "  check(ctx) {\n",
            "  check(ctx) {\n    throw new TypeError('a bug in check');\n",
            "a bug in check",
        ),
        _ => (
            "app.py",
            "        return Plan(\n",
            "        raise KeyError(\"a bug in check\")\n        return Plan(\n",
            "KeyError: 'a bug in check'",
        ),
    };
    let app = repo.path().join("modules").join(module).join("plugin").join(app);
    let source = std::fs::read_to_string(&app).unwrap();
    assert!(source.contains(planning), "{source}");
    std::fs::write(&app, source.replacen(planning, bug, 1)).unwrap();
    exited(&repo.mesh_adopt().args(["build", module]).output(), 0);
    let out =
        repo.mesh_adopt().args(["check", module, "--catalog-source", "https://git.example/catalogue.git"]).output();
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("unusable") && said.contains("its stderr:") && said.contains(printed), "{said}");
    assert!(!said.contains("filesystem"), "{said}");
    if language == "python" {
        // A filesystem call the sandbox stops is shown where in the plugin's code it was made.
        let reads = "        raise KeyError(\"a bug in check\")\n";
        let source = std::fs::read_to_string(&app).unwrap();
        let line = source.lines().position(|l| l.contains("raise KeyError")).unwrap() + 1;
        std::fs::write(&app, source.replacen(reads, "        open(\"/etc/hostname\").read()\n", 1)).unwrap();
        exited(&repo.mesh_adopt().args(["build", module]).output(), 0);
        let out =
            repo.mesh_adopt().args(["check", module, "--catalog-source", "https://git.example/catalogue.git"]).output();
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("no filesystem access"), "{said}");
        assert!(said.contains(&format!("app.py\", line {line}, in check")), "{said}");
        // A call Python raises no audit event for (`os.path.exists` asks `os.stat`) too.
        let source = std::fs::read_to_string(&app).unwrap();
        let asks = "        __import__(\"os\").path.exists(\"/etc/hostname\")\n";
        std::fs::write(&app, source.replacen("        open(\"/etc/hostname\").read()\n", asks, 1)).unwrap();
        exited(&repo.mesh_adopt().args(["build", module]).output(), 0);
        let out =
            repo.mesh_adopt().args(["check", module, "--catalog-source", "https://git.example/catalogue.git"]).output();
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(said.contains("called os.stat('/etc/hostname')"), "{said}");
        assert!(said.contains(&format!("app.py\", line {line}, in check")), "{said}");
    }
}

#[test]
fn a_new_javascript_module_builds_and_passes_its_first_scenario_unchanged() {
    a_new_module_in("js", "demo-js", "plugins/js/sdk", true);
}

#[test]
fn a_new_python_module_builds_and_passes_its_first_scenario_unchanged() {
    a_new_module_in("python", "demo-py", "plugins/python/sdk", false);
}

#[test]
fn build_refuses_a_manifest_without_a_source_and_places_nothing() {
    let repo = CatalogueRepo::new();
    let before = sha256_of(&repo.path().join("modules/nats/adopt.wasm"));
    let out = repo.mesh_adopt().args(["build", "nats"]).output();
    exited(&out, 2);
    let said = text(&out.stderr);
    assert!(said.contains("names no source to build its plugin from"), "{said}");
    assert!(said.contains("modules/nats/manifest.json"), "{said}");
    assert_eq!(sha256_of(&repo.path().join("modules/nats/adopt.wasm")), before);
    // With no module named, a module shipped prebuilt is passed over, but a manifest that
    // cannot be read is not: a catalogue's CI would otherwise pass it by.
    std::fs::create_dir_all(repo.path().join("modules/broken")).unwrap();
    std::fs::write(repo.path().join("modules/broken/manifest.json"), "{broken").unwrap();
    let out = repo.mesh_adopt().args(["build", "--check"]).output();
    exited(&out, 2);
    let said = text(&out.stderr);
    assert!(said.contains("the `broken` module's manifest `modules/broken/manifest.json` is malformed"), "{said}");
    // A manifest no run would take (a grant beyond any catalogue's) is not built for either,
    // refused as a run refuses it, and its plugin is left as it was.
    let manifest = repo.path().join("modules/postgres/manifest.json");
    let mut edited: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    edited["adopt"]["grants"]["credentials"] = serde_json::json!(["../../etc/shadow"]);
    std::fs::write(&manifest, serde_json::to_vec_pretty(&edited).unwrap()).unwrap();
    let before = sha256_of(&repo.path().join("modules/postgres/adopt.wasm"));
    let out = repo.mesh_adopt().args(["build", "postgres"]).output();
    exited(&out, 2);
    let said = text(&out.stderr);
    assert!(said.contains("manifest `modules/postgres/manifest.json` grants too much"), "{said}");
    assert!(said.contains("credential grant `../../etc/shadow` is not a plain name"), "{said}");
    assert_eq!(sha256_of(&repo.path().join("modules/postgres/adopt.wasm")), before);
}

/// The shipped catalogue's own plugins are what `mesh-adopt build` makes of their sources.
#[test]
fn the_shipped_catalogue_is_built_and_tested_by_the_same_commands() {
    let cache = tempfile::tempdir().unwrap();
    let out = mesh_adopt()
        .current_dir(root())
        .env("XDG_CACHE_HOME", cache.path())
        .args(["build", "--check", "--no-pin"])
        .output();
    let said = exited(&out, 0);
    for module in ["postgres", "nats", "mesh-vault"] {
        assert!(said.contains(&format!("ok     {module}")), "{said}");
    }
    // And `test` with no paths finds every scenario beside each module's source.
    let out = mesh_adopt().current_dir(root()).env("XDG_CACHE_HOME", cache.path()).arg("test").output();
    let said = exited(&out, 0);
    let shipped = std::fs::read_dir(root().join("plugins"))
        .unwrap()
        .filter_map(|e| std::fs::read_dir(e.unwrap().path().join("scenarios")).ok())
        .map(|files| files.count())
        .sum::<usize>()
        + std::fs::read_dir(root().join("catalogue/scenarios")).unwrap().count();
    assert!(said.contains(&format!("\n{shipped} passed, 0 failed")), "{said}");
}

#[test]
fn a_fresh_catalogue_repository_takes_its_first_module_and_says_what_to_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join("catalogue/foundation.json"), dir.path().join("foundation.json")).unwrap();
    let repo = CatalogueRepo::in_dir(dir);
    // No `modules/` yet: the current directory is the catalogue all the same.
    let made = exited(&repo.mesh_adopt().args(["new", "first", "--sdk", &sdk()]).output(), 0);
    assert!(made.contains("created modules/first/manifest.json"), "{made}");
    // Phase three is not here to run by default; the error says what to name.
    let out = repo.mesh_adopt().args(["check"]).output();
    exited(&out, 2);
    let said = text(&out.stderr);
    assert!(said.contains("does not hold phase three's"), "{said}");
    assert!(said.contains("name the modules to run, e.g. `first`"), "{said}");
    // A catalogue's own scenario runs several modules, so it must say which.
    std::fs::create_dir_all(repo.path().join("scenarios")).unwrap();
    std::fs::write(
        repo.path().join("scenarios/together.toml"),
        "name = \"x\"\n[expect]\noutcome = \"adopted\"\nstrict = false\n",
    )
    .unwrap();
    let out = repo.mesh_adopt().args(["test"]).output();
    exited(&out, 2);
    let said = text(&out.stderr);
    assert!(said.contains("scenarios/together.toml` names no `modules`"), "{said}");
}

/// docs/writing-a-plugin.md, "Bringing a shipped module into your catalogue", followed step by
/// step for `nats` (the SDK by path, as no registry here holds it): the crate copied out of
/// this repository's workspace builds with the `Cargo.toml` the guide gives, and its
/// scenarios pass as the module's.
#[test]
fn a_shipped_module_brought_into_another_catalogue_builds_and_passes_its_scenarios() {
    let repo = CatalogueRepo::new();
    let module_dir = repo.path().join("modules/nats");
    let plugin_dir = module_dir.join("plugin");
    let copied = Command::new("cp").arg("-r").arg(root().join("plugins/nats")).arg(&plugin_dir).status().unwrap();
    assert!(copied.success());
    let guide = std::fs::read_to_string(root().join("docs/writing-a-plugin.md")).unwrap();
    let section = guide.split("### Bringing a shipped module into your catalogue").nth(1).unwrap();
    let cargo_toml = section.split("```toml\n").nth(1).unwrap().split("```").next().unwrap();
    let cargo_toml: String = cargo_toml.lines().map(|line| format!("{}\n", line.trim_start())).collect();
    let sdk = root().join("plugins/sdk");
    let cargo_toml = cargo_toml.replace("name = \"adopt-postgres\"", "name = \"adopt-nats\"").replace(
        "mesh-adopt-sdk = \"0.2.0\"",
        &format!("mesh-adopt-sdk = {{ path = {:?} }}", sdk.display().to_string()),
    );
    std::fs::write(plugin_dir.join("Cargo.toml"), cargo_toml).unwrap();
    let manifest_path = module_dir.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["adopt"]["source"] = "plugin".into();
    manifest["adopt"].as_object_mut().unwrap().remove("sha256");
    std::fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    repo.lock_like_the_project("nats");
    let built = exited(&repo.mesh_adopt().args(["build", "nats"]).output(), 0);
    assert!(built.contains("placed nats"), "{built}");
    let tested = exited(&repo.mesh_adopt().args(["test", "modules/nats/plugin/scenarios"]).output(), 0);
    let scenarios = std::fs::read_dir(plugin_dir.join("scenarios")).unwrap().count();
    assert!(tested.contains(&format!("{scenarios} passed, 0 failed")), "{tested}");
    assert!(tested.contains("ok    nats/"), "{tested}");
}

/// The three SDKs, packaged as they would be published, served from registries on this
/// machine: a cargo directory source of the packaged crates and their dependencies, an npm
/// registry for the `@mesh-adopt` scope over HTTP (a real process), and a pip find-links
/// directory of the wheel.
struct LocalRegistries {
    dir: tempfile::TempDir,
    npm: std::process::Child,
    npm_url: String,
}

impl LocalRegistries {
    fn new() -> LocalRegistries {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path();
        let run = |command: &mut Command, what: &str| {
            let out = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
        };
        // Rust: the SDK and the manifest crate as `cargo package` makes them, and every crate
        // they depend on, in a directory that stands in for the Rust package registry.
        let plugins = root().join("plugins/Cargo.toml");
        run(
            Command::new("cargo")
                .args(["package", "--quiet", "--offline", "--no-verify", "--allow-dirty", "--manifest-path"])
                .arg(&plugins)
                .args(["-p", "mesh-adopt-manifest", "-p", "mesh-adopt-sdk", "--target-dir"])
                .arg(at.join("package")),
            "cargo package",
        );
        let crates = at.join("crates");
        run(
            Command::new("cargo")
                .args(["vendor", "--quiet", "--offline", "--versioned-dirs", "--manifest-path"])
                .arg(&plugins)
                .arg(&crates),
            "cargo vendor",
        );
        for name in ["mesh-adopt-manifest-0.1.0", "mesh-adopt-sdk-0.2.0"] {
            let packed = at.join("package/package").join(format!("{name}.crate"));
            run(Command::new("tar").arg("xzf").arg(&packed).arg("-C").arg(&crates), "tar");
            let sum = hex(&sha2::Sha256::digest(std::fs::read(&packed).unwrap()));
            std::fs::write(
                crates.join(name).join(".cargo-checksum.json"),
                format!(r#"{{"files":{{}},"package":"{sum}"}}"#),
            )
            .unwrap();
        }
        // JavaScript: the package `npm pack` makes, served by a registry process.
        let npm_dir = at.join("npm");
        std::fs::create_dir_all(&npm_dir).unwrap();
        run(
            Command::new("npm")
                .args(["pack", "--silent", "--pack-destination"])
                .arg(&npm_dir)
                .arg(root().join("plugins/js/sdk")),
            "npm pack",
        );
        let mut npm = Command::new("python3")
            .arg(root().join("tests/registry/npm-registry.py"))
            .arg(&npm_dir)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut npm_url = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(npm.stdout.take().unwrap()), &mut npm_url).unwrap();
        // Python: the wheel, built from a copy with its contract's link resolved.
        let sdk = at.join("python-sdk");
        run(Command::new("cp").arg("-rL").arg(root().join("plugins/python/sdk")).arg(&sdk), "cp");
        let _ = std::fs::remove_dir_all(sdk.join("build"));
        run(
            Command::new(root().join("plugins/python/.venv/bin/pip"))
                .args(["wheel", "--quiet", "--disable-pip-version-check", "--no-deps", "-w"])
                .arg(at.join("wheels"))
                .arg(&sdk),
            "pip wheel",
        );
        LocalRegistries { dir, npm, npm_url: npm_url.trim().to_string() }
    }

    /// Points the catalogue's builds at these registries for the SDKs: cargo's config at the
    /// catalogue's top, and the plugin's own `.npmrc` for a JavaScript module.
    fn serve(&self, repo: &CatalogueRepo) {
        std::fs::create_dir_all(repo.path().join(".cargo")).unwrap();
        std::fs::write(
            repo.path().join(".cargo/config.toml"),
            format!(
                "[source.crates-io]\nreplace-with = \"local\"\n[source.local]\ndirectory = {:?}\n",
                self.dir.path().join("crates").display().to_string()
            ),
        )
        .unwrap();
    }
}

impl Drop for LocalRegistries {
    fn drop(&mut self) {
        let _ = self.npm.kill();
        let _ = self.npm.wait();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `new --sdk 0.2.0` in each language writes a dependency on the SDK by version, and the
/// module builds against the SDK packaged as it would be published, taken from a registry
/// by that version, and passes its first scenario: the three packages are publishable.
#[test]
fn a_module_made_with_sdk_version_builds_from_the_sdk_packaged_in_a_registry() {
    let registries = LocalRegistries::new();
    let repo = CatalogueRepo::new().sharing_compiles();
    registries.serve(&repo);
    for (language, module) in [("rust", "demo-rs"), ("js", "demo-js"), ("python", "demo-py")] {
        let made = exited(&repo.mesh_adopt().args(["new", module, "--lang", language, "--sdk", "0.2.0"]).output(), 0);
        assert!(made.contains(&format!("created modules/{module}/plugin/")), "{made}");
        let plugin = repo.path().join("modules").join(module).join("plugin");
        if language == "js" {
            std::fs::write(plugin.join(".npmrc"), format!("@mesh-adopt:registry={}\n", registries.npm_url)).unwrap();
        }
        let built = exited(
            &repo
                .mesh_adopt()
                .env("PIP_FIND_LINKS", registries.dir.path().join("wheels"))
                .args(["build", "--no-pin", "--code", "baseline", module])
                .output(),
            0,
        );
        assert!(built.contains(&format!("placed {module}")), "{built}");
        // Taken from the registry by version, not from a checkout by path.
        match language {
            "rust" => {
                let lock = std::fs::read_to_string(plugin.join("Cargo.lock")).unwrap();
                let from_registry = "name = \"mesh-adopt-sdk\"\nversion = \"0.2.0\"\nsource = \"registry+";
                assert!(lock.contains(from_registry), "{lock}");
            }
            "js" => {
                let installed = plugin.join("node_modules/@mesh-adopt/sdk");
                assert!(std::fs::symlink_metadata(&installed).unwrap().is_dir(), "a link, not a package");
                let lock: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(plugin.join("package-lock.json")).unwrap()).unwrap();
                let entry = &lock["packages"]["node_modules/@mesh-adopt/sdk"];
                // A package fetched from a registry is locked by its digest; a linked one is not.
                assert!(entry["integrity"].as_str().is_some_and(|i| i.starts_with("sha512-")), "{entry}");
                assert!(entry["link"].is_null() && entry["version"] == "0.2.0", "{entry}");
            }
            _ => {
                // pip records where a package came from only when it was installed from a path
                // or URL rather than by name and version from an index.
                let site = std::fs::read_dir(plugin.join(".venv/lib")).unwrap().next().unwrap().unwrap().path();
                let info = site.join("site-packages/mesh_adopt_sdk-0.2.0.dist-info");
                assert!(info.is_dir(), "{} is missing", info.display());
                assert!(!info.join("direct_url.json").exists(), "installed from a path, not the index");
            }
        }
        let tested = exited(&repo.mesh_adopt().args(["test", &format!("modules/{module}")]).output(), 0);
        assert!(tested.contains("1 passed, 0 failed"), "{tested}");
    }
}
