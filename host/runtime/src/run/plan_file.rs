//! Saved plans: what `check --out PLAN` writes and `run --plan PLAN` applies. A saved plan
//! holds every module's plan together with what it was made from (the options, the foundation
//! bundle's digest, each manifest's and plugin's digest), so a run applies it only to those
//! very inputs, as a Terraform plan file applies only to the state it was made against.
//!
//! The file is JSON; `docs/writing-a-plugin.md` documents its fields.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::catalogue::Foundation;
use crate::catalogue::plan_key::PlanKey;
use crate::model::digest::Sha256;
use crate::model::options::RunOptions;
use crate::model::{Plan, PluginCommand};
use crate::sandbox::limits::Limits;

/// The format version this host writes and reads: 4 since the predicted effect is kept as
/// data, compared as data.
pub const PLAN_SCHEMA: u32 = 4;

/// The largest plan file read: far above any real one, well below what would strain memory.
const PLAN_FILE_BYTES: u64 = 16 << 20;

/// A run's plans and what they were made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedPlan {
    /// The file's format version, [`PLAN_SCHEMA`].
    pub schema: u32,
    /// The node the modules are assigned to.
    pub node: String,
    /// The catalogue source, as `REPO[@REF]`, or none.
    pub catalog_source: Option<String>,
    /// `--wait`, in seconds.
    pub wait_s: u64,
    /// The sandbox's limits the plans were made under.
    pub limits: SavedLimits,
    /// The foundation bundle's sha256.
    pub foundation_sha256: Sha256,
    /// Names the key the credentials' digests were made with ([`PlanKey::id`]); the key
    /// itself stays where it was made.
    pub credentials_key: String,
    /// Each module, in the run's order.
    pub modules: Vec<SavedModule>,
    /// The mesh the plans were made on, as it names itself: a plan made on the simulator is
    /// no plan for a live mesh.
    pub mesh: String,
    /// What the plans' pushes were predicted to do to the mesh as it was: each module moved
    /// ahead, each container's change over the phase and each secret settled. When the mesh
    /// has moved since (a plan run a second time), it no longer holds.
    pub effect: Vec<SavedEffect>,
}

/// One thing the plans' pushes were predicted to do, as a saved plan binds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SavedEffect {
    /// A module moved ahead of the order asked for: an earlier run left it prepared without its
    /// hand-over.
    First {
        /// The module.
        module: String,
    },
    /// A container's change over the phase, by the module whose manifest the node applied.
    Container {
        /// The container.
        container: String,
        /// The module.
        module: String,
        /// What happens to it.
        effect: crate::effect::ContainerEffect,
    },
    /// A secret the pushes settle: accepted before a push, or sealed by one.
    Secret {
        /// The module declaring it.
        module: String,
        /// The secret.
        secret: String,
        /// Whether it is accepted (else sealed).
        accepted: bool,
    },
}

impl SavedEffect {
    /// The effect a prediction binds a saved plan to, in the order it says it.
    pub(crate) fn of(prediction: &crate::effect::Prediction) -> Vec<SavedEffect> {
        let mut effect: Vec<SavedEffect> =
            prediction.first.iter().map(|module| SavedEffect::First { module: module.clone() }).collect();
        effect.extend(prediction.changes().into_iter().map(|t| SavedEffect::Container {
            container: t.container,
            module: t.module,
            effect: t.effect,
        }));
        effect.extend(prediction.pushes.iter().flat_map(|p| &p.secrets).map(|s| SavedEffect::Secret {
            module: s.module.clone(),
            secret: s.secret.clone(),
            accepted: s.accepted,
        }));
        effect
    }
}

/// The effect as a person reads it: `mesh-bus recreated A → B (by nats)`.
impl fmt::Display for SavedEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SavedEffect::First { module } => write!(f, "{module} goes first"),
            SavedEffect::Container { container, module, effect } => write!(f, "{container} {effect} (by {module})"),
            SavedEffect::Secret { module, secret, accepted } => {
                write!(f, "secret {module}/{secret} {}", if *accepted { "accepted" } else { "sealed" })
            }
        }
    }
}

/// Why a saved plan file cannot be read, written or used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PlanFileError {
    /// The file could not be read.
    #[error("failed to read the plan `{}`", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::files::FileError,
    },
    /// The file was read and holds no plan this host can use.
    #[error("the plan `{}` cannot be used", path.display())]
    Unusable {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: PlanFault,
    },
    /// Bytes that hold no plan this host can use.
    #[error(transparent)]
    Fault(#[from] PlanFault),
    /// The file could not be written.
    #[error("failed to write the plan `{}`", path.display())]
    Unwritable {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::files::FileError,
    },
}

impl PlanFileError {
    /// What mends it: the plan made again, or the file to write to mended.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        match self {
            PlanFileError::Unwritable { source, .. } => source.remedy(),
            _ => crate::remedy::Remedy::MakePlanAgain,
        }
    }
}

/// What is wrong with bytes read as a plan.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PlanFault {
    /// They are not JSON of a saved plan.
    #[error("it is not a saved plan")]
    NotAPlan {
        /// What the JSON reader says.
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// A plan of another format.
    #[error("it is a plan of format {format}; this host reads format {PLAN_SCHEMA}: check again to make it anew")]
    OtherFormat {
        /// Its format.
        format: u32,
    },
    /// Its node is no node's name.
    #[error("its `node` {problem}")]
    Node {
        /// What is wrong with it.
        problem: crate::model::options::OptionProblem,
    },
}

/// How a saved plan differs from the inputs a run would apply it to: the first difference, as
/// data; its `Display` says it to a person.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanDifference {
    /// Another node.
    Node {
        /// When planned.
        planned: String,
        /// Now.
        now: String,
    },
    /// Another mesh.
    Mesh {
        /// When planned.
        planned: String,
        /// Now.
        now: String,
    },
    /// Another catalogue source (`None`: none).
    CatalogSource {
        /// When planned.
        planned: Option<String>,
        /// Now.
        now: Option<String>,
    },
    /// Another wait, in seconds.
    Wait {
        /// When planned.
        planned: u64,
        /// Now.
        now: u64,
    },
    /// Other plugin limits.
    Limits {
        /// When planned.
        planned: SavedLimits,
        /// Now.
        now: SavedLimits,
    },
    /// Another foundation bundle.
    Foundation {
        /// When planned.
        planned: Sha256,
        /// Now.
        now: Sha256,
    },
    /// The credentials' digests were made with another plan key, so they cannot be checked.
    CredentialsKey {
        /// When planned.
        planned: String,
        /// Here.
        now: String,
    },
    /// Other modules, or another order of them.
    Modules {
        /// When planned.
        planned: Vec<String>,
        /// Now.
        now: Vec<String>,
    },
    /// A module's granted credentials changed.
    Credentials {
        /// The module.
        module: String,
    },
    /// A module's manifest changed.
    Manifest {
        /// The module.
        module: String,
        /// When planned.
        planned: Sha256,
        /// Now.
        now: Sha256,
    },
    /// A module's plugin changed.
    Plugin {
        /// The module.
        module: String,
        /// When planned.
        planned: Sha256,
        /// Now.
        now: Sha256,
    },
    /// A module's plan changed.
    Plan {
        /// The module.
        module: String,
        /// How, in words.
        how: String,
    },
    /// The mesh moved: the pushes would now do otherwise than the plan said (`None`: nothing).
    MeshMoved {
        /// What the plan said at the first difference.
        planned: Option<SavedEffect>,
        /// What the pushes would do there now.
        now: Option<SavedEffect>,
    },
}

impl fmt::Display for PlanDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = |s: &Option<String>| s.clone().unwrap_or_else(|| "no catalogue source".into());
        let limits = |l: &SavedLimits| {
            format!("memory {} MiB, guest time {}ms, wall time {}ms", l.memory_mib, l.time_ms, l.wall_time_ms)
        };
        match self {
            PlanDifference::Node { planned, now } => {
                write!(f, "the node is `{now}` now, and the plan was made with `{planned}`")
            }
            PlanDifference::Mesh { planned, now } => {
                write!(f, "this run is on {now}, and the plan was made on {planned}")
            }
            PlanDifference::CatalogSource { planned, now } => write!(
                f,
                "the catalogue source is `{}` now, and the plan was made with `{}`",
                source(now),
                source(planned)
            ),
            PlanDifference::Wait { planned, now } => {
                write!(f, "the wait after a push is `{now}s` now, and the plan was made with `{planned}s`")
            }
            PlanDifference::Limits { planned, now } => write!(
                f,
                "the plugin limits are `{}` now, and the plan was made with `{}`",
                limits(now),
                limits(planned)
            ),
            PlanDifference::Foundation { planned, now } => write!(
                f,
                "the foundation bundle changed (sha256 {} now, {} when planned)",
                now.short(),
                planned.short()
            ),
            PlanDifference::CredentialsKey { planned, now } => write!(
                f,
                "the plan's credentials were digested with another plan key ({planned} when planned, {now} here: \
                 made on another machine or by another user), so this run cannot check that they are the ones it \
                 was made with; make the plan again here"
            ),
            PlanDifference::Modules { planned, now } => {
                write!(f, "the modules are `{}` now, and the plan was made with `{}`", now.join(" "), planned.join(" "))
            }
            PlanDifference::Credentials { module } => {
                write!(f, "the credentials the `{module}` module's manifest grants changed")
            }
            PlanDifference::Manifest { module, planned, now } => write!(
                f,
                "the `{module}` module's manifest changed (sha256 {} now, {} when planned)",
                now.short(),
                planned.short()
            ),
            PlanDifference::Plugin { module, planned, now } => write!(
                f,
                "the `{module}` module's plugin changed (sha256 {} now, {} when planned)",
                now.short(),
                planned.short()
            ),
            PlanDifference::Plan { module, how } => write!(f, "the `{module}` module's plan changed ({how})"),
            PlanDifference::MeshMoved { planned, now } => {
                let shown = |e: &Option<SavedEffect>| e.as_ref().map_or("nothing".to_string(), |e| format!("`{e}`"));
                write!(
                    f,
                    "the mesh moved since the plan was made: its pushes would now do {}, where the plan said {}",
                    shown(now),
                    shown(planned)
                )
            }
        }
    }
}

/// The limits an operator chooses for a run (`--plugin-memory`, `--plugin-time`,
/// `--plugin-wall-time`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedLimits {
    /// `--plugin-memory`, in MiB.
    pub memory_mib: u64,
    /// `--plugin-time`, in milliseconds.
    pub time_ms: u64,
    /// `--plugin-wall-time`, in milliseconds.
    pub wall_time_ms: u64,
}

impl SavedLimits {
    /// The saved form of `limits`.
    pub fn of(limits: &Limits) -> SavedLimits {
        SavedLimits {
            memory_mib: (limits.memory_bytes >> 20) as u64,
            time_ms: limits.guest_time.as_millis().try_into().unwrap_or(u64::MAX),
            wall_time_ms: limits.wall_time.as_millis().try_into().unwrap_or(u64::MAX),
        }
    }
}

/// One module's plan and the documents it was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedModule {
    /// The module's name.
    pub module: String,
    /// The sha256 of its `manifest.json`, byte for byte.
    pub manifest_sha256: Sha256,
    /// The sha256 of its plugin.
    pub plugin_sha256: Sha256,
    /// The keyed digest ([`PlanKey::digest`]) of the credentials its manifest grants, names
    /// and values together, so a credential changed since the plan was made is seen (empty
    /// when it grants none).
    pub credentials_digest: String,
    /// The plan's summary lines.
    pub summary: Vec<String>,
    /// The plan's commands, each as its words.
    pub commands: Vec<Vec<String>>,
}

impl SavedPlan {
    /// An empty saved plan for a run with `options` on `foundation`, its credentials digested
    /// with `key`.
    pub fn new(options: &RunOptions, foundation: &Foundation, limits: &Limits, key: &PlanKey) -> SavedPlan {
        SavedPlan {
            schema: PLAN_SCHEMA,
            node: options.node.clone(),
            catalog_source: options.catalog_source.as_ref().map(|_| options.source_words()),
            wait_s: options.wait.as_secs(),
            limits: SavedLimits::of(limits),
            foundation_sha256: foundation.digest.clone(),
            credentials_key: key.id(),
            modules: Vec::new(),
            mesh: String::new(),
            effect: Vec::new(),
        }
    }

    /// Adds one module's plan: its manifest's and its plugin's sha256, and the keyed digest
    /// of the credentials it is granted.
    pub fn add(
        &mut self,
        module: &str,
        (manifest_sha256, plugin_sha256): (&Sha256, &Sha256),
        credentials_digest: &str,
        plan: &Plan,
    ) {
        self.modules.push(SavedModule {
            module: module.to_string(),
            manifest_sha256: manifest_sha256.clone(),
            plugin_sha256: plugin_sha256.clone(),
            credentials_digest: credentials_digest.to_string(),
            summary: plan.summary.clone(),
            commands: plan.words(),
        });
    }

    /// Writes the plan file, readable by this user only: it holds a keyed digest of credentials.
    pub fn write(&self, path: &Path) -> Result<(), PlanFileError> {
        use std::io::Write;
        let unwritable = |source| PlanFileError::Unwritable { path: path.to_path_buf(), source };
        let mut text = serde_json::to_string_pretty(self).expect("a saved plan serialises");
        text.push('\n');
        let mut file = crate::files::create_output(path, "a plan").map_err(unwritable)?;
        file.write_all(text.as_bytes())
            .map_err(|e| unwritable(crate::files::FileError::Io { path: path.to_path_buf(), error: Arc::new(e) }))
    }

    /// Reads a plan file, naming it in any error.
    pub fn read(path: &Path) -> Result<SavedPlan, PlanFileError> {
        let bytes = crate::files::read_bounded(path, PLAN_FILE_BYTES)
            .map_err(|source| PlanFileError::Unreadable { path: path.to_path_buf(), source })?;
        SavedPlan::parse(&bytes).map_err(|error| match error {
            PlanFileError::Fault(source) => PlanFileError::Unusable { path: path.to_path_buf(), source },
            other => other,
        })
    }

    /// Parses a plan file's bytes.
    pub fn parse(bytes: &[u8]) -> Result<SavedPlan, PlanFileError> {
        /// Only the format, read first: a plan of another format is named as one, whatever its
        /// other fields.
        #[derive(Deserialize)]
        struct Format {
            schema: u32,
        }
        let not_a_plan = |e| PlanFault::NotAPlan { source: Arc::new(e) };
        let format: Format = serde_json::from_slice(bytes).map_err(not_a_plan)?;
        if format.schema != PLAN_SCHEMA {
            return Err(PlanFault::OtherFormat { format: format.schema }.into());
        }
        let plan: SavedPlan = serde_json::from_slice(bytes).map_err(not_a_plan)?;
        // The node is read back into messages and compared with the run's: held to the rule
        // `--node` is held to.
        crate::model::options::node_problem(&plan.node).map_err(|problem| PlanFault::Node { problem })?;
        Ok(plan)
    }

    /// The first way `now` (made from today's inputs) differs from this saved plan.
    pub fn first_difference(&self, now: &SavedPlan) -> Option<PlanDifference> {
        if self.node != now.node {
            return Some(PlanDifference::Node { planned: self.node.clone(), now: now.node.clone() });
        }
        if self.mesh != now.mesh {
            return Some(PlanDifference::Mesh { planned: self.mesh.clone(), now: now.mesh.clone() });
        }
        if self.catalog_source != now.catalog_source {
            let (planned, now) = (self.catalog_source.clone(), now.catalog_source.clone());
            return Some(PlanDifference::CatalogSource { planned, now });
        }
        if self.wait_s != now.wait_s {
            return Some(PlanDifference::Wait { planned: self.wait_s, now: now.wait_s });
        }
        if self.limits != now.limits {
            return Some(PlanDifference::Limits { planned: self.limits.clone(), now: now.limits.clone() });
        }
        if self.foundation_sha256 != now.foundation_sha256 {
            let (planned, now) = (self.foundation_sha256.clone(), now.foundation_sha256.clone());
            return Some(PlanDifference::Foundation { planned, now });
        }
        let grants_any = self.modules.iter().any(|m| !m.credentials_digest.is_empty());
        if grants_any && !self.credentials_key.eq_ignore_ascii_case(&now.credentials_key) {
            let (planned, now) = (self.credentials_key.clone(), now.credentials_key.clone());
            return Some(PlanDifference::CredentialsKey { planned, now });
        }
        let names = |plan: &SavedPlan| plan.modules.iter().map(|m| m.module.clone()).collect::<Vec<_>>();
        if names(self) != names(now) {
            return Some(PlanDifference::Modules { planned: names(self), now: names(now) });
        }
        for (saved, now) in self.modules.iter().zip(&now.modules) {
            let module = saved.module.clone();
            if !saved.credentials_digest.eq_ignore_ascii_case(&now.credentials_digest) {
                return Some(PlanDifference::Credentials { module });
            }
            if saved.manifest_sha256 != now.manifest_sha256 {
                let (planned, now) = (saved.manifest_sha256.clone(), now.manifest_sha256.clone());
                return Some(PlanDifference::Manifest { module, planned, now });
            }
            if saved.plugin_sha256 != now.plugin_sha256 {
                let (planned, now) = (saved.plugin_sha256.clone(), now.plugin_sha256.clone());
                return Some(PlanDifference::Plugin { module, planned, now });
            }
            // The saved plan's commands are read back into commands, and compared as such.
            let saved_plan = Plan::from_words(saved.summary.clone(), saved.commands.clone());
            let now_plan = Plan::from_words(now.summary.clone(), now.commands.clone());
            if saved_plan != now_plan {
                return Some(PlanDifference::Plan { module, how: plan_difference(&saved_plan, &now_plan) });
            }
        }
        if self.effect != now.effect {
            let at = (0..self.effect.len().max(now.effect.len())).find(|&i| self.effect.get(i) != now.effect.get(i))?;
            let (planned, now) = (self.effect.get(at).cloned(), now.effect.get(at).cloned());
            return Some(PlanDifference::MeshMoved { planned, now });
        }
        None
    }
}

/// The first difference between two plans, in words.
pub fn plan_difference(before: &Plan, after: &Plan) -> String {
    let shown = |command: Option<&PluginCommand>| command.map(|c| format!("`tell {c}`"));
    for i in 0..before.commands.len().max(after.commands.len()) {
        let (was, is) = (before.commands.get(i), after.commands.get(i));
        if was != is {
            return format!(
                "command {} is {} now, and was {}",
                i + 1,
                shown(is).unwrap_or_else(|| "gone".into()),
                shown(was).unwrap_or_else(|| "not there".into())
            );
        }
    }
    for i in 0..before.summary.len().max(after.summary.len()) {
        let (was, is) = (before.summary.get(i), after.summary.get(i));
        if was != is {
            let shown = |line: Option<&String>| line.map_or("gone".to_string(), |l| format!("`{l}`"));
            return format!("summary line {} is {} now, and was {}", i + 1, shown(is), shown(was));
        }
    }
    "no difference".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved() -> SavedPlan {
        saved_with(&KEY, "")
    }

    static KEY: std::sync::LazyLock<PlanKey> = std::sync::LazyLock::new(PlanKey::ephemeral);

    fn saved_with(key: &PlanKey, credentials: &str) -> SavedPlan {
        let mut plan = SavedPlan::new(&RunOptions::default(), &Foundation::default(), &Limits::default(), key);
        plan.add(
            "postgres",
            (&Sha256::of(b"manifest"), &Sha256::of(b"plugin")),
            credentials,
            &Plan::from_words(vec!["s".into()], vec![vec!["push".into()]]),
        );
        plan
    }

    #[test]
    fn reads_back_what_it_writes() {
        let dir = tempfile::tempdir().unwrap();
        saved().write(&dir.path().join("p")).unwrap();
        assert_eq!(SavedPlan::read(&dir.path().join("p")).unwrap(), saved());
    }

    #[test]
    fn a_plan_whose_node_is_no_node_name_is_refused_naming_the_rule() {
        let mut plan = serde_json::to_value(saved()).unwrap();
        plan["node"] = "node-1;rm".into();
        let why = SavedPlan::parse(&serde_json::to_vec(&plan).unwrap()).unwrap_err().to_string();
        assert!(why.contains("its `node` `node-1;rm` cannot be used: a node name is an RFC 1123 subdomain"), "{why}");
    }

    #[test]
    fn names_the_first_difference() {
        assert_eq!(saved().first_difference(&saved()), None);
        let mut moved = saved();
        moved.modules[0].manifest_sha256 = Sha256::of(b"another manifest");
        let why = saved().first_difference(&moved).unwrap();
        assert!(matches!(&why, PlanDifference::Manifest { module, .. } if module == "postgres"), "{why:?}");
        assert!(why.to_string().contains("`postgres` module's manifest changed"));
        let mut replanned = saved();
        replanned.modules[0].commands[0] = vec!["push".into(), "node-2".into()];
        let why = saved().first_difference(&replanned).unwrap().to_string();
        assert!(why.contains("command 1 is `tell push node-2` now, and was `tell push`"), "{why}");
    }

    #[test]
    fn a_plan_whose_credentials_another_key_digested_says_it_cannot_check_them() {
        let (here, there) = (PlanKey::ephemeral(), PlanKey::ephemeral());
        let digest = |key: &PlanKey| key.digest(b"superuser");
        let made_there = saved_with(&there, &digest(&there));
        let why = made_there.first_difference(&saved_with(&here, &digest(&here))).unwrap().to_string();
        assert!(why.contains("another plan key") && why.contains(&there.id()), "{why}");
        // Made here, it is checked: the same credentials pass, another value is named.
        let made_here = saved_with(&here, &digest(&here));
        assert_eq!(made_here.first_difference(&saved_with(&here, &digest(&here))), None);
        let changed = saved_with(&here, &here.digest(b"another"));
        assert!(made_here.first_difference(&changed).unwrap().to_string().contains("credentials"));
        // A plan granting no credential has nothing to check and goes anywhere.
        assert_eq!(saved_with(&there, "").first_difference(&saved_with(&here, "")), None);
    }

    #[test]
    fn refuses_another_format() {
        let mut plan = serde_json::to_value(saved()).unwrap();
        plan["schema"] = 1.into();
        let err = SavedPlan::parse(plan.to_string().as_bytes()).unwrap_err();
        assert!(err.to_string().contains("a plan of format 1; this host reads format 4"), "{err}");
        // A plan of this format with a field missing is no plan, not a plan that moved.
        let mut partial = serde_json::to_value(saved()).unwrap();
        partial.as_object_mut().unwrap().remove("effect");
        let err = SavedPlan::parse(partial.to_string().as_bytes()).unwrap_err();
        let cause = std::error::Error::source(&err).map(ToString::to_string).unwrap_or_default();
        assert!(cause.contains("missing field `effect`"), "{err}: {cause}");
    }

    #[test]
    fn the_effect_is_kept_and_compared_as_data() {
        let effect = SavedEffect::Container {
            container: "mesh-bus".into(),
            module: "nats".into(),
            effect: crate::effect::ContainerEffect::Kept { image: "nats:2".into() },
        };
        let mut planned = saved();
        planned.effect = vec![effect.clone()];
        let text = serde_json::to_value(&planned).unwrap();
        assert_eq!(text["effect"][0]["kind"], "container", "{text}");
        assert_eq!(SavedPlan::parse(text.to_string().as_bytes()).unwrap(), planned);
        let mut moved = planned.clone();
        moved.effect = vec![SavedEffect::Secret { module: "nats".into(), secret: "s".into(), accepted: false }];
        let why = planned.first_difference(&moved).unwrap();
        assert_eq!(why, PlanDifference::MeshMoved { planned: Some(effect), now: moved.effect.first().cloned() });
        assert!(
            why.to_string()
                .ends_with("would now do `secret nats/s sealed`, where the plan said `mesh-bus kept nats:2 (by nats)`"),
            "{why}"
        );
    }
}
