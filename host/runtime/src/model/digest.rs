//! How a digest is shown to a person: enough of it to tell plugins and documents apart.

/// The first twelve hex digits of a digest, enough to tell plugins apart in a message.
pub fn short(digest: &str) -> &str {
    &digest[..digest.len().min(12)]
}
