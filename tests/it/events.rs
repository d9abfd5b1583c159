//! The `--json` and `--record` streams of the shipped runs, through the real binary: every
//! line of every stream is valid against `docs/events.schema.json`, reads back as the
//! event types it was written from, and says what the run did. A replay refuses a
//! recording of another schema version, or from before recordings had one.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use mesh_adopt_runtime::events::{self, CallResult, CallValue, ErrorKind, Event, Op, Outcome};
use serde_json::{Value, json};

use crate::support::{SUPERUSER, example_catalogue, mesh_adopt, plugin, root};

/// Where the phase-three demo builds from (the justfile's `demo`).
const DEMO_SOURCE: &str = "https://git.mesh.local/catalogue.git@v3.2.0";

/// The JSON Schema of every line, compiled once.
fn schema() -> &'static (boon::Schemas, boon::SchemaIndex) {
    static SCHEMA: OnceLock<(boon::Schemas, boon::SchemaIndex)> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = root().join("docs/events.schema.json");
        let mut schemas = boon::Schemas::new();
        let index = boon::Compiler::new()
            .compile(path.to_str().unwrap(), &mut schemas)
            .unwrap_or_else(|e| panic!("`{}` does not compile: {e}", path.display()));
        (schemas, index)
    })
}

/// Why `line` is not valid against the schema, if it is not.
pub fn invalid(line: &Value) -> Option<String> {
    let (schemas, index) = schema();
    schemas.validate(line, *index).err().map(|e| format!("{e:#}"))
}

/// One stream read and checked: every line JSON, valid against the schema, and read back
/// through the event types as exactly the line it is; the first a `run` event of the current schema,
/// the last an `end` or `interrupted` event.
struct Stream {
    values: Vec<Value>,
    events: Vec<Event>,
}

impl Stream {
    fn read(what: &str, text: &str) -> Stream {
        let mut values = Vec::new();
        let mut events = Vec::new();
        for (number, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
            let value: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{what}, line {number}: not JSON ({e}): {line}"));
            if let Some(why) = invalid(&value) {
                panic!("{what}, line {number} is not valid against docs/events.schema.json:\n{why}\n{line}");
            }
            let event: Event = serde_json::from_value(value.clone())
                .unwrap_or_else(|e| panic!("{what}, line {number}: not an event ({e}): {line}"));
            let written = serde_json::to_string(&event).unwrap();
            assert_eq!(written, line, "{what}, line {number} does not read back as itself");
            values.push(value);
            events.push(event);
        }
        let stream = Stream { values, events };
        match stream.events.first() {
            Some(Event::Run(run)) => assert_eq!(run.schema, events::SCHEMA, "{what}"),
            other => panic!("{what} starts with {other:?}, not a `run` event"),
        }
        let last = stream.events.last();
        assert!(matches!(last, Some(Event::End(_) | Event::Interrupted(_) | Event::Error(_))), "{what}: no last event");
        stream
    }

    fn run(&self) -> &events::RunEvent {
        let Some(Event::Run(run)) = self.events.first() else { unreachable!("checked in `read`") };
        run
    }

    fn exit(&self) -> u8 {
        match self.events.last() {
            Some(Event::End(end)) => end.exit,
            Some(Event::Interrupted(interrupted)) => interrupted.exit,
            Some(Event::Error(error)) => error.exit,
            _ => unreachable!("checked in `read`"),
        }
    }

    fn outcomes(&self) -> Vec<(&str, &Outcome)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Outcome(o) => Some((o.module.as_str(), &o.outcome)),
                _ => None,
            })
            .collect()
    }

    fn calls(&self) -> Vec<&events::CallEvent> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Call(call) => Some(call),
                _ => None,
            })
            .collect()
    }

    fn summary(&self) -> &events::SummaryEvent {
        self.events
            .iter()
            .find_map(|e| match e {
                Event::Summary(s) => Some(s),
                _ => None,
            })
            .expect("a summary")
    }
}

/// Runs the binary with `args` in `catalogue`, with `--json` and `--record`, and checks both
/// streams: each is valid line by line, and they are the same lines. Returns the run, its
/// stream, and the record's path.
fn streamed(catalogue: &Path, args: &[&str]) -> (Output, Stream, PathBuf) {
    let record = catalogue.join(format!("record-{}.jsonl", RECORDS.fetch_add(1, Ordering::Relaxed)));
    let out = mesh_adopt().args(args).args(["--json", "--record"]).arg(&record).catalogue(catalogue).output();
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    let recorded = std::fs::read_to_string(&record).unwrap();
    let stream = Stream::read(&format!("--json of {args:?}"), &stdout);
    Stream::read(&format!("--record of {args:?}"), &recorded);
    assert_eq!(stdout, recorded, "--json and --record of {args:?} differ");
    assert_eq!(out.status.code(), Some(i32::from(stream.exit())), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    (out, stream, record)
}

/// Numbers each record file, so no run writes over another's.
static RECORDS: AtomicUsize = AtomicUsize::new(0);

#[test]
fn the_demo_run_streams_valid_events_and_replays_from_them() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let (_, demo, recording) = streamed(dir.path(), &["run", "--catalog-source", DEMO_SOURCE]);
    let run = demo.run();
    assert_eq!(run.command, events::Command::Run);
    assert_eq!(run.modules, ["postgres", "nats", "mesh-vault"]);
    assert_eq!(run.options.node, "node-1");
    let source = run.options.catalog_source.as_ref().unwrap();
    assert_eq!(
        (source.repository.as_str(), source.reference.as_deref()),
        ("https://git.mesh.local/catalogue.git", Some("v3.2.0"))
    );
    assert!(run.seed.is_some(), "the simulator's seed is kept for a replay");
    assert_eq!(demo.exit(), 0);
    let adopted: Vec<&str> =
        demo.outcomes().iter().filter(|(_, o)| matches!(o, Outcome::Adopted { .. })).map(|(m, _)| *m).collect();
    assert_eq!(adopted, ["postgres", "nats", "mesh-vault"]);
    let summary = demo.summary();
    assert!(summary.succeeded && summary.violations.is_empty());
    assert_eq!(
        summary.changes,
        [
            events::Change::Kept { container: "mesh-store".into(), image: "postgres:16.4-bookworm".into() },
            events::Change::Recreated {
                container: "mesh-bus".into(),
                from: "nats:2.10.22-alpine".into(),
                to: "registry.mesh.local/nats-snapshot:2.10.22-mesh.3".into()
            },
            events::Change::Created {
                container: "mesh-vault".into(),
                image: "registry.mesh.local/mesh-vault:0.9.1".into()
            },
        ]
    );
    // A tell's words are an array; an inspect's answer is a value, not JSON text.
    let calls = demo.calls();
    let register = calls
        .iter()
        .find(|c| c.request.op == Op::Tell && c.request.args == ["module", "add", "/postgres-module.json"])
        .expect("postgres registers its module");
    assert!(matches!(register.result, CallResult::Ok(CallValue::Output(_))), "{register:?}");
    let inspected = calls
        .iter()
        .find_map(|c| match &c.result {
            CallResult::Ok(CallValue::Container(container)) if c.request.op == Op::Inspect => Some(container),
            _ => None,
        })
        .expect("nats inspects the bus");
    assert_eq!(inspected.image, "nats:2.10.22-alpine");
    let carry = demo.values.iter().find(|v| v["op"] == "carry" && v["event"] == "call").unwrap();
    assert_eq!(carry["args"], json!(["postgres-module.json", "/postgres-module.json"]));
    assert!(carry["payload"]["size"].as_u64().unwrap() > 0, "{carry}");
    // The bus monitor answers 503 while the bus recovers, then 200: each a typed response.
    let fetched: Vec<&Value> = demo.values.iter().filter(|v| v["op"] == "fetch" && v["event"] == "call").collect();
    let statuses: Vec<u64> = fetched.iter().map(|f| f["result"]["ok"]["status"].as_u64().unwrap()).collect();
    assert_eq!(statuses.last(), Some(&200), "{fetched:?}");
    assert!(statuses.contains(&503) && fetched.iter().all(|f| f["result"]["ok"]["body"].is_string()), "{fetched:?}");

    // The recording replays, and the replay's own streams are valid and replay again.
    let (_, replayed, again) = streamed(dir.path(), &["replay", recording.to_str().unwrap()]);
    assert_eq!(replayed.run().command, events::Command::Replay);
    let verdict = replayed.events.iter().find_map(|e| match e {
        Event::Replay(r) => Some(r),
        _ => None,
    });
    let verdict = verdict.expect("a replay's verdict");
    let reaching_the_mesh =
        calls.iter().filter(|c| c.request.op != Op::Credential && !denied(&c.result)).count() as u64;
    assert_eq!((verdict.answered, verdict.divergence.as_ref()), (reaching_the_mesh, None));
    assert_eq!(replayed.exit(), 0);
    let (_, twice, _) = streamed(dir.path(), &["replay", again.to_str().unwrap()]);
    assert_eq!(twice.exit(), 0);

    // On another node the replay diverges at the first command that names it, and says so.
    let (_, elsewhere, _) = streamed(dir.path(), &["replay", recording.to_str().unwrap(), "--node", "node-2"]);
    assert_eq!(elsewhere.exit(), 1);
    let divergence = elsewhere
        .events
        .iter()
        .find_map(|e| match e {
            Event::Replay(r) => r.divergence.clone(),
            _ => None,
        })
        .expect("a divergence");
    assert!(divergence.call > 1 && divergence.message.contains("--node node-2"), "{divergence:?}");
}

fn denied(result: &CallResult) -> bool {
    matches!(result, CallResult::Error(e) if e.kind == ErrorKind::Denied)
}

#[test]
fn check_and_a_saved_plan_stream_valid_events() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let (_, checked, _) = streamed(dir.path(), &["check", "--catalog-source", DEMO_SOURCE]);
    assert_eq!((checked.run().command, checked.exit()), (events::Command::Check, 0));
    let ready: Vec<&str> = checked
        .outcomes()
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Ready { plan } if !plan.commands.is_empty()))
        .map(|(m, _)| *m)
        .collect();
    assert_eq!(ready, ["postgres", "nats", "mesh-vault"]);
    // Nothing moved: every call of a check is a read, and no container changed.
    assert!(checked.calls().iter().all(|c| !c.request.op.is_effect()), "a check made an effect");
    assert!(checked.summary().changes.is_empty());

    let plan = dir.path().join("plan.json");
    let (_, saved, _) =
        streamed(dir.path(), &["check", "--catalog-source", DEMO_SOURCE, "--out", plan.to_str().unwrap()]);
    let saved_at = saved.events.iter().find_map(|e| match e {
        Event::PlanSaved(p) => Some(p.path.clone()),
        _ => None,
    });
    assert_eq!(saved_at.as_deref(), plan.to_str());
    // Each module's plan event holds what the saved plan holds.
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let planned: Vec<Value> = saved
        .values
        .iter()
        .filter(|v| v["event"] == "plan")
        .map(|v| json!({"module": v["module"], "commands": v["commands"]}))
        .collect();
    let in_file: Vec<Value> = file["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!({"module": m["module"], "commands": m["commands"]}))
        .collect();
    assert_eq!(planned, in_file);

    let (_, applied, _) =
        streamed(dir.path(), &["run", "--catalog-source", DEMO_SOURCE, "--plan", plan.to_str().unwrap()]);
    assert_eq!(applied.exit(), 0);
    assert!(applied.summary().succeeded);
}

#[test]
fn refused_and_failed_runs_stream_valid_events_with_their_errors_typed() {
    // No catalogue source: every module refuses in check, and nothing moves.
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let (_, refused, _) = streamed(dir.path(), &["run"]);
    assert_eq!(refused.exit(), 1);
    for (module, outcome) in refused.outcomes() {
        assert!(
            matches!(outcome, Outcome::Refused { during: mesh_adopt_runtime::report::Export::Check, .. }),
            "{module}: {outcome:?}"
        );
    }
    assert!(refused.summary().changes.is_empty() && !refused.summary().succeeded);

    // A plugin that puts a secret's value in a tell: denied, caught, redacted, and the run
    // fails on the invariant.
    // (It tells the value the tests' credentials hold.)
    let dir = example_catalogue(&plugin("smuggles_secret_tell"));
    std::fs::write(dir.path().join("genesis/credentials/store-superuser"), format!("{SUPERUSER}\n")).unwrap();
    let (out, smuggled, _) = streamed(dir.path(), &["run", "postgres", "--catalog-source", DEMO_SOURCE]);
    assert_eq!(smuggled.exit(), 1);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SUPERUSER), "a secret in the stream");
    let denial = smuggled.calls().into_iter().find(|c| denied(&c.result)).expect("the tell is denied");
    assert_eq!(denial.request.op, Op::Tell);
    assert!(smuggled.events.iter().any(|e| matches!(e, Event::SecretShown(s) if s.secret == "store-superuser")));
    let broken: Vec<&str> = smuggled.summary().violations.iter().map(|v| v.invariant.as_str()).collect();
    assert!(broken.contains(&"secret-never-shown"), "{broken:?}");

    // A tell of two million empty arguments: kept as its first words and its size.
    let dir = example_catalogue(&plugin("many_empty_args"));
    let (_, flooded, _) = streamed(dir.path(), &["run", "postgres", "--catalog-source", DEMO_SOURCE]);
    let cut = flooded.calls().into_iter().find_map(|c| c.request.cut).expect("the flood is kept cut");
    assert_eq!((cut.words, cut.bytes), (2_000_000, 0));

    // A plugin that never returns: stopped in adopt, the run failed.
    let dir = example_catalogue(&plugin("loops_forever"));
    let (_, stopped, _) =
        streamed(dir.path(), &["run", "postgres", "--catalog-source", DEMO_SOURCE, "--plugin-time", "1s"]);
    let [(_, Outcome::Failed { stop, message })] = stopped.outcomes().as_slice() else {
        panic!("{:?}", stopped.outcomes())
    };
    assert_eq!(stop.as_str(), "guest-time");
    assert!(message.contains("guest time"), "{message}");
    assert_eq!(stopped.exit(), 1);
}

#[test]
fn a_recording_round_trips_through_the_event_types() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let (_, _, record) = streamed(dir.path(), &["run", "--catalog-source", DEMO_SOURCE]);
    let recorded = std::fs::read_to_string(record).unwrap();
    let events: Vec<Event> = recorded.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let written: Vec<String> = events.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
    assert_eq!(written, recorded.lines().collect::<Vec<_>>());
    // And every kind of event a run makes is there to have been round-tripped.
    for kind in ["run", "plan", "say", "started", "call", "outcome", "summary", "end"] {
        assert!(recorded.contains(&format!("{{\"event\":\"{kind}\"")), "no `{kind}` event");
    }
}

/// `record` with its lines changed by `edit`, written to `name` beside it.
fn edited_recording(record: &Path, name: &str, edit: impl FnOnce(&mut Vec<Value>)) -> PathBuf {
    let recorded = std::fs::read_to_string(record).unwrap();
    let mut lines: Vec<Value> = recorded.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    edit(&mut lines);
    let path = record.with_file_name(name);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn replay_error(dir: &Path, recording: &Path) -> String {
    let out = mesh_adopt().args(["replay", recording.to_str().unwrap(), "--json"]).catalogue(dir).output();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    // Nothing is replayed: the stream is the one `error` line, saying what stderr says.
    let stdout = String::from_utf8(out.stdout).unwrap();
    let value: Value = serde_json::from_str(stdout.trim_end()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(invalid(&value), None, "{stdout}");
    let Event::Error(error) = serde_json::from_value(value).unwrap() else { panic!("not an error event: {stdout}") };
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains(&error.message) && error.causes.iter().all(|c| stderr.contains(c)), "{stdout}\n{stderr}");
    stderr
}

#[test]
fn replay_refuses_a_recording_of_another_schema_or_none() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let (_, _, record) = streamed(dir.path(), &["run", "--catalog-source", DEMO_SOURCE]);

    let future = edited_recording(&record, "future.jsonl", |lines| lines[0]["schema"] = json!(7));
    let stderr = replay_error(dir.path(), &future);
    assert!(stderr.contains(&format!("line 1 of the recording `{}`", future.display())), "{stderr}");
    assert!(stderr.contains("is in schema 7: this mesh-adopt reads only schema 6"), "{stderr}");

    let older = edited_recording(&record, "older.jsonl", |lines| {
        lines[0].as_object_mut().unwrap().remove("schema");
    });
    let stderr = replay_error(dir.path(), &older);
    assert!(stderr.contains(&format!("line 1 of the recording `{}`", older.display())), "{stderr}");
    assert!(stderr.contains("has no `schema` version"), "{stderr}");

    let headless = edited_recording(&record, "headless.jsonl", |lines| {
        lines.remove(0);
    });
    let stderr = replay_error(dir.path(), &headless);
    assert!(
        stderr.contains("line 1 of the recording") && stderr.contains("a recording starts with its `run` event"),
        "{stderr}"
    );

    // A call whose answer does not fit its import is refused by line, not misread.
    let mut at = 0;
    let misfit = edited_recording(&record, "misfit.jsonl", |lines| {
        at = lines.iter().position(|l| l["event"] == "call" && l["op"] == "inspect").unwrap();
        lines[at]["result"] = json!({"ok": "{\"image\":\"nats\",\"running\":true}"});
    });
    let stderr = replay_error(dir.path(), &misfit);
    assert!(stderr.contains(&format!("line {} of the recording", at + 1)), "{stderr}");
    assert!(stderr.contains("has an `inspect` call answered with a tell's output"), "{stderr}");
    // The schema refuses the same line: an inspect's answer is a value, not JSON text.
    let line: Value = serde_json::from_str(std::fs::read_to_string(&misfit).unwrap().lines().nth(at).unwrap()).unwrap();
    assert!(invalid(&line).is_some());
}

#[test]
fn the_schema_refuses_the_shapes_it_replaced() {
    let call = json!({
        "event": "call", "module": "postgres", "phase": "adopt", "op": "tell",
        "args": ["module", "add", "/postgres-module.json"], "result": {"ok": ""}, "at_ms": 0.0, "took_ms": 0.1,
    });
    assert_eq!(invalid(&call), None);
    let mut joined = call.clone();
    joined["args"] = json!("module add /postgres-module.json");
    let mut prefixed = call.clone();
    prefixed["result"] = json!({"error": "denied: not the plan's next command"});
    let mut kindless = call.clone();
    kindless["result"] = json!({"error": {"kind": "refused", "message": "no"}});
    let mut unknown = call.clone();
    unknown["ok"] = json!(true);
    let mut untyped = call.clone();
    untyped["op"] = json!("fetch");
    untyped["args"] = json!(["http://127.0.0.1:8222/healthz"]);
    untyped["result"] = json!({"ok": "{\"status\":200,\"body\":\"ok\"}"});
    for (what, line) in [
        ("joined args", joined),
        ("an error as prefixed text", prefixed),
        ("an unknown error kind", kindless),
        ("an unknown field", unknown),
        ("a fetch answered with JSON text", untyped),
        ("a header of another version", json!({"event": "run", "schema": 2})),
        ("an unknown event", json!({"event": "progress"})),
    ] {
        assert!(invalid(&line).is_some(), "{what} is accepted: {line}");
    }
}

#[test]
fn a_command_that_cannot_start_says_so_in_its_stream() {
    // A catalogue that is not there: the command stops before its first event, and a program
    // reading `--json` still gets one line, valid, saying why, with the exit status.
    let out = mesh_adopt().args(["run", "--json", "--catalogue", "/nonexistent/catalogue"]).output();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    let [line] = lines.as_slice() else { panic!("expected one line, got {stdout:?}") };
    let value: Value = serde_json::from_str(line).unwrap();
    assert_eq!(invalid(&value), None, "{line}");
    let Event::Error(error) = serde_json::from_value(value).unwrap() else { panic!("not an error event: {line}") };
    assert_eq!((error.schema, error.exit), (events::SCHEMA, 2));
    assert!(error.message.contains("/nonexistent/catalogue"), "{}", error.message);
}

/// The host's own reads of the mesh show in the stream as they begin, each before what it
/// reads for: the lock before it is taken, the mesh's state before the effect predicted from
/// it, the node after each push, the lock's release before it is let go.
#[test]
fn the_hosts_own_reads_of_the_mesh_stream_as_they_begin() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let (_, demo, _) = streamed(dir.path(), &["run", "--catalog-source", DEMO_SOURCE]);
    let marks: Vec<String> = demo
        .values
        .iter()
        .filter_map(|e| match e["event"].as_str()? {
            "reading" => Some(format!("reading {}", e["what"].as_str()?)),
            "lock" => Some(format!("lock {}", e["outcome"].as_str()?)),
            "effect" => Some("effect".into()),
            _ => None,
        })
        .collect();
    let at = |mark: &str| marks.iter().position(|m| m == mark).unwrap_or_else(|| panic!("no `{mark}` in {marks:?}"));
    assert!(at("reading lock") < at("lock taken"), "{marks:?}");
    assert!(at("lock taken") < at("reading state") && at("reading state") < at("effect"), "{marks:?}");
    assert!(at("reading unlock") < at("lock released"), "{marks:?}");
    assert_eq!(marks.iter().filter(|m| *m == "reading landed").count(), 3, "one a push: {marks:?}");
}

/// A module unusable for a run option is the option's to mend: the run's end says `bad-option`
/// and the option to give otherwise, not the modules to mend.
#[test]
fn an_option_a_module_cannot_keep_ends_the_run_as_a_bad_option_with_its_remedy() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    for (args, remedy) in [
        (["--wait", "5s"], json!({"action": "set-option", "option": "--wait", "must": "a wait of at least 11s"})),
        (
            ["--plugin-wall-time", "60s"],
            json!({"action": "set-limit", "limit": "wall_time", "must": "more than 1620s"}),
        ),
    ] {
        let (_, stream, _) = streamed(dir.path(), &["run", "--catalog-source", DEMO_SOURCE, args[0], args[1]]);
        assert_eq!(stream.exit(), 2);
        let end = stream.values.last().unwrap();
        assert_eq!((&end["code"], &end["remedy"]), (&json!("bad-option"), &remedy), "{args:?}: {end}");
    }
}
