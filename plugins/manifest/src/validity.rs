//! What makes a manifest one the control plane can take as it is, and one a catalogue may
//! ship: held the same wherever a manifest is read (the host's catalogue, its simulator's
//! control plane, `mesh-adopt build`), so none of them takes one another refuses.

use crate::numbers::first_beyond_safe_range;
use crate::{Grants, ModuleManifest, ResourceKind};

/// Why a manifest that parses cannot be used, by the kind of fault a reader is told of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// It is not what the control plane can take: not UTF-8, nothing to raise (no resource, or
    /// none a container), a resource of a kind the contract does not know, an id, name or kind
    /// holding a control character or a path separator, a container without a name or image, a
    /// volume naming no access.
    Malformed(String),
    /// A reader could take it two ways: an id or a key given twice, a kind of the wrong case, a
    /// number beyond ±2^53 (one reader rounds it, another keeps it exact).
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
    /// Holds a parsed manifest and its `bytes` to what every reader needs: ids once, ids, names
    /// and kinds plain words, well formed, no key twice, no number beyond ±2^53, grants within
    /// what any catalogue may give; the first fault found, in that order.
    pub fn check_valid(&self, bytes: &[u8]) -> Result<(), Invalid> {
        ids_once(self).map_err(Invalid::Ambiguous)?;
        words_plain(self).map_err(Invalid::Malformed)?;
        well_formed(bytes, self).map_err(Invalid::Malformed)?;
        no_key_twice(bytes).map_err(Invalid::Ambiguous)?;
        numbers_within_safe_range(bytes).map_err(Invalid::Ambiguous)?;
        within_ceiling(&self.adopt.grants).map_err(Invalid::GrantsTooMuch)
    }
}

/// Why `word`, a resource's id, name or kind, cannot be one, if it cannot: a control character
/// (a terminal acts on it where the word is shown, and commands carry it) or a path separator
/// (a reader that keys files on the word, as a node keys what it holds, would reach elsewhere).
pub fn word_fault(word: &str) -> Option<&'static str> {
    if word.chars().any(char::is_control) {
        Some("holds a control character; an id, name or kind is shown and carried in commands as it is written")
    } else if word.contains(['/', '\\']) {
        Some("holds a path separator (`/` or `\\`); an id, name or kind is one word, never a path")
    } else {
        None
    }
}

/// Refuses a resource whose id, type or name, or an access whose id, is no plain word
/// ([`word_fault`]), naming it by its JSON Pointer.
fn words_plain(manifest: &ModuleManifest) -> Result<(), String> {
    let resources = manifest.resources.iter().enumerate().flat_map(|(index, r)| {
        let what = if r.kind == "container" { "container" } else { "resource" };
        [("id", &r.id), ("type", &r.kind), ("name", &r.name)]
            .map(|(field, word)| (what, &r.id, format!("/resources/{index}/{field}"), word))
    });
    let accesses = manifest
        .accesses
        .iter()
        .enumerate()
        .map(|(index, a)| ("access", &a.id, format!("/accesses/{index}/id"), &a.id));
    for (what, id, pointer, word) in resources.chain(accesses) {
        if let Some(fault) = word_fault(word) {
            return Err(format!("its {what} `{}`: `{pointer}` (`{}`) {fault}", id.escape_debug(), word.escape_debug()));
        }
    }
    Ok(())
}

/// Refuses a number written beyond ±2^53 anywhere in the document, read by the host or not
/// (the control plane reads the whole manifest, registered byte for byte): readers of JSON do
/// not agree on such a number's value, so the host and a node could digest one spec apart.
/// Decided on the number's text ([`crate::numbers`]); `-0` is 0, and within.
pub fn numbers_within_safe_range(bytes: &[u8]) -> Result<(), String> {
    match first_beyond_safe_range(bytes)? {
        Some(beyond) => Err(beyond.to_string()),
        None => Ok(()),
    }
}

/// Refuses resources that leave the module nothing to adopt or install: a resource of a kind
/// the contract does not know ([`ResourceKind`]), or no container among them, since a push
/// raises containers only.
fn something_to_raise(manifest: &ModuleManifest) -> Result<(), String> {
    for (index, resource) in manifest.resources.iter().enumerate() {
        if ResourceKind::parse(&resource.kind).is_some() {
            continue;
        }
        let id = resource.id.escape_debug();
        return Err(if resource.kind.is_empty() {
            format!(
                "its resource `{id}` (`/resources/{index}`) has no `type`; a resource's type is one of {}",
                ResourceKind::listed()
            )
        } else {
            format!(
                "its resource `{id}` is of type `{}` (`/resources/{index}/type`), which the contract does not know; a \
                 resource's type is one of {}",
                resource.kind.escape_debug(),
                ResourceKind::listed()
            )
        });
    }
    if manifest.containers().next().is_none() {
        let declared: Vec<String> =
            manifest.resources.iter().map(|r| format!("`{}` ({})", r.id.escape_debug(), r.kind)).collect();
        return Err(format!(
            "none of its resources is a container (`/resources` declares {}): a push raises containers only, so the \
             module would have nothing to adopt or install",
            declared.join(", ")
        ));
    }
    Ok(())
}

/// Refuses a manifest the control plane could not take as it is: bytes that are not UTF-8
/// (registered byte for byte, whatever a field the host skips holds), nothing to raise
/// ([`something_to_raise`]), an access whose path is not absolute, a container with no name or
/// image or a name a command could misread, a volume whose `${access:…}` names no access.
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
    something_to_raise(manifest)?;
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

    /// A manifest of module `m` whose resources are `resources` (JSON), with `extra` fields
    /// at its top, held valid or not.
    fn checked(resources: &str, extra: &str) -> Result<(), Invalid> {
        let text = format!(r#"{{"name": "m", {extra} "resources": {resources}}}"#);
        let manifest = ModuleManifest::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
        manifest.check_valid(text.as_bytes())
    }

    /// A container resource with `fields` added.
    fn container(fields: &str) -> String {
        format!(r#"{{"id": "vault", "type": "container", "name": "mesh-vault", "image": "v:1" {fields}}}"#)
    }

    #[test]
    fn a_number_beyond_2_to_the_53_is_refused_wherever_it_is_written_naming_its_pointer() {
        // (a field added to the container, or to the manifest's top, and where it is)
        let cases = [
            (container(r#", "environment": {"SIZE": 18446744073709551616}"#), "", "/resources/0/environment/SIZE"),
            (container(r#", "user": 9007199254740993"#), "", "/resources/0/user"),
            (container(r#", "command": ["run", -1e16]"#), "", "/resources/0/command/1"),
            (container(""), r#""x-limit": 9007199254740993.0,"#, "/x-limit"),
            (container(""), r#""x/odd~key": [0, 1E300],"#, "/x~1odd~0key/1"),
        ];
        for (resource, extra, pointer) in cases {
            let refused = checked(&format!("[{resource}]"), extra).expect_err(pointer);
            assert_eq!(refused.kind(), "is ambiguous", "{refused}");
            assert!(refused.detail().contains(&format!("at `{pointer}` is beyond ±2^53")), "{refused}");
        }
    }

    #[test]
    fn numbers_within_2_to_the_53_and_minus_zero_are_taken() {
        let numbers = r#", "environment": {"A": -0, "B": -0.0, "C": 9007199254740992, "D": -9007199254740992,
                          "E": 1.5, "F": 1e-7, "G": 9007199254740992.0, "H": 0.1}"#;
        assert_eq!(checked(&format!("[{}]", container(numbers)), r#""x-count": 900719925474099.2e1,"#), Ok(()));
    }

    #[test]
    fn resources_that_leave_nothing_to_adopt_or_install_or_are_of_no_known_kind_are_refused() {
        // (resources, what the refusal says)
        let cases = [
            (
                r#"[{"id": "vault", "type": "store-superuser", "name": "mesh-vault"}]"#,
                "is of type `store-superuser` (`/resources/0/type`), which the contract does not know",
            ),
            (
                r#"[{"id": "provisioner", "type": "service", "name": "p"}]"#,
                "none of its resources is a container (`/resources` declares `provisioner` (service))",
            ),
            (
                r#"[{"id": "data", "type": "volume"}, {"id": "net", "type": "network"}]"#,
                "none of its resources is a container",
            ),
            (
                &format!(r#"[{}, {{"id": "side", "name": "s"}}]"#, container("")),
                "its resource `side` (`/resources/1`) has no `type`",
            ),
            (
                &format!(r#"[{}, {{"id": "side", "type": "containers"}}]"#, container("")),
                "type `containers` (`/resources/1/type`)",
            ),
        ];
        for (resources, says) in cases {
            let refused = checked(resources, "").expect_err(resources);
            assert_eq!(refused.kind(), "is malformed", "{refused}");
            assert!(refused.detail().contains(says), "{resources}: {refused}");
        }
        let beside = format!(
            r#"[{}, {{"id": "p", "type": "service", "name": "p"}}, {{"id": "f", "type": "file"}}]"#,
            container("")
        );
        assert_eq!(checked(&beside, ""), Ok(()), "known kinds beside a container are taken");
    }

    #[test]
    fn an_id_name_or_kind_holding_a_control_character_or_a_path_separator_is_refused_naming_it() {
        // (resources, accesses, the pointer named, what it holds)
        let cases = [
            (
                r#"[{"id": "va\u001bult", "type": "container", "name": "mesh-vault", "image": "v:1"}]"#,
                "[]",
                "/resources/0/id",
                "control character",
            ),
            (
                r#"[{"id": "vault", "type": "container", "name": "mesh/vault", "image": "v:1"}]"#,
                "[]",
                "/resources/0/name",
                "path separator",
            ),
            (
                r#"[{"id": "vault", "type": "container", "name": "mesh\\vault", "image": "v:1"}]"#,
                "[]",
                "/resources/0/name",
                "path separator",
            ),
            (
                r#"[{"id": "vault", "type": "../../etc", "name": "mesh-vault"}]"#,
                "[]",
                "/resources/0/type",
                "path separator",
            ),
            (
                r#"[{"id": "vault", "type": "container", "name": "mesh-vault", "image": "v:1"}]"#,
                r#"[{"id": "da\u0007ta", "path": "/d"}]"#,
                "/accesses/0/id",
                "control character",
            ),
        ];
        for (resources, accesses, pointer, holds) in cases {
            let refused = checked(resources, &format!(r#""accesses": {accesses},"#)).expect_err(pointer);
            assert_eq!(refused.kind(), "is malformed", "{refused}");
            assert!(refused.detail().contains(&format!(": `{pointer}` (`")), "{refused}");
            assert!(refused.detail().contains(&format!("holds a {holds}")), "{refused}");
        }
    }

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
