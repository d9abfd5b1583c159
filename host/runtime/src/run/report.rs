//! What a run did: each module's outcome, why preflight held a run back, and how far the
//! rules of the mesh were checked.

use crate::effect::Violation;
use crate::error::Error;
use crate::events::OutcomeWord;
use crate::mesh::ContainerChange;
use crate::model::exit::ExitStatus;
use crate::model::{Export, Input, Plan, Stopped};
use crate::record::screen::{visible, visible_lines};
use crate::run::plan_file::SavedPlan;

/// A module that cannot be used as it is, and why in words.
#[derive(Debug, Clone)]
pub struct Unusable {
    /// What is wrong with it.
    pub input: Input,
    /// The whole explanation, naming the file or the limit concerned.
    pub message: String,
    /// The typed error it came from, when the runtime raised one (a pin mismatch, a module
    /// that ships no plugin): what an installer acts on without reading the message.
    pub cause: Option<Error>,
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Unusable {}

/// How a module's turn ended.
#[derive(Debug, Clone)]
pub enum ModuleOutcome {
    /// `check` passed; this is its plan (a check-only run stops here).
    Checked(Plan),
    /// `adopt` told its whole plan and succeeded, with the plugin's one-line summary.
    Adopted(String),
    /// The plugin refused, in `check` or in `adopt`.
    Refused {
        /// In which export it refused.
        during: Export,
        /// The refusal's kind, kebab-case: the plugin's own code (none from a plugin of
        /// contract 0.1.0), or the host's where the host refuses for it.
        code: Option<String>,
        /// Its refusal, scrubbed of secrets.
        message: String,
    },
    /// `adopt` returned success before it told every command of its plan.
    Incomplete {
        /// The one-line summary it returned.
        summary: String,
        /// The commands of its plan it never told.
        left: Vec<crate::model::PluginCommand>,
    },
    /// An input of the run cannot be used: the module's catalogue entry, manifest, plugin or
    /// credentials, or a plugin the sandbox stopped while it was only being checked.
    Unusable(Unusable),
    /// The sandbox stopped the plugin during `adopt` (or during the check just before it).
    Failed(Stopped),
    /// Another module did not succeed, or preflight held the run, so this one was left alone.
    NotRun {
        /// Which module, or what, stopped the run first.
        because: String,
        /// Why, as a code: the hold's, or what stopped an earlier module.
        code: crate::model::ending::Ending,
        /// What mends it, when preflight held the run: the hold's remedy.
        remedy: Option<crate::remedy::Remedy>,
    },
}

impl ModuleOutcome {
    /// Whether the module did what the run asked of it.
    pub fn succeeded(&self) -> bool {
        matches!(self, ModuleOutcome::Checked(_) | ModuleOutcome::Adopted(_))
    }

    /// Why the module did not succeed, as a code; `None` when it did. A plugin's own refusal
    /// code is its outcome's `code`; the ending is then `refused`.
    pub fn ending(&self) -> Option<crate::model::ending::Ending> {
        use crate::model::ending::Ending;
        match self {
            ModuleOutcome::Checked(_) | ModuleOutcome::Adopted(_) => None,
            ModuleOutcome::Refused { code, .. } => Some(
                code.as_deref()
                    .and_then(Ending::from_code)
                    .filter(|e| Ending::HOST_REFUSALS.contains(e))
                    .unwrap_or(Ending::Refused),
            ),
            ModuleOutcome::Incomplete { .. } => Some(Ending::Incomplete),
            // A module unusable for a run option (a `--wait` its node cannot keep, limits its
            // plan outlasts) is the option's to mend.
            ModuleOutcome::Unusable(Unusable {
                cause:
                    Some(
                        crate::Error::RunOption(_)
                        | crate::Error::Module(
                            crate::run::problem::ModuleError::Wait { .. }
                            | crate::run::problem::ModuleError::PlanOutlastsWallTime { .. },
                        ),
                    ),
                ..
            }) => Some(Ending::BadOption),
            ModuleOutcome::Unusable(_) => Some(Ending::Unusable),
            ModuleOutcome::Failed(_) => Some(Ending::Stopped),
            ModuleOutcome::NotRun { code, .. } => Some(*code),
        }
    }

    /// What mends the outcome, as data, where the host knows: an unusable input's, a hold's, the
    /// host's refusals' (a plugin's own refusal says its remedy in its words).
    pub fn remedy(&self) -> Option<crate::remedy::Remedy> {
        use crate::model::ending::Ending;
        use crate::remedy::Remedy;
        match self {
            ModuleOutcome::Unusable(unusable) => unusable.cause.as_ref().map(crate::Error::remedy),
            ModuleOutcome::NotRun { remedy, .. } => remedy.clone(),
            ModuleOutcome::Refused { message, .. } => match self.ending()? {
                Ending::PlanChanged => Some(Remedy::MakePlanAgain),
                Ending::MeshMoved | Ending::MeshUnseen | Ending::LockBroken => {
                    Some(Remedy::InspectMesh { what: message.clone() })
                }
                Ending::WentOnPastAFailure | Ending::Redacted => Some(Remedy::Report),
                _ => None,
            },
            _ => None,
        }
    }

    /// The text a person reads for an outcome that did not succeed.
    pub fn problem(&self) -> Option<&str> {
        match self {
            ModuleOutcome::Refused { message, .. } => Some(message),
            ModuleOutcome::Unusable(unusable) => Some(&unusable.message),
            ModuleOutcome::Failed(stopped) => Some(&stopped.report),
            _ => None,
        }
    }
}

impl ModuleOutcome {
    /// The outcome's name, as the summary, the record and a scenario name it.
    pub fn word(&self) -> OutcomeWord {
        match self {
            ModuleOutcome::Checked(_) => OutcomeWord::Ready,
            ModuleOutcome::Adopted(_) => OutcomeWord::Adopted,
            ModuleOutcome::Refused { .. } => OutcomeWord::Refused,
            ModuleOutcome::Incomplete { .. } => OutcomeWord::Incomplete,
            ModuleOutcome::Unusable(_) => OutcomeWord::Unusable,
            ModuleOutcome::Failed(_) => OutcomeWord::Failed,
            ModuleOutcome::NotRun { .. } => OutcomeWord::NotRun,
        }
    }

    /// The outcome's text for a person, with every piece of plugin text made visible (see
    /// [`crate::record::screen`]) so none of it can pass for a line of the host's own.
    pub fn shown(&self) -> String {
        let tell = |c: &crate::model::PluginCommand| format!("  tell {}", visible(&c.to_string()));
        match self {
            ModuleOutcome::Checked(plan) => {
                let mut lines: Vec<String> = plan.summary.iter().map(|l| visible(l)).collect();
                lines.extend(plan.commands.iter().map(&tell));
                lines.join("\n")
            }
            ModuleOutcome::Adopted(summary) => visible(summary),
            // A refusal's own line breaks are kept, each line's other control characters made
            // visible: whoever shows it indents its lines under the module's, where none can
            // pass for a line of the host's.
            ModuleOutcome::Refused { during, code, message } => match code {
                Some(code) => format!("(in {during}, {code}) {}", visible_lines(message)),
                None => format!("(in {during}) {}", visible_lines(message)),
            },
            ModuleOutcome::Incomplete { summary, left } => {
                let mut lines = vec![format!(
                    "its adopt returned success ({}) before telling its whole plan; {} commands were never told:",
                    visible(summary),
                    left.len()
                )];
                lines.extend(left.iter().map(&tell));
                lines.join("\n")
            }
            ModuleOutcome::Unusable(unusable) => visible_lines(&unusable.message),
            ModuleOutcome::Failed(stopped) => visible_lines(&stopped.report),
            ModuleOutcome::NotRun { because, .. } => because.clone(),
        }
    }
}

/// `word: text`, as a person reads it.
impl std::fmt::Display for ModuleOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.word(), self.shown())
    }
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// Each module asked for, in order, with its outcome.
    pub modules: Vec<(String, ModuleOutcome)>,
    /// Container changes the mesh reports.
    pub changes: Vec<ContainerChange>,
    /// Invariants found broken; any fails the run.
    pub violations: Vec<Violation>,
    /// Which backend the run acted on.
    pub mesh: String,
    /// The plans preflight made and what they were made from: what `check --out` saves.
    pub made_from: SavedPlan,
    /// How far the rules of the mesh were checked.
    pub rules: RulesChecked,
    /// Why preflight held back every effect, when it did: what an installer acts on
    /// without reading the modules' `not run` texts.
    pub held: Option<Held>,
    /// The contract each module's plugin speaks, for the modules whose plugin loaded: what
    /// decides, say, whether a refusal without a code is one its contract allows.
    pub contracts: std::collections::BTreeMap<String, crate::model::contract::Contract>,
    /// The run's lock, when it could not be let go at the end: the next run is kept out until
    /// it goes, so the run fails whatever its modules did.
    pub lock_left: Option<crate::mesh::lock::LockLeft>,
}

/// Why preflight held back every effect of a run asked to adopt (a module that refuses in
/// its own turn, after preflight, is its outcome's to say).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Held {
    /// Preflight could not look at the mesh (its container engine erred or did not answer).
    MeshUnseen {
        /// What went wrong, in words.
        why: String,
    },
    /// A container on the node holds a secret, as the engine shows it mounted, that the
    /// control plane's `state` does not say the node holds: the node's word and the control
    /// plane's disagree, and a push would seal over what the container holds. Each says its
    /// remedy ([`crate::effect::SecretDisagreement::remedy`]); the hold's says all of theirs.
    SecretsDisagree {
        /// Each secret, with both sides.
        secrets: Vec<crate::effect::SecretDisagreement>,
    },
    /// The node lacks an image a module of the run runs: the control plane would refuse that
    /// module's build after the modules before it were adopted. Each says its remedy
    /// ([`crate::effect::MissingImage::remedy`]); the hold's names every image.
    ImagesMissing {
        /// Each image, with the module and container that run it.
        images: Vec<crate::effect::MissingImage>,
    },
    /// A module could not be used or refused (its outcome says which and why).
    Problems {
        /// The modules that did not succeed.
        modules: Vec<String>,
    },
    /// The saved plan the run was to apply was made from something that has changed.
    StalePlan {
        /// The first thing that differs.
        difference: crate::run::plan_file::PlanDifference,
    },
    /// The phase's pushes were predicted to break a rule of the mesh.
    RuleWouldBreak {
        /// The rules, in the order the documentation lists them.
        rules: Vec<crate::effect::Rule>,
    },
    /// A plugin showed a secret's value while it was being checked.
    SecretShown,
    /// This [`crate::Run`] had already run: its record holds that run alone.
    AlreadyRan,
    /// An option of the run cannot be used ([`crate::RunOptions::validate`] says so, or the
    /// mesh carries no run on its node): refused before anything reached the mesh.
    Options {
        /// Which option, and what is wrong with it.
        error: crate::model::options::OptionError,
    },
    /// Another run holds the mesh's lock (or its process died holding it, and it is left).
    Locked {
        /// Who holds it.
        holder: crate::mesh::lock::LockHolder,
    },
    /// The mesh's lock could not be taken: the mesh erred when asked (or did not answer).
    LockFailed {
        /// What went wrong, in words.
        why: String,
        /// The lock's id, when the mesh may have taken it before it erred and letting it go
        /// failed too: it is left, for `mesh-adopt unlock ID`.
        left: Option<String>,
    },
    /// This machine's lock file names no holder (empty, cut short, not a lock's line, not a
    /// regular file): no run takes the lock until the operator clears it.
    LockDamaged(crate::mesh::lock::DamagedLock),
}

impl Held {
    /// The hold as a code: what an installer branches on.
    pub fn code(&self) -> crate::model::ending::Ending {
        use crate::model::ending::Ending;
        match self {
            Held::MeshUnseen { .. } => Ending::MeshUnseen,
            Held::SecretsDisagree { .. } => Ending::SecretsDisagree,
            Held::ImagesMissing { .. } => Ending::ImagesMissing,
            Held::Problems { .. } => Ending::EarlierModuleFailed,
            Held::StalePlan { .. } => Ending::StalePlan,
            Held::RuleWouldBreak { .. } => Ending::RuleWouldBreak,
            Held::SecretShown => Ending::SecretShown,
            Held::AlreadyRan => Ending::AlreadyRan,
            Held::Options { .. } => Ending::BadOption,
            Held::Locked { holder } if holder.process_gone() => Ending::LockAbandoned,
            Held::Locked { .. } => Ending::LockHeld,
            Held::LockFailed { .. } => Ending::LockFailed,
            Held::LockDamaged(_) => Ending::LockDamaged,
        }
    }

    /// The outcome of a module the hold left alone, `because` in words.
    pub(crate) fn not_run(&self, because: &str) -> ModuleOutcome {
        ModuleOutcome::NotRun { because: because.to_string(), code: self.code(), remedy: Some(self.remedy()) }
    }

    /// What mends it, as data: retry later (another run's lock), break a lock whose run is
    /// gone, make a plan again, mend the modules named, or look at the mesh first.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        use crate::remedy::Remedy;
        match self {
            Held::MeshUnseen { why } => Remedy::InspectMesh { what: why.clone() },
            Held::Problems { modules } => Remedy::MendModules { modules: modules.clone() },
            Held::StalePlan { .. } => Remedy::MakePlanAgain,
            Held::RuleWouldBreak { rules } => Remedy::InspectMesh {
                what: format!(
                    "the pushes would break {}; see docs/rules.md",
                    rules.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
                ),
            },
            Held::SecretShown => Remedy::Report,
            Held::AlreadyRan => Remedy::BuildAnotherRun,
            Held::Locked { holder } if holder.process_gone() => Remedy::Unlock { id: holder.id.clone(), force: false },
            Held::Locked { holder } => Remedy::WaitForLock { id: holder.id.clone() },
            Held::LockFailed { left: Some(id), .. } => Remedy::Unlock { id: id.clone(), force: false },
            Held::LockFailed { left: None, .. } => Remedy::RetryLater,
            Held::LockDamaged(damaged) => Remedy::ClearDamagedLock { file: damaged.file.clone() },
            Held::Options { error } => error.remedy(),
            Held::SecretsDisagree { secrets } => Remedy::InspectMesh {
                what: secrets.iter().map(crate::effect::SecretDisagreement::to_look_at).collect::<Vec<_>>().join("; "),
            },
            Held::ImagesMissing { images } => {
                let mut wanted: Vec<String> = Vec::new();
                for missing in images {
                    if !wanted.contains(&missing.image) {
                        wanted.push(missing.image.clone());
                    }
                }
                let node = images.first().map(|m| m.node.clone()).unwrap_or_default();
                Remedy::ProvideImages { node, images: wanted }
            }
        }
    }
}

/// How far a run checked the rules of the mesh, so a summary never says "held" of what
/// nothing checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulesChecked {
    /// Preflight stopped before the effect was predicted.
    NotPredicted,
    /// Predicted from the mesh's state; nothing after a push was checked (a check, a run that
    /// adopted nothing, or a mesh that does not report what its node did).
    Predicted,
    /// Predicted, then after each push the containers inspected until they matched; what the
    /// node sealed cannot be seen on such a mesh (a live one).
    Inspected,
    /// As [`RulesChecked::Inspected`], but the mesh showed images only (an older inspect
    /// template): the rules on volumes were predicted, not inspected.
    InspectedImages,
    /// Predicted, then checked after each push on all the node did.
    Verified,
}

impl RulesChecked {
    /// How far this run checked `rule`: a live mesh's inspection sees containers, not what
    /// its node sealed, and rules of the plans alone (`one-owner`, `one-push`) are only ever
    /// predicted there.
    pub fn of_rule(self, rule: crate::effect::Rule) -> RulesChecked {
        use crate::effect::Rule;
        match (self, rule) {
            (
                RulesChecked::Inspected | RulesChecked::InspectedImages,
                Rule::CredentialNeverReplaced | Rule::OneOwner | Rule::OnePush,
            ) => RulesChecked::Predicted,
            (RulesChecked::InspectedImages, Rule::AdoptedKeepsVolumes | Rule::GenesisVolumesHeldOnce) => {
                RulesChecked::Predicted
            }
            (RulesChecked::InspectedImages, _) => RulesChecked::Inspected,
            (how, _) => how,
        }
    }

    /// The word the record uses.
    pub fn word(self) -> crate::events::CheckedWord {
        use crate::events::CheckedWord;
        match self {
            RulesChecked::NotPredicted => CheckedWord::NotPredicted,
            RulesChecked::Predicted => CheckedWord::Predicted,
            RulesChecked::Inspected | RulesChecked::InspectedImages => CheckedWord::Inspected,
            RulesChecked::Verified => CheckedWord::Verified,
        }
    }
}

impl RunReport {
    /// Every module succeeded, every invariant held, and the run let its lock go.
    pub fn succeeded(&self) -> bool {
        self.violations.is_empty() && self.lock_left.is_none() && self.modules.iter().all(|(_, o)| o.succeeded())
    }

    /// The outcome for `module`.
    pub fn outcome(&self, module: &str) -> Option<&ModuleOutcome> {
        self.modules.iter().find(|(m, _)| m == module).map(|(_, o)| o)
    }

    /// The process's exit status for this run: success when everything succeeded, unusable
    /// when an input (an option included) could not be used, failed for a refusal, an
    /// incomplete or stopped adopt, a broken invariant or a lock left.
    pub fn exit_status(&self) -> ExitStatus {
        match self.ending() {
            None => ExitStatus::Success,
            // An input that cannot be used is told first, wherever it stands among the modules.
            Some(_) if self.modules.iter().any(|(_, o)| matches!(o, ModuleOutcome::Unusable(_))) => {
                ExitStatus::Unusable
            }
            Some(ending) => ending.exit(),
        }
    }

    /// Why the run did not succeed, as a code; `None` when it did. Preflight's hold first,
    /// then a lock left, the first module that did not succeed (a module left alone after it
    /// says the same), then a rule broken.
    pub fn ending(&self) -> Option<crate::model::ending::Ending> {
        use crate::model::ending::Ending;
        if self.succeeded() {
            return None;
        }
        // A hold on problems in modules is theirs to say: the first one's ending is the run's.
        if let Some(held) = self.held.as_ref().filter(|h| !matches!(h, Held::Problems { .. })) {
            return Some(held.code());
        }
        if self.lock_left.is_some() {
            return Some(Ending::LockLeft);
        }
        let first = self.modules.iter().find(|(_, o)| !o.succeeded() && !matches!(o, ModuleOutcome::NotRun { .. }));
        if let Some(ending) = first.and_then(|(_, o)| o.ending()) {
            return Some(ending);
        }
        if !self.violations.is_empty() {
            return Some(Ending::RuleBroken);
        }
        self.modules.iter().find_map(|(_, o)| o.ending())
    }

    /// What mends the run's ending, as data, where the host knows it.
    pub fn remedy(&self) -> Option<crate::remedy::Remedy> {
        if self.succeeded() {
            return None;
        }
        // A hold on problems in modules is mended as the first of them says, where it says.
        if let Some(held) = &self.held {
            let first = self.modules.iter().find_map(|(_, o)| (!o.succeeded()).then(|| o.remedy()).flatten());
            return match (held, first) {
                (Held::Problems { .. }, Some(remedy)) => Some(remedy),
                _ => Some(held.remedy()),
            };
        }
        if let Some(left) = &self.lock_left {
            return Some(left.remedy());
        }
        self.modules.iter().find(|(_, o)| !o.succeeded()).and_then(|(_, o)| o.remedy())
    }

    /// [`RunReport::exit_status`] as the number the process exits with.
    pub fn exit_code(&self) -> u8 {
        self.exit_status().code()
    }
}
