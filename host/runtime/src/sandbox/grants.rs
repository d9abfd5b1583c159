//! What a plugin may do, decided in one place so every denial reads the same way.
//!
//! The host sets a ceiling no manifest can raise: a plugin may tell only its own module's
//! provider sequence on the given node, and carry only its manifest to its own path and
//! secrets to `/accepting-<name>`. Reads (credentials, inspect, fetch) are denied unless the
//! module's manifest grants them by name. During `check` every effect is denied, so the plan
//! an operator reviews was made without changing anything.

use std::collections::BTreeMap;
use std::sync::Arc;

use mesh_adopt_manifest::command::{Command, DEFAULT_REF, accepting_remote};

pub use mesh_adopt_manifest::command::manifest_remote;

use mesh_adopt_manifest::Grants;

use crate::model::{CatalogSource, Export, PluginCommand};
use crate::sandbox::denial::{Beyond, CarryBeyond, Denial};

/// A host call as the grants see it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Call<'a> {
    /// `bytes` is what is carried, or `None` for a secret (whose bytes only the host sees).
    Carry {
        /// Where in the control plane it goes.
        remote: &'a str,
        /// The bytes, or `None` for a secret.
        bytes: Option<&'a [u8]>,
        /// For a secret, the credential it is read from.
        credential: Option<&'a str>,
    },
    /// A command to the control plane.
    Tell {
        /// The command, as the plugin gave it.
        command: &'a PluginCommand,
    },
    /// A genesis credential asked for by name.
    Credential {
        /// The credential's name.
        name: &'a str,
    },
    /// A look at a container on the node.
    Inspect {
        /// The container's name.
        container: &'a str,
    },
    /// An HTTP GET on the node.
    Fetch {
        /// The URL.
        url: &'a str,
    },
}

/// One plugin's permissions for one run.
#[derive(Debug, Clone)]
pub struct Permissions {
    /// The module the plugin adopts; the only one it may name.
    pub module: String,
    /// The node it was given; the only one it may name.
    pub node: String,
    /// The catalogue source the operator gave: the only repository it may build from, and
    /// the only ref ([`DEFAULT_REF`] when it names none).
    pub catalog_source: Option<CatalogSource>,
    /// The secrets its manifest declares; the only ones it may accept.
    pub secrets: Vec<String>,
    /// The catalogue's manifest, byte for byte: the only bytes it may register.
    pub manifest_bytes: Arc<[u8]>,
    /// What its manifest grants.
    pub granted: Grants,
    /// Where those grants are written, for the "how to grant" hint.
    pub manifest: String,
    /// The genesis credentials a container runs with, as the bundle says, each with that
    /// container's name: read by any module granted it, handed to the control plane as a
    /// secret only by the container's declared adopter.
    pub credential_holders: BTreeMap<String, String>,
    /// The credentials this module declares it hands over (`adopts[].credential`), each with
    /// the secret it is accepted as.
    pub hands_over: BTreeMap<String, String>,
}

impl Permissions {
    /// Which of these reads the manifest's grants would deny, one line each: the read and the
    /// grant that would allow it, or why no grant can, in the words of `machine.ungranted`.
    pub(crate) fn ungranted(&self, inspect: &[String], fetch: &[String]) -> Vec<String> {
        use mesh_adopt_manifest::validity::{fetch_grant_fault, inspect_grant_fault};
        let inspects = inspect.iter().filter(|name| !self.granted.allows_inspect(name)).map(|name| {
            match inspect_grant_fault(name) {
                Some(fault) => format!("inspect container `{name}`: no manifest can grant it ({fault})"),
                None => {
                    format!("inspect container `{name}`: add \"{name}\" to `adopt.grants.inspect` in manifest.json")
                }
            }
        });
        let fetches =
            fetch.iter().filter(|url| !self.granted.allows_fetch(url)).map(|url| match fetch_grant_fault(url) {
                Some(fault) => format!("fetch `{url}`: no manifest can grant it ({fault})"),
                None => format!("fetch `{url}`: add \"{url}\" to `adopt.grants.fetch` in manifest.json"),
            });
        inspects.chain(fetches).collect()
    }

    /// Decides whether `call` may go through in `phase`; the error names the capability, the
    /// argument, and how it could be granted (or that it cannot be).
    pub(crate) fn allow(&self, phase: Export, call: Call<'_>) -> Result<(), Denial> {
        if phase == Export::Check
            && let Some(effect) = describe_effect(call)
        {
            return Err(Denial::EffectInCheck { effect });
        }
        match call {
            Call::Tell { command } => self.allow_tell(command),
            Call::Carry { remote, bytes, credential } => self.allow_carry(remote, bytes, credential),
            Call::Credential { name } => self.allow_read("credential", name, &self.granted.credentials, "credentials"),
            Call::Inspect { container } => {
                self.allow_read("inspect of container", container, &self.granted.inspect, "inspect")
            }
            Call::Fetch { url } => {
                let granted = self.granted.fetch.iter().any(|g| mesh_adopt_manifest::urls::within_grant(g, url));
                if granted { Ok(()) } else { Err(self.not_granted("fetch of", url, "fetch")) }
            }
        }
    }

    fn allow_read(&self, what: &'static str, name: &str, granted: &[String], key: &'static str) -> Result<(), Denial> {
        if granted.iter().any(|g| g == name) { Ok(()) } else { Err(self.not_granted(what, name, key)) }
    }

    fn not_granted(&self, what: &'static str, name: &str, key: &'static str) -> Denial {
        Denial::NotGranted {
            what,
            name: name.to_string(),
            module: self.module.clone(),
            key,
            manifest: self.manifest.clone(),
        }
    }

    fn allow_tell(&self, told: &PluginCommand) -> Result<(), Denial> {
        let reference = self.catalog_source.as_ref().and_then(|s| s.reference.as_deref()).unwrap_or(DEFAULT_REF);
        let why = match told {
            PluginCommand::Unknown { why, .. } => Beyond::NotACommand(why.clone()),
            PluginCommand::Known(command) => match self.beyond(command, reference) {
                None => return Ok(()),
                Some(why) => why,
            },
        };
        Err(Denial::BeyondSequence {
            told: quoted(told),
            why,
            module: self.module.clone(),
            node: self.node.clone(),
            reference: reference.to_string(),
            repository: self.catalog_source.as_ref().map(|s| s.repository.clone()),
        })
    }

    /// What in a well-formed command goes beyond this plugin's own sequence, if anything.
    fn beyond(&self, command: &Command, reference: &str) -> Option<Beyond> {
        let (m, n) = (self.module.as_str(), self.node.as_str());
        if let Some(module) = command.module()
            && module != m
        {
            return Some(Beyond::Module(module.to_string()));
        }
        if let Some(node) = command.node()
            && node != n
        {
            return Some(Beyond::Node(node.to_string()));
        }
        match command {
            Command::ModuleAdd { remote } if *remote != manifest_remote(m) => Some(Beyond::Registers(remote.clone())),
            Command::Build { repository, reference: asked, .. } => {
                match self.catalog_source.as_ref().map(|s| &s.repository) {
                    None => Some(Beyond::NoSource),
                    Some(given) if given != repository => Some(Beyond::Repository(repository.clone())),
                    Some(_) if asked != reference => Some(Beyond::Ref(asked.clone())),
                    Some(_) => None,
                }
            }
            Command::SecretAccept { secret, from, .. } => {
                if !self.secrets.iter().any(|s| s == secret) {
                    Some(Beyond::UndeclaredSecret(secret.clone()))
                } else if *from != accepting_remote(secret) {
                    Some(Beyond::AcceptsFrom(from.clone()))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn allow_carry(&self, remote: &str, bytes: Option<&[u8]>, credential: Option<&str>) -> Result<(), Denial> {
        let m = self.module.as_str();
        let why = match bytes {
            None => match remote.strip_prefix("/accepting-") {
                Some(secret) if self.secrets.iter().any(|s| s == secret) => {
                    return self.allow_hand_over(credential, secret);
                }
                Some(secret) => {
                    CarryBeyond::UndeclaredSecret { secret: secret.to_string(), remote: remote.to_string() }
                }
                None => CarryBeyond::Elsewhere { secret: true, remote: remote.to_string() },
            },
            Some(bytes) if remote == manifest_remote(m) => {
                if *bytes == *self.manifest_bytes {
                    return Ok(());
                }
                CarryBeyond::NotTheManifest {
                    carried: bytes.len(),
                    manifest: self.manifest_bytes.len(),
                    path: self.manifest.clone(),
                }
            }
            _ => CarryBeyond::Elsewhere { secret: bytes.is_none(), remote: remote.to_string() },
        };
        Err(Denial::Carry { why, module: self.module.clone() })
    }
}

impl Permissions {
    /// A genesis credential a container runs with goes to the control plane only from the
    /// module that declares it adopts that container, and only as the secret it declares: any
    /// other module may read it, never make it a secret of its own.
    fn allow_hand_over(&self, credential: Option<&str>, secret: &str) -> Result<(), Denial> {
        let Some(credential) = credential else { return Ok(()) };
        let Some(container) = self.credential_holders.get(credential) else { return Ok(()) };
        let declared = self.hands_over.get(credential);
        if declared.is_some_and(|declared| declared == secret) {
            return Ok(());
        }
        Err(Denial::HandOver {
            credential: credential.to_string(),
            container: container.clone(),
            module: self.module.clone(),
            secret: secret.to_string(),
            declared: declared.cloned(),
        })
    }
}

/// A plugin's command as a message quotes it: a bounded prefix, so a plugin cannot make a
/// denial repeat a flood of arguments.
pub(crate) fn quoted(command: &PluginCommand) -> String {
    const SHOWN: usize = 200;
    let words: std::borrow::Cow<'_, [String]> = match command {
        PluginCommand::Known(command) => command.words().into(),
        PluginCommand::Unknown { words, .. } => words.into(),
    };
    let mut text = String::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            text.push(' ');
        }
        text.push_str(word);
        if text.len() > SHOWN {
            crate::sandbox::limits::cut_to(&mut text, SHOWN);
            let (count, bytes) = command.size();
            text.push_str(&format!(" … ({count} words, {bytes} bytes)"));
            break;
        }
    }
    text
}

fn describe_effect(call: Call<'_>) -> Option<String> {
    match call {
        Call::Tell { command } => Some(format!("tell {}", quoted(command))),
        Call::Carry { remote, .. } => Some(format!("carry to {remote}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &[u8] = br#"{"name":"postgres"}"#;

    fn postgres() -> Permissions {
        Permissions {
            module: "postgres".into(),
            node: "node-1".into(),
            catalog_source: Some(CatalogSource { repository: "https://git/cat.git".into(), reference: None }),
            secrets: vec!["superuser".into()],
            manifest_bytes: Arc::from(MANIFEST),
            granted: Grants {
                credentials: vec!["store-superuser".into()],
                inspect: vec!["mesh-bus".into()],
                fetch: vec!["http://127.0.0.1:8222/*".into()],
            },
            manifest: "modules/postgres/manifest.json".into(),
            credential_holders: [("store-superuser".to_string(), "mesh-store".to_string())].into(),
            hands_over: [("store-superuser".to_string(), "superuser".to_string())].into(),
        }
    }

    #[test]
    fn a_credential_a_container_runs_with_is_handed_over_only_by_its_declared_adopter() {
        let p = postgres();
        let hand = |p: &Permissions, remote, credential| {
            p.allow(Export::Adopt, Call::Carry { remote, bytes: None, credential: Some(credential) })
                .map_err(|d| d.to_string())
        };
        assert!(hand(&p, "/accepting-superuser", "store-superuser").is_ok());
        // A credential no container runs with is the module's to hand over as it likes.
        assert!(hand(&p, "/accepting-superuser", "backup-key").is_ok());
        let vault = Permissions {
            module: "mesh-vault".into(),
            secrets: vec!["unseal-key".into()],
            hands_over: BTreeMap::new(),
            ..postgres()
        };
        let refused = hand(&vault, "/accepting-unseal-key", "store-superuser").unwrap_err();
        assert!(refused.contains("`store-superuser` is the genesis credential `mesh-store` runs with"), "{refused}");
        assert!(refused.contains("not accept it as its secret `unseal-key`"), "{refused}");
        let elsewhere = Permissions { secrets: vec!["superuser".into(), "other".into()], ..postgres() };
        assert!(hand(&elsewhere, "/accepting-other", "store-superuser").unwrap_err().contains("not `other`"));
    }

    fn command(text: &str) -> PluginCommand {
        PluginCommand::from_words(text.split(' ').map(String::from).collect())
    }

    fn tell(text: &str) -> Result<(), String> {
        postgres().allow(Export::Adopt, Call::Tell { command: &command(text) }).map_err(|d| d.to_string())
    }

    #[test]
    fn allows_its_own_provider_sequence() {
        for command in [
            "module add /postgres-module.json",
            "build https://git/cat.git --path modules/postgres --ref main --wait 1200s",
            "module issue postgres --node node-1",
            "assign node-1 postgres",
            "prepare node-1 postgres",
            "secret accept node-1 postgres superuser --from /accepting-superuser",
            "push node-1",
        ] {
            assert!(tell(command).is_ok(), "{command}");
        }
    }

    #[test]
    fn denies_tells_naming_another_module_node_or_repository() {
        // Another module's verbs.
        assert!(tell("assign node-1 nats").unwrap_err().contains("only its own provider sequence"));
        // Another node.
        assert!(tell("push node-2").is_err());
        // Another repository to build from.
        assert!(tell("build https://evil/cat.git --path modules/postgres --ref main --wait 1200s").is_err());
        // A verb outside the sequence.
        assert!(tell("module remove postgres").is_err());
        // A secret accepted from somewhere else than its own accepting path.
        assert!(tell("secret accept node-1 postgres superuser --from /etc/shadow").is_err());
        // A secret its manifest does not declare.
        let undeclared = tell("secret accept node-1 postgres admin --from /accepting-admin").unwrap_err();
        assert!(undeclared.contains("declares no secret `admin`"), "{undeclared}");
        // Another ref than the operator's (the default, `main`, when none was given).
        assert!(tell("build https://git/cat.git --path modules/postgres --ref evil --wait 1200s").is_err());
        // Another wait than the build's fixed one.
        assert!(tell("build https://git/cat.git --path modules/postgres --ref main --wait 1s").is_err());
        // Option-like words.
        assert!(tell("push --all").unwrap_err().contains("could be read as an option"));
    }

    #[test]
    fn a_denial_quotes_a_bounded_prefix_of_a_flood() {
        let flood = PluginCommand::from_words(std::iter::repeat_n(String::new(), 2_000_000).collect());
        let denied = postgres().allow(Export::Adopt, Call::Tell { command: &flood }).unwrap_err().to_string();
        assert!(denied.len() < 2_000, "a denial of {} bytes", denied.len());
        assert!(denied.contains("2000000 words"), "{denied}");
    }

    #[test]
    fn carries_only_its_manifest_and_accepting_secrets() {
        let p = postgres();
        let carry = |remote, bytes| {
            p.allow(Export::Adopt, Call::Carry { remote, bytes, credential: None }).map_err(|d| d.to_string())
        };
        assert!(carry("/postgres-module.json", Some(MANIFEST)).is_ok());
        assert!(carry("/accepting-superuser", None).is_ok());
        // Bytes may not pose as a secret delivery, nor a secret as the manifest.
        assert!(carry("/accepting-superuser", Some(b"x")).is_err());
        assert!(carry("/postgres-module.json", None).is_err());
        assert!(carry("/nats-module.json", Some(MANIFEST)).is_err());
        assert!(carry("/accepting-../etc", None).is_err());
        // A secret goes only where this module accepts one of its own declared secrets.
        assert!(carry("/accepting-unseal-key", None).unwrap_err().contains("declares no secret `unseal-key`"));
        // Only the catalogue's manifest, byte for byte, may be registered.
        let forged = carry("/postgres-module.json", Some(br#"{"name":"postgres","resources":[]}"#)).unwrap_err();
        assert!(forged.contains("not the catalogue's manifest"), "{forged}");
    }

    #[test]
    fn reads_only_what_is_granted_and_says_how_to_grant() {
        let p = postgres();
        assert!(p.allow(Export::Adopt, Call::Credential { name: "store-superuser" }).is_ok());
        let denied = p.allow(Export::Adopt, Call::Credential { name: "bus-admin" }).unwrap_err().to_string();
        assert!(denied.contains("adopt.grants.credentials"), "{denied}");
        assert!(p.allow(Export::Adopt, Call::Inspect { container: "mesh-control" }).is_err());
        assert!(p.allow(Export::Adopt, Call::Fetch { url: "http://127.0.0.1:8222/healthz" }).is_ok());
        assert!(p.allow(Export::Adopt, Call::Fetch { url: "http://169.254.169.254/" }).is_err());
    }

    #[test]
    fn check_may_read_but_not_act() {
        let p = postgres();
        let denied = p.allow(Export::Check, Call::Tell { command: &command("push node-1") }).unwrap_err().to_string();
        assert!(denied.contains("`tell push node-1`") && denied.contains("may only read"), "{denied}");
        assert!(
            p.allow(
                Export::Check,
                Call::Carry { remote: "/postgres-module.json", bytes: Some(MANIFEST), credential: None }
            )
            .is_err()
        );
        assert!(p.allow(Export::Check, Call::Credential { name: "store-superuser" }).is_ok());
    }

    #[test]
    fn names_each_read_the_grants_would_deny_and_the_grant_to_add() {
        let p = postgres();
        let owned = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert!(p.ungranted(&owned(&["mesh-bus"]), &owned(&["http://127.0.0.1:8222/healthz"])).is_empty());
        assert_eq!(
            p.ungranted(
                &owned(&["mesh-store", ""]),
                &owned(&["http://127.0.0.1:8222/../admin", "http://other/", "file:///etc/passwd"])
            ),
            [
                "inspect container `mesh-store`: add \"mesh-store\" to `adopt.grants.inspect` in manifest.json",
                "inspect container ``: no manifest can grant it (inspect grant `` is not a container name)",
                "fetch `http://127.0.0.1:8222/../admin`: add \"http://127.0.0.1:8222/../admin\" to `adopt.grants.fetch` in manifest.json",
                "fetch `http://other/`: add \"http://other/\" to `adopt.grants.fetch` in manifest.json",
                "fetch `file:///etc/passwd`: no manifest can grant it (fetch grant `file:///etc/passwd` is not an http(s) URL or a prefix of one with a host)",
            ]
        );
    }
}
