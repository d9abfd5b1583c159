//! mesh-adopt: runs each catalogue module's adoption plugin (`adopt.wasm`) in a sandbox and
//! lets it adopt what genesis raised, through a mesh backend that is live or simulated.
//!
//! The library does the work; the `mesh-adopt` binary only parses arguments and prints.

mod bindings;
pub mod cache;
pub mod catalogue;
pub mod cli;
pub mod credentials;
pub mod deadline;
pub mod events;
pub mod fleet;
pub mod grants;
mod imports;
pub mod limits;
pub mod mesh;
pub mod options;
pub mod output;
pub mod plan_file;
pub mod run;
pub mod runtime;
pub mod sandbox;
pub mod scaffold;
pub mod scenario;
pub mod screen;
pub mod transcript;
pub mod urls;

pub use bindings::{BundleResource, CatalogSource, Context, Options, Plan, Refusal, Report};
