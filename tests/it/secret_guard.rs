//! The guard that keeps a credential's value from being shown or sent finds a value where it
//! occurs whole, and a beginning of one only where an output was cut at a limit: tried with
//! every word of the shipped phase-three run on the simulator, and with real cuts.

use std::collections::BTreeSet;
use std::path::Path;

use mesh_adopt_runtime::{Limits, PluginHost};

use crate::support::{SUPERUSER, TestMesh, mesh_adopt};
use crate::support::{catalogue, text};

/// The catalogue source the run is given: its repository and ref are words of the options.
const REPOSITORY: &str = "https://git.mesh.local/catalogue.git";
const REFERENCE: &str = "v3.2.0";

/// The shortest value the guard looks for (`SCRUBBED_CHARS`): the words tried are this long
/// at least.
const SHORTEST: usize = 6;

/// `mesh-adopt ARGS` on the catalogue at `dir` with its superuser's credential set to
/// `value`: the exit status and everything written.
fn run_with_superuser(dir: &Path, value: &str, command: &str) -> (Option<i32>, String) {
    std::fs::write(dir.join("genesis/credentials/store-superuser"), format!("{value}\n")).unwrap();
    let source = format!("{REPOSITORY}@{REFERENCE}");
    let out = mesh_adopt().args([command, "--node", "node-1", "--catalog-source", &source]).catalogue(dir).output();
    (out.status.code(), format!("{}{}", text(&out.stdout), text(&out.stderr)))
}

/// Every word of at least [`SHORTEST`] characters in the shipped run's planned commands and
/// its options, each with the option it comes from (`None`: only a command's).
fn words_of_the_run(dir: &Path) -> Vec<(String, Option<&'static str>)> {
    let (status, out) = run_with_superuser(dir, SUPERUSER, "check");
    assert_eq!(status, Some(0), "{out}");
    let source = format!("{REPOSITORY}@{REFERENCE}");
    let json = mesh_adopt().args(["check", "--json", "--catalog-source", &source]).catalogue(dir).output();
    let mut words = BTreeSet::new();
    for line in text(&json.stdout).lines() {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        if event["event"] == "plan" {
            for command in event["commands"].as_array().unwrap() {
                words.extend(command.as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()));
            }
        }
    }
    let options = [("node-1", "--node"), (REPOSITORY, "--catalog-source"), (REFERENCE, "--catalog-source")];
    let mut tried: Vec<(String, Option<&'static str>)> = words
        .into_iter()
        .filter(|w| !options.iter().any(|(o, _)| o == w))
        .map(|w| (w, None))
        .chain(options.iter().map(|(w, option)| (w.to_string(), Some(*option))))
        .filter(|(w, _)| w.chars().count() >= SHORTEST)
        .collect();
    tried.sort();
    // The shipped run's plans are what this is about: enough words to mean something.
    assert!(tried.len() >= 15, "{tried:?}");
    tried
}

#[test]
fn a_value_beginning_or_ending_with_a_word_of_the_run_adopts_and_one_equal_to_it_is_refused_naming_where() {
    let dir = catalogue();
    for (word, option) in words_of_the_run(dir.path()) {
        // A value that only begins or ends with the word is not the word: the run adopts, and
        // nothing it shows is taken for the credential.
        for value in [format!("{word}-k9Qz"), format!("k9Qz-{word}")] {
            let (status, out) = run_with_superuser(dir.path(), &value, "run");
            assert_eq!(status, Some(0), "the value `{value}`:\n{out}");
            assert!(out.contains("mesh-vault   adopted"), "the value `{value}`:\n{out}");
            assert!(!out.contains("<secret"), "the value `{value}` was found where it is not:\n{out}");
        }
        // A value that is the word itself is in what the run would send: refused before any
        // effect, naming the option or the command and the credential, never showing it.
        let (status, out) = run_with_superuser(dir.path(), &word, "run");
        assert_eq!(status, Some(2), "the value `{word}`:\n{out}");
        match option {
            // A value in a credential's name is shown wherever that name is.
            _ if "store-superuser".contains(word.as_str()) => assert!(
                out.contains("is part of the credential name `store-")
                    && out.contains("cannot be kept from being shown"),
                "the value `{word}`:\n{out}"
            ),
            Some(option) => assert!(
                out.contains(&format!("{option} holds the value of the genesis credential `store-superuser`")),
                "the value `{word}`:\n{out}"
            ),
            None => {
                assert!(out.contains("holds the value of credential `store-superuser`"), "the value `{word}`:\n{out}");
                assert!(out.contains("plan, command ") && out.contains("(`tell "), "the value `{word}`:\n{out}");
            }
        }
        // (The credential's name, in the place of each value redacted, may hold the word.)
        let unnamed = out.replace("<secret store-superuser", "");
        assert!(!unnamed.contains(&word), "the value `{word}` was shown:\n{out}");
        assert!(!out.contains(" adopted "), "the value `{word}`:\n{out}");
    }
}

#[test]
fn a_store_password_beginning_with_the_module_name_adopts_the_shipped_catalogue() {
    let dir = catalogue();
    let (status, out) = run_with_superuser(dir.path(), "postgres-dev-password", "run");
    assert_eq!(status, Some(0), "{out}");
    for module in ["postgres", "nats", "mesh-vault"] {
        assert!(out.contains(&format!("{module:<12} adopted")), "{out}");
    }
    assert!(!out.contains("<secret") && !out.contains("postgres-dev-password"), "{out}");
}

#[tokio::test]
async fn a_value_cut_at_a_say_line_limit_is_redacted_as_far_as_it_goes() {
    // The plugin says "the superuser is <value>"; each limit cuts the line part-way through
    // the value, leaving from the shortest beginning the guard tells to all but its last
    // character.
    let said = "the superuser is ";
    for kept in [SHORTEST, SHORTEST + 1, SUPERUSER.len() / 2, SUPERUSER.len() - 1] {
        let limits = Limits { say_line_bytes: said.len() + kept, ..Limits::default() };
        let host: &'static PluginHost = Box::leak(Box::new(PluginHost::new(limits).unwrap()));
        let mut mesh = TestMesh::new().with_plugin("postgres", "smuggles_secret_say").handover_undeclared();
        mesh.host = Some(host);
        let ran = mesh.run_modules(&["postgres"], mesh_adopt_runtime::Mode::Adopt).await;
        assert!(
            ran.said("postgres", "the superuser is <secret store-superuser, cut> … (cut)"),
            "{kept} characters kept: {:?}",
            ran.transcript.visible_text()
        );
        let beginning = &SUPERUSER[..kept];
        assert!(ran.transcript.visible_text().iter().all(|t| !t.contains(beginning)), "{kept} characters kept");
        assert_eq!(ran.broken(), ["secret-never-shown"], "{kept} characters kept");
    }
}
