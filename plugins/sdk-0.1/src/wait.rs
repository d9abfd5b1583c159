//! Bounded waits on the host's clock, for what a push sets going on the node.
//!
//! The clock is the host's (virtual in the simulator, so a two-minute wait costs a test
//! nothing), the condition is always asked at least once, and the wait never outlives its
//! bound by more than one poll: a plugin that waits on its own loop easily gets one of those
//! wrong.

use std::fmt;
use std::time::Duration;

use crate::host::{ContainerState, Error, ErrorKind, inspect, now_millis, sleep_millis};
use crate::{Refusal, refuse};

/// Why a wait ended without its condition.
#[derive(Debug, Clone)]
pub enum WaitError {
    /// The bound passed first.
    TimedOut(TimedOut),
    /// The condition refused: the wait cannot succeed, so it stopped.
    Refused(Refusal),
}

/// A wait whose bound passed before its condition held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedOut {
    /// What was waited for, as [`wait_until`] was given it.
    pub what: String,
    /// The bound.
    pub timeout: Duration,
    /// What was seen last, in words, when the waiting helper knows; else empty.
    pub seen: String,
}

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gave up waiting for {} after {}", self.what, seconds(self.timeout))?;
        if !self.seen.is_empty() {
            write!(f, ": {}", self.seen)?;
        }
        Ok(())
    }
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitError::TimedOut(timed_out) => timed_out.fmt(f),
            WaitError::Refused(refusal) => f.write_str(&refusal.message),
        }
    }
}

impl std::error::Error for WaitError {}

impl From<WaitError> for Refusal {
    fn from(error: WaitError) -> Refusal {
        match error {
            WaitError::TimedOut(timed_out) => refuse(timed_out.to_string()),
            WaitError::Refused(refusal) => refusal,
        }
    }
}

/// A duration as a refusal says it: whole seconds as `120s`, anything else in milliseconds.
fn seconds(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Asks `condition` until it gives `Some`, sleeping `poll` on the host's clock between asks,
/// for at most `timeout` (`--wait`, usually): once at once, then again after each poll until
/// the bound has passed. `what` names what is waited for ("container `mesh-bus` to run …")
/// in the [`TimedOut`] it ends with otherwise. A refusal from the condition stops the wait.
///
/// A caller that words its own timeout from what it saw keeps that in its own variables,
/// which the closure updates, and matches on [`WaitError::TimedOut`]; one that does not
/// simply uses `?`.
pub fn wait_until<T>(
    what: &str,
    timeout: Duration,
    poll: Duration,
    mut condition: impl FnMut() -> Result<Option<T>, Refusal>,
) -> Result<T, WaitError> {
    let deadline = now_millis().saturating_add(millis(timeout));
    loop {
        if let Some(done) = condition().map_err(WaitError::Refused)? {
            return Ok(done);
        }
        if now_millis() >= deadline {
            return Err(WaitError::TimedOut(TimedOut { what: what.to_string(), timeout, seen: String::new() }));
        }
        sleep_millis(millis(poll));
    }
}

/// What a container is, as a wait asks: `None` when it is not there or the node cannot say
/// right now (asking again may tell). Only a denied inspect is an error: waiting on would end
/// in a misleading "gone".
pub fn container_state(container: &str) -> Result<Option<ContainerState>, Error> {
    match inspect(container) {
        Ok(state) => Ok(state),
        Err(error) if error.kind() == ErrorKind::Denied => Err(error),
        Err(_) => Ok(None),
    }
}

/// Waits, as [`wait_until`] does, until `container` is up on `image`, asking with
/// [`container_state`]; the [`TimedOut`] says what it ran last. The container must be granted
/// in `adopt.grants.inspect` ([`crate::grants::Reads::inspect`] checks that in `check`).
pub fn wait_for_image(
    container: &str,
    image: &str,
    timeout: Duration,
    poll: Duration,
) -> Result<ContainerState, WaitError> {
    let mut seen = String::new();
    let waited = wait_until(&format!("container `{container}` to run `{image}`"), timeout, poll, || {
        let state = container_state(container)?;
        seen = match &state {
            None => "it is not there, or the node cannot say".to_string(),
            Some(s) if s.running => format!("it runs `{}`", s.image),
            Some(s) => format!("it is stopped, on `{}`", s.image),
        };
        Ok(state.filter(|s| s.running && s.image == image))
    });
    waited.map_err(|error| match error {
        WaitError::TimedOut(timed_out) => WaitError::TimedOut(TimedOut { seen, ..timed_out }),
        refused => refused,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_says_what_was_awaited_for_how_long_and_what_was_seen() {
        let mut timed_out =
            TimedOut { what: "the bus".to_string(), timeout: Duration::from_secs(120), seen: String::new() };
        assert_eq!(timed_out.to_string(), "gave up waiting for the bus after 120s");
        timed_out.seen = "it runs `nats:2`".to_string();
        timed_out.timeout = Duration::from_millis(1500);
        assert_eq!(
            Refusal::from(WaitError::TimedOut(timed_out)).message,
            "gave up waiting for the bus after 1500ms: it runs `nats:2`"
        );
    }

    #[test]
    fn a_refusal_from_the_condition_stays_itself() {
        let refused = WaitError::Refused(refuse("denied"));
        assert_eq!(Refusal::from(refused).message, "denied");
    }
}
