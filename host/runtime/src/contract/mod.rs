//! The WIT contract plugins are built against, one module per version this host speaks: each
//! turns its generated types into the host's own ([`crate::model`]) and serves its imports
//! from the sandbox's one implementation of them ([`crate::sandbox::imports`]), so a new
//! version is a new module beside the others rather than a change to every caller.
//!
//! Every version of this major one loads for good: a plugin built for 0.1.0 runs beside one
//! built for 0.2.0, in the same run.

use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Engine, Store};

use crate::model::{Context, Export, Plan, Refusal, Report};
use crate::sandbox::state::RunState;

pub use crate::model::contract::{Contract, PACKAGE};

/// The version a component was built for, read from the contract interfaces it imports
/// (every version's world imports `control`). `Err` names a version this host does not
/// speak; `Ok(None)` means it imports none of the contract.
pub(crate) fn of_component(
    engine: &Engine,
    component: &Component,
) -> Result<Option<Contract>, crate::model::faults::WorldFault> {
    use crate::model::faults::WorldFault;
    let mut found = None;
    for (name, _) in component.component_type().imports(engine) {
        let Some(rest) = name.strip_prefix(&format!("{PACKAGE}/")) else { continue };
        let version = rest.split_once('@').map(|(_, v)| v).unwrap_or("(unversioned)");
        let Some(contract) = Contract::of_version(version) else {
            return Err(WorldFault::OtherVersion {
                package: PACKAGE,
                version: version.to_string(),
                import: name.to_string(),
                spoken: Contract::spoken(),
            });
        };
        if let Some(first) = found.filter(|f| *f != contract) {
            return Err(WorldFault::TwoVersions {
                package: PACKAGE,
                first: Contract::version(first).to_string(),
                second: contract.version().to_string(),
            });
        }
        found = Some(contract);
    }
    Ok(found)
}

/// Serves a version's imports from the sandbox's one implementation of them: the same grants,
/// limits, scrubbing and record whichever version a plugin speaks. `$words` turns the
/// version's `tell` argument into the command's words; `control` and `machine` add what a
/// version's interfaces have beyond 0.1.0's.
macro_rules! serve_imports {
    (
        $version:ident,
        |$command:ident: $command_type:ty| $words:expr
        $(, control: { $($control:item)* })?
        $(, machine: { $($machine:item)* })?
    ) => {
        mod served {
            use wasmtime::component::Resource;

            use super::mesh::adopt::{clock, control, log, machine, types};
            use crate::catalogue::credentials::SecretValue;
            use crate::sandbox::imports::Carried;
            use crate::sandbox::state::RunState;

            impl types::Host for RunState {}

            impl control::HostSecret for RunState {
                fn name(&mut self, secret: Resource<SecretValue>) -> String {
                    self.secret_name(secret)
                }

                fn drop(&mut self, secret: Resource<SecretValue>) -> wasmtime::Result<()> {
                    self.drop_secret(secret)
                }
            }

            impl control::Host for RunState {
                async fn credential(&mut self, name: String) -> Result<Resource<SecretValue>, types::HostError> {
                    self.serve_credential(name).await.map_err(super::host_error)
                }

                async fn carry(
                    &mut self,
                    name: String,
                    payload: control::Payload,
                    remote: String,
                ) -> Result<(), types::HostError> {
                    let payload = match payload {
                        control::Payload::Bytes(bytes) => Carried::Bytes(bytes),
                        control::Payload::Secret(handle) => Carried::Secret(handle),
                    };
                    self.serve_carry(name, payload, remote).await.map_err(super::host_error)
                }

                async fn tell(
                    &mut self,
                    $command: $command_type,
                    timeout_seconds: u32,
                ) -> Result<String, types::HostError> {
                    self.serve_tell($words, timeout_seconds).await.map_err(super::host_error)
                }

                $($($control)*)?
            }

            impl machine::Host for RunState {
                async fn inspect(
                    &mut self,
                    container: String,
                ) -> Result<Option<machine::ContainerState>, types::HostError> {
                    let found = self.serve_inspect(container).await.map_err(super::host_error)?;
                    Ok(found.map(|c| machine::ContainerState { image: c.image, running: c.running }))
                }

                async fn fetch(&mut self, url: String) -> Result<machine::Response, types::HostError> {
                    let response = self.serve_fetch(url).await.map_err(super::host_error)?;
                    Ok(machine::Response { status: response.status, body: response.body })
                }

                $($($machine)*)?
            }

            impl log::Host for RunState {
                fn say(&mut self, line: String) -> wasmtime::Result<()> {
                    self.serve_say(line)
                }
            }

            impl clock::Host for RunState {
                fn now(&mut self) -> u64 {
                    self.serve_now()
                }

                async fn sleep(&mut self, millis: u64) {
                    self.serve_sleep(millis).await
                }
            }
        }

        /// A host call's "no" as this version's `host-error`.
        fn host_error(error: crate::sandbox::imports::HostError) -> mesh::adopt::types::HostError {
            use crate::events::ErrorKind;
            use mesh::adopt::types::HostError;
            match error.kind {
                ErrorKind::Denied => HostError::Denied(error.message),
                ErrorKind::Failed => HostError::Failed(error.message),
                ErrorKind::TimedOut => HostError::TimedOut(error.message),
                ErrorKind::Unavailable => HostError::Unavailable(error.message),
            }
        }
    };
}
pub(crate) use serve_imports;

/// The parts of the context every version hands over in the same shape, the foundation and
/// the options, converted once for all: `foundation(ctx)` and `options(ctx)` in the version's
/// module, in its generated types.
macro_rules! context_parts {
    () => {
        /// The foundation bundle in this version's types.
        fn foundation(ctx: &crate::model::Context) -> Vec<mesh::adopt::types::BundleResource> {
            use crate::model::FoundationResource as Resource;
            use mesh::adopt::types::{BundleResource, Container, File, Other};
            let resource = |r: &Resource| match r.clone() {
                Resource::Container { id, name, image, volumes } => {
                    BundleResource::Container(Container { id, name, image, volumes })
                }
                Resource::File { id, path } => BundleResource::File(File { id, path }),
                Resource::Other { id, kind } => BundleResource::Other(Other { id, kind }),
            };
            ctx.foundation.iter().map(resource).collect()
        }

        /// The operator's options in this version's types.
        fn options(ctx: &crate::model::Context) -> mesh::adopt::types::Options {
            use mesh::adopt::types::{CatalogSource, Options};
            let o = &ctx.options;
            Options {
                node: o.node.clone(),
                catalog_source: o
                    .catalog_source
                    .clone()
                    .map(|s| CatalogSource { repository: s.repository, ref_: s.reference }),
                wait_seconds: u32::try_from(o.wait.as_secs()).unwrap_or(u32::MAX),
            }
        }
    };
}
pub(crate) use context_parts;

// Generated from the WIT, whose comments are its documentation; a few generated helpers have none.
#[allow(missing_docs)]
pub(crate) mod v0_1;
#[allow(missing_docs)]
pub(crate) mod v0_2;

/// Adds every version's imports to `linker`: their interfaces are named apart by version, so
/// one linker serves plugins of each.
pub(crate) fn add_to_linker(linker: &mut Linker<RunState>) -> wasmtime::Result<()> {
    v0_1::Adopter::add_to_linker::<_, wasmtime::component::HasSelf<RunState>>(linker, |s| s)?;
    v0_2::Adopter::add_to_linker::<_, wasmtime::component::HasSelf<RunState>>(linker, |s| s)?;
    Ok(())
}

/// A plugin linked and checked against its version's world, ready to instantiate.
#[derive(Clone)]
pub(crate) enum AdopterPre {
    /// Built for 0.1.0.
    V0_1(v0_1::AdopterPre<RunState>),
    /// Built for 0.2.0.
    V0_2(v0_2::AdopterPre<RunState>),
}

impl AdopterPre {
    /// Checks `pre` against `contract`'s world.
    pub(crate) fn new(contract: Contract, pre: InstancePre<RunState>) -> wasmtime::Result<AdopterPre> {
        Ok(match contract {
            Contract::V0_1 => AdopterPre::V0_1(v0_1::AdopterPre::new(pre)?),
            Contract::V0_2 => AdopterPre::V0_2(v0_2::AdopterPre::new(pre)?),
        })
    }

    /// The version the plugin speaks.
    pub(crate) fn contract(&self) -> Contract {
        match self {
            AdopterPre::V0_1(_) => Contract::V0_1,
            AdopterPre::V0_2(_) => Contract::V0_2,
        }
    }

    /// The engine the plugin was compiled for: its stores are made on it.
    pub(crate) fn engine(&self) -> &Engine {
        match self {
            AdopterPre::V0_1(pre) => pre.engine(),
            AdopterPre::V0_2(pre) => pre.engine(),
        }
    }

    /// A fresh instance in `store`.
    pub(crate) async fn instantiate(&self, store: &mut Store<RunState>) -> wasmtime::Result<Adopter> {
        Ok(match self {
            AdopterPre::V0_1(pre) => Adopter::V0_1(pre.instantiate_async(store).await?),
            AdopterPre::V0_2(pre) => Adopter::V0_2 { bindings: pre.instantiate_async(store).await?, given: false },
        })
    }
}

/// One instance of a plugin, whichever version it speaks: the host calls `check` and `adopt`
/// on it in its own words.
pub(crate) enum Adopter {
    /// Built for 0.1.0: the context goes to each export.
    V0_1(v0_1::Adopter),
    /// Built for 0.2.0: the context goes once to `init`, before the first export.
    V0_2 {
        /// The generated bindings.
        bindings: v0_2::Adopter,
        /// Whether `init` has been called on this instance.
        given: bool,
    },
}

impl Adopter {
    /// Runs `check`.
    pub(crate) async fn check(
        &mut self,
        store: &mut Store<RunState>,
        ctx: &Context,
    ) -> wasmtime::Result<Result<Plan, Refusal>> {
        match self {
            Adopter::V0_1(bindings) => {
                Ok(bindings.call_check(store, &v0_1::context(ctx)).await?.map(Plan::from).map_err(Refusal::from))
            }
            Adopter::V0_2 { bindings, given } => {
                Self::init(bindings, given, &mut *store, ctx).await?;
                match bindings.call_check(&mut *store).await? {
                    Ok(plan) => Ok(Ok(v0_2::plan(plan))),
                    Err(refusal) => Ok(Err(coded(store.data_mut(), v0_2::refusal(refusal))?)),
                }
            }
        }
    }

    /// Runs `adopt`.
    pub(crate) async fn adopt(
        &mut self,
        store: &mut Store<RunState>,
        ctx: &Context,
    ) -> wasmtime::Result<Result<Report, Refusal>> {
        match self {
            Adopter::V0_1(bindings) => {
                Ok(bindings.call_adopt(store, &v0_1::context(ctx)).await?.map(Report::from).map_err(Refusal::from))
            }
            Adopter::V0_2 { bindings, given } => {
                Self::init(bindings, given, &mut *store, ctx).await?;
                match bindings.call_adopt(&mut *store).await? {
                    Ok(report) => Ok(Ok(v0_2::report(report))),
                    Err(refusal) => Ok(Err(coded(store.data_mut(), v0_2::refusal(refusal))?)),
                }
            }
        }
    }

    /// Hands a 0.2.0 instance its context, the first time only.
    async fn init(
        bindings: &v0_2::Adopter,
        given: &mut bool,
        store: &mut Store<RunState>,
        ctx: &Context,
    ) -> wasmtime::Result<()> {
        if *given {
            return Ok(());
        }
        // `init` only reads, whichever export it comes before.
        let phase = std::mem::replace(&mut store.data_mut().phase, Export::Check);
        let done = bindings.call_init(&mut *store, &v0_2::context(ctx)).await;
        store.data_mut().phase = phase;
        *given = true;
        done
    }
}

/// A refusal whose code is kebab-case; any other code is the plugin's fault, and stops it
/// naming the code, so no installer acts on a code that is not one.
fn coded(state: &mut RunState, refusal: Refusal) -> wasmtime::Result<Refusal> {
    if let Some(code) = &refusal.code
        && let Some(fault) = Refusal::plugin_code_fault(code)
    {
        // What the plugin meant to say is kept, cut, so the author sees which refusal it was;
        // where it was cut, what is left of a secret's value is redacted too.
        const CODE_SHOWN: usize = 64;
        const MESSAGE_SHOWN: usize = 500;
        let mut shown = code.clone();
        if crate::sandbox::limits::cut_to(&mut shown, CODE_SHOWN) {
            shown = state.scrub_cut(shown, || "its refusal's code".into()).0;
        }
        let mut message = refusal.message.clone();
        if crate::sandbox::limits::cut_to(&mut message, MESSAGE_SHOWN) {
            message = state.scrub_cut(message, || "its refusal".into()).0;
            message.push_str(" … (cut)");
        }
        wasmtime::bail!("it refused with the code {shown:?}, which {fault}; its refusal said: {message}");
    }
    Ok(refusal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_back_by_number_and_world() {
        for contract in Contract::ALL {
            assert_eq!(Contract::of_version(contract.version()), Some(contract));
            assert_eq!(Contract::of_world(contract.world()), Some(contract));
            assert_eq!(contract.world(), format!("{PACKAGE}/adopter@{}", contract.version()));
        }
        assert_eq!(Contract::of_version("0.3.0"), None);
        assert_eq!(Contract::spoken(), "0.1.0 and 0.2.0");
        assert_eq!(crate::model::contract::WORLD, "mesh:adopt/adopter@0.2.0");
    }
}
