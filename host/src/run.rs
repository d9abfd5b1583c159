//! Phase three as a run: for each module, load its plugin, `check` it, `adopt` it, and after
//! each, ask the mesh what changed and whether every invariant held.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::bindings::mesh::adopt::types::{Container, File, Other};
use crate::bindings::{BundleResource, CatalogSource, Context, Options, Plan, WORLD};
use crate::catalogue::{Catalogue, Foundation, FoundationResource};
use crate::credentials::Credentials;
use crate::grants::Permissions;
use crate::mesh::{ContainerChange, Mesh, Violation};
use crate::runtime::{PluginHost, RunEnv};
use crate::transcript::Transcript;

/// The modules phase three adopts, in its order: the store first, since everything keeps its
/// records there; then the bus; then the vault.
pub const PHASE_THREE: [&str; 3] = ["postgres", "nats", "mesh-vault"];

/// The longest refusal kept from a plugin; a longer one is cut.
const REFUSAL_BYTES: usize = 16 << 10;

/// The operator's options, as the plugins receive them.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub node: String,
    /// Repository and optional ref the modules are built from.
    pub catalog_source: Option<(String, Option<String>)>,
    /// How long to wait for the node after a push.
    pub wait: Duration,
}

impl RunOptions {
    /// The options as a recording keeps them, so a replay can run as the recorded run did.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "node": self.node,
            "catalog_source": self.catalog_source.as_ref().map(|(repository, reference)| {
                serde_json::json!({"repository": repository, "ref": reference})
            }),
            "wait_s": self.wait.as_secs(),
        })
    }

    /// Reads options written by [`RunOptions::to_json`], naming the field that is wrong.
    pub fn from_json(value: &serde_json::Value) -> Result<RunOptions> {
        let node = value["node"].as_str().ok_or_else(|| anyhow::anyhow!("no `node`"))?.to_string();
        let catalog_source = match &value["catalog_source"] {
            serde_json::Value::Null => None,
            source => Some((
                source["repository"]
                    .as_str()
                    .ok_or_else(|| anyhow::anyhow!("no `catalog_source.repository`"))?
                    .to_string(),
                source["ref"].as_str().map(String::from),
            )),
        };
        let wait = Duration::from_secs(value["wait_s"].as_u64().ok_or_else(|| anyhow::anyhow!("no `wait_s`"))?);
        Ok(RunOptions { node, catalog_source, wait })
    }
}

/// How a module's turn ended.
#[derive(Debug, Clone)]
pub enum ModuleOutcome {
    /// `check` passed; this is its plan (a check-only run stops here).
    Checked(Plan),
    /// `adopt` succeeded, with the plugin's one-line summary.
    Adopted(String),
    /// The plugin refused, in `check` or in `adopt`.
    Refused { during: &'static str, message: String },
    /// The plugin could not be loaded or was stopped by the sandbox.
    Failed(String),
    /// An earlier module did not succeed, so this one was left alone.
    NotRun { because: String },
}

impl ModuleOutcome {
    /// Whether the module did what the run asked of it.
    pub fn succeeded(&self) -> bool {
        matches!(self, ModuleOutcome::Checked(_) | ModuleOutcome::Adopted(_))
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
}

impl RunReport {
    /// Every module succeeded and every invariant held.
    pub fn succeeded(&self) -> bool {
        self.violations.is_empty() && self.modules.iter().all(|(_, o)| o.succeeded())
    }

    /// The outcome for `module`.
    pub fn outcome(&self, module: &str) -> Option<&ModuleOutcome> {
        self.modules.iter().find(|(m, _)| m == module).map(|(_, o)| o)
    }
}

/// Whether a run only checks or goes on to adopt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Check,
    Adopt,
}

/// Everything one run needs.
pub struct Run<'a> {
    pub host: &'a PluginHost,
    pub catalogue: &'a Catalogue,
    pub foundation: &'a Foundation,
    pub credentials: Arc<Credentials>,
    pub mesh: Arc<dyn Mesh>,
    pub transcript: Arc<Transcript>,
    pub options: RunOptions,
    /// Plugins to use instead of the catalogue's, by module (for plugin authors' tests).
    pub plugin_overrides: Vec<(String, PathBuf)>,
}

impl Run<'_> {
    /// Runs `modules` in order, stopping at the first that does not succeed.
    pub async fn run(&self, modules: &[String], mode: Mode) -> RunReport {
        let mut outcomes: Vec<(String, ModuleOutcome)> = Vec::new();
        let mut violations: Vec<Violation> = Vec::new();
        for module in modules {
            if let Some((stopped, _)) = outcomes.iter().find(|(_, o)| !o.succeeded()) {
                let because = format!("`{stopped}` did not succeed");
                outcomes.push((module.clone(), ModuleOutcome::NotRun { because }));
                continue;
            }
            let outcome = self.module(module, mode).await.unwrap_or_else(|e| ModuleOutcome::Failed(format!("{e:#}")));
            violations = self.violations(module, &outcome);
            let broke = !violations.is_empty();
            outcomes.push((module.clone(), outcome));
            if broke {
                break;
            }
        }
        for module in modules.iter().skip(outcomes.len()) {
            outcomes.push((module.clone(), ModuleOutcome::NotRun { because: "an invariant broke".into() }));
        }
        // What the last push does to the node is part of the run: let it land, then look again.
        self.mesh.quiesce().await;
        let audit = self.mesh.audit();
        for violation in audit.violations {
            if !violations.contains(&violation) {
                violations.push(violation);
            }
        }
        RunReport { modules: outcomes, changes: audit.changes, violations, mesh: self.mesh.summary() }
    }

    async fn module(&self, module: &str, mode: Mode) -> Result<ModuleOutcome> {
        let found = self.catalogue.module(module)?;
        let overridden = self.plugin_overrides.iter().find(|(m, _)| m == module).map(|(_, path)| path);
        if let Some(world) = &found.adopt.world
            && world != WORLD
        {
            bail!(
                "the `{module}` module's manifest `{}` says its plugin targets `{world}`; this host implements `{WORLD}`",
                found.manifest_path.display()
            );
        }
        let pin = found.adopt.sha256.as_deref();
        let plugin = match overridden {
            Some(path) => self.host.load_pinned(path, pin)?,
            None => self.host.load_pinned_as(&found.plugin_path, Some(&found.plugin_file), pin)?,
        };
        let env = RunEnv {
            module: module.to_string(),
            mesh: self.mesh.clone(),
            credentials: self.credentials.clone(),
            transcript: self.transcript.clone(),
            permissions: Permissions {
                module: module.to_string(),
                node: self.options.node.clone(),
                repository: self.options.catalog_source.as_ref().map(|(repo, _)| repo.clone()),
                granted: found.adopt.grants.clone(),
                manifest: found.manifest_path.display().to_string(),
            },
        };
        let ctx = self.context(module, found.manifest);
        Ok(match self.host.check_then_adopt(&plugin, &env, &ctx, mode == Mode::Adopt).await? {
            (Err(refusal), _) => {
                ModuleOutcome::Refused { during: "check", message: self.scrub(module, refusal.message) }
            }
            (Ok(plan), None) => ModuleOutcome::Checked(plan),
            (Ok(_), Some(Ok(report))) => ModuleOutcome::Adopted(report.summary),
            (Ok(_), Some(Err(refusal))) => {
                ModuleOutcome::Refused { during: "adopt", message: self.scrub(module, refusal.message) }
            }
        })
    }

    /// A plugin's refusal with secret values replaced by their names; one found fails the run.
    fn scrub(&self, module: &str, message: String) -> String {
        let (mut scrubbed, found) = self.credentials.redact(message);
        if crate::limits::cut_to(&mut scrubbed, REFUSAL_BYTES) {
            scrubbed.push_str(" … (cut)");
        }
        if let Some(secret) = found {
            self.transcript.record(crate::transcript::Event::SecretShown {
                module: module.to_string(),
                secret,
                place: "its refusal".into(),
            });
        }
        scrubbed
    }

    /// The context a plugin decides from.
    pub fn context(&self, module: &str, manifest: Vec<u8>) -> Context {
        let o = &self.options;
        Context {
            module: module.to_string(),
            manifest,
            foundation: bundle_resources(self.foundation),
            options: Options {
                node: o.node.clone(),
                catalog_source: o
                    .catalog_source
                    .as_ref()
                    .map(|(repository, ref_)| CatalogSource { repository: repository.clone(), ref_: ref_.clone() }),
                wait_seconds: o.wait.as_secs().try_into().unwrap_or(u32::MAX),
            },
        }
    }

    /// The mesh's invariants plus the host's own two: a refusal in `check` comes before any
    /// effect, and no secret value shows anywhere an operator or a log could read it.
    fn violations(&self, module: &str, outcome: &ModuleOutcome) -> Vec<Violation> {
        let audit = self.mesh.audit();
        let mut violations = audit.violations;
        if matches!(outcome, ModuleOutcome::Refused { during: "check", .. }) {
            let effects = self.transcript.effects(module);
            if !effects.is_empty() {
                violations.push(Violation {
                    invariant: "refusal-before-effect",
                    detail: format!("`{module}` refused in check after {}", effects.join("; ")),
                });
            }
        }
        for (shown_by, secret, place) in self.transcript.secrets_shown() {
            violations.push(Violation {
                invariant: "secret-never-shown",
                detail: format!("the `{shown_by}` plugin put the value of secret `{secret}` in {place} (redacted)"),
            });
        }
        let secrets: Vec<String> = audit
            .secret_values
            .iter()
            .filter(|v| v.len() >= 6)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let in_message = match outcome {
            ModuleOutcome::Refused { message, .. } | ModuleOutcome::Failed(message) => {
                secrets.iter().any(|s| message.contains(s))
            }
            _ => false,
        };
        let shown = in_message || self.transcript.shows_any(&secrets);
        if shown {
            violations.push(Violation {
                invariant: "secret-never-shown",
                detail: format!("a secret value appeared in what `{module}` said, told or reported (redacted here)"),
            });
        }
        violations
    }
}

/// The bundle's resources in the contract's shape.
pub fn bundle_resources(foundation: &Foundation) -> Vec<BundleResource> {
    foundation
        .resources
        .iter()
        .map(|r| match r.clone() {
            FoundationResource::Container { id, name, image, volumes } => {
                BundleResource::Container(Container { id, name, image, volumes })
            }
            FoundationResource::File { id, path } => BundleResource::File(File { id, path }),
            FoundationResource::Other { id, kind } => BundleResource::Other(Other { id, kind }),
        })
        .collect()
}
