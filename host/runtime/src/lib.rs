//! The mesh-adopt runtime: loads each catalogue module's adoption plugin (`adopt.wasm`),
//! runs it in a sandbox, and lets it adopt what genesis raised through a [`mesh::Mesh`] backend.
//!
//! An installer embeds this crate; the `mesh-adopt` command, the live backend
//! (`mesh-adopt-live`) and the scenario kit (`mesh-adopt-testkit`) sit on it. Nothing here
//! parses a command line or draws on a terminal.
//!
//! # Embedding
//!
//! A run is made of a plugin host, the catalogue (each module's manifest with its
//! `adopt.wasm` beside it), the foundation bundle genesis produced, the genesis credentials
//! and a mesh. The shipped plugins build each module from the catalogue's repository: a run
//! of them needs a catalogue source in its options, or every module refuses. This example
//! adopts phase three of the project's example catalogue (its plugins placed by `just
//! build-plugins`) on the simulated mesh:
//!
//! ```
//! # use std::{path::Path, sync::Arc};
//! # use mesh_adopt_runtime::*;
//! # use mesh_adopt_runtime::options::parse_catalog_source;
//! # use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
//! # fn main() -> anyhow::Result<()> {
//! let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../catalogue");
//! let host = PluginHost::new(Limits::default())?;
//! let catalogue = Catalogue::at(&dir);
//! let foundation = Foundation::load(&dir.join("foundation.json"))?;
//! let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), "node-1")));
//! let options = RunOptions {
//!     catalog_source: Some(parse_catalog_source("https://git.mesh.local/catalogue.git@v3.2.0")?),
//!     ..RunOptions::default()
//! };
//! options.validate()?;
//! let run = Run::builder(&host, &catalogue, &foundation, mesh)
//!     .credentials(Arc::new(Credentials::open(&dir.join("genesis/credentials"))))
//!     .options(options)
//!     .build();
//! // From async code: `run.run(&modules, Mode::Adopt).await`.
//! let report = run.run_blocking(&PHASE_THREE.map(String::from), Mode::Adopt)?;
//! assert!(report.succeeded(), "{:?}", report.modules);
//! // An installer's process ends as the command's would:
//! // `std::process::exit(report.exit_code().into())`.
//! # Ok(())
//! # }
//! ```
//!
//! - **Executors.** [`Run::run`] is a future any executor drives: the runtime's timers are
//!   its own and the live mesh starts and watches its processes from a thread of its own, so
//!   a tokio current-thread runtime, one built without timers or IO, or another executor will
//!   do, and this crate needs no tokio feature of the caller's. A synchronous `main` calls
//!   [`Run::run_blocking`].
//! - **Spawning.** [`Run::builder`] takes the host, the catalogue and the foundation borrowed
//!   (`&T`), shared (`Arc<T>`) or owned (`T`): see [`Shared`]. A run made of shared or owned
//!   parts is a `Run<'static>`, so `tokio::spawn(async move { run.run(&modules, mode).await })`
//!   and other executors' spawns take it, and each run releases its parts when it ends.
//! - **Cancelling.** Drop the future: the plugin in flight is stopped, a control-plane
//!   command in flight is killed with its process group, nothing more reaches the mesh, the
//!   mesh's lock is released, and [`Run::interrupted`] gives the record's last event with
//!   what had been done. The run yields to its executor at every host call that reaches the
//!   mesh, hands over a credential or sleeps, and between modules, so a cancel takes effect
//!   at the next such call even on a mesh that answers at once.
//! - **One run at a time.** A run that adopts holds the mesh's lock ([`mesh::Mesh::lock`])
//!   from before preflight to its end; another run holding it keeps it out, changing
//!   nothing ([`Held::Locked`]), or, with [`RunBuilder::lock_timeout`], makes it wait.
//! - **Events.** [`RunBuilder::events`] streams the run as it happens to any
//!   [`record::stream::Sink`] (a closure will do): the `--json` lines, each module's outcome as soon
//!   as its turn ends; a [`record::stream::RecordFile`] is a record `mesh-adopt replay` reads, from
//!   any directory, since its first line names the catalogue, foundation and credentials the
//!   run read. The stream's last line is the caller's to write, once the run is over:
//!   [`Run::end`] with the exit status, or [`Run::interrupted`] for a run dropped; without it
//!   the stream reads as one cut short.
//! - **Errors.** Every fallible function returns [`Error`], a variant per input that could
//!   not be used; a module's [`report::Unusable`] outcome keeps its typed cause, and
//!   [`RunReport::held`] says why a run adopted nothing.
//! - **The compile cache.** [`PluginHost::new`] compiles every plugin afresh in each process
//!   (a Rust plugin in about half a second, a JavaScript or Python one in seconds);
//!   [`PluginHost::cached`] with a [`plugin::CompileCache`] (the command line's is
//!   `~/.cache/mesh-adopt`, [`plugin::CompileCache::default_dir`]) loads one compiled before in
//!   milliseconds. Entries are bound to the plugin's digest and the engine, and checked
//!   before their native code is trusted.
//! - **Debug builds.** wasmtime's code generator is slow unoptimised: a debug embedder
//!   without the settings below took 4 to 12 seconds to run phase three, where the debug
//!   command line, with them, takes about one. Optimise just the generator, as this
//!   workspace does, in the embedder's `Cargo.toml`:
//!   `[profile.dev.package.cranelift-codegen] opt-level = 2` and the same for `regalloc2`.
//! - **Hosts and threads.** Share one [`PluginHost`] among runs: each reserves its engines'
//!   pool of [`Limits::concurrent_instances`] instances (a large share of address space), and
//!   starts one thread that ticks the sandbox's compute deadline for as long as the host
//!   lives. Calls past the pool wait for an instance to end. The live mesh starts one thread
//!   on first use.
//! - **Options.** [`RunOptions::validate`] says what is wrong with options an installer
//!   made before a run does; the shipped plugins need a catalogue source to build from.

#![warn(missing_docs)]
// No type of the contract's generated bindings, nor of the runtime's plumbing, may leak
// through a public signature: an embedder builds against the runtime's own types only.
#![deny(private_interfaces, private_bounds, unnameable_types)]
// The typed errors carry what names the file, the value and the remedy: built once, on a path
// that has failed, never in a loop, so their size costs nothing worth a box.
#![allow(clippy::result_large_err)]

pub mod catalogue;
mod contract;
pub mod effect;
pub mod error;
pub mod events;
pub mod files;
pub mod mesh;
mod model;
pub mod plugin;
pub mod record;
mod remedy;
mod run;
mod sandbox;
mod wait;

/// The shapes of a catalogue module's manifest, as the host reads them.
pub mod manifest {
    pub use mesh_adopt_manifest::*;
}

/// A run's options, and the parsers of what an operator types for them.
pub mod options {
    pub use crate::model::CatalogSource;
    pub use crate::model::options::{
        DEFAULT_NODE, DEFAULT_WAIT, MAX_WAIT, NameError, OptionError, OptionProblem, RunOptionName, RunOptions,
        check_module_name, check_name, check_node_name, parse_catalog_source, parse_duration,
    };
}

/// What a plugin is handed and gives back (its context, its plan and its commands, its
/// report, its refusal), and a plan saved to be applied later.
pub mod plan {
    pub use crate::catalogue::plan_key::{PlanKey, PlanKeyError};
    pub use crate::model::{Context, Plan, PluginCommand, Refusal, Report};
    pub use crate::run::plan_file::{
        PLAN_SCHEMA, PlanDifference, PlanFault, PlanFileError, SavedEffect, SavedLimits, SavedModule, SavedPlan,
    };
}

/// What a run did: each module's outcome, why a run was held, how far the rules were checked,
/// and the exit status it ends with.
pub mod report {
    pub use crate::model::Export;
    pub use crate::model::ending::Ending;
    pub use crate::model::exit::ExitStatus;
    pub use crate::model::{Input, Stopped};
    pub use crate::run::Unusable;
    pub use crate::run::problem::ModuleError;
    pub use crate::run::{Held, ModuleOutcome, RulesChecked, RunReport};
}

pub use catalogue::{Catalogue, Credentials, Foundation};
pub use error::{Error, Remedy};
pub use model::exit::ExitStatus;
pub use model::options::RunOptions;
pub use plugin::{Limits, PluginHost};
pub use run::{Held, Mode, ModuleOutcome, PHASE_THREE, Run, RunBuilder, RunReport, Shared};

/// What the benchmarks time below a run (one plugin's compile, load and export calls), and the
/// engine's own types they time it with: built only with the `bench` feature, so no wasmtime
/// type is part of the runtime's surface.
#[cfg(feature = "bench")]
pub mod bench;
