//! mesh-adopt's integration tests: every rule of phase three, run through the real
//! `adopt.wasm` components on the simulated mesh, plus the sandbox and the command line.
//!
//! The plugins are built by `just build-plugins` (the `just test` recipe does it first).

mod cache;
mod check_phase;
mod cli;
mod cli_fuzz;
mod conformance;
mod embedding;
mod events;
mod files;
mod fleet;
mod fuzz;
mod hostile;
mod invariants;
mod live;
mod loading;
mod native_baseline;
mod nats;
mod postgres;
mod preflight;
mod provider;
mod renamed;
mod sandbox;
mod scaffold;
mod scenarios;
mod screens;
mod support;
