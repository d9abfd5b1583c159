//! mesh-adopt's integration tests. What a plugin does or refuses on a given mesh and catalogue
//! is said by the scenarios (`plugins/<module>/scenarios/`, `catalogue/scenarios/`), which
//! `scenarios.rs` runs here and the conformance suite runs against every language; these
//! tests hold what a scenario cannot say: the sandbox, hostile plugins, the host's preflight
//! and rules, the compile cache, the command line, the live mesh and embedding.
//!
//! The plugins are built by `just build-plugins` (the `just test` recipe does it first).

mod architecture;
mod cache;
mod canonical;
mod check_phase;
mod cli_fuzz;
mod code;
mod conformance;
mod contracts;
mod credentials_given;
mod documents;
mod embedding;
mod embedding_api;
mod events;
mod examples;
mod fence;
mod files;
mod fleet;
mod fuzz;
mod go_client;
mod hostile;
mod inputs;
mod inspect;
mod install;
mod interrupts;
mod invariants;
mod line_bound;
mod live;
mod live_embedding;
mod loading;
mod lock;
mod lock_recovery;
mod native_baseline;
mod nats;
mod node;
mod node_lock;
mod node_word;
mod preflight;
mod provider;
mod readme;
mod reference_protocol;
mod renamed;
mod replay;
mod reread;
mod rerun;
mod sandbox;
mod saved_plans;
mod scaffold;
mod scenarios;
mod schema_versions;
mod screens;
mod secret_guard;
mod secrets;
mod stdout;
mod support;
mod surface;
