//! The events of a run as programs read them: the lines of `--json` on stdout and of a
//! `--record` file. Both streams are the same: one JSON object a line, each an [`Event`]
//! told apart by its `event` field, the first always a [`RunEvent`] carrying the
//! [`SCHEMA`] version the rest is written in. Every line either stream writes is one of
//! these types serialised, and `replay` reads a recording back through them, so what an
//! installer reads, what is recorded and what is replayed cannot drift apart.
//!
//! `docs/events.md` describes every event and field for a reader, with the version policy;
//! `docs/events.schema.json` describes every line as JSON Schema.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::model::rule::Rule;
pub use crate::model::stop::StopKind;
pub use crate::model::{Export, InputWord};

/// The version of the stream's shape that this program writes and reads. It goes up
/// whenever a line this program writes would not be valid against the previous version's
/// `docs/events.schema.json`, or a field's meaning changes, so that a reader which knows
/// version N can rely on every line of a version-N stream.
pub const SCHEMA: u32 = 6;

/// The stream's JSON Schema (draft 2020-12), made from the types that write it: what
/// `docs/events.schema.json` holds, for a reader in any language to validate a line with.
/// A test holds the file to it; `just schema` writes it again.
pub fn json_schema() -> serde_json::Value {
    // The schema of what the host writes: a field is required unless the host may leave it
    // out, and one it writes as `null` is required and nullable.
    let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
    let mut schema = serde_json::to_value(generator.into_root_schema_for::<Event>()).expect("a JSON Schema serialises");
    answers_typed_by_import(&mut schema);
    outcomes_hold_together(&mut schema);
    changes_closed(&mut schema);
    lines_may_be_cut(&mut schema);
    if let Some(object) = schema.as_object_mut() {
        object.insert("title".into(), format!("mesh-adopt event, schema {SCHEMA}").into());
        object.insert(
            "description".into(),
            format!(
                "One line of `mesh-adopt --json` output or of a `--record` file: a JSON object whose `event` field \
                 names its kind. The first line of every stream is a `run` event with `schema` {SCHEMA}. \
                 docs/events.md describes every event and field. Generated from the types that write the \
                 stream (`just schema`)."
            )
            .into(),
        );
    }
    schema
}

/// Holds an `outcome` event to what its `outcome` says, which the types alone cannot: it
/// succeeded exactly when it is `ready` or `adopted`, and a module the sandbox stopped while it
/// was checked (`unusable`, `input` `stopped`) says why in `stop`.
fn outcomes_hold_together(schema: &mut serde_json::Value) {
    use serde_json::json;
    let rules = json!([
        {
            "if": {"properties": {"outcome": {"enum": ["ready", "adopted"]}}, "required": ["outcome"]},
            "then": {"properties": {"succeeded": {"const": true}}},
            "else": {"properties": {"succeeded": {"const": false}}}
        },
        {
            "if": {"properties": {"outcome": {"const": "unusable"}}, "required": ["outcome"]},
            "then": {
                "if": {"properties": {"input": {"const": "stopped"}}, "required": ["input"]},
                "then": {"required": ["stop"], "properties": {"stop": {"not": {"type": "null"}}}},
                "else": {"properties": {"stop": false}}
            }
        },
        {
            "if": {"properties": {"succeeded": {"const": true}}, "required": ["succeeded"]},
            "then": {"properties": {"secrets_left": false}}
        }
    ]);
    let outcome = schema["oneOf"]
        .as_array_mut()
        .and_then(|kinds| kinds.iter_mut().find(|kind| kind["properties"]["event"]["const"] == "outcome"))
        .expect("the schema has an `outcome` event");
    outcome["allOf"] = rules;
    // An `end` says why exactly when its exit is not 0.
    let end = schema["oneOf"]
        .as_array_mut()
        .and_then(|kinds| kinds.iter_mut().find(|kind| kind["properties"]["event"]["const"] == "end"))
        .expect("the schema has an `end` event");
    end["allOf"] = json!([{
        "if": {"properties": {"exit": {"const": 0}}, "required": ["exit"]},
        "then": {"properties": {"code": {"type": "null"}, "remedy": {"type": "null"}}},
        "else": {"properties": {"code": {"not": {"type": "null"}}}}
    }]);
}

/// The field a `--json` line cut to its bound carries: `{"bytes_left_out": N, "at": […]}`.
pub const LINE_CUT: &str = "line_cut";

/// Lets every kind of event carry the mark of a `--json` line cut to its bound
/// ([`crate::record::line_bound`]): the stream's writer adds it to a line, not the event's type.
fn lines_may_be_cut(schema: &mut serde_json::Value) {
    use serde_json::json;
    schema["$defs"]["LineCut"] = json!({
        "description": "What a `--json` line cut to 65,536 bytes left out: how many bytes, and where (JSON \
                        Pointers to the texts cut, each ending with `…[cut]`). A `--record` file is never cut.",
        "type": "object",
        "properties": {
            "bytes_left_out": {"type": "integer", "minimum": 1},
            "at": {"type": "array", "items": {"type": "string", "pattern": "^(/([^/~]|~[01])*)*$"}, "minItems": 1}
        },
        "required": ["bytes_left_out", "at"],
        "additionalProperties": false
    });
    for kind in schema["oneOf"].as_array_mut().into_iter().flatten() {
        kind["properties"][LINE_CUT] = json!({"$ref": "#/$defs/LineCut"});
    }
}

/// Closes each kind of container change as every other object of the stream is closed: the
/// type is flattened into a push's containers (closed there by the push's record), so serde's
/// attribute cannot close it where a summary lists it alone.
fn changes_closed(schema: &mut serde_json::Value) {
    for kind in schema["$defs"]["Change"]["oneOf"].as_array_mut().into_iter().flatten() {
        kind["additionalProperties"] = false.into();
    }
}

/// Holds a `call` event's answer to its import's type ([`CallValue::fits`]), which the types
/// alone cannot say: an `inspect` answered with a tell's output is not a valid line.
fn answers_typed_by_import(schema: &mut serde_json::Value) {
    use serde_json::json;
    let values = [
        (CallValue::Output(String::new()), json!({"type": "string"})),
        (
            CallValue::Container(ContainerValue { image: String::new(), running: false }),
            json!({"$ref": "#/$defs/ContainerValue"}),
        ),
        (
            CallValue::Response(ResponseValue { status: 0, body: String::new() }),
            json!({"$ref": "#/$defs/ResponseValue"}),
        ),
        (CallValue::Nothing, json!({"type": "null"})),
    ];
    let rules: Vec<serde_json::Value> = [Op::Carry, Op::Tell, Op::Credential, Op::Inspect, Op::Fetch]
        .into_iter()
        .map(|op| {
            let fitting: Vec<&serde_json::Value> =
                values.iter().filter(|(value, _)| value.fits(op)).map(|(_, schema)| schema).collect();
            json!({
                "if": {"properties": {"op": {"const": op}}},
                "then": {"properties": {"result": {"anyOf": [
                    {"required": ["error"]},
                    {"properties": {"ok": {"anyOf": fitting}}},
                ]}}},
            })
        })
        .collect();
    let calls =
        schema["oneOf"].as_array_mut().into_iter().flatten().filter(|s| s["properties"]["event"]["const"] == "call");
    for call in calls {
        call["allOf"] = serde_json::Value::Array(rules.clone());
    }
}

/// One line of `--json` or `--record`. The `event` field names the kind, so a reader can
/// dispatch on it without guessing from the fields present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The stream's first line: its schema version and what the run was asked to do.
    Run(RunEvent),
    /// The mesh's lock: taken by this run, held by another, waited for, released, or failed.
    Lock(LockEvent),
    /// A module's plugin is loaded: the code it runs as, and whether this run compiled it.
    Loaded(LoadedEvent),
    /// The plan a module's `check` made in preflight, which its `adopt` is held to.
    Plan(PlanEvent),
    /// What preflight predicts the phase's pushes will do to the mesh, push by push.
    Effect(EffectEvent),
    /// A line a plugin said for the operator.
    Say(SayEvent),
    /// A plugin ran out of say lines; what it said after was dropped.
    SayCut(SayCutEvent),
    /// A secret's value was caught on its way out, redacted, and fails the run.
    SecretShown(SecretShownEvent),
    /// A host call is under way, so a reader can show a long wait while it lasts.
    Started(StartedEvent),
    /// A host call finished, with the host's answer.
    Call(CallEvent),
    /// Just before a push, the host read the mesh again and held it to the prediction.
    Reread(RereadEvent),
    /// The host began a read of the mesh of its own (not a plugin's call): what a run waits
    /// on before its next event, shown while it runs.
    Reading(ReadingEvent),
    /// How one module's turn ended.
    Outcome(OutcomeEvent),
    /// The whole run: every module's outcome word, the container changes, the invariants.
    Summary(SummaryEvent),
    /// `check --out` saved the plans to a file.
    PlanSaved(PlanSavedEvent),
    /// A replay's verdict: whether the plugins made every recorded call.
    Replay(ReplayEvent),
    /// The last line of a finished command, with its exit status.
    End(EndEvent),
    /// The last line of a command stopped by a signal, with what had been done.
    Interrupted(InterruptedEvent),
    /// The last line of a command that stopped on an error (exit 2): its input could not be
    /// used, or its output not written. When the command could not start, the only line.
    Error(ErrorEvent),
}

/// Which command wrote the stream, so a reader knows what the rest of it can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// `mesh-adopt check`: plans only, nothing changed.
    Check,
    /// `mesh-adopt run`: preflight, then adopt.
    Run,
    /// `mesh-adopt replay`: a recording's calls answered again.
    Replay,
}

/// The first line of every stream: the schema version, then what a replay needs to run as
/// this run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RunEvent {
    /// The stream's [`SCHEMA`] version; a reader refuses one it does not know.
    #[schemars(extend("const" = SCHEMA))]
    pub schema: u32,
    /// The version of mesh-adopt that wrote the stream, for a bug report.
    pub mesh_adopt: String,
    /// The command that wrote the stream.
    pub command: Command,
    /// The modules asked for, in the order they are checked and adopted.
    pub modules: Vec<String>,
    /// The operator's options the plugins receive.
    pub options: RunOptionsRecord,
    /// The mesh backend the run acts on, in words.
    pub mesh: String,
    /// The seed the plugins' WASI random numbers are drawn from, so a replay draws the same;
    /// `null` when the backend draws real randomness it cannot repeat.
    pub seed: Option<u64>,
    /// Where the run read its modules, foundation and credentials, so a replay reads them
    /// again from any directory; `null` when its catalogue was held in memory.
    pub catalogue: Option<CatalogueRecord>,
}

/// The catalogue a run read, as a stream keeps it: absolute paths, so a replay started
/// anywhere finds what the run had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CatalogueRecord {
    /// The catalogue's directory: `modules/<name>/manifest.json` with `adopt.wasm` beside it.
    pub dir: String,
    /// The foundation bundle's file; `null` when the run's bundle was not read from a file
    /// (or its path is not UTF-8): a replay then reads the catalogue's `foundation.json`.
    pub foundation: Option<String>,
    /// The genesis credentials' directory; `null` when the run was given none, or held them
    /// in memory (or its path is not UTF-8): a replay then reads the catalogue's
    /// `genesis/credentials`.
    pub credentials: Option<String>,
}

/// The operator's options as a stream keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RunOptionsRecord {
    /// The node modules are assigned to.
    pub node: String,
    /// Where a builder clones the catalogue from; `null` when none was given.
    pub catalog_source: Option<CatalogSourceRecord>,
    /// How long a plugin waits for the node after a push, in seconds.
    pub wait_s: u64,
}

/// A catalogue source: a repository and the ref built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CatalogSourceRecord {
    /// The repository a builder clones.
    pub repository: String,
    /// The ref built from; `null` means the builder's default (`main`).
    #[serde(rename = "ref")]
    pub reference: Option<String>,
}

/// A module's plugin loaded for the run: which code it runs as, made by which compiler, and
/// whether the run waited for that compile (a first run does; a later one takes the code
/// from the compile cache).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoadedEvent {
    /// The module whose plugin it is.
    pub module: String,
    /// The plugin's sha256, hex.
    pub sha256: String,
    /// The kind of native code it runs as: `baseline` (quick to compile, slower to run) or
    /// `optimised`.
    pub code: crate::model::code::CodeKind,
    /// The compiler that made that code: `winch` or `cranelift`.
    #[schemars(extend("enum" = ["winch", "cranelift"]))]
    pub compiler: String,
    /// Whether this run compiled it (`false`: it was in the compile cache, or loaded already).
    pub compiled: bool,
    /// How long compiling it took, in milliseconds; `null` when it was not compiled.
    pub compile_ms: Option<u64>,
    /// The contract version the plugin was built for, e.g. `0.2.0`.
    pub contract: String,
}

impl LoadedEvent {
    /// The event for `module`'s plugin with `digest`, loaded as `code` says, built for
    /// `contract`.
    pub fn of(
        module: &str,
        digest: &str,
        code: crate::model::code::CodeOrigin,
        contract: crate::model::contract::Contract,
    ) -> LoadedEvent {
        LoadedEvent {
            module: module.to_string(),
            sha256: digest.to_string(),
            contract: contract.version().to_string(),
            code: code.kind,
            compiler: code.kind.compiler().to_string(),
            compiled: code.compiled.is_some(),
            compile_ms: code.compiled.map(|took| u64::try_from(took.as_millis()).unwrap_or(u64::MAX)),
        }
    }
}

/// A module's plan, as preflight's `check` made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PlanEvent {
    /// The module the plan is for.
    pub module: String,
    /// The plan's lines for a person.
    pub summary: Vec<String>,
    /// The control-plane commands `adopt` will tell, in order, each as its words.
    pub commands: Vec<Vec<String>>,
}

/// A line a plugin said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SayEvent {
    /// The module whose plugin said it.
    pub module: String,
    /// The line, exact (secret values redacted; nothing escaped).
    pub line: String,
    /// The mesh's clock when it was said, in milliseconds since the run began.
    pub at_ms: f64,
}

/// A read of the mesh the host makes for itself, as it begins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReadingEvent {
    /// What it reads.
    pub what: MeshRead,
    /// The mesh's clock when it began, in milliseconds since the run began.
    pub at_ms: f64,
}

/// A read of the mesh the host makes for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MeshRead {
    /// The mesh as preflight predicts from: the control plane's modules (`state`) and each
    /// container the run concerns (`inspect`).
    State,
    /// Which of the images the run's modules run the node has (`images`).
    Images,
    /// The mesh after a push, until it is as predicted or the run's `--wait` is up.
    Landed,
    /// The mesh's lock, asked for (`lock`).
    Lock,
    /// Who holds the mesh's lock, as a check asks (`lock_holder`).
    LockHolder,
    /// The run's lock, let go (`unlock`).
    Unlock,
}

/// The mesh read again just before a push (docs/push-rule.md): what differs from the
/// prediction there, and whether the push went on. A replay answers its re-read from this.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RereadEvent {
    /// The module about to push.
    pub module: String,
    /// The push's place in the module's plan, counting its commands from 0.
    pub command: u64,
    /// Why the mesh could not be read again; the push was not told.
    pub unseen: Option<String>,
    /// What differs from the prediction; empty when nothing moved and the push went on.
    pub moved: Vec<MovedRecord>,
    /// The mesh's clock when it was read, in milliseconds since the run began.
    pub at_ms: f64,
}

/// One thing a re-read found otherwise than predicted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct MovedRecord {
    /// What moved, in words: a container, a module or a secret (module/secret), by its name,
    /// or a container as a registered module's manifest declares it (module and container).
    pub what: String,
    /// Which of its fields: `presence`, `image`, `spec digest`, `volumes`, `running`,
    /// `registration`, `registration order`, `prepared`, `held`; of a registered manifest,
    /// `declared`, `secrets` or a field of a container's spec (`image`, `environment`, …).
    pub field: String,
    /// What the prediction has.
    pub predicted: String,
    /// What the mesh showed.
    pub found: String,
}

/// A plugin's say budget ran out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SayCutEvent {
    /// The module whose plugin said too much.
    pub module: String,
    /// How many lines were kept; every later line was dropped and the plugin stopped.
    pub dropped_after: u64,
}

/// A secret's value caught on its way out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SecretShownEvent {
    /// The module whose plugin let it out.
    pub module: String,
    /// The secret's name (never its value).
    pub secret: String,
    /// Where it was caught, in words: "a say line", "its plan", "the arguments of its tell call".
    pub place: String,
}

/// The contract's import a host call went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `control.carry`: a file or a secret put into the control plane.
    Carry,
    /// `control.tell`: a control-plane command.
    Tell,
    /// `control.credential`: a handle on a granted credential.
    Credential,
    /// `machine.inspect`: what a container runs.
    Inspect,
    /// `machine.fetch`: an HTTP GET.
    Fetch,
}

impl Op {
    /// The import's name, as the streams and the host's messages spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Carry => "carry",
            Op::Tell => "tell",
            Op::Credential => "credential",
            Op::Inspect => "inspect",
            Op::Fetch => "fetch",
        }
    }

    /// Whether the call changes the mesh; only these are denied during `check`.
    pub fn is_effect(self) -> bool {
        matches!(self, Op::Carry | Op::Tell)
    }
}

/// What a host call asked for: the import and its arguments, said the same way by the
/// `started` and the `call` event of one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Request {
    /// The import called.
    pub op: Op,
    /// The arguments as strings: a tell's words; a carry's name and remote path; a
    /// credential's name; an inspect's container; a fetch's URL.
    pub args: Vec<String>,
    /// A carry's payload: bytes (how many) or a secret handle. Absent for other imports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
    /// Present when `args` holds only the first words of a tell too large to keep whole
    /// (and so denied): how large it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<ArgsCut>,
}

impl Request {
    /// A call's arguments as a person reads them: a tell's words joined, a carry as `NAME (N
    /// bytes) to REMOTE` or `secret NAME to REMOTE`, the others their one argument.
    pub fn words(&self) -> String {
        match (self.op, self.args.as_slice(), &self.payload) {
            (Op::Carry, [name, remote], Some(Payload::Secret)) => format!("secret {name} to {remote}"),
            (Op::Carry, [name, remote], Some(Payload::Bytes { size })) => format!("{name} ({size} bytes) to {remote}"),
            _ => {
                let mut words = self.args.join(" ");
                if let Some(cut) = &self.cut {
                    words.push_str(&format!(" … ({} words, {} bytes)", cut.words, cut.bytes));
                }
                words
            }
        }
    }
}

/// What a carry put into the control plane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Payload {
    /// Bytes the plugin had (such as its manifest); only their size is kept.
    Bytes {
        /// How many bytes.
        size: u64,
    },
    /// A credential's value, by handle; the value is never kept.
    Secret,
}

/// How large a tell was whose arguments are kept only in part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ArgsCut {
    /// How many arguments the tell had.
    pub words: u64,
    /// How many bytes they held in all.
    pub bytes: u64,
}

/// A host call under way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StartedEvent {
    /// The module whose plugin made the call.
    pub module: String,
    /// What it asked for.
    #[serde(flatten)]
    pub request: Request,
    /// The mesh's clock when the call went out, in milliseconds since the run began.
    pub at_ms: f64,
    /// How long a tell may take, in seconds (the plugin's ask, lowered to the host's
    /// ceiling and its deadline); `null` for other calls.
    pub timeout_s: Option<u64>,
}

/// A finished host call: what was asked, what the host answered, when and how long it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CallEvent {
    /// The module whose plugin made the call.
    pub module: String,
    /// The export it was made in.
    pub phase: Export,
    /// What it asked for.
    #[serde(flatten)]
    pub request: Request,
    /// What the host answered: `{"ok": VALUE}` or `{"error": {"kind", "message"}}`.
    pub result: CallResult,
    /// The mesh's clock when the call returned, in milliseconds since the run began.
    pub at_ms: f64,
    /// How long the call took in real time, in milliseconds.
    pub took_ms: f64,
}

/// A host call's answer: the value the plugin received, or the contract error it received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallResult {
    /// The call succeeded; the value depends on the import (see [`CallValue`]).
    Ok(CallValue),
    /// The call failed with this error.
    Error(CallError),
}

/// The value a successful host call returned, typed by its import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CallValue {
    /// A tell's output (its standard output, secret values redacted).
    Output(String),
    /// An inspect that found the container.
    Container(ContainerValue),
    /// A fetch's response.
    Response(ResponseValue),
    /// `null`: a carry (no value), a credential (a handle nothing may record), or an inspect
    /// that found no such container.
    Nothing,
}

impl CallValue {
    /// Whether this value is one `op` can return, so a recording whose answers do not fit
    /// their calls is refused rather than misread.
    pub fn fits(&self, op: Op) -> bool {
        matches!(
            (op, self),
            (Op::Tell, CallValue::Output(_))
                | (Op::Carry | Op::Credential, CallValue::Nothing)
                | (Op::Inspect, CallValue::Container(_) | CallValue::Nothing)
                | (Op::Fetch, CallValue::Response(_))
        )
    }

    /// The value for a person: a tell's output, `IMAGE (running)`, `STATUS BODY`, or nothing.
    pub fn words(&self) -> String {
        match self {
            CallValue::Output(output) => output.clone(),
            CallValue::Container(c) => format!("{} ({})", c.image, if c.running { "running" } else { "stopped" }),
            CallValue::Response(r) => format!("{} {}", r.status, r.body),
            CallValue::Nothing => String::new(),
        }
    }

    /// The texts the value holds, for the host's scans for secret values and its count of
    /// recorded bytes.
    pub fn texts(&self) -> Vec<&str> {
        match self {
            CallValue::Output(output) => vec![output],
            CallValue::Container(c) => vec![&c.image],
            CallValue::Response(r) => vec![&r.body],
            CallValue::Nothing => Vec::new(),
        }
    }
}

/// What a container runs, as an inspect answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ContainerValue {
    /// The image it runs.
    pub image: String,
    /// Whether it is running.
    pub running: bool,
}

/// An HTTP answer, as a fetch returned it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ResponseValue {
    /// The HTTP status.
    pub status: u16,
    /// The body, cut to the host's limit.
    pub body: String,
}

/// A contract error a host call returned, with its kind kept apart from its words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CallError {
    /// Which of the contract's errors it was.
    pub kind: ErrorKind,
    /// The error's words (secret values redacted).
    pub message: String,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.words(), self.message)
    }
}

/// The contract's `host-error` cases, under names that do not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The host refused the call (grants, plan, limits); it never reached the mesh.
    Denied,
    /// The mesh answered no.
    Failed,
    /// No answer within the call's timeout.
    TimedOut,
    /// What was asked for cannot be reached.
    Unavailable,
}

impl ErrorKind {
    /// The kind as a person reads it before the message: `denied`, `timed out`.
    pub fn words(self) -> &'static str {
        match self {
            ErrorKind::Denied => "denied",
            ErrorKind::Failed => "failed",
            ErrorKind::TimedOut => "timed out",
            ErrorKind::Unavailable => "unavailable",
        }
    }
}

/// How one module's turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OutcomeEvent {
    /// The module.
    pub module: String,
    /// Whether it did what the run asked: `ready` in a check, `adopted` in a run.
    pub succeeded: bool,
    /// The outcome, named by its `outcome` field, with what belongs to it.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Secrets the module carried into the control plane that no `secret accept` took before
    /// it stopped: each stays there, at its path, until a module accepts it or a carry to the
    /// same path replaces it. Named, never valued. Absent when there is none (always for a
    /// module that succeeded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets_left: Vec<SecretLeft>,
}

/// A secret carried into the control plane and not accepted: what an operator clears or
/// carries over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SecretLeft {
    /// The secret's name as the plugin carried it (a genesis credential's name).
    pub secret: String,
    /// Where in the control plane it was carried to.
    pub at: String,
}

/// A module's outcome with its details; the `outcome` field names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// `check` passed (a check stops here); this is its plan.
    Ready {
        /// The plan `check` made.
        plan: PlanRecord,
    },
    /// `adopt` told its whole plan and succeeded.
    Adopted {
        /// The plugin's one-line report.
        report: String,
    },
    /// The plugin refused.
    Refused {
        /// In which export.
        during: Export,
        /// The refusal's kind, kebab-case and stable: the plugin's code, or one of the host's
        /// refusal codes (docs/events.md's codes) where the host refuses for it. Absent for a
        /// plugin of contract 0.1.0, whose refusals have none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// The refusal's words.
        message: String,
        /// What mends it, as data, for the host's refusals (`plan-changed`: make the plan
        /// again; `mesh-moved`, `mesh-unseen`, `lock-broken`: look at the mesh); `null` for a
        /// plugin's own, whose words say its remedy.
        remedy: Option<crate::remedy::Remedy>,
    },
    /// `adopt` returned success before it told its whole plan.
    Incomplete {
        /// The plugin's report.
        report: String,
        /// The plan's commands never told, in order.
        left: Vec<Vec<String>>,
    },
    /// An input cannot be used: the module's catalogue entry, manifest, plugin or
    /// credentials, or a plugin the sandbox stopped while it was only being checked.
    Unusable {
        /// Which input (`stopped`: the sandbox stopped the plugin during its check).
        input: InputWord,
        /// Why the sandbox stopped it, when `input` is `stopped`: as in `failed`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<StopKind>,
        /// What is wrong, naming the file or limit.
        message: String,
    },
    /// The sandbox stopped the plugin during `adopt`.
    Failed {
        /// Why the sandbox stopped it.
        stop: StopKind,
        /// The stop report: the reason first, the wasm backtrace after.
        message: String,
    },
    /// Another module did not succeed, so this one was left alone.
    NotRun {
        /// Why, in words.
        because: String,
        /// Why, as a code ([`Ending`](crate::model::ending::Ending)): the hold's, or what
        /// stopped an earlier module.
        code: crate::model::ending::Ending,
        /// What mends it, when preflight held the run; `null` otherwise.
        remedy: Option<crate::remedy::Remedy>,
    },
}

impl Outcome {
    /// The outcome's name alone, as the summary lists it.
    pub fn word(&self) -> OutcomeWord {
        match self {
            Outcome::Ready { .. } => OutcomeWord::Ready,
            Outcome::Adopted { .. } => OutcomeWord::Adopted,
            Outcome::Refused { .. } => OutcomeWord::Refused,
            Outcome::Incomplete { .. } => OutcomeWord::Incomplete,
            Outcome::Unusable { .. } => OutcomeWord::Unusable,
            Outcome::Failed { .. } => OutcomeWord::Failed,
            Outcome::NotRun { .. } => OutcomeWord::NotRun,
        }
    }
}

/// A plan inside a `ready` outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PlanRecord {
    /// The plan's lines for a person.
    pub summary: Vec<String>,
    /// The commands `adopt` would tell, in order.
    pub commands: Vec<Vec<String>>,
}

/// The name of an outcome, as the summary lists each module's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeWord {
    /// See [`Outcome::Ready`].
    Ready,
    /// See [`Outcome::Adopted`].
    Adopted,
    /// See [`Outcome::Refused`].
    Refused,
    /// See [`Outcome::Incomplete`].
    Incomplete,
    /// See [`Outcome::Unusable`].
    Unusable,
    /// See [`Outcome::Failed`].
    Failed,
    /// See [`Outcome::NotRun`].
    NotRun,
}

impl OutcomeWord {
    /// Every outcome, in the order a module's turn can reach them.
    pub const ALL: [OutcomeWord; 7] = [
        OutcomeWord::Ready,
        OutcomeWord::Adopted,
        OutcomeWord::Refused,
        OutcomeWord::Incomplete,
        OutcomeWord::Unusable,
        OutcomeWord::Failed,
        OutcomeWord::NotRun,
    ];

    /// The outcome as a person reads it, in the summary and in a scenario's `outcome`
    /// (`not run`, where the streams write `not_run`).
    pub fn words(self) -> &'static str {
        match self {
            OutcomeWord::Ready => "ready",
            OutcomeWord::Adopted => "adopted",
            OutcomeWord::Refused => "refused",
            OutcomeWord::Incomplete => "incomplete",
            OutcomeWord::Unusable => "unusable",
            OutcomeWord::Failed => "failed",
            OutcomeWord::NotRun => "not run",
        }
    }

    /// The outcome a person's words name, if any.
    pub fn from_words(text: &str) -> Option<OutcomeWord> {
        OutcomeWord::ALL.into_iter().find(|word| word.words() == text)
    }
}

/// The person's words, padded as asked.
impl std::fmt::Display for OutcomeWord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.words())
    }
}

/// The whole run, after every outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SummaryEvent {
    /// Every module succeeded and every invariant held.
    pub succeeded: bool,
    /// The exit status the run's outcomes give (see the `end` event for the process's).
    #[schemars(extend("enum" = [0, 1, 2, 75]))]
    pub exit: u8,
    /// The mesh backend the run acted on, in words.
    pub mesh: String,
    /// Each module asked for, in order, with its outcome's name.
    pub modules: Vec<ModuleSummary>,
    /// What happened to containers on the node, in the order the node did it.
    pub changes: Vec<Change>,
    /// The invariants found broken; any fails the run.
    pub violations: Vec<ViolationRecord>,
    /// How far the rules of the mesh were checked.
    pub rules: CheckedWord,
    /// The same, rule by rule: what a mesh cannot show is never called verified.
    pub rule_checks: Vec<RuleCheck>,
}

/// How far one rule of the mesh was checked in a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RuleCheck {
    /// The rule.
    pub rule: Rule,
    /// How far it was checked.
    pub checked: CheckedWord,
}

/// How far a rule was checked, as the record says it: never "verified" of what nothing
/// checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckedWord {
    /// Not even predicted: preflight stopped first, or the mesh could not be seen.
    NotPredicted,
    /// Predicted from the mesh's state before any push; nothing after a push checked it.
    Predicted,
    /// Predicted, then checked after each push by inspecting the containers.
    Inspected,
    /// Predicted, then checked after each push on all the node did.
    Verified,
}

impl CheckedWord {
    /// The word, as the record spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckedWord::NotPredicted => "not_predicted",
            CheckedWord::Predicted => "predicted",
            CheckedWord::Inspected => "inspected",
            CheckedWord::Verified => "verified",
        }
    }
}

impl std::fmt::Display for CheckedWord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One module's line in the summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ModuleSummary {
    /// The module.
    pub module: String,
    /// Its outcome's name; its `outcome` event has the details.
    pub outcome: OutcomeWord,
    /// Whether it did what the run asked.
    pub succeeded: bool,
}

/// What happened to one container; the `change` field names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    /// Already running with the same spec: left be.
    Kept {
        /// The container's name.
        container: String,
        /// The image it runs.
        image: String,
    },
    /// Replaced with another spec.
    Recreated {
        /// The container's name.
        container: String,
        /// The image it ran.
        from: String,
        /// The image it runs now.
        to: String,
    },
    /// Raised where there was none.
    Created {
        /// The container's name.
        container: String,
        /// The image it runs.
        image: String,
    },
    /// Taken away.
    Removed {
        /// The container's name.
        container: String,
    },
}

/// What preflight predicts every push of the phase does, from the foundation, the manifests,
/// the plans and the mesh's state, by the node's push rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EffectEvent {
    /// Each push, in the order the plans make them.
    pub pushes: Vec<PushRecord>,
    /// Whether the mesh showed everything the prediction rests on (containers' volumes, the
    /// control plane's modules); a live mesh shows images only.
    pub complete: bool,
    /// Modules moved ahead of the order asked for: an earlier run left each prepared without
    /// its hand-over, and another module's push would seal over its credential.
    pub first: Vec<String>,
    /// The secrets of the modules the pushes apply that the node held before the run, as the
    /// mesh said (the simulator; a live mesh with a `state` command): no push seals them
    /// again.
    pub held: Vec<HeldRecord>,
    /// What preflight found on the node, or could not ask it, that a person should know beside
    /// the effect: each a warning, none of which stops the run. Absent when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<EffectWarning>,
}

/// What preflight found on the node, or could not ask it, beside the effect it predicts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "warning", rename_all = "kebab-case", deny_unknown_fields)]
pub enum EffectWarning {
    /// A container of a module the control plane has prepared on the node is not there: a push
    /// that did not finish (one killed part-way) leaves it gone until the next push raises it
    /// again, as this run's would.
    ContainerGone {
        /// The container.
        container: String,
        /// The module that runs it, prepared on the node.
        module: String,
        /// Whether genesis raised it (the foundation bundle declares it).
        genesis: bool,
    },
    /// The engine's inspect showed no mounts of these containers (an `inspect` answering in the
    /// older word form): the secrets they hold were not read from the node, so only the control
    /// plane's `state` (or, without one, nothing) says what the node holds.
    MountsUnshown {
        /// The containers.
        containers: Vec<String>,
    },
    /// The mesh cannot ask its node which images it has (a live mesh without an `images`
    /// command): an image the node lacks is found only when the control plane builds the
    /// module that runs it, after the modules before it have had their effect.
    ImagesUnasked,
}

/// A module secret the node held before the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HeldRecord {
    /// The module declaring it.
    pub module: String,
    /// The secret.
    pub secret: String,
    /// Whether this run's plans accept it again before a push: the node then holds the value
    /// carried in, not the one it held. Absent when they do not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accepted_again: bool,
    /// For a secret accepted again, the genesis credential its module declares it hands over
    /// as it; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
}

/// One push and what the node does with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PushRecord {
    /// The module whose plan pushes.
    pub module: String,
    /// Every container of every prepared module, as the node applies them.
    pub containers: Vec<ContainerRecord>,
    /// Every module secret the push settles.
    pub secrets: Vec<SecretRecord>,
}

/// One container at one push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ContainerRecord {
    /// The module whose manifest raises it.
    pub module: String,
    /// What happens to it.
    #[serde(flatten)]
    pub change: Change,
}

/// One module secret at one push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SecretRecord {
    /// The module declaring it.
    pub module: String,
    /// The secret.
    pub secret: String,
    /// `true`: accepted before the push; `false`: the node seals fresh bytes.
    pub accepted: bool,
    /// For a secret accepted, the genesis credential its module declares it hands over as
    /// it; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
}

/// An invariant found broken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ViolationRecord {
    /// The rule broken.
    pub invariant: Rule,
    /// What broke it, in words.
    pub detail: String,
    /// The module whose declaration, plan or push broke it; `null` where none alone did.
    pub module: Option<String>,
    /// The container it concerns; `null` where none is.
    pub container: Option<String>,
    /// What mends it: look at the mesh and the rule's page (docs/rules.md).
    pub remedy: crate::remedy::Remedy,
}

/// Where `check --out` saved the plans.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PlanSavedEvent {
    /// The plan file, as given: apply it with `run --plan`.
    pub path: String,
}

/// A replay's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReplayEvent {
    /// The recording replayed, as given.
    pub recording: String,
    /// How many recorded calls the plugins made as recorded.
    pub answered: u64,
    /// The first call where they did not; `null` when they made every recorded call.
    pub divergence: Option<Divergence>,
    /// Where the recorded run was interrupted, when its recording ends with an `interrupted`
    /// event: the plugins' calls were compared up to there, and every call past it was
    /// answered `unavailable` without counting as a divergence; `null` for a recording of a
    /// run that ended.
    pub interrupted: Option<ReplayInterruption>,
}

/// Where the run a recording holds was interrupted, as its replay reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReplayInterruption {
    /// What stopped the recorded run, as its `interrupted` event says: `SIGINT`, `SIGTERM`
    /// or `cancelled`.
    #[schemars(extend("enum" = ["SIGINT", "SIGTERM", "cancelled"]))]
    pub signal: String,
    /// How many calls the recording holds that reached the mesh before it stopped.
    pub calls: u64,
    /// The call the recorded run was making when it stopped (it went out, and never
    /// returned), in words: its import, its arguments and its module, as a divergence names a
    /// call; `null` when it stopped between calls. The replay holds the plugins' next call to
    /// it.
    pub during: Option<String>,
}

/// Where a replay diverged from its recording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Divergence {
    /// The call's number in the replay, from 1.
    pub call: u64,
    /// What the recording held and what the plugin did instead.
    pub message: String,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "call {}: {}", self.call, self.message)
    }
}

/// The mesh's lock, as a run takes, waits for, is refused, releases or loses it, or as a
/// check finds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LockEvent {
    /// What came of it.
    pub outcome: LockOutcome,
    /// Which lock: for `taken`, what the lock this run took keeps out: `mesh` (the mesh's own,
    /// fenced), `advisory` (the mesh's own, not fenced), `machine` (this machine's lock only:
    /// the mesh has none), `simulated` (a model mesh's) or `none` (nothing keeps another run
    /// out); for `held` and `waiting`, the lock the other run holds (`machine`: this machine's
    /// lock file; `mesh`, `advisory`: the mesh's own; `simulated`); `null` otherwise.
    pub scope: Option<crate::model::lock::LockScope>,
    /// Who holds it: this run for `taken`, `releasing`, `released` and `failed`; the other
    /// holder for `held`, `waiting` and `broken` (`null` when the control plane named none);
    /// `null` for `unreadable`.
    pub holder: Option<crate::model::lock::LockHolder>,
    /// Whether the holder's process is known to be gone: it ran on this machine and runs no
    /// more, so the lock was left behind (`mesh-adopt unlock ID` breaks it).
    pub process_gone: bool,
    /// For `failed`, `broken` and `unreadable`, what went wrong; for `waiting` and
    /// `releasing`, what the run waits for and how long at most; `null` otherwise.
    pub message: Option<String>,
    /// What mends it, where the operator must act: a lock left (`unlock`), a damaged lock
    /// file (`clear-damaged-lock`), a lock broken under the run (`inspect-mesh`); `null`
    /// otherwise.
    pub remedy: Option<crate::remedy::Remedy>,
}

/// What came of a run's asking for the mesh's lock, or a check's looking at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LockOutcome {
    /// This run took the lock; it holds it to its end.
    Taken,
    /// Another holds the lock: a run changes nothing and exits 1; a check only says so.
    Held,
    /// Another holds the lock and the run waits for it (`--lock-timeout`).
    Waiting,
    /// This run asked for its release, and the control plane still runs a command the run
    /// sent: the run waits, up to `--wait`, for it to end and the lock to go.
    Releasing,
    /// The run released its lock at its end.
    Released,
    /// The lock could not be taken (the run changes nothing) or released (it is left, for
    /// `mesh-adopt unlock`; the run exits 1).
    Failed,
    /// The control plane refused a command of this run's because its lock was no longer the
    /// mesh's: it was broken under the run, which sends nothing more and exits 1.
    Broken,
    /// Who holds the lock could not be read: a damaged lock file of this machine's (the run
    /// changes nothing), or a `lock_holder` that failed, hung or answered otherwise than its
    /// contract (a check says so).
    Unreadable,
}

/// The last line of a finished command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EndEvent {
    /// The process's exit status (see docs/operating.md's table).
    #[schemars(extend("enum" = [0, 1, 2, 75]))]
    pub exit: u8,
    /// Why the run did not succeed, as a code; `null` when it exits 0.
    pub code: Option<crate::model::ending::Ending>,
    /// What mends it, as data, where the host knows; `null` otherwise.
    pub remedy: Option<crate::remedy::Remedy>,
}

/// A command that stopped on an error, as `--json` reports it on stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ErrorEvent {
    /// The schema version, since this may be the stream's only line.
    #[schemars(extend("const" = SCHEMA))]
    pub schema: u32,
    /// What went wrong, naming the input or output concerned.
    pub message: String,
    /// What it was caused by, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<String>,
    /// Always 2: a bad input or an output that cannot be written.
    #[schemars(extend("const" = 2))]
    pub exit: u8,
    /// What mends it, as data, where the error says (an option to give otherwise, a file to
    /// mend at a key, a plugin to build); `null` otherwise.
    pub remedy: Option<crate::remedy::Remedy>,
}

/// The exit status of a run interrupted: what a shell gives a program ended by SIGINT.
pub const EXIT_INTERRUPTED: u8 = crate::model::exit::ExitStatus::Interrupted.code();

/// The last line of a run stopped before its end: a command by SIGINT or SIGTERM, an
/// embedded run cancelled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InterruptedEvent {
    /// `SIGINT` or `SIGTERM`, or `cancelled` (an embedder dropped the run).
    #[schemars(extend("enum" = ["SIGINT", "SIGTERM", "cancelled"]))]
    pub signal: String,
    /// The process's exit status: 130.
    #[schemars(extend("const" = 130))]
    pub exit: u8,
    /// The effects (carries and tells) that had reached the mesh, in order.
    pub done: Vec<Effect>,
    /// The carry or tell that was under way when the run stopped, and what became of it;
    /// `null` when none was.
    pub in_flight: Option<InFlight>,
    /// The run's lock id, when it could not be let go as the run stopped: `mesh-adopt unlock
    /// ID` breaks it; `null` when it was let go, or none was held.
    #[schemars(regex(pattern = "^[0-9a-f]{1,64}$"))]
    pub lock_left: Option<String>,
}

/// A carry or tell under way when a run stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InFlight {
    /// The module whose plugin made it.
    pub module: String,
    /// What it was.
    #[serde(flatten)]
    pub request: Request,
    /// Whether it had landed by the time the run let its lock go.
    pub landing: Landing,
}

/// What became of the call under way when a run stopped, as the mesh's lock tells it: a
/// control plane that fences lets a lock go only once it runs nothing sent under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Landing {
    /// It had ended on the control plane's side: the run's lock, fenced, was released as the
    /// run stopped (what it did is for the operator to look at).
    Ended,
    /// The control plane still ran it and finishes it (a push its worker finishes once
    /// begun): the run's lock is released once it has, and no other run moves the mesh before.
    StillRunning,
    /// Nothing says: the mesh's lock does not track what runs under it, or its release failed.
    Unknown,
}

/// A carry or tell that reached the mesh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Effect {
    /// The module whose plugin made it.
    pub module: String,
    /// What it was.
    #[serde(flatten)]
    pub request: Request,
}

/// The first fields of a stream's first line, read before anything else so that a stream
/// of another version, or from before streams carried one, is refused by name instead of
/// failing on some later field.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Header {
    /// The line's kind; a stream starts with `run`.
    pub event: Option<String>,
    /// Its schema version, absent in a pre-schema stream.
    pub schema: Option<serde_json::Value>,
}

/// A duration in milliseconds, to the microsecond, as the streams write times.
pub fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// Milliseconds read back from a stream as a duration; a negative or non-finite number
/// (which this program never writes) reads as zero.
pub fn from_millis(ms: f64) -> Duration {
    if ms.is_finite() && ms > 0.0 {
        Duration::try_from_secs_f64(ms / 1e3).unwrap_or(Duration::MAX)
    } else {
        Duration::ZERO
    }
}

impl From<&crate::model::options::RunOptions> for RunOptionsRecord {
    fn from(options: &crate::model::options::RunOptions) -> RunOptionsRecord {
        RunOptionsRecord {
            node: options.node.clone(),
            catalog_source: options
                .catalog_source
                .as_ref()
                .map(|s| CatalogSourceRecord { repository: s.repository.clone(), reference: s.reference.clone() }),
            wait_s: options.wait.as_secs(),
        }
    }
}

impl TryFrom<RunOptionsRecord> for crate::model::options::RunOptions {
    type Error = crate::model::options::OptionError;

    /// The options a stream recorded, checked as an operator's would be.
    fn try_from(
        record: RunOptionsRecord,
    ) -> Result<crate::model::options::RunOptions, crate::model::options::OptionError> {
        let options = crate::model::options::RunOptions {
            node: record.node,
            catalog_source: record
                .catalog_source
                .map(|s| crate::model::CatalogSource { repository: s.repository, reference: s.reference }),
            wait: Duration::from_secs(record.wait_s),
        };
        options.validate()?;
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(event: &Event) -> serde_json::Value {
        let line = serde_json::to_string(event).unwrap();
        let back: Event = serde_json::from_str(&line).unwrap();
        assert_eq!(&back, event, "{line}");
        serde_json::from_str(&line).unwrap()
    }

    #[test]
    fn a_call_keeps_its_arguments_as_strings_and_its_answer_typed() {
        let call = Event::Call(CallEvent {
            module: "nats".into(),
            phase: Export::Check,
            request: Request { op: Op::Inspect, args: vec!["mesh-bus".into()], payload: None, cut: None },
            result: CallResult::Ok(CallValue::Container(ContainerValue {
                image: "nats:2.10.22-alpine".into(),
                running: true,
            })),
            at_ms: 1.5,
            took_ms: 0.25,
        });
        let json = round_trip(&call);
        assert_eq!(json["event"], "call");
        assert_eq!(json["args"], serde_json::json!(["mesh-bus"]));
        assert_eq!(json["result"]["ok"]["image"], "nats:2.10.22-alpine");
        assert!(json.get("payload").is_none() && json.get("cut").is_none(), "{json}");
    }

    #[test]
    fn an_error_keeps_its_kind_apart_from_its_words() {
        let call = Event::Call(CallEvent {
            module: "postgres".into(),
            phase: Export::Adopt,
            request: Request {
                op: Op::Carry,
                args: vec!["store-superuser".into(), "/accepting-superuser".into()],
                payload: Some(Payload::Secret),
                cut: None,
            },
            result: CallResult::Error(CallError { kind: ErrorKind::TimedOut, message: "no answer in 5s".into() }),
            at_ms: 0.0,
            took_ms: 5000.0,
        });
        let json = round_trip(&call);
        assert_eq!(json["result"]["error"], serde_json::json!({"kind": "timed_out", "message": "no answer in 5s"}));
        assert_eq!(json["payload"], serde_json::json!({"kind": "secret"}));
    }

    #[test]
    fn null_and_empty_answers_stay_what_they_were() {
        for (op, value) in [
            (Op::Tell, CallValue::Output(String::new())),
            (Op::Carry, CallValue::Nothing),
            (Op::Inspect, CallValue::Nothing),
            (Op::Fetch, CallValue::Response(ResponseValue { status: 503, body: String::new() })),
        ] {
            assert!(value.fits(op), "{op:?} {value:?}");
            let event = Event::Call(CallEvent {
                module: "m".into(),
                phase: Export::Adopt,
                request: Request { op, args: vec!["x".into()], payload: None, cut: None },
                result: CallResult::Ok(value),
                at_ms: 0.0,
                took_ms: 0.0,
            });
            round_trip(&event);
        }
        assert!(!CallValue::Output("x".into()).fits(Op::Inspect));
        assert!(!CallValue::Nothing.fits(Op::Fetch));
    }

    #[test]
    fn an_outcome_is_named_by_its_outcome_field() {
        let event = Event::Outcome(OutcomeEvent {
            module: "nats".into(),
            succeeded: false,
            outcome: Outcome::NotRun {
                because: "`postgres` did not succeed".into(),
                code: crate::model::ending::Ending::EarlierModuleFailed,
                remedy: None,
            },
            secrets_left: Vec::new(),
        });
        let json = round_trip(&event);
        assert_eq!((json["event"].as_str(), json["outcome"].as_str()), (Some("outcome"), Some("not_run")));
    }

    #[test]
    fn a_cut_tell_says_so_in_words() {
        let request = Request {
            op: Op::Tell,
            args: vec!["a".into(), "b".into()],
            payload: None,
            cut: Some(ArgsCut { words: 2_000_000, bytes: 2 }),
        };
        assert_eq!(request.words(), "a b … (2000000 words, 2 bytes)");
    }

    /// The documentation names every rule: docs/rules.md (where the rules are told), the event
    /// reference and the schema generated from the types (as a value the record may hold).
    #[test]
    fn every_rule_is_named_in_the_rules_the_event_reference_and_the_schema() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let schema = serde_json::to_string(&json_schema()).unwrap();
        for (document, text) in [
            ("docs/rules.md", std::fs::read_to_string(root.join("docs/rules.md")).unwrap()),
            ("docs/events.md", std::fs::read_to_string(root.join("docs/events.md")).unwrap()),
            ("the generated schema", schema.clone()),
        ] {
            for rule in Rule::ALL {
                assert!(
                    text.contains(&format!("`{rule}`")) || text.contains(&format!("\"{rule}\"")),
                    "{document} does not name `{rule}`"
                );
            }
        }
    }

    /// What the schema's prose names in backticks, kebab-case, is a word the schema itself
    /// defines (a rule, a stop's kind, …), a refusal code of the host's, or the contract's
    /// `host-error`: no description names a rule or a word that does not exist.
    #[test]
    fn the_schema_names_no_word_it_does_not_define() {
        let schema = json_schema();
        let mut defined: Vec<String> = Vec::new();
        fn consts(value: &serde_json::Value, into: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => {
                    for (key, inner) in map {
                        match (key.as_str(), inner) {
                            ("const", serde_json::Value::String(word)) => into.push(word.clone()),
                            ("enum", serde_json::Value::Array(words)) => {
                                into.extend(words.iter().filter_map(|w| w.as_str().map(String::from)))
                            }
                            _ => consts(inner, into),
                        }
                    }
                }
                serde_json::Value::Array(items) => items.iter().for_each(|item| consts(item, into)),
                _ => {}
            }
        }
        consts(&schema, &mut defined);
        let host_codes = [
            crate::model::Refusal::PLAN_CHANGED,
            crate::model::Refusal::WENT_ON_PAST_A_FAILURE,
            crate::model::Refusal::REDACTED,
            crate::model::Refusal::MESH_MOVED,
            crate::model::Refusal::MESH_UNSEEN,
            crate::model::Refusal::LOCK_BROKEN,
        ];
        let text = serde_json::to_string(&schema).unwrap();
        for quoted in text.split('`').skip(1).step_by(2) {
            let kebab = quoted.contains('-')
                && !quoted.starts_with('-')
                && quoted.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if kebab {
                assert!(
                    defined.iter().any(|d| d == quoted) || host_codes.contains(&quoted) || quoted == "host-error",
                    "the schema names `{quoted}`, which it does not define"
                );
            }
        }
    }
}
