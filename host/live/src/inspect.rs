//! What a container engine's inspect answer says of one container: the engine's own JSON
//! (`docker container inspect`, `podman container inspect`), or the one-line word forms an
//! inspect template with `--format` prints.

use std::collections::BTreeMap;

use mesh_adopt_runtime::effect::{ContainerSpec, OWNER_LABEL, SPEC_LABEL, SpecDigest};
use mesh_adopt_runtime::mesh::ContainerState;
use serde_json::Value;

/// Where a node mounts the secrets it holds into a container: the node's bookkeeping, outside
/// the container's spec (docs/push-rule.md), so not among the mounts compared, but read as
/// the secrets the container holds.
pub use mesh_adopt_runtime::effect::SECRETS_INSIDE;

/// One container as the engine answered for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspected {
    /// Its image and whether it runs.
    pub state: ContainerState,
    /// Its mounts, `host:inside[:ro]`, the node's secret files left out; `None` when the answer
    /// does not carry them (the two-word form).
    pub volumes: Option<Vec<String>>,
    /// The secrets the node mounted into it under [`SECRETS_INSIDE`], by name, each with the
    /// host file it comes from; `None` when the answer carries no mounts.
    pub secrets: Option<BTreeMap<String, String>>,
    /// The digest of the spec the node created it from, from its `org.mesh-adopt.spec` label.
    pub digest: Option<SpecDigest>,
    /// The module owning it, from its `org.mesh-adopt.owner` label.
    pub owner: Option<String>,
}

impl Inspected {
    /// The container as a prediction starts from it.
    pub fn spec(&self) -> ContainerSpec {
        ContainerSpec::new(self.state.image.clone(), self.volumes.clone())
            .with_digest(self.digest.clone())
            .with_owner(self.owner.clone())
            .with_running(Some(self.state.running))
            .with_secrets(self.secrets.clone())
    }
}

/// One mount of a container: a volume of its spec, or a secret file the node mounted.
enum Mount {
    Volume(String),
    Secret { name: String, source: String },
}

impl Mount {
    /// `source` mounted at `inside`, read-only or not.
    fn of(source: &str, inside: &str, read_only: bool) -> Mount {
        match inside.strip_prefix(SECRETS_INSIDE).filter(|name| !name.is_empty()) {
            Some(name) => Mount::Secret { name: name.to_string(), source: source.to_string() },
            None if read_only => Mount::Volume(format!("{source}:{inside}:ro")),
            None => Mount::Volume(format!("{source}:{inside}")),
        }
    }
}

/// The volumes and the secrets among `mounts`.
fn split(mounts: Vec<Mount>) -> (Vec<String>, BTreeMap<String, String>) {
    let (mut volumes, mut secrets) = (Vec::new(), BTreeMap::new());
    for mount in mounts {
        match mount {
            Mount::Volume(volume) => volumes.push(volume),
            Mount::Secret { name, source } => {
                secrets.insert(name, source);
            }
        }
    }
    (volumes, secrets)
}

/// Reads an inspect answer: the engine's JSON (an array of one object, or the object), or
/// the word forms `IMAGE RUNNING [mounts HOST:INSIDE…]`. Anything else is no answer to act on:
/// a warning line, an empty answer, JSON that is not one container, a third word that is not
/// `mounts`.
pub fn read_answer(answer: &str) -> Result<Inspected, String> {
    match answer.trim_start().as_bytes().first() {
        Some(b'[' | b'{') => read_json(answer),
        _ => read_words(answer).map_err(str::to_string),
    }
}

/// The engine's JSON: `.Config.Image` (else `.ImageName`), `.State.Running`, `.Mounts`,
/// `.Config.Labels`.
fn read_json(answer: &str) -> Result<Inspected, String> {
    let value: Value = serde_json::from_str(answer).map_err(|e| format!("it is not JSON: {e}"))?;
    let container = match &value {
        Value::Array(items) if items.len() == 1 => &items[0],
        Value::Array(items) => return Err(format!("it is to describe one container, and describes {}", items.len())),
        object => object,
    };
    let image = container
        .pointer("/Config/Image")
        .or_else(|| container.get("ImageName"))
        .and_then(Value::as_str)
        .filter(|image| !image.trim().is_empty())
        .ok_or("it names no image (`.Config.Image`)")?
        .to_string();
    let running = container
        .pointer("/State/Running")
        .and_then(Value::as_bool)
        .ok_or("it does not say whether the container runs (`.State.Running`)")?;
    let mounts = match container.get("Mounts") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(mounts)) => mounts.iter().map(mount).collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err("its `.Mounts` is not a list".into()),
    };
    let (volumes, secrets) = split(mounts);
    let label =
        |name: &str| container.pointer("/Config/Labels").and_then(|labels| labels.get(name)).and_then(Value::as_str);
    let digest = match label(SPEC_LABEL) {
        None => None,
        Some(text) => Some(
            SpecDigest::parse(text)
                .ok_or_else(|| format!("its `{SPEC_LABEL}` label `{text}` is not `sha256:` and 64 hex digits"))?,
        ),
    };
    Ok(Inspected {
        state: ContainerState { image, running },
        volumes: Some(volumes),
        secrets: Some(secrets),
        digest,
        owner: label(OWNER_LABEL).map(str::to_string),
    })
}

/// One `.Mounts` entry.
fn mount(entry: &Value) -> Result<Mount, String> {
    let field = |name: &str| entry.get(name).and_then(Value::as_str).filter(|s| !s.is_empty());
    let (Some(source), Some(inside)) = (field("Source"), field("Destination")) else {
        return Err(format!("a mount in `.Mounts` has no `Source` or `Destination`: {entry}"));
    };
    Ok(Mount::of(source, inside, entry.get("RW").and_then(Value::as_bool) == Some(false)))
}

/// The word forms: the image, `true` or `false`, then `mounts` and each mount (the older form
/// stops after the second word).
fn read_words(answer: &str) -> Result<Inspected, &'static str> {
    let mut lines = answer.lines().filter(|l| !l.trim().is_empty());
    let (Some(line), None) = (lines.next(), lines.next()) else {
        return Err("it is to be one line");
    };
    let mut words = line.split_whitespace();
    let image = words.next().ok_or("it names no image")?.to_string();
    let running = match words.next() {
        Some("true") => true,
        Some("false") => false,
        _ => return Err("its second word is to be `true` or `false`"),
    };
    let (volumes, secrets) = match words.next() {
        None => (None, None),
        Some("mounts") => {
            let (volumes, secrets) = split(words.map(word_mount).collect());
            (Some(volumes), Some(secrets))
        }
        Some(_) => return Err("its third word, when there is one, is to be `mounts`"),
    };
    Ok(Inspected { state: ContainerState { image, running }, volumes, secrets, digest: None, owner: None })
}

/// One `HOST:INSIDE[:OPTIONS]` word of the word form.
fn word_mount(word: &str) -> Mount {
    let mut parts = word.splitn(3, ':');
    match (parts.next(), parts.next()) {
        (Some(source), Some(inside)) if inside.starts_with(SECRETS_INSIDE) => Mount::of(source, inside, true),
        _ => Mount::Volume(word.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inspect_answer_is_read_only_in_its_stated_word_forms() {
        let found = read_answer("nats:2 true mounts /a:/b /c:/d\n").unwrap();
        assert_eq!((found.state.image.as_str(), found.state.running), ("nats:2", true));
        assert_eq!(found.volumes, Some(vec!["/a:/b".to_string(), "/c:/d".to_string()]));
        let found = read_answer("nats:2 false").unwrap();
        assert_eq!((found.state.running, found.volumes), (false, None));
        for odd in ["", "nats:2", "nats:2 maybe", "nats:2 true extra", "WARNING: x\nnats:2 true"] {
            assert!(read_answer(odd).is_err(), "{odd:?} was taken as an answer");
        }
    }

    /// The fields of `podman container inspect mesh-store` on the reference node, as it wrote them.
    const PODMAN: &str = r#"[{
      "Id": "3653f760fe96862210d1d2f205598fd7356ea2e1b473d5356d24bbd44eebb8ac",
      "Image": "0f912bcf0b094be50e4b064b404844bc3efdc3c57ac61827d6d3793c1e1b07f5",
      "ImageName": "localhost/mesh-node/store:15",
      "State": {"Status": "running", "Running": true, "Pid": 15723},
      "Mounts": [
        {"Type": "volume", "Name": "mesh-store-data", "Source": "/var/lib/mesh-adopt-node/storage/volumes/mesh-store-data/_data",
         "Destination": "/var/lib/postgresql/data", "RW": true},
        {"Type": "bind", "Source": "/var/lib/mesh-adopt-node/state/genesis/credentials/store-superuser",
         "Destination": "/run/secrets/store-superuser", "RW": false},
        {"Type": "bind", "Source": "/etc/mesh/bus", "Destination": "/etc/nats", "RW": false}
      ],
      "Config": {"Image": "localhost/mesh-node/store:15", "Entrypoint": "/usr/local/bin/mesh-store",
        "Labels": {"org.mesh-adopt.node.image": "store",
                   "org.mesh-adopt.spec": "sha256:2b4c1a7b0ac6f0f0e6b9c1d2b7d8a0e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0",
                   "org.mesh-adopt.owner": "genesis"},
        "StopSignal": 2}
    }]"#;

    #[test]
    fn the_engines_json_gives_image_running_mounts_and_the_nodes_labels() {
        let found = read_answer(PODMAN).unwrap();
        assert_eq!(found.state, ContainerState { image: "localhost/mesh-node/store:15".into(), running: true });
        assert_eq!(
            found.volumes,
            Some(vec![
                "/var/lib/mesh-adopt-node/storage/volumes/mesh-store-data/_data:/var/lib/postgresql/data".to_string(),
                "/etc/mesh/bus:/etc/nats:ro".to_string(),
            ]),
            "the secret file the node mounted is its own bookkeeping, not a mount of the spec"
        );
        assert_eq!(
            found.digest.map(|d| d.to_string()).as_deref(),
            Some("sha256:2b4c1a7b0ac6f0f0e6b9c1d2b7d8a0e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0")
        );
        assert_eq!(found.owner.as_deref(), Some("genesis"));
        let held: Vec<(&str, &str)> =
            found.secrets.iter().flatten().map(|(name, source)| (name.as_str(), source.as_str())).collect();
        assert_eq!(
            held,
            [("store-superuser", "/var/lib/mesh-adopt-node/state/genesis/credentials/store-superuser")],
            "the secret file the node mounted is what the container holds"
        );
    }

    #[test]
    fn the_word_form_with_mounts_says_the_secrets_held_and_the_older_one_does_not() {
        let found =
            read_answer("vault:1 true mounts /v:/var/lib/vault /s/unseal-key:/run/secrets/unseal-key:ro").unwrap();
        assert_eq!(found.volumes, Some(vec!["/v:/var/lib/vault".to_string()]));
        assert_eq!(found.secrets, Some([("unseal-key".to_string(), "/s/unseal-key".to_string())].into()));
        assert_eq!(read_answer("vault:1 true mounts").unwrap().secrets, Some(BTreeMap::new()));
        assert_eq!(read_answer("vault:1 true").unwrap().secrets, None, "no mounts shown: nothing said of secrets");
    }

    #[test]
    fn a_container_no_node_labelled_has_no_digest_and_json_that_is_not_one_container_is_refused() {
        let unlabelled = r#"[{"Config": {"Image": "nats:2"}, "State": {"Running": false}, "Mounts": []}]"#;
        let found = read_answer(unlabelled).unwrap();
        assert_eq!((found.digest, found.owner, found.volumes), (None, None, Some(vec![])));
        for (odd, why) in [
            ("[]", "describes 0"),
            (r#"[{"State": {"Running": true}}]"#, "names no image"),
            (r#"[{"Config": {"Image": "x"}}]"#, "whether the container runs"),
            (
                r#"[{"Config": {"Image": "x", "Labels": {"org.mesh-adopt.spec": "md5:1"}}, "State": {"Running": true}}]"#,
                "not `sha256:`",
            ),
            (
                r#"[{"Config": {"Image": "x"}, "State": {"Running": true}, "Mounts": [{"Source": "/a"}]}]"#,
                "no `Source` or `Destination`",
            ),
            ("[{", "not JSON"),
        ] {
            let error = read_answer(odd).unwrap_err();
            assert!(error.contains(why), "{odd}: {error}");
        }
    }
}
