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

use crate::manifest::{self, Grants};
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

    /// What `grants` lacks for these reads, one line each: the read and the grant to add.
    pub fn ungranted(&self, grants: &Grants) -> Vec<String> {
        let inspects = self.inspect.iter().filter(|name| !grants.allows_inspect(name)).map(|name| {
            format!("inspect container `{name}`: add \"{name}\" to `adopt.grants.inspect` in manifest.json")
        });
        let fetches = self
            .fetch
            .iter()
            .filter(|url| !grants.allows_fetch(url))
            .map(|url| format!("fetch `{url}`: add \"{url}\" to `adopt.grants.fetch` in manifest.json"));
        inspects.chain(fetches).collect()
    }

    /// For `check`: refuses, listing every read the module's manifest does not grant and the
    /// grant that would allow it.
    pub fn check(&self, ctx: &Context) -> Result<(), Refusal> {
        let module = &ctx.module;
        let ungranted = self.ungranted(&manifest::read(module, &ctx.manifest)?.adopt.grants);
        if ungranted.is_empty() {
            return Ok(());
        }
        Err(refuse(format!(
            "the `{module}` module's adopt step reads what its manifest does not grant, so the host \
             would deny it mid-adoption:\n - {}\nNothing has been registered",
            ungranted.join("\n - ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;

    fn grants(json: &str) -> Grants {
        Manifest::parse(format!(r#"{{"adopt":{{"grants":{json}}}}}"#).as_bytes()).unwrap().adopt.grants
    }

    #[test]
    fn names_each_ungranted_read_and_its_grant() {
        let reads = Reads::new().inspect("mesh-bus").fetch("http://127.0.0.1:8222/healthz");
        assert_eq!(
            reads.ungranted(&grants("{}")),
            [
                "inspect container `mesh-bus`: add \"mesh-bus\" to `adopt.grants.inspect` in manifest.json",
                "fetch `http://127.0.0.1:8222/healthz`: add \"http://127.0.0.1:8222/healthz\" to `adopt.grants.fetch` in manifest.json",
            ]
        );
        let granted = grants(r#"{"inspect":["mesh-bus"],"fetch":["http://127.0.0.1:8222/*"]}"#);
        assert!(reads.ungranted(&granted).is_empty());
    }

    #[test]
    fn a_url_outside_a_prefix_grant_is_ungranted() {
        let reads = Reads::new().fetch("http://127.0.0.1:8222/api/../admin");
        assert_eq!(reads.ungranted(&grants(r#"{"fetch":["http://127.0.0.1:8222/api/*"]}"#)).len(), 1);
    }
}
