//! What a plugin may do, decided in one place so every denial reads the same way.
//!
//! The host sets a ceiling no manifest can raise: a plugin may tell only its own module's
//! provider sequence on the given node, and carry only its manifest to its own path and
//! secrets to `/accepting-<name>`. Reads (credentials, inspect, fetch) are denied unless the
//! module's manifest grants them by name. During `check` every effect is denied, so the plan
//! an operator reviews was made without changing anything.

use anyhow::{Result, bail};

use crate::catalogue::Grants;

/// Which export of the plugin is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `check`: reading only.
    Check,
    /// `adopt`: acting on the mesh.
    Adopt,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Check => "check",
            Phase::Adopt => "adopt",
        })
    }
}

/// A host call as the grants see it.
#[derive(Debug, Clone, Copy)]
pub enum Call<'a> {
    Carry { remote: &'a str, secret: bool },
    Tell { args: &'a [String] },
    Credential { name: &'a str },
    Inspect { container: &'a str },
    Fetch { url: &'a str },
}

/// One plugin's permissions for one run.
#[derive(Debug, Clone)]
pub struct Permissions {
    /// The module the plugin adopts; the only one it may name.
    pub module: String,
    /// The node it was given; the only one it may name.
    pub node: String,
    /// The catalogue repository the operator gave; the only one it may build from.
    pub repository: Option<String>,
    /// What its manifest grants.
    pub granted: Grants,
    /// Where those grants are written, for the "how to grant" hint.
    pub manifest: String,
}

impl Permissions {
    /// Decides whether `call` may go through in `phase`; the error names the capability, the
    /// argument, and how it could be granted (or that it cannot be).
    pub fn allow(&self, phase: Phase, call: Call<'_>) -> Result<(), String> {
        if phase == Phase::Check
            && let Some(effect) = describe_effect(call)
        {
            return Err(format!("`{effect}` changes the mesh, and `check` may only read: move it to `adopt`"));
        }
        match call {
            Call::Tell { args } => self.allow_tell(args),
            Call::Carry { remote, secret } => self.allow_carry(remote, secret),
            Call::Credential { name } => self.allow_read("credential", name, &self.granted.credentials, "credentials"),
            Call::Inspect { container } => {
                self.allow_read("inspect of container", container, &self.granted.inspect, "inspect")
            }
            Call::Fetch { url } => {
                let granted = self.granted.fetch.iter().any(|g| crate::urls::within_grant(g, url));
                if granted { Ok(()) } else { Err(self.not_granted("fetch of", url, "fetch")) }
            }
        }
    }

    fn allow_read(&self, what: &str, name: &str, granted: &[String], key: &str) -> Result<(), String> {
        if granted.iter().any(|g| g == name) { Ok(()) } else { Err(self.not_granted(what, name, key)) }
    }

    fn not_granted(&self, what: &str, name: &str, key: &str) -> String {
        format!(
            "{what} `{name}` is not granted to the `{}` plugin: a catalogue grants it by listing it in `adopt.grants.{key}` of {}",
            self.module, self.manifest
        )
    }

    fn allow_tell(&self, args: &[String]) -> Result<(), String> {
        let (m, n) = (self.module.as_str(), self.node.as_str());
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let allowed = match a.as_slice() {
            ["module", "add", remote] => *remote == manifest_remote(m),
            ["build", repo, "--path", path, "--ref", _, "--wait", _] => {
                self.repository.as_deref() == Some(*repo) && *path == format!("modules/{m}")
            }
            ["module", "issue", module, "--node", node] => *module == m && *node == n,
            ["assign", node, module] | ["prepare", node, module] => *node == n && *module == m,
            ["secret", "accept", node, module, secret, "--from", from] => {
                *node == n && *module == m && *from == format!("/accepting-{secret}")
            }
            ["push", node] => *node == n,
            _ => false,
        };
        if allowed {
            return Ok(());
        }
        Err(format!(
            "`tell {}` is beyond what a plugin may tell: the `{m}` plugin may tell only its own provider sequence \
             (module add {}, build <the catalogue source> --path modules/{m}, module issue {m} --node {n}, \
             assign {n} {m}, prepare {n} {m}, secret accept {n} {m} <secret> --from /accepting-<secret>, push {n}); \
             no grant widens this",
            args.join(" "),
            manifest_remote(m)
        ))
    }

    fn allow_carry(&self, remote: &str, secret: bool) -> Result<(), String> {
        let allowed = if secret {
            remote.strip_prefix("/accepting-").is_some_and(is_plain_name)
        } else {
            remote == manifest_remote(&self.module)
        };
        if allowed {
            return Ok(());
        }
        Err(format!(
            "carrying {} to `{remote}` is beyond what a plugin may carry: the `{}` plugin may carry only its manifest \
             to `{}` and secrets to `/accepting-<name>`; no grant widens this",
            if secret { "a secret" } else { "bytes" },
            self.module,
            manifest_remote(&self.module)
        ))
    }
}

/// Where a module's manifest is carried in the control plane.
pub fn manifest_remote(module: &str) -> String {
    format!("/{module}-module.json")
}

fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) && name != ".."
}

fn describe_effect(call: Call<'_>) -> Option<String> {
    match call {
        Call::Tell { args } => Some(format!("tell {}", args.join(" "))),
        Call::Carry { remote, .. } => Some(format!("carry to {remote}")),
        _ => None,
    }
}

/// Refuses grants no catalogue may give: credential and container names must be plain
/// names, and fetches must be http(s) URLs. (Grants for tell or carry cannot even be
/// written: the manifest's grants section has no such keys.)
pub fn within_ceiling(grants: &Grants) -> Result<()> {
    for name in &grants.credentials {
        if !is_plain_name(name) {
            bail!("credential grant `{name}` is not a plain name inside the credentials directory");
        }
    }
    for name in &grants.inspect {
        if !is_plain_name(name) {
            bail!("inspect grant `{name}` is not a container name");
        }
    }
    for url in &grants.fetch {
        if !(url.starts_with("http://") || url.starts_with("https://")) || url == "http://*" || url == "https://*" {
            bail!("fetch grant `{url}` is not an http(s) URL or a prefix of one with a host");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn postgres() -> Permissions {
        Permissions {
            module: "postgres".into(),
            node: "node-1".into(),
            repository: Some("https://git/cat.git".into()),
            granted: Grants {
                credentials: vec!["store-superuser".into()],
                inspect: vec!["mesh-bus".into()],
                fetch: vec!["http://127.0.0.1:8222/*".into()],
            },
            manifest: "modules/postgres/manifest.json".into(),
        }
    }

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    fn tell(text: &str) -> Result<(), String> {
        postgres().allow(Phase::Adopt, Call::Tell { args: &words(text) })
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
    }

    #[test]
    fn carries_only_its_manifest_and_accepting_secrets() {
        let p = postgres();
        assert!(p.allow(Phase::Adopt, Call::Carry { remote: "/postgres-module.json", secret: false }).is_ok());
        assert!(p.allow(Phase::Adopt, Call::Carry { remote: "/accepting-superuser", secret: true }).is_ok());
        // Bytes may not pose as a secret delivery, nor a secret as the manifest.
        assert!(p.allow(Phase::Adopt, Call::Carry { remote: "/accepting-superuser", secret: false }).is_err());
        assert!(p.allow(Phase::Adopt, Call::Carry { remote: "/nats-module.json", secret: false }).is_err());
        assert!(p.allow(Phase::Adopt, Call::Carry { remote: "/accepting-../etc", secret: true }).is_err());
    }

    #[test]
    fn reads_only_what_is_granted_and_says_how_to_grant() {
        let p = postgres();
        assert!(p.allow(Phase::Adopt, Call::Credential { name: "store-superuser" }).is_ok());
        let denied = p.allow(Phase::Adopt, Call::Credential { name: "bus-admin" }).unwrap_err();
        assert!(denied.contains("adopt.grants.credentials"), "{denied}");
        assert!(p.allow(Phase::Adopt, Call::Inspect { container: "mesh-control" }).is_err());
        assert!(p.allow(Phase::Adopt, Call::Fetch { url: "http://127.0.0.1:8222/healthz" }).is_ok());
        assert!(p.allow(Phase::Adopt, Call::Fetch { url: "http://169.254.169.254/" }).is_err());
    }

    #[test]
    fn check_may_read_but_not_act() {
        let p = postgres();
        let denied = p.allow(Phase::Check, Call::Tell { args: &words("push node-1") }).unwrap_err();
        assert!(denied.contains("`tell push node-1`") && denied.contains("may only read"), "{denied}");
        assert!(p.allow(Phase::Check, Call::Carry { remote: "/postgres-module.json", secret: false }).is_err());
        assert!(p.allow(Phase::Check, Call::Credential { name: "store-superuser" }).is_ok());
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
