//! What mends an error or a hold, as data: an action and its arguments. Every typed error and
//! every hold of the runtime (and of the live mesh) says its remedy through a method on the
//! value itself, so a caller acts on it without reading words or downcasting; the command line
//! words it, and the stream carries it as it is.

use std::fmt;
use std::path::PathBuf;

/// What the caller can do about an ending, as an action and its arguments.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "action", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Remedy {
    /// Run again later, unchanged: what stopped it passes by itself (another run's lock, a
    /// control plane that did not answer in time).
    RetryLater,
    /// Run again once another run's lock is let go (or wait for it with `--lock-timeout`):
    /// the holder's run is still under way, and the lock named goes at its end.
    WaitForLock {
        /// The holder's lock id, as `check` and the holder's own record name it.
        id: String,
    },
    /// Break a lock a run that is gone left: `mesh-adopt unlock ID`, with `--force` when its
    /// holder may still run elsewhere (it is then fenced).
    Unlock {
        /// The lock's id.
        id: String,
        /// Whether the holder may still be running, so breaking it needs `--force`.
        force: bool,
    },
    /// Clear a lock file of this machine's that names no holder (what a power loss leaves):
    /// `mesh-adopt unlock --damaged FILE`.
    ClearDamagedLock {
        /// The lock file, as the run that found it named it.
        file: PathBuf,
    },
    /// Give a run option another value.
    SetOption {
        /// The option, as the command line names it (`--node`, `--wait`).
        option: String,
        /// What its value must be, in words.
        must: String,
    },
    /// Set one of the sandbox's limits otherwise.
    SetLimit {
        /// The limit, as `Limits` names its field (`wall_time`).
        limit: String,
        /// What it must be, in words (`more than 1620s`).
        must: String,
    },
    /// Build a module's plugin from its source, and place it: `mesh-adopt build MODULE`.
    BuildPlugin {
        /// The module.
        module: String,
    },
    /// Set a manifest's pin to the plugin it ships, when that plugin is the one to ship.
    PinPlugin {
        /// The module.
        module: String,
        /// The manifest to write it in.
        manifest: PathBuf,
        /// The sha256 to pin.
        sha256: String,
    },
    /// Mend a file the run read: a manifest, the foundation bundle, the live configuration, a
    /// credential, a saved plan, a recording.
    EditFile {
        /// The file.
        path: PathBuf,
        /// Where in it, when one place is to blame: a JSON Pointer in a JSON document
        /// (`/adopts/0`), a key in a TOML one (`mesh.credentials`).
        at: Option<String>,
    },
    /// Make the saved plan again (`check --out`): what it was made from has changed.
    MakePlanAgain,
    /// Look at the mesh: an operator's judgement is needed before any run goes on (the mesh
    /// moved under a run, a node and its control plane disagree).
    InspectMesh {
        /// What to look at, in words.
        what: String,
    },
    /// Put images on a node that lacks them (from the registry they come from, or built there
    /// as that node builds its images): no container, volume or secret of the mesh is touched.
    ProvideImages {
        /// The node.
        node: String,
        /// The images, as the modules' manifests name them.
        images: Vec<String>,
    },
    /// Mend what each of these modules' outcomes names, then run again.
    MendModules {
        /// The modules.
        modules: Vec<String>,
    },
    /// A `Run` runs once, with one record: build another to run again.
    BuildAnotherRun,
    /// Nothing the caller can change: report it to whoever keeps the plugin or the host.
    Report,
}

impl Remedy {
    /// Whether the same run, made again unchanged, may go through: a script's "retry or not".
    pub fn retry(&self) -> bool {
        matches!(self, Remedy::RetryLater | Remedy::WaitForLock { .. })
    }
}

/// The remedy as a person reads it: what to do, with its arguments.
impl fmt::Display for Remedy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Remedy::RetryLater => f.write_str("run it again later"),
            Remedy::WaitForLock { id } => {
                write!(f, "run it again once lock `{id}` is let go, or wait for it with `--lock-timeout`")
            }
            Remedy::Unlock { id, force: false } => write!(f, "break the lock with `mesh-adopt unlock {id}`"),
            Remedy::Unlock { id, force: true } => write!(
                f,
                "break the lock with `mesh-adopt unlock {id} --force` once its run is known gone (a run still \
                 holding it is fenced)"
            ),
            Remedy::ClearDamagedLock { file } => {
                write!(f, "clear the damaged lock with `mesh-adopt unlock --damaged {}`", file.display())
            }
            Remedy::SetOption { option, must } => write!(f, "give {option} {must}"),
            Remedy::SetLimit { limit, must } => write!(f, "set limits.{limit} to {must}"),
            Remedy::BuildPlugin { module } => write!(f, "build it with `mesh-adopt build {module}`"),
            Remedy::PinPlugin { manifest, sha256, module } => write!(
                f,
                "rebuild and pin it from its source (`mesh-adopt build {module}`), or, if this plugin is the one \
                 to ship, set `adopt.sha256` to \"{sha256}\" in `{}`",
                manifest.display()
            ),
            Remedy::EditFile { path, at: Some(at) } => write!(f, "mend `{at}` in `{}`", path.display()),
            Remedy::EditFile { path, at: None } => write!(f, "mend `{}`", path.display()),
            Remedy::MakePlanAgain => f.write_str("make the plan again with `mesh-adopt check --out PLAN`"),
            Remedy::InspectMesh { what } => write!(f, "look at the mesh before running again: {what}"),
            Remedy::ProvideImages { node, images } => write!(
                f,
                "put the image{} {} on node `{node}` (from where that node's images come), then run again: no \
                 container or data is touched",
                if images.len() == 1 { "" } else { "s" },
                images.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
            ),
            Remedy::MendModules { modules } => {
                write!(f, "mend what the outcome of {} names, then run again", modules.join(", "))
            }
            Remedy::BuildAnotherRun => f.write_str("build another run with `Run::builder`: a run runs once"),
            Remedy::Report => f.write_str("report it to whoever keeps the plugin or the host"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remedy_is_an_action_and_its_arguments_on_the_wire() {
        let unlock = Remedy::Unlock { id: "abc".into(), force: false };
        assert_eq!(
            serde_json::to_value(&unlock).unwrap(),
            serde_json::json!({"action": "unlock", "id": "abc", "force": false})
        );
        assert_eq!(serde_json::to_value(Remedy::RetryLater).unwrap(), serde_json::json!({"action": "retry-later"}));
        assert!(Remedy::RetryLater.retry() && !unlock.retry());
        assert_eq!(unlock.to_string(), "break the lock with `mesh-adopt unlock abc`");
        let image = Remedy::ProvideImages { node: "node-1".into(), images: vec!["nats:2".into()] };
        assert_eq!(
            serde_json::to_value(&image).unwrap(),
            serde_json::json!({"action": "provide-images", "node": "node-1", "images": ["nats:2"]})
        );
        assert_eq!(serde_json::from_value::<Remedy>(serde_json::to_value(&image).unwrap()).unwrap(), image);
        assert!(image.to_string().starts_with("put the image `nats:2` on node `node-1`"), "{image}");
        let damaged = Remedy::ClearDamagedLock { file: "/state/locks/a-b.lock".into() };
        assert_eq!(
            serde_json::to_value(&damaged).unwrap(),
            serde_json::json!({"action": "clear-damaged-lock", "file": "/state/locks/a-b.lock"})
        );
        assert_eq!(
            damaged.to_string(),
            "clear the damaged lock with `mesh-adopt unlock --damaged /state/locks/a-b.lock`"
        );
    }
}
