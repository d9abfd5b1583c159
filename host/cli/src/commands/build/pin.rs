//! Writing a plugin's digest into its manifest as an edit of the text: the manifest is what
//! the control plane registers byte for byte, so everything but the pin stays as the author
//! wrote it (formatting, key order, numbers no parser would keep exactly).

use anyhow::{Result, bail};

/// `manifest` with `adopt.sha256` set to `digest`: the value replaced where there is one,
/// else a member added after `adopt.plugin` (or first in `adopt`) on a line of its own,
/// indented as its neighbour. Refuses a manifest without an `adopt` object, and checks that
/// the result reads as the manifest with only the pin changed.
pub fn with_pin(manifest: &str, digest: &str) -> Result<String> {
    let value = format!("\"{digest}\"");
    let bytes = manifest.as_bytes();
    let Some(top) = members(bytes, skip_space(bytes, 0)) else { bail!("the manifest is not a JSON object") };
    let Some(adopt) = top.iter().find(|m| m.key == "adopt") else {
        bail!("the manifest has no `adopt` section to pin the plugin in")
    };
    let Some(inner) = members(bytes, adopt.value.0) else { bail!("the manifest's `adopt` is not an object") };
    let edited = if let Some(pin) = inner.iter().find(|m| m.key == "sha256") {
        format!("{}{value}{}", &manifest[..pin.value.0], &manifest[pin.value.1..])
    } else if let Some(after) = inner.iter().find(|m| m.key == "plugin").or(inner.first()) {
        let line_start = manifest[..after.key_start].rfind('\n').map_or(0, |i| i + 1);
        let indent = &manifest[line_start..after.key_start];
        let separator = if indent.trim().is_empty() { format!("\n{indent}") } else { " ".to_string() };
        // Right after that member's value: a comma that followed it now follows the pin.
        let (cut, tail) = manifest.split_at(after.value.1);
        format!("{cut},{separator}\"sha256\": {value}{tail}")
    } else {
        // `"adopt": {}`: the pin is its only member.
        let open = adopt.value.0;
        format!("{}{{\"sha256\": {value}}}{}", &manifest[..open], &manifest[adopt.value.1..])
    };
    let mut expected: serde_json::Value = serde_json::from_str(manifest)?;
    expected["adopt"]["sha256"] = serde_json::Value::String(digest.to_string());
    let got: serde_json::Value = serde_json::from_str(&edited)?;
    if got != expected {
        bail!("the pin could not be written into the manifest without changing more than the pin");
    }
    Ok(edited)
}

/// One member of an object: its key, where the key's quote starts, and its value's span.
struct Member {
    /// The key, unescaped.
    key: String,
    /// Where the key's opening quote is.
    key_start: usize,
    /// Where the value starts and ends (one past its last byte).
    value: (usize, usize),
}

/// Where the first byte at or after `at` that is not JSON whitespace is.
fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && bytes[at].is_ascii_whitespace() {
        at += 1;
    }
    at
}

/// The members of the object starting at `at` (its `{`), or `None` when there is none.
fn members(bytes: &[u8], at: usize) -> Option<Vec<Member>> {
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    let mut found = Vec::new();
    let mut at = skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return Some(found);
    }
    loop {
        let key_start = at;
        let key_end = string_end(bytes, at)?;
        let key: String = serde_json::from_slice(&bytes[key_start..key_end]).ok()?;
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let value_start = skip_space(bytes, at + 1);
        let value_end = value_end(bytes, value_start)?;
        found.push(Member { key, key_start, value: (value_start, value_end) });
        at = skip_space(bytes, value_end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b'}') => return Some(found),
            _ => return None,
        }
    }
}

/// Where the string starting at `at` (its opening quote) ends, past its closing quote.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Where the value starting at `at` ends.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = at;
            while i < bytes.len() && !matches!(bytes[i], b',' | b'}' | b']') && !bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            Some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PIN: &str = "ab";

    #[test]
    fn a_pin_is_one_line_added_after_the_plugin_and_nothing_else_moves() {
        let manifest = "{\n  \"name\": \"x\",\n  \"big\": 12345678901234567890123,\n  \"adopt\": {\n    \"plugin\": \"adopt.wasm\",\n    \"world\": \"w\"\n  },\n  \"caf\\u00e9\": [1,2]\n}\n";
        let pinned = with_pin(manifest, PIN).unwrap();
        assert_eq!(pinned, manifest.replace("\"adopt.wasm\",", "\"adopt.wasm\",\n    \"sha256\": \"ab\","));
    }

    #[test]
    fn a_pin_already_there_is_replaced_in_place() {
        let manifest = "{\"adopt\": {\"sha256\": \"old\", \"plugin\": \"adopt.wasm\"}, \"n\": 1.50}";
        assert_eq!(
            with_pin(manifest, PIN).unwrap(),
            "{\"adopt\": {\"sha256\": \"ab\", \"plugin\": \"adopt.wasm\"}, \"n\": 1.50}"
        );
    }

    #[test]
    fn a_last_member_and_an_empty_section_take_the_pin_too() {
        assert_eq!(
            with_pin("{\"adopt\": {\"world\": \"w\"}}", PIN).unwrap(),
            "{\"adopt\": {\"world\": \"w\", \"sha256\": \"ab\"}}"
        );
        assert_eq!(with_pin("{\"adopt\": {}}", PIN).unwrap(), "{\"adopt\": {\"sha256\": \"ab\"}}");
    }

    #[test]
    fn a_manifest_without_an_adopt_object_is_refused() {
        for bad in ["[]", "{\"name\": \"x\"}", "{\"adopt\": 1}", "{\"adopt\": {"] {
            assert!(with_pin(bad, PIN).is_err(), "{bad}");
        }
    }
}
