//! The predicted effect of the plans' pushes, as a person reads it under the plans: what
//! each container will become, and with `-v` why, push by push.

use mesh_adopt_runtime::effect::{ContainerEffect, Prediction, SecretEffect, Touch};
use mesh_adopt_runtime::events::EffectWarning;
use mesh_adopt_runtime::record::screen::visible;

/// The predicted effect under the plans: one line a container (and a secret), or with `-v`
/// every push with each container it applies and why.
pub fn effect_lines(prediction: &Prediction, complete: bool, verbose: bool) -> String {
    let mut lines: Vec<String> = prediction
        .first
        .iter()
        .map(|module| {
            format!(
                "      {module:>10} │ effect: goes first: an earlier run left it prepared without its hand-over, \
                 which any other module's push would seal over"
            )
        })
        .collect();
    let secret_line = |s: &SecretEffect| {
        let what = match (s.accepted, &s.credential) {
            (true, Some(credential)) => format!("accepted before the push, from genesis credential {credential}"),
            (true, None) => "accepted before the push".to_string(),
            (false, _) => "sealed fresh by the node".to_string(),
        };
        format!("      {:>10} │ effect: secret {} {what}", s.module, visible(&s.secret))
    };
    if verbose {
        for (index, push) in prediction.pushes.iter().enumerate() {
            lines.push(format!(
                "      {:>10} │ effect: push {} (plan command {})",
                push.module,
                index + 1,
                push.command + 1
            ));
            for touch in &push.containers {
                lines.push(format!(
                    "      {:>10} │ effect:   {} {} ({})",
                    push.module,
                    visible(&touch.container),
                    visible(&touch.effect.to_string()),
                    why(touch)
                ));
            }
            lines.extend(push.secrets.iter().map(secret_line));
        }
    } else {
        for touch in prediction.changes() {
            lines.push(format!(
                "      {:>10} │ effect: {} {}",
                touch.module,
                visible(&touch.container),
                visible(&touch.effect.to_string())
            ));
        }
        lines.extend(prediction.pushes.iter().flat_map(|p| &p.secrets).map(secret_line));
    }
    for (module, secret) in &prediction.held {
        let again = prediction.accepted_again.iter().find(|s| &s.module == module && &s.secret == secret);
        let what = match again.map(|s| &s.credential) {
            None => "not sealed again".to_string(),
            Some(Some(credential)) => format!(
                "not sealed, but accepted again before the push, from genesis credential {credential}: the node \
                 holds that credential's value from then on, in place of the one it held"
            ),
            Some(None) => "not sealed, but accepted again before the push: the node holds the value carried in \
                           from then on, in place of the one it held"
                .to_string(),
        };
        lines.push(format!("      {module:>10} │ effect: secret {} held by the node already: {what}", visible(secret)));
    }
    let changes_nothing = prediction.changes().iter().all(|t| matches!(t.effect, ContainerEffect::Kept { .. }))
        && prediction.sealed().is_empty();
    if !prediction.pushes.is_empty() && changes_nothing {
        // A held secret accepted again may change what the node holds: nothing is not claimed.
        lines.push(match prediction.accepted_again.is_empty() {
            true => "                 │ effect: nothing changes: no container recreated or created, no secret sealed"
                .to_string(),
            false => "                 │ effect: no container recreated or created, no secret sealed; a held secret \
                      accepted again takes the value carried in (above)"
                .to_string(),
        });
    }
    lines.extend(prediction.warnings.iter().map(warning_line));
    if !complete {
        lines.push(
            "                 │ effect: (this mesh does not show the control plane's modules: predicted from its containers alone)"
                .to_string(),
        );
    }
    if lines.is_empty() {
        lines.push("                 │ effect: no push".to_string());
    }
    lines.join("\n")
}

/// A warning preflight gives beside the effect, in words.
fn warning_line(warning: &EffectWarning) -> String {
    match warning {
        EffectWarning::ContainerGone { container, module, genesis } => format!(
            "      {module:>10} │ effect: warning: {} is not on the node, though `{module}`, which runs it, is prepared \
             there{}: a push that did not finish (one killed part-way) leaves a container gone until the next push \
             raises it again, as this run's would",
            visible(container),
            if *genesis { " (genesis raised it)" } else { "" }
        ),
        EffectWarning::MountsUnshown { containers } => format!(
            "                 │ effect: warning: the engine showed no mounts of {}: the secrets they hold were not \
             read from the node, only from what the control plane says (an `inspect` answering the engine's JSON \
             shows them)",
            visible(&containers.join(", "))
        ),
        EffectWarning::ImagesUnasked => {
            "                 │ effect: warning: this mesh has no `images` command, so the \
             node was not asked whether it has the modules' images: one it lacks is found only when its module is \
             built, after the modules before it have moved"
                .to_string()
        }
    }
}

/// Why the node does what it does to a container: its push rule, in words.
fn why(touch: &Touch) -> String {
    let module = &touch.module;
    match &touch.effect {
        ContainerEffect::Kept { .. } => format!("`{module}`'s spec is the one running"),
        ContainerEffect::Recreated { volumes, .. } => {
            format!("`{module}`'s spec differs from the running one; raised on {}", visible(&volumes.join(", ")))
        }
        ContainerEffect::Created { .. } => format!("no container of that name runs; `{module}` raises it"),
        ContainerEffect::Removed => "taken away".to_string(),
    }
}
