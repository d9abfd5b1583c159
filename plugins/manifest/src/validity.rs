//! What makes a manifest one the control plane can take as it is, and one a catalogue may
//! ship: held the same wherever a manifest is read (the host's catalogue, its simulator's
//! control plane, `mesh-adopt build`), so none of them takes one another refuses.

use crate::{Grants, ModuleManifest};

/// Why a manifest that parses cannot be used, by the kind of fault a reader is told of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// It is not what the control plane can take: not UTF-8, nothing to raise, a container
    /// without a name or image, a volume naming no access.
    Malformed(String),
    /// A reader could take it two ways: an id or a key given twice, a kind of the wrong case.
    Ambiguous(String),
    /// It grants more than any catalogue may.
    GrantsTooMuch(String),
}

impl Invalid {
    /// How a message says what is wrong with the manifest: "is malformed", "is ambiguous",
    /// "grants too much".
    pub fn kind(&self) -> &'static str {
        match self {
            Invalid::Malformed(_) => "is malformed",
            Invalid::Ambiguous(_) => "is ambiguous",
            Invalid::GrantsTooMuch(_) => "grants too much",
        }
    }

    /// What exactly is wrong, in words.
    pub fn detail(&self) -> &str {
        match self {
            Invalid::Malformed(detail) | Invalid::Ambiguous(detail) | Invalid::GrantsTooMuch(detail) => detail,
        }
    }
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind(), self.detail())
    }
}

impl std::error::Error for Invalid {}

impl ModuleManifest {
    /// Holds a parsed manifest and its `bytes` to what every reader needs: ids once, well
    /// formed, no key twice, grants within what any catalogue may give; the first fault found,
    /// in that order.
    pub fn check_valid(&self, bytes: &[u8]) -> Result<(), Invalid> {
        ids_once(self).map_err(Invalid::Ambiguous)?;
        well_formed(bytes, self).map_err(Invalid::Malformed)?;
        no_key_twice(bytes).map_err(Invalid::Ambiguous)?;
        within_ceiling(&self.adopt.grants).map_err(Invalid::GrantsTooMuch)
    }
}

/// Refuses a manifest the control plane could not take as it is: bytes that are not UTF-8
/// (registered byte for byte, whatever a field the host skips holds), an access whose path is
/// not absolute, a container with no name or image or a name a command could misread, a
/// volume whose `${access:…}` names no access.
fn well_formed(bytes: &[u8], manifest: &ModuleManifest) -> Result<(), String> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(format!("it is not UTF-8 (the byte at offset {} is not)", e.valid_up_to()));
    }
    if manifest.resources.is_empty() {
        return Err(
            "its `resources` list nothing: a module raises something on its node, or there is nothing to install"
                .into(),
        );
    }
    // An access is a place on the node, mounted into containers as their volumes' host side:
    // a relative path would be resolved against whatever directory the node's engine runs in.
    if let Some(access) = manifest.accesses.iter().find(|a| !a.path.starts_with('/')) {
        return Err(format!(
            "its access `{}` has the path `{}`, which is not absolute: an access is a place on the node, named from \
             its root (such as `/var/lib/mesh/store`)",
            access.id.escape_debug(),
            access.path.escape_debug()
        ));
    }
    for container in manifest.resolved_containers() {
        let id = container.id.escape_debug();
        if container.image.trim().is_empty() {
            return Err(format!("its container `{id}` names no image"));
        }
        crate::command::check_word("container name", &container.name)
            .map_err(|e| format!("its container `{id}`: {e}"))?;
        if let Some(volume) = container.volumes.iter().find(|v| v.contains("${access:")) {
            let ids: Vec<String> = manifest.accesses.iter().map(|a| format!("`{}`", a.id)).collect();
            return Err(format!(
                "its container `{id}` mounts `{}`, whose `${{access:…}}` names no access (it declares {})",
                volume.escape_debug(),
                if ids.is_empty() { "none".to_string() } else { ids.join(", ") }
            ));
        }
    }
    Ok(())
}

/// Refuses a JSON document in which an object gives a key twice, wherever it is and whether
/// or not the host reads it: the manifest is registered byte for byte, and which of the two
/// counts would be up to each reader (the control plane's may take the other).
pub fn no_key_twice(bytes: &[u8]) -> Result<(), String> {
    use serde::de::{Deserializer as _, MapAccess, SeqAccess, Visitor};
    /// Walks any JSON value, failing at the first object that gives a key twice.
    struct Walk;
    impl<'de> Visitor<'de> for Walk {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
            let mut keys = std::collections::BTreeSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !keys.insert(key.clone()) {
                    return Err(serde::de::Error::custom(format!("the key `{}` is given twice", key.escape_debug())));
                }
                map.next_value_seed(Seed)?;
            }
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
            while seq.next_element_seed(Seed)?.is_some() {}
            Ok(())
        }
        fn visit_bool<E>(self, _: bool) -> std::result::Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> std::result::Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> std::result::Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> std::result::Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> std::result::Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> std::result::Result<(), E> {
            Ok(())
        }
    }
    struct Seed;
    impl<'de> serde::de::DeserializeSeed<'de> for Seed {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
            d.deserialize_any(Walk)
        }
    }
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    reader.deserialize_any(Walk).map_err(|e| e.to_string())
}

/// Refuses what a reader could take two ways: two resources or two accesses with one id (a
/// volume's `${access:…}` would resolve to either), or a resource of type `Container` (read as
/// some other kind, so never predicted).
fn ids_once(manifest: &ModuleManifest) -> Result<(), String> {
    let twice =
        |ids: Vec<&str>| ids.iter().enumerate().find(|(i, id)| ids[..*i].contains(id)).map(|(_, id)| id.to_string());
    if let Some(id) = twice(manifest.resources.iter().map(|r| r.id.as_str()).collect()) {
        return Err(format!("two of its resources have the id `{}`", id.escape_debug()));
    }
    if let Some(id) = twice(manifest.accesses.iter().map(|a| a.id.as_str()).collect()) {
        return Err(format!(
            "two of its accesses have the id `{}`, so `${{access:{}}}` could mean either",
            id.escape_debug(),
            id.escape_debug()
        ));
    }
    if let Some(r) =
        manifest.resources.iter().find(|r| r.kind != "container" && r.kind.trim().eq_ignore_ascii_case("container"))
    {
        return Err(format!(
            "its resource `{}` is of type `{}`; a container's type is `container`",
            r.id.escape_debug(),
            r.kind.escape_debug()
        ));
    }
    Ok(())
}

/// Refuses grants no catalogue may give: credential and container names must be plain
/// names, and fetches must be http(s) URLs. (Grants for tell or carry cannot even be
/// written: the manifest's grants section has no such keys.)
fn within_ceiling(grants: &Grants) -> Result<(), String> {
    for name in &grants.credentials {
        if !is_plain_name(name) {
            return Err(format!("credential grant `{name}` is not a plain name inside the credentials directory"));
        }
    }
    let inspects = grants.inspect.iter().map(|name| inspect_grant_fault(name));
    let fetches = grants.fetch.iter().map(|url| fetch_grant_fault(url));
    match inspects.chain(fetches).flatten().next() {
        Some(fault) => Err(fault),
        None => Ok(()),
    }
}

/// Why no manifest may grant inspecting `name`, if none may.
pub fn inspect_grant_fault(name: &str) -> Option<String> {
    (!is_plain_name(name)).then(|| format!("inspect grant `{name}` is not a container name"))
}

/// Why no manifest may grant fetching `url`, if none may.
pub fn fetch_grant_fault(url: &str) -> Option<String> {
    let http = url.starts_with("http://") || url.starts_with("https://");
    (!http || url == "http://*" || url == "https://*")
        .then(|| format!("fetch grant `{url}` is not an http(s) URL or a prefix of one with a host"))
}

/// A name that is one file or container, nothing a path or a command could misread.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) && name != ".."
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_anywhere_is_named_and_a_document_without_one_passes() {
        assert!(no_key_twice(br#"{"a": [{"b": 1, "c": {"d": 2}}], "e": null}"#).is_ok());
        for twice in [r#"{"a": 1, "a": 1}"#, r#"{"x": [{"v": 1, "v": 2}]}"#, r#"{"x": {"y": {"z": 0, "z": 0}}}"#] {
            let error = no_key_twice(twice.as_bytes()).unwrap_err();
            assert!(error.contains("is given twice"), "{twice}: {error}");
        }
    }

    #[test]
    fn an_access_whose_path_is_not_absolute_is_refused_naming_it() {
        let manifest = |path: &str| {
            format!(
                r#"{{"name": "m", "resources": [{{"id": "server", "type": "container", "name": "m", "image": "i:1",
                    "volumes": ["${{access:data}}:/data"]}}], "accesses": [{{"id": "data", "path": "{path}"}}]}}"#
            )
        };
        let valid = |path: &str| {
            let bytes = manifest(path).into_bytes();
            ModuleManifest::parse(&bytes).unwrap().check_valid(&bytes)
        };
        assert_eq!(valid("/var/lib/mesh/data"), Ok(()));
        for relative in ["var/lib/mesh/data", "./data", "../data", "data", "", "~/data"] {
            let Err(Invalid::Malformed(why)) = valid(relative) else { panic!("{relative:?} was taken") };
            assert!(
                why.starts_with(&format!("its access `data` has the path `{relative}`, which is not absolute")),
                "{why}"
            );
        }
    }

    #[test]
    fn refuses_grants_beyond_the_ceiling() {
        let grants = |c: &str, f: &str| Grants { credentials: vec![c.into()], inspect: vec![], fetch: vec![f.into()] };
        assert!(within_ceiling(&grants("store-superuser", "http://127.0.0.1:8222/healthz")).is_ok());
        assert!(within_ceiling(&grants("../../etc/shadow", "http://x/")).is_err());
        assert!(within_ceiling(&grants("ok", "file:///etc/passwd")).is_err());
        assert!(within_ceiling(&grants("ok", "http://*")).is_err());
    }
}
