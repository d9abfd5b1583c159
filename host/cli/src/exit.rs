//! The exit statuses the command documents (docs/operating.md's table): the runtime's own,
//! which the record's events and an embedder's process use too; `main` turns one into the
//! process's exit code.

pub use mesh_adopt_runtime::ExitStatus;
