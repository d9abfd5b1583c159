//! Adopting: each module preflight checked, in order, checked again on the instance that
//! adopts, held to the plan an operator reviewed, and the rules asked after each.

use std::sync::Arc;

use crate::effect::Violation;
use crate::model::ending::Ending;
use crate::model::{Export, Plan};
use crate::run::foresight::Foreseen;
use crate::run::plan_file::plan_difference;
use crate::run::preflight::Loaded;
use crate::run::reread::Rereads;
use crate::run::{ModuleOutcome, Run};

impl Run<'_> {
    /// Adopts each module that preflight checked, in order, each checked again first (the mesh
    /// may have moved) and held to the plan preflight showed, the mesh read again before each
    /// push. Returns the invariants broken, and, when a re-read found the mesh moved, how much
    /// of the mesh's account was this run's: its changes, touches and seals up to then.
    pub(super) async fn adopt_all(
        &self,
        outcomes: &mut [(String, ModuleOutcome)],
        loaded: Vec<Option<Loaded>>,
        foreseen: Option<&Foreseen>,
    ) -> (Vec<Violation>, Option<Ours>) {
        let mut stopped: Option<(Ending, String)> = None;
        let mut violations = Vec::new();
        let rereads =
            foreseen.map(|f| Arc::new(Rereads::new(self.mesh.clone(), self.transcript.clone(), f.ahead.clone())));
        // What the mesh reports before anything of this run's: what a push of this run adds to.
        let mut ours = Ours::of(&self.mesh.audit());
        for ((module, outcome), ready) in outcomes.iter_mut().zip(loaded) {
            // Between modules the executor has a turn: an embedder's cancel, signalled at the
            // last module's outcome, stops the run before the next one makes any call.
            crate::wait::yield_now().await;
            if let Some((code, because)) = &stopped {
                *outcome = ModuleOutcome::NotRun { because: because.clone(), code: *code, remedy: None };
                self.stream_outcome(module, outcome);
                continue;
            }
            let (ModuleOutcome::Checked(reviewed), Some(ready)) = (&*outcome, ready) else { continue };
            *outcome = self.adopt(module, reviewed.clone(), &ready, rereads.clone()).await;
            // The control plane's own check refused a command of this module's: the run's lock
            // was broken under it. The module is the host's refusal, whatever its plugin made
            // of it, and nothing more is sent, not even the next module's first call.
            if let Some(broken) = self.mesh.lock_broken() {
                self.say_lock_broken(&broken);
                *outcome = ModuleOutcome::Refused {
                    during: Export::Adopt,
                    code: Some(crate::model::Refusal::LOCK_BROKEN.into()),
                    message: format!(
                        "stopped at `{}`: the control plane refused it because this run's lock `{}` was no longer \
                         the mesh's{}; it was broken under the run, and nothing more was sent",
                        broken.refused,
                        broken.id,
                        broken.by.as_ref().map(|by| format!(" (it is held by {})", by.described())).unwrap_or_default()
                    ),
                };
                self.say_secrets_left(module, outcome);
                violations = self.violations(module, outcome, foreseen, &self.mesh.audit());
                self.stream_outcome(module, outcome);
                stopped = Some((
                    Ending::LockBroken,
                    "this run's lock on the mesh was broken under it: nothing more was sent".into(),
                ));
                continue;
            }
            // A push the re-read kept from a mesh that moved: the module is the host's refusal,
            // whatever its plugin made of the denied tell.
            let moved = rereads.as_ref().and_then(|r| r.stopped(module));
            if let Some(refused) = moved {
                let unseen = matches!(&refused, ModuleOutcome::Refused { code: Some(code), .. }
                    if code == crate::model::Refusal::MESH_UNSEEN);
                *outcome = refused;
                let audit = ours.cut(self.mesh.audit());
                violations = self.violations(module, outcome, foreseen, &audit);
                self.stream_outcome(module, outcome);
                stopped = Some(match unseen {
                    true => (Ending::MeshUnseen, format!("the mesh could not be read again before `{module}`'s push")),
                    false => (
                        Ending::MeshMoved,
                        format!(
                            "the mesh moved before `{module}`'s push (another run or an operator may be at work on it)"
                        ),
                    ),
                });
                continue;
            }
            self.say_secrets_left(module, outcome);
            // What the module pushed is checked once it has landed, before the next module
            // moves anything: the phase stops at the first difference.
            let mut landed = Vec::new();
            if let Some(foreseen) = foreseen
                && self.transcript.pushed(module)
            {
                self.mesh.land_pushes(self.options.wait).await;
                landed = self.verify_landed(module, foreseen).await;
            }
            let audit = self.mesh.audit();
            ours = Ours::of(&audit);
            violations = self.violations(module, outcome, foreseen, &audit);
            for violation in landed {
                if !violations.contains(&violation) {
                    violations.push(violation);
                }
            }
            self.stream_outcome(module, outcome);
            if !violations.is_empty() {
                stopped = Some((Ending::RuleBroken, "an invariant broke".into()));
            } else if !outcome.succeeded() {
                stopped = Some((Ending::EarlierModuleFailed, format!("`{module}` did not succeed")));
            }
        }
        let moved = rereads.is_some_and(|r| r.any_stopped());
        (violations, moved.then_some(ours))
    }

    /// One module's adopt: checked again on the instance that adopts, refused if its plan is
    /// no longer the one reviewed, then held to it.
    pub(super) async fn adopt(
        &self,
        module: &str,
        reviewed: Plan,
        ready: &Loaded,
        rereads: Option<Arc<Rereads>>,
    ) -> ModuleOutcome {
        let mut rechecked = None;
        let before_push = rereads.map(|r| r as Arc<dyn crate::sandbox::state::BeforePush>);
        let turn = self
            .host
            .check_then_adopt(
                &ready.plugin,
                &ready.env,
                &ready.ctx,
                |plan| {
                    let same =
                        self.bounded_plan(module, plan.clone(), &ready.env).ok().is_some_and(|plan| plan == reviewed);
                    if !same {
                        rechecked = Some(plan.clone());
                    }
                    same
                },
                before_push,
            )
            .await;
        match turn {
            Err(error) => ModuleOutcome::Failed(self.stopped(module, error)),
            Ok((Err(refusal), _)) => self.refused(module, Export::Check, refusal),
            Ok((Ok(_), None)) => ModuleOutcome::Refused {
                during: Export::Check,
                code: Some(crate::model::Refusal::PLAN_CHANGED.into()),
                message: format!(
                    "its plan changed since preflight ({}), so it was not adopted: the mesh moved between the \
                     check an operator reviewed and this one. Nothing of `{module}` has been done",
                    plan_difference(&reviewed, rechecked.as_ref().unwrap_or(&reviewed))
                ),
            },
            Ok((Ok(_), Some(adopted))) => match adopted.result {
                Err(refusal) => self.refused(module, Export::Adopt, refusal),
                // A denial or a failed command the plugin went on past is never silent:
                // whatever it reports, the module is not adopted.
                Ok(report) => match self.transcript.trouble_passed_over(module) {
                    Some(trouble) => ModuleOutcome::Refused {
                        during: Export::Adopt,
                        code: Some(crate::model::Refusal::WENT_ON_PAST_A_FAILURE.into()),
                        message: self.scrub_in(
                            module,
                            format!(
                                "not adopted: {trouble}, and it went on as if it had not been, reporting success ({}); \
                                 a module whose plugin went past a denial or a failed command is not adopted",
                                report.summary
                            ),
                            "its report",
                        ),
                    },
                    None if adopted.left.is_empty() => {
                        ModuleOutcome::Adopted(self.scrub_in(module, report.summary, "its report"))
                    }
                    None => ModuleOutcome::Incomplete {
                        summary: self.scrub_in(module, report.summary, "its report"),
                        left: adopted.left,
                    },
                },
            },
        }
    }

    /// The secrets `module` carried into the control plane and no module accepted, by name and
    /// path, never value: the record's outcome event lists them too.
    pub(super) fn secrets_left(&self, module: &str) -> Vec<crate::events::SecretLeft> {
        self.transcript
            .secrets_unaccepted(module)
            .into_iter()
            .map(|(secret, at)| crate::events::SecretLeft { secret, at })
            .collect()
    }

    /// A module that stopped after carrying a secret it never had accepted says so in its
    /// outcome: the secret is in the control plane, at its path, until accepted or carried
    /// over, and the operator should know it is there.
    fn say_secrets_left(&self, module: &str, outcome: &mut ModuleOutcome) {
        let left = self.secrets_left(module);
        if outcome.succeeded() || left.is_empty() {
            return;
        }
        let named: Vec<String> = left.iter().map(|s| format!("`{}` at `{}`", s.secret, s.at)).collect();
        let (it, stays) = if left.len() == 1 { ("it", "stays") } else { ("they", "stay") };
        let note = self.scrub_in(
            module,
            format!(
                ". The secret{} it carried, {}, {stays} in the control plane until {it} {} accepted or carried over",
                if left.len() == 1 { "" } else { "s" },
                named.join(", "),
                if left.len() == 1 { "is" } else { "are" }
            ),
            "its outcome",
        );
        let add = |text: &mut String| {
            text.truncate(text.trim_end_matches(['.', ' ']).len());
            text.push_str(&note);
        };
        match outcome {
            ModuleOutcome::Refused { message, .. } => add(message),
            ModuleOutcome::Failed(stopped) => add(&mut stopped.report),
            _ => {}
        }
    }

    /// A plugin's refusal as the run reports it, scrubbed of secrets.
    pub(super) fn refused(&self, module: &str, during: Export, refusal: crate::model::Refusal) -> ModuleOutcome {
        // A code is a word of the plugin's, and could be a secret's value: shown redacted, it
        // would be no code, so it reads `redacted` (the secret shown is a violation as anywhere).
        let code = refusal.code.map(|code| {
            let scrubbed = self.scrub(module, code.clone());
            if scrubbed == code { code } else { crate::model::Refusal::REDACTED.to_string() }
        });
        ModuleOutcome::Refused { during, code, message: self.scrub(module, refusal.message) }
    }
}

/// How much of the mesh's account (its changes, touches and seals, in order) was there after
/// this run's last push that landed as predicted: once a re-read finds the mesh moved, what
/// comes after is another's, and the summary claims none of it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ours {
    changes: usize,
    touches: usize,
    sealed: usize,
}

impl Ours {
    /// The lengths of `audit`'s account now.
    fn of(audit: &crate::mesh::Audit) -> Ours {
        Ours { changes: audit.changes.len(), touches: audit.touches.len(), sealed: audit.sealed.len() }
    }

    /// `audit` with only this run's part of its account.
    pub(super) fn cut(self, mut audit: crate::mesh::Audit) -> crate::mesh::Audit {
        audit.changes.truncate(self.changes);
        audit.touches.truncate(self.touches);
        audit.sealed.truncate(self.sealed);
        audit
    }
}
