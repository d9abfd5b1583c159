//! What a run's pushes will do to the mesh, worked out before anything moves, and the rules of
//! the mesh held against it — then held again against what the node really did.
//!
//! The node applies a push by a known rule: it keys containers on their name and compares a
//! digest of their spec (the same: kept; another: recreated; none yet: created), for every
//! module the control plane has prepared, and seals fresh bytes for every secret a prepared
//! module declares that was not accepted first. The run walks every module's plan through that
//! rule from the mesh's state ([`MeshView`]) into a [`Prediction`], and checks it against what
//! each manifest declares it adopts, never against names ([`Rule`]).
//!
//! What is public here is what an embedder's [`crate::mesh::Mesh`] answers with and what a
//! run's record and report hold; the working-out itself stays inside the runtime.

mod declared;
mod node_word;
mod predict;
mod pushed_specs;
mod reread;
mod rules;
#[cfg(test)]
mod tables;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use mesh_adopt_manifest::ModuleManifest;

pub use crate::model::spec::{ContainerSpec, OWNER_LABEL, SECRETS_INSIDE, SPEC_LABEL, Spec, SpecDigest};
pub(crate) use declared::Declarations;
pub(crate) use declared::check as check_declared;
pub use declared::{DeclarationError, DeclarationFault};
pub use node_word::{MissingImage, SecretDisagreement, StateSays};
pub(crate) use node_word::{images_run, missing_images, secrets_disagreeing, warnings};
pub(crate) use predict::{Planned, predict_ahead};
pub use predict::{Prediction, PushEffect};
pub(crate) use pushed_specs::{PushedContainer, pushed_containers};
pub use reread::{AheadOfPush, Moved, Reread};
pub use rules::Rule;
pub(crate) use rules::{Seen, rules};

/// A module the control plane already knows when the run starts: a re-run's push applies it
/// again, so the prediction must count it.
#[derive(Debug, Clone, Default)]
pub struct KnownModule {
    /// The module's name.
    pub name: String,
    /// The manifest the control plane registered for it.
    pub manifest: std::sync::Arc<ModuleManifest>,
    /// Whether it is prepared on the node, so a push applies it.
    pub prepared: bool,
    /// Its secrets the node already has, accepted or sealed: a push seals none of them again.
    pub settled: BTreeSet<String>,
}

/// The mesh as a backend sees it before the run: what a prediction starts from. Grows fields
/// as backends learn to say more: start from [`MeshView::default`] or [`MeshView::looked`] and
/// set what the backend knows.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct MeshView {
    /// The node's containers by name (those asked about; one not there is absent).
    pub containers: BTreeMap<String, ContainerSpec>,
    /// The modules the control plane has, in the order they were registered; empty when the
    /// backend cannot say.
    pub modules: Vec<KnownModule>,
    /// Whether `modules` is the control plane's own answer for the node (the simulator, a live
    /// mesh with a `state` command), so the secrets the node holds are known. When not, an
    /// empty `modules` says nothing, and a seal the prediction makes for a module whose
    /// container already runs may be one over a secret that container holds: refused.
    pub modules_known: bool,
    /// Whether the backend saw the control plane's modules and the containers' volumes, or
    /// could only tell images (a live mesh): what the summary says a prediction rests on.
    pub complete: bool,
    /// Whether the backend looked at the node at all; when not (a recording answers only the
    /// plugins' calls), the containers genesis raised are taken as the bundle declares them.
    pub looked: bool,
    /// Why the backend could not say what a container it was asked about is (an engine that
    /// errs or hangs): no prediction stands on an unknown, so the run stops before any effect.
    pub unseen: Option<String>,
    /// The node the run looked at, as the run names it (empty where no one said): what a
    /// broken rule names the node by.
    pub node: String,
}

impl MeshView {
    /// A view of a backend that looked at the node and has yet to say what it found.
    pub fn looked() -> MeshView {
        MeshView { looked: true, ..MeshView::default() }
    }
}

/// What one push does to one container.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "change", rename_all = "snake_case", deny_unknown_fields)]
pub enum ContainerEffect {
    /// Its spec is already the one pushed: left running as it is.
    Kept {
        /// The image it keeps.
        image: String,
    },
    /// Another spec: torn down and raised again.
    Recreated {
        /// The image it ran.
        from: String,
        /// The image it runs after.
        to: String,
        /// The volumes it is raised on.
        volumes: Vec<String>,
    },
    /// No container of that name: raised.
    Created {
        /// Its image.
        image: String,
        /// Its volumes.
        volumes: Vec<String>,
    },
    /// Taken away.
    Removed,
}

impl ContainerEffect {
    /// The effect in one word, as the plan and the record show it.
    pub fn word(&self) -> &'static str {
        match self {
            ContainerEffect::Kept { .. } => "kept",
            ContainerEffect::Recreated { .. } => "recreated",
            ContainerEffect::Created { .. } => "created",
            ContainerEffect::Removed => "removed",
        }
    }
}

/// `kept postgres:16`, `recreated nats:a → nats:b`, `created vault:1`, `removed`.
impl fmt::Display for ContainerEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContainerEffect::Kept { image } => write!(f, "kept {image}"),
            ContainerEffect::Recreated { from, to, .. } => write!(f, "recreated {from} → {to}"),
            ContainerEffect::Created { image, .. } => write!(f, "created {image}"),
            ContainerEffect::Removed => f.write_str("removed"),
        }
    }
}

/// How the node differs from what a push was predicted to leave: one line a container, naming
/// what was expected and what was found. Volumes are compared (host path by path inside,
/// options aside) only where the mesh shows them.
pub(crate) fn landed_differences(expected: &BTreeMap<String, ContainerSpec>, found: &MeshView) -> Vec<String> {
    let mut differences = Vec::new();
    for (name, want) in expected {
        match found.containers.get(name) {
            None => {
                differences.push(format!("`{name}` is not on the node, where the prediction has it run {}", want.image))
            }
            Some(got) if got.image != want.image => {
                differences.push(format!("`{name}` runs {}, where the prediction has it run {}", got.image, want.image))
            }
            Some(got) if got.digest.is_some() && want.digest.is_some() && got.digest != want.digest => {
                let short = |d: &Option<SpecDigest>| d.as_ref().map(|d| d.short().to_string()).unwrap_or_default();
                differences.push(format!(
                    "`{name}` was created from the spec {}, where the prediction has the spec {}",
                    short(&got.digest),
                    short(&want.digest)
                ))
            }
            Some(got) => {
                if let (Some(got), Some(want)) = (&got.volumes, &want.volumes)
                    && mesh_adopt_manifest::mounts(got) != mesh_adopt_manifest::mounts(want)
                {
                    differences.push(format!(
                        "`{name}` is mounted on {}, where the prediction has {}",
                        got.join(", "),
                        want.join(", ")
                    ));
                }
            }
        }
    }
    differences
}

/// One container's effect, and the module whose manifest raised it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// The container, by name.
    pub container: String,
    /// The module whose manifest the node applied.
    pub module: String,
    /// What happens to it.
    pub effect: ContainerEffect,
}

/// What happens to one module secret at a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretEffect {
    /// The module declaring it.
    pub module: String,
    /// The secret.
    pub secret: String,
    /// `true`: the value accepted before the push; `false`: fresh bytes sealed by the node.
    pub accepted: bool,
    /// For a secret accepted, the genesis credential the module declares it hands over as
    /// it (`adopts[].credential`), where it declares one.
    pub credential: Option<String>,
}

impl From<&Touch> for crate::events::Change {
    fn from(touch: &Touch) -> crate::events::Change {
        use crate::events::Change;
        let container = touch.container.clone();
        match &touch.effect {
            ContainerEffect::Kept { image } => Change::Kept { container, image: image.clone() },
            ContainerEffect::Recreated { from, to, .. } => {
                Change::Recreated { container, from: from.clone(), to: to.clone() }
            }
            ContainerEffect::Created { image, .. } => Change::Created { container, image: image.clone() },
            ContainerEffect::Removed => Change::Removed { container },
        }
    }
}

/// The prediction as the event stream has it.
pub(crate) fn record(prediction: &Prediction, complete: bool) -> crate::events::EffectEvent {
    use crate::events::{ContainerRecord, PushRecord, SecretRecord};
    crate::events::EffectEvent {
        pushes: prediction
            .pushes
            .iter()
            .map(|push| PushRecord {
                module: push.module.clone(),
                containers: push
                    .containers
                    .iter()
                    .map(|t| ContainerRecord { module: t.module.clone(), change: t.into() })
                    .collect(),
                secrets: push
                    .secrets
                    .iter()
                    .map(|s| SecretRecord {
                        module: s.module.clone(),
                        secret: s.secret.clone(),
                        accepted: s.accepted,
                        credential: s.credential.clone(),
                    })
                    .collect(),
            })
            .collect(),
        complete,
        first: prediction.first.clone(),
        held: prediction
            .held
            .iter()
            .map(|(module, secret)| {
                let again = prediction.accepted_again.iter().find(|s| &s.module == module && &s.secret == secret);
                crate::events::HeldRecord {
                    module: module.clone(),
                    secret: secret.clone(),
                    accepted_again: again.is_some(),
                    credential: again.and_then(|s| s.credential.clone()),
                }
            })
            .collect(),
        warnings: prediction.warnings.clone(),
    }
}
/// A rule the mesh must keep whatever a plugin does, found broken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule broken.
    pub rule: Rule,
    /// What broke it, in words.
    pub detail: String,
    /// The module whose declaration, plan or push broke it, where one did.
    pub module: Option<String>,
    /// The container it concerns, where one is concerned.
    pub container: Option<String>,
}

impl Rule {
    /// The rule found broken, with what broke it.
    pub fn broken(self, detail: String) -> Violation {
        Violation { rule: self, detail, module: None, container: None }
    }
}

impl Violation {
    /// The violation, naming the module that broke it.
    pub fn of(mut self, module: &str) -> Violation {
        self.module = Some(module.to_string());
        self
    }

    /// What mends it: the mesh looked at, where the rule's page says what each rule keeps.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        crate::remedy::Remedy::InspectMesh { what: format!("rule `{}` (docs/rules.md): {}", self.rule, self.detail) }
    }

    /// The violation, naming the container it concerns.
    pub fn at(mut self, container: &str) -> Violation {
        self.container = Some(container.to_string());
        self
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invariant `{}` broken: {}", self.rule, self.detail)
    }
}
