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

#![warn(missing_docs)]

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use serde::Deserialize;

use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::events::Op;
use mesh_adopt_runtime::events::OutcomeWord;
use mesh_adopt_runtime::files::read_bounded;
use mesh_adopt_runtime::mesh::ContainerChange;
use mesh_adopt_runtime::mesh::simulated::{Fault, FaultEffect, NodeApplies, SimSetup, SimulatedMesh};
use mesh_adopt_runtime::parse_duration;
use mesh_adopt_runtime::transcript::Transcript;
use mesh_adopt_runtime::{Catalogue, FOUNDATION_BYTES, Foundation, ModuleFiles};
use mesh_adopt_runtime::{CredentialValues, Credentials};
use mesh_adopt_runtime::{Mode, ModuleOutcome, Run, RunOptions, RunReport};

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
    /// The node modules are assigned to [default: `node-1`].
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
    /// The import: `carry`, `tell`, `inspect` or `fetch`.
    pub op: String,
    /// Words the call's arguments must contain.
    pub matching: String,
    /// How many matching calls it fails [default: 1].
    #[serde(default = "one")]
    pub times: u32,
    /// The mesh's answer to each: what a failing command prints.
    #[serde(default)]
    pub fail: Option<String>,
    /// Whether each times out instead.
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
    /// The document: `foundation` or `manifest:<module>`.
    pub file: String,
    /// A JSON pointer (RFC 6901) to set, or to append to with a last token of `-`.
    pub set: Option<String>,
    /// The value `set` gives.
    pub to: Option<toml::Value>,
    /// A JSON pointer to remove.
    pub remove: Option<String>,
    /// A foundation resource to remove, by its id.
    pub remove_resource: Option<String>,
}

/// What a scenario expects.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `adopted` (every module), or `refused`, `unusable`, `incomplete` or `failed` (the last
    /// module run).
    pub outcome: String,
    /// The refusal's code, with `outcome = "refused"`: the kind an installer acts on. A plugin
    /// of contract 0.1.0 refuses without a code, so its refusal is not held to one.
    #[serde(default)]
    pub code: Option<String>,
    /// Fragments that must appear in the refusal or failure, or in a line said.
    #[serde(default)]
    pub messages: Vec<String>,
    /// Fragments that must appear neither in the refusal or failure nor in a line said.
    #[serde(default)]
    pub absent: Vec<String>,
    /// Every control-plane command, in order; required unless `strict = false`.
    pub commands: Option<Vec<String>>,
    /// Whether `commands` must be given and match exactly [default: true].
    #[serde(default = "yes")]
    pub strict: bool,
    /// Containers left running as they were.
    #[serde(default)]
    pub kept: Vec<String>,
    /// Containers recreated onto another image.
    #[serde(default)]
    pub recreated: Vec<String>,
    /// Containers raised where there were none.
    #[serde(default)]
    pub created: Vec<String>,
    /// Secrets accepted, as `module/secret`.
    #[serde(default)]
    pub accepted: Vec<String>,
    /// The files carried into the control plane, by remote path, each `file` or `secret`;
    /// compared only when given.
    #[serde(default)]
    pub carried: Option<BTreeMap<String, String>>,
    /// Invariants that must break (a scenario of a misbehaving plugin); none by default.
    #[serde(default)]
    pub broken: Vec<String>,
}

fn yes() -> bool {
    true
}

/// The outcomes a scenario can expect: any but `ready`, since a scenario adopts.
fn scenario_outcomes() -> impl Iterator<Item = OutcomeWord> {
    OutcomeWord::ALL.into_iter().filter(|word| *word != OutcomeWord::Ready)
}

/// A scenario read from its file.
#[derive(Debug, Clone)]
pub struct ScenarioFile {
    /// The file, as messages name it.
    pub path: PathBuf,
    /// `module/file-stem`, for lines of output.
    pub label: String,
    /// What it says.
    pub scenario: Scenario,
}

/// The largest scenario file read: real ones are a few hundred bytes.
const SCENARIO_BYTES: u64 = 1 << 20;

/// Finds scenario files: each PATH is a file, or a directory searched for `scenarios/*.toml`.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<ScenarioFile>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_file() {
            files.push(path.clone());
        } else if path.is_dir() {
            collect(path, &mut files, &mut Default::default())?;
        } else {
            bail!("no scenario file or directory at `{}`", path.display());
        }
    }
    files.sort();
    // A module's source may sit inside its directory: both are searched, and the same file
    // reached by two paths (`modules/m/plugin` and `modules/m/./plugin`, a link) runs once.
    let mut seen = std::collections::BTreeSet::new();
    files.retain(|path| seen.insert(path.canonicalize().unwrap_or_else(|_| path.clone())));
    files.iter().map(|p| read(p)).collect()
}

/// Directories toolchains fill with build products and other projects' files, never a
/// plugin author's scenarios: cargo's `target`, npm's `node_modules`, a Python `.venv`.
fn is_build_directory(dir: &Path) -> bool {
    dir.file_name().is_some_and(|name| ["target", "node_modules", ".venv", "__pycache__"].iter().any(|n| name == *n))
}

/// Collects the scenario files under `dir`, each directory searched once however many links
/// lead to it (`visited` holds them resolved), so a link back up the tree ends the search.
fn collect(dir: &Path, files: &mut Vec<PathBuf>, visited: &mut std::collections::BTreeSet<PathBuf>) -> Result<()> {
    let resolved = dir.canonicalize().with_context(|| format!("failed to read `{}`", dir.display()))?;
    if !visited.insert(resolved) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("failed to read `{}`", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() && !is_build_directory(&path) {
            collect(&path, files, visited)?;
        } else if path.extension().is_some_and(|e| e == "toml")
            && path.parent().is_some_and(|p| p.ends_with("scenarios"))
        {
            files.push(path);
        }
    }
    Ok(())
}

/// Reads one scenario, naming the file in any error. Its default module is the module whose
/// directory holds `scenarios/`, or holds the plugin source that does (`modules/<module>/`
/// with a `manifest.json`, or its `plugin/` inside it); else the name of the directory
/// holding `scenarios/` (a source kept apart, named as its module).
pub fn read(path: &Path) -> Result<ScenarioFile> {
    let text = read_bounded(path, SCENARIO_BYTES)
        .map_err(|e| anyhow::anyhow!("{e:#}"))
        .and_then(|bytes| Ok(String::from_utf8(bytes)?))
        .with_context(|| format!("failed to read the scenario `{}`", path.display()))?;
    let mut scenario: Scenario =
        toml::from_str(&text).with_context(|| format!("the scenario `{}` is malformed", path.display()))?;
    // Without `.` components, whose file name is none.
    let holder: PathBuf = path
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."))
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect();
    let owner = holder
        .ancestors()
        .take(2)
        .find(|dir| dir.join(mesh_adopt_runtime::MANIFEST_FILE).is_file())
        .unwrap_or(&holder)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if scenario.modules.is_empty() {
        // The directory holding `scenarios/` names the module run by default, unless it is a
        // catalogue's own (whose scenarios run several modules and must say which).
        let beside = path.parent().and_then(Path::parent).unwrap_or(Path::new("."));
        let a_catalogue = beside.join("modules").is_dir() || beside.join("foundation.json").is_file();
        if a_catalogue || mesh_adopt_runtime::check_module_name(&owner).is_err() {
            bail!(
                "the scenario `{}` names no `modules`, and it is not beside one module to run by default: say \
                 `modules = [\"...\"]`",
                path.display()
            );
        }
        scenario.modules.push(owner.clone());
    }
    if !scenario_outcomes().any(|word| word.words() == scenario.expect.outcome) {
        bail!(
            "the scenario `{}` expects the outcome `{}`: say one of {}",
            path.display(),
            scenario.expect.outcome.escape_debug(),
            scenario_outcomes().map(OutcomeWord::words).collect::<Vec<_>>().join(", ")
        );
    }
    if let Some((remote, kind)) =
        scenario.expect.carried.iter().flatten().find(|(_, kind)| !["file", "secret"].contains(&kind.as_str()))
    {
        bail!(
            "the scenario `{}` expects `{}` carried as `{}`: say `file` or `secret`",
            path.display(),
            remote.escape_debug(),
            kind.escape_debug()
        );
    }
    if let Some(code) = &scenario.expect.code {
        if scenario.expect.outcome != OutcomeWord::Refused.words() {
            bail!(
                "the scenario `{}` expects the code {code:?} with the outcome {:?}: only a refusal has a code",
                path.display(),
                scenario.expect.outcome
            );
        }
        if let Some(fault) = mesh_adopt_runtime::Refusal::code_fault(code) {
            bail!("the scenario `{}` expects the code {code:?}, which {fault}", path.display());
        }
    }
    if scenario.expect.strict && scenario.expect.commands.is_none() {
        bail!("the scenario `{}` lists no `expect.commands`; list them, or say `strict = false`", path.display());
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(ScenarioFile { path: path.to_path_buf(), label: format!("{owner}/{stem}"), scenario })
}

/// The catalogue scenarios start from, read once: the foundation bundle's bytes, each module's
/// directory and the genesis credentials. Each scenario's catalogue is made from it in memory
/// ([`prepare`]), so no run of a scenario, nor any step of a sweep, reads the catalogue again
/// or writes anything anywhere.
#[derive(Debug, Clone)]
pub struct Documents {
    root: PathBuf,
    foundation_path: PathBuf,
    foundation: Vec<u8>,
    modules: BTreeMap<String, ModuleFiles>,
    genesis: CredentialValues,
}

impl Documents {
    /// Reads the catalogue at `root`: `foundation.json` (bounded as a run bounds it), every
    /// `modules/<name>/` that holds a manifest, and `genesis/credentials/`, whose problems
    /// (a directory missing, a credential empty) are kept to be reported by the run that asks.
    pub fn read(root: &Path) -> Result<Documents> {
        let foundation_path = root.join("foundation.json");
        let foundation = read_bounded(&foundation_path, FOUNDATION_BYTES)
            .with_context(|| format!("failed to read the foundation bundle `{}`", foundation_path.display()))?;
        Ok(Documents {
            modules: Catalogue::at(root).read_modules()?,
            genesis: CredentialValues::read_dir(&root.join("genesis/credentials")),
            root: root.to_path_buf(),
            foundation_path,
            foundation,
        })
    }
}

/// A scenario made ready to run, all in memory: its catalogue with its edits applied, its
/// foundation bundle, credentials and options, and the mesh it starts on. Built once, it runs
/// as often as a sweep needs, each run checking the catalogue as `mesh-adopt run` does.
pub struct Prepared {
    modules: Vec<String>,
    catalogue: Catalogue,
    foundation: Foundation,
    credentials: CredentialValues,
    options: RunOptions,
    setup: SimSetup,
    /// The outcome the scenario expects: what a sweep's rerun must end with when it is
    /// `adopted`.
    expected: String,
}

/// Makes `file`'s scenario ready to run from `documents`: the catalogue, foundation and
/// credentials it edits or gives, its options and its mesh, without touching the disk.
pub fn prepare(documents: &Documents, file: &ScenarioFile) -> Result<Prepared> {
    let scenario = &file.scenario;
    let (foundation, modules) = edited(documents, &scenario.edits)?;
    let credentials = match &scenario.mesh.credentials {
        Some(given) => CredentialValues::given(&file.path, "mesh.credentials", given).map_err(anyhow::Error::msg)?,
        None => documents.genesis.clone(),
    };
    let options = options(&scenario.mesh)?;
    let setup = setup(&scenario.mesh, foundation.clone(), &options.node)?;
    Ok(Prepared {
        modules: scenario.modules.clone(),
        catalogue: Catalogue::in_memory(&documents.root, modules),
        foundation,
        credentials,
        options,
        setup,
        expected: scenario.expect.outcome.clone(),
    })
}

/// The foundation bundle and the modules with `edits` applied. Only the documents an edit
/// names are parsed and written again (as pretty JSON); the others reach the run byte for byte
/// as the catalogue ships them. Messages name the catalogue's files, never a copy.
fn edited(documents: &Documents, edits: &[Edit]) -> Result<(Foundation, BTreeMap<String, ModuleFiles>)> {
    let mut changed: BTreeMap<&str, serde_json::Value> = BTreeMap::new();
    for (index, edit) in edits.iter().enumerate() {
        let what = || format!("edit {} (of `{}`)", index + 1, edit.file);
        let (bytes, path) = match edit.file.strip_prefix("manifest:") {
            Some(module) => {
                let files = documents
                    .modules
                    .get(module)
                    .with_context(|| format!("{}: the catalogue has no module `{module}`", what()))?;
                let bytes = files.manifest.as_ref().map_err(|why| {
                    anyhow::anyhow!("{}: failed to read `{}`: {why}", what(), files.manifest_path.display())
                })?;
                (bytes, &files.manifest_path)
            }
            None if edit.file == "foundation" => (&documents.foundation, &documents.foundation_path),
            None => bail!("{}: say `foundation` or `manifest:<module>`", what()),
        };
        let document = match changed.entry(edit.file.as_str()) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(
                serde_json::from_slice(bytes)
                    .with_context(|| format!("{}: `{}` is not JSON", what(), path.display()))?,
            ),
        };
        apply_edit(document, edit).with_context(what)?;
    }
    let mut modules = documents.modules.clone();
    let mut foundation = None;
    for (file, document) in changed {
        let bytes = serde_json::to_vec_pretty(&document)?;
        match file.strip_prefix("manifest:") {
            Some(module) => {
                modules.get_mut(module).context("an edited module is in the catalogue")?.manifest = Ok(bytes)
            }
            None => foundation = Some(bytes),
        }
    }
    let path = documents.foundation_path.display();
    let foundation = match foundation {
        Some(bytes) => Foundation::from_memory(&bytes, &format!("`{path}`, as the scenario edits it,"))?,
        None => Foundation::from_memory(&documents.foundation, &format!("`{path}`"))?,
    };
    Ok((foundation, modules))
}

fn duration(text: &str, what: &str) -> Result<Duration> {
    parse_duration(text).map_err(|e| anyhow::anyhow!("`{what}`: {e}"))
}

/// The options a run of the scenario gets: its node, catalogue source and `--wait`.
fn options(spec: &MeshSpec) -> Result<RunOptions> {
    Ok(RunOptions {
        node: spec.node.clone().unwrap_or_else(|| "node-1".into()),
        catalog_source: match spec.catalog_source.as_deref() {
            None => Some(mesh_adopt_runtime::CatalogSource {
                repository: "https://git.mesh.test/catalogue.git".into(),
                reference: None,
            }),
            Some("") => None,
            Some(text) => Some(mesh_adopt_runtime::parse_catalog_source(text).context("`mesh.catalog_source`")?),
        },
        wait: duration(spec.wait.as_deref().unwrap_or("120s"), "mesh.wait")?,
    })
}

/// Applies one edit to a document. Pointers are JSON pointers (RFC 6901: `~1` is a `/` inside
/// a key, `~0` a `~`). `set` replaces what is there, or adds it as JSON Patch's `add` does (a
/// new key, or one past an array's end, or `-`); `remove` removes what is there.
fn apply_edit(document: &mut serde_json::Value, edit: &Edit) -> Result<()> {
    use json_patch::jsonptr::PointerBuf;
    use json_patch::{AddOperation, PatchOperation, RemoveOperation};
    let pointer = |text: &str, key: &str| {
        PointerBuf::parse(text).map_err(|e| anyhow::anyhow!("`{key} = {text:?}` is not a JSON pointer (RFC 6901): {e}"))
    };
    if let Some(text) = &edit.set {
        let path = pointer(text, "set")?;
        let value = serde_json::to_value(edit.to.clone().context("`set` needs `to`")?)?;
        match document.pointer_mut(path.as_str()) {
            Some(there) => *there = value,
            None => json_patch::patch(document, &[PatchOperation::Add(AddOperation { path, value })]).map_err(|e| {
                anyhow::anyhow!(
                    "nothing at `{text}` to set, nor a place to add it ({}): its parent must be an object, or an \
                     array it would end",
                    e.kind
                )
            })?,
        }
    }
    if let Some(text) = &edit.remove {
        let path = pointer(text, "remove")?;
        json_patch::patch(document, &[PatchOperation::Remove(RemoveOperation { path })])
            .map_err(|e| anyhow::anyhow!("nothing at `{text}` to remove ({})", e.kind))?;
    }
    if let Some(id) = &edit.remove_resource {
        let resources = document["resources"].as_array_mut().context("no `resources` to remove from")?;
        let before = resources.len();
        resources.retain(|r| r["id"] != id.as_str());
        anyhow::ensure!(resources.len() < before, "no resource `{id}` to remove");
    }
    Ok(())
}

/// The simulated mesh the scenario starts on: raised from `foundation`, behaving as `spec` says.
fn setup(spec: &MeshSpec, foundation: Foundation, node: &str) -> Result<SimSetup> {
    let mut setup = SimSetup::new(foundation, node);
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
    /// The run's outcomes, changes and invariants.
    pub report: RunReport,
    /// The mesh as the run left it, to run again on.
    pub mesh: Arc<SimulatedMesh>,
    /// Every call and line of the run.
    pub transcript: Arc<Transcript>,
}

impl Prepared {
    /// Runs the scenario on a fresh mesh; `fail_call` fails one call by its number.
    pub async fn run(&self, host: &PluginHost, fail_call: Option<(usize, FaultEffect)>) -> ScenarioRun {
        let mut setup = self.setup.clone();
        setup.fail_call = fail_call;
        self.run_on(host, Arc::new(SimulatedMesh::new(setup))).await
    }

    /// Runs the scenario again, without faults (its own included), on the mesh `ran` left.
    pub async fn run_again(&self, host: &PluginHost, ran: &ScenarioRun) -> ScenarioRun {
        ran.mesh.clear_faults();
        self.run_on(host, ran.mesh.clone()).await
    }

    /// Runs the scenario's modules on `mesh` as `mesh-adopt run` would: the same preflight and
    /// checks, against the catalogue in memory, with credentials nothing has handed out yet.
    async fn run_on(&self, host: &PluginHost, mesh: Arc<SimulatedMesh>) -> ScenarioRun {
        let transcript = Arc::new(Transcript::default());
        let run = Run::builder(host, &self.catalogue, &self.foundation, mesh.clone())
            .credentials(Arc::new(Credentials::in_memory(self.credentials.clone())))
            .record(transcript.clone())
            .options(self.options.clone())
            .build();
        let report = run.run(&self.modules, Mode::Adopt).await;
        ScenarioRun { report, mesh, transcript }
    }
}

/// Runs `file`'s scenario against the catalogue at `catalogue` on a fresh mesh; `fail_call`
/// fails one call by its number. Any error names the scenario file.
pub async fn run(
    host: &PluginHost,
    catalogue: &Path,
    file: &ScenarioFile,
    fail_call: Option<(usize, FaultEffect)>,
) -> Result<ScenarioRun> {
    let prepared = Documents::read(catalogue)
        .and_then(|documents| prepare(&documents, file))
        .with_context(|| format!("failed to run the scenario `{}`", file.path.display()))?;
    Ok(prepared.run(host, fail_call).await)
}

/// The outcome of the last module the run got to: what a scenario's outcome is of.
fn last_run(report: &RunReport) -> Option<&ModuleOutcome> {
    report.modules.iter().rev().map(|(_, o)| o).find(|o| !matches!(o, ModuleOutcome::NotRun { .. }))
}

/// How a run ended, as a scenario names it, with the message that goes with it: `adopted`
/// when every module was, else what became of the last module run, or `not run` when
/// preflight stopped the run before any.
pub fn outcome_of(report: &RunReport) -> (&'static str, String) {
    match last_run(report) {
        Some(ModuleOutcome::Adopted(s)) if report.modules.iter().all(|(_, o)| o.succeeded()) => {
            (OutcomeWord::Adopted.words(), s.clone())
        }
        Some(ModuleOutcome::Refused { message, .. }) => (OutcomeWord::Refused.words(), message.clone()),
        Some(ModuleOutcome::Failed(stopped)) => (OutcomeWord::Failed.words(), stopped.report.clone()),
        Some(ModuleOutcome::Unusable(unusable)) => (OutcomeWord::Unusable.words(), unusable.message.clone()),
        Some(ModuleOutcome::Incomplete { summary, .. }) => (OutcomeWord::Incomplete.words(), summary.clone()),
        Some(other) => (other.word().words(), other.shown()),
        // Preflight stopped the run before any module adopted: why, as every module says it.
        None => match report.modules.first() {
            Some((_, ModuleOutcome::NotRun { because })) => (OutcomeWord::NotRun.words(), because.clone()),
            _ => ("nothing run", String::new()),
        },
    }
}

/// The code of the refusal that ended a run, if one did and it has a code.
pub fn refusal_code(report: &RunReport) -> Option<&str> {
    match last_run(report) {
        Some(ModuleOutcome::Refused { code, .. }) => code.as_deref(),
        _ => None,
    }
}

/// Compares a run with what the scenario expects; each difference is one line (several
/// for a command list, shown as a diff).
pub fn differences(scenario: &Scenario, ran: &ScenarioRun) -> Vec<String> {
    let expect = &scenario.expect;
    let mut found = Vec::new();
    let (outcome, message) = outcome_of(&ran.report);
    if outcome != expect.outcome {
        found.push(format!("outcome: expected {}, got {outcome}: {message}", expect.outcome));
    }
    if let Some(expected) = &expect.code
        && outcome == expect.outcome
    {
        match refusal_code(&ran.report) {
            Some(code) if code == expected => {}
            Some(code) => found.push(format!("code: expected {expected}, got {code}: {message}")),
            // A refusal of contract 0.1.0, which has no codes.
            None => {}
        }
    }
    let said: Vec<String> = scenario.modules.iter().flat_map(|m| ran.transcript.said(m)).collect();
    let missing: Vec<&String> = expect
        .messages
        .iter()
        .filter(|fragment| !message.contains(fragment.as_str()) && !said.iter().any(|l| l.contains(fragment.as_str())))
        .collect();
    if !missing.is_empty() {
        // What was said instead is what the author needs to mend either the plugin or the
        // expectation.
        let fragments: Vec<String> = missing.iter().map(|f| format!("{f:?}")).collect();
        let mut text = format!("message: no {} in the {outcome} message or the lines said", fragments.join(", no "));
        // A wrong outcome has already shown its message.
        let shown = if outcome != expect.outcome {
            "(above)"
        } else if message.is_empty() {
            "(no message)"
        } else {
            &message
        };
        text.push_str(&format!("\n  {outcome}: {shown}"));
        match said.as_slice() {
            [] => text.push_str("\n  said: (nothing)"),
            lines => text.push_str(&format!("\n  said: {}", lines.join("\n        "))),
        }
        found.push(text);
    }
    let shown: Vec<String> = expect
        .absent
        .iter()
        .filter(|fragment| message.contains(fragment.as_str()) || said.iter().any(|l| l.contains(fragment.as_str())))
        .map(|fragment| format!("{fragment:?}"))
        .collect();
    if !shown.is_empty() {
        let said = if said.is_empty() { "(nothing)".to_string() } else { said.join("\n        ") };
        found.push(format!(
            "message: {} in the {outcome} message or the lines said, where the scenario expects none\n  {outcome}: \
             {message}\n  said: {said}",
            shown.join(", ")
        ));
    }
    // A fault no call matched did nothing: most often a typo in `matching`.
    let left = ran.mesh.faults_left();
    for (index, fault) in scenario.mesh.faults.iter().enumerate() {
        if left.iter().any(|f| f.op.name() == fault.op && f.matching == fault.matching && f.times == fault.times) {
            found.push(format!(
                "fault {} (`{}` matching {:?}) was never applied: no call matched it",
                index + 1,
                fault.op,
                fault.matching
            ));
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
    if let Some(expected) = &expect.carried {
        let carried: BTreeMap<String, String> = ran
            .mesh
            .carried()
            .into_iter()
            .map(|(remote, secret)| (remote, if secret { "secret" } else { "file" }.to_string()))
            .collect();
        if expected != &carried {
            found.push(format!("carried: expected {expected:?}, got {carried:?}"));
        }
    }
    // Which invariants broke, each once: a plugin that breaks one twice (in preflight and
    // again in adopt) broke it.
    let mut broken: Vec<&str> = Vec::new();
    for violation in &ran.report.violations {
        if !broken.contains(&violation.invariant) {
            broken.push(violation.invariant);
        }
    }
    if expect.broken != broken {
        let how: Vec<String> = ran.report.violations.iter().map(|v| format!("\n  {v}")).collect();
        found.push(format!("invariants broken: expected {:?}, got {broken:?}{}", expect.broken, how.concat()));
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

/// Sweeps `file`'s scenario against the catalogue at `catalogue`: see [`sweep_prepared`].
/// Any error names the scenario file.
pub fn sweep(host: &PluginHost, catalogue: &Path, file: &ScenarioFile) -> Result<SweepResult> {
    let prepared = Documents::read(catalogue)
        .and_then(|documents| prepare(&documents, file))
        .with_context(|| format!("failed to sweep the scenario `{}`", file.path.display()))?;
    Ok(sweep_prepared(host, &prepared))
}

/// Fails each call of the scenario's clean run in turn, then times each out in turn, and
/// judges every faulted run (see the module's documentation).
///
/// The steps are independent runs, so they are shared among a thread per core, each with a
/// runtime of its own; the result is the same, in the same order, as one thread would give.
/// It blocks the calling thread until every step is judged.
pub fn sweep_prepared(host: &PluginHost, prepared: &Prepared) -> SweepResult {
    let reference = std::thread::scope(|scope| {
        scope.spawn(|| on_own_runtime(Reference::of(host, prepared))).join().expect("the clean run does not panic")
    });
    let steps = steps(&reference.calls);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, steps.len().max(1));
    let mut verdicts: Vec<(usize, Verdict)> = std::thread::scope(|scope| {
        let (reference, steps) = (&reference, &steps);
        let shares: Vec<_> = (0..workers)
            .map(|worker| {
                scope.spawn(move || {
                    on_own_runtime(async {
                        let mut verdicts = Vec::new();
                        for index in (worker..steps.len()).step_by(workers) {
                            let ran = StepRun::of(host, prepared, &steps[index]).await;
                            verdicts.push((index, judge(reference, &steps[index], &ran)));
                        }
                        verdicts
                    })
                })
            })
            .collect();
        shares.into_iter().flat_map(|share| share.join().expect("a sweep step does not panic")).collect()
    });
    verdicts.sort_by_key(|(index, _)| *index);
    let mut result = SweepResult::default();
    for (index, verdict) in verdicts {
        result.add(&steps[index], verdict);
    }
    result
}

/// Runs `work` to its end on a runtime of the calling thread's own: what lets a sweep's
/// threads each drive their runs, whatever runtime (if any) the caller is on.
fn on_own_runtime<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a thread's own async runtime starts")
        .block_on(work)
}

/// What every faulted run is judged against: the clean run's calls and outcome, and where the
/// clean run ends when run again too, as every faulted run is (each rerun runs without faults,
/// the scenario's own included, so both sides end the same way).
struct Reference {
    calls: Vec<String>,
    refused: bool,
    /// The invariants the clean run broke: a scenario of a misbehaving plugin expects them,
    /// so under a fault they are not the fault's doing.
    broken: Vec<&'static str>,
    /// Where the clean run leaves the mesh.
    adopted: String,
    /// Where it ends once run again.
    end: String,
    /// How that second run ends, and why.
    again: (&'static str, String),
    /// The outcome the scenario expects.
    expected: String,
}

impl Reference {
    async fn of(host: &PluginHost, prepared: &Prepared) -> Reference {
        let clean = prepared.run(host, None).await;
        let calls = clean.mesh.calls();
        let adopted = clean.mesh.end_state();
        let again = prepared.run_again(host, &clean).await;
        let broken = clean.report.violations.iter().map(|v| v.invariant).collect();
        Reference {
            calls,
            refused: !clean.report.succeeded(),
            broken,
            adopted,
            end: clean.mesh.end_state(),
            again: outcome_of(&again.report),
            expected: prepared.expected.clone(),
        }
    }
}

/// One faulted run: the call (counted among every call that reached the mesh) and what it gets.
struct Step {
    index: usize,
    call: String,
    effect: FaultEffect,
}

impl Step {
    /// How a problem line names the step: `step 8 (`tell …`) failed`.
    fn name(&self) -> String {
        let kind = match self.effect {
            FaultEffect::TimeOut => "timed out",
            FaultEffect::HostKilledAfter => "went through, then the host was killed",
            FaultEffect::Fail(_) => "failed",
        };
        format!("step {} (`{}`) {kind}", self.index + 1, self.call)
    }

    /// The call's words without its kind (`tell`, `carry`…): what a refusal should mention.
    fn words(&self) -> &str {
        self.call.split_once(' ').map(|(_, words)| words).unwrap_or(&self.call)
    }
}

/// Every step of a sweep: each call failed in turn, then each timed out in turn, then the
/// host killed after each in turn.
fn steps(calls: &[String]) -> Vec<Step> {
    let effects = [
        FaultEffect::Fail("injected fault: the mesh said no".into()),
        FaultEffect::TimeOut,
        FaultEffect::HostKilledAfter,
    ];
    effects
        .iter()
        .flat_map(|effect| {
            calls.iter().enumerate().map(|(index, call)| Step { index, call: call.clone(), effect: effect.clone() })
        })
        .collect()
}

/// A faulted run, the same scenario run again without faults on what it left, and where that
/// ended.
struct StepRun {
    faulted: RunReport,
    /// Where the faulted run left the mesh.
    left: String,
    again: RunReport,
    end: String,
}

impl StepRun {
    async fn of(host: &PluginHost, prepared: &Prepared, step: &Step) -> StepRun {
        let faulted = prepared.run(host, Some((step.index, step.effect.clone()))).await;
        let left = faulted.mesh.end_state();
        let again = prepared.run_again(host, &faulted).await;
        StepRun { left, end: faulted.mesh.end_state(), faulted: faulted.report, again: again.report }
    }
}

/// A mesh's state without whether each module was issued a bus account: the one step the
/// provider sequence goes on without (a module with nothing to say on the bus is refused
/// one), so the one difference a run that reports success may leave.
fn without_accounts(state: &str) -> String {
    state
        .lines()
        .map(|line| line.split(' ').filter(|w| !w.starts_with("issued=")).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What was wrong with one step, and whether it converged.
struct Verdict {
    problems: Vec<String>,
    converged: bool,
}

/// Judges one step: the faulted run kept every invariant and, unless the clean run refused
/// too, any refusal names the failed call; running again broke nothing (said only when
/// nothing else was wrong: it follows from what was), ended as the clean run run again ends
/// (and adopted, for a scenario that expects it), and converged to the clean end. A run whose
/// host was killed is judged by its rerun alone: nothing the dead host said counts.
fn judge(reference: &Reference, step: &Step, ran: &StepRun) -> Verdict {
    let mut problems = Vec::new();
    if step.effect != FaultEffect::HostKilledAfter {
        judge_faulted(reference, step, ran, &mut problems);
    }
    if let Some(broken) = violations(reference, &ran.again)
        && problems.is_empty()
    {
        problems.push(format!("running again: {broken}"));
    }
    let (again, why) = outcome_of(&ran.again);
    if again != reference.again.0 {
        problems.push(format!(
            "running again ended {again} where the clean run, run again, ended {}: {why}",
            reference.again.0
        ));
    } else if reference.expected == "adopted" && again != "adopted" {
        problems.push(format!("running again ended {again}, and the scenario expects adopted: {why}"));
    }
    let converged = ran.end == reference.end;
    if !converged {
        let lines = |text: &str| text.lines().map(String::from).collect::<Vec<_>>();
        problems.push(format!(
            "running again did not converge to the clean end state:\n{}",
            diff(&lines(&reference.end), &lines(&ran.end))
        ));
    }
    Verdict { problems, converged }
}

/// What a faulted run itself must show: no new broken invariant, a refusal naming the failed
/// call, and no success claimed over a failure it did not act on.
fn judge_faulted(reference: &Reference, step: &Step, ran: &StepRun, problems: &mut Vec<String>) {
    if let Some(broken) = violations(reference, &ran.faulted) {
        problems.push(broken);
    }
    let refusal = ran.faulted.modules.iter().find_map(|(_, o)| o.problem());
    if let Some(message) = refusal
        && !reference.refused
        && !message.contains(step.words())
    {
        problems.push(format!("the refusal does not name the step: {message}"));
    }
    // A run that says it adopted, with a call failed under it, must have left the mesh as
    // the clean run does: otherwise the failure was swallowed and the report is false.
    if ran.faulted.succeeded()
        && !reference.refused
        && without_accounts(&ran.left) != without_accounts(&reference.adopted)
    {
        let lines = |text: &str| without_accounts(text).lines().map(String::from).collect::<Vec<_>>();
        problems.push(format!(
            "it reported success, but left the mesh other than the clean run does (the failure was not acted \
             on):\n{}",
            diff(&lines(&reference.adopted), &lines(&ran.left))
        ));
    }
}

/// The invariants a run broke that the clean run did not, in one line, if it broke any.
fn violations(reference: &Reference, report: &RunReport) -> Option<String> {
    let new: Vec<String> = report
        .violations
        .iter()
        .filter(|v| !reference.broken.contains(&v.invariant))
        .map(ToString::to_string)
        .collect();
    (!new.is_empty()).then(|| new.join("; "))
}

impl SweepResult {
    /// Counts one step's verdict.
    fn add(&mut self, step: &Step, verdict: Verdict) {
        self.steps += 1;
        if !verdict.converged {
            self.not_converged += 1;
        }
        if verdict.problems.is_empty() {
            self.survived += 1;
        } else {
            self.problems.push(format!("{}: {}", step.name(), verdict.problems.join("; ")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(pointer: &str, to: &str) -> Edit {
        let to = toml::Value::String(to.into());
        Edit { file: "foundation".into(), set: Some(pointer.into()), to: Some(to), remove: None, remove_resource: None }
    }

    fn remove(pointer: &str) -> Edit {
        Edit { file: "foundation".into(), set: None, to: None, remove: Some(pointer.into()), remove_resource: None }
    }

    fn edited(mut document: serde_json::Value, edits: &[Edit]) -> Result<serde_json::Value> {
        for edit in edits {
            apply_edit(&mut document, edit)?;
        }
        Ok(document)
    }

    #[test]
    fn pointers_unescape_a_slash_and_a_tilde_in_keys() {
        let document = json!({"labels": {"a/b": "old", "m~n": "old", "~1": "old"}});
        // `~1` is a `/` inside a key, `~0` a `~`, and `~01` a `~` then a `1`, never a `/`.
        let got =
            edited(document, &[set("/labels/a~1b", "slash"), set("/labels/m~0n", "tilde"), set("/labels/~01", "both")])
                .unwrap();
        assert_eq!(got, json!({"labels": {"a/b": "slash", "m~n": "tilde", "~1": "both"}}));
        // A key made by `set` is the unescaped one.
        let got = edited(json!({"labels": {}}), &[set("/labels/new~1key~0", "x")]).unwrap();
        assert_eq!(got, json!({"labels": {"new/key~": "x"}}));
        let got = edited(
            json!({"labels": {"a/b": 1, "m~n": 2, "keep": 3}}),
            &[remove("/labels/a~1b"), remove("/labels/m~0n")],
        )
        .unwrap();
        assert_eq!(got, json!({"labels": {"keep": 3}}));
    }

    #[test]
    fn a_pointer_that_is_not_rfc_6901_is_refused_naming_it() {
        for bad in ["/labels/a~2b", "/labels/trailing~", "labels/a"] {
            let err = edited(json!({"labels": {}}), &[set(bad, "x")]).unwrap_err().to_string();
            assert!(err.contains(&format!("`set = {bad:?}` is not a JSON pointer (RFC 6901)")), "{bad}: {err}");
        }
        let err = edited(json!({"labels": {}}), &[remove("/labels/~")]).unwrap_err().to_string();
        assert!(err.contains("`remove = \"/labels/~\"` is not a JSON pointer"), "{err}");
    }

    #[test]
    fn set_replaces_or_adds_and_remove_needs_something_there() {
        let items = json!({"items": ["a", "b"]});
        assert_eq!(edited(items.clone(), &[set("/items/1", "B")]).unwrap(), json!({"items": ["a", "B"]}));
        // One past the end, or `-`, appends, as JSON Patch's `add` does.
        assert_eq!(edited(items.clone(), &[set("/items/2", "c")]).unwrap(), json!({"items": ["a", "b", "c"]}));
        assert_eq!(edited(items.clone(), &[set("/items/-", "c")]).unwrap(), json!({"items": ["a", "b", "c"]}));
        assert_eq!(edited(items.clone(), &[remove("/items/0")]).unwrap(), json!({"items": ["b"]}));
        let far = edited(items.clone(), &[set("/items/5", "x")]).unwrap_err().to_string();
        assert!(far.contains("nothing at `/items/5` to set, nor a place to add it"), "{far}");
        let orphan = edited(items.clone(), &[set("/missing/key", "x")]).unwrap_err().to_string();
        assert!(orphan.contains("nothing at `/missing/key` to set"), "{orphan}");
        let gone = edited(items, &[remove("/items/2")]).unwrap_err().to_string();
        assert!(gone.contains("nothing at `/items/2` to remove"), "{gone}");
    }
}
