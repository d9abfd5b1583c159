//! The WIT contract plugins are built against, one module per version this host speaks: each
//! turns its generated types into the host's own ([`crate::model`]), so a new version is a
//! new module beside the others rather than a change to every caller.

// Generated from the WIT, whose comments are its documentation; a few generated helpers have none.
#[allow(missing_docs)]
pub(crate) mod v0_1;

pub use v0_1::{PACKAGE, VERSION, WORLD};
