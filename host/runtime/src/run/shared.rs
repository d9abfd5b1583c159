//! What a run holds of the plugin host, the catalogue and the foundation it is made from:
//! borrowed for as long as the run lives, or shared, so a run of shared parts has no lifetime
//! and can be spawned onto an executor's threads.

use std::ops::Deref;
use std::sync::Arc;

/// A part of a run, borrowed or shared. [`crate::Run::builder`] takes `&T` (the run borrows
/// it), `Arc<T>` (the run shares it) or `T` (the run owns it); a run made only of shared or
/// owned parts is a `Run<'static>`, which `tokio::spawn` and other executors take.
#[derive(Debug)]
pub enum Shared<'a, T> {
    /// Borrowed from the caller, who keeps it alive as long as the run.
    Borrowed(&'a T),
    /// Shared with the caller and other runs.
    Shared(Arc<T>),
}

impl<T> Deref for Shared<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self {
            Shared::Borrowed(part) => part,
            Shared::Shared(part) => part,
        }
    }
}

impl<T> Clone for Shared<'_, T> {
    fn clone(&self) -> Self {
        match self {
            Shared::Borrowed(part) => Shared::Borrowed(part),
            Shared::Shared(part) => Shared::Shared(part.clone()),
        }
    }
}

impl<'a, T> From<&'a T> for Shared<'a, T> {
    fn from(part: &'a T) -> Self {
        Shared::Borrowed(part)
    }
}

impl<T> From<Arc<T>> for Shared<'_, T> {
    fn from(part: Arc<T>) -> Self {
        Shared::Shared(part)
    }
}

impl<T> From<&Arc<T>> for Shared<'_, T> {
    fn from(part: &Arc<T>) -> Self {
        Shared::Shared(part.clone())
    }
}

impl<T> From<T> for Shared<'_, T> {
    fn from(part: T) -> Self {
        Shared::Shared(Arc::new(part))
    }
}
