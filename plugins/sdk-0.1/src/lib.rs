//! The guest side of mesh-adopt: what a catalogue module's `adopt.wasm` is written with.
//!
//! A plugin implements [`Plugin`] and registers it with [`export!`]. The capabilities the host
//! grants (carry, tell, credential, inspect, fetch, say, the clock) are wrapped in [`host`] so
//! that every failed call is one [`Error`], which `?` turns into a [`Refusal`] naming the call;
//! [`provider`] is the register → build → issue → assign → prepare → push sequence every
//! provider module shares; [`manifest`] and [`foundation`] read the two documents a plugin
//! decides from.
//!
//! What several modules do around that sequence has a helper each, made so that `check` and
//! `adopt` come from one value and `check` refuses whatever `adopt` would stumble on:
//!
//! - [`foundation::adopt_in_place`]: the bundle's container, once the manifest declares it
//!   under the same name and image;
//! - [`handover::Handover`]: a genesis credential carried in and accepted as a module secret,
//!   with the plan's command and the check that it can be;
//! - [`wait::wait_until`] and [`wait::wait_for_image`]: bounded waits on the host's clock;
//! - [`grants::Reads`]: the containers and URLs `adopt` will read, checked against the
//!   manifest's grants.

#![warn(missing_docs)]

#[doc(hidden)]
#[allow(clippy::too_many_arguments, missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        // The contract travels inside the crate (top-level `wit/` is a link to it), so the
        // packaged SDK builds against the WIT its version names.
        path: "wit",
        world: "adopter",
        pub_export_macro: true,
        export_macro_name: "__export_adopter",
        default_bindings_module: "mesh_adopt_sdk::bindings",
        // Imports take borrowed arguments, so a tell or a carry is made without copying them.
        ownership: Borrowing { duplicate_if_necessary: false },
    });
}

pub mod foundation;
pub mod grants;
pub mod handover;
pub mod host;
pub mod manifest;
pub mod provider;
pub mod wait;

pub use bindings::mesh::adopt::types::{
    BundleResource, CatalogSource, Container, Context, File, HostError, Options, Other, Plan, Refusal, Report,
};
pub use host::{Error, ErrorKind};

/// The contract this SDK is built against, as `wit/adopter.wit` states it; the crate's
/// version is the contract's.
pub const WIT: &str = include_str!("../wit/adopter.wit");

/// The world a plugin built with this SDK targets: what a manifest's `adopt.world` names.
pub const WORLD: &str = concat!("mesh:adopt/adopter@", env!("CARGO_PKG_VERSION"));

/// A module's adoption rules.
pub trait Plugin {
    /// Decides, changing nothing, whether and how the module can be adopted. The host denies
    /// every effect while this runs, so it may only read.
    fn check(ctx: &Context) -> Result<Plan, Refusal>;
    /// Adopts the module.
    fn adopt(ctx: &Context) -> Result<Report, Refusal>;
}

/// Builds a refusal from a message; plugins return these instead of panicking, so the
/// operator reads the reason rather than a trap.
pub fn refuse(message: impl Into<String>) -> Refusal {
    Refusal { message: message.into() }
}

#[doc(hidden)]
#[allow(missing_docs)]
pub struct Exported<P>(core::marker::PhantomData<P>);

impl<P: Plugin> bindings::Guest for Exported<P> {
    fn check(ctx: Context) -> Result<Plan, Refusal> {
        P::check(&ctx)
    }
    fn adopt(ctx: Context) -> Result<Report, Refusal> {
        P::adopt(&ctx)
    }
}

/// Registers a [`Plugin`] as the component's exports: `mesh_adopt_sdk::export!(Postgres);`
#[macro_export]
macro_rules! export {
    ($plugin:ty) => {
        type __MeshAdoptExported = $crate::Exported<$plugin>;
        $crate::bindings::__export_adopter!(__MeshAdoptExported with_types_in $crate::bindings);
    };
}

#[cfg(test)]
mod tests {
    /// A catalogue picks the SDK by version to pick the contract: the two must be one number.
    #[test]
    fn the_crate_version_is_the_contract_version() {
        let package = super::WIT
            .lines()
            .find_map(|line| line.trim().strip_prefix("package mesh:adopt@"))
            .expect("the WIT declares `package mesh:adopt@X;`");
        assert_eq!(package.trim_end_matches(';'), env!("CARGO_PKG_VERSION"));
        assert_eq!(super::WORLD, format!("mesh:adopt/adopter@{}", env!("CARGO_PKG_VERSION")));
    }
}
