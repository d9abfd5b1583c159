//! The contract's imports, served to a plugin: every call is checked against the grants,
//! bounded by the limits, scrubbed of secret values, recorded in the transcript and carried
//! to the mesh. Written once, in the host's own types, for every contract version: each
//! version's module in [`crate::contract`] only converts its arguments and answers.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use wasmtime::component::Resource;

use crate::events::{
    ArgsCut, CallError, CallValue, ContainerValue, ErrorKind, Op, Payload as CarriedRecord, Request, ResponseValue,
};
use crate::mesh::{ContainerState, MeshError, Payload, Response, SecretValue};
use crate::model::stop::{StopKind, StopReason};
use crate::model::{Export, PluginCommand};
use crate::record::transcript::Entry;
use crate::sandbox::denial::{Cap, Denial};
use crate::sandbox::grants::{Call, quoted};
use crate::sandbox::limits::cut_to;
use crate::sandbox::state::RunState;
use mesh_adopt_manifest::command::Command;

/// A host call's "no", in the host's words: each contract version turns it into its own
/// `host-error`.
pub(crate) type HostError = CallError;

fn denied(denial: Denial) -> HostError {
    CallError { kind: ErrorKind::Denied, message: denial.to_string() }
}

fn unavailable(message: impl Into<String>) -> HostError {
    CallError { kind: ErrorKind::Unavailable, message: message.into() }
}

impl From<MeshError> for CallError {
    fn from(error: MeshError) -> Self {
        let (kind, message) = match error {
            MeshError::Failed(m) => (ErrorKind::Failed, m),
            MeshError::TimedOut(m) => (ErrorKind::TimedOut, m),
            MeshError::Unavailable(m) => (ErrorKind::Unavailable, m),
        };
        CallError { kind, message }
    }
}

/// What a plugin carries: bytes it has, or a secret it holds a handle to.
pub(crate) enum Carried {
    /// Bytes of its own, such as its module's manifest.
    Bytes(Vec<u8>),
    /// A genesis credential, by its handle.
    Secret(Resource<SecretValue>),
}

/// The most bytes of a tell's arguments kept when the tell is too large to keep whole.
const KEPT_ARGS_BYTES: usize = 200;
/// The most arguments kept of such a tell: a flood of empty ones costs no bytes.
const KEPT_ARGS: usize = 16;

/// The first words of a tell too large to keep, up to [`KEPT_ARGS`] of them and
/// [`KEPT_ARGS_BYTES`] in all (the last one kept cut), and how large the tell was.
fn kept_args(command: &PluginCommand) -> (Vec<String>, ArgsCut) {
    let made;
    let words = match command {
        PluginCommand::Unknown { words, .. } => words,
        PluginCommand::Known(command) => {
            made = command.words();
            &made
        }
    };
    let mut kept = Vec::new();
    let mut room = KEPT_ARGS_BYTES;
    for arg in words {
        let mut arg = arg.clone();
        let cut = cut_to(&mut arg, room);
        room -= arg.len();
        kept.push(arg);
        if cut || room == 0 || kept.len() == KEPT_ARGS {
            break;
        }
    }
    let (count, bytes) = command.size();
    (kept, ArgsCut { words: count as u64, bytes: bytes as u64 })
}

impl RunState {
    /// `text` with secret values replaced by their names; a value found is recorded as shown
    /// at `place`, which fails the run.
    pub(crate) fn scrub(&mut self, text: String, place: impl FnOnce() -> String) -> (String, bool) {
        let redacted = self.env.credentials.redact(text);
        self.shown_at(redacted, place)
    }

    /// [`RunState::scrub`] for a text cut at a limit, whose end may be what is left of a value
    /// ([`crate::Credentials::redact_cut`]).
    pub(crate) fn scrub_cut(&mut self, text: String, place: impl FnOnce() -> String) -> (String, bool) {
        let redacted = self.env.credentials.redact_cut(text);
        self.shown_at(redacted, place)
    }

    /// Records a value found in a text as shown at `place`; the text, and whether one was.
    fn shown_at(
        &mut self,
        (scrubbed, found): (String, Option<String>),
        place: impl FnOnce() -> String,
    ) -> (String, bool) {
        let leaked = found.is_some();
        if let Some(secret) = found {
            self.env.transcript.record(Entry::SecretShown { module: self.env.module.clone(), secret, place: place() });
        }
        (scrubbed, leaked)
    }

    /// A call's arguments with secret values replaced by their names, and whether one was
    /// found (which denies the call). The words they make together are searched, once, so a
    /// value split across two arguments is caught too; where one is found each argument is
    /// redacted, and if the value spans arguments only the joined, redacted words are kept.
    /// The words of a tell too large to keep end where they were cut, and their last may be
    /// the beginning of a value.
    fn scrub_request(&mut self, request: Request) -> (Request, bool) {
        let place = || format!("the arguments of its {} call", request.op.as_str());
        let cut = request.cut.is_some();
        let joined = request.args.join(" ");
        let (joined, leaked) = if cut { self.scrub_cut(joined, place) } else { self.scrub(joined, place) };
        if !leaked {
            return (request, false);
        }
        let credentials = &self.env.credentials;
        let last = request.args.len().saturating_sub(1);
        let args: Vec<String> = request
            .args
            .iter()
            .enumerate()
            .map(|(i, arg)| if cut && i == last { credentials.redact_cut(arg.clone()) } else { credentials.redact(arg.clone()) }.0)
            .collect();
        let args = if credentials.redact(args.join(" ")).1.is_some() { vec![joined] } else { args };
        (Request { args, ..request }, true)
    }

    /// Runs one host call: the grants first, then the call itself, timed so the guest-time
    /// deadline does not count the wait, then the record. A call that ends past the export's
    /// wall deadline does not return to the plugin: the plugin is stopped, naming the call.
    ///
    /// `oversized` is a size limit the call's arguments broke, checked before anything else.
    async fn serve<T>(
        &mut self,
        grant: Call<'_>,
        request: Request,
        oversized: Option<Denial>,
        call: impl AsyncFnOnce(&mut RunState) -> Result<T, HostError>,
    ) -> Result<T, HostError>
    where
        T: Recorded,
    {
        // The executor has a turn at every host call, on every mesh: a run whose future is
        // dropped stops here, before the call reaches the mesh.
        if self.env.turns_at_calls {
            crate::wait::yield_now().await;
        }
        let entered = Instant::now();
        let timeout = self.pending_timeout.take();
        // Once a cap is reached, further calls are denied without being kept: the cap bounds
        // what the host holds until the sandbox stops the plugin at its next step.
        if let Some(cap) = self.cap_reached {
            return Err(denied(Denial::Cap(cap)));
        }
        let kind = request.op;
        let (request, leaked) = self.scrub_request(request);
        let detail = request.words();
        let outcome = if let Some(cap) = self.reach_caps() {
            Err(denied(Denial::Cap(cap)))
        } else if let Some(why) = oversized {
            Err(denied(why))
        } else if let Some(broken) = self.env.mesh.lock_broken() {
            // The mesh's own check refused a command of this run's: nothing more goes out.
            Err(denied(Denial::LockBroken(broken)))
        } else if leaked {
            Err(denied(Denial::CarriesSecret))
        } else {
            let allowed = self.env.permissions.allow(self.phase, grant);
            let cleared =
                allowed.and_then(|()| self.uses_its_own_carries(grant)).and_then(|()| self.follow_plan(grant));
            // The last check, once every other passed: the mesh read again before a push.
            let cleared = match cleared {
                Ok(()) => self.before_push(grant).await,
                Err(why) => Err(why),
            };
            match cleared {
                Err(why) => {
                    Err(CallError { kind: ErrorKind::Denied, message: self.env.credentials.redact(why.to_string()).0 })
                }
                Ok(()) => {
                    self.deadline.in_call(Some(format!("`{} {detail}`", kind.as_str())));
                    if self.env.transcript.is_observed() {
                        self.env.transcript.under_way(Entry::Started {
                            module: self.env.module.clone(),
                            request: request.clone(),
                            at: self.env.mesh.now(),
                            timeout,
                        });
                    }
                    let answer = call(self).await;
                    self.deadline.in_call(None);
                    // What goes back into the plugin is scrubbed too: a secret's value must not
                    // come back to it as a tell's output or a fetched body. A mesh bounds what it
                    // keeps of a command's output (a live mesh's `output_bytes`), so a text of the
                    // mesh's may end with what is left of a value it cut: that goes too.
                    match answer {
                        Ok(value) => Ok(value.scrubbed(&self.env.credentials)),
                        Err(error) => {
                            Err(CallError { message: self.env.credentials.redact_cut(error.message).0, ..error })
                        }
                    }
                }
            }
        };
        let took = entered.elapsed();
        self.last_call.clear();
        let _ = write!(self.last_call, "{} {detail}", kind.as_str());
        let past_deadline = self.deadline.passed();
        let recorded = match &outcome {
            Ok(value) => Ok(value.recorded()),
            Err(e) => Err(CallError { message: self.env.credentials.redact_cut(e.message.clone()).0, ..e.clone() }),
        };
        let command = match grant {
            Call::Tell { command } => command.known().cloned(),
            _ => None,
        };
        self.env.transcript.record(Entry::Call {
            module: self.env.module.clone(),
            phase: self.phase,
            request,
            command,
            outcome: recorded,
            at: self.env.mesh.now(),
            took,
        });
        // Scrubbing and recording the call are the host's work, not the plugin's: on a busy
        // machine they must not use up its guest time.
        self.in_host += entered.elapsed();
        if past_deadline {
            let what = format!("`{}`", self.last_call);
            match self.deadline.stop(&what).await {}
        }
        outcome
    }
}

impl RunState {
    /// Counts a host call against the caps and says which one is reached, if any: from then
    /// on every call is denied and the sandbox stops the plugin at its next step.
    fn reach_caps(&mut self) -> Option<Cap> {
        self.calls += 1;
        if self.cap_reached.is_none() {
            let limits = &self.limits;
            if self.calls > limits.host_calls {
                self.cap_reached = Some(Cap::HostCalls(limits.host_calls));
            } else if self.env.transcript.text_bytes() > limits.record_bytes {
                self.cap_reached = Some(Cap::RecordBytes(limits.record_bytes));
            }
        }
        self.cap_reached
    }

    /// A module accepts only a secret it carried itself, and registers only the manifest it
    /// carried itself, in this call: the control plane's paths are shared by every module and
    /// outlive a run, so without this one module could hand its credential to another that was
    /// never granted it, or register what an earlier run left there.
    fn uses_its_own_carries(&self, grant: Call<'_>) -> Result<(), Denial> {
        let Call::Tell { command: told } = grant else { return Ok(()) };
        match told.known() {
            Some(Command::SecretAccept { from, .. }) if !self.carried_secrets.contains(from) => {
                Err(Denial::AcceptsUncarried { told: quoted(told), from: from.clone() })
            }
            // Likewise a registration: what the control plane holds at that path may be what an
            // earlier run left, which this run never checked.
            Some(Command::ModuleAdd { remote }) if !self.carried_manifests.contains(remote) => {
                Err(Denial::RegistersUncarried { told: quoted(told), remote: remote.clone() })
            }
            _ => Ok(()),
        }
    }

    /// During `adopt`, just before a `tell push` goes out, whatever the run does then (it reads
    /// the mesh again and holds it to the prediction): its `Err` keeps the push from the mesh.
    async fn before_push(&mut self, grant: Call<'_>) -> Result<(), Denial> {
        let (Export::Adopt, Call::Tell { command }) = (self.phase, grant) else { return Ok(()) };
        if !matches!(command.known(), Some(Command::Push { .. })) {
            return Ok(());
        }
        let Some((guard, told)) = self.plan.as_ref().and_then(|p| Some((p.before_push.clone()?, p.told))) else {
            return Ok(());
        };
        self.deadline.in_call(Some("reading the mesh again before `tell push`".into()));
        let gate = guard.before_push(&self.env.module, told.saturating_sub(1)).await;
        self.deadline.in_call(None);
        gate.map_err(|found| Denial::MeshMoved { found })
    }

    /// During `adopt`, a tell must be the plan's next command: the plan an operator reviewed
    /// is the sequence that runs. The command is counted as told once it may go through,
    /// whatever the mesh answers, so a failure the rules allow (no account) moves on.
    fn follow_plan(&mut self, grant: Call<'_>) -> Result<(), Denial> {
        if let (Export::Adopt, Call::Carry { remote, .. }, Some(plan)) = (self.phase, grant, self.plan.as_ref()) {
            return carry_in_plan(remote, &plan.commands);
        }
        let (Export::Adopt, Call::Tell { command }, Some(plan)) = (self.phase, grant, self.plan.as_mut()) else {
            return Ok(());
        };
        match plan.commands.get(plan.told) {
            Some(next) if next == command => {
                plan.told += 1;
                Ok(())
            }
            Some(next) => Err(Denial::NotNext {
                told: quoted(command),
                next: quoted(next),
                number: plan.told + 1,
                of: plan.commands.len(),
            }),
            None => Err(Denial::BeyondPlan { told: quoted(command), of: plan.commands.len() }),
        }
    }
}

/// During `adopt`, a carry must be one the plan's commands use: to the path a `module add`
/// registers or a `secret accept` takes from. Anything else would put in the control plane
/// what no reviewed command accounts for.
fn carry_in_plan(remote: &str, commands: &[PluginCommand]) -> Result<(), Denial> {
    let used = commands.iter().any(|planned| match planned.known() {
        Some(Command::ModuleAdd { remote: to }) | Some(Command::SecretAccept { from: to, .. }) => to == remote,
        _ => false,
    });
    if used {
        return Ok(());
    }
    Err(Denial::CarryNotInPlan { remote: remote.to_string() })
}

/// How a host call's returned value is kept in the transcript and recordings, and scrubbed
/// of secret values before it goes back into the plugin.
pub(crate) trait Recorded: Sized {
    fn recorded(&self) -> CallValue;

    /// The value with every secret value handed out replaced by its name.
    fn scrubbed(self, _credentials: &crate::catalogue::credentials::Credentials) -> Self {
        self
    }
}

impl Recorded for () {
    fn recorded(&self) -> CallValue {
        CallValue::Nothing
    }
}

impl Recorded for String {
    fn recorded(&self) -> CallValue {
        CallValue::Output(self.clone())
    }

    /// A tell's output, which the mesh may have cut at its bound: what is left of a value at
    /// its end goes with the values.
    fn scrubbed(self, credentials: &crate::catalogue::credentials::Credentials) -> Self {
        credentials.redact_cut(self).0
    }
}

impl Recorded for Resource<SecretValue> {
    /// A handle the plugin can carry but never read: nothing of it is kept.
    fn recorded(&self) -> CallValue {
        CallValue::Nothing
    }
}

impl Recorded for Option<ContainerState> {
    fn recorded(&self) -> CallValue {
        match self {
            Some(c) => CallValue::Container(ContainerValue { image: c.image.clone(), running: c.running }),
            None => CallValue::Nothing,
        }
    }

    fn scrubbed(self, credentials: &crate::catalogue::credentials::Credentials) -> Self {
        self.map(|c| ContainerState { image: credentials.redact(c.image).0, ..c })
    }
}

impl Recorded for Response {
    fn recorded(&self) -> CallValue {
        CallValue::Response(ResponseValue { status: self.status, body: self.body.clone() })
    }

    fn scrubbed(self, credentials: &crate::catalogue::credentials::Credentials) -> Self {
        Response { body: credentials.redact(self.body).0, ..self }
    }
}

/// The request of a call with one argument.
fn one(op: Op, arg: &str) -> Request {
    Request { op, args: vec![arg.to_string()], payload: None, cut: None }
}

impl RunState {
    /// A secret's name, for the plugin's messages: never its value.
    pub(crate) fn secret_name(&mut self, secret: Resource<SecretValue>) -> String {
        self.table().get(&secret).map(|s| s.name.clone()).unwrap_or_default()
    }

    /// Forgets a secret handle the plugin dropped.
    pub(crate) fn drop_secret(&mut self, secret: Resource<SecretValue>) -> wasmtime::Result<()> {
        self.table().delete(secret)?;
        Ok(())
    }

    /// `credential`: a handle to a genesis credential the grants allow.
    pub(crate) async fn serve_credential(&mut self, name: String) -> Result<Resource<SecretValue>, HostError> {
        self.serve(Call::Credential { name: &name }, one(Op::Credential, &name), None, async |state| {
            let value = state.env.credentials.read(&name).map_err(|e| unavailable(e.to_string()))?;
            state.table().push(value).map_err(|e| unavailable(format!("no room for the credential: {e}")))
        })
        .await
    }

    /// `carry`: bytes or a secret into the control plane at `remote`.
    pub(crate) async fn serve_carry(
        &mut self,
        name: String,
        payload: Carried,
        remote: String,
    ) -> Result<(), HostError> {
        let (payload, carried) = match payload {
            Carried::Bytes(bytes) => {
                let carried = CarriedRecord::Bytes { size: bytes.len() as u64 };
                (Ok(Payload::Bytes(bytes)), carried)
            }
            Carried::Secret(handle) => {
                let secret = self.table().get(&handle).cloned();
                let payload =
                    secret.map(Payload::Secret).map_err(|e| denied(Denial::NotASecret { table: e.to_string() }));
                (payload, CarriedRecord::Secret)
            }
        };
        let request =
            Request { op: Op::Carry, args: vec![name.clone(), remote.clone()], payload: Some(carried), cut: None };
        // The grant decides on the bytes themselves (only the catalogue's manifest may be
        // registered), so it reads them before they move to the mesh.
        let bytes = match &payload {
            Ok(Payload::Bytes(bytes)) => Some(bytes.clone()),
            _ => None,
        };
        let credential = match &payload {
            Ok(Payload::Secret(secret)) => Some(secret.name.clone()),
            _ => None,
        };
        let grant = Call::Carry { remote: &remote, bytes: bytes.as_deref(), credential: credential.as_deref() };
        let carried = self
            .serve(grant, request, None, async |state| Ok(state.env.mesh.carry(&name, payload?, &remote).await?))
            .await;
        if carried.is_ok() {
            match bytes {
                None => self.carried_secrets.insert(remote),
                Some(_) => self.carried_manifests.insert(remote),
            };
        }
        carried
    }

    /// `tell`: one control-plane command, as the contract's boundary read it.
    pub(crate) async fn serve_tell(&mut self, told: PluginCommand, timeout_seconds: u32) -> Result<String, HostError> {
        let (count, size) = told.size();
        let (limit, most) = (self.limits.tell_args_bytes, self.limits.tell_args_count);
        let oversized = if size > limit {
            Some(Denial::TellBytes { size, most: limit })
        } else if count > most {
            Some(Denial::TellCount { count, most })
        } else {
            None
        };
        // The record keeps the command's words; a tell too large to keep whole is kept as its
        // first words and its size.
        let request = if oversized.is_some() {
            let (kept, cut) = kept_args(&told);
            Request { op: Op::Tell, args: kept, payload: None, cut: Some(cut) }
        } else {
            Request { op: Op::Tell, args: told.words(), payload: None, cut: None }
        };
        // What the plugin asks for, lowered to the host's ceiling and to what is left of the
        // export's wall deadline.
        let timeout = Duration::from_secs(timeout_seconds.into())
            .min(self.limits.tell_timeout_ceiling)
            .min(self.deadline.remaining());
        self.pending_timeout = Some(timeout);
        self.serve(Call::Tell { command: &told }, request, oversized, async |state| match &told {
            PluginCommand::Known(command) => Ok(state.env.mesh.tell(command, timeout).await?),
            // The grants deny every tell that is no command before it gets here.
            PluginCommand::Unknown { why, .. } => Err(denied(Denial::BeyondSequence {
                told: quoted(&told),
                why: crate::sandbox::denial::Beyond::NotACommand(why.clone()),
                module: state.env.module.clone(),
                node: state.env.permissions.node.clone(),
                reference: String::new(),
                repository: None,
            })),
        })
        .await
    }

    /// `inspect`: what a container the grants name is running.
    pub(crate) async fn serve_inspect(&mut self, container: String) -> Result<Option<ContainerState>, HostError> {
        self.serve(Call::Inspect { container: &container }, one(Op::Inspect, &container), None, async |state| {
            Ok(state.env.mesh.inspect(&state.env.permissions.node, &container).await?)
        })
        .await
    }

    /// `fetch`: an HTTP GET of a URL the grants allow, its body cut to the limit.
    pub(crate) async fn serve_fetch(&mut self, url: String) -> Result<Response, HostError> {
        self.serve(Call::Fetch { url: &url }, one(Op::Fetch, &url), None, async |state| {
            let mut response = state.env.mesh.fetch(&url).await?;
            if cut_to(&mut response.body, state.limits.fetch_body_bytes) {
                response.body = state.env.credentials.redact_cut(response.body).0;
            }
            Ok(response)
        })
        .await
    }

    /// `say`: one line for the operator; a flood stops the plugin.
    pub(crate) fn serve_say(&mut self, line: String) -> wasmtime::Result<()> {
        // Showing the line is the host's time, not the plugin's.
        let entered = Instant::now();
        let said = self.say_line(line);
        self.in_host += entered.elapsed();
        said
    }
}

impl RunState {
    fn say_line(&mut self, line: String) -> wasmtime::Result<()> {
        let module = self.env.module.clone();
        self.said += 1;
        if self.env.transcript.text_bytes() > self.limits.record_bytes {
            return Err(StopReason::error(
                StopKind::Limit,
                format!(
                    "its run recorded more than {} bytes of calls and lines (limits.record_bytes)",
                    self.limits.record_bytes
                ),
            ));
        }
        if self.said > self.limits.say_lines {
            let dropped_after = self.limits.say_lines;
            self.env.transcript.record(Entry::SayCut { module, dropped_after });
            return Err(StopReason::error(
                StopKind::Limit,
                format!("it said more than {dropped_after} lines (limits.say_lines); the rest were dropped"),
            ));
        }
        let mut line = line;
        let place = || "a say line".to_string();
        let (line, _) = if cut_to(&mut line, self.limits.say_line_bytes) {
            let (mut line, leaked) = self.scrub_cut(line, place);
            line.push_str(" … (cut)");
            (line, leaked)
        } else {
            self.scrub(line, place)
        };
        let at = self.env.mesh.now();
        self.env.transcript.record(Entry::Say { module, line, at });
        Ok(())
    }
}

impl RunState {
    /// `now`: milliseconds since the run began, on the mesh's clock.
    pub(crate) fn serve_now(&mut self) -> u64 {
        u64::try_from(self.env.mesh.now().as_millis()).unwrap_or(u64::MAX)
    }

    /// `sleep`: waits on the mesh's clock, never past the export's wall deadline: a sleep
    /// that would end after it stops the plugin there.
    pub(crate) async fn serve_sleep(&mut self, millis: u64) {
        // A sleep is a host call the executor has a turn at too (the simulator's passes at once).
        if self.env.turns_at_calls {
            crate::wait::yield_now().await;
        }
        let entered = Instant::now();
        let what = format!("`clock.sleep` of {millis} ms");
        self.deadline.clone().wait(&what, Duration::from_millis(millis)).await;
        self.in_host += entered.elapsed();
    }
}
