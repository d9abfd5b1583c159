//! Contract 0.1.0: the host's side of its `adopter` world, generated from the WIT, and the
//! conversions between its types and the host's own.

wasmtime::component::bindgen!({
    path: "../../wit/0.1.0",
    world: "adopter",
    // What reaches a mesh waits on it, so it is async; what the host answers itself (a line
    // said, the clock, a secret's name) is not, and skips the cost of a future per call. A say
    // flood stops the plugin, so `say` may trap; every other import answers in-band.
    imports: {
        "mesh:adopt/log.say": trappable,
        "mesh:adopt/clock.now": exact,
        "mesh:adopt/control.[method]secret.name": exact,
        "mesh:adopt/control.[drop]secret": exact,
        default: async,
    },
    exports: { default: async },
    with: { "mesh:adopt/control.secret": crate::catalogue::credentials::SecretValue },
});

use crate::model;

super::serve_imports!(v0_1, |args: Vec<String>| crate::model::PluginCommand::from_words(args));

super::context_parts!();

/// The context as this version hands it to a plugin.
pub fn context(ctx: &model::Context) -> Context {
    Context {
        module: ctx.module.clone(),
        manifest: ctx.manifest.clone(),
        foundation: foundation(ctx),
        options: options(ctx),
    }
}

impl From<Plan> for model::Plan {
    fn from(plan: Plan) -> model::Plan {
        model::Plan::from_words(plan.summary, plan.commands)
    }
}

impl From<Report> for model::Report {
    fn from(report: Report) -> model::Report {
        model::Report { summary: report.summary }
    }
}

impl From<Refusal> for model::Refusal {
    fn from(refusal: Refusal) -> model::Refusal {
        model::Refusal { code: None, message: refusal.message }
    }
}
