//! What an operator installs beside the command, made by the command itself from the
//! definitions it parses its command line with: each shell's completion script
//! (`completions`), held to the shells on this machine, and the manual pages (`manpage`),
//! held to `man` and groff.

use std::path::Path;
use std::process::Command;

use crate::support::mesh_adopt;
use crate::support::text;

/// Every command the program takes, as `--help` lists them, and so every manual page but the
/// program's own.
const COMMANDS: [&str; 13] = [
    "check",
    "run",
    "inspect",
    "test",
    "new",
    "build",
    "cache",
    "cache-optimise",
    "cache-prune",
    "replay",
    "unlock",
    "completions",
    "manpage",
];

/// The completion script for `shell`, written into `dir`.
fn script(shell: &str, dir: &Path) -> (std::path::PathBuf, String) {
    let out = mesh_adopt().args(["completions", shell]).output();
    assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{shell}: {}", text(&out.stderr));
    let path = dir.join(format!("mesh-adopt.{shell}"));
    std::fs::write(&path, &out.stdout).unwrap();
    (path, text(&out.stdout))
}

/// Completes each of `lines` (the words typed, the last being completed; a line ending in a
/// space completes a new word) in a bash that has sourced `script`, as bash's own `complete`
/// binding for `mesh-adopt` says: what it offers, by line. Fails unless the script binds a
/// function to `mesh-adopt`.
fn bash_completes(script: &Path, lines: &[&str]) -> Vec<Vec<String>> {
    let driver = r#"
        source "$1" || exit 3
        spec=$(complete -p mesh-adopt) || exit 4
        function=${spec#*-F }; function=${function%% *}
        shift
        for line in "$@"; do
            read -ra COMP_WORDS <<<"$line"
            [[ $line == *' ' ]] && COMP_WORDS+=("")
            COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE=$line; COMP_POINT=${#line}
            COMPREPLY=()
            "$function" mesh-adopt "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            echo "${COMPREPLY[*]}"
        done
    "#;
    let out =
        Command::new("bash").args(["--norc", "--noprofile", "-c", driver, "bash"]).arg(script).args(lines).output();
    let out = out.expect("bash runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let offered: Vec<Vec<String>> =
        text(&out.stdout).lines().map(|line| line.split_whitespace().map(String::from).collect()).collect();
    assert_eq!(offered.len(), lines.len(), "{}", text(&out.stdout));
    offered
}

#[test]
fn the_bash_script_is_bash_and_completes_commands_options_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = script("bash", dir.path());
    let parsed = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(parsed.status.success() && parsed.stderr.is_empty(), "{}", text(&parsed.stderr));
    let cases: [(&str, &[&str]); 7] = [
        ("mesh-adopt ru", &["run"]),
        ("mesh-adopt re", &["replay"]),
        ("mesh-adopt cache p", &["prune"]),
        // A command's own options: what a hyphen in the program's name once kept from bash.
        ("mesh-adopt replay --cat", &["--catalog-source", "--catalogue"]),
        ("mesh-adopt run --lock", &["--lock-timeout"]),
        ("mesh-adopt run --mesh ", &["simulated", "live"]),
        ("mesh-adopt check --code ", &["auto", "baseline", "optimised"]),
    ];
    let lines: Vec<&str> = cases.iter().map(|(line, _)| *line).collect();
    for ((line, expected), mut offered) in cases.iter().zip(bash_completes(&path, &lines)) {
        let mut expected = expected.to_vec();
        offered.sort();
        expected.sort();
        assert_eq!(offered, expected, "`{line}<TAB>`");
    }
    let shells = bash_completes(&path, &["mesh-adopt completions "]).remove(0);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        assert!(shells.iter().any(|s| s == shell), "`completions <TAB>` offers {shell}: {shells:?}");
    }
}

#[test]
fn the_zsh_and_fish_scripts_complete_every_command_and_their_shells_read_them_where_installed() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, parse_only, opening) in
        [("zsh", "-n", "#compdef mesh-adopt\n"), ("fish", "--no-execute", "complete -c mesh-adopt ")]
    {
        let (path, script) = script(shell, dir.path());
        assert!(script.starts_with(opening) || script.contains(opening), "{shell}: {script}");
        for command in COMMANDS.iter().filter(|c| !c.starts_with("cache-")) {
            assert!(script.contains(command), "{shell}'s script names `{command}`");
        }
        match Command::new(shell).arg(parse_only).arg(&path).output() {
            Ok(out) => assert!(out.status.success() && out.stderr.is_empty(), "{shell}: {}", text(&out.stderr)),
            // Not installed here: what the script is made of is held above, not how the shell reads it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                eprintln!("{shell} is not installed: its completion script was checked for its form only")
            }
            Err(e) => panic!("{shell}: {e}"),
        }
    }
}

/// `man` on `page` in a terminal 80 columns wide: what it shows, failing on any warning.
fn man(page: &Path, manpath: Option<&Path>) -> String {
    let mut command = Command::new("man");
    match manpath {
        Some(manpath) => command.env("MANPATH", manpath).arg(page),
        None => command.arg("-l").arg(page),
    };
    let out = command
        .env("MANWIDTH", "80")
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("man is installed (Debian's man-db and groff-base; `just setup-machine` installs them)");
    assert_eq!(out.status.code(), Some(0), "man {}: {}", page.display(), text(&out.stderr));
    assert!(out.stderr.is_empty(), "man {}: {}", page.display(), text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn the_manual_pages_render_in_man_and_groff_without_a_warning_and_man_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    let man1 = dir.path().join("man/man1");
    let out = mesh_adopt().arg("manpage").arg(&man1).output();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut pages = vec!["mesh-adopt".to_string()];
    pages.extend(COMMANDS.iter().map(|command| format!("mesh-adopt-{command}")));
    let written: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    let expected: Vec<String> = pages.iter().map(|page| man1.join(format!("{page}.1")).display().to_string()).collect();
    let (mut sorted_written, mut sorted_expected) = (written.clone(), expected.clone());
    sorted_written.sort();
    sorted_expected.sort();
    assert_eq!(sorted_written, sorted_expected, "a page for the program and one for each command");

    for (page, path) in pages.iter().zip(&expected) {
        let path = Path::new(path);
        let shown = man(path, None);
        assert!(shown.contains("NAME") && shown.contains("SYNOPSIS"), "{page}: {shown}");
        // Every warning groff has, input read as UTF-8 as man reads it.
        let groff = Command::new("groff").args(["-k", "-man", "-Tutf8", "-ww", "-z"]).arg(path).output().unwrap();
        assert!(groff.status.success() && groff.stderr.is_empty(), "{page}: {}", text(&groff.stderr));
    }
    // The program's page lists every command's page; a command's page has its options.
    let program = man(&man1.join("mesh-adopt.1"), None);
    for command in ["check", "run", "replay", "completions", "manpage"] {
        assert!(program.contains(&format!("mesh-adopt-{command}(1)")), "{program}");
    }
    let replay = man(&man1.join("mesh-adopt-replay.1"), None);
    for option in ["--catalogue <DIR>", "--record <FILE>", "<RECORDING>"] {
        assert!(replay.contains(option), "{replay}");
    }
    // Installed where MANPATH points, `man mesh-adopt-run` finds its page.
    let run = man(Path::new("mesh-adopt-run"), Some(&dir.path().join("man")));
    assert!(run.contains("--lock-timeout"), "{run}");

    // Written again, over the pages: the same; a page's name taken by a FIFO is refused, and
    // nothing waits on it.
    let again = mesh_adopt().arg("manpage").arg(&man1).output();
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    let fifo = man1.join("mesh-adopt-run.1");
    std::fs::remove_file(&fifo).unwrap();
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let refused = mesh_adopt().arg("manpage").arg(&man1).timeout(std::time::Duration::from_secs(60)).output();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stdout));
    assert!(
        text(&refused.stderr).contains(&format!("`{}` is a FIFO: a manual page is written only", fifo.display())),
        "{}",
        text(&refused.stderr)
    );
}
