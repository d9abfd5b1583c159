//! A deterministic model of a mesh: a control plane that speaks phase three's commands, one
//! node whose engine applies pushes, the bus's monitor, and a virtual clock.
//!
//! The node-engine applies a push the way the real one does: it keys containers on their
//! name and compares a digest of their spec, so the same spec is left be, another spec is
//! recreated and a new name is created; and it seals fresh random bytes for every secret a
//! module declares that was not accepted first. While it applies, it checks the invariants
//! that make adoption safe and records every one it finds broken. Runs are on one node at a
//! time; what other nodes hold is kept aside for a run that moves there.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use sha2::{Digest, Sha256};

use super::lock::{LockHolder, LockScope, Locking, Unlocked};
use super::{Audit, ContainerChange, ContainerState, Mesh, MeshError, Payload, Response};
use crate::catalogue::foundation::GENESIS_OWNER;
use crate::catalogue::read_once::Unusable;
use crate::catalogue::{Foundation, FoundationResource, ModuleManifest};
use crate::effect::{ContainerEffect, ContainerSpec, KnownModule, MeshView, SpecDigest, Touch};
use mesh_adopt_manifest::command::Command;

/// Where the bus answers for its health, on the node's loopback.
pub const BUS_MONITOR: &str = "http://127.0.0.1:8222/healthz";
/// The bundle's identity for the bus whose monitor the simulator answers for.
const BROKER_ID: &str = "broker";

/// What the node does with a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeApplies {
    /// Applies it after the setup's `apply_delay`.
    Normally,
    /// Never applies it.
    Never,
    /// Applies it, but loses this container instead of raising it.
    LosingContainer(String),
}

/// Which host call a fault applies to: one of the imports that reach the mesh (`carry`,
/// `tell`, `inspect`, `fetch`; a credential is the host's own and never faults).
use crate::events::Op;

/// What an injected fault does to the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultEffect {
    /// The mesh answers no, with this output.
    Fail(String),
    /// No answer until the call's timeout.
    TimeOut,
    /// The call goes through, and then the host is killed: nothing it asks afterwards reaches
    /// the mesh, and it cleans nothing up (the node still applies what it was pushed).
    HostKilledAfter,
}

/// A fault to inject: the next `times` calls of `op` whose words contain `matching`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The import it applies to.
    pub op: Op,
    /// Words the call's arguments must contain (empty: every call of `op`).
    pub matching: String,
    /// How many matching calls it fails before the mesh answers normally again.
    pub times: u32,
    /// What it does to each.
    pub effect: FaultEffect,
}

/// The mesh's starting state and behaviour.
#[derive(Debug, Clone)]
pub struct SimSetup {
    /// The node modules are assigned to.
    pub node: String,
    /// What genesis raised; its containers are running when the mesh opens.
    pub foundation: Foundation,
    /// Containers whose running image differs from the bundle's, e.g. a bus already restarted.
    pub running_images: BTreeMap<String, String>,
    /// How long a build takes, in virtual time.
    pub build_time: Duration,
    /// How long any other command takes.
    pub command_time: Duration,
    /// What the node does with a push.
    pub applies: NodeApplies,
    /// How long after a push the node applies it.
    pub apply_delay: Duration,
    /// How long a recreated bus takes to answer its monitor; `None`: never.
    pub bus_recovery: Option<Duration>,
    /// Faults to inject.
    pub faults: Vec<Fault>,
    /// The one call (counted from 0 among every carry, tell, inspect and fetch that reaches
    /// the mesh) to answer with this effect: how a sweep fails each step in turn.
    pub fail_call: Option<(usize, FaultEffect)>,
    /// Seeds the bytes the node seals and the plugins' WASI random numbers, so runs repeat.
    pub seed: u64,
    /// Who holds the mesh's lock when it opens: another run, which keeps every run out until
    /// it is broken ([`Mesh::unlock`]).
    pub locked_by: Option<LockHolder>,
}

impl SimSetup {
    /// A healthy mesh raised from `foundation`, with `node` as its node.
    pub fn new(foundation: Foundation, node: &str) -> SimSetup {
        SimSetup {
            node: node.to_string(),
            foundation,
            running_images: BTreeMap::new(),
            build_time: Duration::from_secs(4 * 60),
            command_time: Duration::from_millis(300),
            applies: NodeApplies::Normally,
            apply_delay: Duration::from_secs(5),
            bus_recovery: Some(Duration::from_secs(6)),
            faults: Vec::new(),
            fail_call: None,
            seed: 0x5eed,
            locked_by: None,
        }
    }
}

/// A file carried into the control plane.
#[derive(Debug, Clone)]
struct Carried {
    bytes: Vec<u8>,
    secret: bool,
}

/// A module as the control plane knows it.
#[derive(Debug, Clone, Default)]
struct ModuleRecord {
    manifest: std::sync::Arc<ModuleManifest>,
    built: bool,
    issued: bool,
    assigned: bool,
    prepared: bool,
}

/// A container on the node, with the digest of the spec it was created from and its owner, as
/// a node labels them.
#[derive(Debug, Clone)]
struct Container {
    image: String,
    volumes: Vec<String>,
    running: bool,
    digest: SpecDigest,
    owner: String,
}

struct World {
    setup: SimSetup,
    now: Duration,
    files: BTreeMap<String, Carried>,
    modules: BTreeMap<String, ModuleRecord>,
    registration_order: Vec<String>,
    accepted: BTreeMap<(String, String), Vec<u8>>,
    sealed: BTreeMap<(String, String), Vec<u8>>,
    containers: BTreeMap<String, Container>,
    pending_applies: Vec<Duration>,
    bus_ready_at: Option<Duration>,
    recreations: BTreeMap<String, u32>,
    changes: Vec<ContainerChange>,
    commands: Vec<Command>,
    /// Every call that reached the mesh, as `op words`, in order.
    calls: Vec<String>,
    /// Whether a sweep step killed the host: no call of its reaches the mesh any more.
    host_killed: bool,
    bus_name: Option<String>,
    /// What every apply did to each container, in order, with the module applied.
    touches: Vec<Touch>,
    /// Secrets sealed, as `(module, secret)`, in order.
    sealed_order: Vec<(String, String)>,
    /// Who holds the mesh's lock.
    lock: Option<LockHolder>,
    /// What each node other than the one runs are on now holds, set aside until a run moves
    /// there ([`SimulatedMesh::move_to`]): a node the mesh has not been on holds nothing.
    parked: BTreeMap<String, NodeState>,
}

/// What one node holds: its containers, the secrets accepted and sealed there, what its
/// engine has still to apply, which modules are assigned and prepared on it, and what its
/// applies did. The rest of the world (the control plane's files and registered modules,
/// the clock, the lock) is the mesh's, whatever the node.
#[derive(Default)]
struct NodeState {
    containers: BTreeMap<String, Container>,
    accepted: BTreeMap<(String, String), Vec<u8>>,
    sealed: BTreeMap<(String, String), Vec<u8>>,
    sealed_order: Vec<(String, String)>,
    pending_applies: Vec<Duration>,
    bus_ready_at: Option<Duration>,
    recreations: BTreeMap<String, u32>,
    changes: Vec<ContainerChange>,
    touches: Vec<Touch>,
    /// Each module's `(assigned, prepared)` on this node.
    placed: BTreeMap<String, (bool, bool)>,
}

/// The simulated mesh.
pub struct SimulatedMesh {
    world: Mutex<World>,
}

impl SimulatedMesh {
    /// Opens a mesh in the state `setup` describes.
    pub fn new(setup: SimSetup) -> SimulatedMesh {
        let mut containers = BTreeMap::new();
        for resource in &setup.foundation.resources {
            if let FoundationResource::Container { name, image, volumes, .. } = resource {
                let image = setup.running_images.get(name).cloned().unwrap_or_else(|| image.clone());
                let spec = setup.foundation.specs.get(name).cloned().unwrap_or_default().on_image(&image);
                containers.insert(
                    name.clone(),
                    Container {
                        image,
                        volumes: volumes.clone(),
                        running: true,
                        digest: spec.digest(),
                        owner: GENESIS_OWNER.to_string(),
                    },
                );
            }
        }
        // Which container answers on the bus's monitor: the simulator's model of phase
        // three's bus, not a rule (the rules come from what modules declare).
        let bus_name = setup.foundation.container(BROKER_ID).map(|(name, _, _)| name.to_string());
        let lock = setup.locked_by.clone();
        SimulatedMesh {
            world: Mutex::new(World {
                setup,
                now: Duration::ZERO,
                files: BTreeMap::new(),
                modules: BTreeMap::new(),
                registration_order: Vec::new(),
                accepted: BTreeMap::new(),
                sealed: BTreeMap::new(),
                containers,
                pending_applies: Vec::new(),
                bus_ready_at: Some(Duration::ZERO),
                recreations: BTreeMap::new(),
                changes: Vec::new(),
                commands: Vec::new(),
                calls: Vec::new(),
                host_killed: false,
                bus_name,
                touches: Vec::new(),
                sealed_order: Vec::new(),
                lock,
                parked: BTreeMap::new(),
            }),
        }
    }

    fn world(&self) -> std::sync::MutexGuard<'_, World> {
        // A panic while holding the lock leaves a world a test can still read.
        self.world.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Every command that reached the control plane, in order.
    pub fn commands(&self) -> Vec<Command> {
        self.world().commands.clone()
    }

    /// The files carried into the control plane, by path, and whether each is a secret.
    pub fn carried(&self) -> BTreeMap<String, bool> {
        self.world().files.iter().map(|(k, v)| (k.clone(), v.secret)).collect()
    }

    /// Secrets accepted into modules, as `(module, secret)`.
    pub fn accepted(&self) -> Vec<(String, String)> {
        self.world().accepted.keys().cloned().collect()
    }

    /// Secrets the node sealed with fresh bytes, as `(module, secret)`.
    pub fn sealed(&self) -> Vec<(String, String)> {
        self.world().sealed.keys().cloned().collect()
    }

    /// What a container runs now, after any applies that are due.
    pub fn container_image(&self, name: &str) -> Option<String> {
        let mut world = self.world();
        world.settle();
        world.containers.get(name).map(|c| c.image.clone())
    }

    /// Every call that reached the mesh, as `op words` (`tell push node-1`), in order.
    pub fn calls(&self) -> Vec<String> {
        self.world().calls.clone()
    }

    /// The mesh's state in a canonical text, after any applies that are due: containers and
    /// their images, modules and how far each got, secrets accepted and sealed. Two runs
    /// that leave the same text converged.
    pub fn end_state(&self) -> String {
        let mut world = self.world();
        world.settle();
        let mut lines = Vec::new();
        for (name, c) in &world.containers {
            lines.push(format!("container {name} {} running={}", c.image, c.running));
        }
        for (name, m) in &world.modules {
            lines.push(format!(
                "module {name} built={} issued={} assigned={} prepared={}",
                m.built, m.issued, m.assigned, m.prepared
            ));
        }
        for (module, secret) in world.accepted.keys() {
            lines.push(format!("accepted {module}/{secret}"));
        }
        for (module, secret) in world.sealed.keys() {
            lines.push(format!("sealed {module}/{secret}"));
        }
        lines.join("\n")
    }

    /// The faults still to be injected, each with the times it has left: one that no call
    /// matched is here whole, which tells a scenario's author their fault did nothing.
    pub fn faults_left(&self) -> Vec<Fault> {
        self.world().setup.faults.clone()
    }

    /// Drops every fault still to be injected, and lets calls through again after a killed
    /// host: what a rerun after a fault starts from.
    pub fn clear_faults(&self) {
        let mut world = self.world();
        world.setup.faults.clear();
        world.setup.fail_call = None;
        world.host_killed = false;
    }

    /// How often the node recreated a container.
    pub fn recreations(&self, name: &str) -> u32 {
        self.world().recreations.get(name).copied().unwrap_or(0)
    }

    /// Moves the mesh's runs to `node`: what the node they were on holds is set aside once
    /// its engine has applied everything it was pushed, and `node` holds what it held when a
    /// run last left it, or nothing (genesis raised the foundation on the setup's node). The
    /// control plane, its files and registered modules, stay as they are: one control plane
    /// for every node.
    pub fn move_to(&self, node: &str) {
        let mut world = self.world();
        if world.setup.node == node {
            return;
        }
        if let Some(last) = world.pending_applies.iter().max().copied() {
            let wait = last.saturating_sub(world.now);
            world.advance(wait);
        }
        let left = world.take_node();
        let from = std::mem::replace(&mut world.setup.node, node.to_string());
        world.parked.insert(from, left);
        let arriving = world.parked.remove(node).unwrap_or_default();
        world.put_node(arriving);
    }

    /// Arms the mesh for a scenario's run after what it started from was made on it: these
    /// faults, this call failed by its number (counted from the next call, as are the calls
    /// and commands the mesh lists from here, and the changes, touches and seals its audit
    /// reports), and this holder of the lock.
    pub fn arm(&self, faults: Vec<Fault>, fail_call: Option<(usize, FaultEffect)>, locked_by: Option<LockHolder>) {
        let mut world = self.world();
        world.setup.faults = faults;
        world.setup.fail_call = fail_call;
        world.calls.clear();
        world.commands.clear();
        // What the node did before is the state the run starts from, not the run's doing.
        world.changes.clear();
        world.touches.clear();
        world.sealed_order.clear();
        world.lock = locked_by;
    }
}

impl World {
    /// What the node runs are on holds, taken out of the world (which then holds nothing).
    fn take_node(&mut self) -> NodeState {
        let placed = self
            .modules
            .iter_mut()
            .map(|(name, record)| {
                let placed = (record.assigned, record.prepared);
                (record.assigned, record.prepared) = (false, false);
                (name.clone(), placed)
            })
            .collect();
        NodeState {
            containers: std::mem::take(&mut self.containers),
            accepted: std::mem::take(&mut self.accepted),
            sealed: std::mem::take(&mut self.sealed),
            sealed_order: std::mem::take(&mut self.sealed_order),
            pending_applies: std::mem::take(&mut self.pending_applies),
            bus_ready_at: self.bus_ready_at.take(),
            recreations: std::mem::take(&mut self.recreations),
            changes: std::mem::take(&mut self.changes),
            touches: std::mem::take(&mut self.touches),
            placed,
        }
    }

    /// Puts what a node holds into the world, as the node runs are on.
    fn put_node(&mut self, node: NodeState) {
        for (name, record) in &mut self.modules {
            (record.assigned, record.prepared) = node.placed.get(name).copied().unwrap_or_default();
        }
        self.containers = node.containers;
        self.accepted = node.accepted;
        self.sealed = node.sealed;
        self.sealed_order = node.sealed_order;
        self.pending_applies = node.pending_applies;
        self.bus_ready_at = node.bus_ready_at;
        self.recreations = node.recreations;
        self.changes = node.changes;
        self.touches = node.touches;
    }

    /// Takes the first fault matching this call, counting it down.
    fn fault(&mut self, op: Op, words: &str) -> Option<FaultEffect> {
        if self.host_killed {
            return Some(FaultEffect::HostKilledAfter);
        }
        self.calls.push(format!("{} {words}", op.as_str()));
        if let Some((n, effect)) = &self.setup.fail_call
            && *n == self.calls.len() - 1
        {
            let effect = effect.clone();
            self.setup.fail_call = None;
            if effect == FaultEffect::HostKilledAfter {
                self.host_killed = true;
                return None;
            }
            return Some(effect);
        }
        let fault = self.setup.faults.iter_mut().find(|f| f.op == op && f.times > 0 && words.contains(&f.matching))?;
        fault.times -= 1;
        Some(fault.effect.clone())
    }

    /// Answers an injected fault, spending the call's timeout when it is one.
    fn injected(&mut self, op: Op, words: &str, timeout: Duration) -> Result<(), MeshError> {
        match self.fault(op, words) {
            None => Ok(()),
            Some(FaultEffect::Fail(output)) => Err(MeshError::Failed(output)),
            Some(FaultEffect::HostKilledAfter) => {
                Err(MeshError::Unavailable("the host was killed: nothing it asks reaches the mesh".into()))
            }
            Some(FaultEffect::TimeOut) => {
                self.advance(timeout);
                Err(MeshError::TimedOut(format!("no answer to `{words}` within {}s", timeout.as_secs())))
            }
        }
    }

    fn advance(&mut self, by: Duration) {
        // Saturates: a plugin asking to sleep `u64::MAX` milliseconds again and again must
        // not overflow the clock (and a deadline bounds such waits anyway).
        self.now = self.now.saturating_add(by);
        self.settle();
    }

    /// Applies every push that is due by now.
    fn settle(&mut self) {
        let now = self.now;
        let due: Vec<Duration> = self.pending_applies.iter().copied().filter(|t| *t <= now).collect();
        self.pending_applies.retain(|t| *t > now);
        for at in due {
            self.apply(at);
        }
    }

    fn node_is(&self, node: &str) -> Result<(), MeshError> {
        if node == self.setup.node {
            Ok(())
        } else {
            Err(MeshError::Failed(format!("no node `{node}` in this mesh; it has `{}`", self.setup.node)))
        }
    }

    fn module_mut(&mut self, module: &str) -> Result<&mut ModuleRecord, MeshError> {
        self.modules.get_mut(module).ok_or_else(|| MeshError::Failed(format!("no module `{module}` is registered")))
    }

    /// A module that has been built, asked of this mesh's node; what issue and assign need.
    fn built_on(&mut self, node: &str, module: &str) -> Result<&mut ModuleRecord, MeshError> {
        self.node_is(node)?;
        let record = self.module_mut(module)?;
        if !record.built {
            return Err(MeshError::Failed(format!("module `{module}` is not built")));
        }
        Ok(record)
    }

    fn tell(&mut self, command: &Command, timeout: Duration) -> Result<String, MeshError> {
        // The words are the line a scenario's fault is matched against and a timeout names.
        let words = command.to_string();
        self.injected(Op::Tell, &words, timeout)?;
        let takes = match command {
            Command::Build { .. } => self.setup.build_time,
            _ => self.setup.command_time,
        };
        if takes > timeout {
            self.advance(timeout);
            return Err(MeshError::TimedOut(format!("no answer to `{words}` within {}s", timeout.as_secs())));
        }
        self.advance(takes);
        self.commands.push(command.clone());
        match command.clone() {
            Command::ModuleAdd { remote } => self.register(&remote),
            Command::Build { module, .. } => {
                self.module_mut(&module)?.built = true;
                Ok(format!("built {module}"))
            }
            Command::ModuleIssue { module, node } => {
                let record = self.built_on(&node, &module)?;
                if record.manifest.bus_subjects.is_empty() {
                    return Err(MeshError::Failed(format!("module `{module}` declares no bus subjects")));
                }
                record.issued = true;
                Ok(format!("issued an account to {module}"))
            }
            Command::Assign { node, module } => {
                self.built_on(&node, &module)?.assigned = true;
                Ok(format!("assigned {module} to {node}"))
            }
            Command::Prepare { node, module } => {
                self.node_is(&node)?;
                let record = self.module_mut(&module)?;
                if !record.assigned {
                    return Err(MeshError::Failed(format!("module `{module}` is not assigned to `{node}`")));
                }
                record.prepared = true;
                Ok(format!("prepared {module} on {node}"))
            }
            Command::SecretAccept { node, module, secret, from } => {
                self.node_is(&node)?;
                let declared = self.module_mut(&module)?.manifest.secrets.contains(&secret);
                if !declared {
                    return Err(MeshError::Failed(format!("module `{module}` declares no secret `{secret}`")));
                }
                let carried = self
                    .files
                    .get(&from)
                    .ok_or_else(|| MeshError::Failed(format!("nothing was carried to `{from}`")))?;
                let value = carried.bytes.clone();
                let accepted = format!("accepted {secret} for {module}");
                self.accepted.insert((module, secret), value);
                Ok(accepted)
            }
            Command::Push { node } => {
                self.node_is(&node)?;
                if self.setup.applies != NodeApplies::Never {
                    let at = self.now.saturating_add(self.setup.apply_delay);
                    self.pending_applies.push(at);
                }
                Ok(format!("pushed {node}"))
            }
        }
    }

    fn register(&mut self, remote: &str) -> Result<String, MeshError> {
        let carried =
            self.files.get(remote).ok_or_else(|| MeshError::Failed(format!("nothing was carried to `{remote}`")))?;
        let named = |manifest: &ModuleManifest| match manifest.name.is_empty() {
            true => Err(MeshError::Failed(format!("the manifest at `{remote}` has no `name`"))),
            false => Ok(()),
        };
        // The control plane takes a manifest only as the catalogue would: one rule for both.
        let manifest = match crate::catalogue::read_once::valid_manifest(&carried.bytes) {
            Ok(manifest) => manifest,
            Err(Unusable::Unparsed(e)) => {
                return Err(MeshError::Failed(format!("`{remote}` is not a module manifest: {e:#}")));
            }
            Err(Unusable::Invalid { manifest, invalid }) => {
                named(&manifest)?;
                let (kind, detail) = (invalid.kind(), invalid.detail());
                return Err(MeshError::Failed(format!("the manifest at `{remote}` {kind}: {detail}")));
            }
        };
        named(&manifest)?;
        let name = manifest.name.clone();
        if !self.registration_order.contains(&name) {
            self.registration_order.push(name.clone());
        }
        self.modules.entry(name.clone()).or_default().manifest = manifest;
        Ok(format!("registered {name}"))
    }

    /// The node-engine's apply of every prepared module, at virtual time `at`: what it does to
    /// each container and secret is recorded as it happens, for the host to hold to its rules.
    fn apply(&mut self, at: Duration) {
        let lost = match &self.setup.applies {
            NodeApplies::LosingContainer(name) => Some(name.clone()),
            _ => None,
        };
        for module in self.registration_order.clone() {
            let record = self.modules[&module].clone();
            if !record.prepared {
                continue;
            }
            for pushed in crate::effect::pushed_containers(&record.manifest).iter() {
                let declared = &pushed.resource;
                let name = declared.name.clone();
                let effect = if lost.as_deref() == Some(name.as_str()) {
                    if self.containers.remove(&name).is_none() {
                        continue;
                    }
                    self.changes.push(ContainerChange::Removed { name: name.clone() });
                    ContainerEffect::Removed
                } else {
                    let wanted = pushed.digest.clone();
                    match self.containers.get_mut(&name) {
                        Some(existing) if existing.digest == wanted => {
                            // Reported once, and only for a container this run has not changed.
                            if !self.changes.iter().any(|c| c.name() == name) {
                                self.changes
                                    .push(ContainerChange::Kept { name: name.clone(), image: declared.image.clone() });
                            }
                            ContainerEffect::Kept { image: declared.image.clone() }
                        }
                        Some(existing) => {
                            let from = std::mem::replace(&mut existing.image, declared.image.clone());
                            existing.volumes = declared.volumes.clone();
                            existing.running = true;
                            existing.digest = wanted;
                            existing.owner = module.clone();
                            *self.recreations.entry(name.clone()).or_default() += 1;
                            self.changes.push(ContainerChange::Recreated {
                                name: name.clone(),
                                from: from.clone(),
                                to: declared.image.clone(),
                            });
                            self.on_recreated(&name, at);
                            ContainerEffect::Recreated {
                                from,
                                to: declared.image.clone(),
                                volumes: declared.volumes.clone(),
                            }
                        }
                        None => {
                            self.containers.insert(
                                name.clone(),
                                Container {
                                    image: declared.image.clone(),
                                    volumes: declared.volumes.clone(),
                                    running: true,
                                    digest: wanted,
                                    owner: module.clone(),
                                },
                            );
                            self.changes
                                .push(ContainerChange::Created { name: name.clone(), image: declared.image.clone() });
                            ContainerEffect::Created {
                                image: declared.image.clone(),
                                volumes: declared.volumes.clone(),
                            }
                        }
                    }
                };
                self.touches.push(Touch { container: name, module: module.clone(), effect });
            }
            self.seal_unaccepted(&module, &record.manifest.secrets);
        }
    }

    /// A recreated bus answers its monitor again once it has recovered its streams.
    fn on_recreated(&mut self, name: &str, at: Duration) {
        if self.bus_name.as_deref() == Some(name) {
            self.bus_ready_at = self.setup.bus_recovery.map(|d| at.saturating_add(d));
        }
    }

    /// Seals fresh bytes for every declared secret neither accepted nor sealed before.
    fn seal_unaccepted(&mut self, module: &str, secrets: &[String]) {
        for secret in secrets {
            let key = (module.to_string(), secret.clone());
            if self.accepted.contains_key(&key) || self.sealed.contains_key(&key) {
                continue;
            }
            let mut hash = Sha256::new();
            hash.update(self.setup.seed.to_le_bytes());
            hash.update(module.as_bytes());
            hash.update(secret.as_bytes());
            hash.update((self.sealed.len() as u64).to_le_bytes());
            let bytes = format!("{:x}", hash.finalize()).as_bytes()[..32].to_vec();
            self.sealed.insert(key.clone(), bytes);
            self.sealed_order.push(key);
        }
    }

    fn monitor(&self) -> Result<Response, MeshError> {
        let bus = self.bus_name.as_deref().and_then(|n| self.containers.get(n));
        match bus {
            Some(c) if c.running => match self.bus_ready_at {
                Some(ready) if self.now >= ready => Ok(Response { status: 200, body: "ok".into() }),
                _ => Ok(Response { status: 503, body: "JetStream is still recovering its streams".into() }),
            },
            _ => Err(MeshError::Unavailable(format!("connection refused by {BUS_MONITOR}"))),
        }
    }
}

#[async_trait]
impl Mesh for SimulatedMesh {
    fn summary(&self) -> String {
        format!("the simulated mesh (node `{}`)", self.world().setup.node)
    }

    async fn carry(&self, _name: &str, payload: Payload, remote: &str) -> Result<(), MeshError> {
        let mut world = self.world();
        let timeout = Duration::from_secs(60);
        world.injected(Op::Carry, remote, timeout)?;
        let step = world.setup.command_time;
        world.advance(step);
        let carried = match payload {
            Payload::Bytes(bytes) => Carried { bytes, secret: false },
            Payload::Secret(secret) => Carried { bytes: secret.bytes, secret: true },
        };
        world.files.insert(remote.to_string(), carried);
        Ok(())
    }

    async fn tell(&self, command: &Command, timeout: Duration) -> Result<String, MeshError> {
        self.world().tell(command, timeout)
    }

    /// Runs are on the node the mesh is on ([`SimulatedMesh::move_to`] moves it): a run on
    /// another would be predicted from one node and pushed to another.
    fn serves(&self, node: &str) -> Result<(), String> {
        let world = self.world();
        match node == world.setup.node {
            true => Ok(()),
            false => Err(format!(
                "the simulated mesh's runs are on node `{}`: move it to `{node}` first (`SimulatedMesh::move_to`)",
                world.setup.node
            )),
        }
    }

    async fn inspect(&self, node: &str, container: &str) -> Result<Option<ContainerState>, MeshError> {
        let mut world = self.world();
        world.injected(Op::Inspect, container, Duration::from_secs(10))?;
        world.node_is(node)?;
        world.settle();
        Ok(world.containers.get(container).map(|c| ContainerState { image: c.image.clone(), running: c.running }))
    }

    async fn fetch(&self, url: &str) -> Result<Response, MeshError> {
        let mut world = self.world();
        world.injected(Op::Fetch, url, Duration::from_secs(10))?;
        world.settle();
        if url == BUS_MONITOR {
            world.monitor()
        } else {
            Err(MeshError::Unavailable(format!("nothing answers at `{url}` in the simulated mesh")))
        }
    }

    fn now(&self) -> Duration {
        self.world().now
    }

    async fn sleep(&self, duration: Duration) {
        self.world().advance(duration);
    }

    fn seed(&self) -> Option<u64> {
        Some(self.world().setup.seed)
    }

    /// The node applies a push after `apply_delay`, and a recreated bus answers its monitor
    /// `bus_recovery` later: a wait shorter than both together runs out on every run that
    /// recreates it. A node that never applies, or a bus that never recovers, has no such time.
    fn restart_time(&self, node: &str) -> Option<Duration> {
        let world = self.world();
        if node != world.setup.node || world.setup.applies == NodeApplies::Never {
            return None;
        }
        Some(world.setup.apply_delay.saturating_add(world.setup.bus_recovery?))
    }

    async fn land_pushes(&self, within: Duration) {
        let mut world = self.world();
        let by = world.now.saturating_add(within);
        if let Some(last) = world.pending_applies.iter().copied().filter(|t| *t <= by).max() {
            let wait = last.saturating_sub(world.now);
            world.advance(wait);
        }
    }

    async fn quiesce(&self) {
        let mut world = self.world();
        if let Some(last) = world.pending_applies.iter().max().copied() {
            let wait = last.saturating_sub(world.now);
            world.advance(wait);
        }
    }

    /// The simulated node runs any image.
    async fn images(&self, _node: &str, _images: &[String]) -> Result<super::NodeImages, MeshError> {
        Ok(super::NodeImages::Present)
    }

    async fn view(&self, node: &str, _containers: &[String]) -> MeshView {
        let mut world = self.world();
        if let Err(error) = world.node_is(node) {
            return MeshView { unseen: Some(error.to_string()), ..MeshView::looked() };
        }
        world.settle();
        let containers = world
            .containers
            .iter()
            .map(|(name, c)| {
                let spec = ContainerSpec::new(c.image.clone(), Some(c.volumes.clone()))
                    .with_digest(Some(c.digest.clone()))
                    .with_owner(Some(c.owner.clone()))
                    .with_running(Some(c.running));
                (name.clone(), spec)
            })
            .collect();
        let modules = world
            .registration_order
            .iter()
            .map(|name| {
                let record = &world.modules[name];
                let settled = record
                    .manifest
                    .secrets
                    .iter()
                    .filter(|s| {
                        let key = (name.clone(), (*s).clone());
                        world.accepted.contains_key(&key) || world.sealed.contains_key(&key)
                    })
                    .cloned()
                    .collect();
                KnownModule {
                    name: name.clone(),
                    manifest: record.manifest.clone(),
                    prepared: record.prepared,
                    settled,
                }
            })
            .collect();
        let mut view = MeshView::looked();
        view.containers = containers;
        view.modules = modules;
        view.complete = true;
        view.modules_known = true;
        view
    }

    /// The mesh's own lock, kept with its state. A killed host's calls no longer reach the
    /// mesh, so the lock it held stays held, as a real one would.
    async fn lock(&self, holder: &LockHolder) -> Result<Locking, MeshError> {
        let mut world = self.world();
        if world.host_killed {
            return Err(MeshError::Unavailable("the host was killed: nothing it asks reaches the mesh".into()));
        }
        match &world.lock {
            Some(held) => Ok(Locking::Held(held.clone(), LockScope::Simulated)),
            None => {
                world.lock = Some(holder.clone());
                Ok(Locking::Taken { scope: LockScope::Simulated })
            }
        }
    }

    async fn unlock(&self, id: &str) -> Result<Unlocked, MeshError> {
        self.unlock_blocking(id)
    }

    async fn lock_holder(&self) -> Result<Option<(LockHolder, LockScope)>, MeshError> {
        Ok(self.world().lock.clone().map(|holder| (holder, LockScope::Simulated)))
    }

    fn unlock_blocking(&self, id: &str) -> Result<Unlocked, MeshError> {
        let mut world = self.world();
        if world.host_killed {
            return Err(MeshError::Unavailable("the host was killed: nothing it asks reaches the mesh".into()));
        }
        match world.lock.take() {
            Some(held) if held.id == id => Ok(Unlocked::Released),
            Some(other) => {
                world.lock = Some(other.clone());
                Ok(Unlocked::HeldByAnother(other))
            }
            None => Ok(Unlocked::NotHeld),
        }
    }

    fn audit(&self) -> Audit {
        let mut world = self.world();
        world.settle();
        let mut secret_values: Vec<Vec<u8>> = world.accepted.values().chain(world.sealed.values()).cloned().collect();
        secret_values.extend(world.files.values().filter(|f| f.secret).map(|f| f.bytes.clone()));
        Audit {
            changes: world.changes.clone(),
            violations: Vec::new(),
            secret_values,
            touches: world.touches.clone(),
            sealed: world.sealed_order.clone(),
            observed: true,
        }
    }
}
