//! The runtime's surface as an embedder builds against it: a root that fits on a screen, and no
//! wasmtime type or type generated from the contract in any public item, hidden ones included.

/// The names a public item of a runtime source file gives away that are wasmtime's or the
/// contract's generated types: every `pub` item's signature (up to its body or its end),
/// hidden ones (`#[doc(hidden)]`) included, since an embedder can call them all the same.
fn foreign_names_in(file: &str, text: &str) -> Vec<String> {
    // Whole identifiers: `EngineError` is ours, `Engine` wasmtime's.
    let foreign = ["wasmtime", "Engine", "Component", "Linker", "Store", "v0_1", "bindgen", "HostError"];
    let lines: Vec<&str> = text.lines().collect();
    let mut leaks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let item = line.trim_start();
        if !item.starts_with("pub ") || item.starts_with("pub(") {
            continue;
        }
        let signature: String = lines[i..]
            .iter()
            .scan(false, |done, l| {
                (!*done).then(|| {
                    *done = l.contains('{') || l.trim_end().ends_with(';') || l.trim_end().ends_with(',');
                    *l
                })
            })
            .collect::<Vec<_>>()
            .join(" ");
        let mut identifiers = signature.split(|c: char| !(c.is_alphanumeric() || c == '_'));
        if let Some(name) = identifiers.find_map(|word| foreign.iter().find(|name| **name == word)) {
            leaks.push(format!("{file}:{}: `{name}` in `{}`", i + 1, signature.trim()));
        }
    }
    leaks
}

/// A hidden item is no less public: one returning a wasmtime type is found.
#[test]
fn a_hidden_item_naming_a_wasmtime_type_is_found() {
    let source = "impl PluginHost {\n    #[doc(hidden)]\n    pub fn engine(&self) -> &wasmtime::Engine {\n        &self.engine\n    }\n}\n";
    let leaks = foreign_names_in("plugin/mod.rs", source);
    assert_eq!(leaks.len(), 1, "{leaks:?}");
    assert!(leaks[0].starts_with("plugin/mod.rs:3: `wasmtime`"), "{leaks:?}");
    assert!(foreign_names_in("x.rs", "pub(crate) fn engine(&self) -> &Engine {").is_empty());
    // A type of ours whose name begins as one of wasmtime's is not one of wasmtime's.
    assert!(foreign_names_in("x.rs", "pub fn new() -> Result<Host, EngineError> {").is_empty());
    assert_eq!(foreign_names_in("x.rs", "pub fn store(&self) -> Store<RunState> {").len(), 1);
}

/// The runtime's public surface names no wasmtime type and no type generated from the WIT:
/// a contract version or a wasmtime upgrade must not break an embedder. The generated
/// types live in a private module, and the crate denies any private or unnameable type in a
/// public signature (`private_interfaces`, `unnameable_types`), so the compiler holds that
/// half; this reads every public item of the files the public surface comes from, hidden ones
/// included, and holds the other. The benchmarks' hooks, which do name the engine's types, are
/// built only with the `bench` feature.
#[test]
fn the_public_api_names_no_wasmtime_type_and_no_generated_one() {
    let src = crate::support::root().join("host/runtime/src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    assert!(lib.contains("#![deny(private_interfaces, private_bounds, unnameable_types)]"), "the lints guard it");
    assert!(lib.contains("\nmod contract;\n"), "the generated bindings stay private");
    assert!(lib.contains("#[cfg(feature = \"bench\")]\npub mod bench;"), "the benchmarks' hooks are behind a feature");
    let manifest = std::fs::read_to_string(src.join("../Cargo.toml")).unwrap();
    assert!(!manifest.contains("default = [\"bench\""), "the bench feature is not a default one");
    // Every file but the generated bindings', the sandbox's plumbing, which no public item comes
    // from (the crate's lints hold that), and the benchmarks' hooks.
    let private =
        ["contract/", "sandbox/mod.rs", "sandbox/imports.rs", "sandbox/state.rs", "sandbox/deadline.rs", "bench.rs"];
    let mut public_files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if relative.ends_with(".rs") && !private.iter().any(|p| relative.starts_with(p)) {
                public_files.push(relative);
            }
        }
    }
    assert!(public_files.len() > 20, "{public_files:?}");
    let leaks: Vec<String> = public_files
        .iter()
        .flat_map(|file| foreign_names_in(file, &std::fs::read_to_string(src.join(file)).unwrap()))
        .collect();
    assert!(leaks.is_empty(), "public items that name wasmtime's or the contract's types:\n{}", leaks.join("\n"));
}

/// Every name the runtime's root gives an embedder: each `pub mod`, each name a root `pub use`
/// brings in and each root `pub` item, whatever feature it is built under; a glob re-export
/// is refused, since it would bring in names no one counted.
fn root_names(lib: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut statement = String::new();
    for line in lib.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("//") || trimmed.starts_with('#') {
            continue;
        }
        if depth == 0 && (trimmed.starts_with("pub ") || !statement.is_empty()) {
            statement.push_str(trimmed);
            statement.push(' ');
            if trimmed.ends_with(';') || trimmed.ends_with('{') || trimmed.ends_with('}') {
                let done = std::mem::take(&mut statement);
                if let Some(used) = done.strip_prefix("pub use ") {
                    if used.contains('*') {
                        return Err(format!("a glob re-export at the root: `{}`", done.trim()));
                    }
                    let list = used.trim().trim_end_matches(';');
                    let list = match list.split_once('{') {
                        Some((_, inner)) => inner.trim_end_matches('}').to_string(),
                        None => list.rsplit("::").next().unwrap().to_string(),
                    };
                    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                        names.push(name.rsplit(" as ").next().unwrap().to_string());
                    }
                } else {
                    let words: Vec<&str> = done.split_whitespace().collect();
                    let name = words.get(2).and_then(|w| w.split([';', '{', '(', '<', ':']).next());
                    names.extend(name.map(String::from));
                }
            }
        }
        depth += line.matches('{').count();
        depth = depth.saturating_sub(line.matches('}').count());
    }
    Ok(names)
}

/// The root fits on a screen, as wasmtime-wasi's does: at most 30 names, hidden and
/// feature-gated ones counted.
#[test]
fn the_runtimes_root_holds_at_most_thirty_names() {
    let lib = std::fs::read_to_string(crate::support::root().join("host/runtime/src/lib.rs")).unwrap();
    let names = root_names(&lib).unwrap();
    assert!(names.len() <= 30, "{} names at the root: {names:?}", names.len());
    for expected in ["mesh", "bench", "Run", "PluginHost", "Remedy"] {
        assert!(names.iter().any(|n| n == expected), "{expected} is not counted: {names:?}");
    }
    let unique: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "a name counted twice: {names:?}");
    assert!(root_names("pub use crate::model::*;\n").unwrap_err().contains("glob"));
    assert_eq!(root_names("pub use a::{B, C as D};\npub mod e;\npub fn f() {}\n").unwrap(), ["B", "D", "e", "f"]);
}
