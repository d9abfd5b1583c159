//! The host's side of the `adopter` world: the one place the WIT is turned into Rust.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "adopter",
    imports: { default: async },
    exports: { default: async },
    with: { "mesh:adopt/control.secret": crate::mesh::SecretValue },
});

pub use mesh::adopt::types::{BundleResource, CatalogSource, HostError, Options};

/// The contract's package, as plugins name it in their imports.
pub const PACKAGE: &str = "mesh:adopt";
/// The contract version this host implements.
pub const VERSION: &str = "0.1.0";
