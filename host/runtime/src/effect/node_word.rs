//! The node's own word, held against what others say of it: the secrets its containers mount
//! against the control plane's `state`, the images it has against those the run's modules run,
//! and a container gone that a module the control plane has prepared there runs. A push meets
//! the node, not the control plane's memory, so where the two disagree the node's word counts
//! and the run stops before any effect.

use std::fmt;

use mesh_adopt_manifest::ModuleManifest;

use super::MeshView;
use super::declared::Declarations;
use crate::catalogue::foundation::GENESIS_OWNER;
use crate::events::EffectWarning;
use crate::model::spec::SECRETS_INSIDE;
use crate::remedy::Remedy;

/// What the control plane's `state` says of a secret a container on the node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateSays {
    /// The module is registered, and the node holds no such secret of it.
    NotHeld,
    /// The control plane has no such module registered.
    NotRegistered,
}

/// A secret a container on the node holds, as the engine shows it mounted, that the control
/// plane's `state` does not say the node holds: its module's next push would seal fresh bytes
/// over what the container reads, and whatever the container keeps under it would be lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretDisagreement {
    /// The node.
    pub node: String,
    /// The container holding it.
    pub container: String,
    /// Whether that container runs, where the engine said.
    pub running: Option<bool>,
    /// The module whose secret it is (the container's owner).
    pub module: String,
    /// The secret.
    pub secret: String,
    /// The host file it is mounted from, as the engine shows it.
    pub source: String,
    /// What the control plane says instead.
    pub state: StateSays,
}

impl SecretDisagreement {
    /// What mends it, keeping the data: the control plane's record looked at and put back, since
    /// the container holds the secret and whatever it keeps under it.
    pub fn remedy(&self) -> Remedy {
        Remedy::InspectMesh { what: self.to_look_at() }
    }

    /// What to look at and put back, in words: what [`SecretDisagreement::remedy`] says, and a
    /// hold of several says of each.
    pub fn to_look_at(&self) -> String {
        let (module, secret, container, node) = (&self.module, &self.secret, &self.container, &self.node);
        format!(
            "the control plane's record of `{module}`'s secret `{secret}` on node `{node}`, which it lost: put it \
             back (`{container}` holds the secret at `{}`), and the push keeps what `{container}` holds",
            self.source
        )
    }
}

/// Both sides, and what the push would do.
impl fmt::Display for SecretDisagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (module, secret, container) = (&self.module, &self.secret, &self.container);
        let runs = match self.running {
            Some(true) => "running",
            Some(false) => "stopped",
            None => "on the node",
        };
        let says = match self.state {
            StateSays::NotHeld => format!("says the node holds no secret `{secret}` of `{module}`"),
            StateSays::NotRegistered => format!("has no module `{module}` registered"),
        };
        write!(
            f,
            "on node `{}` the engine shows `{container}` ({runs}) holding `{module}`'s secret `{secret}`, mounted at \
             `{SECRETS_INSIDE}{secret}` from `{}`, and the control plane's `state` {says}: `{module}`'s push would \
             seal fresh bytes over the secret `{container}` holds",
            self.node, self.source
        )
    }
}

/// An image a module of the run runs that its node does not have: the control plane would
/// refuse to build the module, after the modules before it had been adopted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingImage {
    /// The node.
    pub node: String,
    /// The module running it.
    pub module: String,
    /// The container of that module's manifest that runs it.
    pub container: String,
    /// The image.
    pub image: String,
}

impl MissingImage {
    /// What mends it: the image put on the node, which keeps every container and its data.
    pub fn remedy(&self) -> Remedy {
        Remedy::ProvideImages { node: self.node.clone(), images: vec![self.image.clone()] }
    }
}

/// `node `node-1` has no image `x`, which `nats` runs in `mesh-bus``.
impl fmt::Display for MissingImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "node `{}` has no image `{}`, which `{}` runs in `{}`",
            self.node, self.image, self.module, self.container
        )
    }
}

/// Every secret a container on the node holds, as the engine shows its mounts, that the
/// control plane's `state` does not say the node holds. A container's secrets are its owner's
/// (the node's owner label, else the module whose manifest raises it): genesis's hold genesis
/// credentials, which the declarations' own rule covers. Where the mesh has no `state`, nothing
/// is said here (the prediction cannot tell a held secret from a new one, and refuses a seal for
/// a module whose container runs on its own).
pub(crate) fn secrets_disagreeing(
    view: &MeshView,
    run: &[(&str, &ModuleManifest)],
    declarations: &Declarations,
) -> Vec<SecretDisagreement> {
    if !view.modules_known {
        return Vec::new();
    }
    let mut found = Vec::new();
    for (name, container) in &view.containers {
        let Some(mounted) = &container.secrets else { continue };
        if mounted.is_empty() {
            continue;
        }
        let owner = match &container.owner {
            Some(owner) => Some(owner.as_str()),
            None if !declarations.genesis.contains_key(name) => {
                declarations.raises.iter().find(|(_, names)| names.contains(name)).map(|(module, _)| module.as_str())
            }
            None => None,
        };
        let Some(module) = owner.filter(|owner| *owner != GENESIS_OWNER) else { continue };
        let known = view.modules.iter().find(|k| k.name == module);
        let declares = |secret: &str| {
            known.is_some_and(|k| k.manifest.secrets.iter().any(|s| s == secret))
                || run.iter().any(|(m, manifest)| *m == module && manifest.secrets.iter().any(|s| s == secret))
        };
        for (secret, source) in mounted.iter().filter(|(secret, _)| declares(secret)) {
            let state = match known {
                Some(k) if k.settled.contains(secret) => continue,
                Some(_) => StateSays::NotHeld,
                None => StateSays::NotRegistered,
            };
            found.push(SecretDisagreement {
                node: view.node.clone(),
                container: name.clone(),
                running: container.running,
                module: module.to_string(),
                secret: secret.clone(),
                source: source.clone(),
                state,
            });
        }
    }
    found
}

/// The images of the run's modules the node said it lacks, each with the module and container
/// that run it, in the order asked.
pub(crate) fn missing_images(node: &str, asked: &[(String, String, String)], lacks: &[String]) -> Vec<MissingImage> {
    asked
        .iter()
        .filter(|(_, _, image)| lacks.contains(image))
        .map(|(module, container, image)| MissingImage {
            node: node.to_string(),
            module: module.clone(),
            container: container.clone(),
            image: image.clone(),
        })
        .collect()
}

/// What the node shows that a person should know before the effect, besides it: a container
/// of a module the control plane has prepared on the node that is not there (a push that did
/// not finish leaves one gone until the next raises it again), and containers whose mounts the
/// engine did not show (so the secrets they hold were not read from the node).
pub(crate) fn warnings(view: &MeshView, declarations: &Declarations) -> Vec<EffectWarning> {
    let mut warnings = Vec::new();
    if !view.looked || view.unseen.is_some() {
        return warnings;
    }
    if view.modules_known {
        for known in view.modules.iter().filter(|k| k.prepared) {
            for pushed in super::pushed_containers(&known.manifest).iter() {
                let container = &pushed.resource.name;
                if !view.containers.contains_key(container) {
                    warnings.push(EffectWarning::ContainerGone {
                        container: container.clone(),
                        module: known.name.clone(),
                        genesis: declarations.genesis.contains_key(container),
                    });
                }
            }
        }
    }
    let unshown: Vec<String> =
        view.containers.iter().filter(|(_, c)| c.volumes.is_none()).map(|(name, _)| name.clone()).collect();
    if !unshown.is_empty() {
        warnings.push(EffectWarning::MountsUnshown { containers: unshown });
    }
    warnings
}

/// The images each module of the run runs, as `(module, container, image)`, and the images to
/// ask the node about, each once, in order.
pub(crate) fn images_run<'a>(
    modules: impl IntoIterator<Item = (&'a str, &'a std::sync::Arc<ModuleManifest>)>,
) -> (Vec<(String, String, String)>, Vec<String>) {
    let mut run = Vec::new();
    let mut asked: Vec<String> = Vec::new();
    for (module, manifest) in modules {
        for pushed in super::pushed_containers(manifest).iter() {
            let image = &pushed.resource.image;
            run.push((module.to_string(), pushed.resource.name.clone(), image.clone()));
            if !asked.contains(image) {
                asked.push(image.clone());
            }
        }
    }
    (run, asked)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::catalogue::Foundation;
    use crate::effect::{ContainerSpec, KnownModule};

    const VAULT: &[u8] = br#"{"name": "mesh-vault", "secrets": ["unseal-key"],
        "resources": [{"id": "vault", "type": "container", "name": "mesh-vault", "image": "vault:1"}]}"#;
    const BUNDLE: &[u8] = br#"{"resources": [{"id": "store", "kind": "container", "name": "mesh-store",
        "image": "postgres:16", "credentials": ["unseal-key"]}]}"#;

    /// A node where the vault runs holding its key and genesis's store holds a credential of the
    /// same name, and a control plane that holds `settled` for the vault (`None`: it has no
    /// vault registered).
    fn node(settled: Option<&[&str]>, owner: Option<&str>) -> (MeshView, Declarations) {
        let manifest = Arc::new(ModuleManifest::parse(VAULT).unwrap());
        let foundation = Foundation::parse(BUNDLE).unwrap();
        let declarations = Declarations::of(&foundation, [("mesh-vault", &*manifest)]);
        let mut view = MeshView::looked();
        view.node = "node-1".into();
        view.modules_known = true;
        let key = |source: &str| Some([("unseal-key".to_string(), source.to_string())].into());
        view.containers.insert(
            "mesh-vault".into(),
            ContainerSpec::new("vault:1", Some(vec![]))
                .with_owner(owner.map(String::from))
                .with_running(Some(true))
                .with_secrets(key("/s/mesh-vault/unseal-key")),
        );
        view.containers.insert(
            "mesh-store".into(),
            ContainerSpec::new("postgres:16", Some(vec![]))
                .with_owner(Some(GENESIS_OWNER.into()))
                .with_secrets(key("/g/unseal-key")),
        );
        if let Some(settled) = settled {
            let settled = settled.iter().map(|s| s.to_string()).collect();
            view.modules = vec![KnownModule { name: "mesh-vault".into(), manifest, prepared: true, settled }];
        }
        (view, declarations)
    }

    fn found(view: &MeshView, declarations: &Declarations) -> Vec<(String, StateSays)> {
        let vault = ModuleManifest::parse(VAULT).unwrap();
        secrets_disagreeing(view, &[("mesh-vault", &vault)], declarations)
            .into_iter()
            .map(|d| (format!("{}/{} in {} from {}", d.module, d.secret, d.container, d.source), d.state))
            .collect()
    }

    #[test]
    fn a_secret_a_container_mounts_that_the_control_plane_does_not_hold_is_found_with_both_sides() {
        let vault =
            |state| vec![("mesh-vault/unseal-key in mesh-vault from /s/mesh-vault/unseal-key".to_string(), state)];
        // The control plane holds the key: the two agree.
        let (view, declarations) = node(Some(&["unseal-key"]), Some("mesh-vault"));
        assert_eq!(found(&view, &declarations), vec![]);
        // It forgot the key, or the module: the node's word counts, and the two disagree.
        let (view, declarations) = node(Some(&[]), Some("mesh-vault"));
        assert_eq!(found(&view, &declarations), vault(StateSays::NotHeld));
        let (view, declarations) = node(None, Some("mesh-vault"));
        assert_eq!(found(&view, &declarations), vault(StateSays::NotRegistered));
        // No owner label: the module whose manifest raises it owns it.
        let (view, declarations) = node(Some(&[]), None);
        assert_eq!(found(&view, &declarations), vault(StateSays::NotHeld));
        // Genesis's store holds a genesis credential of the same name, never the vault's secret.
        assert!(view.containers["mesh-store"].secrets.is_some());
    }

    #[test]
    fn without_the_control_planes_word_nothing_is_said_to_disagree() {
        let (mut view, declarations) = node(Some(&[]), Some("mesh-vault"));
        view.modules_known = false;
        assert_eq!(found(&view, &declarations), vec![]);
    }

    #[test]
    fn what_mends_each_is_data_that_keeps_the_mesh() {
        let image = MissingImage {
            node: "node-1".into(),
            module: "nats".into(),
            container: "mesh-bus".into(),
            image: "nats:2".into(),
        };
        assert_eq!(image.remedy(), Remedy::ProvideImages { node: "node-1".into(), images: vec!["nats:2".into()] });
        assert_eq!(image.to_string(), "node `node-1` has no image `nats:2`, which `nats` runs in `mesh-bus`");
        let asked = vec![("nats".to_string(), "mesh-bus".to_string(), "nats:2".to_string())];
        assert_eq!(missing_images("node-1", &asked, &["nats:2".to_string()]), vec![image]);
        assert_eq!(missing_images("node-1", &asked, &[]), vec![]);
    }
}
