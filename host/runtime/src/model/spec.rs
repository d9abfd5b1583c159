//! A container's spec and its digest, as the push rule defines them (docs/push-rule.md): what a
//! node compares to decide whether a pushed container is kept or recreated. The foundation
//! bundle's form and a module manifest's form are normalised to one, so genesis's store and the
//! module that keeps it have one digest exactly when every field of theirs agrees; the digest is
//! of the spec's canonical form (RFC 8785), which every implementation of the rule writes alike.
//!
//! A container as the node runs it ([`ContainerSpec`]) is here too: the foundation bundle reads
//! what genesis raised into both, below the prediction that compares them.

use std::fmt;

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::canonical::canonical;

use mesh_adopt_manifest::ManifestResource;

/// The label a node records a container's spec digest in, on the engine.
pub const SPEC_LABEL: &str = "org.mesh-adopt.spec";

/// The label a node records the module owning a container in (`genesis` for what genesis
/// raised).
pub const OWNER_LABEL: &str = "org.mesh-adopt.owner";

/// Where a node mounts the secrets it holds into a container (`/run/secrets/NAME`, read-only):
/// the node's bookkeeping, outside the container's spec, and what the container holds.
pub const SECRETS_INSIDE: &str = "/run/secrets/";

/// A resource's fields that are its identity or the node's bookkeeping, not its spec.
const NOT_SPEC: [&str; 4] = ["id", "type", "kind", "credentials"];

/// A container's spec: the resource less its identity, accesses resolved, mounts as a set,
/// empty fields dropped. Two containers with equal specs are the same container to a node:
/// equal as their canonical forms are, so `-0` and `0`, or `1.0` and `1`, are one value.
#[derive(Debug, Clone, Default)]
pub struct Spec(Map<String, Value>);

impl PartialEq for Spec {
    fn eq(&self, other: &Spec) -> bool {
        self.canonical() == other.canonical()
    }
}

impl Eq for Spec {}

impl Spec {
    /// A module's container, its volumes already resolved
    /// ([`mesh_adopt_manifest::ModuleManifest::resolved_containers`]).
    pub fn of_module(resource: &ManifestResource) -> Spec {
        Spec::from_fields(&resource.name, &resource.image, &resource.volumes, &resource.other)
    }

    /// A container as the foundation bundle writes it: its name, image and host mounts, and
    /// every other field it gives.
    pub fn from_fields(name: &str, image: &str, volumes: &[String], other: &Map<String, Value>) -> Spec {
        let mut fields: Map<String, Value> = other
            .iter()
            .filter(|(key, _)| !NOT_SPEC.contains(&key.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut mounts = volumes.to_vec();
        mounts.sort();
        fields.insert("name".into(), Value::from(name));
        fields.insert("image".into(), Value::from(image));
        fields.insert("volumes".into(), Value::from(mounts));
        fields.retain(|_, value| !is_empty(value));
        Spec(fields)
    }

    /// The same spec run on another image: a container genesis raised and something restarted
    /// onto a newer image since.
    pub fn on_image(&self, image: &str) -> Spec {
        let mut fields = self.0.clone();
        fields.insert("image".into(), Value::from(image));
        Spec(fields)
    }

    /// The fields whose values differ between this spec and `other` (one has it and the
    /// other not, or their canonical forms differ, as the digest sees them: `-0` and `0` are one
    /// value), in order: what a message names as the change.
    pub fn differing_fields(&self, other: &Spec) -> Vec<String> {
        let mut keys: Vec<&String> = self.0.keys().chain(other.0.keys()).collect();
        keys.sort();
        keys.dedup();
        let same = |a: Option<&Value>, b: Option<&Value>| match (a, b) {
            (Some(a), Some(b)) => canonical(a) == canonical(b),
            (a, b) => a.is_none() && b.is_none(),
        };
        keys.into_iter().filter(|key| !same(self.0.get(*key), other.0.get(*key))).cloned().collect()
    }

    /// One field's value, as the spec has it (`None`: the field is missing or empty).
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// The spec's canonical JSON (RFC 8785): what its digest is taken of.
    pub fn canonical(&self) -> String {
        canonical(&Value::Object(self.0.clone()))
    }

    /// The digest a node keys its decision on.
    pub fn digest(&self) -> SpecDigest {
        SpecDigest(format!("{:x}", Sha256::digest(self.canonical().as_bytes())))
    }
}

/// The SHA-256 of a spec's canonical JSON; shown, and labelled on the engine, as `sha256:HEX`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SpecDigest(String);

impl SpecDigest {
    /// Reads `sha256:HEX` (as the node labels a container) or bare hex; anything else is not a
    /// digest of this rule.
    pub fn parse(text: &str) -> Option<SpecDigest> {
        let hex = text.trim().strip_prefix("sha256:").unwrap_or(text.trim());
        (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
            .then(|| SpecDigest(hex.to_string()))
    }

    /// The first twelve hex digits, enough to tell two specs apart in a message.
    pub fn short(&self) -> &str {
        &self.0[..12]
    }
}

impl fmt::Display for SpecDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.0)
    }
}

/// Whether a field's value says nothing: a missing field and an empty one are one spec.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

/// A container as the node runs it: its image, its volumes (`host:inside[:opts]`), and, where
/// the backend can tell, the digest of the spec it was created from and the module owning it.
/// Grows fields as backends learn to say more: build it with [`ContainerSpec::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContainerSpec {
    /// The image it runs.
    pub image: String,
    /// Its mounts; `None` when the backend cannot say (a live engine asked for the image only).
    pub volumes: Option<Vec<String>>,
    /// The digest of the whole spec the node created it from (docs/push-rule.md); `None` when
    /// the backend cannot say (a container no node recorded one for): then only the image and
    /// the mounts are compared, and the summary says the rest was not verified.
    pub digest: Option<SpecDigest>,
    /// The module the node says owns it (`genesis` for what genesis raised), where the engine
    /// keeps owners.
    pub owner: Option<String>,
    /// Whether it runs, where the backend said: what a re-read before a push holds a
    /// container to, besides its spec (a push compares specs only).
    pub running: Option<bool>,
    /// The secrets the node mounted into it (their names, as the files under `/run/secrets/`,
    /// each with the host file it is mounted from), where the engine's answer shows its mounts:
    /// what it holds, in the node's own word, whatever the control plane remembers. `None`
    /// when the backend does not say.
    pub secrets: Option<std::collections::BTreeMap<String, String>>,
}

impl ContainerSpec {
    /// A container running `image` on `volumes` (unknown: `None`), its spec digest and owner
    /// not known.
    pub fn new(image: impl Into<String>, volumes: Option<Vec<String>>) -> ContainerSpec {
        ContainerSpec { image: image.into(), volumes, digest: None, owner: None, running: None, secrets: None }
    }

    /// The same, holding the secrets the node mounted into it (name → host file), as the
    /// engine shows them.
    pub fn with_secrets(mut self, secrets: Option<std::collections::BTreeMap<String, String>>) -> ContainerSpec {
        self.secrets = secrets;
        self
    }

    /// The same, running or not as the backend says.
    pub fn with_running(mut self, running: Option<bool>) -> ContainerSpec {
        self.running = running;
        self
    }

    /// The same, created from a spec whose digest is `digest`.
    pub fn with_digest(mut self, digest: Option<SpecDigest>) -> ContainerSpec {
        self.digest = digest;
        self
    }

    /// The same, owned by `owner` as the node says.
    pub fn with_owner(mut self, owner: Option<String>) -> ContainerSpec {
        self.owner = owner;
        self
    }

    /// Whether a push of `declared` keeps this container, by the push rule: the digests
    /// compared where this container's is known; otherwise its image and mounts.
    pub fn keeps(&self, declared: &ContainerSpec) -> bool {
        match (&self.digest, &declared.digest) {
            (Some(running), Some(wanted)) => running == wanted,
            _ => {
                self.image == declared.image
                    && match (&self.volumes, &declared.volumes) {
                        (Some(running), Some(wanted)) => same_volumes(running, wanted),
                        _ => true,
                    }
            }
        }
    }
}

/// Volumes compared as a node compares them: as a set.
pub fn same_volumes(a: &[String], b: &[String]) -> bool {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort();
    b.sort();
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle_store(other: Value) -> Spec {
        let Value::Object(other) = other else { unreachable!() };
        Spec::from_fields(
            "mesh-store",
            "postgres:16.4-bookworm",
            &["/var/lib/mesh/store:/var/lib/postgresql/data".to_string()],
            &other,
        )
    }

    #[test]
    fn the_bundle_form_and_the_module_form_of_one_container_have_one_digest() {
        let manifest = mesh_adopt_manifest::ModuleManifest::parse(
            br#"{"name": "postgres", "resources": [{"id": "server", "type": "container", "name": "mesh-store",
                 "image": "postgres:16.4-bookworm", "volumes": ["${access:data}:/var/lib/postgresql/data"],
                 "environment": {}}],
                 "accesses": [{"id": "data", "path": "/var/lib/mesh/store"}]}"#,
        )
        .unwrap();
        let module = Spec::of_module(&manifest.resolved_containers()[0]);
        let bundle =
            bundle_store(serde_json::json!({"id": "store", "kind": "container", "credentials": ["store-superuser"]}));
        assert_eq!(module.digest(), bundle.digest());
        assert_eq!(
            module.canonical(),
            r#"{"image":"postgres:16.4-bookworm","name":"mesh-store","volumes":["/var/lib/mesh/store:/var/lib/postgresql/data"]}"#
        );
    }

    #[test]
    fn any_field_changed_or_added_is_another_digest() {
        let plain = bundle_store(serde_json::json!({}));
        for field in [
            serde_json::json!({"environment": {"PGDATA": "/tmp/empty"}}),
            serde_json::json!({"command": ["postgres", "-c", "fsync=off"]}),
            serde_json::json!({"entrypoint": "/bin/sh"}),
            serde_json::json!({"ports": ["5432:5432"]}),
            serde_json::json!({"user": "0"}),
            serde_json::json!({"restart": "always"}),
            serde_json::json!({"networks": ["mesh"]}),
            serde_json::json!({"labels": {"tier": "data"}}),
            serde_json::json!({"healthcheck": {"test": ["pg_isready"]}}),
            serde_json::json!({"a-field-no-one-knows": 1}),
        ] {
            assert_ne!(bundle_store(field.clone()).digest(), plain.digest(), "{field} left the digest as it was");
        }
        assert_ne!(plain.on_image("postgres:17").digest(), plain.digest());
        assert_eq!(plain.on_image("postgres:16.4-bookworm").digest(), plain.digest());
    }

    #[test]
    fn the_canonical_form_escapes_strings_as_rfc_8785_does() {
        let spec = Spec::from_fields(
            "n",
            "i",
            &[],
            serde_json::json!({"environment": {"B": "x\ny\u{1}\"é", "A": "1"}}).as_object().unwrap(),
        );
        assert_eq!(
            spec.canonical(),
            "{\"environment\":{\"A\":\"1\",\"B\":\"x\\ny\\u0001\\\"é\"},\"image\":\"i\",\"name\":\"n\"}"
        );
    }

    #[test]
    fn numbers_are_one_value_as_their_canonical_forms_are() {
        let with = |environment: Value| bundle_store(serde_json::json!({ "environment": environment }));
        let zero: Value = serde_json::from_str(r#"{"A": 0, "B": 1, "C": 1e-7}"#).unwrap();
        let written_otherwise: Value = serde_json::from_str(r#"{"A": -0, "B": 1.0, "C": 0.0000001}"#).unwrap();
        let (zero, written_otherwise) = (with(zero), with(written_otherwise));
        assert_eq!(zero.canonical(), written_otherwise.canonical());
        assert_eq!(zero.digest(), written_otherwise.digest());
        assert_eq!(zero, written_otherwise);
        assert_eq!(zero.differing_fields(&written_otherwise), Vec::<String>::new());
        assert!(zero.canonical().contains(r#""environment":{"A":0,"B":1,"C":1e-7}"#), "{}", zero.canonical());
        let other = with(serde_json::json!({"A": 0, "B": 2, "C": 1e-7}));
        assert_ne!(zero, other);
        assert_eq!(zero.differing_fields(&other), ["environment"]);
    }

    #[test]
    fn a_digest_is_read_back_only_in_its_own_form() {
        let digest = bundle_store(serde_json::json!({})).digest();
        assert_eq!(SpecDigest::parse(&digest.to_string()), Some(digest.clone()));
        assert_eq!(SpecDigest::parse(&digest.0), Some(digest));
        for odd in ["", "sha256:", "sha256:XYZ", "md5:abc", &"a".repeat(63)] {
            assert_eq!(SpecDigest::parse(odd), None, "{odd:?}");
        }
    }
}
