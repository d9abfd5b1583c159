//! Preflight: every module's catalogue entry, manifest, plugin and credentials read and
//! verified and its `check` run, changing nothing; every problem kept, not only the first.

use std::sync::Arc;
use std::time::Duration;

use mesh_adopt_manifest::command::{BUILD_TIMEOUT_SECONDS, Command};

use crate::error::Error;
use crate::events;
use crate::model::contract::Contract;
use crate::model::digest::Sha256;
use crate::model::options::{OptionError, OptionProblem, RunOptionName};
use crate::model::{Context, Export, Input, Plan};
use crate::plugin::{PinMismatch, Plugin, PluginError};
use crate::record::transcript::Entry;
use crate::run::Unusable;
use crate::run::plan_file::SavedPlan;
use crate::run::problem::ModuleError;
use crate::run::{ModuleOutcome, Run};
use crate::sandbox::grants::{Call, Permissions};
use crate::sandbox::state::RunEnv;

/// A module ready to run: its catalogue entry read, its plugin loaded and verified.
pub(super) struct Loaded {
    pub(super) plugin: Plugin,
    /// Its manifest as parsed: what its push is predicted from.
    pub(super) manifest: Arc<crate::catalogue::ModuleManifest>,
    pub(super) env: RunEnv,
    pub(super) ctx: Context,
    pub(super) manifest_digest: Sha256,
    /// The digest of the credentials its manifest grants, for saved plans.
    pub(super) credentials_digest: String,
}

/// What preflight found for every module, before any effect.
pub(super) struct Preflight {
    /// Each module with its outcome: `Checked` with its plan, or the problem found.
    pub modules: Vec<(String, ModuleOutcome)>,
    /// What the plans were made from, with the plans: what `check --out` saves.
    pub saved: SavedPlan,
    /// The contract each loaded plugin speaks, by module.
    pub contracts: std::collections::BTreeMap<String, crate::model::contract::Contract>,
}

impl Run<'_> {
    /// Loads, verifies and checks every module, changing nothing; every problem is kept, not
    /// only the first.
    pub(super) async fn preflight(&self, modules: &[String]) -> (Preflight, Vec<Option<Loaded>>) {
        let mut outcomes = Vec::with_capacity(modules.len());
        let mut loaded = Vec::with_capacity(modules.len());
        let mut saved = SavedPlan::new(&self.options, &self.foundation, self.host.limits(), &self.plan_key);
        let mut contracts = std::collections::BTreeMap::new();
        // A credential that cannot be read could not be kept from being shown; a module asked
        // for twice would be adopted twice. Either is a bad input of the whole run.
        let unreadable = self.credentials.unreadable();
        for (index, module) in modules.iter().enumerate() {
            // Between modules the executor has a turn: an embedder's cancel stops the run here.
            crate::wait::yield_now().await;
            let whole_run = if let Some((name, error)) = unreadable.first() {
                Some(ModuleError::CredentialUnreadable { name: name.clone(), error: error.clone() })
            } else if modules[..index].contains(module) {
                Some(ModuleError::AskedTwice { module: module.clone() })
            } else {
                None
            };
            if let Some(problem) = whole_run {
                outcomes.push((module.clone(), self.unusable(module, problem.into(), "an error about it")));
                loaded.push(None);
                continue;
            }
            let ready = match self.load(module) {
                Ok(ready) => ready,
                Err(error) => {
                    outcomes.push((module.clone(), self.unusable(module, error, "an error about it")));
                    loaded.push(None);
                    continue;
                }
            };
            let plugin = &ready.plugin;
            contracts.insert(module.clone(), plugin.contract());
            let event = events::LoadedEvent::of(module, &plugin.digest, plugin.code, plugin.contract());
            self.stream(&events::Event::Loaded(event));
            let outcome = match self.host.check_in(&ready.plugin, &ready.env, &ready.ctx).await {
                Err(error) => {
                    let stopped = self.stopped(module, error);
                    ModuleOutcome::Unusable(Unusable {
                        input: Input::Stopped(stopped.kind),
                        message: stopped.report,
                        cause: None,
                    })
                }
                Ok(Err(refusal)) => self.refused(module, Export::Check, refusal),
                // A check that was denied a call and planned anyway went past what it was
                // told: its plan is not used, before anything moves.
                Ok(Ok(_)) if let Some(denied) = self.transcript.denied_while_checking(module) => {
                    let problem = ModuleError::CheckedPastDenial { module: module.clone(), denied };
                    self.unusable(module, problem.into(), "its plan")
                }
                Ok(Ok(plan)) => match self.bounded_plan(module, plan, &ready.env) {
                    // What the manifest declares it adopts is held to the foundation once its
                    // own plugin has nothing to refuse, so a plugin's refusal, in the module's
                    // words, comes first.
                    Ok(_) if let Err(error) = crate::effect::check_declared(&ready.manifest, &self.foundation) => {
                        let manifest = ready.env.permissions.manifest.clone().into();
                        let problem = ModuleError::Declarations { module: module.clone(), manifest, error };
                        self.unusable(module, problem.into(), "an error about it")
                    }
                    Ok(plan) => {
                        let digests = (&ready.manifest_digest, &ready.plugin.digest);
                        saved.add(module, digests, &ready.credentials_digest, &plan);
                        self.transcript.record(Entry::Planned {
                            module: module.clone(),
                            summary: plan.summary.clone(),
                            commands: plan.words(),
                        });
                        ModuleOutcome::Checked(plan)
                    }
                    Err(error) => self.unusable(module, error, "its plan"),
                },
            };
            outcomes.push((module.clone(), outcome));
            loaded.push(Some(ready));
        }
        (Preflight { modules: outcomes, saved, contracts }, loaded)
    }

    /// A plan within the limits and the plugin's grants, its words scrubbed; a plan beyond
    /// them means the plugin cannot be used as it is.
    pub(super) fn bounded_plan(&self, module: &str, plan: Plan, env: &RunEnv) -> Result<Plan, Error> {
        let limits = self.host.limits();
        let module_name = || module.to_string();
        if plan.commands.len() > limits.plan_commands {
            let (commands, most) = (plan.commands.len(), limits.plan_commands);
            return Err(ModuleError::PlanCommands { module: module_name(), commands, most }.into());
        }
        if plan.summary.len() > limits.plan_summary_lines {
            let (lines, most) = (plan.summary.len(), limits.plan_summary_lines);
            return Err(ModuleError::PlanSummary { module: module_name(), lines, most }.into());
        }
        // A plan that builds waits for the build and then for the node: the wall deadline must
        // leave room for both, or the run would stop half-way through an adopt.
        let builds = plan.commands.iter().any(|c| matches!(c.known(), Some(Command::Build { .. })));
        let longest = self.options.wait + Duration::from_secs(BUILD_TIMEOUT_SECONDS.into());
        if builds && limits.wall_time <= longest {
            return Err(ModuleError::PlanOutlastsWallTime {
                module: module_name(),
                build: BUILD_TIMEOUT_SECONDS,
                wait: self.options.wait,
                wall_time: limits.wall_time,
                needed: longest,
            }
            .into());
        }
        // A node known to take longer to restart what a push recreates than the run waits
        // for it would have every wait on it run out after the first effects: said now.
        let pushes = plan.commands.iter().any(|c| matches!(c.known(), Some(Command::Push { .. })));
        let node = &self.options.node;
        if pushes && let Some(restart) = self.mesh.restart_time(node).filter(|r| *r > self.options.wait) {
            let problem = OptionProblem::WaitShorterThanRestart {
                wait: self.options.wait,
                mesh: self.mesh.summary(),
                restart,
                module: module_name(),
                node: node.clone(),
            };
            return Err(ModuleError::Wait { error: OptionError { option: RunOptionName::Wait, problem } }.into());
        }
        for (index, command) in plan.commands.iter().enumerate() {
            // A value found in a command would reach the control plane's argv and its logs:
            // named by its credential, the command shown with the value in its place, before
            // anything moves. Only a value that is whole in the command's words counts.
            if let (shown, Some(credential)) = self.credentials.redact(command.to_string()) {
                let shown = crate::record::screen::visible(&shown);
                return Err(ModuleError::PlanHoldsCredential {
                    module: module_name(),
                    number: index + 1,
                    shown,
                    credential,
                }
                .into());
            }
            env.permissions.allow(Export::Adopt, Call::Tell { command }).map_err(|denial| {
                ModuleError::PlanBeyondGrants { module: module_name(), denial: denial.to_string() }
            })?;
        }
        let summary = plan.summary.into_iter().map(|line| self.scrub_in(module, line, "its plan")).collect();
        Ok(Plan { summary, commands: plan.commands })
    }

    /// The outcome of a module that cannot be used for `error`: its words scrubbed of every
    /// credential's value (a value found is recorded as shown at `place`), the typed error kept
    /// beside them only when they say it whole, so nothing typed can show what the words hide.
    fn unusable(&self, module: &str, error: Error, place: &str) -> ModuleOutcome {
        let input = error.input();
        let said = error.chain_text();
        let message = self.scrub_in(module, said.clone(), place);
        let cause = (message == said).then_some(error);
        ModuleOutcome::Unusable(Unusable { input, message, cause })
    }

    /// Reads and verifies what one module needs: its catalogue entry and manifest, its plugin
    /// (pin, world), its grants and the credentials they name.
    pub(super) fn load(&self, module: &str) -> Result<Loaded, Error> {
        let found = self.catalogue.module(module)?;
        let overridden = self.plugin_overrides.iter().find(|(m, _)| m == module).map(|(_, path)| path);
        // A world this host speaks is enough: the plugin's own imports say which version it
        // is built for, and the host speaks each, so a manifest naming another of them costs
        // nothing.
        if let Some(world) = found.adopt.world.as_deref()
            && Contract::of_world(world).is_none()
        {
            return Err(ModuleError::WorldNotSpoken {
                module: module.to_string(),
                manifest: found.manifest_path.clone(),
                world: world.to_string(),
                spoken: Contract::ALL.iter().map(|c| c.world()).collect(),
            }
            .into());
        }
        let credentials_digest =
            self.credentials.verify_all(&found.adopt.grants.credentials, &self.plan_key).map_err(|error| {
                ModuleError::Credential { module: module.to_string(), manifest: found.manifest_path.clone(), error }
            })?;
        let pin = found.adopt.sha256.as_deref();
        let plugin = match overridden {
            // A plugin put in the catalogue's place on purpose (a candidate build replayed
            // against a recording, a scenario's own) is the one asked for, pinned or not.
            Some(path) => self.host.load_pinned(path, None),
            None => self.host.load_pinned_as(&found.plugin_path, Some(&found.plugin_file), pin),
        }
        .map_err(|e| match e {
            // A stale pin is the author's to mend, in its module's manifest.
            PluginError::PinMismatch(stale) => PluginError::PinMismatch(PinMismatch {
                module: Some(module.to_string()),
                manifest: Some(found.manifest_path.clone()),
                ..stale
            }),
            e => e,
        })?;
        let manifest_digest = Sha256::of(&found.manifest);
        let env = RunEnv {
            module: module.to_string(),
            turns_at_calls: self.turns_at_calls,
            mesh: self.mesh.clone(),
            credentials: self.credentials.clone(),
            transcript: self.transcript.clone(),
            permissions: Permissions {
                module: module.to_string(),
                node: self.options.node.clone(),
                catalog_source: self.options.catalog_source.clone(),
                secrets: found.secrets.clone(),
                manifest_bytes: Arc::from(found.manifest.as_slice()),
                granted: found.adopt.grants.clone(),
                manifest: found.manifest_path.display().to_string(),
                credential_holders: self.credential_holders(),
                hands_over: found
                    .parsed
                    .adopts
                    .iter()
                    .filter(|a| self.foundation.container(&a.foundation).is_some())
                    .filter_map(|a| Some((a.credential.clone()?, a.secret.clone()?)))
                    .collect(),
            },
        };
        // The catalogue's read of these bytes, shared: what its pushes come to is worked out once.
        let declared =
            crate::catalogue::read_once::valid_manifest(&found.manifest).unwrap_or_else(|_| Arc::new(found.parsed));
        let ctx = self.context(module, found.manifest, declared.clone());
        Ok(Loaded { plugin, manifest: declared, env, ctx, manifest_digest, credentials_digest })
    }

    /// Each genesis credential a container runs with, as the bundle says, with the container's
    /// name.
    fn credential_holders(&self) -> std::collections::BTreeMap<String, String> {
        let mut holders = std::collections::BTreeMap::new();
        for (id, credentials) in &self.foundation.runs_with {
            if let Some((name, _, _)) = self.foundation.container(id) {
                for credential in credentials {
                    holders.entry(credential.clone()).or_insert_with(|| name.to_string());
                }
            }
        }
        holders
    }

    /// The context a plugin decides from.
    pub fn context(
        &self,
        module: &str,
        manifest: Vec<u8>,
        declared: Arc<mesh_adopt_manifest::ModuleManifest>,
    ) -> Context {
        let o = &self.options;
        Context {
            module: module.to_string(),
            manifest,
            declared,
            foundation: self.foundation.resources.clone(),
            options: o.clone(),
        }
    }
}
