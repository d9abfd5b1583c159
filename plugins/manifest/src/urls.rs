//! Whether a URL is inside a fetch grant: the rule a fetch is decided by, here so a plugin
//! can check its own URLs against its manifest before it asks (`Grants::allows_fetch`).
//!
//! An exact grant matches its URL byte for byte. A prefix grant (`http://host/api/*`) matches
//! a URL that starts with the prefix and whose path is plain: only ASCII letters, digits and
//! `-._~/`, no `.` or `..` segment, no empty segment, no percent-encoding at all, no user
//! information before the host. A server, a proxy or a client library may resolve anything
//! else (an encoded or full-width dot, `..;`, a NUL, `//`) to another path, and the URL it
//! really reaches would then lie outside the prefix the grant was reviewed as. The query
//! after `?` may hold the characters a query usually does.

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
    if url.contains('#') {
        return false;
    }
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let plain_path = path.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '/'));
    let plain_query = query
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '=' | '&' | '/' | ',' | ':'));
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    plain_path
        && plain_query
        && !segments.iter().enumerate().any(|(i, s)| *s == "." || *s == ".." || (s.is_empty() && i != last))
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
            // Forms a server may resolve, or a library may decode, to another path.
            "http://127.0.0.1:8222/api/..;/admin",
            "http://127.0.0.1:8222/api/%00",
            "http://127.0.0.1:8222/api/%c0%ae%c0%ae/admin",
            "http://127.0.0.1:8222/api/\u{ff0e}\u{ff0e}/admin",
            "http://127.0.0.1:8222/api//admin",
            "http://127.0.0.1:8222/api/x#/../../admin",
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
