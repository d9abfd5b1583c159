//! A command of the live configuration, parsed once into words the host fills in: each
//! template knows which configuration key it is, so which placeholders it is given and which
//! it needs, and a word that holds any other `{name}` is refused as it is read.
//!
//! A placeholder is a `{name}` the host fills in; a `{{…}}` is a Go template's action (an
//! inspect's `--format`), the engine's to read, and is left alone, as are braces around
//! anything that is not a name (a JSON argument). Any other `{word}` (a misspelt `{contaner}`,
//! a spaced `{ container }`) would reach the command as written: refused.

use std::fmt;

/// A word the host puts into a template's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholder {
    /// `{remote}`: where in the control plane a carry puts its bytes.
    Remote,
    /// `{name}`: the name a plugin carries a file under.
    Name,
    /// `{container}`: the container an inspect asks about.
    Container,
    /// `{node}`: the node the run is on.
    Node,
    /// `{id}`: the id of the lock to release.
    Id,
}

impl Placeholder {
    const ALL: [Placeholder; 5] =
        [Placeholder::Remote, Placeholder::Name, Placeholder::Container, Placeholder::Node, Placeholder::Id];

    /// The name written between its braces.
    pub fn name(self) -> &'static str {
        match self {
            Placeholder::Remote => "remote",
            Placeholder::Name => "name",
            Placeholder::Container => "container",
            Placeholder::Node => "node",
            Placeholder::Id => "id",
        }
    }

    fn named(name: &str) -> Option<Placeholder> {
        Placeholder::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// `{name}`, as a template writes it.
impl fmt::Display for Placeholder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}", self.name())
    }
}

/// Which command of the configuration a template is: what the host gives it, and what its
/// contract needs of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateKey {
    /// `control`: a tell appends the command's words; nothing is filled in.
    Control,
    /// `carry`.
    Carry,
    /// `carry_secret`.
    CarrySecret,
    /// `inspect`.
    Inspect,
    /// `state`: without `{node}` it answers for the configuration's `node` alone.
    State,
    /// `images`: without `{node}` it answers for the configuration's `node` alone.
    Images,
    /// `lock`.
    Lock,
    /// `unlock`.
    Unlock,
    /// `lock_holder`.
    LockHolder,
}

impl TemplateKey {
    /// Every key, in the configuration's order.
    pub const ALL: [TemplateKey; 9] = [
        TemplateKey::Control,
        TemplateKey::Carry,
        TemplateKey::CarrySecret,
        TemplateKey::Inspect,
        TemplateKey::State,
        TemplateKey::Images,
        TemplateKey::Lock,
        TemplateKey::Unlock,
        TemplateKey::LockHolder,
    ];

    /// The key as the configuration file spells it.
    pub fn key(self) -> &'static str {
        match self {
            TemplateKey::Control => "control",
            TemplateKey::Carry => "carry",
            TemplateKey::CarrySecret => "carry_secret",
            TemplateKey::Inspect => "inspect",
            TemplateKey::State => "state",
            TemplateKey::Images => "images",
            TemplateKey::Lock => "lock",
            TemplateKey::Unlock => "unlock",
            TemplateKey::LockHolder => "lock_holder",
        }
    }

    /// The placeholders the host fills in this template.
    pub fn given(self) -> &'static [Placeholder] {
        use Placeholder::*;
        match self {
            TemplateKey::Carry | TemplateKey::CarrySecret => &[Remote, Name],
            TemplateKey::Inspect => &[Container, Node],
            TemplateKey::State | TemplateKey::Images => &[Node],
            TemplateKey::Unlock => &[Id],
            TemplateKey::Control | TemplateKey::Lock | TemplateKey::LockHolder => &[],
        }
    }

    /// The placeholders its contract needs, each with what would go wrong without it.
    fn needed(self) -> &'static [(Placeholder, &'static str)] {
        const REMOTE: (Placeholder, &str) =
            (Placeholder::Remote, "what it carries would have no destination in the control plane");
        match self {
            TemplateKey::Carry | TemplateKey::CarrySecret => &[REMOTE],
            TemplateKey::Inspect => {
                &[(Placeholder::Container, "the engine would be asked about no container, and its error read as one")]
            }
            TemplateKey::Unlock => &[(Placeholder::Id, "it would not be told which lock to release")],
            _ => &[],
        }
    }

    /// The keys `placeholder` is given in, for a refusal that says where it belongs.
    fn given_in(placeholder: Placeholder) -> Vec<TemplateKey> {
        TemplateKey::ALL.into_iter().filter(|key| key.given().contains(&placeholder)).collect()
    }
}

/// What is wrong with a template's words, for the template of `key`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{}` {}", key.key(), self.predicate())]
pub struct TemplateError {
    /// Which command of the configuration.
    pub key: TemplateKey,
    /// What is wrong.
    pub fault: TemplateFault,
}

/// What is wrong with a template's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateFault {
    /// It has no words.
    Empty,
    /// A word holds a `{name}` the host does not fill in this template.
    NotGiven {
        /// The word.
        word: String,
        /// What its braces hold, as written.
        written: String,
        /// The placeholder it names, when it names one another template is given.
        elsewhere: Option<Placeholder>,
    },
    /// No word holds a placeholder its contract needs.
    Missing {
        /// The placeholder.
        placeholder: Placeholder,
        /// What would go wrong without it.
        why: &'static str,
    },
}

impl TemplateError {
    /// Which command of the configuration.
    pub fn key(&self) -> TemplateKey {
        self.key
    }

    /// The refusal, said after the key (and where it is written).
    pub fn predicate(&self) -> String {
        let k = self.key.key();
        match &self.fault {
            TemplateFault::Empty => "names no command".to_string(),
            TemplateFault::NotGiven { word, written, elsewhere: Some(placeholder) } => {
                let keys: Vec<String> =
                    TemplateKey::given_in(*placeholder).iter().map(|k| format!("`{}`", k.key())).collect();
                format!(
                    "has `{{{written}}}` in its word `{word}`, which is no placeholder of `{k}`: only {} {} given it{}",
                    listed(&keys),
                    if keys.len() == 1 { "is" } else { "are" },
                    if *placeholder == Placeholder::Node {
                        "; the control plane's commands name the node in their own words"
                    } else {
                        ""
                    }
                )
            }
            TemplateFault::NotGiven { word, written, elsewhere: None } => {
                let given: Vec<String> = self.key.given().iter().map(|p| format!("`{p}`")).collect();
                format!(
                    "has `{{{written}}}` in its word `{word}`, which is no placeholder of `{k}`: it is given {} only, \
                     and any other `{{…}}` would reach the command as written",
                    if given.is_empty() { "no placeholder".to_string() } else { given.join(" and ") }
                )
            }
            TemplateFault::Missing { placeholder, why } => format!("has no `{placeholder}` word: {why}"),
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
pub(crate) fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// One piece of a template's word: text as written, or a placeholder to fill.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Slot(Placeholder),
}

/// A command of the configuration: its words as written, and each read into what the host
/// fills in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    key: TemplateKey,
    written: Vec<String>,
    words: Vec<Vec<Piece>>,
}

impl Template {
    /// Reads `words` as the template of `key`: refused when empty, when a word holds a
    /// `{name}` the key is not given, or when no word holds a placeholder its contract needs.
    pub fn parse(key: TemplateKey, words: Vec<String>) -> Result<Template, TemplateError> {
        let refused = |fault| TemplateError { key, fault };
        if words.is_empty() {
            return Err(refused(TemplateFault::Empty));
        }
        let read = words.iter().map(|word| read_word(key, word).map_err(refused)).collect::<Result<Vec<_>, _>>()?;
        let template = Template { key, written: words, words: read };
        if let Some((placeholder, why)) = key.needed().iter().find(|(p, _)| !template.takes(*p)) {
            return Err(refused(TemplateFault::Missing { placeholder: *placeholder, why }));
        }
        Ok(template)
    }

    /// Which command of the configuration it is.
    pub fn key(&self) -> TemplateKey {
        self.key
    }

    /// Its words as the configuration writes them: what a mesh is keyed on, and a message
    /// names.
    pub fn written(&self) -> &[String] {
        &self.written
    }

    /// Whether a word of it holds `placeholder`.
    pub fn takes(&self, placeholder: Placeholder) -> bool {
        self.words.iter().flatten().any(|piece| *piece == Piece::Slot(placeholder))
    }

    /// Its words with each placeholder filled by `value`: the words a process is given.
    pub fn fill(&self, value: impl Fn(Placeholder) -> String) -> Vec<String> {
        self.words
            .iter()
            .map(|pieces| {
                let mut word = String::new();
                for piece in pieces {
                    match piece {
                        Piece::Text(text) => word.push_str(text),
                        Piece::Slot(placeholder) => word.push_str(&value(*placeholder)),
                    }
                }
                word
            })
            .collect()
    }
}

/// Reads one word of a template of `key` into its pieces.
fn read_word(key: TemplateKey, word: &str) -> Result<Vec<Piece>, TemplateFault> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        text.push_str(&rest[..open]);
        let at = &rest[open..];
        // A Go template's action is the engine's: kept whole, as text.
        if at.starts_with("{{") {
            let Some(close) = at.find("}}") else { break };
            text.push_str(&at[..close + 2]);
            rest = &at[close + 2..];
            continue;
        }
        let Some(end) = at[1..].find(['{', '}']) else { break };
        // Another brace opens first: this one is text.
        if at[1 + end..].starts_with('{') {
            text.push_str(&at[..1 + end]);
            rest = &at[1 + end..];
            continue;
        }
        let inner = &at[1..1 + end];
        let name = inner.trim();
        let reads_as_name = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !reads_as_name {
            text.push_str(&at[..2 + end]);
        } else {
            match Placeholder::named(inner).filter(|p| key.given().contains(p)) {
                Some(placeholder) => {
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Slot(placeholder));
                }
                None => {
                    return Err(TemplateFault::NotGiven {
                        word: word.to_string(),
                        written: inner.to_string(),
                        elsewhere: Placeholder::named(inner),
                    });
                }
            }
        }
        rest = &at[2 + end..];
    }
    text.push_str(rest);
    if !text.is_empty() || pieces.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(key: TemplateKey, words: &[&str]) -> Result<Template, TemplateError> {
        Template::parse(key, words.iter().map(|w| w.to_string()).collect())
    }

    #[test]
    fn placeholders_are_filled_within_words_and_go_templates_and_json_are_left_alone() {
        let inspect = template(
            TemplateKey::Inspect,
            &["engine", "--name={container}.x", "{{json .}}", "{\"a\": 1}", "{", "{node}"],
        )
        .unwrap();
        let filled = inspect.fill(|p| match p {
            Placeholder::Container => "mesh-bus".into(),
            Placeholder::Node => "node-2".into(),
            other => panic!("{other} is not given to inspect"),
        });
        assert_eq!(filled, ["engine", "--name=mesh-bus.x", "{{json .}}", "{\"a\": 1}", "{", "node-2"]);
        let carry = template(TemplateKey::Carry, &["put", "{remote}{name}"]).unwrap();
        assert_eq!(carry.fill(|p| p.name().to_uppercase()), ["put", "REMOTENAME"]);
        assert!(
            template(TemplateKey::Inspect, &["podman", "inspect", "--format", crate::INSPECT_FORMAT, "{container}"])
                .is_ok()
        );
        let unlock = template(TemplateKey::Unlock, &["u", "{{{id}"]).unwrap_err();
        assert_eq!(unlock.to_string(), "`unlock` has no `{id}` word: it would not be told which lock to release");
    }

    #[test]
    fn a_name_in_braces_the_key_is_not_given_is_refused_saying_where_it_belongs() {
        let misspelt = template(TemplateKey::Inspect, &["e", "{contaner}"]).unwrap_err();
        assert_eq!(
            misspelt.to_string(),
            "`inspect` has `{contaner}` in its word `{contaner}`, which is no placeholder of `inspect`: it is given \
             `{container}` and `{node}` only, and any other `{…}` would reach the command as written"
        );
        let spaced = template(TemplateKey::Inspect, &["e", "{ container }"]).unwrap_err();
        assert!(spaced.to_string().contains("`{ container }`"), "{spaced:?}");
        let node = template(TemplateKey::Control, &["mesh", "--on", "{node}"]).unwrap_err();
        assert_eq!(
            node.to_string(),
            "`control` has `{node}` in its word `{node}`, which is no placeholder of `control`: only `inspect`, \
             `state` and `images` are given it; the control plane's commands name the node in their own words"
        );
        assert_eq!(template(TemplateKey::Lock, &[]).unwrap_err().to_string(), "`lock` names no command");
        let missing = template(TemplateKey::Carry, &["put"]).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "`carry` has no `{remote}` word: what it carries would have no destination in the control plane"
        );
    }
}
