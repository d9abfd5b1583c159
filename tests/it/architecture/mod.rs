//! ARCHITECTURE.md held to the tree it maps: every folder of the host's crates listed, every
//! path it names there, every source file opening with the comment that names its one idea,
//! every file past the length that would hide several ideas named with the one it holds, and
//! the runtime's floors held by its imports ([`floors`]).

mod floors;
mod rust_paths;

use std::path::{Path, PathBuf};

use crate::support::root;

/// The source trees the map must cover.
const TREES: [&str; 4] = ["host/runtime/src", "host/cli/src", "host/testkit/src", "host/live/src"];

/// Past this many lines a file is named in the map with its one idea.
const LONG_FILE_LINES: usize = 600;

/// The folders under `dir` (itself included) that hold source, and the `.rs` files in them: a
/// folder of a template's files is data, not a room of the code.
fn walk(dir: &Path, folders: &mut Vec<PathBuf>, files: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    if entries.iter().any(|path| path.extension().is_some_and(|e| e == "rs")) {
        folders.push(dir.to_path_buf());
    }
    for path in entries {
        if path.is_dir() {
            walk(&path, folders, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// Every path the map names in backticks, as written (folders end in `/`).
fn named_paths(map: &str) -> Vec<String> {
    map.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| {
            TREES.iter().any(|tree| quoted.starts_with(tree))
                || ["wit/", "plugins/", "tests/", "catalogue/", "host/"].iter().any(|top| quoted.starts_with(top))
        })
        .map(String::from)
        .collect()
}

#[test]
fn the_architecture_map_matches_the_tree() {
    let root = root();
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let named = named_paths(&map);
    let (mut folders, mut files) = (Vec::new(), Vec::new());
    for tree in TREES {
        walk(&root.join(tree), &mut folders, &mut files);
    }
    let relative = |path: &Path| path.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
    let mut problems = Vec::new();
    for name in &named {
        if !root.join(name.trim_end_matches('/')).exists() {
            problems.push(format!("ARCHITECTURE.md names `{name}`, which does not exist"));
        }
    }
    for folder in &folders {
        let folder = format!("{}/", relative(folder));
        if !named.contains(&folder) {
            problems.push(format!("the folder `{folder}` is not in ARCHITECTURE.md"));
        }
    }
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let path = relative(file);
        if !text.starts_with("//!") {
            problems.push(format!("`{path}` does not open with a `//!` comment naming its one idea"));
        }
        let lines = text.lines().count();
        if lines > LONG_FILE_LINES && !named.contains(&path) {
            problems.push(format!("`{path}` has {lines} lines and ARCHITECTURE.md does not name its one idea"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every floor of the runtime uses only the floors below it, as ARCHITECTURE.md draws them.
#[test]
fn the_runtime_uses_only_the_floors_below_each_floor() {
    let root = root();
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let floors = floors::floors_from_map(&map).unwrap_or_else(|e| panic!("{e}"));
    let (mut folders, mut paths) = (Vec::new(), Vec::new());
    walk(&root.join(floors::RUNTIME), &mut folders, &mut paths);
    let files: Vec<(String, String)> = paths
        .iter()
        .map(|p| (p.strip_prefix(&root).unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(p).unwrap()))
        .collect();
    let problems = floors::floor_problems(&floors, &files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
