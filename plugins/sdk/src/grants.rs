//! What a module's `adopt` will read on the node, checked in `check` against what its manifest
//! grants.
//!
//! The host denies an inspect or a fetch the manifest's `adopt.grants` does not list, but
//! `check` does neither, so without this a missing grant shows only mid-adoption: after the
//! push, say, as a wait that never sees its server. Declaring the reads lets `check` refuse
//! before anything is registered, naming the grant to add.
//!
//! ```no_run
//! # use mesh_adopt_sdk::{Context, Refusal, grants::Reads};
//! fn check(ctx: &Context) -> Result<(), Refusal> {
//!     Reads::new().inspect("mesh-bus").fetch("http://127.0.0.1:8222/healthz").check(ctx)
//! }
//! ```

use crate::bindings::mesh::adopt::machine;
use crate::{Context, Refusal, refuse};

/// The containers a module's `adopt` inspects and the URLs it fetches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reads {
    inspect: Vec<String>,
    fetch: Vec<String>,
}

impl Reads {
    /// No reads yet.
    pub fn new() -> Reads {
        Reads::default()
    }

    /// `adopt` inspects the container `name`.
    pub fn inspect(mut self, name: impl Into<String>) -> Reads {
        self.inspect.push(name.into());
        self
    }

    /// `adopt` fetches `url`.
    pub fn fetch(mut self, url: impl Into<String>) -> Reads {
        self.fetch.push(url.into());
        self
    }

    /// What the manifest's grants lack for these reads, one line each: the read and the
    /// grant to add. The host answers, by the rules it will hold `adopt`'s reads to.
    pub fn ungranted(&self) -> Vec<String> {
        machine::ungranted(&self.inspect, &self.fetch)
    }

    /// For `check`: refuses, listing every read the module's manifest does not grant and the
    /// grant that would allow it.
    pub fn check(&self, ctx: &Context) -> Result<(), Refusal> {
        let module = &ctx.module;
        let ungranted = self.ungranted();
        if ungranted.is_empty() {
            return Ok(());
        }
        Err(refuse(
            "not-granted",
            format!(
                "the `{module}` module's adopt step reads what its manifest does not grant, so the host \
             would deny it mid-adoption:\n - {}\nNothing has been registered",
                ungranted.join("\n - ")
            ),
        ))
    }
}
