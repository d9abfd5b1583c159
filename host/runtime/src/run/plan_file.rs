//! Saved plans: what `check --out PLAN` writes and `run --plan PLAN` applies. A saved plan
//! holds every module's plan together with what it was made from (the options, the foundation
//! bundle's digest, each manifest's and plugin's digest), so a run applies it only to those
//! very inputs, as a Terraform plan file applies only to the state it was made against.
//!
//! The file is JSON; `docs/writing-a-plugin.md` documents its fields.

use std::path::Path;

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};

use crate::catalogue::Foundation;
use crate::catalogue::plan_key::PlanKey;
use crate::model::digest::Sha256;
use crate::model::options::RunOptions;
use crate::model::{Plan, PluginCommand};
use crate::sandbox::limits::Limits;

/// The format version this host writes and reads.
pub const PLAN_SCHEMA: u32 = 3;

/// The largest plan file read: far above any real one, well below what would strain memory.
const PLAN_FILE_BYTES: u64 = 16 << 20;

/// A run's plans and what they were made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedPlan {
    /// The file's format version, [`PLAN_SCHEMA`].
    pub schema: u32,
    /// The node the modules are assigned to.
    pub node: String,
    /// The catalogue source, as `REPO[@REF]`, or none.
    pub catalog_source: Option<String>,
    /// `--wait`, in seconds.
    pub wait_s: u64,
    /// The sandbox's limits the plans were made under.
    pub limits: SavedLimits,
    /// The foundation bundle's sha256.
    pub foundation_sha256: Sha256,
    /// Names the key the credentials' digests were made with ([`PlanKey::id`]); the key
    /// itself stays where it was made.
    pub credentials_key: String,
    /// Each module, in the run's order.
    pub modules: Vec<SavedModule>,
    /// The mesh the plans were made on, as it names itself: a plan made on the simulator is
    /// no plan for a live mesh.
    pub mesh: String,
    /// What the plans' pushes were predicted to do to the mesh as it was, one line a container
    /// and a secret: when the mesh has moved since (a plan run a second time), its words no
    /// longer hold.
    pub effect: Vec<String>,
}

/// The limits an operator chooses for a run (`--plugin-memory`, `--plugin-time`,
/// `--plugin-wall-time`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedLimits {
    /// `--plugin-memory`, in MiB.
    pub memory_mib: u64,
    /// `--plugin-time`, in milliseconds.
    pub time_ms: u64,
    /// `--plugin-wall-time`, in milliseconds.
    pub wall_time_ms: u64,
}

impl SavedLimits {
    /// The saved form of `limits`.
    pub fn of(limits: &Limits) -> SavedLimits {
        SavedLimits {
            memory_mib: (limits.memory_bytes >> 20) as u64,
            time_ms: limits.guest_time.as_millis().try_into().unwrap_or(u64::MAX),
            wall_time_ms: limits.wall_time.as_millis().try_into().unwrap_or(u64::MAX),
        }
    }
}

/// One module's plan and the documents it was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedModule {
    /// The module's name.
    pub module: String,
    /// The sha256 of its `manifest.json`, byte for byte.
    pub manifest_sha256: Sha256,
    /// The sha256 of its plugin.
    pub plugin_sha256: Sha256,
    /// The keyed digest ([`PlanKey::digest`]) of the credentials its manifest grants, names
    /// and values together, so a credential changed since the plan was made is seen (empty
    /// when it grants none).
    pub credentials_digest: String,
    /// The plan's summary lines.
    pub summary: Vec<String>,
    /// The plan's commands, each as its words.
    pub commands: Vec<Vec<String>>,
}

impl SavedPlan {
    /// An empty saved plan for a run with `options` on `foundation`, its credentials digested
    /// with `key`.
    pub fn new(options: &RunOptions, foundation: &Foundation, limits: &Limits, key: &PlanKey) -> SavedPlan {
        SavedPlan {
            schema: PLAN_SCHEMA,
            node: options.node.clone(),
            catalog_source: options.catalog_source.as_ref().map(|_| options.source_words()),
            wait_s: options.wait.as_secs(),
            limits: SavedLimits::of(limits),
            foundation_sha256: foundation.digest.clone(),
            credentials_key: key.id(),
            modules: Vec::new(),
            mesh: String::new(),
            effect: Vec::new(),
        }
    }

    /// Adds one module's plan: its manifest's and its plugin's sha256, and the keyed digest
    /// of the credentials it is granted.
    pub fn add(
        &mut self,
        module: &str,
        (manifest_sha256, plugin_sha256): (&Sha256, &Sha256),
        credentials_digest: &str,
        plan: &Plan,
    ) {
        self.modules.push(SavedModule {
            module: module.to_string(),
            manifest_sha256: manifest_sha256.clone(),
            plugin_sha256: plugin_sha256.clone(),
            credentials_digest: credentials_digest.to_string(),
            summary: plan.summary.clone(),
            commands: plan.words(),
        });
    }

    /// Writes the plan file, readable by this user only: it holds a keyed digest of credentials.
    pub fn write(&self, path: &Path) -> Result<(), crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::PlanFile, || {
            use std::io::Write;
            let mut text = serde_json::to_string_pretty(self)?;
            text.push('\n');
            crate::files::create_output(path, "a plan")?
                .write_all(text.as_bytes())
                .with_context(|| format!("failed to write the plan `{}`", path.display()))
        })
    }

    /// Reads a plan file, naming it in any error.
    pub fn read(path: &Path) -> Result<SavedPlan, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::PlanFile, || {
            let bytes = crate::files::read_bounded(path, PLAN_FILE_BYTES)
                .with_context(|| format!("failed to read the plan `{}`", path.display()))?;
            SavedPlan::parse(&bytes).with_context(|| format!("the plan `{}` cannot be used", path.display()))
        })
    }

    /// Parses a plan file's bytes.
    pub fn parse(bytes: &[u8]) -> Result<SavedPlan, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::PlanFile, || {
            /// Only the format, read first: a plan of another format is named as one, whatever its
            /// other fields.
            #[derive(Deserialize)]
            struct Format {
                schema: u32,
            }
            let format: Format = serde_json::from_slice(bytes).context("it is not a saved plan")?;
            if format.schema != PLAN_SCHEMA {
                bail!(
                    "it is a plan of format {}; this host reads format {PLAN_SCHEMA}: check again to make it anew",
                    format.schema
                );
            }
            let plan: SavedPlan = serde_json::from_slice(bytes).context("it is not a saved plan")?;
            // The node is read back into messages and compared with the run's: held to the rule
            // `--node` is held to.
            if let Err(why) = crate::model::options::node_problem(&plan.node) {
                bail!("its `node` {why}");
            }
            Ok(plan)
        })
    }

    /// The first way `now` (made from today's inputs) differs from this saved plan, in words.
    pub fn first_difference(&self, now: &SavedPlan) -> Option<String> {
        let field = |what: &str, saved: String, now: String| {
            Some(format!("{what} is `{now}` now, and the plan was made with `{saved}`"))
        };
        let fields = |what: &str, saved: String, now: String| {
            Some(format!("{what} are `{now}` now, and the plan was made with `{saved}`"))
        };
        let source = |s: &Option<String>| s.clone().unwrap_or_else(|| "no catalogue source".into());
        if self.node != now.node {
            return field("the node", self.node.clone(), now.node.clone());
        }
        if self.mesh != now.mesh {
            return Some(format!("this run is on {}, and the plan was made on {}", now.mesh, self.mesh));
        }
        if self.catalog_source != now.catalog_source {
            return field("the catalogue source", source(&self.catalog_source), source(&now.catalog_source));
        }
        if self.wait_s != now.wait_s {
            return field("the wait after a push", format!("{}s", self.wait_s), format!("{}s", now.wait_s));
        }
        if self.limits != now.limits {
            let shown = |l: &SavedLimits| {
                format!("memory {} MiB, guest time {}ms, wall time {}ms", l.memory_mib, l.time_ms, l.wall_time_ms)
            };
            return fields("the plugin limits", shown(&self.limits), shown(&now.limits));
        }
        if self.foundation_sha256 != now.foundation_sha256 {
            return Some(format!(
                "the foundation bundle changed (sha256 {} now, {} when planned)",
                now.foundation_sha256.short(),
                self.foundation_sha256.short()
            ));
        }
        let grants_any = self.modules.iter().any(|m| !m.credentials_digest.is_empty());
        if grants_any && !self.credentials_key.eq_ignore_ascii_case(&now.credentials_key) {
            return Some(format!(
                "the plan's credentials were digested with another plan key ({} when planned, {} here: made on \
                 another machine or by another user), so this run cannot check that they are the ones it was made \
                 with; make the plan again here",
                self.credentials_key, now.credentials_key
            ));
        }
        let names = |plan: &SavedPlan| plan.modules.iter().map(|m| m.module.clone()).collect::<Vec<_>>();
        if names(self) != names(now) {
            return fields("the modules", names(self).join(" "), names(now).join(" "));
        }
        for (saved, now) in self.modules.iter().zip(&now.modules) {
            let m = &saved.module;
            let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
            if !same(&saved.credentials_digest, &now.credentials_digest) {
                return Some(format!("the credentials the `{m}` module's manifest grants changed"));
            }
            if saved.manifest_sha256 != now.manifest_sha256 {
                return Some(format!(
                    "the `{m}` module's manifest changed (sha256 {} now, {} when planned)",
                    now.manifest_sha256.short(),
                    saved.manifest_sha256.short()
                ));
            }
            if saved.plugin_sha256 != now.plugin_sha256 {
                return Some(format!(
                    "the `{m}` module's plugin changed (sha256 {} now, {} when planned)",
                    now.plugin_sha256.short(),
                    saved.plugin_sha256.short()
                ));
            }
            // The saved plan's commands are read back into commands, and compared as such.
            let saved_plan = Plan::from_words(saved.summary.clone(), saved.commands.clone());
            let now_plan = Plan::from_words(now.summary.clone(), now.commands.clone());
            if saved_plan != now_plan {
                return Some(format!("the `{m}` module's plan changed ({})", plan_difference(&saved_plan, &now_plan)));
            }
        }
        if self.effect != now.effect {
            let at = (0..self.effect.len().max(now.effect.len())).find(|&i| self.effect.get(i) != now.effect.get(i))?;
            let line =
                |effect: &Vec<String>| effect.get(at).map_or_else(|| "nothing".to_string(), |l| format!("`{l}`"));
            return Some(format!(
                "the mesh moved since the plan was made: its pushes would now do {}, where the plan said {}",
                line(&now.effect),
                line(&self.effect)
            ));
        }
        None
    }
}

/// The first difference between two plans, in words.
pub fn plan_difference(before: &Plan, after: &Plan) -> String {
    let shown = |command: Option<&PluginCommand>| command.map(|c| format!("`tell {c}`"));
    for i in 0..before.commands.len().max(after.commands.len()) {
        let (was, is) = (before.commands.get(i), after.commands.get(i));
        if was != is {
            return format!(
                "command {} is {} now, and was {}",
                i + 1,
                shown(is).unwrap_or_else(|| "gone".into()),
                shown(was).unwrap_or_else(|| "not there".into())
            );
        }
    }
    for i in 0..before.summary.len().max(after.summary.len()) {
        let (was, is) = (before.summary.get(i), after.summary.get(i));
        if was != is {
            let shown = |line: Option<&String>| line.map_or("gone".to_string(), |l| format!("`{l}`"));
            return format!("summary line {} is {} now, and was {}", i + 1, shown(is), shown(was));
        }
    }
    "no difference".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved() -> SavedPlan {
        saved_with(&KEY, "")
    }

    static KEY: std::sync::LazyLock<PlanKey> = std::sync::LazyLock::new(PlanKey::ephemeral);

    fn saved_with(key: &PlanKey, credentials: &str) -> SavedPlan {
        let mut plan = SavedPlan::new(&RunOptions::default(), &Foundation::default(), &Limits::default(), key);
        plan.add(
            "postgres",
            (&Sha256::of(b"manifest"), &Sha256::of(b"plugin")),
            credentials,
            &Plan::from_words(vec!["s".into()], vec![vec!["push".into()]]),
        );
        plan
    }

    #[test]
    fn reads_back_what_it_writes() {
        let dir = tempfile::tempdir().unwrap();
        saved().write(&dir.path().join("p")).unwrap();
        assert_eq!(SavedPlan::read(&dir.path().join("p")).unwrap(), saved());
    }

    #[test]
    fn a_plan_whose_node_is_no_node_name_is_refused_naming_the_rule() {
        let mut plan = serde_json::to_value(saved()).unwrap();
        plan["node"] = "node-1;rm".into();
        let why = SavedPlan::parse(&serde_json::to_vec(&plan).unwrap()).unwrap_err().to_string();
        assert!(why.contains("its `node` `node-1;rm` cannot be used: a node name is an RFC 1123 subdomain"), "{why}");
    }

    #[test]
    fn names_the_first_difference() {
        assert_eq!(saved().first_difference(&saved()), None);
        let mut moved = saved();
        moved.modules[0].manifest_sha256 = Sha256::of(b"another manifest");
        assert!(saved().first_difference(&moved).unwrap().contains("`postgres` module's manifest changed"));
        let mut replanned = saved();
        replanned.modules[0].commands[0] = vec!["push".into(), "node-2".into()];
        let why = saved().first_difference(&replanned).unwrap();
        assert!(why.contains("command 1 is `tell push node-2` now, and was `tell push`"), "{why}");
    }

    #[test]
    fn a_plan_whose_credentials_another_key_digested_says_it_cannot_check_them() {
        let (here, there) = (PlanKey::ephemeral(), PlanKey::ephemeral());
        let digest = |key: &PlanKey| key.digest(b"superuser");
        let made_there = saved_with(&there, &digest(&there));
        let why = made_there.first_difference(&saved_with(&here, &digest(&here))).unwrap();
        assert!(why.contains("another plan key") && why.contains(&there.id()), "{why}");
        // Made here, it is checked: the same credentials pass, another value is named.
        let made_here = saved_with(&here, &digest(&here));
        assert_eq!(made_here.first_difference(&saved_with(&here, &digest(&here))), None);
        let changed = saved_with(&here, &here.digest(b"another"));
        assert!(made_here.first_difference(&changed).unwrap().contains("credentials"));
        // A plan granting no credential has nothing to check and goes anywhere.
        assert_eq!(saved_with(&there, "").first_difference(&saved_with(&here, "")), None);
    }

    #[test]
    fn refuses_another_format() {
        let mut plan = serde_json::to_value(saved()).unwrap();
        plan["schema"] = 1.into();
        let err = SavedPlan::parse(plan.to_string().as_bytes()).unwrap_err();
        assert!(err.to_string().contains("a plan of format 1; this host reads format 3"), "{err}");
        // A plan of this format with a field missing is no plan, not a plan that moved.
        let mut partial = serde_json::to_value(saved()).unwrap();
        partial.as_object_mut().unwrap().remove("effect");
        let err = SavedPlan::parse(partial.to_string().as_bytes()).unwrap_err();
        assert!(format!("{err:#}").contains("missing field `effect`"), "{err:#}");
    }
}
