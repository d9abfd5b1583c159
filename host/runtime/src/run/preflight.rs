//! Preflight: every module's catalogue entry, manifest, plugin and credentials read and
//! verified and its `check` run, changing nothing; every problem kept, not only the first.

use std::sync::Arc;
use std::time::Duration;

use mesh_adopt_manifest::command::{BUILD_TIMEOUT_SECONDS, Command};

use crate::error::LimitName;
use crate::events;
use crate::model::contract::Contract;
use crate::model::digest::Sha256;
use crate::model::{Context, Export, Input, Plan, Unusable};
use crate::plugin::Plugin;
use crate::record::transcript::Entry;
use crate::run::plan_file::SavedPlan;
use crate::run::{ModuleOutcome, Run};
use crate::sandbox::grants::{Call, Permissions};
use crate::sandbox::state::RunEnv;

/// A typed error with what its reader can do about it, said after it.
#[derive(Debug)]
struct Remedied {
    error: crate::error::Error,
    remedy: String,
}

impl std::fmt::Display for Remedied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.error, self.remedy)
    }
}

impl std::error::Error for Remedied {}

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
            let whole_run = if let Some((name, why)) = unreadable.first() {
                Some((
                    Input::Credentials,
                    format!(
                        "the credentials directory holds `{name}`, which cannot be read ({why}): its value could not be kept from being shown"
                    ),
                ))
            } else if modules[..index].contains(module) {
                Some((Input::Manifest, format!("the module `{module}` is asked for twice")))
            } else {
                None
            };
            if let Some((input, message)) = whole_run {
                outcomes.push((module.clone(), ModuleOutcome::Unusable(Unusable { input, message, cause: None })));
                loaded.push(None);
                continue;
            }
            let ready = match self.load(module) {
                Ok(ready) => ready,
                Err((input, e)) => {
                    let message = self.scrub_in(module, format!("{e:#}"), "an error about it");
                    // Typed only when the error is all the message says (no credential in it).
                    let cause = e
                        .downcast_ref::<crate::error::Error>()
                        .or_else(|| e.downcast_ref::<Remedied>().map(|r| &r.error))
                        .filter(|c| message.contains(&c.to_string()))
                        .cloned();
                    outcomes.push((module.clone(), ModuleOutcome::Unusable(Unusable { input, message, cause })));
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
                    let stopped = self.stopped(module, Export::Check, error);
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
                    let message = self.scrub_in(
                        module,
                        format!(
                            "its `check` was denied {denied} and planned anyway: a check that goes on past a denied \
                             call has not checked what its plan claims, so the plan is not used. Nothing of `{module}` \
                             has been done"
                        ),
                        "its plan",
                    );
                    ModuleOutcome::Unusable(Unusable { input: Input::Plan, message, cause: None })
                }
                Ok(Ok(plan)) => match self.bounded_plan(module, plan, &ready.env) {
                    // What the manifest declares it adopts is held to the foundation once its
                    // own plugin has nothing to refuse, so a plugin's refusal, in the module's
                    // words, comes first.
                    Ok(_) if let Err(e) = crate::effect::check_declared(&ready.manifest, &self.foundation) => {
                        let message = format!(
                            "the `{module}` module's manifest `{}` declares what it adopts wrongly: {e}",
                            ready.env.permissions.manifest
                        );
                        ModuleOutcome::Unusable(Unusable { input: Input::Manifest, message, cause: None })
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
                    Err((message, cause)) => ModuleOutcome::Unusable(Unusable { input: Input::Plan, message, cause }),
                },
            };
            outcomes.push((module.clone(), outcome));
            loaded.push(Some(ready));
        }
        (Preflight { modules: outcomes, saved, contracts }, loaded)
    }

    /// A plan within the limits and the plugin's grants, its words scrubbed; a plan beyond
    /// them means the plugin cannot be used as it is.
    pub(super) fn bounded_plan(
        &self,
        module: &str,
        plan: Plan,
        env: &RunEnv,
    ) -> Result<Plan, (String, Option<crate::error::Error>)> {
        let limits = self.host.limits();
        if plan.commands.len() > limits.plan_commands {
            return Err((
                format!(
                    "the `{module}` plugin's plan has {} commands; a plan may have at most {} (limits.plan_commands)",
                    plan.commands.len(),
                    limits.plan_commands
                ),
                None,
            ));
        }
        if plan.summary.len() > limits.plan_summary_lines {
            return Err((
                format!(
                    "the `{module}` plugin's plan summary has {} lines; a plan may have at most {} (limits.plan_summary_lines)",
                    plan.summary.len(),
                    limits.plan_summary_lines
                ),
                None,
            ));
        }
        // A plan that builds waits for the build and then for the node: the wall deadline must
        // leave room for both, or the run would stop half-way through an adopt.
        let builds = plan.commands.iter().any(|c| matches!(c.known(), Some(Command::Build { .. })));
        let longest = self.options.wait + Duration::from_secs(BUILD_TIMEOUT_SECONDS.into());
        if builds && limits.wall_time <= longest {
            let cause = crate::error::Error::LimitTooLow { limit: LimitName::WallTime, needed: longest };
            return Err((
                format!(
                    "the `{module}` plugin's plan builds the module, which may take {BUILD_TIMEOUT_SECONDS}s, and then \
                 waits up to {}s for the node; its wall time of {:?} (limits.wall_time) would stop it half-way: give \
                 more than {longest:?}",
                    self.options.wait.as_secs(),
                    limits.wall_time
                ),
                Some(cause),
            ));
        }
        // A node known to take longer to restart what a push recreates than the run waits
        // for it would have every wait on it run out after the first effects: said now.
        let pushes = plan.commands.iter().any(|c| matches!(c.known(), Some(Command::Push { .. })));
        let node = &self.options.node;
        if pushes && let Some(restart) = self.mesh.restart_time(node).filter(|r| *r > self.options.wait) {
            let why = format!(
                "is {}s, but on {} a push takes {}s to be applied and what it recreates to answer again: the \
                 `{module}` plugin's wait on node `{node}` would run out after its push. Give a --wait of at least {}s",
                self.options.wait.as_secs(),
                self.mesh.summary(),
                restart.as_secs_f64(),
                restart.as_secs_f64().ceil()
            );
            let message = format!("the wait (--wait) {why}");
            let cause = crate::error::Error::RunOption { option: crate::error::RunOptionName::Wait, why };
            return Err((message, Some(cause)));
        }
        for (index, command) in plan.commands.iter().enumerate() {
            // A value found in a command would reach the control plane's argv and its logs:
            // named by its credential, the command shown with the value in its place, before
            // anything moves. Only a value that is whole in the command's words counts.
            if let (shown, Some(credential)) = self.credentials.redact(command.to_string()) {
                return Err((
                    format!(
                        "the `{module}` plugin's plan, command {} (`tell {}`), holds the value of credential \
                         `{credential}`: the command would carry it into the control plane's arguments and logs. \
                         A credential reaches the control plane only as a carried secret. If the value is a word \
                         the plan uses in its own right (a module, container, node or path name), the credential \
                         is no secret: give it a value of its own",
                        index + 1,
                        crate::record::screen::visible(&shown)
                    ),
                    None,
                ));
            }
            env.permissions
                .allow(Export::Adopt, Call::Tell { command })
                .map_err(|why| (format!("the `{module}` plugin plans a command it could never tell: {why}"), None))?;
        }
        let summary = plan.summary.into_iter().map(|line| self.scrub_in(module, line, "its plan")).collect();
        Ok(Plan { summary, commands: plan.commands })
    }

    /// Reads and verifies what one module needs: its catalogue entry and manifest, its plugin
    /// (pin, world), its grants and the credentials they name.
    pub(super) fn load(&self, module: &str) -> Result<Loaded, (Input, anyhow::Error)> {
        let found = self.catalogue.module(module).map_err(|e| {
            let input = if matches!(e, crate::error::Error::NoPlugin { .. }) { Input::Plugin } else { Input::Manifest };
            (input, anyhow::Error::new(e))
        })?;
        let overridden = self.plugin_overrides.iter().find(|(m, _)| m == module).map(|(_, path)| path);
        // A world this host speaks is enough: the plugin's own imports say which version it
        // is built for, and the host speaks each, so a manifest naming another of them costs
        // nothing.
        if let Some(world) = found.adopt.world.as_deref()
            && Contract::of_world(world).is_none()
        {
            let worlds: Vec<&str> = Contract::ALL.iter().map(|c| c.world()).collect();
            return Err((
                Input::Plugin,
                anyhow::anyhow!(
                    "the `{module}` module's manifest `{}` says its plugin targets `{world}`; this host implements \
                     `{}`",
                    found.manifest_path.display(),
                    worlds.join("` and `")
                ),
            ));
        }
        let credentials_digest =
            self.credentials.verify_all(&found.adopt.grants.credentials, &self.plan_key).map_err(|(name, why)| {
                let e = anyhow::anyhow!(
                    "the `{module}` module's manifest `{}` grants credential `{name}`, which cannot be used: {why}",
                    found.manifest_path.display()
                );
                (Input::Credentials, e)
            })?;
        let pin = found.adopt.sha256.as_deref();
        let plugin = match overridden {
            // A plugin put in the catalogue's place on purpose (a candidate build replayed
            // against a recording, a scenario's own) is the one asked for, pinned or not.
            Some(path) => self.host.load_pinned(path, None),
            None => self.host.load_pinned_as(&found.plugin_path, Some(&found.plugin_file), pin),
        }
        .map_err(|e| match e {
            // A stale pin is the author's to mend, and there are two ways: say both.
            crate::error::Error::PinMismatch(stale) => {
                let remedy = format!(
                    "rebuild and pin it from its source, or, if this plugin is the one to ship, set `adopt.sha256` \
                     to \"{}\" in `{}`",
                    stale.digest,
                    found.manifest_path.display()
                );
                (Input::Plugin, anyhow::Error::new(Remedied { error: crate::error::Error::PinMismatch(stale), remedy }))
            }
            e => (Input::Plugin, anyhow::Error::new(e)),
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
