//! The JSON Canonicalization Scheme (RFC 8785, JCS): the one canonical form of a JSON value
//! that the push rule's spec digest is taken of (docs/push-rule.md), so that the host, the
//! simulated node, the live stand-ins and the reference node, each writing it on its own, write
//! the same bytes. Held to the shared vectors of `tests/jcs/vectors.json`.
//!
//! Objects have their keys sorted by UTF-16 code units, arrays keep their order, nothing is
//! written between tokens; strings escape only `"`, `\` and the control characters (`\b`, `\t`,
//! `\n`, `\f`, `\r`, others `\u00xx` in lower-case hex) and are otherwise UTF-8 as they are;
//! numbers are written as ECMAScript's `Number.prototype.toString` writes the 64-bit float they
//! are (`1e+21`, `1e-7`, `0.000001`, `4.5`, `-0` as `0`).
//!
//! The float is the one a correctly rounded reading of the number's text gives: serde_json
//! rounds twice on its own, so this crate asks it for `float_roundtrip` (Cargo.toml). Every
//! value serde_json holds has a canonical form: it refuses a lone surrogate and a number no
//! float holds (`1e400`) as it reads them, and the readers of manifests and bundles refuse a
//! key given twice.

use serde_json::Value;

/// The canonical form of `value` (RFC 8785). Every value serde_json holds has one: its
/// numbers are finite, its strings whole Unicode, its keys given once.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(yes) => out.push_str(if *yes { "true" } else { "false" }),
        Value::Number(number) => {
            // An integer serde_json holds exactly is taken to the float nearest it, as a
            // reader holding numbers as floats takes its text.
            out.push_str(&number_text(number.as_f64().expect("a JSON number is a finite float")))
        }
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            let mut entries: Vec<(&String, &Value)> = fields.iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

/// A string with only the escapes JCS allows.
fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if c < ' ' => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A finite float as ECMAScript's `Number.prototype.toString` writes it (ECMA-262,
/// Number::toString): the shortest digits that read back as the same float, then fixed
/// notation for magnitudes from 1e-7 up to 1e21, exponent notation (`1e+21`, `1.5e-7`) beyond.
pub fn number_text(x: f64) -> String {
    if x == 0.0 {
        return "0".into(); // -0 too
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let (digits, n) = shortest_digits(x.abs());
    // The value is 0.DIGITS × 10^n: `n` is where the decimal point falls after the first digit.
    let k = digits.len() as i32;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat(-n as usize))
    } else {
        let exponent = n - 1;
        let sign = if exponent < 0 { '-' } else { '+' };
        let mantissa = if k == 1 { digits.clone() } else { format!("{}.{}", &digits[..1], &digits[1..]) };
        format!("{mantissa}e{sign}{}", exponent.abs())
    };
    format!("{sign}{body}")
}

/// The shortest decimal digits that read back as `x` (positive, finite), without leading or
/// trailing zeros, and `n` such that `x` is 0.DIGITS × 10^n: the digits Rust's `{:e}` writes
/// (the shortest that read back, the nearer when two are as short), but for a tie, which
/// ECMAScript breaks to the even digit where Rust rounds up.
fn shortest_digits(x: f64) -> (String, i32) {
    let (digits, n) = scientific_digits(&format!("{x:e}"));
    let odd = digits.as_bytes().last().is_some_and(|last| last % 2 == 1);
    match odd.then(|| lower_of_a_tie(x, &digits, n)).flatten() {
        Some(even) => (even, n),
        None => (digits, n),
    }
}

/// When `x` lies exactly halfway between `digits` and the digits one below them in the last
/// place, and those read back as `x` too, those: the even one of the tie.
fn lower_of_a_tie(x: f64, digits: &str, n: i32) -> Option<String> {
    // Exact: a 64-bit float has at most 767 significant decimal digits.
    let (exact, exact_n) = scientific_digits(&format!("{x:.800e}"));
    if exact_n != n || exact.len() != digits.len() + 1 || !exact.ends_with('5') {
        return None;
    }
    let lower = exact[..digits.len()].trim_end_matches('0').to_string();
    let reads_back = format!("0.{lower}e{n}").parse::<f64>().is_ok_and(|y| y == x);
    (reads_back && lower != digits).then_some(lower)
}

/// The significant digits and `n` (the value is 0.DIGITS × 10^n) of a number Rust writes in
/// `{:e}` form (`1.25e-7`), trailing zeros dropped.
fn scientific_digits(written: &str) -> (String, i32) {
    let (mantissa, exponent) = written.split_once('e').expect("`{:e}` writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a decimal exponent");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits.trim_end_matches('0').to_string(), exponent + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The canonical form of the JSON text `text`, read as the host reads a manifest or a bundle
    /// (serde_json, a key given twice refused); `Err` says why it has none.
    fn canonical_text(text: &str) -> Result<String, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        mesh_adopt_manifest::validity::no_key_twice(text.as_bytes())?;
        Ok(canonical(&value))
    }

    #[test]
    fn every_shared_vector_is_written_and_judged_as_it_says() {
        // The shared vectors every implementation of the canonical form is held to.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/jcs/vectors.json");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("`{path}` cannot be read: {e}"));
        let file: Value = serde_json::from_str(&text).expect("the vectors are JSON");
        let vectors = file["vectors"].as_array().expect("`vectors` lists the vectors");
        assert!(vectors.len() >= 30, "only {} vectors", vectors.len());
        let mut failures = Vec::new();
        for vector in vectors {
            let name = vector["name"].as_str().expect("every vector is named");
            let input = vector["input"].as_str().expect("every vector has its input text");
            let written = canonical_text(input);
            match (&vector["canonical"], &written) {
                (Value::String(expected), Ok(written)) if written == expected => {}
                (Value::Null, Err(_)) => {}
                (expected, written) => failures.push(format!("{name}: expected {expected}, wrote {written:?}")),
            }
            // A reader of manifests and bundles refuses a number beyond ±2^53, where it is.
            let beyond = mesh_adopt_manifest::numbers::first_beyond_safe_range(input.as_bytes());
            let refused_at = beyond.as_ref().ok().and_then(|b| b.as_ref().map(|b| b.pointer.as_str()));
            if refused_at != vector["refused_at"].as_str() {
                failures.push(format!("{name}: a reader refuses at {:?}, expected {}", beyond, vector["refused_at"]));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn numbers_are_written_as_ecmascript_writes_them() {
        // (the float, as its bits where the RFC's appendix gives them, and what is written)
        let cases = [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (100.0, "100"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (0.1, "0.1"),
            (123.456, "123.456"),
            (f64::from_bits(0x0000000000000001), "5e-324"),
            (f64::from_bits(0x7fefffffffffffff), "1.7976931348623157e+308"),
            (f64::from_bits(0x4340000000000001), "9007199254740994"),
            (f64::from_bits(0x44b52d02c7e14af5), "9.999999999999997e+22"),
            (f64::from_bits(0x444b1ae4d6e2ef4f), "999999999999999900000"),
            (f64::from_bits(0x3eb0c6f7a0b5ed8c), "9.999999999999997e-7"),
            (f64::from_bits(0x43143ff3c1cb0959), "1424953923781206.2"),
        ];
        for (x, written) in cases {
            assert_eq!(number_text(x), written, "{:#x}", x.to_bits());
        }
    }

    #[test]
    fn keys_are_sorted_by_utf16_code_units_not_by_code_points() {
        // U+1F600 is D83D DE00 in UTF-16, before U+FB33; by code point it comes after.
        let value = serde_json::json!({"\u{fb33}": 1, "\u{1f600}": 2, "\u{e000}": 3, "a": 4});
        assert_eq!(canonical(&value), "{\"a\":4,\"\u{1f600}\":2,\"\u{e000}\":3,\"\u{fb33}\":1}");
    }

    #[test]
    fn a_key_given_twice_or_a_lone_surrogate_has_no_canonical_form() {
        assert!(canonical_text(r#"{"a": 1, "a": 2}"#).unwrap_err().contains("given twice"));
        assert!(canonical_text(r#"["\ud800"]"#).unwrap_err().contains("escape"));
        assert!(canonical_text("[1e400]").unwrap_err().contains("number out of range"));
    }
}
