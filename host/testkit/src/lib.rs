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

mod documents;
mod files;
mod format;
mod running;
mod sweep;

pub use documents::{Documents, Prepared, prepare};
pub use files::{ScenarioFile, discover, read};
pub use format::{Edit, Expect, FaultSpec, LockedBy, MeshSpec, Scenario};
pub use running::{ScenarioRun, differences, outcome_of, refusal_code, run};
pub use sweep::{SweepResult, sweep, sweep_prepared};
