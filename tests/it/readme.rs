//! README.md held to the repository and to the binary, and docs/README.md to `docs/`: every
//! path the README names exists (and every heading a link names), every `mesh-adopt …` line
//! of its `sh` blocks names a command the binary has and, where it runs offline on the
//! simulated mesh, exits as the line says; the README stays a page read in minutes; and the
//! documents' index links every document in `docs/`.

use std::path::{Path, PathBuf};

use crate::support::{mesh_adopt, root};

/// The most words the README may hold, counted as `wc -w` counts them.
const MOST_WORDS: usize = 2500;

/// The commands a README line is run with: they read the example catalogue and the simulated
/// mesh, or nothing, and write nothing but what the line names.
const RUN_OFFLINE: [&str; 5] = ["check", "inspect", "completions", "manpage", "--help"];

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text outside fenced code blocks, and the `sh` blocks' lines.
fn split(markdown: &str) -> (String, Vec<String>) {
    let (mut prose, mut sh) = (String::new(), Vec::new());
    let mut fence: Option<String> = None;
    for line in markdown.lines() {
        match (&fence, line.trim_start().strip_prefix("```")) {
            (None, Some(info)) => fence = Some(info.trim().to_string()),
            (Some(_), Some(_)) => fence = None,
            (Some(info), None) if info == "sh" => sh.push(line.to_string()),
            (Some(_), None) => {}
            (None, None) => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    assert!(fence.is_none(), "a code block is not closed");
    (prose, sh)
}

/// The targets of the Markdown links in `prose`: `[text](target)`.
fn links(prose: &str) -> Vec<String> {
    prose.split("](").skip(1).filter_map(|rest| Some(rest[..rest.find(')')?].to_string())).collect()
}

/// A heading's anchor, as GitHub makes it.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every link of `prose` (in the file `from`) that is not on the web resolves: its file
/// exists, and a heading of it has the anchor the link names.
fn broken_links(from: &str, prose: &str) -> Vec<String> {
    let dir = root().join(from).parent().unwrap().to_path_buf();
    let mut broken = Vec::new();
    for target in links(prose) {
        if target.starts_with("http://") || target.starts_with("https://") {
            continue;
        }
        let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
        let path = if file.is_empty() { root().join(from) } else { dir.join(file) };
        if !path.exists() {
            broken.push(format!("{from} links `{target}`, which does not exist"));
            continue;
        }
        if !fragment.is_empty() {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let (headings, _) = split(&text);
            let found = headings
                .lines()
                .filter_map(|l| l.strip_prefix('#'))
                .any(|h| anchor(h.trim_start_matches('#')) == fragment);
            if !found {
                broken.push(format!("{from} links `{target}`, and {} has no such heading", path.display()));
            }
        }
    }
    broken
}

/// The spans of `prose` in backticks that name a path of this repository: no spaces or
/// placeholders, and either a Markdown file or a path under one of the repository's top
/// entries (`genesis/credentials/` names a place in any catalogue, not here).
fn repo_paths(prose: &str) -> Vec<String> {
    let top: Vec<String> = std::fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "target")
        .collect();
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| !span.is_empty() && !span.contains(|c: char| c.is_whitespace() || "<>{}*$~:=@|…[]".contains(c)))
        .filter(|span| {
            let first = span.split('/').next().unwrap();
            span.ends_with(".md") || (span.contains('/') && top.iter().any(|t| t == first))
        })
        .map(String::from)
        .collect()
}

#[test]
fn readme_names_only_paths_that_exist() {
    let (prose, _) = split(&read("README.md"));
    let mut problems = broken_links("README.md", &prose);
    let paths = repo_paths(&prose);
    assert!(paths.len() >= 5, "the README names too few paths for this test to mean anything: {paths:?}");
    for path in paths {
        if !root().join(&path).exists() {
            problems.push(format!("README.md names `{path}`, which does not exist"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn readme_is_read_in_minutes() {
    let words = read("README.md").split_whitespace().count();
    assert!(words <= MOST_WORDS, "README.md has {words} words, more than {MOST_WORDS}: move reference into docs/");
}

/// A README line as the test runs it: the arguments, where standard output goes, and the
/// exit status its comment says (`# exit 2: …`), 0 when it says none.
struct Line {
    shown: String,
    args: Vec<String>,
    stdout_to: Option<String>,
    exit: i32,
}

fn parse(line: &str) -> Line {
    let (command, comment) = line.split_once(" #").unwrap_or((line, ""));
    let exit = comment
        .split_once("exit ")
        .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .unwrap_or(0);
    let (command, stdout_to) = match command.split_once('>') {
        Some((command, to)) => (command, Some(to.trim().to_string())),
        None => (command, None),
    };
    let args = command.split_whitespace().skip(1).map(String::from).collect();
    Line { shown: line.to_string(), args, stdout_to, exit }
}

/// Whether a line is a synopsis rather than a command to run: a word of it is a placeholder
/// (`MODULE`, `[--out PLAN]`, `MODULE|DIR`) or an ellipsis.
fn is_synopsis(line: &Line) -> bool {
    line.args.iter().any(|a| {
        a.contains(['[', ']', '|', '…']) || (a.len() > 1 && a.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
    })
}

/// `~/…` in a line, under `home` instead.
fn at_home(word: &str, home: &Path) -> PathBuf {
    match word.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => PathBuf::from(word),
    }
}

#[test]
fn readme_commands_run_as_it_says() {
    let (_, sh) = split(&read("README.md"));
    let lines: Vec<Line> =
        sh.iter().filter(|l| l.trim_start().starts_with("mesh-adopt ")).map(|l| parse(l.trim())).collect();
    assert!(!lines.is_empty(), "the README shows no mesh-adopt command");
    let home = tempfile::tempdir().unwrap();
    // A compile cache kept between runs of the suite, so the catalogue's plugins compile once.
    let xdg = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme");
    let mut ran = 0;
    let mut problems = Vec::new();
    for line in &lines {
        let command = line.args.first().map(String::as_str).unwrap_or("");
        // Every command a line names is one the binary has.
        if command != "--help" {
            let out = mesh_adopt().args([command, "--help"]).output();
            if out.status.code() != Some(0) {
                problems.push(format!("`{}`: the binary has no command `{command}`", line.shown));
                continue;
            }
        }
        if is_synopsis(line) || !RUN_OFFLINE.contains(&command) {
            continue;
        }
        let args: Vec<PathBuf> = line.args.iter().map(|a| at_home(a, home.path())).collect();
        if let Some(word) = line.args.iter().find(|a| a.contains(['\'', '"', '$', '(', ';', '&'])) {
            problems.push(format!("`{}`: `{word}` needs a shell, and this test runs none", line.shown));
            continue;
        }
        let out = mesh_adopt()
            .args(&args)
            .current_dir(root())
            .env("HOME", home.path())
            .env("XDG_CACHE_HOME", xdg.join("cache"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .timeout(std::time::Duration::from_secs(60))
            .output();
        ran += 1;
        if out.status.code() != Some(line.exit) {
            problems.push(format!(
                "`{}` exited {:?}, not {}:\n{}{}",
                line.shown,
                out.status.code(),
                line.exit,
                crate::support::cut(&String::from_utf8_lossy(&out.stdout), 2000),
                crate::support::cut(&String::from_utf8_lossy(&out.stderr), 2000)
            ));
        }
        if line.exit == 0 && line.stdout_to.is_some() && out.stdout.is_empty() {
            problems.push(format!("`{}` printed nothing to send on", line.shown));
        }
        if command == "manpage" {
            let dir = at_home(&line.args[1], home.path());
            if !dir.join("mesh-adopt.1").is_file() || !dir.join("mesh-adopt-run.1").is_file() {
                problems.push(format!(
                    "`{}` wrote no mesh-adopt.1 and mesh-adopt-run.1 into {}",
                    line.shown,
                    dir.display()
                ));
            }
        }
    }
    assert!(ran >= 3, "only {ran} of the README's commands ran offline");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_documents_index_links_every_document() {
    let index = "docs/README.md";
    let (prose, _) = split(&read(index));
    let mut problems = broken_links(index, &prose);
    let linked: Vec<PathBuf> = links(&prose)
        .iter()
        .filter_map(|t| t.split('#').next())
        .filter(|file| !file.is_empty() && !file.starts_with("http"))
        .filter_map(|file| root().join("docs").join(file).canonicalize().ok())
        .collect();
    let mut documents: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md" || e == "json"))
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    documents.push(root().join("node/README.md"));
    for document in documents {
        if !linked.contains(&document.canonicalize().unwrap()) {
            problems.push(format!("{index} does not link {}", document.strip_prefix(root()).unwrap().display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
