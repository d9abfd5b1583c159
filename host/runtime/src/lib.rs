//! The mesh-adopt runtime: loads each catalogue module's adoption plugin (`adopt.wasm`),
//! runs it in a sandbox, and lets it adopt what genesis raised through a [`Mesh`] backend.
//!
//! An installer embeds this crate; the `mesh-adopt` command, the live backend
//! (`mesh-adopt-live`) and the scenario kit (`mesh-adopt-testkit`) sit on it. Nothing here
//! parses a command line or draws on a terminal.
//!
//! # Embedding
//!
//! ```no_run
//! # use std::{path::Path, sync::Arc};
//! # use mesh_adopt_runtime::*;
//! # fn main() -> anyhow::Result<()> {
//! let host = PluginHost::new(Limits::default())?;
//! let catalogue = Catalogue::at("catalogue");
//! let foundation = Foundation::load(Path::new("catalogue/foundation.json"))?;
//! let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), "node-1")));
//! let run = Run::builder(&host, &catalogue, &foundation, mesh)
//!     .credentials(Arc::new(Credentials::open(Path::new("catalogue/genesis/credentials"))))
//!     .build();
//! // From async code: `run.run(&modules, Mode::Adopt).await`.
//! let report = run.run_blocking(&PHASE_THREE.map(String::from), Mode::Adopt)?;
//! std::process::exit(report.exit_code().into());
//! # }
//! ```
//!
//! - **Executors.** [`Run::run`] is a future any executor drives: the runtime's timers are
//!   its own and the live mesh starts and watches its processes from a thread of its own, so
//!   a tokio current-thread runtime, one built without timers or IO, or another executor will
//!   do, and this crate needs no tokio feature of the caller's. A synchronous `main` calls
//!   [`Run::run_blocking`].
//! - **Cancelling.** Drop the future: the plugin in flight is stopped, a control-plane
//!   command in flight is killed with its process group, nothing more reaches the mesh, and
//!   [`Transcript::interrupted`] gives the record's last event with what had been done.
//! - **The compile cache.** [`PluginHost::new`] compiles every plugin afresh in each process
//!   (a Rust plugin in about half a second, a JavaScript or Python one in seconds);
//!   [`PluginHost::cached`] with a [`CompileCache`] (the command line's is
//!   `~/.cache/mesh-adopt`, [`CompileCache::default_dir`]) loads one compiled before in
//!   milliseconds. Entries are bound to the plugin's digest and the engine, and checked
//!   before their native code is trusted.
//! - **Debug builds.** wasmtime's code generator is slow unoptimised: a debug embedder
//!   without the settings below took 4 to 12 seconds to run phase three, where the debug
//!   command line, with them, takes about one. Optimise just the generator, as this
//!   workspace does, in the embedder's `Cargo.toml`:
//!   `[profile.dev.package.cranelift-codegen] opt-level = 2` and the same for `regalloc2`.
//! - **Threads.** A [`PluginHost`] starts one thread that ticks the sandbox's compute
//!   deadline; the live mesh starts one on first use. Both live as long as the program.

#![warn(missing_docs)]

// Generated from the WIT, whose comments are its documentation; a few generated helpers have none.
#[allow(missing_docs)]
mod bindings;
pub mod cache;
pub mod catalogue;
pub mod credentials;
mod deadline;
mod digests;
pub mod effect;
pub mod error;
pub mod events;
pub mod fleet;
mod functions;
pub mod grants;
mod imports;
pub mod limits;
pub mod mesh;
pub mod options;
pub mod plan_file;
pub mod plan_key;
pub mod run;
pub mod runtime;
mod sandbox;
pub mod screen;
mod state;
pub mod transcript;

pub use bindings::{BundleResource, CatalogSource, Context, Options, Plan, Refusal, Report, WORLD};
pub use cache::CompileCache;
pub use catalogue::{Catalogue, Foundation};
pub use credentials::Credentials;
pub use error::{Input, StopKind, Stopped, Unusable};
pub use functions::FunctionsReused;
pub use limits::Limits;
pub use mesh::Mesh;
pub use mesh::simulated::{SimSetup, SimulatedMesh};
pub use options::RunOptions;
pub use run::{Mode, ModuleOutcome, PHASE_THREE, Run, RunBuilder, RunReport};
pub use runtime::PluginHost;
pub use transcript::Transcript;
