//! What each module declares it adopts (its manifest's `adopts`), checked against the
//! foundation bundle, and gathered into what the rules read: which module owns which
//! container genesis raised, and which running container holds which credential.

use std::collections::BTreeMap;

use mesh_adopt_manifest::{AdoptedAs, Adoption, ModuleManifest};

use crate::catalogue::{Foundation, FoundationResource};

/// Why a module's `adopts` cannot be used as it is written: an input error (the run exits 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`adopts[{index}]` {fault}")]
pub struct DeclarationError {
    /// Which entry of `adopts`, from 0.
    pub index: usize,
    /// What is wrong with it.
    pub fault: DeclarationFault,
}

/// What is wrong with one entry of a module's `adopts`, naming both sides.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeclarationFault {
    /// It names a resource of the bundle that is not a container.
    #[error("names `{foundation}`, which the foundation bundle has as a {kind}, not a container")]
    NotAContainer {
        /// The bundle's id named.
        foundation: String,
        /// Its kind.
        kind: String,
    },
    /// It names a resource the bundle does not have.
    #[error(
        "names `{foundation}`, which the foundation bundle does not have; its containers are {}",
        listed(containers)
    )]
    NotInTheBundle {
        /// The bundle's id named.
        foundation: String,
        /// The bundle's containers' ids.
        containers: Vec<String>,
    },
    /// It names a container of the manifest's that the manifest does not have.
    #[error(
        "says container `{container}` takes `{foundation}` over, but the manifest has no container with that id; it has {}",
        listed(containers)
    )]
    NoSuchContainer {
        /// The manifest's container named.
        container: String,
        /// The bundle's id it takes over.
        foundation: String,
        /// The manifest's containers' ids.
        containers: Vec<String>,
    },
    /// Another entry adopts the same resource.
    #[error("adopts `{foundation}` again (so does `adopts[{first}]`)")]
    AdoptedTwice {
        /// The bundle's id.
        foundation: String,
        /// The entry that adopts it first.
        first: usize,
    },
    /// Another entry gives the same container something to adopt.
    #[error("gives container `{container}` a second thing to adopt (`adopts[{first}]` gave it one)")]
    ContainerTwice {
        /// The manifest's container.
        container: String,
        /// The entry that gave it one first.
        first: usize,
    },
    /// A credential and no secret to carry it in.
    #[error("says the container runs with credential `{credential}` but names no `secret` to carry it in")]
    NoSecret {
        /// The credential.
        credential: String,
    },
    /// A secret and no credential it carries.
    #[error("names secret `{secret}` but not the genesis `credential` it carries; give both or neither")]
    NoCredential {
        /// The secret.
        secret: String,
    },
    /// A secret the manifest's `secrets` does not declare.
    #[error(
        "carries credential `{credential}` in as secret `{secret}`, which the manifest's `secrets` does not declare: \
         the node would not take it"
    )]
    SecretUndeclared {
        /// The credential.
        credential: String,
        /// The secret.
        secret: String,
    },
    /// A credential the grants do not grant.
    #[error(
        "says the container runs with credential `{credential}`, which `adopt.grants.credentials` does not grant: \
         the plugin could never hand it over"
    )]
    CredentialNotGranted {
        /// The credential.
        credential: String,
    },
}

impl DeclarationError {
    /// The JSON Pointer of the entry to mend in the manifest.
    pub fn pointer(&self) -> String {
        format!("/adopts/{}", self.index)
    }
}

/// Ids as a message lists them: each in backquotes, or `none`.
fn listed(ids: &[String]) -> String {
    match ids.is_empty() {
        true => "none".to_string(),
        false => ids.iter().map(|id| format!("`{id}`")).collect::<Vec<_>>().join(", "),
    }
}

/// Checks `manifest`'s `adopts` against `foundation`: each entry names a container of the
/// bundle and one of the manifest's own, at most once each, and a credential together with the
/// declared secret that carries it, granted to the plugin so it can hand it over.
pub fn check(manifest: &ModuleManifest, foundation: &Foundation) -> Result<(), DeclarationError> {
    use DeclarationFault as Fault;
    for (index, adoption) in manifest.adopts.iter().enumerate() {
        let fail = |fault: Fault| Err(DeclarationError { index, fault });
        let foundation_id = || adoption.foundation.clone();
        match foundation.resources.iter().find(|r| r.id() == adoption.foundation) {
            Some(FoundationResource::Container { .. }) => {}
            Some(other) => return fail(Fault::NotAContainer { foundation: foundation_id(), kind: kind(other).into() }),
            None => {
                let containers = foundation
                    .resources
                    .iter()
                    .filter(|r| matches!(r, FoundationResource::Container { .. }))
                    .map(|r| r.id().to_string())
                    .collect();
                return fail(Fault::NotInTheBundle { foundation: foundation_id(), containers });
            }
        }
        if !manifest.containers().any(|c| c.id == adoption.container) {
            let containers = manifest.containers().map(|c| c.id.clone()).collect();
            return fail(Fault::NoSuchContainer {
                container: adoption.container.clone(),
                foundation: foundation_id(),
                containers,
            });
        }
        if let Some(first) = manifest.adopts[..index].iter().position(|a| a.foundation == adoption.foundation) {
            return fail(Fault::AdoptedTwice { foundation: foundation_id(), first });
        }
        if let Some(first) = manifest.adopts[..index].iter().position(|a| a.container == adoption.container) {
            return fail(Fault::ContainerTwice { container: adoption.container.clone(), first });
        }
        match (&adoption.credential, &adoption.secret) {
            (None, None) => {}
            (Some(credential), None) => return fail(Fault::NoSecret { credential: credential.clone() }),
            (None, Some(secret)) => return fail(Fault::NoCredential { secret: secret.clone() }),
            (Some(credential), Some(secret)) => {
                if !manifest.secrets.contains(secret) {
                    return fail(Fault::SecretUndeclared { credential: credential.clone(), secret: secret.clone() });
                }
                if !manifest.adopt.grants.allows_credential(credential) {
                    return fail(Fault::CredentialNotGranted { credential: credential.clone() });
                }
            }
        }
    }
    Ok(())
}

fn kind(resource: &FoundationResource) -> &str {
    match resource {
        FoundationResource::Container { .. } => "container",
        FoundationResource::File { .. } => "file",
        FoundationResource::Other { kind, .. } => kind,
    }
}

/// A container genesis raised, as the bundle has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Genesis {
    /// The bundle's id for it.
    pub id: String,
    /// Its image.
    pub image: String,
    /// Its volumes.
    pub volumes: Vec<String>,
    /// Its whole spec, as the bundle writes it.
    pub spec: super::Spec,
}

/// A module's adoption of a genesis container, as the rules read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adopter {
    /// The module.
    pub module: String,
    /// Its declaration.
    pub adoption: Adoption,
    /// The name the module's own container has (the node keys on it).
    pub name: String,
    /// That container's image and resolved volumes, as the module declares them.
    pub image: String,
    /// Resolved volumes.
    pub volumes: Vec<String>,
    /// That container's whole spec, as the module declares it.
    pub spec: super::Spec,
}

/// Every declaration of the modules a run touches, gathered: what the rules are derived from.
#[derive(Debug, Clone, Default)]
pub struct Declarations {
    /// Containers genesis raised, by name.
    pub genesis: BTreeMap<String, Genesis>,
    /// Who adopts each genesis container, by the container's name: more than one is a broken
    /// rule, kept so the rule can name them all.
    pub adopters: BTreeMap<String, Vec<Adopter>>,
    /// The containers each module's manifest raises, by module, with their names.
    pub raises: BTreeMap<String, Vec<String>>,
    /// Module secrets that carry a credential a running genesis container holds:
    /// `(module, secret)` → (container name, credential).
    pub held: BTreeMap<(String, String), (String, String)>,
    /// The genesis credentials each genesis container runs with, by its name, as the bundle
    /// says.
    pub runs_with: BTreeMap<String, Vec<String>>,
    /// Containers that modules the control plane already has raise, by name, with the module:
    /// who owns a container an earlier run raised.
    pub raised_before: BTreeMap<String, String>,
}

impl Declarations {
    /// Gathers what `modules` (each name with its manifest) declare against `foundation`.
    pub fn of<'a>(foundation: &Foundation, modules: impl IntoIterator<Item = (&'a str, &'a ModuleManifest)>) -> Self {
        let mut declarations = Declarations::default();
        for resource in &foundation.resources {
            if let FoundationResource::Container { id, name, image, volumes } = resource {
                if let Some(credentials) = foundation.runs_with.get(id) {
                    declarations.runs_with.insert(name.clone(), credentials.clone());
                }
                let spec = foundation.specs.get(name).cloned().unwrap_or_default();
                let genesis = Genesis { id: id.clone(), image: image.clone(), volumes: volumes.clone(), spec };
                declarations.genesis.insert(name.clone(), genesis);
            }
        }
        for (module, manifest) in modules {
            if declarations.raises.contains_key(module) {
                continue;
            }
            let containers = manifest.resolved_containers();
            declarations.raises.insert(module.to_string(), containers.iter().map(|c| c.name.clone()).collect());
            for adoption in &manifest.adopts {
                let Some((genesis_name, _, _)) = foundation.container(&adoption.foundation) else { continue };
                let Some(own) = containers.iter().find(|c| c.id == adoption.container) else { continue };
                if let (Some(credential), Some(secret)) = (&adoption.credential, &adoption.secret) {
                    declarations
                        .held
                        .insert((module.to_string(), secret.clone()), (genesis_name.to_string(), credential.clone()));
                }
                declarations.adopters.entry(genesis_name.to_string()).or_default().push(Adopter {
                    module: module.to_string(),
                    adoption: adoption.clone(),
                    name: own.name.clone(),
                    image: own.image.clone(),
                    volumes: own.volumes.clone(),
                    spec: super::Spec::of_module(own),
                });
            }
        }
        declarations
    }

    /// Learns which module raised each container of the modules the control plane already has
    /// (those an earlier run registered).
    pub fn learn_earlier(&mut self, known: &[super::KnownModule]) {
        for module in known {
            for container in module.manifest.containers() {
                self.raised_before.entry(container.name.clone()).or_insert_with(|| module.name.clone());
            }
        }
    }

    /// How `module` declares it adopts the genesis container `name`, if it does.
    pub fn adopted_as(&self, module: &str, name: &str) -> Option<AdoptedAs> {
        self.adopters.get(name)?.iter().find(|a| a.module == module).map(|a| a.adoption.how)
    }
}
