//! The guest side of mesh-adopt: what a catalogue module's `adopt.wasm` is written with.
//!
//! A plugin implements [`Plugin`] and registers it with [`export!`]. The capabilities the host
//! grants (carry, tell, credential, inspect, fetch, say, the clock) are wrapped in [`host`] so
//! that every failed call is one [`Error`], which `?` turns into a [`Refusal`] naming the call;
//! [`provider`] is the register → build → issue → assign → prepare → push sequence every
//! provider module shares; [`foundation`] finds what a module adopts in the foundation
//! bundle. The host hands the manifest over parsed (`ctx.manifest`), so no plugin carries a
//! JSON parser.
//!
//! Every refusal has a code, kebab-case and stable, that an installer or a scenario can act on
//! ([`refuse`]); the SDK's own are listed in its README.
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
        // The contract travels inside the crate (top-level `wit/0.2.0` is a link to it), so
        // the packaged SDK builds against the WIT its version names.
        path: "wit",
        world: "adopter",
        pub_export_macro: true,
        export_macro_name: "__export_adopter",
        default_bindings_module: "mesh_adopt_sdk::bindings",
        // One type per WIT type: a command is both a tell's argument and part of a plan.
        ownership: Owning,
    });
}

pub mod command;
pub mod foundation;
pub mod grants;
pub mod handover;
pub mod host;
pub mod provider;
pub mod wait;

pub use bindings::mesh::adopt::types::{
    AdoptedAs, Adoption, BundleResource, CatalogSource, Container, Context, File, Grants, HostError, Manifest, Options,
    Other, Plan, Refusal, Report,
};
pub use host::{Error, ErrorKind};
pub use mesh_adopt_manifest::mounts;

/// The contract this SDK is built against, as `wit/adopter.wit` states it; the crate's
/// version is the contract's.
pub const WIT: &str = include_str!("../wit/adopter.wit");

/// The world a plugin built with this SDK targets: what a manifest's `adopt.world` names.
pub const WORLD: &str = concat!("mesh:adopt/adopter@", env!("CARGO_PKG_VERSION"));

/// A module's adoption rules. The host hands the context once per instance; both exports
/// are given that one value.
pub trait Plugin {
    /// Decides, changing nothing, whether and how the module can be adopted. The host denies
    /// every effect while this runs, so it may only read.
    fn check(ctx: &Context) -> Result<Plan, Refusal>;
    /// Adopts the module.
    fn adopt(ctx: &Context) -> Result<Report, Refusal>;
}

/// Builds a refusal: `code` is its kind, kebab-case and stable (`image-differs`), for an
/// installer or a scenario to act on; `message` is for the operator. Plugins return these
/// instead of panicking, so the operator reads the reason rather than a trap.
pub fn refuse(code: &str, message: impl Into<String>) -> Refusal {
    Refusal { code: code.to_string(), message: message.into() }
}

/// The context the host handed this instance: each instance serves one module.
static GIVEN: std::sync::OnceLock<Context> = std::sync::OnceLock::new();

/// The context `init` was handed, or the refusal for an instance never handed one.
fn given() -> Result<&'static Context, Refusal> {
    GIVEN.get().ok_or_else(|| refuse("no-context", "the host called an export before `init`: no context to act on"))
}

#[doc(hidden)]
#[allow(missing_docs)]
pub struct Exported<P>(core::marker::PhantomData<P>);

impl<P: Plugin> bindings::Guest for Exported<P> {
    fn init(ctx: Context) {
        // A second `init` keeps the first context: `adopt` acts on what `check` planned with.
        let _ = GIVEN.set(ctx);
    }
    fn check() -> Result<Plan, Refusal> {
        P::check(given()?)
    }
    fn adopt() -> Result<Report, Refusal> {
        P::adopt(given()?)
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

/// Contexts for the SDK's own tests.
#[cfg(test)]
mod testing {
    use crate::{Context, Grants, Manifest, Options};

    /// A context for `module` with an empty manifest, on `node-1`, with no catalogue source.
    pub fn context(module: &str) -> Context {
        Context {
            module: module.into(),
            manifest: Manifest {
                name: module.into(),
                containers: Vec::new(),
                secrets: Vec::new(),
                bus_subjects: Vec::new(),
                bus_users: String::new(),
                adopts: Vec::new(),
                grants: Grants { credentials: Vec::new(), inspect: Vec::new(), fetch: Vec::new() },
            },
            manifest_bytes: Vec::new(),
            foundation: Vec::new(),
            options: Options { node: "node-1".into(), catalog_source: None, wait_seconds: 120 },
        }
    }
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
