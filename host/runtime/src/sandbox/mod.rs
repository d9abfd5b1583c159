//! The sandbox a plugin runs in: the WASI it gets ([`wasi`]), the mesh's clocks ([`clocks`]),
//! its output kept for a report ([`captured`]), one export call in a fresh store
//! ([`call`]) with its deadline ([`deadline`]) and limits ([`limits`]), the contract's imports
//! ([`imports`]) and the grants they are held to ([`grants`]), and the state a call carries
//! ([`state`]).

pub(crate) mod call;
pub mod captured;
pub mod clocks;
pub(crate) mod deadline;
pub(crate) mod denial;
pub mod grants;
pub(crate) mod imports;
pub mod limits;
pub(crate) mod state;
pub mod wasi;

pub use captured::Captured;
pub use clocks::{MeshMonotonicClock, MeshWallClock};
pub(crate) use wasi::{add_offered_to_linker, linker_for};

/// A seed for one module's random numbers, drawn from the run's: each module its own
/// stream, the same on every run with that seed.
pub fn module_seed(seed: u64, module: &str) -> u64 {
    // FNV-1a over the module's name, mixed into the run's seed.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in module.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    seed ^ hash.rotate_left(17)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_seeds_differ_by_module_and_repeat() {
        assert_eq!(module_seed(7, "nats"), module_seed(7, "nats"));
        assert_ne!(module_seed(7, "nats"), module_seed(7, "postgres"));
        assert_ne!(module_seed(7, "nats"), module_seed(8, "nats"));
    }
}
