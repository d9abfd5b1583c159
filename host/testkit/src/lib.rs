//! Scenarios: a plugin author's tests, as TOML files beside the plugin. Each sets up a
//! simulated mesh (the catalogue's foundation and manifests with edits, the node's
//! behaviour, faults to inject), runs modules on it, and checks what happened against what
//! the file expects. Strict by default: the control-plane commands must be exactly the ones
//! listed.
//!
//! The sweep runs each scenario again with every call that reached the mesh failed in turn
//! (and timed out in turn), and asks of each run that the invariants held, that a refusal
//! named the failed step, and that running the scenario again, without faults, on the mesh
//! the fault left converges to where the clean run, run again the same way, ends.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use serde::Deserialize;

use mesh_adopt_runtime::catalogue::{Catalogue, Foundation, MANIFEST_FILE, PLUGIN_FILE};
use mesh_adopt_runtime::credentials::Credentials;
use mesh_adopt_runtime::mesh::ContainerChange;
use mesh_adopt_runtime::mesh::simulated::{Fault, FaultEffect, NodeApplies, Op, SimSetup, SimulatedMesh};
use mesh_adopt_runtime::options::parse_duration;
use mesh_adopt_runtime::run::{Mode, ModuleOutcome, Run, RunOptions, RunReport};
use mesh_adopt_runtime::runtime::PluginHost;
use mesh_adopt_runtime::transcript::Transcript;

/// One scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What it shows, in a sentence.
    pub name: String,
    /// The modules to run, in order [default: the module whose plugin the file sits beside].
    #[serde(default)]
    pub modules: Vec<String>,
    /// The mesh's starting state and behaviour.
    #[serde(default)]
    pub mesh: MeshSpec,
    /// Changes to the catalogue's manifests and foundation bundle.
    #[serde(default, rename = "edit")]
    pub edits: Vec<Edit>,
    /// What must happen.
    pub expect: Expect,
}

/// The simulated mesh a scenario runs on.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MeshSpec {
    pub node: Option<String>,
    /// `--wait`, e.g. `120s`.
    pub wait: Option<String>,
    /// `REPO[@REF]`, or `""` for none [default: a test repository].
    pub catalog_source: Option<String>,
    /// `normally`, `never`, or `losing NAME`.
    pub applies: Option<String>,
    /// How long after a push the node applies it, e.g. `90s` for a node applying late.
    pub apply_delay: Option<String>,
    /// How long a recreated bus takes to answer, or `never`.
    pub bus_recovery: Option<String>,
    /// How long a build takes.
    pub build_time: Option<String>,
    /// Containers already running another image than the bundle's.
    pub running_images: BTreeMap<String, String>,
    /// Credentials to use instead of the catalogue's genesis ones (name → value).
    pub credentials: Option<BTreeMap<String, String>>,
    /// Faults to inject.
    pub faults: Vec<FaultSpec>,
}

/// A fault: the next `times` calls of `op` whose words contain `matching` fail with `fail`
/// (the mesh's answer) or, with `timeout = true`, time out.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    pub op: String,
    pub matching: String,
    #[serde(default = "one")]
    pub times: u32,
    #[serde(default)]
    pub fail: Option<String>,
    #[serde(default)]
    pub timeout: bool,
}

fn one() -> u32 {
    1
}

/// One change to a document: `file` is `foundation` or `manifest:<module>`; then either
/// `set` a JSON pointer `to` a value, `remove` a JSON pointer, or `remove_resource` by id.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    pub file: String,
    pub set: Option<String>,
    pub to: Option<toml::Value>,
    pub remove: Option<String>,
    pub remove_resource: Option<String>,
}

/// What a scenario expects.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `adopted` (every module), or `refused`, `unusable`, `incomplete` or `failed` (the last
    /// module run).
    pub outcome: String,
    /// Fragments that must appear in the refusal or failure, or in a line said.
    #[serde(default)]
    pub messages: Vec<String>,
    /// Every control-plane command, in order; required unless `strict = false`.
    pub commands: Option<Vec<String>>,
    #[serde(default = "yes")]
    pub strict: bool,
    #[serde(default)]
    pub kept: Vec<String>,
    #[serde(default)]
    pub recreated: Vec<String>,
    #[serde(default)]
    pub created: Vec<String>,
    /// Secrets accepted, as `module/secret`.
    #[serde(default)]
    pub accepted: Vec<String>,
    /// Invariants that must break (a scenario of a misbehaving plugin); none by default.
    #[serde(default)]
    pub broken: Vec<String>,
}

fn yes() -> bool {
    true
}

/// A scenario read from its file.
#[derive(Debug, Clone)]
pub struct ScenarioFile {
    pub path: PathBuf,
    /// `module/file-stem`, for lines of output.
    pub label: String,
    pub scenario: Scenario,
}

/// Finds scenario files: each PATH is a file, or a directory searched for `scenarios/*.toml`.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<ScenarioFile>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_file() {
            files.push(path.clone());
        } else if path.is_dir() {
            collect(path, &mut files)?;
        } else {
            bail!("no scenario file or directory at `{}`", path.display());
        }
    }
    files.sort();
    files.iter().map(|p| read(p)).collect()
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("failed to read `{}`", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() && !path.ends_with("target") {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "toml")
            && path.parent().is_some_and(|p| p.ends_with("scenarios"))
        {
            files.push(path);
        }
    }
    Ok(())
}

/// Reads one scenario, naming the file in any error. Its default module is the name of the
/// directory holding `scenarios/`.
pub fn read(path: &Path) -> Result<ScenarioFile> {
    let text = std::fs::read_to_string(path).with_context(|| format!("failed to read `{}`", path.display()))?;
    let mut scenario: Scenario =
        toml::from_str(&text).with_context(|| format!("the scenario `{}` is malformed", path.display()))?;
    let owner = path
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if scenario.modules.is_empty() {
        scenario.modules.push(owner.clone());
    }
    if scenario.expect.strict && scenario.expect.commands.is_none() {
        bail!("the scenario `{}` lists no `expect.commands`; list them, or say `strict = false`", path.display());
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(ScenarioFile { path: path.to_path_buf(), label: format!("{owner}/{stem}"), scenario })
}

/// The scenario's catalogue, foundation and credentials, written to a directory of its own.
struct Prepared {
    dir: tempfile::TempDir,
    foundation: Foundation,
    options: RunOptions,
}

fn duration(text: &str, what: &str) -> Result<Duration> {
    parse_duration(text).map_err(|e| anyhow::anyhow!("`{what}`: {e}"))
}

fn prepare(catalogue: &Path, scenario: &Scenario) -> Result<Prepared> {
    let dir = tempfile::tempdir()?;
    let read_json = |path: &Path| -> Result<serde_json::Value> {
        let bytes = std::fs::read(path).with_context(|| format!("failed to read `{}`", path.display()))?;
        serde_json::from_slice(&bytes).with_context(|| format!("`{}` is not JSON", path.display()))
    };
    let mut foundation = read_json(&catalogue.join("foundation.json"))?;
    let modules_dir = catalogue.join("modules");
    let mut manifests = BTreeMap::new();
    for entry in
        std::fs::read_dir(&modules_dir).with_context(|| format!("failed to read `{}`", modules_dir.display()))?
    {
        let module_dir = entry?.path();
        if module_dir.join(MANIFEST_FILE).is_file() {
            let name = module_dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
            manifests.insert(name, (read_json(&module_dir.join(MANIFEST_FILE))?, module_dir));
        }
    }
    for edit in &scenario.edits {
        let target = match edit.file.strip_prefix("manifest:") {
            Some(module) => {
                &mut manifests.get_mut(module).with_context(|| format!("edit of unknown module `{module}`"))?.0
            }
            None if edit.file == "foundation" => &mut foundation,
            None => bail!("edit of `{}`: say `foundation` or `manifest:<module>`", edit.file),
        };
        apply_edit(target, edit)?;
    }
    std::fs::write(dir.path().join("foundation.json"), serde_json::to_vec_pretty(&foundation)?)?;
    for (name, (manifest, source)) in &manifests {
        let at = dir.path().join("modules").join(name);
        std::fs::create_dir_all(&at)?;
        std::fs::write(at.join(MANIFEST_FILE), serde_json::to_vec_pretty(manifest)?)?;
        if source.join(PLUGIN_FILE).is_file() {
            std::fs::copy(source.join(PLUGIN_FILE), at.join(PLUGIN_FILE))?;
        }
    }
    let credentials = dir.path().join("credentials");
    std::fs::create_dir_all(&credentials)?;
    match &scenario.mesh.credentials {
        Some(given) => {
            for (name, value) in given {
                std::fs::write(credentials.join(name), value)?;
            }
        }
        None => {
            let genesis = catalogue.join("genesis/credentials");
            if genesis.is_dir() {
                for entry in std::fs::read_dir(&genesis)? {
                    let path = entry?.path();
                    if path.is_file() {
                        std::fs::copy(&path, credentials.join(path.file_name().unwrap_or_default()))?;
                    }
                }
            }
        }
    }
    let spec = &scenario.mesh;
    let options = RunOptions {
        node: spec.node.clone().unwrap_or_else(|| "node-1".into()),
        catalog_source: match spec.catalog_source.as_deref() {
            None => Some(mesh_adopt_runtime::CatalogSource {
                repository: "https://git.mesh.test/catalogue.git".into(),
                ref_: None,
            }),
            Some("") => None,
            Some(text) => {
                Some(mesh_adopt_runtime::options::parse_catalog_source(text).context("`mesh.catalog_source`")?)
            }
        },
        wait: duration(spec.wait.as_deref().unwrap_or("120s"), "mesh.wait")?,
    };
    let foundation = Foundation::load(&dir.path().join("foundation.json"))?;
    Ok(Prepared { dir, foundation, options })
}

fn apply_edit(document: &mut serde_json::Value, edit: &Edit) -> Result<()> {
    if let Some(pointer) = &edit.set {
        let value = serde_json::to_value(edit.to.clone().context("`set` needs `to`")?)?;
        let (parent, key) =
            pointer.rsplit_once('/').context("`set` takes a JSON pointer such as /resources/0/image")?;
        let parent = document.pointer_mut(parent).with_context(|| format!("nothing at `{parent}`"))?;
        match parent {
            serde_json::Value::Object(map) => {
                map.insert(key.to_string(), value);
            }
            serde_json::Value::Array(items) => {
                let index: usize = key.parse().with_context(|| format!("`{key}` is not an index"))?;
                // One past the end appends, as JSON Patch's `add` does.
                if index == items.len() {
                    items.push(value);
                } else {
                    *items.get_mut(index).with_context(|| format!("nothing at `{pointer}`"))? = value;
                }
            }
            _ => bail!("`{pointer}` is inside neither an object nor an array"),
        }
    }
    if let Some(pointer) = &edit.remove {
        let (parent, key) = pointer.rsplit_once('/').context("`remove` takes a JSON pointer")?;
        match document.pointer_mut(parent).with_context(|| format!("nothing at `{parent}`"))? {
            serde_json::Value::Object(map) => {
                map.remove(key).with_context(|| format!("nothing at `{pointer}`"))?;
            }
            serde_json::Value::Array(items) => {
                let index: usize = key.parse().with_context(|| format!("`{key}` is not an index"))?;
                anyhow::ensure!(index < items.len(), "nothing at `{pointer}`");
                items.remove(index);
            }
            _ => bail!("`{pointer}` is inside neither an object nor an array"),
        }
    }
    if let Some(id) = &edit.remove_resource {
        let resources = document["resources"].as_array_mut().context("no `resources` to remove from")?;
        let before = resources.len();
        resources.retain(|r| r["id"] != id.as_str());
        anyhow::ensure!(resources.len() < before, "no resource `{id}` to remove");
    }
    Ok(())
}

fn setup(scenario: &Scenario, prepared: &Prepared) -> Result<SimSetup> {
    let spec = &scenario.mesh;
    let mut setup = SimSetup::new(prepared.foundation.clone(), &prepared.options.node);
    setup.running_images = spec.running_images.clone();
    if let Some(t) = &spec.apply_delay {
        setup.apply_delay = duration(t, "mesh.apply_delay")?;
    }
    if let Some(t) = &spec.build_time {
        setup.build_time = duration(t, "mesh.build_time")?;
    }
    setup.bus_recovery = match spec.bus_recovery.as_deref() {
        None => setup.bus_recovery,
        Some("never") => None,
        Some(t) => Some(duration(t, "mesh.bus_recovery")?),
    };
    setup.applies = match spec.applies.as_deref() {
        None | Some("normally") => NodeApplies::Normally,
        Some("never") => NodeApplies::Never,
        Some(other) => match other.strip_prefix("losing ") {
            Some(name) => NodeApplies::LosingContainer(name.trim().to_string()),
            None => bail!("`mesh.applies` is `normally`, `never` or `losing NAME`, not `{other}`"),
        },
    };
    for fault in &spec.faults {
        let op = match fault.op.as_str() {
            "carry" => Op::Carry,
            "tell" => Op::Tell,
            "inspect" => Op::Inspect,
            "fetch" => Op::Fetch,
            other => bail!("fault `op` is carry, tell, inspect or fetch, not `{other}`"),
        };
        let effect = match (&fault.fail, fault.timeout) {
            (Some(output), false) => FaultEffect::Fail(output.clone()),
            (None, true) => FaultEffect::TimeOut,
            _ => bail!("a fault says either `fail = \"…\"` or `timeout = true`"),
        };
        setup.faults.push(Fault { op, matching: fault.matching.clone(), times: fault.times, effect });
    }
    Ok(setup)
}

/// What one run of a scenario did.
pub struct ScenarioRun {
    pub report: RunReport,
    pub mesh: Arc<SimulatedMesh>,
    pub transcript: Arc<Transcript>,
}

/// Runs `scenario` against `catalogue` on a fresh mesh, or on `mesh` when given (to run
/// again on what an earlier run left); `fail_call` fails one call by its number.
pub async fn run(
    host: &PluginHost,
    catalogue: &Path,
    scenario: &Scenario,
    fail_call: Option<(usize, FaultEffect)>,
) -> Result<ScenarioRun> {
    let prepared = prepare(catalogue, scenario)?;
    let mut setup = setup(scenario, &prepared)?;
    setup.fail_call = fail_call;
    let mesh = Arc::new(SimulatedMesh::new(setup));
    let report = run_on(host, scenario, &prepared, mesh.clone()).await;
    Ok(ScenarioRun { report: report.0, mesh, transcript: report.1 })
}

async fn run_on(
    host: &PluginHost,
    scenario: &Scenario,
    prepared: &Prepared,
    mesh: Arc<SimulatedMesh>,
) -> (RunReport, Arc<Transcript>) {
    let transcript = Arc::new(Transcript::default());
    let catalogue = Catalogue::at(prepared.dir.path());
    let run = Run::builder(host, &catalogue, &prepared.foundation, mesh)
        .credentials(Arc::new(Credentials::open(&prepared.dir.path().join("credentials"))))
        .record(transcript.clone())
        .options(prepared.options.clone())
        .build();
    (run.run(&scenario.modules, Mode::Adopt).await, transcript)
}

/// Compares a run with what the scenario expects; each difference is one line (several
/// for a command list, shown as a diff).
pub fn differences(scenario: &Scenario, ran: &ScenarioRun) -> Vec<String> {
    let expect = &scenario.expect;
    let mut found = Vec::new();
    let last = ran.report.modules.iter().rev().find(|(_, o)| !matches!(o, ModuleOutcome::NotRun { .. }));
    let (outcome, message) = match last.map(|(_, o)| o) {
        Some(ModuleOutcome::Adopted(s)) if ran.report.modules.iter().all(|(_, o)| o.succeeded()) => {
            ("adopted", s.clone())
        }
        Some(ModuleOutcome::Refused { message, .. }) => ("refused", message.clone()),
        Some(ModuleOutcome::Failed(stopped)) => ("failed", stopped.report.clone()),
        Some(ModuleOutcome::Unusable(unusable)) => ("unusable", unusable.message.clone()),
        Some(ModuleOutcome::Incomplete { summary, .. }) => ("incomplete", summary.clone()),
        Some(other) => ("other", format!("{other:?}")),
        None => ("nothing run", String::new()),
    };
    if outcome != expect.outcome {
        found.push(format!("outcome: expected {}, got {outcome}: {message}", expect.outcome));
    }
    let said: Vec<String> = scenario.modules.iter().flat_map(|m| ran.transcript.said(m)).collect();
    for fragment in &expect.messages {
        if !message.contains(fragment.as_str()) && !said.iter().any(|l| l.contains(fragment.as_str())) {
            found.push(format!("message: no {fragment:?} in the refusal or the lines said"));
        }
    }
    let commands: Vec<String> = ran.mesh.commands().iter().map(|c| c.join(" ")).collect();
    if let Some(expected) = &expect.commands
        && expected != &commands
    {
        found.push(format!("commands (- expected, + actual):\n{}", diff(expected, &commands)));
    }
    let changed = |want: &dyn Fn(&ContainerChange) -> Option<String>| -> Vec<String> {
        ran.report.changes.iter().filter_map(want).collect()
    };
    let kept = changed(&|c| matches!(c, ContainerChange::Kept { .. }).then(|| c.name().to_string()));
    let recreated = changed(&|c| matches!(c, ContainerChange::Recreated { .. }).then(|| c.name().to_string()));
    let created = changed(&|c| matches!(c, ContainerChange::Created { .. }).then(|| c.name().to_string()));
    for (what, want, got) in [
        ("kept", &expect.kept, kept),
        ("recreated", &expect.recreated, recreated),
        ("created", &expect.created, created),
    ] {
        if want != &got {
            found.push(format!("{what}: expected {want:?}, got {got:?}"));
        }
    }
    let accepted: Vec<String> = ran.mesh.accepted().iter().map(|(m, s)| format!("{m}/{s}")).collect();
    if expect.accepted != accepted {
        found.push(format!("accepted: expected {:?}, got {accepted:?}", expect.accepted));
    }
    let broken: Vec<String> = ran.report.violations.iter().map(|v| v.invariant.to_string()).collect();
    if expect.broken != broken {
        found.push(format!("invariants broken: expected {:?}, got {:?}", expect.broken, ran.report.violations));
    }
    found
}

/// A line diff of two command lists: unchanged lines indented, others marked - or +.
fn diff(expected: &[String], actual: &[String]) -> String {
    let (n, m) = (expected.len(), actual.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if expected[i] == actual[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut lines) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && expected[i] == actual[j] {
            lines.push(format!("      {}", expected[i]));
            (i, j) = (i + 1, j + 1);
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            lines.push(format!("    + {}", actual[j]));
            j += 1;
        } else {
            lines.push(format!("    - {}", expected[i]));
            i += 1;
        }
    }
    lines.join("\n")
}

/// What the sweep found for one scenario.
#[derive(Debug, Clone, Default)]
pub struct SweepResult {
    /// Faulted runs made: one per call failed, one per call timed out.
    pub steps: usize,
    /// Runs that kept every invariant, named the failed step if they refused, and converged.
    pub survived: usize,
    /// Runs that did not converge when run again.
    pub not_converged: usize,
    /// One line for each faulted run that did not survive, naming the step.
    pub problems: Vec<String>,
}

/// Sweeps `scenario`: fails each call of its clean run in turn, then times each out in
/// turn, and checks every faulted run (see the module's documentation).
pub async fn sweep(host: &PluginHost, catalogue: &Path, scenario: &Scenario) -> Result<SweepResult> {
    let clean = run(host, catalogue, scenario, None).await?;
    let calls = clean.mesh.calls();
    // The reference is the clean run run again too, as every faulted run is; each rerun runs
    // without faults, the scenario's own included, so both sides end the same way.
    let prepared = prepare(catalogue, scenario)?;
    clean.mesh.clear_faults();
    run_on(host, scenario, &prepared, clean.mesh.clone()).await;
    let clean_end = clean.mesh.end_state();
    let mut result = SweepResult::default();
    let effects = [FaultEffect::Fail("injected fault: the mesh said no".into()), FaultEffect::TimeOut];
    for effect in effects {
        for (index, call) in calls.iter().enumerate() {
            result.steps += 1;
            let kind = if matches!(effect, FaultEffect::TimeOut) { "timed out" } else { "failed" };
            let step = format!("step {} (`{call}`) {kind}", index + 1);
            let faulted = run(host, catalogue, scenario, Some((index, effect.clone()))).await?;
            let mut problems = Vec::new();
            if !faulted.report.violations.is_empty() {
                let names: Vec<String> = faulted.report.violations.iter().map(ToString::to_string).collect();
                problems.push(names.join("; "));
            }
            let words = call.split_once(' ').map(|(_, w)| w).unwrap_or(call);
            let refusal = faulted.report.modules.iter().find_map(|(_, o)| o.problem().map(str::to_string));
            let clean_refused = !clean.report.succeeded();
            if let Some(message) = &refusal
                && !clean_refused
                && !message.contains(words)
            {
                problems.push(format!("the refusal does not name the step: {message}"));
            }
            // Run again, without faults, on what the faulted run left.
            let prepared = prepare(catalogue, scenario)?;
            faulted.mesh.clear_faults();
            let (again, _) = run_on(host, scenario, &prepared, faulted.mesh.clone()).await;
            let end = faulted.mesh.end_state();
            if !again.violations.is_empty() && problems.is_empty() {
                let names: Vec<String> = again.violations.iter().map(ToString::to_string).collect();
                problems.push(format!("running again: {}", names.join("; ")));
            }
            if end != clean_end {
                result.not_converged += 1;
                problems.push(format!(
                    "running again did not converge to the clean end state:\n{}",
                    diff(
                        &clean_end.lines().map(String::from).collect::<Vec<_>>(),
                        &end.lines().map(String::from).collect::<Vec<_>>()
                    )
                ));
            }
            if problems.is_empty() {
                result.survived += 1;
            } else {
                result.problems.push(format!("{step}: {}", problems.join("; ")));
            }
        }
    }
    Ok(result)
}
