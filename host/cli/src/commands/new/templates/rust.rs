//! A Rust plugin's crate as `new` writes it for an installed module: its `Cargo.toml`, its
//! `.gitignore` and the plugin source that installs the module by the provider sequence, kept
//! in `rust/`.

use super::{fill, type_name};

/// The crate's `Cargo.toml`, with `{{module}}` and `{{sdk}}` to fill in.
const CARGO_TOML: &str = include_str!("rust/Cargo.toml.in");

/// The crate's `.gitignore`: its build directory.
pub const GITIGNORE: &str = include_str!("rust/.gitignore.in");

/// The installed module's `src/lib.rs`, with `{{module}}` and `{{type}}` to fill in.
const INSTALLED_LIB_RS: &str = include_str!("rust/lib.rs.in");

/// The crate's `Cargo.toml`: a workspace of its own (so it builds the same wherever the
/// catalogue is checked out), with the release profile that keeps plugins small.
pub fn cargo_toml(module: &str, sdk: &str) -> String {
    fill(CARGO_TOML, &[("module", module), ("sdk", sdk)])
}

/// The installed module's plugin source: the provider sequence, with a place for the
/// module's own rules and step.
pub fn installed_lib_rs(module: &str) -> String {
    fill(INSTALLED_LIB_RS, &[("module", module), ("type", &type_name(module))])
}
