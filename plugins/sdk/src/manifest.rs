//! A catalogue module's `manifest.json`, as far as adoption reads it.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::{Refusal, refuse};

/// The parts of a module manifest that adoption rules compare against the foundation.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Manifest {
    /// What the module raises on a node.
    pub resources: Vec<ManifestResource>,
    /// Named host paths the module's volumes refer to as `${access:<id>}`.
    pub accesses: Vec<Access>,
    /// For a bus: the file its user list lives in.
    #[serde(rename = "bus-users")]
    pub bus_users: String,
}

/// One resource a module declares.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ManifestResource {
    /// The module's identity for it.
    pub id: String,
    /// `container`, or another kind adoption does not look into.
    #[serde(rename = "type")]
    pub kind: String,
    /// For a container: its name on the node.
    pub name: String,
    /// For a container: its image.
    pub image: String,
    /// For a container: its mounts, `host:inside[:opts]`, possibly naming accesses.
    pub volumes: Vec<String>,
}

/// A host path the module is given, referred to by id from its volumes.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Access {
    pub id: String,
    pub path: String,
}

impl Manifest {
    /// Reads a module's manifest, refusing with the module's name when it is not JSON of
    /// the expected shape.
    pub fn parse(module: &str, bytes: &[u8]) -> Result<Manifest, Refusal> {
        serde_json::from_slice(bytes).map_err(|e| refuse(format!("cannot read the `{module}` module's manifest: {e}")))
    }

    /// The resources that are containers, in declaration order.
    pub fn containers(&self) -> impl Iterator<Item = &ManifestResource> {
        self.resources.iter().filter(|r| r.kind == "container")
    }

    /// A container's volumes with every `${access:<id>}` replaced by that access's path.
    pub fn resolved_volumes(&self, container: &ManifestResource) -> Vec<String> {
        container
            .volumes
            .iter()
            .map(|volume| {
                self.accesses
                    .iter()
                    .fold(volume.clone(), |v, access| v.replace(&format!("${{access:{}}}", access.id), &access.path))
            })
            .collect()
    }
}

/// Maps each inside path to the host path mounted there, from `host:inside[:opts]` entries.
pub fn mounted_from(volumes: &[String]) -> BTreeMap<String, String> {
    volumes
        .iter()
        .filter_map(|v| {
            let mut parts = v.splitn(3, ':');
            let host = parts.next()?;
            let inside = parts.next()?;
            Some((inside.to_string(), host.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_accesses_and_reads_mounts() {
        let m = Manifest::parse(
            "nats",
            br#"{"resources":[{"type":"container","name":"bus","volumes":["${access:s}:/data","/etc/b:/etc/nats:ro"]}],
                "accesses":[{"id":"s","path":"/var/s"}]}"#,
        )
        .unwrap();
        let server = m.containers().next().unwrap();
        let at = mounted_from(&m.resolved_volumes(server));
        assert_eq!(at["/data"], "/var/s");
        assert_eq!(at["/etc/nats"], "/etc/b");
    }
}
