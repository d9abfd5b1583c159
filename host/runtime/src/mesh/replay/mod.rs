//! A mesh that answers from a recording: each call a plugin makes is compared with the next
//! call the recording holds and answered as it was answered then. A field failure recorded
//! with `--record` becomes a regression test, and a changed plugin shows the first call at
//! which it no longer does what the recorded one did.

mod recording;

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;

use super::{Command, ContainerState, Mesh, MeshError, Payload, Response};
use crate::events::{self, CallEvent, CallResult, CallValue, Divergence, ErrorKind, Op, ReplayInterruption, Request};
use recording::shape;
pub use recording::{CallFault, Interruption, LineFault, RECORDING_BYTES, Recording, RecordingError, read_recording};

/// A recorded call as a divergence names it.
fn shown(call: &CallEvent) -> String {
    shown_request(&call.module, &call.request)
}

/// A module's call as a divergence names it: `tell `push node-1` (postgres)`.
fn shown_request(module: &str, request: &Request) -> String {
    format!("{} `{}` ({module})", request.op.as_str(), request.words())
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
    /// WASI random draws the plugins made in the replay, in all and since the last call
    /// answered: with no seed recorded (a live run's), each drew what the recorded run did not.
    draws: u64,
    draws_since_answer: u64,
    pending: VecDeque<CallEvent>,
    answered: usize,
    divergence: Option<Divergence>,
    now: Duration,
    /// Where the recorded run was interrupted, past its last recorded call.
    interruption: Option<Interruption>,
    /// How many calls the recording holds.
    recorded: usize,
    /// Whether the plugins made a call past the recording's last, at its interruption.
    reached: bool,
    /// The recorded run's re-reads before its pushes not answered yet.
    rereads: VecDeque<events::RereadEvent>,
}

impl ReplayMesh {
    /// A mesh answering `calls`, its plugins' WASI random numbers drawn from `seed` (the
    /// recorded run's) so the replay draws what the recorded run drew.
    pub fn new(calls: Vec<CallEvent>, seed: Option<u64>) -> ReplayMesh {
        ReplayMesh {
            state: Mutex::new(Replay {
                seed,
                draws: 0,
                draws_since_answer: 0,
                recorded: calls.len(),
                pending: calls.into(),
                answered: 0,
                divergence: None,
                now: Duration::ZERO,
                interruption: None,
                reached: false,
                rereads: VecDeque::new(),
            }),
        }
    }

    /// The mesh answering its re-reads before each push with what the recorded run found
    /// then (`Recording::rereads`), so a replay stops where the recorded run stopped.
    pub fn with_rereads(self, rereads: Vec<events::RereadEvent>) -> ReplayMesh {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).rereads = rereads.into();
        self
    }

    /// The mesh for a recording whose run was interrupted: past the last recorded call, where
    /// the recorded run stopped, the plugins' calls are answered `unavailable`, as no mesh
    /// answered them then, and no longer compared; a call the recorded run was making when it
    /// stopped is compared first. The replay goes as far as the recorded run went.
    pub fn interrupted(self, interruption: Interruption) -> ReplayMesh {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).interruption = Some(interruption);
        self
    }

    /// Where the recorded run was interrupted, as the replay's verdict says it; `None` for a
    /// recording of a run that ended.
    pub fn interruption(&self) -> Option<ReplayInterruption> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.interruption.as_ref().map(|stop| ReplayInterruption {
            signal: stop.signal.clone(),
            calls: state.recorded as u64,
            during: stop.during.as_ref().map(|(module, request)| shown_request(module, request)),
        })
    }

    /// How many calls were answered from the recording.
    pub fn answered(&self) -> usize {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).answered
    }

    /// The first call where the plugin did not do what the recording holds, if any: a call
    /// that differs, a call beyond the recording, or recorded calls never made.
    pub fn divergence(&self) -> Option<Divergence> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let next = match (state.pending.front(), &state.interruption) {
            (Some(next), _) => format!("the recording goes on with {}", shown(next)),
            // The recorded run was making one more call when it stopped.
            (None, Some(Interruption { signal, during: Some((module, request)) })) if !state.reached => {
                format!("the recorded run was interrupted ({signal}) during {}", shown_request(module, request))
            }
            (None, _) => return state.divergence.clone(),
        };
        state.divergence.clone().or_else(|| {
            Some(Divergence {
                call: state.answered as u64 + 1,
                message: format!("{next}, and the plugin made no more calls{}", state.random_note()),
            })
        })
    }

    /// Answers a call from the recording, or notes where the plugin diverged. `made` is
    /// the call the plugin made; `matches` says whether a recorded call is the same.
    fn answer(&self, made: &Request, matches: impl Fn(&[String]) -> bool) -> Result<CallValue, MeshError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.divergence.is_some() {
            return Err(MeshError::Unavailable("the replay already diverged".into()));
        }
        let number = state.answered as u64 + 1;
        let next = state.pending.front().cloned();
        let (op, words) = (made.op.as_str(), made.words());
        let message = match next {
            Some(recorded) if recorded.request.op == made.op && matches(&recorded.request.args) => {
                state.pending.pop_front();
                state.answered += 1;
                state.draws_since_answer = 0;
                state.now = state.now.max(events::from_millis(recorded.at_ms));
                return match recorded.result {
                    CallResult::Ok(value) => Ok(value),
                    CallResult::Error(error) => Err(match error.kind {
                        ErrorKind::TimedOut => MeshError::TimedOut(error.message),
                        ErrorKind::Unavailable => MeshError::Unavailable(error.message),
                        ErrorKind::Failed | ErrorKind::Denied => MeshError::Failed(error.message),
                    }),
                };
            }
            Some(recorded) => format!("the recording has {}, the plugin made {op} `{words}`", shown(&recorded)),
            None => match (state.interruption.clone(), state.reached) {
                (None, _) => format!("the plugin made {op} `{words}` beyond the end of the recording"),
                // The call the recorded run was making when it stopped: the same, and the
                // replay stops there too; another is a divergence.
                (Some(Interruption { signal, during: Some((module, during)) }), false) => {
                    if during.op == made.op && matches(&during.args) {
                        state.reached = true;
                        return Err(MeshError::Unavailable(format!(
                            "the recorded run was interrupted ({signal}) during this call: the replay goes no further"
                        )));
                    }
                    format!(
                        "the recorded run was interrupted ({signal}) during {}, the plugin made {op} `{words}`",
                        shown_request(&module, &during)
                    )
                }
                (Some(Interruption { signal, .. }), _) => {
                    state.reached = true;
                    return Err(MeshError::Unavailable(format!(
                        "the recorded run was interrupted ({signal}) before this call: the replay goes no further"
                    )));
                }
            },
        };
        let divergence = Divergence { call: number, message: message + &state.random_note() };
        let error = MeshError::Failed(format!("replay diverged at {divergence}"));
        state.divergence = Some(divergence);
        Err(error)
    }
}

impl Replay {
    /// Where a random draw may have made the replay differ: the recorded run kept no seed (a
    /// live run draws from the system), so every draw in the replay is another number.
    fn random_note(&self) -> String {
        if self.seed.is_some() || self.draws == 0 {
            return String::new();
        }
        if self.draws_since_answer > 0 {
            format!(
                "; just before, the plugin drew WASI random numbers ({} draws since the last call that matched), \
                 and the recorded run's draws were not recorded (a live run draws from the system): a random draw \
                 made it differ here",
                self.draws_since_answer
            )
        } else {
            format!(
                "; the plugin drew WASI random numbers earlier ({} draws), which the recording does not hold (a live \
                 run draws from the system): the difference may come from them",
                self.draws
            )
        }
    }
}

/// The error for a recorded answer that does not fit its call, which [`read_recording`]
/// refuses before a replay starts.
fn misfit(op: Op, value: &CallValue) -> MeshError {
    MeshError::Failed(format!("the recording answers a {} with {}", op.as_str(), shape(value)))
}

#[async_trait]
impl Mesh for ReplayMesh {
    fn seed(&self) -> Option<u64> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).seed
    }

    fn random_drawn(&self, _module: &str) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.draws += 1;
        state.draws_since_answer += 1;
    }

    fn summary(&self) -> String {
        "a replay of a recording".into()
    }

    async fn carry(&self, name: &str, payload: Payload, remote: &str) -> Result<(), MeshError> {
        let carried = match &payload {
            Payload::Bytes(bytes) => events::Payload::Bytes { size: bytes.len() as u64 },
            Payload::Secret(_) => events::Payload::Secret,
        };
        let made = Request { op: Op::Carry, args: vec![name.into(), remote.into()], payload: Some(carried), cut: None };
        match self.answer(&made, |recorded| recorded.get(1).is_some_and(|r| r == remote))? {
            CallValue::Nothing => Ok(()),
            other => Err(misfit(Op::Carry, &other)),
        }
    }

    /// Each recorded tell's words are read into a command as the replay reaches it, and
    /// compared with the command told as a value.
    async fn tell(&self, command: &Command, _timeout: Duration) -> Result<String, MeshError> {
        let made = Request { op: Op::Tell, args: command.words(), payload: None, cut: None };
        match self.answer(&made, |recorded| Command::parse(recorded).as_ref() == Ok(command))? {
            CallValue::Output(output) => Ok(output),
            other => Err(misfit(Op::Tell, &other)),
        }
    }

    /// A recording answers only the plugins' calls, in order: the prediction asks nothing of it
    /// and rests on the plans alone.
    async fn view(&self, _node: &str, _containers: &[String]) -> crate::effect::MeshView {
        crate::effect::MeshView::default()
    }

    /// Nor is the recorded run's node asked about its images: the plugins' calls answer as
    /// they were recorded, whatever images that node had.
    async fn images(&self, _node: &str, _images: &[String]) -> Result<super::NodeImages, MeshError> {
        Ok(super::NodeImages::Present)
    }

    /// The recorded run's re-read before this push, as it found the mesh: a recording made
    /// before re-reads were recorded, or one with no re-read here, reads nothing.
    async fn reread(&self, ahead: &crate::effect::AheadOfPush) -> crate::effect::Reread {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let here = state.rereads.front().is_some_and(|r| r.module == ahead.module && r.command == ahead.command as u64);
        let Some(recorded) = here.then(|| state.rereads.pop_front()).flatten() else {
            return crate::effect::Reread::default();
        };
        state.now = state.now.max(events::from_millis(recorded.at_ms));
        crate::effect::Reread {
            looked: true,
            unseen: recorded.unseen,
            moved: recorded
                .moved
                .into_iter()
                .map(|m| crate::effect::Moved { what: m.what, field: m.field, predicted: m.predicted, found: m.found })
                .collect(),
        }
    }

    async fn inspect(&self, _node: &str, container: &str) -> Result<Option<ContainerState>, MeshError> {
        let made = Request { op: Op::Inspect, args: vec![container.into()], payload: None, cut: None };
        match self.answer(&made, |recorded| recorded == [container])? {
            CallValue::Container(c) => Ok(Some(ContainerState { image: c.image, running: c.running })),
            CallValue::Nothing => Ok(None),
            other => Err(misfit(Op::Inspect, &other)),
        }
    }

    async fn fetch(&self, url: &str) -> Result<Response, MeshError> {
        let made = Request { op: Op::Fetch, args: vec![url.into()], payload: None, cut: None };
        match self.answer(&made, |recorded| recorded == [url])? {
            CallValue::Response(r) => Ok(Response { status: r.status, body: r.body }),
            other => Err(misfit(Op::Fetch, &other)),
        }
    }

    fn now(&self) -> Duration {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).now
    }

    async fn sleep(&self, duration: Duration) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.now = state.now.saturating_add(duration);
    }

    /// A recording answers this replay alone: nothing else can change it, as though its lock
    /// were held.
    async fn lock(&self, _holder: &super::lock::LockHolder) -> Result<super::lock::Locking, MeshError> {
        Ok(super::lock::Locking::Taken { scope: super::lock::LockScope::Simulated })
    }

    async fn unlock(&self, _id: &str) -> Result<super::lock::Unlocked, MeshError> {
        Ok(super::lock::Unlocked::Released)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inspect_at(at_ms: f64) -> CallEvent {
        CallEvent {
            module: "nats".into(),
            phase: crate::model::Export::Check,
            request: Request { op: Op::Inspect, args: vec!["mesh-bus".into()], payload: None, cut: None },
            result: CallResult::Ok(CallValue::Nothing),
            at_ms,
            took_ms: 0.0,
        }
    }

    #[tokio::test]
    async fn the_clock_keeps_up_with_the_recorded_run() {
        // Three polls 2 s apart on a live mesh, each taking real time: the last returned at
        // 5.6 s, where two virtual sleeps alone would say 4 s.
        let mesh = ReplayMesh::new(vec![inspect_at(1_000.0), inspect_at(3_300.0), inspect_at(5_600.0)], None);
        mesh.inspect("node-1", "mesh-bus").await.unwrap();
        assert_eq!(mesh.now(), Duration::from_millis(1_000));
        mesh.sleep(Duration::from_secs(2)).await;
        mesh.inspect("node-1", "mesh-bus").await.unwrap();
        assert_eq!(mesh.now(), Duration::from_millis(3_300));
        mesh.sleep(Duration::from_secs(2)).await;
        mesh.inspect("node-1", "mesh-bus").await.unwrap();
        assert_eq!(mesh.now(), Duration::from_millis(5_600));
        assert_eq!(mesh.divergence(), None);
    }

    /// The command `text` says, as a plugin tells it.
    fn command(text: &str) -> Command {
        Command::parse(&text.split(' ').collect::<Vec<_>>()).unwrap()
    }

    fn tell(text: &str) -> Request {
        Request { op: Op::Tell, args: text.split(' ').map(String::from).collect(), payload: None, cut: None }
    }

    fn told(text: &str) -> CallEvent {
        CallEvent {
            module: "nats".into(),
            phase: crate::model::Export::Adopt,
            request: tell(text),
            result: CallResult::Ok(CallValue::Output("done".into())),
            at_ms: 0.0,
            took_ms: 0.0,
        }
    }

    fn interrupted(during: Option<&str>) -> Interruption {
        Interruption { signal: "SIGINT".into(), during: during.map(|text| ("nats".to_string(), tell(text))) }
    }

    const ADD: &str = "module add /nats-module.json";
    const BUILD: &str = "build https://git.example/c.git --path modules/nats --ref main --wait 1200s";

    #[tokio::test]
    async fn past_where_the_recorded_run_was_interrupted_calls_are_unavailable_and_no_divergence() {
        let mesh = ReplayMesh::new(vec![told(ADD)], None).interrupted(interrupted(None));
        mesh.tell(&command(ADD), Duration::ZERO).await.unwrap();
        for _ in 0..2 {
            let past = mesh.tell(&command("push node-1"), Duration::ZERO).await.unwrap_err();
            assert!(matches!(&past, MeshError::Unavailable(m) if m.contains("interrupted (SIGINT) before this call")));
        }
        assert_eq!(mesh.divergence(), None);
        assert_eq!(mesh.answered(), 1);
        let verdict = mesh.interruption().unwrap();
        assert_eq!((verdict.signal.as_str(), verdict.calls, verdict.during), ("SIGINT", 1, None));
    }

    #[tokio::test]
    async fn the_call_the_recorded_run_was_in_when_interrupted_is_held_to_it() {
        // The same call: the replay stops there.
        let mesh = ReplayMesh::new(vec![told(ADD)], None).interrupted(interrupted(Some(BUILD)));
        mesh.tell(&command(ADD), Duration::ZERO).await.unwrap();
        let stopped = mesh.tell(&command(BUILD), Duration::ZERO).await.unwrap_err();
        assert!(matches!(&stopped, MeshError::Unavailable(m) if m.contains("during this call")), "{stopped:?}");
        assert_eq!(mesh.divergence(), None);
        let during = mesh.interruption().unwrap().during;
        assert_eq!(during, Some(format!("tell `{BUILD}` (nats)")));

        // Another call there is a divergence, naming both.
        let elsewhere = "build https://elsewhere/c.git --path modules/nats --ref main --wait 1200s";
        let mesh = ReplayMesh::new(vec![told(ADD)], None).interrupted(interrupted(Some(BUILD)));
        mesh.tell(&command(ADD), Duration::ZERO).await.unwrap();
        mesh.tell(&command(elsewhere), Duration::ZERO).await.unwrap_err();
        let divergence = mesh.divergence().unwrap();
        assert_eq!(divergence.call, 2);
        assert_eq!(
            divergence.message,
            format!(
                "the recorded run was interrupted (SIGINT) during tell `{BUILD}` (nats), the plugin made tell \
                 `{elsewhere}`"
            )
        );

        // No call there is one too: the recorded run was making one more.
        let mesh = ReplayMesh::new(vec![told(ADD)], None).interrupted(interrupted(Some(BUILD)));
        mesh.tell(&command(ADD), Duration::ZERO).await.unwrap();
        let divergence = mesh.divergence().unwrap();
        assert!(divergence.message.ends_with("(nats), and the plugin made no more calls"), "{divergence:?}");
    }

    #[test]
    fn a_recorded_tell_that_reached_the_mesh_is_a_command() {
        use recording::check_call;
        let error = check_call(&told("module remove nats")).unwrap_err().to_string();
        assert!(error.contains("`module remove nats` that reached the mesh and is no command of it"), "{error}");
        let mut denied = told("module remove nats");
        denied.result =
            CallResult::Error(crate::events::CallError { kind: ErrorKind::Denied, message: "beyond".into() });
        check_call(&denied).unwrap();
    }

    #[tokio::test]
    async fn the_clock_never_goes_back_and_runs_on_sleeps() {
        let mesh = ReplayMesh::new(vec![inspect_at(500.0), inspect_at(0.0)], None);
        mesh.sleep(Duration::from_secs(1)).await;
        mesh.inspect("node-1", "mesh-bus").await.unwrap();
        assert_eq!(mesh.now(), Duration::from_secs(1), "a call recorded earlier than now leaves the clock");
        mesh.sleep(Duration::from_secs(2)).await;
        mesh.inspect("node-1", "mesh-bus").await.unwrap();
        assert_eq!(mesh.now(), Duration::from_secs(3));
    }
}
