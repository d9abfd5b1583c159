//! Credentials an installer hands over as one JSON object, name to value, read to its end from
//! standard input, a file descriptor or a file: so no credential need sit in a file on disk,
//! on a command line or in an environment a process listing shows.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{CREDENTIAL_BYTES, CredentialError, CredentialValues, Origin, plain_name};

/// The largest document read: room for a few hundred credentials of the largest size.
const CREDENTIALS_DOCUMENT_BYTES: usize = 16 << 20;

impl CredentialValues {
    /// Reads `bytes` as a JSON object of credential names to their values as text, each
    /// exact (no newline taken from its end), refusing anything else: another JSON type, a
    /// name given twice or that could not be a file name, a value that is not text. `named`
    /// says in messages where the document came from (`standard input`). Each value is
    /// checked when a run asks for it, as a file's would be: not empty, at most 64 KiB.
    pub fn from_json(bytes: &[u8], named: &str) -> Result<CredentialValues, CredentialError> {
        let refuse = |why: String| CredentialError::NotADocument { named: named.to_string(), why };
        if bytes.len() > CREDENTIALS_DOCUMENT_BYTES {
            return Err(refuse(format!("it is larger than the {CREDENTIALS_DOCUMENT_BYTES} bytes allowed")));
        }
        mesh_adopt_manifest::validity::no_key_twice(bytes).map_err(refuse)?;
        let document: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| refuse(e.to_string()))?;
        let serde_json::Value::Object(fields) = document else {
            return Err(refuse("it is not an object".into()));
        };
        let mut values = BTreeMap::new();
        for (name, value) in fields {
            if !plain_name(&name) {
                return Err(refuse(format!(
                    "`{}` is not a credential name: names are plain file names",
                    name.escape_debug()
                )));
            }
            let serde_json::Value::String(text) = value else {
                return Err(refuse(format!("the value of `{name}` is not text")));
            };
            // Kept whole, one byte past the largest, so the run's check says it is too large.
            let bytes = text.into_bytes();
            values.insert(name, Ok(bytes[..bytes.len().min(CREDENTIAL_BYTES + 1)].to_vec()));
        }
        Ok(CredentialValues { origin: Origin::Document { named: named.to_string() }, values: Arc::new(Ok(values)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::credentials::Credentials;

    #[test]
    fn values_are_exact_and_checked_as_files_are() {
        let given = br#"{"store-superuser": "pw\n", "spaced": "  ", "token": "t0k3n-value"}"#;
        let credentials = Credentials::in_memory(CredentialValues::from_json(given, "standard input").unwrap());
        assert_eq!(credentials.read("store-superuser").unwrap().bytes, b"pw\n");
        assert_eq!(credentials.read("token").unwrap().bytes, b"t0k3n-value");
        let empty = credentials.read("spaced").unwrap_err();
        assert_eq!(empty.to_string(), "the credential `spaced` (in standard input) is empty or only whitespace");
        let missing = credentials.read("other").unwrap_err();
        assert_eq!(missing.to_string(), "no credential `other` in standard input");
        let large = format!(r#"{{"big": "{}"}}"#, "x".repeat(CREDENTIAL_BYTES + 1));
        let large = Credentials::in_memory(CredentialValues::from_json(large.as_bytes(), "standard input").unwrap());
        assert!(matches!(large.read("big"), Err(CredentialError::TooLarge { .. })));
    }

    #[test]
    fn anything_but_an_object_of_names_to_text_is_refused_naming_why() {
        for (given, says) in [
            (&b"[]"[..], "it is not an object"),
            (b"{\"a\": 1}", "the value of `a` is not text"),
            (b"{\"../etc\": \"x\"}", "`../etc` is not a credential name"),
            (b"{\"a\": \"x\", \"a\": \"y\"}", "`a`"),
            (b"{\"a\": ", "EOF"),
        ] {
            let refused = CredentialValues::from_json(given, "standard input").unwrap_err();
            let text = refused.to_string();
            assert!(text.starts_with("the credentials given in standard input are not a JSON object"), "{text}");
            assert!(text.contains(says), "{text}");
        }
    }
}
