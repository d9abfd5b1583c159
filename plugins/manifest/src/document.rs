//! A module's `manifest.json`, read with serde: what the host reads every manifest with.

use std::fmt;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::error::Category;

use crate::PLUGIN_FILE;

/// A module manifest, as far as adoption reads it; fields it leaves out are empty.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ModuleManifest {
    /// The module's name.
    pub name: String,
    /// What it raises on a node.
    pub resources: Vec<ManifestResource>,
    /// Named host paths its volumes refer to as `${access:<id>}`.
    pub accesses: Vec<Access>,
    /// Secrets the module declares; the node seals any not accepted before its push.
    pub secrets: Vec<String>,
    /// Subjects it speaks on the bus; a module with none is issued no account.
    #[serde(rename = "bus-subjects")]
    pub bus_subjects: Vec<String>,
    /// For a bus: the file its user list lives in.
    #[serde(rename = "bus-users")]
    pub bus_users: String,
    /// How the module's plugin ships and what it may do beyond the host's defaults.
    pub adopt: AdoptSection,
    /// The containers genesis raised that this module takes over, and how: what the host
    /// predicts the module's push from and holds every module to, instead of guessing it
    /// from names.
    pub adopts: Vec<Adoption>,
}

/// One container genesis raised that a module takes over: the module's own container of the
/// same name replaces it on the node, kept in place or recreated onto the same volumes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Adoption {
    /// The foundation bundle's id for the container taken over, e.g. `store`.
    pub foundation: String,
    /// The id of the manifest's own container that takes its place, e.g. `server`.
    pub container: String,
    /// Whether the push keeps it as it runs or recreates it.
    pub how: AdoptedAs,
    /// The genesis credential the running container was created with, which must reach the
    /// module before its push or the node would seal fresh bytes over it.
    #[serde(default)]
    pub credential: Option<String>,
    /// The module's secret (one of its `secrets`) that carries `credential` in.
    #[serde(default)]
    pub secret: Option<String>,
}

/// How a module's push treats a container it adopts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdoptedAs {
    /// Left running as genesis raised it: same image, same volumes.
    #[default]
    Kept,
    /// Recreated once onto another image, on exactly the volumes genesis gave it.
    Recreated,
}

impl AdoptedAs {
    /// The word manifests and messages use.
    pub fn word(self) -> &'static str {
        match self {
            AdoptedAs::Kept => "kept",
            AdoptedAs::Recreated => "recreated",
        }
    }
}

/// A manifest's `adopt` section: the catalogue author's word on the plugin.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdoptSection {
    /// The plugin's file, beside the manifest.
    pub plugin: String,
    /// The plugin's sha256, hex; when given, any other plugin is refused.
    pub sha256: Option<String>,
    /// The world the plugin targets, e.g. `mesh:adopt/adopter@0.1.0`.
    pub world: Option<String>,
    /// Where the plugin's source is, relative to the manifest: what `mesh-adopt build` builds
    /// the plugin from, so a catalogue's CI can check that what ships is what the source makes.
    pub source: Option<String>,
    /// What the plugin may read beyond the defaults.
    pub grants: Grants,
}

impl Default for AdoptSection {
    fn default() -> Self {
        AdoptSection {
            plugin: PLUGIN_FILE.to_string(),
            sha256: None,
            world: None,
            source: None,
            grants: Grants::default(),
        }
    }
}

/// What a catalogue grants its plugin. Only reads can be granted: what a plugin may tell and
/// carry is fixed by the host (its own module's provider sequence), so a manifest asking for
/// more is refused when it is read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Grants {
    /// Genesis credentials it may carry in, by name.
    pub credentials: Vec<String>,
    /// Containers it may inspect, by name.
    pub inspect: Vec<String>,
    /// URLs it may fetch: exact, or a prefix ending in `*`.
    pub fetch: Vec<String>,
}

impl Grants {
    /// Whether a plugin may carry in the genesis credential `name`.
    pub fn allows_credential(&self, name: &str) -> bool {
        self.credentials.iter().any(|granted| granted == name)
    }

    /// Whether a plugin may inspect the container `name`.
    pub fn allows_inspect(&self, name: &str) -> bool {
        self.inspect.iter().any(|granted| granted == name)
    }

    /// Whether a plugin may fetch `url`: an exact grant, or a prefix grant it is plainly under
    /// (see [`crate::urls::within_grant`]).
    pub fn allows_fetch(&self, url: &str) -> bool {
        self.fetch.iter().any(|grant| crate::urls::within_grant(grant, url))
    }
}

/// One resource a module declares.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ManifestResource {
    /// The module's identity for it.
    pub id: String,
    /// `container`, or another kind adoption does not look into; one of
    /// [`crate::ResourceKind`]'s words in a valid manifest.
    #[serde(rename = "type")]
    pub kind: String,
    /// For a container: its name on the node.
    pub name: String,
    /// For a container: its image.
    pub image: String,
    /// For a container: its mounts, `host:inside[:opts]`, possibly naming accesses.
    pub volumes: Vec<String>,
    /// Every other field, as written (`environment`, `command`, `labels`, …): part of the
    /// container's spec, so a node recreates a container when any of them changes
    /// (docs/push-rule.md), whether or not this crate knows the field.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// A host path the module is given, referred to by id from its volumes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Access {
    pub id: String,
    pub path: String,
}

/// Why bytes are not a module manifest.
#[derive(Debug)]
pub enum ParseError {
    /// Not JSON at all.
    NotJson(serde_json::Error),
    /// JSON, but not an object.
    NotAnObject,
    /// An object whose fields do not have a manifest's shape.
    NotAManifest(serde_json::Error),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::NotJson(e) => write!(f, "not JSON: {e}"),
            ParseError::NotAnObject => f.write_str("not a JSON object"),
            ParseError::NotAManifest(e) => write!(f, "not a module manifest: {e}"),
        }
    }
}

impl std::error::Error for ParseError {}

impl ModuleManifest {
    /// Parses a manifest, saying whether it failed as JSON, as an object or as a manifest.
    /// A field given twice is refused: which of the two counts would be up to the reader.
    pub fn parse(bytes: &[u8]) -> Result<ModuleManifest, ParseError> {
        // Only an object is read into the manifest's shape: serde would also take an array,
        // as the fields in order.
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Err(match is_json(bytes) {
                Ok(()) => ParseError::NotAnObject,
                Err(e) => ParseError::NotJson(e),
            });
        }
        serde_json::from_slice(bytes).map_err(|e| match e.classify() {
            // A field of the wrong shape may come before broken JSON further on: the broken
            // JSON is what to report.
            Category::Data => match is_json(bytes) {
                Ok(()) => ParseError::NotAManifest(e),
                Err(syntax) => ParseError::NotJson(syntax),
            },
            Category::Io | Category::Syntax | Category::Eof => ParseError::NotJson(e),
        })
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

    /// The containers with their volumes resolved, as a node would raise them.
    pub fn resolved_containers(&self) -> Vec<ManifestResource> {
        self.containers().map(|c| ManifestResource { volumes: self.resolved_volumes(c), ..c.clone() }).collect()
    }
}

/// Whether `bytes` are one JSON value, whatever its shape.
fn is_json(bytes: &[u8]) -> Result<(), serde_json::Error> {
    serde_json::from_slice::<IgnoredAny>(bytes).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mounts;

    #[test]
    fn resolves_accesses_and_reads_mounts() {
        let m = ModuleManifest::parse(
            br#"{"resources":[{"type":"container","name":"bus","volumes":["${access:s}:/data","/etc/b:/etc/nats:ro"]},
                              {"type":"service","name":"x"}],
                "accesses":[{"id":"s","path":"/var/s"}]}"#,
        )
        .unwrap();
        let [server] = m.resolved_containers().try_into().unwrap();
        let at = mounts(&server.volumes);
        assert_eq!(at["/data"], "/var/s");
        assert_eq!(at["/etc/nats"], "/etc/b");
        assert_eq!(m.adopt.plugin, PLUGIN_FILE);
    }

    #[test]
    fn says_how_bytes_fail_to_be_a_manifest() {
        assert!(ModuleManifest::parse(b"{").unwrap_err().to_string().starts_with("not JSON"));
        assert_eq!(ModuleManifest::parse(b"[1]").unwrap_err().to_string(), "not a JSON object");
        assert_eq!(ModuleManifest::parse(br#"["postgres"]"#).unwrap_err().to_string(), "not a JSON object");
        assert!(ModuleManifest::parse(br#"{"name":"a"} x"#).unwrap_err().to_string().starts_with("not JSON"));
        let unknown = ModuleManifest::parse(br#"{"adopt":{"grants":{"tell":["x"]}}}"#).unwrap_err();
        assert!(unknown.to_string().contains("unknown field `tell`"), "{unknown}");
    }

    #[test]
    fn grants_allow_by_name_and_fetch_by_url() {
        let m = ModuleManifest::parse(
            br#"{"adopt":{"grants":{"credentials":["c"],"inspect":["bus"],
                 "fetch":["http://127.0.0.1:8222/healthz","http://127.0.0.1:9000/api/*"]}}}"#,
        )
        .unwrap();
        let g = &m.adopt.grants;
        assert!(g.allows_credential("c") && !g.allows_credential("d"));
        assert!(g.allows_inspect("bus") && !g.allows_inspect("bus-2"));
        assert!(g.allows_fetch("http://127.0.0.1:8222/healthz"));
        assert!(!g.allows_fetch("http://127.0.0.1:8222/healthz?x"));
        assert!(g.allows_fetch("http://127.0.0.1:9000/api/streams"));
        assert!(!g.allows_fetch("http://127.0.0.1:9000/api/../admin"));
    }

    #[test]
    fn reads_what_a_module_adopts() {
        let m = ModuleManifest::parse(
            br#"{"adopts":[{"foundation":"store","container":"server","how":"kept",
                            "credential":"store-superuser","secret":"superuser"},
                           {"foundation":"broker","container":"bus","how":"recreated"}]}"#,
        )
        .unwrap();
        assert_eq!(m.adopts[0].how, AdoptedAs::Kept);
        assert_eq!(m.adopts[0].secret.as_deref(), Some("superuser"));
        assert_eq!(m.adopts[1].how, AdoptedAs::Recreated);
        assert_eq!(m.adopts[1].credential, None);
        let odd = ModuleManifest::parse(br#"{"adopts":[{"foundation":"s","container":"c","how":"moved"}]}"#);
        assert!(odd.unwrap_err().to_string().contains("unknown variant `moved`"));
    }

    #[test]
    fn a_repeated_field_is_refused() {
        let twice = ModuleManifest::parse(br#"{"name":"first","name":"second"}"#).unwrap_err();
        assert!(twice.to_string().contains("duplicate field `name`"), "{twice}");
    }

    #[test]
    fn broken_json_after_a_misshapen_field_is_reported_as_broken_json() {
        let broken = ModuleManifest::parse(br#"{"resources": 5, "name": "#).unwrap_err();
        assert!(broken.to_string().starts_with("not JSON"), "{broken}");
        let misshapen = ModuleManifest::parse(br#"{"resources": 5}"#).unwrap_err();
        assert!(misshapen.to_string().starts_with("not a module manifest"), "{misshapen}");
    }
}
