//! Contract 0.2.0: the host's side of its `adopter` world, generated from the WIT, and the
//! conversions between its types and the host's own.

wasmtime::component::bindgen!({
    path: "../../wit/0.2.0",
    world: "adopter",
    // As for 0.1.0: what reaches a mesh waits on it, so it is async; what the host answers
    // itself is not. A say flood stops the plugin, so `say` may trap.
    imports: {
        "mesh:adopt/log.say": trappable,
        "mesh:adopt/clock.now": exact,
        "mesh:adopt/machine.ungranted": exact,
        "mesh:adopt/control.words": exact,
        "mesh:adopt/control.[method]secret.name": exact,
        "mesh:adopt/control.[drop]secret": exact,
        default: async,
    },
    exports: { default: async },
    with: { "mesh:adopt/control.secret": crate::catalogue::credentials::SecretValue },
});

use mesh::adopt::types::{AdoptedAs, Adoption, Command, Container, Grants, Manifest, Placement};
use mesh_adopt_manifest::command::Command as Vocabulary;

use crate::model;

super::serve_imports!(v0_2, |command: super::Command| super::command(command), control: {
    fn words(&mut self, command: super::Command) -> String {
        super::command(command).to_string()
    }
}, machine: {
    fn ungranted(&mut self, inspect: Vec<String>, fetch: Vec<String>) -> Vec<String> {
        self.env.permissions.ungranted(&inspect, &fetch)
    }
});

/// A typed command as the host's one command value. Its names are held to the rule parsed
/// words are held to, so a name that is not a plain word is denied by the grants, as it would
/// be from a 0.1.0 plugin.
pub fn command(command: Command) -> model::PluginCommand {
    let vocabulary = match command {
        Command::ModuleAdd(remote) => Vocabulary::ModuleAdd { remote },
        Command::Build(b) => Vocabulary::Build { repository: b.repository, module: b.module, reference: b.ref_ },
        Command::ModuleIssue(Placement { node, module }) => Vocabulary::ModuleIssue { module, node },
        Command::Assign(Placement { node, module }) => Vocabulary::Assign { node, module },
        Command::Prepare(Placement { node, module }) => Vocabulary::Prepare { node, module },
        Command::SecretAccept(a) => {
            Vocabulary::SecretAccept { node: a.node, module: a.module, secret: a.secret, from: a.source }
        }
        Command::Push(node) => Vocabulary::Push { node },
    };
    model::PluginCommand::from_typed(vocabulary)
}

super::context_parts!();

/// The context as this version hands it to a plugin: the manifest parsed as the host read it.
pub fn context(ctx: &model::Context) -> Context {
    let declared = &ctx.declared;
    let grants = &declared.adopt.grants;
    Context {
        module: ctx.module.clone(),
        manifest: Manifest {
            name: declared.name.clone(),
            containers: declared
                .resolved_containers()
                .into_iter()
                .map(|c| Container { id: c.id, name: c.name, image: c.image, volumes: c.volumes })
                .collect(),
            secrets: declared.secrets.clone(),
            bus_subjects: declared.bus_subjects.clone(),
            bus_users: declared.bus_users.clone(),
            adopts: declared
                .adopts
                .iter()
                .map(|a| Adoption {
                    foundation: a.foundation.clone(),
                    container: a.container.clone(),
                    how: match a.how {
                        mesh_adopt_manifest::AdoptedAs::Kept => AdoptedAs::Kept,
                        mesh_adopt_manifest::AdoptedAs::Recreated => AdoptedAs::Recreated,
                    },
                    credential: a.credential.clone(),
                    secret: a.secret.clone(),
                })
                .collect(),
            grants: Grants {
                credentials: grants.credentials.clone(),
                inspect: grants.inspect.clone(),
                fetch: grants.fetch.clone(),
            },
        },
        manifest_bytes: ctx.manifest.clone(),
        foundation: foundation(ctx),
        options: options(ctx),
    }
}

/// A plan in the host's words.
pub fn plan(plan: Plan) -> model::Plan {
    model::Plan { summary: plan.summary, commands: plan.commands.into_iter().map(command).collect() }
}

/// A report in the host's words.
pub fn report(report: Report) -> model::Report {
    model::Report { summary: report.summary }
}

/// A refusal in the host's words, its code kept as the plugin gave it; the run holds the code
/// to kebab-case.
pub fn refusal(refusal: Refusal) -> model::Refusal {
    model::Refusal { code: Some(refusal.code), message: refusal.message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mesh::adopt::types::{Build, SecretAccept};

    #[test]
    fn every_typed_command_is_the_vocabularys_command_of_the_same_words() {
        let place = || Placement { node: "node-1".into(), module: "postgres".into() };
        for (command, said) in [
            (Command::ModuleAdd("/postgres-module.json".into()), "module add /postgres-module.json"),
            (
                Command::Build(Build {
                    repository: "https://git/c.git".into(),
                    module: "postgres".into(),
                    ref_: "v1".into(),
                }),
                "build https://git/c.git --path modules/postgres --ref v1 --wait 1200s",
            ),
            (Command::ModuleIssue(place()), "module issue postgres --node node-1"),
            (Command::Assign(place()), "assign node-1 postgres"),
            (Command::Prepare(place()), "prepare node-1 postgres"),
            (
                Command::SecretAccept(SecretAccept {
                    node: "node-1".into(),
                    module: "postgres".into(),
                    secret: "superuser".into(),
                    source: "/accepting-superuser".into(),
                }),
                "secret accept node-1 postgres superuser --from /accepting-superuser",
            ),
            (Command::Push("node-1".into()), "push node-1"),
        ] {
            let command = super::command(command);
            assert_eq!(command.to_string(), said);
            assert_eq!(command.known(), Vocabulary::parse(&command.words()).ok().as_ref(), "{said}");
        }
    }
}
