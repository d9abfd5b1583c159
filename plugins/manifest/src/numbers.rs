//! Numbers as a JSON document writes them, judged on their text: which of them lie beyond
//! ±2^53, where readers of JSON stop agreeing on a number's value.
//!
//! A reader that holds numbers as 64-bit floats (serde_json as the host builds it, JavaScript)
//! takes `18446744073709551616` for the nearest float and `9007199254740993` for
//! `9007199254740992`; Python's reads both exactly. Within ±2^53 (I-JSON's bound, RFC 7493)
//! every integer is one value to all of them, so a manifest or a foundation bundle, which the
//! host and a node must both read to one spec digest (RFC 8785, docs/push-rule.md), keeps its
//! numbers there. Whether a number does is decided on its text — its digits and exponent,
//! exactly — never on a float that has already rounded it: `9007199254740993.0` reads as 2^53
//! as a float, and is beyond it.

use std::fmt;

/// 2^53: the largest magnitude at which every integer has one value to every reader of JSON.
pub const SAFE_LIMIT: u64 = 1 << 53;

/// [`SAFE_LIMIT`]'s sixteen decimal digits: the integer part a number's digits are compared with.
const SAFE_LIMIT_DIGITS: &str = "9007199254740992";

/// How deep a document may nest: serde_json's own limit, so no document it reads is too deep here.
const DEEPEST: usize = 128;

/// A number a document writes beyond ±2^53: where, and as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeyondSafeRange {
    /// Where the number is, as a JSON Pointer (RFC 6901): `/resources/0/environment/SIZE`.
    pub pointer: String,
    /// The number as the document writes it, e.g. `1e16`.
    pub text: String,
}

/// ``the number `1e16` at `/resources/0/user` is beyond ±2^53 …``: what a refusal names.
impl fmt::Display for BeyondSafeRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the number `{}` at `{}` is beyond ±2^53 ({SAFE_LIMIT}), where readers of JSON stop agreeing on a \
             number's value (one rounds it to a 64-bit float, another keeps it exact), so the host and a node \
             could digest it apart",
            self.text,
            pointer_shown(&self.pointer)
        )
    }
}

/// A pointer as a message shows it: the whole document's is empty, so it is named.
fn pointer_shown(pointer: &str) -> &str {
    if pointer.is_empty() { "the document's top" } else { pointer }
}

/// The first number of the JSON document `bytes`, in the order it is written, whose value is
/// beyond ±2^53 ([`beyond_safe_range`]); `Err` names where `bytes`, read up to that number,
/// stop being JSON.
pub fn first_beyond_safe_range(bytes: &[u8]) -> Result<Option<BeyondSafeRange>, String> {
    let mut walk = Walk { bytes, at: 0, path: Vec::new(), found: None };
    walk.value(0)?;
    walk.blank();
    if walk.found.is_none() && walk.at < bytes.len() {
        return Err(format!("something follows the document at byte {}", walk.at));
    }
    Ok(walk.found)
}

/// Whether the JSON number `text` (`-?int(.frac)?([eE][+-]?exp)?`) has a value beyond
/// ±2^53, decided exactly on its digits: `9007199254740992`, `9007199254740992.0` and
/// `-0` are not; `9007199254740993`, `9007199254740992.5`, `1e16` and
/// `18446744073709551616` are.
pub fn beyond_safe_range(text: &str) -> bool {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], &unsigned[at + 1..]),
        None => (unsigned, ""),
    };
    let (integer, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // The value is DIGITS × 10^(exponent − fraction's length), DIGITS the integer's and the
    // fraction's digits written together.
    let digits: String = [integer, fraction].concat();
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return false; // zero, however written: `-0` is 0
    }
    let significant = digits.trim_end_matches('0');
    // How many digits the value's integer part has.
    let integer_digits = digits.len() as i128 - fraction.len() as i128 + saturated_exponent(exponent);
    let limit_digits = SAFE_LIMIT_DIGITS.len() as i128;
    if integer_digits != limit_digits {
        return integer_digits > limit_digits;
    }
    // As many digits as 2^53: compare the integer part, and a fraction beyond an equal one.
    let head: String = significant.chars().chain(std::iter::repeat('0')).take(SAFE_LIMIT_DIGITS.len()).collect();
    head.as_str() > SAFE_LIMIT_DIGITS || (head == SAFE_LIMIT_DIGITS && significant.len() > SAFE_LIMIT_DIGITS.len())
}

/// An exponent's value, held within ±10^30: a document's digits could never outweigh more.
fn saturated_exponent(text: &str) -> i128 {
    const BOUND: i128 = 1_000_000_000_000_000_000_000_000_000_000;
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = digits.bytes().fold(0i128, |value, digit| (value * 10 + i128::from(digit - b'0')).min(BOUND));
    if negative { -magnitude } else { magnitude }
}

/// A walk through a JSON document that keeps the path to where it is and stops at the first
/// number beyond ±2^53.
struct Walk<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The keys and indices leading to the value being read, each as a pointer writes it.
    path: Vec<String>,
    found: Option<BeyondSafeRange>,
}

impl Walk<'_> {
    fn value(&mut self, depth: usize) -> Result<(), String> {
        if depth > DEEPEST {
            return Err(format!("the document nests deeper than {DEEPEST} at byte {}", self.at));
        }
        self.blank();
        match self.bytes.get(self.at) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(drop),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word("true"),
            Some(b'f') => self.word("false"),
            Some(b'n') => self.word("null"),
            _ => Err(self.unexpected("a value")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), String> {
        self.at += 1;
        self.blank();
        if self.eat(b'}') {
            return Ok(());
        }
        loop {
            self.blank();
            let key = self.string()?;
            let key: String = serde_json::from_slice(key).map_err(|e| format!("a key is not a JSON string: {e}"))?;
            self.blank();
            if !self.eat(b':') {
                return Err(self.unexpected("`:`"));
            }
            self.path.push(key.replace('~', "~0").replace('/', "~1"));
            self.value(depth + 1)?;
            self.path.pop();
            if self.found.is_some() {
                return Ok(());
            }
            self.blank();
            if self.eat(b'}') {
                return Ok(());
            }
            if !self.eat(b',') {
                return Err(self.unexpected("`,` or `}`"));
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), String> {
        self.at += 1;
        self.blank();
        if self.eat(b']') {
            return Ok(());
        }
        for index in 0usize.. {
            self.path.push(index.to_string());
            self.value(depth + 1)?;
            self.path.pop();
            if self.found.is_some() {
                return Ok(());
            }
            self.blank();
            if self.eat(b']') {
                return Ok(());
            }
            if !self.eat(b',') {
                return Err(self.unexpected("`,` or `]`"));
            }
        }
        unreachable!("an array ends before its indices run out")
    }

    /// A string's bytes, its quotes included.
    fn string(&mut self) -> Result<&[u8], String> {
        let start = self.at;
        if !self.eat(b'"') {
            return Err(self.unexpected("a string"));
        }
        while let Some(&byte) = self.bytes.get(self.at) {
            self.at += if byte == b'\\' { 2 } else { 1 };
            if byte == b'"' {
                return Ok(&self.bytes[start..self.at]);
            }
        }
        Err(format!("the string at byte {start} does not end"))
    }

    fn number(&mut self) -> Result<(), String> {
        let start = self.at;
        while self.bytes.get(self.at).is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).expect("ASCII is UTF-8");
        if !is_json_number(text) {
            return Err(format!("`{text}` at byte {start} is not a JSON number"));
        }
        if beyond_safe_range(text) {
            let pointer = self.path.iter().map(|part| format!("/{part}")).collect();
            self.found = Some(BeyondSafeRange { pointer, text: text.to_string() });
        }
        Ok(())
    }

    fn word(&mut self, word: &str) -> Result<(), String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.unexpected(word))
        }
    }

    fn blank(&mut self) {
        while self.bytes.get(self.at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        let here = self.bytes.get(self.at) == Some(&byte);
        self.at += usize::from(here);
        here
    }

    fn unexpected(&self, wanted: &str) -> String {
        match self.bytes.get(self.at) {
            Some(byte) => format!("expected {wanted} at byte {}, found `{}`", self.at, byte.escape_ascii()),
            None => format!("expected {wanted} at byte {}, found the end", self.at),
        }
    }
}

/// Whether `text` is a number as JSON's grammar (RFC 8259) writes one.
fn is_json_number(text: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (integer, fraction) = match mantissa.split_once('.') {
        Some((integer, fraction)) => (integer, Some(fraction)),
        None => (mantissa, None),
    };
    let integer_ok = digits(integer) && (integer == "0" || !integer.starts_with('0'));
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    integer_ok && fraction.is_none_or(digits) && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_judged_exactly_on_its_text() {
        // (text, beyond ±2^53)
        let cases = [
            ("0", false),
            ("-0", false),
            ("-0.0e-999999999999999999999999999999999999", false),
            ("9007199254740992", false),
            ("-9007199254740992", false),
            ("9007199254740992.0", false),
            ("9007199254740992.000", false),
            ("900719925474099.2e1", false),
            ("90071992547409920e-1", false),
            ("0.9007199254740992e16", false),
            ("9007199254740991.999999999", false),
            ("1e15", false),
            ("1.5", false),
            ("1e-7", false),
            ("5e-324", false),
            ("9007199254740993", true),
            ("-9007199254740993", true),
            ("9007199254740993.0", true),
            ("9007199254740992.5", true),
            ("9007199254740992.0000001", true),
            ("900719925474099.3e1", true),
            ("1e16", true),
            ("1E16", true),
            ("1e+16", true),
            ("10000000000000000", true),
            ("18446744073709551616", true),
            ("-18446744073709551616", true),
            ("1.7976931348623157e308", true),
            ("1e999999999999999999999999999999999999999", true),
        ];
        for (text, beyond) in cases {
            assert_eq!(beyond_safe_range(text), beyond, "{text}");
        }
    }

    #[test]
    fn the_first_number_beyond_is_named_by_its_pointer() {
        let found = |text: &str| first_beyond_safe_range(text.as_bytes()).unwrap();
        assert_eq!(found(r#"{"a": [1, 2.5, -0, 9007199254740992], "b": {"c": "18446744073709551616"}}"#), None);
        assert_eq!(
            found(r#"{"a": [1, 2], "b": {"c": 9007199254740993, "d": 1e16}}"#),
            Some(BeyondSafeRange { pointer: "/b/c".into(), text: "9007199254740993".into() })
        );
        assert_eq!(
            found(r#"{"a/b": {"~x": [0, 1e16]}}"#),
            Some(BeyondSafeRange { pointer: "/a~1b/~0x/1".into(), text: "1e16".into() })
        );
        assert_eq!(found(r#"{"\u00e9\"": 1e16}"#).unwrap().pointer, "/é\"");
        assert_eq!(found("18446744073709551616").unwrap().pointer, "");
        let shown = found("[18446744073709551616]").unwrap().to_string();
        assert!(shown.starts_with("the number `18446744073709551616` at `/0` is beyond ±2^53 (9007199254740992)"));
    }

    #[test]
    fn bytes_that_are_not_json_are_said_to_be_not() {
        for broken in ["", "{", "[1,", r#"{"a" 1}"#, "[01]", "[1.]", "[-]", "[1e]", "tru", r#""open"#, "[1] [2]"] {
            assert!(first_beyond_safe_range(broken.as_bytes()).is_err(), "{broken:?} was taken for JSON");
        }
        let deep = format!("{}{}", "[".repeat(DEEPEST + 2), "]".repeat(DEEPEST + 2));
        assert!(first_beyond_safe_range(deep.as_bytes()).unwrap_err().contains("deeper than 128"));
    }
}
