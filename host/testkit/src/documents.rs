//! The documents a scenario runs on, and its edits of them: the catalogue read once
//! ([`Documents`]), and each scenario made from it, in memory, into a run ready to start
//! ([`Prepared`]): its foundation and manifests as its edits leave them, its credentials,
//! options and simulated mesh.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

use mesh_adopt_runtime::RunOptions;
use mesh_adopt_runtime::catalogue::CredentialValues;
use mesh_adopt_runtime::catalogue::FOUNDATION_BYTES;
use mesh_adopt_runtime::catalogue::ModuleFiles;
use mesh_adopt_runtime::events::{Op, OutcomeWord};
use mesh_adopt_runtime::files::read_bounded;
use mesh_adopt_runtime::mesh::lock::LockHolder;
use mesh_adopt_runtime::mesh::simulated::{Fault, FaultEffect, NodeApplies, SimSetup};
use mesh_adopt_runtime::options::parse_duration;
use mesh_adopt_runtime::{Catalogue, Foundation};

use crate::files::ScenarioFile;
use crate::format::{Edit, MeshSpec};

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
    pub(crate) modules: Vec<String>,
    pub(crate) catalogue: Catalogue,
    pub(crate) foundation: Foundation,
    pub(crate) credentials: CredentialValues,
    pub(crate) options: RunOptions,
    pub(crate) setup: SimSetup,
    /// The node phase three is adopted on, cleanly, before the scenario's run.
    pub(crate) adopted_on: Option<String>,
    /// The outcome the scenario expects: what a sweep's rerun must end with when it is
    /// `adopted`.
    pub(crate) expected: OutcomeWord,
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
    // Genesis raised the foundation on the node phase three was adopted on first, if any.
    if let Some(node) = &scenario.mesh.adopted_on {
        mesh_adopt_runtime::options::check_node_name("`mesh.adopted_on`", node)?;
    }
    let genesis_node = scenario.mesh.adopted_on.as_deref().unwrap_or(&options.node);
    let setup = setup(&scenario.mesh, foundation.clone(), genesis_node)?;
    Ok(Prepared {
        modules: scenario.modules.clone(),
        catalogue: Catalogue::in_memory(&documents.root, modules),
        foundation,
        credentials,
        options,
        setup,
        adopted_on: scenario.mesh.adopted_on.clone(),
        expected: scenario.expect.outcome,
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
    if let Some(node) = &spec.node {
        mesh_adopt_runtime::options::check_node_name("`mesh.node`", node)?;
    }
    Ok(RunOptions {
        node: spec.node.clone().unwrap_or_else(|| "node-1".into()),
        catalog_source: match spec.catalog_source.as_deref() {
            None => Some(mesh_adopt_runtime::options::CatalogSource {
                repository: "https://git.mesh.test/catalogue.git".into(),
                reference: None,
            }),
            Some("") => None,
            Some(text) => {
                Some(mesh_adopt_runtime::options::parse_catalog_source(text).context("`mesh.catalog_source`")?)
            }
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
    setup.locked_by = spec.locked_by.as_ref().map(|by| LockHolder {
        id: by.id.clone(),
        host: by.host.clone(),
        // A scenario's holder runs on another machine, which its host name says alone.
        machine: String::new(),
        pid: by.pid,
        command: by.command.clone(),
        since: by.since.clone(),
        node: node.to_string(),
    });
    Ok(setup)
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
