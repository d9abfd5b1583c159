//! The control-plane commands a plugin may tell, as one typed vocabulary: the guest SDK
//! builds them, the host's grants decide on them and the simulated control plane carries
//! them out, all through [`Command`], so the three can never read a command differently.
//!
//! Every name a command carries (node, module, secret, ref, repository) is a checked word:
//! not empty, no leading `-` (it could be read as an option), no `..`, no whitespace or
//! control characters.

use std::fmt;

/// The ref built when the operator names none.
pub const DEFAULT_REF: &str = "main";

/// The build's own wait, passed to the control plane; the only one a plan may give.
pub const BUILD_WAIT: &str = "1200s";

/// How long a plugin lets the build command take: longer than the build's own wait, so the
/// control plane reports its own timeout rather than being cut off mid-answer. The host's
/// wall deadline for an export must exceed it and the operator's `--wait` together.
pub const BUILD_TIMEOUT_SECONDS: u32 = 1500;

/// Where a module's manifest is carried in the control plane.
pub fn manifest_remote(module: &str) -> String {
    format!("/{module}-module.json")
}

/// Where a secret is carried before the module accepts it.
pub fn accepting_remote(secret: &str) -> String {
    format!("/accepting-{secret}")
}

/// One control-plane command of the provider sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `module add /<module>-module.json`: registers the manifest carried there.
    ModuleAdd { remote: String },
    /// `build <repository> --path modules/<module> --ref <ref> --wait 1200s`.
    Build { repository: String, module: String, reference: String },
    /// `module issue <module> --node <node>`: a bus account; refused for a module with none.
    ModuleIssue { module: String, node: String },
    /// `assign <node> <module>`.
    Assign { node: String, module: String },
    /// `prepare <node> <module>`.
    Prepare { node: String, module: String },
    /// `secret accept <node> <module> <secret> --from /accepting-<secret>`.
    SecretAccept { node: String, module: String, secret: String, from: String },
    /// `push <node>`.
    Push { node: String },
}

/// Why words are not a command of the vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandError {
    /// The words match no command's shape.
    Unknown,
    /// The shape fits, but a name in it is not a checked word.
    BadWord { what: &'static str, value: String, why: &'static str },
    /// The shape fits, but a fixed part differs (the build's path or wait).
    Fixed { what: &'static str, value: String, expected: String },
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::Unknown => {
                f.write_str("it is none of: module add, build, module issue, assign, prepare, secret accept, push")
            }
            CommandError::BadWord { what, value, why } => write!(f, "its {what} `{}` {why}", visible(value)),
            CommandError::Fixed { what, value, expected } => {
                write!(f, "its {what} is `{}`; it must be `{expected}`", visible(value))
            }
        }
    }
}

impl std::error::Error for CommandError {}

/// `text` with control characters shown as escapes, so a message quoting it stays one line.
fn visible(text: &str) -> String {
    text.chars().flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
}

/// Checks a name a command carries; the error says what is wrong with it.
pub fn check_word(what: &'static str, value: &str) -> Result<(), CommandError> {
    let bad = |why| Err(CommandError::BadWord { what, value: value.to_string(), why });
    if value.is_empty() {
        return bad("is empty");
    }
    if value.starts_with('-') {
        return bad("starts with `-`, so it could be read as an option");
    }
    if value.contains("..") {
        return bad("contains `..`");
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("contains whitespace or a control character");
    }
    Ok(())
}

impl Command {
    /// Reads words as a command, checking every name in them.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Command, CommandError> {
        let a: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
        let command = match a.as_slice() {
            ["module", "add", remote] => Command::ModuleAdd { remote: remote.to_string() },
            ["build", repository, "--path", path, "--ref", reference, "--wait", wait] => {
                let Some(module) = path.strip_prefix("modules/") else {
                    return Err(CommandError::Fixed {
                        what: "build path",
                        value: path.to_string(),
                        expected: "modules/<module>".into(),
                    });
                };
                if *wait != BUILD_WAIT {
                    return Err(CommandError::Fixed {
                        what: "build wait",
                        value: wait.to_string(),
                        expected: BUILD_WAIT.into(),
                    });
                }
                Command::Build {
                    repository: repository.to_string(),
                    module: module.to_string(),
                    reference: reference.to_string(),
                }
            }
            ["module", "issue", module, "--node", node] => {
                Command::ModuleIssue { module: module.to_string(), node: node.to_string() }
            }
            ["assign", node, module] => Command::Assign { node: node.to_string(), module: module.to_string() },
            ["prepare", node, module] => Command::Prepare { node: node.to_string(), module: module.to_string() },
            ["secret", "accept", node, module, secret, "--from", from] => Command::SecretAccept {
                node: node.to_string(),
                module: module.to_string(),
                secret: secret.to_string(),
                from: from.to_string(),
            },
            ["push", node] => Command::Push { node: node.to_string() },
            _ => return Err(CommandError::Unknown),
        };
        command.check()?;
        Ok(command)
    }

    /// Checks that every name the command carries is a checked word: how a command that came
    /// typed (contract 0.2.0's variant) is held to the rule words are held to when parsed.
    pub fn check(&self) -> Result<(), CommandError> {
        match self {
            Command::ModuleAdd { remote } => check_word("manifest path", remote),
            Command::Build { repository, module, reference } => {
                check_word("repository", repository)?;
                check_word("module", module)?;
                check_word("ref", reference)
            }
            Command::ModuleIssue { module, node }
            | Command::Assign { node, module }
            | Command::Prepare { node, module } => {
                check_word("node", node)?;
                check_word("module", module)
            }
            Command::SecretAccept { node, module, secret, from } => {
                check_word("node", node)?;
                check_word("module", module)?;
                check_word("secret", secret)?;
                check_word("source path", from)
            }
            Command::Push { node } => check_word("node", node),
        }
    }

    /// Hands each of the command's words to `word`, in order, without making them: what
    /// sizes a command and writes it out. The build's path is given in its two parts,
    /// `modules/` then the module, which `word` is told make one word (`joined: true` on the
    /// second).
    fn each_word(&self, mut word: impl FnMut(&str, bool)) {
        let mut all = |words: &[&str]| words.iter().for_each(|w| word(w, false));
        match self {
            Command::ModuleAdd { remote } => all(&["module", "add", remote]),
            Command::Build { repository, module, reference } => {
                all(&["build", repository, "--path", "modules/"]);
                word(module, true);
                ["--ref", reference, "--wait", BUILD_WAIT].iter().for_each(|w| word(w, false));
            }
            Command::ModuleIssue { module, node } => all(&["module", "issue", module, "--node", node]),
            Command::Assign { node, module } => all(&["assign", node, module]),
            Command::Prepare { node, module } => all(&["prepare", node, module]),
            Command::SecretAccept { node, module, secret, from } => {
                all(&["secret", "accept", node, module, secret, "--from", from])
            }
            Command::Push { node } => all(&["push", node]),
        }
    }

    /// The command's words, as it is told: made where a process is given them or a line
    /// shows them, never to decide what the command is.
    pub fn words(&self) -> Vec<String> {
        let mut words: Vec<String> = Vec::with_capacity(8);
        self.each_word(|w, joined| match (joined, words.last_mut()) {
            (true, Some(last)) => last.push_str(w),
            _ => words.push(w.to_string()),
        });
        words
    }

    /// How many words the command is, and how many bytes they hold in all: what a limit on a
    /// command's size is held to, without making its words.
    pub fn size(&self) -> (usize, usize) {
        let (mut count, mut bytes) = (0, 0);
        self.each_word(|w, joined| {
            count += usize::from(!joined);
            bytes += w.len();
        });
        (count, bytes)
    }

    /// The module a command acts on, where it names one.
    pub fn module(&self) -> Option<&str> {
        match self {
            Command::ModuleAdd { .. } | Command::Push { .. } => None,
            Command::Build { module, .. }
            | Command::ModuleIssue { module, .. }
            | Command::Assign { module, .. }
            | Command::Prepare { module, .. }
            | Command::SecretAccept { module, .. } => Some(module),
        }
    }

    /// The node a command acts on, where it names one.
    pub fn node(&self) -> Option<&str> {
        match self {
            Command::ModuleAdd { .. } | Command::Build { .. } => None,
            Command::ModuleIssue { node, .. }
            | Command::Assign { node, .. }
            | Command::Prepare { node, .. }
            | Command::SecretAccept { node, .. }
            | Command::Push { node } => Some(node),
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut result = Ok(());
        self.each_word(|w, joined| {
            if !first && !joined {
                result = result.and_then(|()| f.write_str(" "));
            }
            first = false;
            result = result.and_then(|()| f.write_str(w));
        });
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Command, CommandError> {
        Command::parse(&text.split(' ').collect::<Vec<_>>())
    }

    #[test]
    fn every_command_reads_back_as_its_words() {
        for text in [
            "module add /postgres-module.json",
            "build https://git/cat.git --path modules/postgres --ref main --wait 1200s",
            "module issue postgres --node node-1",
            "assign node-1 postgres",
            "prepare node-1 postgres",
            "secret accept node-1 postgres superuser --from /accepting-superuser",
            "push node-1",
        ] {
            let command = parse(text).unwrap();
            assert_eq!(command.to_string(), text);
            assert_eq!(command.words().join(" "), text);
            let words = text.split(' ').count();
            assert_eq!(command.size(), (words, text.len() + 1 - words), "{text}");
        }
    }

    #[test]
    fn names_are_checked_words() {
        // An option-like node.
        assert!(matches!(parse("push --all"), Err(CommandError::BadWord { what: "node", .. })));
        // A ref that would be an option of git.
        let upload = parse("build r --path modules/m --ref --upload-pack=x --wait 1200s").unwrap_err();
        assert!(upload.to_string().contains("ref"), "{upload}");
        // A path escape in the module.
        assert!(parse("assign node-1 ../x").is_err());
        // Control characters and whitespace.
        assert!(parse("assign node-1 a\tb").is_err());
        assert!(Command::parse(&["assign", "node-1", ""]).is_err());
    }

    #[test]
    fn the_build_path_and_wait_are_fixed() {
        assert!(matches!(
            parse("build r --path elsewhere --ref main --wait 1200s"),
            Err(CommandError::Fixed { what: "build path", .. })
        ));
        assert!(matches!(
            parse("build r --path modules/m --ref main --wait 1s"),
            Err(CommandError::Fixed { what: "build wait", .. })
        ));
        assert_eq!(parse("module remove x"), Err(CommandError::Unknown));
    }
}
