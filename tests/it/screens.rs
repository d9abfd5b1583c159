//! What the `mesh-adopt` command prints, pinned as snapshots (insta) and reviewed in the
//! diff: a changed line of the operator's screen is a change someone has to approve, not a
//! padded substring a test happens not to look at. Accept a reviewed change with
//! `INSTA_UPDATE=always cargo test --test it screens` (or `cargo insta review`).

use std::path::Path;

use crate::support::mesh_adopt;
use crate::support::{catalogue, text};

/// Stdout and stderr with the exit status, the catalogue's temporary path and plugin
/// digests written as placeholders: what is left is the same on every machine.
fn screen(dir: &Path, args: &[&str]) -> String {
    let out = mesh_adopt().args(args).catalogue(dir).output();
    let shown = format!(
        "$ mesh-adopt {}\nexit {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        out.status.code().map_or("by a signal".to_string(), |c| c.to_string()),
        text(&out.stdout),
        text(&out.stderr)
    );
    let placed = shown.replace(&dir.display().to_string(), "[catalogue]");
    hide_timings(&hide_digests(&placed))
}

/// Each host call's measured duration, `(137.5µs)`, becomes `([took])`: real time, unlike
/// the mesh's clock beside it, differs from run to run.
fn hide_timings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let number = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let timed = ["ns)", "µs)", "ms)", "s)"].iter().find(|unit| rest[number..].starts_with(**unit));
        if let (true, Some(unit)) = (number > 0, timed) {
            out.push_str("[took])");
            rest = &rest[number + unit.len()..];
        }
    }
    out.push_str(rest);
    out
}

/// Each run of 12 or 64 hex digits (a short or whole plugin digest) becomes `[sha256]`;
/// plugin builds differ across toolchains, the screen around them does not.
fn hide_digests(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let hex = word.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase());
        if hex && (word.len() == 12 || word.len() == 64) {
            out.push_str("[sha256]");
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[test]
fn phase_three_adopted() {
    let dir = catalogue();
    insta::assert_snapshot!(screen(dir.path(), &["run", "--catalog-source", "https://git.mesh.test/catalogue.git@v3"]));
}

#[test]
fn phase_three_checked_verbosely() {
    let dir = catalogue();
    insta::assert_snapshot!(screen(
        dir.path(),
        &["check", "-v", "--catalog-source", "https://git.mesh.test/catalogue.git@v3"]
    ));
}

#[test]
fn every_module_refused_in_preflight() {
    let dir = catalogue();
    insta::assert_snapshot!(screen(dir.path(), &["run"]));
}

#[test]
fn a_module_the_catalogue_lacks() {
    let dir = catalogue();
    insta::assert_snapshot!(screen(dir.path(), &["check", "redis"]));
}

#[test]
fn a_duration_with_an_unknown_unit() {
    let dir = catalogue();
    insta::assert_snapshot!(screen(dir.path(), &["run", "--wait", "5x"]));
}

#[test]
fn a_plugin_inspected() {
    let dir = catalogue();
    // A plugin's size, like its digest, is the toolchain's.
    let shown = screen(dir.path(), &["inspect", "postgres"]);
    let shown: Vec<String> = shown
        .lines()
        .map(|l| if l.starts_with("size ") { "size         [bytes]".to_string() } else { l.to_string() })
        .collect();
    insta::assert_snapshot!(shown.join("\n"));
}

#[test]
fn timings_are_hidden_and_other_brackets_kept() {
    assert_eq!(
        hide_timings("ok (121.8µs), (2.1ms) (3s) (up to 120s) (in check) ()"),
        "ok ([took]), ([took]) ([took]) (up to 120s) (in check) ()"
    );
}

#[test]
fn digests_are_hidden_and_other_words_kept() {
    assert_eq!(
        hide_digests("sha256 0aef971c23df, 0aef971c23dfa240f3bfdeacb84480b175af733f479b10d75f64cc8c41055898 deadbeef"),
        "sha256 [sha256], [sha256] deadbeef"
    );
}
