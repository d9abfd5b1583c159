//! Whether a URL is inside a fetch grant.
//!
//! An exact grant matches its URL byte for byte. A prefix grant (`http://host/api/*`) matches
//! a URL that starts with the prefix and whose path is already normal: no `.` or `..`
//! segment, no percent-encoded dot, slash or backslash, no backslash, no user information
//! before the host. A server, a proxy or a client library may resolve any of those, and the
//! URL it really reaches would then lie outside the prefix the grant was reviewed as.

/// Whether `url` is inside `grant` (an exact URL, or a prefix ending in `*`).
pub fn within_grant(grant: &str, url: &str) -> bool {
    match grant.strip_suffix('*') {
        Some(prefix) => url.starts_with(prefix) && is_normal(url) && same_authority(prefix, url),
        None => grant == url,
    }
}

/// `scheme://authority` and the rest, for an http(s) URL.
fn split(url: &str) -> Option<(&str, &str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    Some((scheme, &rest[..end], &rest[end..]))
}

/// A URL whose path no one could resolve to another: see the module's note.
fn is_normal(url: &str) -> bool {
    let Some((_, authority, rest)) = split(url) else { return false };
    if authority.contains('@') || url.contains('\\') || url.chars().any(|c| c.is_control() || c == ' ') {
        return false;
    }
    let path = &rest[..rest.find(['?', '#']).unwrap_or(rest.len())];
    let lower = path.to_ascii_lowercase();
    if ["%2e", "%2f", "%5c", "%25"].iter().any(|encoded| lower.contains(encoded)) {
        return false;
    }
    !path.split('/').any(|segment| segment == "." || segment == "..")
}

/// When a prefix stops inside the host (`http://host:80*`), the URL's host must be the
/// prefix's whole: `http://host:8080/` or `http://host:80.evil/` is not under it.
fn same_authority(prefix: &str, url: &str) -> bool {
    match (split(prefix), split(url)) {
        (Some((_, prefix_authority, prefix_rest)), Some((_, url_authority, _))) => {
            !prefix_rest.is_empty() || prefix_authority == url_authority
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const API: &str = "http://127.0.0.1:8222/api/*";

    #[test]
    fn exact_grants_match_exactly() {
        assert!(within_grant("http://127.0.0.1:8222/healthz", "http://127.0.0.1:8222/healthz"));
        assert!(!within_grant("http://127.0.0.1:8222/healthz", "http://127.0.0.1:8222/healthz?x"));
    }

    #[test]
    fn a_prefix_grant_matches_normal_paths_under_it() {
        assert!(within_grant(API, "http://127.0.0.1:8222/api/streams"));
        assert!(within_grant(API, "http://127.0.0.1:8222/api/streams/a.b?detail=../x"));
        assert!(within_grant(API, "http://127.0.0.1:8222/api/"));
        assert!(!within_grant(API, "http://127.0.0.1:8222/apix"));
        assert!(!within_grant(API, "http://127.0.0.1:8222/other"));
    }

    #[test]
    fn dot_segments_under_a_prefix_are_denied() {
        for url in [
            "http://127.0.0.1:8222/api/../admin",
            "http://127.0.0.1:8222/api/./streams",
            "http://127.0.0.1:8222/api/streams/..",
            "http://127.0.0.1:8222/api/%2e%2e/admin",
            "http://127.0.0.1:8222/api/%2E%2E/admin",
            "http://127.0.0.1:8222/api/.%2e/admin",
            "http://127.0.0.1:8222/api/..%2fadmin",
            "http://127.0.0.1:8222/api/..%5cadmin",
            "http://127.0.0.1:8222/api/%252e%252e/admin",
            "http://127.0.0.1:8222/api/..\\admin",
            "http://127.0.0.1:8222/api\\..\\admin",
            "http://127.0.0.1:8222/api/ streams",
        ] {
            assert!(!within_grant(API, url), "{url}");
        }
    }

    #[test]
    fn a_prefix_inside_the_host_matches_only_that_host() {
        let grant = "http://127.0.0.1:8222*";
        assert!(within_grant(grant, "http://127.0.0.1:8222/healthz"));
        assert!(!within_grant(grant, "http://127.0.0.1:82229/healthz"));
        assert!(!within_grant(grant, "http://127.0.0.1:8222.evil.test/"));
        assert!(!within_grant(grant, "http://127.0.0.1:8222@evil.test/"));
    }
}
