//! Text that comes from a plugin, made safe for a person's terminal. A plugin's say lines,
//! plans, reports, refusals and captured output are shown with every control character and
//! escape sequence made visible, so a plugin can neither clear the screen, set the window
//! title, overwrite a line with `\r`, nor forge a line of the host's own (`postgres
//! adopted`) with a newline. `--json` and the record keep the text exact, JSON-escaped.

use std::fmt::Write as _;

/// `text` on one line: every control character, newlines included, shown as an escape.
pub fn visible(text: &str) -> String {
    escaped(text, false)
}

/// `text` with its line breaks kept and every other control character shown as an escape:
/// for a host-made message (a stop report) that quotes a plugin's output line by line.
pub fn visible_lines(text: &str) -> String {
    escaped(text, true)
}

fn escaped(text: &str, keep_newlines: bool) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_string();
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' if keep_newlines => shown.push('\n'),
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            c if needs_escape(c) => {
                let _ = write!(shown, "\\u{{{:x}}}", c as u32);
            }
            c => shown.push(c),
        }
    }
    shown
}

/// Control characters (C0, DEL, C1) and the invisible marks that reorder or hide text: the
/// soft hyphen, zero-width and joiner marks, bidi controls, line and paragraph separators,
/// word joiners and invisible operators, the byte-order mark, and the tag characters.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_make_every_control_character_visible() {
        assert_eq!(visible("\u{1b}[2J\u{1b}]0;owned\u{7}"), "\\u{1b}[2J\\u{1b}]0;owned\\u{7}");
        assert_eq!(visible("ok\rpostgres adopted"), "ok\\rpostgres adopted");
        assert_eq!(visible("a\npostgres adopted"), "a\\npostgres adopted");
        assert_eq!(visible("\u{9b}31m \u{202e}txt"), "\\u{9b}31m \\u{202e}txt");
        assert_eq!(visible("plain words, ünïcode"), "plain words, ünïcode");
        // Unicode's own line and paragraph separators break lines too.
        assert_eq!(visible("a\u{2028}b\u{2029}c"), "a\\u{2028}b\\u{2029}c");
        // A soft hyphen and the invisible tag characters hide text too.
        assert_eq!(visible("a\u{ad}b\u{e0041}"), "a\\u{ad}b\\u{e0041}");
    }

    #[test]
    fn visible_lines_keeps_line_breaks_only() {
        assert_eq!(visible_lines("one\ntwo\u{1b}[K"), "one\ntwo\\u{1b}[K");
    }
}
