//! The host's side of the `adopter` world: the one place the WIT is turned into Rust.

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "adopter",
    // What reaches a mesh waits on it, so it is async; what the host answers itself (a line
    // said, the clock, a secret's name) is not, and skips the cost of a future per call. A say
    // flood stops the plugin, so `say` may trap; every other import answers in-band.
    imports: {
        "mesh:adopt/log.say": trappable,
        "mesh:adopt/clock.now": exact,
        "mesh:adopt/control.[method]secret.name": exact,
        "mesh:adopt/control.[drop]secret": exact,
        default: async,
    },
    exports: { default: async },
    with: { "mesh:adopt/control.secret": crate::mesh::SecretValue },
});

pub use mesh::adopt::types::{BundleResource, CatalogSource, HostError, Options};

/// The contract's package, as plugins name it in their imports.
pub const PACKAGE: &str = "mesh:adopt";
/// The contract version this host implements.
pub const VERSION: &str = "0.1.0";
/// The world a manifest's `adopt.world` names for this host.
pub const WORLD: &str = "mesh:adopt/adopter@0.1.0";

/// Whether two plans say the same: a re-check with the plan reviewed, a saved plan with today's.
pub fn same_plan(a: &Plan, b: &Plan) -> bool {
    a.summary == b.summary && a.commands == b.commands
}
