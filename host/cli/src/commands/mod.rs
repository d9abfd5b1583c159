//! One module a command, each with its arguments and what it does; what `check` and `run`
//! share is [`phase`]'s, and what more commands share is [`crate::args`]'s.

pub mod build;
pub mod cache;
pub mod check;
pub mod inspect;
pub mod new;
pub mod phase;
pub mod replay;
pub mod run;
pub mod test;
