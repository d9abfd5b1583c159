//! The mesh-adopt runtime: loads each catalogue module's adoption plugin (`adopt.wasm`),
//! runs it in a sandbox, and lets it adopt what genesis raised through a [`Mesh`] backend.
//!
//! An installer embeds this crate; the `mesh-adopt` command, the live backend
//! (`mesh-adopt-live`) and the scenario kit (`mesh-adopt-testkit`) sit on it. Nothing here
//! parses a command line or draws on a terminal.

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
