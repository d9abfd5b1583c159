//! A `--json` line kept within what a line reader takes by default (Go's `bufio.Scanner` stops
//! at 64 KiB): a longer event has its longest texts cut, each marked where it was cut, then,
//! should that not do, its longest lists shortened; the line says how many bytes it left out
//! and where. Words a schema fixes (a code, an outcome) are never cut: only texts of
//! [`LEAST_CUT`] bytes or more are. A record file is never cut: it is what a replay reads, and
//! a replay refuses a stream whose lines were cut.

use serde_json::Value;

/// The most bytes a `--json` line holds, its newline included.
pub const LINE_BYTES: usize = 65_536;

/// The field a cut line carries: `{"bytes_left_out": N, "at": ["/json/pointer", …]}`.
pub const CUT_FIELD: &str = crate::events::LINE_CUT;

/// The mark a cut text ends with.
pub const CUT_MARK: &str = "…[cut]";

/// The shortest text that is cut: far longer than any word the schema fixes.
pub const LEAST_CUT: usize = 256;

/// `line` (one JSON object, without its newline) as a `--json` line: itself when it fits in
/// [`LINE_BYTES`] with its newline, else with its longest texts cut until it does.
pub fn bounded(line: &str) -> std::borrow::Cow<'_, str> {
    if line.len() < LINE_BYTES {
        return line.into();
    }
    let Ok(mut value) = serde_json::from_str::<Value>(line) else { return line.into() };
    let mut left_out = 0usize;
    let mut at: Vec<String> = Vec::new();
    // Room for the mark of what was cut, whatever it grows to.
    let room = LINE_BYTES - 1 - 4096;
    loop {
        let length = serde_json::to_string(&value).map(|s| s.len()).unwrap_or(0);
        if length <= room {
            break;
        }
        let Some((pointer, text_length)) = longest_text(&value, String::new()).filter(|(_, l)| *l >= LEAST_CUT) else {
            // No text long enough to cut: the longest list loses its last items.
            let Some(pointer) = longest_list(&value, String::new()) else { break };
            let Some(Value::Array(items)) = value.pointer_mut(&pointer) else { break };
            // As many items as the line is over by, counted as JSON with their commas.
            let mut removed = 0;
            while removed < length - room {
                let Some(last) = items.pop() else { break };
                removed += serde_json::to_string(&last).map(|s| s.len() + 1).unwrap_or(1);
            }
            left_out += removed;
            if !at.contains(&pointer) {
                at.push(pointer);
            }
            continue;
        };
        let Some(Value::String(text)) = value.pointer_mut(&pointer) else { break };
        // The serialised text may be longer than the text (escapes): cut by the excess, at a
        // character's boundary, and measure again.
        let excess = length - room;
        let mut keep = text_length.saturating_sub(excess + CUT_MARK.len());
        while !text.is_char_boundary(keep) {
            keep -= 1;
        }
        left_out += text.len() - keep;
        text.truncate(keep);
        text.push_str(CUT_MARK);
        if !at.contains(&pointer) {
            at.push(pointer);
        }
    }
    if let Value::Object(object) = &mut value {
        object.insert(CUT_FIELD.into(), serde_json::json!({ "bytes_left_out": left_out, "at": at }));
    }
    serde_json::to_string(&value).map(Into::into).unwrap_or_else(|_| line.into())
}

/// The non-empty list in `value` that is longest as JSON, by its JSON Pointer.
fn longest_list(value: &Value, pointer: String) -> Option<String> {
    fn walk(value: &Value, pointer: String, best: &mut Option<(String, usize)>) {
        let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
        match value {
            Value::Array(items) => {
                let length = serde_json::to_string(value).map(|s| s.len()).unwrap_or(0);
                if !items.is_empty() && best.as_ref().is_none_or(|(_, l)| length > *l) {
                    *best = Some((pointer.clone(), length));
                }
                for (i, v) in items.iter().enumerate() {
                    walk(v, format!("{pointer}/{i}"), best);
                }
            }
            Value::Object(object) => {
                for (key, v) in object {
                    walk(v, format!("{pointer}/{}", escape(key)), best);
                }
            }
            _ => {}
        }
    }
    let mut best = None;
    walk(value, pointer, &mut best);
    best.map(|(pointer, _)| pointer)
}

/// The longest string in `value`, by its JSON Pointer and length in bytes.
fn longest_text(value: &Value, pointer: String) -> Option<(String, usize)> {
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
    match value {
        Value::String(text) => Some((pointer, text.len())),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| longest_text(v, format!("{pointer}/{i}")))
            .max_by_key(|(_, length)| *length),
        Value::Object(object) => object
            .iter()
            .filter(|(key, _)| key.as_str() != "event")
            .filter_map(|(key, v)| longest_text(v, format!("{pointer}/{}", escape(key))))
            .max_by_key(|(_, length)| *length),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_line_is_itself_and_a_long_one_is_cut_to_fit_and_says_so() {
        let short = r#"{"event":"say","module":"postgres","line":"hello"}"#;
        assert_eq!(bounded(short), short);
        let output = "é\"\n".repeat(200_000);
        let line = serde_json::json!({"event": "call", "module": "nats", "result": {"ok": output}, "args": ["x"]});
        let line = serde_json::to_string(&line).unwrap();
        let cut = bounded(&line);
        assert!(cut.len() < LINE_BYTES, "{}", cut.len());
        let value: Value = serde_json::from_str(&cut).unwrap();
        assert_eq!(value[CUT_FIELD]["at"], serde_json::json!(["/result/ok"]));
        let kept = value["result"]["ok"].as_str().unwrap();
        assert!(kept.ends_with(CUT_MARK));
        let left_out = value[CUT_FIELD]["bytes_left_out"].as_u64().unwrap() as usize;
        assert_eq!(kept.len() - CUT_MARK.len() + left_out, output.len(), "every byte is kept or counted");
        assert_eq!(value["args"], serde_json::json!(["x"]));
    }

    #[test]
    fn many_short_words_are_never_cut_and_their_list_is_shortened_instead() {
        let modules: Vec<String> = (0..20_000).map(|i| format!("m{i:05}")).collect();
        let line = serde_json::json!({"event": "end", "exit": 1, "code": "earlier-module-failed",
            "remedy": {"action": "mend-modules", "modules": modules}});
        let line = serde_json::to_string(&line).unwrap();
        let cut = bounded(&line);
        assert!(cut.len() < LINE_BYTES, "{}", cut.len());
        let value: Value = serde_json::from_str(&cut).unwrap();
        assert_eq!(
            (value["code"].as_str(), value["remedy"]["action"].as_str()),
            (Some("earlier-module-failed"), Some("mend-modules"))
        );
        assert_eq!(value[CUT_FIELD]["at"], serde_json::json!(["/remedy/modules"]));
        let kept = value["remedy"]["modules"].as_array().unwrap();
        assert!(!kept.is_empty() && kept.len() < 20_000);
        assert!(kept.iter().all(|m| m.as_str().unwrap().len() == 6), "no module name was cut");
    }
}
