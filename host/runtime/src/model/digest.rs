//! A sha256 as the host holds one: what pins a plugin, names a document in a saved plan and
//! keys the compile cache, in lowercase hex, so two digests compare as values wherever they
//! came from, and are shown short in one way.

use std::fmt;

/// A sha256, as 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Sha256(String);

impl Sha256 {
    /// The sha256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Sha256 {
        use sha2::Digest as _;
        Sha256(format!("{:x}", sha2::Sha256::digest(bytes)))
    }

    /// `text` read as a sha256 (64 hex digits in either case, space around them ignored), or
    /// `None` when it is not one.
    pub fn parse(text: &str) -> Option<Sha256> {
        let text = text.trim();
        (text.len() == 64 && text.chars().all(|c| c.is_ascii_hexdigit())).then(|| Sha256(text.to_ascii_lowercase()))
    }

    /// The 64 hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first twelve hex digits, enough to tell plugins and documents apart in a message.
    pub fn short(&self) -> &str {
        &self.0[..12]
    }
}

/// The sha256 of nothing: what a document made in memory, not read from bytes, is named by.
impl Default for Sha256 {
    fn default() -> Sha256 {
        Sha256::of(b"")
    }
}

impl std::ops::Deref for Sha256 {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Read as [`Sha256::parse`] reads it: a document that holds anything else is malformed.
impl<'de> serde::Deserialize<'de> for Sha256 {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Sha256, D::Error> {
        let text = String::deserialize(deserializer)?;
        Sha256::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("`{}` is not a sha256 (64 hex digits)", text.escape_debug()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_is_its_lowercase_hex_however_it_was_written() {
        let of = Sha256::of(b"adopt");
        assert_eq!(Sha256::parse(&of.to_ascii_uppercase()), Some(of.clone()));
        assert_eq!(Sha256::parse(&format!(" {of}\n")), Some(of.clone()));
        assert_eq!(of.short().len(), 12);
        for bad in ["", "abc", &"g".repeat(64), &"a".repeat(65)] {
            assert_eq!(Sha256::parse(bad), None, "{bad}");
        }
        let read: Sha256 = serde_json::from_str(&format!("\"{}\"", of.to_ascii_uppercase())).unwrap();
        assert_eq!(read, of);
        assert!(serde_json::from_str::<Sha256>("\"abc\"").is_err());
    }
}
