//! A run's events as a person reads them: what each event shows, as lines with the mesh's
//! clock in the left column.

use std::time::Duration;

use mesh_adopt_runtime::Remedy;
use mesh_adopt_runtime::events::{self, LockOutcome, Op};
use mesh_adopt_runtime::mesh::lock::LockScope;
use mesh_adopt_runtime::record::screen::visible;
use mesh_adopt_runtime::record::transcript::Entry;

use super::effect::effect_lines;

/// A tell allowed this long is a long wait worth showing (a build, a push).
const LONG_WAIT: Duration = Duration::from_secs(60);

/// What one event shows a person.
pub enum Shown {
    /// Lines to print as they are.
    Lines(String),
    /// A long wait begun at `at`: how it is shown depends on whether there is a terminal.
    Wait {
        /// What is waited for, and for how long at most.
        what: String,
        /// When it began, on the mesh's clock.
        at: Duration,
    },
    /// Nothing: a host call without `-v`, a short wait.
    Nothing,
}

/// What `event` shows; `verbose` with `-v`, `real_waits` where waits are real time (a live
/// mesh: a simulated build's four minutes pass at once, and are no wait to show).
pub fn shown(event: &Entry, verbose: bool, real_waits: bool) -> Shown {
    Shown::Lines(match event {
        Entry::Say { module, line, at } => format!("{} {module:>10} │ {}", clock(*at), visible(line)),
        Entry::Planned { module, summary, commands } => {
            let mut lines: Vec<String> =
                summary.iter().map(|l| format!("      {module:>10} │ plan: {}", visible(l))).collect();
            if verbose {
                lines.extend(
                    commands.iter().map(|c| format!("      {module:>10} │ plan: tell {}", visible(&c.join(" ")))),
                );
            } else {
                lines.push(format!("      {module:>10} │ plan: {} commands", commands.len()));
            }
            lines.join("\n")
        }
        Entry::Predicted { prediction, complete } => effect_lines(prediction, *complete, verbose),
        Entry::Reread { module, found, at, .. } => match (&found.unseen, found.moved.as_slice()) {
            (Some(why), _) => {
                format!(
                    "{} {module:>10} │ (the mesh could not be read again before its push: {})",
                    clock(*at),
                    visible(why)
                )
            }
            (None, []) if verbose => {
                format!("{} {module:>10} ┆ the mesh read again before its push: as predicted", clock(*at))
            }
            (None, []) => return Shown::Nothing,
            (None, moved) => {
                let mut lines = vec![format!(
                    "{} {module:>10} │ the mesh moved before its push (another run or an operator may be at work on it):",
                    clock(*at)
                )];
                lines.extend(moved.iter().map(|m| format!("      {module:>10} │   {}", visible(&m.to_string()))));
                lines.join("\n")
            }
        },
        Entry::Lock(lock) => match lock_lines(lock, verbose) {
            Some(lines) => lines,
            None => return Shown::Nothing,
        },
        Entry::SayCut { module, dropped_after } => {
            format!("      {module:>10} │ (said more than {dropped_after} lines: stopped, the rest dropped)")
        }
        Entry::SecretShown { module, secret, place } => {
            format!("      {module:>10} │ (the value of secret `{secret}` was caught in {place} and redacted)")
        }
        Entry::Started { module, request, at, timeout: Some(timeout) }
            if request.op == Op::Tell && real_waits && *timeout >= LONG_WAIT =>
        {
            let what =
                format!("{module:>10} │ waiting for `{}` (up to {}s)", visible(&request.words()), timeout.as_secs());
            return Shown::Wait { what, at: *at };
        }
        Entry::Call { module, phase, request, outcome, at, took, .. } if verbose => {
            let result = match outcome.as_ref().map(events::CallValue::words) {
                Ok(_) if request.op == Op::Inspect && matches!(outcome, Ok(events::CallValue::Nothing)) => {
                    "ok: no such container".to_string()
                }
                Ok(value) if value.is_empty() => "ok".to_string(),
                Ok(value) => format!("ok: {}", visible(&value)),
                Err(e) => visible(&e.to_string()),
            };
            format!(
                "{} {module:>10} ┆ {phase} {} {} → {result} ({took:.1?})",
                clock(*at),
                request.op.as_str(),
                visible(&request.words())
            )
        }
        // A read of the host's own is for a program reading the stream; a person sees its result.
        Entry::Call { .. } | Entry::Started { .. } | Entry::Reading { .. } => return Shown::Nothing,
    })
}

/// What the mesh's lock shows a person: a warning when nothing but this machine's lock (or
/// an unfenced mesh lock, or nothing at all) keeps another run out, who holds it when another
/// does, a release that waits for what the control plane still runs, a lock left, broken
/// under the run or damaged, each with what mends it; a lock taken and released as it should
/// be only with `-v`.
fn lock_lines(lock: &events::LockEvent, verbose: bool) -> Option<String> {
    let prefix = format!("      {:>10} │", "lock");
    let id = lock.holder.as_ref().map(|h| h.id.as_str()).unwrap_or_default();
    let message = lock.message.as_deref().map(visible);
    let mut line = match (lock.outcome, lock.scope) {
        (LockOutcome::Taken, Some(LockScope::Machine)) => format!(
            "{prefix} warning: this mesh's configuration has no `lock` command, so only this machine's lock keeps \
             another run out: a run from another machine is not kept out"
        ),
        (LockOutcome::Taken, Some(LockScope::Advisory)) => format!(
            "{prefix} warning: this mesh's configuration does not declare `lock_fences`, so its control plane does \
             not refuse the commands of a run whose lock was broken under it (another host's `mesh-adopt unlock`): \
             such a run would go on unaware"
        ),
        (LockOutcome::Taken, Some(LockScope::None)) => {
            format!("{prefix} warning: this mesh has no lock: nothing keeps another run out")
        }
        (LockOutcome::Taken, _) if verbose => format!("{prefix} taken: lock id `{id}`"),
        (LockOutcome::Released, _) if verbose => format!("{prefix} released: lock id `{id}`"),
        (LockOutcome::Taken | LockOutcome::Released, _) => return None,
        (LockOutcome::Held | LockOutcome::Waiting, _) => {
            let described = lock.holder.as_ref().map(|h| visible(&h.described())).unwrap_or_default();
            let mut line = format!("{prefix} held by another run: {described}");
            if let Some(message) = &message {
                line.push_str(&format!("; {message}"));
            }
            line
        }
        (LockOutcome::Releasing, _) => format!("{prefix} releasing lock `{id}`: {}", message.unwrap_or_default()),
        (LockOutcome::Failed, _) if lock.remedy.is_some() => {
            format!("{prefix} error: lock `{id}`: {}", message.unwrap_or_default())
        }
        (LockOutcome::Failed, _) => format!("{prefix} error: {}", message.unwrap_or_default()),
        (LockOutcome::Broken, _) => format!("{prefix} error: {}", message.unwrap_or_default()),
        (LockOutcome::Unreadable, _) => format!("{prefix} error: {}", message.unwrap_or_default()),
    };
    if let Some(remedy) = &lock.remedy {
        let config = match remedy {
            Remedy::Unlock { .. } | Remedy::ClearDamagedLock { .. } => {
                " (with this run's `--config FILE`, if it was given one)"
            }
            _ => "",
        };
        // A lock to wait for is named on the line above: the remedy would say it again.
        if !remedy.retry() {
            line.push_str(&format!("\n{prefix} {remedy}{config}"));
        }
    }
    Some(line)
}

/// `m:ss` of mesh time, so the operator sees how long each step took on the mesh's clock.
pub fn clock(at: Duration) -> String {
    let s = at.as_secs();
    format!("{:>2}:{:02}", s / 60, s % 60)
}
