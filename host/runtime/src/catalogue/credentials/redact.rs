//! Redaction: a credential value handed to a plugin never leaves the host in text it writes.
//! A value is found where it occurs whole (as written, and as a JSON string holds it); its
//! beginning only where a text was actually cut at a limit, since what is left there is as
//! good as the value to a guesser. Anywhere else a word a value merely starts with is a word.

use super::{Credentials, SCRUBBED_CHARS};

impl Credentials {
    /// `text` with the value of every credential handed out replaced by its name, and the
    /// name of the first one found, if any. A value is found only where it occurs whole: a
    /// text that merely begins or ends with a word a value starts with holds no value. Text
    /// without any comes back as it was, unmoved. For a text cut at a limit, see
    /// [`Credentials::redact_cut`].
    pub fn redact(&self, text: String) -> (String, Option<String>) {
        self.redact_as(text, Ending::Whole)
    }

    /// [`Credentials::redact`] for a text an output limit cut short: what is left at its end
    /// may be the beginning of a value whose rest was cut away, as good as the value to a
    /// guesser, so a beginning of at least [`SCRUBBED_CHARS`] characters there goes too.
    /// Called only where a text was actually cut, before any note saying so is added.
    pub fn redact_cut(&self, text: String) -> (String, Option<String>) {
        self.redact_as(text, Ending::Cut)
    }

    fn redact_as(&self, text: String, ending: Ending) -> (String, Option<String>) {
        let handed_out = self.handed_out.lock().unwrap_or_else(|p| p.into_inner());
        // Every text the host passes on is redacted, and almost none holds a value: that one
        // is looked through once, allocating nothing, and comes back as it was.
        let holds_a_form = |(_, value): &(String, String)| {
            let escaped = json_form(value);
            text.contains(value.as_str())
                || text.contains(escaped.as_ref())
                || (ending == Ending::Cut
                    && (cut_value_at_end(&text, value).is_some() || cut_value_at_end(&text, &escaped).is_some()))
        };
        if !handed_out.iter().any(holds_a_form) {
            return (text, None);
        }
        // What a redaction leaves is redacted already: a value inside one of these (a value
        // that is part of a credential's name) is not found again, so redacting twice (the
        // run's, then the program's last) changes nothing more.
        let markers: Vec<String> = handed_out
            .iter()
            .flat_map(|(name, _)| [format!("<secret {name}>"), format!("<secret {name}, cut>")])
            .collect();
        let mut scrubbed = text;
        let mut found = None;
        for (name, value) in handed_out.iter() {
            let escaped = json_form(value);
            for form in [value.as_str(), escaped.as_ref()] {
                if scrubbed.contains(form)
                    && let Some(replaced) = replace_outside(&scrubbed, form, &format!("<secret {name}>"), &markers)
                {
                    scrubbed = replaced;
                    found.get_or_insert_with(|| name.clone());
                }
            }
            if ending == Ending::Cut
                && let Some(cut) =
                    [value.as_str(), escaped.as_ref()].iter().find_map(|form| cut_value_at_end(&scrubbed, form))
            {
                scrubbed.truncate(cut);
                scrubbed.push_str(&format!("<secret {name}, cut>"));
                found.get_or_insert_with(|| name.clone());
            }
        }
        (scrubbed, found)
    }
}

/// `value` as a JSON string holds it, less its quotes (a quote, a backslash or a control
/// character escaped): a line of `--json` or of the record carries that form. Borrowed where
/// it is the value as written, as nearly every credential's is.
fn json_form(value: &str) -> std::borrow::Cow<'_, str> {
    if value.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        let escaped = serde_json::to_string(value).unwrap_or_default();
        std::borrow::Cow::Owned(escaped.trim_matches('"').to_string())
    } else {
        std::borrow::Cow::Borrowed(value)
    }
}

/// `text` with every `form` that is not inside one of `markers` replaced by `marker`, or
/// none when every `form` in it is inside one.
fn replace_outside(text: &str, form: &str, marker: &str, markers: &[String]) -> Option<String> {
    let mut replaced = String::with_capacity(text.len());
    let mut any = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(kept) = markers.iter().find(|m| rest.starts_with(m.as_str())) {
            replaced.push_str(kept);
            rest = &rest[kept.len()..];
        } else if rest.starts_with(form) {
            replaced.push_str(marker);
            rest = &rest[form.len()..];
            any = true;
        } else {
            replaced.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    any.then_some(replaced)
}

/// How a text to redact ends: as it was written, or cut at a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// Whole: a value is in it only where it occurs whole.
    Whole,
    /// Cut at a limit: its last characters may also be the beginning of a value.
    Cut,
}

/// Where `text` ends with the start of `value` (at least [`SCRUBBED_CHARS`] of it, short of
/// the whole), the offset that start begins at.
fn cut_value_at_end(text: &str, value: &str) -> Option<usize> {
    let chars: Vec<(usize, char)> = value.char_indices().collect();
    (SCRUBBED_CHARS..chars.len()).rev().find_map(|kept| {
        let prefix = &value[..chars[kept].0];
        text.ends_with(prefix).then(|| text.len() - prefix.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::credentials::Credentials;

    #[test]
    fn a_value_is_redacted_in_its_json_form_too() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pw"), "pass\"word\\1\n").unwrap();
        let credentials = Credentials::open(dir.path());
        credentials.learn_all();
        let line = serde_json::to_string(&serde_json::json!({"node": "pass\"word\\1"})).unwrap();
        let (redacted, found) = credentials.redact(line);
        assert_eq!(found.as_deref(), Some("pw"));
        assert!(!redacted.contains("word"), "{redacted}");
    }

    #[test]
    fn a_value_cut_at_the_end_of_a_text_is_redacted_as_far_as_it_goes() {
        assert_eq!(cut_value_at_end("aaa genesis-sup", "genesis-superuser"), Some(4));
        assert_eq!(cut_value_at_end("aaa genes", "genesis-superuser"), None, "shorter than a secret is told");
        assert_eq!(cut_value_at_end("aaa genesis-superuser", "genesis-superuser"), None, "whole: redacted as such");
    }

    #[test]
    fn a_value_is_found_whole_and_its_beginning_only_where_a_text_was_cut() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("store-superuser"), "postgres-dev-password\n").unwrap();
        let credentials = Credentials::open(dir.path());
        credentials.learn_all();
        // A word the value begins with, ending a whole text, is that word and nothing more.
        for text in ["module issue postgres", "postgres-dev", "assign node-1 postgres-dev-passwor"] {
            assert_eq!(credentials.redact(text.into()), (text.to_string(), None), "{text}");
        }
        assert_eq!(
            credentials.redact("pw=postgres-dev-password;".into()),
            ("pw=<secret store-superuser>;".to_string(), Some("store-superuser".into()))
        );
        // Cut at a limit, the same ending may be what is left of the value.
        assert_eq!(
            credentials.redact_cut("the password is postgres-dev".into()),
            ("the password is <secret store-superuser, cut>".to_string(), Some("store-superuser".into()))
        );
        assert_eq!(credentials.redact_cut("too short to tell: postg".into()).1, None);
    }

    #[test]
    fn a_text_redacted_once_is_not_redacted_again() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("store-superuser"), "superuser\n").unwrap();
        let credentials = Credentials::open(dir.path());
        credentials.learn_all();
        let (once, found) = credentials.redact("secret accept superuser".into());
        assert_eq!(
            (once.as_str(), found.as_deref()),
            ("secret accept <secret store-superuser>", Some("store-superuser"))
        );
        // The credential's name holds its value; what the first redaction left stays as it is.
        assert_eq!(credentials.redact(once.clone()), (once, None));
    }

    #[test]
    fn redacts_values_handed_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pw"), "hunter2-long").unwrap();
        let credentials = Credentials::open(dir.path());
        // Nothing is redacted before the value has been handed out.
        assert_eq!(credentials.redact("say hunter2-long".into()).1, None);
        credentials.read("pw").unwrap();
        assert_eq!(credentials.redact("say hunter2-long".into()), ("say <secret pw>".to_string(), Some("pw".into())));
    }
}
