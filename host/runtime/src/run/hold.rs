//! The hold: whatever stops a run before its first effect (a module that could not be used
//! or refused, a saved plan that no longer applies, a rule the pushes would break, a secret
//! shown, a mesh that could not be seen), with the words each module left alone is given.

use crate::effect::Rule;
use crate::run::foresight::Foreseen;
use crate::run::plan_file::SavedPlan;
use crate::run::{Held, Mode, ModuleOutcome, Run, RunReport};

impl Run<'_> {
    /// Why preflight holds back every effect of the run, with the words each module left
    /// alone is given; none when nothing stops a run that adopts (or a check, on a mesh that
    /// could be seen). Checking or adopting, nothing is ready on a mesh preflight could not
    /// look at.
    pub(super) fn hold(
        &self,
        mode: Mode,
        outcomes: &[(String, ModuleOutcome)],
        foreseen: Option<&Foreseen>,
        saved: &SavedPlan,
    ) -> Option<(Held, String)> {
        let problems: Vec<String> =
            outcomes.iter().filter(|(_, o)| !o.succeeded()).map(|(m, _)| format!("`{m}`")).collect();
        let predicted_broken = foreseen.map(|f| f.broken.as_slice()).unwrap_or_default();
        if let Some(why) = foreseen.and_then(|f| f.view.unseen.clone()) {
            let because = format!("preflight could not look at the mesh: {why}; nothing was adopted");
            return Some((Held::MeshUnseen { why }, because));
        }
        // What the node says of itself stops a check as it stops a run: no plan is ready on a
        // node that cannot run its image, or whose control plane would seal over what it holds.
        if let Some(foreseen) = foreseen
            && let Some(held) = node_disagrees(foreseen)
        {
            return Some(held);
        }
        if mode == Mode::Check {
            return None;
        }
        let stale = match (&self.saved_plan, problems.is_empty()) {
            (Some(earlier), true) => earlier.first_difference(saved),
            _ => None,
        };
        // A secret value a plugin showed while checking is a problem found before any effect,
        // like a refusal: nothing moves. (Looked for only when nothing else stops the run.)
        let clear = problems.is_empty() && stale.is_none() && predicted_broken.is_empty();
        let shown = if clear { self.secrets_shown() } else { Vec::new() };
        Some(match (stale, predicted_broken.first(), shown.first()) {
            (Some(difference), _, _) => {
                let because = format!("the saved plan does not apply: {difference}; nothing was adopted");
                (Held::StalePlan { difference }, because)
            }
            (None, Some(rule), _) => {
                let mut names: Vec<Rule> = predicted_broken.iter().map(|v| v.rule).collect();
                names.dedup();
                let also = match &names[1..] {
                    [] => String::new(),
                    more => format!(", and {}", more.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")),
                };
                let because = format!(
                    "preflight predicted that the phase's pushes would break rule `{}` ({}){also}; nothing was \
                     adopted",
                    rule.rule, rule.detail
                );
                (Held::RuleWouldBreak { rules: names }, because)
            }
            (None, None, Some(secret)) => {
                let because = format!("preflight caught a secret shown: {}; nothing was adopted", secret.detail);
                (Held::SecretShown, because)
            }
            (None, None, None) if problems.is_empty() => return None,
            (None, None, None) => {
                let modules = outcomes.iter().filter(|(_, o)| !o.succeeded()).map(|(m, _)| m.clone()).collect();
                let because = format!("preflight found problems in {}; nothing was adopted", problems.join(", "));
                (Held::Problems { modules }, because)
            }
        })
    }

    /// The options a run refuses before anything reaches the mesh, as
    /// [`crate::RunOptions::validate`] refuses them, and a node the mesh cannot carry a run on
    /// ([`crate::mesh::Mesh::serves`]): an embedder who never validated gets the same refusal
    /// as one who did, and the command line's.
    pub(super) fn unusable_options(&self) -> Option<(Held, String)> {
        use crate::model::options::{OptionError, OptionProblem, RunOptionName};
        let (option, problem) = match self.options.problem() {
            Some(problem) => problem,
            None => {
                let why = self.mesh.serves(&self.options.node).err()?;
                (RunOptionName::Node, OptionProblem::NodeNotServed { why })
            }
        };
        let error = OptionError { option, problem };
        let because = format!("{error}; nothing was done");
        Some((Held::Options { error }, because))
    }

    /// The report of a second [`Run::run`] on this run: nothing done, nothing recorded.
    pub(super) fn already_ran(&self, modules: &[String]) -> RunReport {
        let because = "this run had already run: a run has one record; make another with `Run::builder`".to_string();
        self.held_back(modules, Held::AlreadyRan, because)
    }

    /// The report of a run held back before anything moved: every module not run, `because`.
    pub(super) fn held_back(&self, modules: &[String], held: Held, because: String) -> RunReport {
        RunReport {
            modules: modules.iter().map(|m| (m.clone(), held.not_run(&because))).collect(),
            changes: Vec::new(),
            violations: Vec::new(),
            mesh: self.mesh.summary(),
            made_from: SavedPlan::new(&self.options, &self.foundation, self.host.limits(), &self.plan_key),
            rules: crate::run::RulesChecked::NotPredicted,
            held: Some(held),
            contracts: Default::default(),
            lock_left: None,
        }
    }
}

/// The hold of a run whose node says otherwise than the run would need: images it lacks, then
/// secrets its containers hold that the control plane does not say it holds; each named with
/// both sides.
fn node_disagrees(foreseen: &Foreseen) -> Option<(Held, String)> {
    let said = |items: Vec<String>| items.join("; ");
    if !foreseen.missing.is_empty() {
        let because = format!(
            "preflight found that {}; nothing was adopted",
            said(foreseen.missing.iter().map(ToString::to_string).collect())
        );
        return Some((Held::ImagesMissing { images: foreseen.missing.clone() }, because));
    }
    if !foreseen.disagreeing.is_empty() {
        let because = format!(
            "preflight found the node and its control plane disagreeing: {}; nothing was adopted",
            said(foreseen.disagreeing.iter().map(ToString::to_string).collect())
        );
        return Some((Held::SecretsDisagree { secrets: foreseen.disagreeing.clone() }, because));
    }
    None
}
