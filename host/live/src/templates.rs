//! What each command template may and must hold, and what `inspect_absent` may be: a
//! configuration that would ask the engine about no container, carry to no destination, or
//! read an engine that errs as an empty mesh is refused as it is loaded, naming the key.
//!
//! A placeholder is a `{name}` the host fills in; a `{{…}}` is a Go template's action (an
//! inspect's `--format`), the engine's to read, and is left alone. Any other `{word}` in a
//! template would reach the command as it stands: a misspelt placeholder, refused.

use std::path::Path;

use anyhow::{Result, bail, ensure};

use crate::LiveConfig;

/// Placeholders' names.
type Names = &'static [&'static str];

/// Each template's key, its words (`None`: not configured), the placeholders the host fills in
/// it, and those its contract needs.
fn templates(config: &LiveConfig) -> [(&'static str, Option<&Vec<String>>, Names, Names); 8] {
    [
        // A tell appends the command's words; nothing is filled in.
        ("control", Some(&config.control), &[], &[]),
        ("carry", Some(&config.carry), &["remote", "name"], &["remote"]),
        ("carry_secret", Some(&config.carry_secret), &["remote", "name"], &["remote"]),
        ("inspect", Some(&config.inspect), &["container", "node"], &["container"]),
        // Without `{node}` it answers for the configuration's `node` alone (`node.rs`).
        ("state", config.state.as_ref(), &["node"], &[]),
        ("lock", config.lock.as_ref(), &[], &[]),
        ("unlock", config.unlock.as_ref(), &["id"], &["id"]),
        ("lock_holder", config.lock_holder.as_ref(), &[], &[]),
    ]
}

/// Each `{…}` in `word` that reads as a placeholder (a name, maybe spaced: `{contaner}`,
/// `{ container }`), as it is written between its braces; a Go template's `{{…}}` is skipped
/// whole, and braces around anything else (a JSON argument) are no placeholder.
pub(crate) fn placeholders(word: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        let at = &rest[open..];
        if at.starts_with("{{") {
            match at.find("}}") {
                Some(close) => {
                    rest = &at[close + 2..];
                    continue;
                }
                None => break,
            }
        }
        let Some(end) = at[1..].find(['{', '}']) else { break };
        if at[1 + end..].starts_with('{') {
            rest = &at[1 + end..];
            continue;
        }
        let inner = &at[1..1 + end];
        let name = inner.trim();
        if name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            found.push(inner);
        }
        rest = &at[2 + end..];
    }
    found
}

/// What an engine that cannot answer says, docker's and podman's words and a transport's:
/// an `inspect_absent` found in any of these would read that engine as an empty mesh.
pub const ENGINE_TROUBLE: &[&str] = &[
    "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
    "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: \
     Get \"http://%2Fvar%2Frun%2Fdocker.sock/v1.24/containers/json\": dial unix /var/run/docker.sock: connect: \
     permission denied",
    "error during connect: this error may indicate that the docker daemon is not running",
    "Error response from daemon: context deadline exceeded",
    "Error: unable to connect to Podman socket: Get \"http://d/v4.3.1/libpod/_ping\": dial unix \
     /run/podman/podman.sock: connect: no such file or directory",
    "Error: accepts at least 1 arg(s), received 0",
    "\"docker container inspect\" requires at least 1 argument.",
    "Error: template: inspect:1:8: executing \"inspect\" at <.Config.Imag>: can't evaluate field Imag",
    "OCI runtime exec failed: exec failed: unable to start container process: exec: \"podman\": executable file \
     not found in $PATH: unknown",
    "env: 'docker': No such file or directory",
    "bash: line 1: podman: command not found",
    "ssh: connect to host node-1 port 22: Connection refused",
    "Error: timed out waiting for the engine: internal error",
];

/// Whether `phrase` is in `text` as a whole phrase, without regard to case: not inside a
/// longer word (`no such container` is in `Error: No such container: x`, `e` is not in
/// `error`).
pub(crate) fn says(text: &str, phrase: &str) -> bool {
    let (text, phrase) = (text.to_lowercase(), phrase.trim().to_lowercase());
    if phrase.is_empty() {
        return false;
    }
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let (first, last) = (phrase.chars().next(), phrase.chars().next_back());
    text.match_indices(&phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        // Inside a longer word at either end: not this phrase.
        let inside = (word(first) && word(before)) || (word(last) && word(after));
        !inside
    })
}

/// The least word `inspect_absent` must hold, in letters.
const ABSENT_WORD_LETTERS: usize = 4;

impl LiveConfig {
    /// Refuses a template with a `{word}` the host does not fill in it, or without a
    /// placeholder its contract needs, and an `inspect_absent` that an engine which errs
    /// could say: blank, with no word of [`ABSENT_WORD_LETTERS`] letters, or found in one of
    /// [`ENGINE_TROUBLE`]. Each refusal names `path` and the key.
    pub(crate) fn check_templates(&self, path: &Path) -> Result<()> {
        let file = path.display();
        let listed = |names: &[&str]| {
            if names.is_empty() {
                "no placeholder".to_string()
            } else {
                names.iter().map(|n| format!("`{{{n}}}`")).collect::<Vec<_>>().join(" and ")
            }
        };
        for (key, template, given, needed) in templates(self) {
            let Some(words) = template else { continue };
            for word in words {
                if let Some(unknown) = placeholders(word).into_iter().find(|p| !given.contains(p)) {
                    bail!(
                        "`{key}` in `{file}` has `{{{unknown}}}` in its word `{word}`, which is no placeholder of \
                         `{key}`: it is given {} only, and any other `{{…}}` would reach the command as written",
                        listed(given)
                    );
                }
            }
            for needed in needed {
                let holds = words.iter().any(|w| placeholders(w).contains(needed));
                ensure!(
                    holds,
                    "`{key}` in `{file}` has no `{{{needed}}}` word: {}",
                    match *needed {
                        "remote" => "what it carries would have no destination in the control plane",
                        "container" => "the engine would be asked about no container, and its error read as one",
                        _ => "it would not be told which lock to release",
                    }
                );
            }
        }
        let absent = &self.inspect_absent;
        ensure!(
            !absent.trim().is_empty(),
            "`inspect_absent` in `{file}` is empty: every error of the engine would be read as \"no such \
             container\"; give the engine's own words, e.g. \"no such container\""
        );
        let longest = absent
            .split(|c: char| !c.is_alphanumeric())
            .map(|w| w.chars().filter(|c| c.is_alphabetic()).count())
            .max()
            .unwrap_or(0);
        ensure!(
            longest >= ABSENT_WORD_LETTERS,
            "`inspect_absent` in `{file}` holds no word of {ABSENT_WORD_LETTERS} letters or more: so short a text \
             is found in errors that say nothing of the container; give the engine's own words, e.g. \"no such \
             container\""
        );
        if let Some(trouble) = ENGINE_TROUBLE.iter().find(|t| says(t, absent)) {
            bail!(
                "`inspect_absent` in `{file}` is found in what an engine that cannot answer says (`{trouble}`): \
                 such an engine would be read as an empty mesh; give the engine's own words for a missing \
                 container, e.g. \"no such container\""
            );
        }
        Ok(())
    }

    /// Every text of the configuration a process or a request is given, with its key: each
    /// template's words as one text, `node`, `inspect_absent` and `fetch_rewrite`'s prefixes.
    pub fn texts(&self) -> Vec<(&'static str, String)> {
        let mut texts: Vec<(&'static str, String)> = templates(self)
            .into_iter()
            .filter_map(|(key, template, _, _)| template.map(|words| (key, words.join(" "))))
            .collect();
        texts.push(("node", self.node.clone()));
        texts.push(("inspect_absent", self.inspect_absent.clone()));
        for (from, to) in &self.fetch_rewrite {
            texts.push(("fetch_rewrite", format!("{from} {to}")));
        }
        texts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_names_in_single_braces_and_go_templates_are_left_alone() {
        assert_eq!(placeholders("{container}"), ["container"]);
        assert_eq!(placeholders("--name={contaner}.x"), ["contaner"]);
        assert_eq!(placeholders("{ container }"), [" container "]);
        assert_eq!(placeholders("{remote}{name}"), ["remote", "name"]);
        assert!(placeholders(crate::INSPECT_FORMAT).is_empty());
        assert!(placeholders("{{json .}}").is_empty());
        assert!(placeholders("{\"a\": 1}").is_empty());
        assert!(placeholders("{").is_empty());
        assert_eq!(placeholders("{{{id}"), Vec::<&str>::new());
    }

    #[test]
    fn the_defaults_and_the_reference_nodes_configuration_load() {
        LiveConfig::default().check_templates(Path::new("(built in)")).unwrap();
        let node = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../node/mesh-adopt.toml"));
        LiveConfig::load(node).unwrap();
        let formatted = LiveConfig {
            inspect: ["podman", "inspect", "--format", crate::INSPECT_FORMAT, "{container}"].map(String::from).to_vec(),
            ..LiveConfig::default()
        };
        formatted.check_templates(Path::new("(built in)")).unwrap();
    }

    #[test]
    fn absence_is_a_whole_phrase_without_regard_to_case() {
        assert!(says("Error: No such container: mesh-store", "no such container"));
        assert!(says("Error: inspecting object: no such container mesh-store", "No such container"));
        assert!(!says("Error: something", "e"));
        assert!(!says("no such containers", "no such container"));
        assert!(!says("anything", ""));
        assert!(!ENGINE_TROUBLE.iter().any(|t| says(t, "no such container") || says(t, "no such object")));
    }
}
