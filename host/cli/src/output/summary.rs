//! The end of a run as a person reads it: each module's outcome, what changed on the mesh,
//! and how far the mesh's rules were checked.

use mesh_adopt_runtime::effect::Rule;
use mesh_adopt_runtime::error::StopKind;
use mesh_adopt_runtime::mesh::ContainerChange;
use mesh_adopt_runtime::mesh::lock::{LeftBecause, LockLeft};
use mesh_adopt_runtime::record::screen::visible;
use mesh_adopt_runtime::report::Input;
use mesh_adopt_runtime::report::RulesChecked;
use mesh_adopt_runtime::{Held, ModuleOutcome, RunReport};

/// An outcome's word and its text for a person, plugin text made visible.
fn outcome_words(module: &str, outcome: &ModuleOutcome) -> (&'static str, String) {
    let mut text = outcome.shown();
    if let ModuleOutcome::Unusable(unusable) = outcome
        && let Some(hint) = unusable.cause.as_ref().and_then(|cause| super::remedy::hint(&cause.remedy(), module))
    {
        text.push_str(&hint);
    }
    let stopped = match outcome {
        ModuleOutcome::Failed(stopped) => Some(stopped.kind),
        ModuleOutcome::Unusable(unusable) => match unusable.input {
            Input::Stopped(kind) => Some(kind),
            _ => None,
        },
        _ => None,
    };
    if let Some(flag) = stopped.and_then(limit_flag) {
        // After the report's first line, which says which limit stopped it.
        let hint = format!(" (`{flag}` raises it)");
        match text.find('\n') {
            Some(end) => text.insert_str(end, &hint),
            None => text.push_str(&hint),
        }
    }
    (outcome.word().words(), text)
}

/// The option that raises the limit a plugin was stopped by, when one does.
fn limit_flag(kind: StopKind) -> Option<&'static str> {
    match kind {
        StopKind::WallTime => Some("--plugin-wall-time"),
        StopKind::GuestTime => Some("--plugin-time"),
        StopKind::Memory => Some("--plugin-memory"),
        _ => None,
    }
}

/// What mends a hold the node's own word made (an image it lacks, a secret its control plane
/// does not know it holds): what the operator does next.
fn held_remedies(report: &RunReport) -> Vec<mesh_adopt_runtime::Remedy> {
    match &report.held {
        Some(held @ (Held::ImagesMissing { .. } | Held::SecretsDisagree { .. })) => vec![held.remedy()],
        _ => Vec::new(),
    }
}

/// A lock the run could not let go, as a person reads it: which, why, and what frees it.
fn lock_left_words(left: &LockLeft) -> String {
    let remedy = left.remedy();
    match &left.why {
        LeftBecause::ReleaseFailed { error } => {
            format!("left: `{}` was not released ({}); {remedy}", left.id, visible(error))
        }
        LeftBecause::StillRunning { running, waited } => format!(
            "left: `{}`: the control plane still ran `{}`, which this run sent, after {}s; it lets the lock go once \
             that ends, and if it does not, {remedy}",
            left.id,
            visible(running),
            waited.as_secs()
        ),
    }
}

/// Prints the summary that ends a run's text: the operator's answer to what happened.
pub fn print_summary(report: &RunReport) {
    crate::outln!("\nsummary");
    for (module, outcome) in &report.modules {
        let (word, text) = outcome_words(module, outcome);
        crate::outln!("  {module:<12} {word:<9} {}", text.replace('\n', "\n                         "));
    }
    for remedy in held_remedies(report) {
        crate::outln!("  remedy       {}", visible(&super::remedy::words(&remedy)));
    }
    if let Some(left) = &report.lock_left {
        crate::outln!("  lock         {}", lock_left_words(left));
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
                    Rule::MESH.iter().partition(|rule| report.rules.of_rule(**rule) == RulesChecked::Inspected);
                let names = |rules: Vec<Rule>| rules.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
                // The first line says how far the rules were checked, not only that none broke:
                // on such a mesh most of them were only predicted.
                crate::outln!(
                    "  rules        none broken: {} of {} inspected on the node after each push, {} predicted only",
                    inspected.len(),
                    Rule::MESH.len(),
                    predicted.len()
                );
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
    // What mends a run held back before anything moved, in the command line's words.
    if let Some(held) = &report.held {
        crate::outln!("  remedy       {}", visible(&super::remedy::words(&held.remedy())));
    }
}
