//! `--json` lines within 65,536 bytes, as a line reader takes them by default: a megabyte of
//! a command's output on the live stand-ins is cut in the stream and marked, kept whole in the
//! record, and the record replays while the cut stream is refused by name.

use serde_json::Value;

use crate::events::invalid;
use crate::live::StandIn;
use crate::lock::{catalogue, run};
use crate::support::mesh_adopt;

#[test]
fn a_megabyte_of_output_is_cut_in_the_stream_and_kept_whole_in_the_record() {
    let standin = StandIn::new();
    // A MiB of output from `assign`, the most the configuration keeps of it and more.
    std::fs::write(standin.path().join("flood-assign"), "1").unwrap();
    let config = standin.config(None);
    let dir = catalogue();
    let out = run(&config, dir.path(), "run.jsonl", &["--json"]).output();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut cut = Vec::new();
    for (number, line) in stdout.split_inclusive('\n').enumerate() {
        assert!(line.len() <= 65_536, "line {} is {} bytes with its newline", number + 1, line.len());
        let value: Value = serde_json::from_str(line).unwrap();
        assert_eq!(invalid(&value), None, "line {}: {line}", number + 1);
        if let Some(marked) = value.get("line_cut") {
            cut.push((value.clone(), marked.clone()));
        }
    }
    assert_eq!(cut.len(), 1, "one call carried the flood: {:?}", cut.iter().map(|(_, m)| m).collect::<Vec<_>>());
    let (call, marked) = &cut[0];
    assert_eq!(call["event"], "call");
    let left_out = marked["bytes_left_out"].as_u64().unwrap();
    let pointer = marked["at"][0].as_str().unwrap();
    let kept = call.pointer(pointer).and_then(Value::as_str).unwrap();
    assert!(kept.ends_with("…[cut]"), "{}", &kept[kept.len().saturating_sub(40)..]);
    // The record keeps every byte of the same call: what was kept, and what was left out.
    let record = std::fs::read_to_string(dir.path().join("run.jsonl")).unwrap();
    let whole: Value = record
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["event"] == "call" && e["args"] == call["args"])
        .unwrap();
    let all = whole.pointer(pointer).and_then(Value::as_str).unwrap();
    assert_eq!(all.len() as u64, (kept.len() - "…[cut]".len()) as u64 + left_out);
    assert!(record.lines().any(|l| l.len() > 65_536), "the record was cut too");
    // The record replays; the cut stream is refused, naming the line and why.
    let replayed = mesh_adopt().args(["replay"]).arg(dir.path().join("run.jsonl")).catalogue(dir.path()).output();
    assert_eq!(replayed.status.code(), Some(0), "{}", String::from_utf8_lossy(&replayed.stdout));
    let stream = dir.path().join("stream.jsonl");
    std::fs::write(&stream, &stdout).unwrap();
    let refused = mesh_adopt().args(["replay"]).arg(&stream).catalogue(dir.path()).output();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(said.contains("was cut to fit a `--json` line"), "{said}");
    assert!(said.contains(&format!("({left_out} bytes left out)")), "{said}");
}

/// The one `error` line of a command that could not start is bounded too, and its words the
/// schema fixes are kept: a catalogue path of 130,000 bytes, named in the message.
#[test]
fn an_error_line_naming_a_huge_path_is_bounded_and_valid() {
    let path = format!("/tmp/{}", "a".repeat(130_000));
    let out = mesh_adopt().args(["check", "--json", "--catalogue", &path]).output();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{}", &stdout[..200.min(stdout.len())]);
    assert!(stdout.len() <= 65_536, "{} bytes", stdout.len());
    let line: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(invalid(&line), None);
    assert_eq!((&line["event"], &line["exit"]), (&"error".into(), &2.into()));
    assert!(line["line_cut"]["bytes_left_out"].as_u64().unwrap() > 60_000, "{}", line["line_cut"]);
}
