//! ARCHITECTURE.md held to the tree it maps: every folder of the host's crates and of
//! `tests/it/` named, and every source file of theirs and every script of the reference node on
//! a line of its own with its one idea; every path it names there; every file opening with the
//! comment that names its one idea; every file past the length that would hide several ideas
//! named again under "Long files" with why; and the runtime's floors held by its imports
//! ([`floors`]).

mod floors;
mod rust_paths;

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::root;

/// The Rust source trees the map names folder by folder and file by file.
const RUST_TREES: [&str; 5] = ["host/runtime/src", "host/cli/src", "host/testkit/src", "host/live/src", "tests/it"];

/// The reference node, whose scripts and library the map names file by file.
const NODE: &str = "node";

/// The top folders under which every path the map names in backticks must exist.
const CHECKED_TOPS: [&str; 6] = ["wit/", "plugins/", "tests/", "catalogue/", "host/", "node/"];

/// Past this many lines a file is named again under [`LONG_FILES`], with why it is long.
const LONG_FILE_LINES: usize = 600;

/// The title of the map's section that names each long file with why it is long.
const LONG_FILES: &str = "## Long files, one idea each";

/// A file the map must name: its path from the project's root, and its text.
struct Source {
    path: String,
    text: String,
}

/// The folders under `dir` (itself included) that hold Rust, and the `.rs` files in them, as
/// paths from `root`: a folder of a template's files is data, not a room of the code.
fn rust_sources(root: &Path, dir: &Path, folders: &mut Vec<String>, files: &mut Vec<Source>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    let relative = |path: &Path| path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
    if entries.iter().any(|path| path.extension().is_some_and(|e| e == "rs")) {
        folders.push(format!("{}/", relative(dir)));
    }
    for path in entries {
        if path.is_dir() {
            rust_sources(root, &path, folders, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(Source { path: relative(&path), text: std::fs::read_to_string(&path).unwrap() });
        }
    }
}

/// The reference node's programs: every file under `node/` that is a script (it opens with
/// `#!`) or a Python module; its data (the catalogue, the configuration) is not code.
fn node_scripts(root: &Path) -> Vec<Source> {
    let mut found = Vec::new();
    let mut dirs = vec![root.join(NODE)];
    while let Some(dir) = dirs.pop() {
        for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let Ok(text) = String::from_utf8(std::fs::read(&path).unwrap()) else { continue };
            if text.starts_with("#!") || path.extension().is_some_and(|e| e == "py") {
                found.push(Source { path: path.strip_prefix(root).unwrap().to_string_lossy().into_owned(), text });
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// Whether a file opens with the comment that names its one idea: `//!` for Rust; for a
/// script, a `#` comment or a docstring on the first line after its `#!`.
fn opens_with_its_idea(source: &Source) -> bool {
    if source.path.ends_with(".rs") {
        return source.text.starts_with("//!");
    }
    let mut lines = source.text.lines();
    let first = if source.text.starts_with("#!") { lines.nth(1) } else { lines.next() };
    first.is_some_and(|line| line.starts_with("# ") || line.starts_with("\"\"\""))
}

/// Every path the map names in backticks under one of [`CHECKED_TOPS`], as written (folders
/// end in `/`).
fn named_paths(map: &str) -> Vec<String> {
    map.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| CHECKED_TOPS.iter().any(|top| quoted.starts_with(top)))
        .map(String::from)
        .collect()
}

/// The table rows of `text` that name a file: `| `path` | its idea |`, as (path, idea).
fn file_rows(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let (path, rest) = line.strip_prefix("| `")?.split_once("` |")?;
            let idea = rest.trim().trim_end_matches('|').trim();
            Some((path.to_string(), idea.to_string()))
        })
        .collect()
}

/// The map split at its section on long files: (everything else, that section).
fn split_long_files(map: &str) -> (String, &str) {
    let start = map.find(LONG_FILES).unwrap_or_else(|| panic!("ARCHITECTURE.md has no section `{LONG_FILES}`"));
    let rest = &map[start..];
    let end = rest[LONG_FILES.len()..].find("\n## ").map_or(rest.len(), |at| at + LONG_FILES.len());
    (format!("{}{}", &map[..start], &rest[end..]), &rest[..end])
}

#[test]
fn the_architecture_map_matches_the_tree() {
    let root = root();
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let (mut folders, mut files) = (Vec::new(), Vec::new());
    for tree in RUST_TREES {
        rust_sources(&root, &root.join(tree), &mut folders, &mut files);
    }
    files.extend(node_scripts(&root));
    let named = named_paths(&map);
    let (elsewhere, long_section) = split_long_files(&map);
    let mut rows: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, idea) in file_rows(&elsewhere) {
        rows.entry(path).or_default().push(idea);
    }
    let long_rows: BTreeMap<String, String> = file_rows(long_section).into_iter().collect();
    let mut problems = Vec::new();
    for name in &named {
        if !root.join(name.trim_end_matches('/')).exists() {
            problems.push(format!("ARCHITECTURE.md names `{name}`, which does not exist"));
        }
    }
    for folder in &folders {
        if !named.contains(folder) {
            problems.push(format!("the folder `{folder}` is not in ARCHITECTURE.md"));
        }
    }
    for file in &files {
        let path = &file.path;
        if !opens_with_its_idea(file) {
            problems.push(format!("`{path}` does not open with a comment naming its one idea"));
        }
        match rows.get(path).map(Vec::as_slice) {
            None | Some([]) => problems.push(format!("`{path}` has no line of its own in ARCHITECTURE.md")),
            Some([idea]) if idea.is_empty() => {
                problems.push(format!("`{path}`'s line in ARCHITECTURE.md says no idea"))
            }
            Some([_]) => {}
            Some(lines) => problems.push(format!(
                "`{path}` is named on {} lines of ARCHITECTURE.md's tables; a file has one",
                lines.len()
            )),
        }
        let lines = file.text.lines().count();
        if lines > LONG_FILE_LINES && !long_rows.contains_key(path) {
            problems.push(format!("`{path}` has {lines} lines and is not named under `{LONG_FILES}` with why"));
        }
    }
    for path in long_rows.keys() {
        let lines = files.iter().find(|f| &f.path == path).map(|f| f.text.lines().count());
        if lines.is_some_and(|lines| lines <= LONG_FILE_LINES) {
            problems.push(format!("`{path}` is named under `{LONG_FILES}` but has {} lines", lines.unwrap()));
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
    let (mut folders, mut sources) = (Vec::new(), Vec::new());
    rust_sources(&root, &root.join(floors::RUNTIME), &mut folders, &mut sources);
    let files: Vec<(String, String)> = sources.into_iter().map(|s| (s.path, s.text)).collect();
    let problems = floors::floor_problems(&floors, &files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_files_line_is_a_table_row_naming_it_and_the_long_files_section_is_apart() {
    let map = "# Map\n\n| file | its one idea |\n| --- | --- |\n| `a/b.rs` | what b does |\n| `a/c.rs` |  |\n\n\
               ## Long files, one idea each\n\n| `a/b.rs` | why b is long |\n\n## After\n\n| `a/d.rs` | d |\n";
    let (elsewhere, long) = split_long_files(map);
    assert_eq!(
        file_rows(&elsewhere),
        [("a/b.rs", "what b does"), ("a/c.rs", ""), ("a/d.rs", "d")].map(|(p, i)| (p.to_string(), i.to_string()))
    );
    assert_eq!(file_rows(long), [("a/b.rs".to_string(), "why b is long".to_string())]);
}

#[test]
fn a_script_opens_with_its_idea_after_its_interpreter_line() {
    let source = |path: &str, text: &str| Source { path: path.into(), text: text.into() };
    assert!(opens_with_its_idea(&source("node/setup", "#!/bin/bash\n# Sets up the node.\n")));
    assert!(opens_with_its_idea(&source("node/bus", "#!/usr/bin/env python3\n\"\"\"A client.\n\"\"\"\n")));
    assert!(opens_with_its_idea(&source("node/lib/x.py", "\"\"\"Shared.\"\"\"\n")));
    assert!(!opens_with_its_idea(&source("node/demo", "#!/bin/bash\nset -e\n")));
    assert!(!opens_with_its_idea(&source("a.rs", "// not a module comment\n")));
}
