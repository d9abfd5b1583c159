//! The runtime's floors held by its imports: ARCHITECTURE.md's numbered list "The runtime, by
//! floor" says which files and folders of `host/runtime/src/` stand on which floor, and that
//! each floor uses only the floors below it; this reads every module's paths and fails on any
//! that reaches a higher floor.
//!
//! What counts as a use: every path of a `use` declaration (`pub use` re-exports too) and every
//! path written inline from `crate::`, `super::` or `self::`, test modules included (a lower
//! floor that needs a higher one to be tested still leans on it). A path is resolved from the
//! module it is written in (a file's module, then any inline `mod … { }` around it) to the
//! deepest module of the runtime it names; a path through the crate root (`crate::Refusal`)
//! reaches the module `lib.rs` re-exports it from. A re-export counts where it is written:
//! `crate::effect::Spec` reaches `effect` even if `effect` only passes `Spec` on. `lib.rs`,
//! the crate root that re-exports, is on no floor and may use any.
//!
//! Macros: a `macro_rules!` body is checked as the code of the file it is written in, its
//! paths resolved from there (its `crate::` is this crate's wherever it expands). A module that
//! invokes a macro of another module does so by path (`super::serve_imports!`,
//! `crate::x::m!`), and that path is a use like any other. A macro reached by text instead
//! (`#[macro_use]`, `#[macro_export]`) names no path to follow, so it is refused outright.
//!
//! A folder's floor is its files' floor; a file or folder inside a folder on the list must be
//! on the same floor as it, so a module's own children (which it names by relative paths this
//! check does not follow) never stand on another floor than it.

use std::collections::{BTreeMap, BTreeSet};

use super::rust_paths::{NamedPath, named_paths};

/// The runtime's sources, relative to the project's root.
pub const RUNTIME: &str = "host/runtime/src/";

/// The title of the map's section whose numbered list is the floors.
const FLOORS_SECTION: &str = "## The runtime, by floor";

/// The floors as ARCHITECTURE.md lists them: floor `n` (from 1) is `floors[n - 1]`, each the
/// backticked paths under `host/runtime/src/` its item names, as written (a folder ends in
/// `/`). An error says what is wrong with the list.
pub fn floors_from_map(map: &str) -> Result<Vec<Vec<String>>, String> {
    let start = map.find(FLOORS_SECTION).ok_or(format!("ARCHITECTURE.md has no section `{FLOORS_SECTION}`"))?;
    let section = &map[start + FLOORS_SECTION.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut floors: Vec<Vec<String>> = Vec::new();
    let mut in_item = false;
    for line in section.lines() {
        let number = line.split_once(". ").and_then(|(n, _)| n.parse::<usize>().ok());
        if let Some(number) = number {
            if number != floors.len() + 1 {
                return Err(format!("the floors' list numbers item {number} where {} was next", floors.len() + 1));
            }
            floors.push(Vec::new());
            in_item = true;
        } else if !line.starts_with(' ') {
            in_item = false; // A line that is neither an item nor its continuation ends the item.
        }
        if in_item {
            let floor = floors.last_mut().expect("an item was opened");
            floor.extend(line.split('`').skip(1).step_by(2).filter(|q| q.starts_with(RUNTIME)).map(String::from));
        }
    }
    if floors.is_empty() {
        return Err(format!("ARCHITECTURE.md's `{FLOORS_SECTION}` has no numbered list"));
    }
    if let Some(empty) = floors.iter().position(Vec::is_empty) {
        return Err(format!("floor {} names no path under `{RUNTIME}`", empty + 1));
    }
    Ok(floors)
}

/// Every way the runtime's sources break its floors: `floors` as [`floors_from_map`] gives
/// them, `files` each source file's path from the project's root (`host/runtime/src/…`) with
/// its text. Each problem is one line naming the file, the line, the path and both floors.
pub fn floor_problems(floors: &[Vec<String>], files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let placed = placed_modules(floors, &mut problems);
    let modules: BTreeSet<Vec<String>> = files.iter().filter_map(|(path, _)| module_of(path)).collect();
    let reexports = files
        .iter()
        .find(|(path, _)| path == &format!("{RUNTIME}lib.rs"))
        .map(|(_, text)| root_reexports(text))
        .unwrap_or_default();
    let floor_of = |module: &[String]| {
        placed
            .iter()
            .filter(|(entry, _)| module.starts_with(entry))
            .max_by_key(|(entry, _)| entry.len())
            .map(|(_, f)| *f)
    };
    for (path, text) in files {
        let Some(module) = module_of(path) else { continue };
        let (paths, textual_macros) = named_paths(text);
        for line in textual_macros {
            problems.push(format!(
                "{path}:{line}: a macro reached by text (`#[macro_use]`, `#[macro_export]`) names no path whose floor could \
                 be checked: invoke it by its path"
            ));
        }
        if module.is_empty() {
            continue; // lib.rs: the crate root re-exports from every floor.
        }
        let Some(own_floor) = floor_of(&module) else {
            problems.push(format!("`{path}` is on no floor of ARCHITECTURE.md's `{FLOORS_SECTION}`"));
            continue;
        };
        for named in &paths {
            let target = match reached_module(named, &module, &modules, &reexports) {
                Reached::Module(target) => target,
                Reached::Outside => continue,
                Reached::Unknown(why) => {
                    problems.push(format!("{path}:{}: `{}` {why}", named.line, named.written()));
                    continue;
                }
            };
            let Some(target_floor) = floor_of(&target) else { continue };
            if target_floor > own_floor {
                problems.push(format!(
                    "{path}:{}: `{}` reaches `{}` on floor {target_floor} from floor {own_floor}: a floor uses only the \
                     floors below it",
                    named.line,
                    named.written(),
                    target.join("::"),
                ));
            }
        }
    }
    problems
}

/// Each floor's entries as module paths (`mesh/` and `mesh/mod.rs` are `["mesh"]`) with their
/// floor, adding to `problems` an entry named twice or inside one on another floor.
fn placed_modules(floors: &[Vec<String>], problems: &mut Vec<String>) -> Vec<(Vec<String>, usize)> {
    let mut placed: Vec<(Vec<String>, usize)> = Vec::new();
    for (index, entries) in floors.iter().enumerate() {
        for entry in entries {
            let Some(module) = module_of(entry.trim_end_matches('/')) else { continue };
            if module.is_empty() {
                problems.push(format!("`{entry}` is the crate root, which is on no floor"));
                continue;
            }
            placed.push((module, index + 1));
        }
    }
    for (module, floor) in &placed {
        for (outer, outer_floor) in &placed {
            if module == outer && floor < outer_floor {
                problems.push(format!("`{}` is on floor {floor} and on floor {outer_floor}", module.join("::")));
            } else if module != outer && module.starts_with(outer) && floor != outer_floor {
                problems.push(format!(
                    "`{}` (floor {floor}) is inside `{}` (floor {outer_floor}): a module and what is inside it stand on \
                     one floor",
                    module.join("::"),
                    outer.join("::")
                ));
            }
        }
    }
    placed
}

/// The module a file of the runtime is (`host/runtime/src/mesh/layer.rs` is `["mesh", "layer"]`,
/// `lib.rs` the root `[]`); `None` for a path outside the runtime's sources. A folder's path
/// without its `/` reads as the module it holds.
fn module_of(path: &str) -> Option<Vec<String>> {
    let inside = path.strip_prefix(RUNTIME)?;
    let inside = inside.strip_suffix(".rs").unwrap_or(inside);
    let mut segments: Vec<String> = inside.split('/').filter(|s| !s.is_empty()).map(String::from).collect();
    if matches!(segments.last().map(String::as_str), Some("mod" | "lib")) {
        segments.pop();
    }
    Some(segments)
}

/// What the crate root re-exports at its top: each name it makes `crate::NAME` with the path
/// it takes it from, written from the root (`Refusal` → `["model", "Refusal"]`).
fn root_reexports(lib: &str) -> BTreeMap<String, Vec<String>> {
    let (paths, _) = named_paths(lib);
    paths
        .into_iter()
        .filter(|p| p.from_use && p.inline_modules.is_empty())
        .filter_map(|p| {
            let mut segments = p.segments;
            if segments.first().is_some_and(|s| s == "crate") {
                segments.remove(0);
            }
            Some((segments.last()?.clone(), segments))
        })
        .collect()
}

/// Where a path lands.
enum Reached {
    /// A module of the runtime (the deepest the path names).
    Module(Vec<String>),
    /// Outside the runtime's modules: another crate, or an item of the module's own children.
    Outside,
    /// Nowhere this check can place, and why.
    Unknown(String),
}

/// The module of the runtime `named`, written in `module`, reaches (see [`Reached`]).
fn reached_module(
    named: &NamedPath,
    module: &[String],
    modules: &BTreeSet<Vec<String>>,
    reexports: &BTreeMap<String, Vec<String>>,
) -> Reached {
    let mut here: Vec<String> = module.iter().chain(&named.inline_modules).cloned().collect();
    let mut rest = named.segments.as_slice();
    match rest.first().map(String::as_str) {
        Some("crate") => {
            here.clear();
            rest = &rest[1..];
        }
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                if here.pop().is_none() {
                    return Reached::Unknown("climbs above the crate root".into());
                }
                rest = &rest[1..];
            }
        }
        Some("self") => rest = &rest[1..],
        // A relative `use` names an outside crate or a child of this module, which stands on its
        // floor (see the module's documentation).
        _ => return Reached::Outside,
    }
    let full: Vec<String> = here.into_iter().chain(rest.iter().cloned()).collect();
    let deepest = |path: &[String]| (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains(p));
    match deepest(&full) {
        Some(target) if !target.is_empty() => Reached::Module(target),
        _ if full.is_empty() => Reached::Unknown("reaches the crate root itself, which is on no floor".into()),
        _ => match reexports.get(&full[0]).map(|from| deepest(from)) {
            Some(Some(target)) if !target.is_empty() => Reached::Module(target),
            Some(_) => Reached::Outside, // The root passes on another crate's item.
            None => Reached::Unknown(format!(
                "reaches `{}`, which the crate root neither re-exports from a module nor is a module: it is on no floor",
                full[0]
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runtime of three files: `low.rs` on floor 1, `high/` on floor 2, and the root.
    fn synthetic(low: &str) -> Vec<String> {
        let floors = vec![vec![format!("{RUNTIME}low.rs")], vec![format!("{RUNTIME}high/")]];
        let files = vec![
            (format!("{RUNTIME}lib.rs"), "mod high;\nmod low;\npub use high::Thing;\n".to_string()),
            (format!("{RUNTIME}low.rs"), low.to_string()),
            (format!("{RUNTIME}high/mod.rs"), "//! High.\nuse crate::low::Base;\npub struct Thing;\n".to_string()),
        ];
        floor_problems(&floors, &files)
    }

    #[test]
    fn an_inline_path_and_a_use_up_a_floor_are_reported_with_file_line_path_and_floors() {
        let low = "//! Low.\nuse crate::high::Thing;\n\nfn f() {\n    let _ = crate::high::Thing;\n    let _ = super::high::Thing;\n    let _ = crate::Thing;\n}\n";
        let problems = synthetic(low);
        let expected = [
            (2, "crate::high::Thing"),
            (5, "crate::high::Thing"),
            (6, "super::high::Thing"),
            (7, "crate::Thing"),
        ]
        .map(|(line, path)| {
            format!(
                "{RUNTIME}low.rs:{line}: `{path}` reaches `high` on floor 2 from floor 1: a floor uses only the floors \
                 below it"
            )
        });
        assert_eq!(problems, expected);
    }

    #[test]
    fn a_use_down_a_floor_or_in_a_comment_is_not_reported() {
        assert_eq!(
            synthetic("//! Low: see `crate::high::Thing`.\npub struct Base;\nconst S: &str = \"crate::high\";\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_file_on_no_floor_and_a_textual_macro_are_reported() {
        let floors = vec![vec![format!("{RUNTIME}low.rs")]];
        let files = vec![
            (format!("{RUNTIME}low.rs"), "#[macro_export]\nmacro_rules! m { () => {} }\n".to_string()),
            (format!("{RUNTIME}stray.rs"), String::new()),
        ];
        let problems = floor_problems(&floors, &files);
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(problems[0].starts_with(&format!("{RUNTIME}low.rs:1: a macro reached by text")), "{}", problems[0]);
        assert!(problems[1].starts_with(&format!("`{RUNTIME}stray.rs` is on no floor")), "{}", problems[1]);
    }

    #[test]
    fn the_floors_are_read_from_the_numbered_list() {
        let map = "# Map\n\n## The runtime, by floor\n\nIntro naming `host/runtime/src/lib.rs`.\n\n1. `host/runtime/src/a.rs` — a;\n   `host/runtime/src/b/` — b.\n2. `host/runtime/src/c/` — c, with `pushed.rs`.\n\n## Next\n\n3. `host/runtime/src/d.rs`\n";
        assert_eq!(
            floors_from_map(map),
            Ok(vec![vec![format!("{RUNTIME}a.rs"), format!("{RUNTIME}b/")], vec![format!("{RUNTIME}c/")],])
        );
        assert!(
            floors_from_map("## The runtime, by floor\n\n2. `host/runtime/src/a.rs`\n").unwrap_err().contains("item 2")
        );
    }
}
