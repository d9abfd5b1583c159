//! A mesh that answers from a recording: each call a plugin makes is compared with the next
//! call the recording holds and answered as it was answered then. A field failure recorded
//! with `--record` becomes a regression test, and a changed plugin shows the first call at
//! which it no longer does what the recorded one did.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use async_trait::async_trait;

use super::{ContainerState, Mesh, MeshError, Payload, Response};
use crate::options::RunOptions;

/// One host call as a recording keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedCall {
    pub module: String,
    pub op: String,
    pub args: String,
    /// What the mesh answered: the value in words, or the error's words.
    pub result: Result<String, String>,
    /// The mesh's clock when the call returned, where the recording says.
    pub at: Option<Duration>,
}

impl RecordedCall {
    fn shown(&self) -> String {
        format!("{} `{}` ({})", self.op, self.args, self.module)
    }
}

/// What a `--record` file holds that a replay needs.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The operator's options the run was made with; `None` in a recording that does not
    /// say (one made before recordings began with them).
    pub options: Option<RunOptions>,
    /// The calls that reached the mesh, in order.
    pub calls: Vec<RecordedCall>,
    /// The seed the recorded run's WASI random numbers were drawn from, where it says.
    pub seed: Option<u64>,
}

/// Reads a `--record` file: the run's options from its first line, and the calls that
/// reached the mesh. Credentials (answered by the host) and calls the grants denied (never
/// sent) are left out.
pub fn read_recording(path: &Path) -> Result<Recording> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("failed to read the recording `{}`", path.display()))?;
    let mut calls = Vec::new();
    let mut options = None;
    let mut seed = None;
    for (number, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let event: serde_json::Value = serde_json::from_str(line)
            .with_context(|| format!("line {} of the recording `{}` is not JSON", number + 1, path.display()))?;
        if event["event"] == "run" {
            seed = event["seed"].as_u64();
            options = Some(RunOptions::from_json(&event["options"]).with_context(|| {
                format!("line {} of the recording `{}` has malformed run options", number + 1, path.display())
            })?);
            continue;
        }
        if event["event"] != "call" {
            continue;
        }
        let field = |name: &str| -> Result<String> {
            event[name]
                .as_str()
                .map(String::from)
                .with_context(|| format!("line {} of the recording `{}` has no `{name}`", number + 1, path.display()))
        };
        let op = field("op")?;
        let result = field("result")?;
        let ok = event["ok"].as_bool().unwrap_or(false);
        if op == "credential" || (!ok && result.starts_with("denied")) {
            continue;
        }
        calls.push(RecordedCall {
            module: field("module")?,
            op,
            args: field("args")?,
            result: if ok { Ok(result) } else { Err(result) },
            at: event["at_ms"]
                .as_f64()
                .filter(|ms| ms.is_finite() && *ms >= 0.0)
                .map(|ms| Duration::from_secs_f64(ms / 1e3)),
        });
    }
    if calls.is_empty() {
        bail!("the recording `{}` holds no calls that reached a mesh", path.display());
    }
    Ok(Recording { options, calls, seed })
}

/// A mesh answering from recorded calls. Its clock is virtual, and each answer sets it
/// forward to when the recorded call returned: a plugin that waits with a deadline sees the
/// time the recorded run saw, so a wait that ran out on a live mesh, where every call took
/// real time, runs out at the same poll in the replay.
pub struct ReplayMesh {
    state: Mutex<Replay>,
}

struct Replay {
    seed: Option<u64>,
    pending: VecDeque<RecordedCall>,
    answered: usize,
    divergence: Option<String>,
    now: Duration,
}

impl ReplayMesh {
    /// A mesh answering `calls`, its plugins' WASI random numbers drawn from `seed` (the
    /// recorded run's) so the replay draws what the recorded run drew.
    pub fn new(calls: Vec<RecordedCall>, seed: Option<u64>) -> ReplayMesh {
        ReplayMesh {
            state: Mutex::new(Replay {
                seed,
                pending: calls.into(),
                answered: 0,
                divergence: None,
                now: Duration::ZERO,
            }),
        }
    }

    /// How many calls were answered from the recording.
    pub fn answered(&self) -> usize {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).answered
    }

    /// The first call where the plugin did not do what the recording holds, if any: a call
    /// that differs, a call beyond the recording, or recorded calls never made.
    pub fn divergence(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.divergence.clone().or_else(|| {
            state.pending.front().map(|next| {
                format!(
                    "call {}: the recording goes on with {}, and the plugin made no more calls",
                    state.answered + 1,
                    next.shown()
                )
            })
        })
    }

    /// Answers a call from the recording, or notes where the plugin diverged.
    fn answer(&self, op: &str, args: &str, matches: impl Fn(&str) -> bool) -> Result<String, MeshError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.divergence.is_some() {
            return Err(MeshError::Unavailable("the replay already diverged".into()));
        }
        let number = state.answered + 1;
        let next = state.pending.front().cloned();
        match next {
            Some(recorded) if recorded.op == op && matches(&recorded.args) => {
                state.pending.pop_front();
                state.answered += 1;
                if let Some(at) = recorded.at {
                    state.now = state.now.max(at);
                }
                recorded.result.map_err(|words| error_from_words(&words))
            }
            Some(recorded) => {
                let why =
                    format!("call {number}: the recording has {}, the plugin made {op} `{args}`", recorded.shown());
                state.divergence = Some(why.clone());
                Err(MeshError::Failed(format!("replay diverged at {why}")))
            }
            None => {
                let why = format!("call {number}: the plugin made {op} `{args}` beyond the end of the recording");
                state.divergence = Some(why.clone());
                Err(MeshError::Failed(format!("replay diverged at {why}")))
            }
        }
    }
}

/// A recorded error's words (`failed: …`, `timed out: …`, `unavailable: …`) as the error.
fn error_from_words(words: &str) -> MeshError {
    if let Some(rest) = words.strip_prefix("timed out: ") {
        MeshError::TimedOut(rest.into())
    } else if let Some(rest) = words.strip_prefix("unavailable: ") {
        MeshError::Unavailable(rest.into())
    } else {
        MeshError::Failed(words.strip_prefix("failed: ").unwrap_or(words).into())
    }
}

#[async_trait]
impl Mesh for ReplayMesh {
    fn seed(&self) -> Option<u64> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).seed
    }

    fn summary(&self) -> String {
        "a replay of a recording".into()
    }

    async fn carry(&self, _name: &str, _payload: Payload, remote: &str) -> Result<(), MeshError> {
        let suffix = format!(" to {remote}");
        self.answer("carry", remote, |recorded| recorded.ends_with(&suffix)).map(|_| ())
    }

    async fn tell(&self, args: &[String], _timeout: Duration) -> Result<String, MeshError> {
        let words = args.join(" ");
        self.answer("tell", &words, |recorded| recorded == words)
    }

    async fn inspect(&self, container: &str) -> Result<Option<ContainerState>, MeshError> {
        let answer = self.answer("inspect", container, |recorded| recorded == container)?;
        let value: serde_json::Value = serde_json::from_str(&answer).unwrap_or(serde_json::Value::Null);
        Ok(value.as_object().map(|state| ContainerState {
            image: state.get("image").and_then(|v| v.as_str()).unwrap_or_default().into(),
            running: state.get("running").and_then(|v| v.as_bool()).unwrap_or(true),
        }))
    }

    async fn fetch(&self, url: &str) -> Result<Response, MeshError> {
        let answer = self.answer("fetch", url, |recorded| recorded == url)?;
        let value: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
        Ok(Response {
            status: value["status"].as_u64().and_then(|s| u16::try_from(s).ok()).unwrap_or(0),
            body: value["body"].as_str().unwrap_or_default().into(),
        })
    }

    fn now(&self) -> Duration {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).now
    }

    async fn sleep(&self, duration: Duration) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.now = state.now.saturating_add(duration);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inspect_at(at_ms: Option<u64>) -> RecordedCall {
        RecordedCall {
            module: "nats".into(),
            op: "inspect".into(),
            args: "mesh-bus".into(),
            result: Ok("null".into()),
            at: at_ms.map(Duration::from_millis),
        }
    }

    #[tokio::test]
    async fn the_clock_keeps_up_with_the_recorded_run() {
        // Three polls 2 s apart on a live mesh, each taking real time: the last returned at
        // 5.6 s, where two virtual sleeps alone would say 4 s.
        let mesh =
            ReplayMesh::new(vec![inspect_at(Some(1_000)), inspect_at(Some(3_300)), inspect_at(Some(5_600))], None);
        mesh.inspect("mesh-bus").await.unwrap();
        assert_eq!(mesh.now(), Duration::from_millis(1_000));
        mesh.sleep(Duration::from_secs(2)).await;
        mesh.inspect("mesh-bus").await.unwrap();
        assert_eq!(mesh.now(), Duration::from_millis(3_300));
        mesh.sleep(Duration::from_secs(2)).await;
        mesh.inspect("mesh-bus").await.unwrap();
        assert_eq!(mesh.now(), Duration::from_millis(5_600));
        assert_eq!(mesh.divergence(), None);
    }

    #[tokio::test]
    async fn the_clock_never_goes_back_and_runs_on_sleeps_without_recorded_times() {
        let mesh = ReplayMesh::new(vec![inspect_at(Some(500)), inspect_at(None)], None);
        mesh.sleep(Duration::from_secs(1)).await;
        mesh.inspect("mesh-bus").await.unwrap();
        assert_eq!(mesh.now(), Duration::from_secs(1), "a call recorded earlier than now leaves the clock");
        mesh.sleep(Duration::from_secs(2)).await;
        mesh.inspect("mesh-bus").await.unwrap();
        assert_eq!(mesh.now(), Duration::from_secs(3));
    }
}
