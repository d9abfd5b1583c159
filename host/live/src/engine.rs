//! What container engines say, kept in one place: the words an engine prints for a container
//! that is not there, as the configuration's `inspect_absent` gives them, and what an engine
//! that cannot answer at all says, which must never be read as "absent".

/// What the default configuration takes for "no such container" (docker says `No such
/// container`, podman `no such container`).
pub const ABSENT_BY_DEFAULT: &str = "no such container";

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

/// The least word `inspect_absent` must hold, in letters: so short a text is found in errors
/// that say nothing of the container.
pub const ABSENT_WORD_LETTERS: usize = 4;

/// Whether `phrase` is in `text` as a whole phrase, without regard to case: not inside a
/// longer word (`no such container` is in `Error: No such container: x`, `e` is not in
/// `error`).
pub fn says(text: &str, phrase: &str) -> bool {
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

/// Why `absent` cannot be taken for the engine's "no such container", if it cannot: blank,
/// with no word of [`ABSENT_WORD_LETTERS`] letters, or found in what an engine that cannot
/// answer says ([`ENGINE_TROUBLE`]).
pub fn absent_fault(absent: &str) -> Option<String> {
    const GIVE: &str = "give the engine's own words, e.g. \"no such container\"";
    if absent.trim().is_empty() {
        return Some(format!("is empty: every error of the engine would be read as \"no such container\"; {GIVE}"));
    }
    let longest = absent
        .split(|c: char| !c.is_alphanumeric())
        .map(|w| w.chars().filter(|c| c.is_alphabetic()).count())
        .max()
        .unwrap_or(0);
    if longest < ABSENT_WORD_LETTERS {
        return Some(format!(
            "holds no word of {ABSENT_WORD_LETTERS} letters or more: so short a text is found in errors that say \
             nothing of the container; {GIVE}"
        ));
    }
    ENGINE_TROUBLE.iter().find(|t| says(t, absent)).map(|trouble| {
        format!(
            "is found in what an engine that cannot answer says (`{trouble}`): such an engine would be read as an \
             empty mesh; give the engine's own words for a missing container, e.g. \"no such container\""
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absence_is_a_whole_phrase_without_regard_to_case() {
        assert!(says("Error: No such container: mesh-store", "no such container"));
        assert!(says("Error: inspecting object: no such container mesh-store", "No such container"));
        assert!(!says("Error: something", "e"));
        assert!(!says("no such containers", "no such container"));
        assert!(!says("anything", ""));
        assert!(!ENGINE_TROUBLE.iter().any(|t| says(t, ABSENT_BY_DEFAULT) || says(t, "no such object")));
    }

    #[test]
    fn an_absence_an_engine_in_trouble_could_say_is_refused() {
        assert_eq!(absent_fault(ABSENT_BY_DEFAULT), None);
        assert!(absent_fault("  ").unwrap().starts_with("is empty"));
        assert!(absent_fault("e").unwrap().starts_with("holds no word of 4 letters"));
        assert!(absent_fault("Docker daemon").unwrap().starts_with("is found in what an engine that cannot answer"));
    }
}
