//! The end of a run as a person reads it: each module's outcome, what changed on the mesh,
//! and how far the mesh's rules were checked.

use mesh_adopt_runtime::effect::Rule;
use mesh_adopt_runtime::mesh::ContainerChange;
use mesh_adopt_runtime::run::{ModuleOutcome, RulesChecked, RunReport};
use mesh_adopt_runtime::screen::visible;

/// An outcome's word and its text for a person, plugin text made visible.
fn outcome_words(outcome: &ModuleOutcome) -> (&'static str, String) {
    (outcome.word(), outcome.shown())
}

/// Prints the summary that ends a run's text: the operator's answer to what happened.
pub fn print_summary(report: &RunReport) {
    crate::outln!("\nsummary");
    for (module, outcome) in &report.modules {
        let (word, text) = outcome_words(outcome);
        crate::outln!("  {module:<12} {word:<9} {}", text.replace('\n', "\n                         "));
    }
    let mut kept = Vec::new();
    let mut recreated = Vec::new();
    let mut created = Vec::new();
    let mut removed = Vec::new();
    for change in &report.changes {
        match change {
            ContainerChange::Kept { name, image } => kept.push(visible(&format!("{name} ({image})"))),
            ContainerChange::Recreated { name, from, to } => {
                recreated.push(visible(&format!("{name} ({from} → {to})")))
            }
            ContainerChange::Created { name, image } => created.push(visible(&format!("{name} ({image})"))),
            ContainerChange::Removed { name } => removed.push(visible(name)),
        }
    }
    for (word, list) in [("kept", kept), ("recreated", recreated), ("created", created), ("removed", removed)] {
        if !list.is_empty() {
            crate::outln!("  {word:<12} {}", list.join(", "));
        }
    }
    if report.violations.is_empty() {
        let how = match report.rules {
            RulesChecked::Verified => "all held: predicted before any push, then checked on what the node did",
            RulesChecked::Predicted => "predicted to hold; nothing checked what the node did after a push",
            RulesChecked::Inspected | RulesChecked::InspectedImages => {
                let (inspected, predicted): (Vec<Rule>, Vec<Rule>) =
                    Rule::ALL.iter().partition(|rule| report.rules.of_rule(**rule) == RulesChecked::Inspected);
                let names = |rules: Vec<Rule>| rules.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ");
                crate::outln!("  rules        all held");
                crate::outln!("               predicted, then inspected after each push: {}", names(inspected));
                crate::outln!("               predicted only (this mesh cannot show them): {}", names(predicted));
                return;
            }
            RulesChecked::NotPredicted => "not checked: preflight stopped before the effect was predicted",
        };
        crate::outln!("  rules        {how}");
    } else {
        for violation in &report.violations {
            crate::outln!("  BROKEN       {}", visible(&violation.to_string()));
        }
    }
}
