//! One module a command, each with its arguments and what it does, and its work in a
//! directory of its own where it has more than its one file (`build/`, `new/`); what `check`
//! and `run` share is [`phase`]'s, what `build` and `new` share is [`language`]'s, and what
//! more commands share is [`crate::args`]'s.

pub mod build;
pub mod cache;
pub mod check;
pub mod completions;
pub mod inspect;
pub mod language;
pub mod manpage;
pub mod new;
pub mod phase;
pub mod replay;
pub mod run;
pub mod test;
pub mod unlock;
