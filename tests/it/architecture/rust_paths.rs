//! The module paths a Rust source file names, read from its text alone: every path of its `use`
//! declarations (trees expanded, `pub use` included) and every path written inline from
//! `crate::`, `super::` or `self::`, each with its line and the inline modules around it.
//!
//! Comments, strings and character literals are blanked first, so a path in a doc comment or
//! a message is not a use. This is a reader of the little of Rust's grammar that paths need,
//! not a parser: it is held to the runtime's sources by the floors test, and to synthetic ones
//! by the tests below.

/// One path a file names, as written: `["crate", "mesh", "lock", "LockHolder"]`, or a `use`
/// path relative to where it is (`["declared", "same_volumes"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedPath {
    /// The line it starts on, from 1.
    pub line: usize,
    /// Its segments; a glob (`*`) and a trailing `self` are left off, so the path ends at the
    /// module or item it reaches.
    pub segments: Vec<String>,
    /// The inline modules (`mod tests { … }`) it is written in, outermost first: `super::`
    /// climbs out of these before it climbs out of the file's own module.
    pub inline_modules: Vec<String>,
    /// Whether it comes from a `use` declaration rather than from code.
    pub from_use: bool,
}

impl NamedPath {
    /// The path as written, for a message.
    pub fn written(&self) -> String {
        self.segments.join("::")
    }
}

/// A token of the blanked source: a word, or one character of punctuation (`::` is one).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Punct(&'static str),
}

/// Every path `text` names (see [`NamedPath`]), in the order written, and every attribute that
/// brings a macro into scope by text rather than by path (`#[macro_use]`, `#[macro_export]`),
/// by line, since a macro so reached names no path this reader could follow.
pub fn named_paths(text: &str) -> (Vec<NamedPath>, Vec<usize>) {
    let tokens = tokens(&code_only(text));
    let mut paths = Vec::new();
    let mut textual_macros = Vec::new();
    // Inline modules open around the current token: each with the brace depth inside it.
    let mut open_modules: Vec<(String, usize)> = Vec::new();
    let mut pending_module: Option<String> = None;
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let (line, token) = &tokens[i];
        match token {
            Token::Punct("{") => {
                depth += 1;
                if let Some(name) = pending_module.take() {
                    open_modules.push((name, depth));
                }
            }
            Token::Punct("}") => {
                if open_modules.last().is_some_and(|(_, at)| *at == depth) {
                    open_modules.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Token::Word(word) if word == "mod" => {
                if let (Some((_, Token::Word(name))), Some((_, Token::Punct("{")))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    pending_module = Some(name.clone());
                }
            }
            Token::Word(word) if word == "macro_use" || word == "macro_export" => textual_macros.push(*line),
            Token::Word(word) if word == "use" => {
                let end = (i..tokens.len()).find(|&j| tokens[j].1 == Token::Punct(";")).unwrap_or(tokens.len());
                let mut trees = Vec::new();
                let mut at = i + 1;
                use_tree(&tokens[..end], &mut at, Vec::new(), &mut trees);
                let inline_modules: Vec<String> = open_modules.iter().map(|(name, _)| name.clone()).collect();
                paths.extend(trees.into_iter().filter(|segments| !segments.is_empty()).map(|segments| NamedPath {
                    line: *line,
                    segments,
                    inline_modules: inline_modules.clone(),
                    from_use: true,
                }));
                i = end;
            }
            Token::Word(word) if ["crate", "super", "self"].contains(&word.as_str()) => {
                let follows_path = i > 0 && tokens[i - 1].1 == Token::Punct("::");
                if !follows_path && tokens.get(i + 1).is_some_and(|(_, t)| *t == Token::Punct("::")) {
                    let mut segments = vec![word.clone()];
                    let mut at = i + 1;
                    while let (Some((_, Token::Punct("::"))), Some((_, Token::Word(next)))) =
                        (tokens.get(at), tokens.get(at + 1))
                    {
                        segments.push(next.clone());
                        at += 2;
                    }
                    paths.push(NamedPath {
                        line: *line,
                        segments,
                        inline_modules: open_modules.iter().map(|(name, _)| name.clone()).collect(),
                        from_use: false,
                    });
                    i = at - 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (paths, textual_macros)
}

/// Expands the use tree starting at `tokens[*at]` under `prefix` into `out`, one path a leaf:
/// `a::{b, c::{self, d as e}, *}` gives `a::b`, `a::c`, `a::c::d` and `a`.
fn use_tree(tokens: &[(usize, Token)], at: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    if tokens.get(*at).is_some_and(|(_, t)| *t == Token::Punct("::")) {
        *at += 1; // A leading `::` names an outside crate: no segment of its own.
    }
    loop {
        match tokens.get(*at).map(|(_, t)| t) {
            Some(Token::Word(word)) => {
                if word != "self" {
                    path.push(word.clone());
                }
                *at += 1;
                match tokens.get(*at).map(|(_, t)| t) {
                    Some(Token::Punct("::")) => *at += 1,
                    Some(Token::Word(as_word)) if as_word == "as" => {
                        *at += 2; // `as name`: the path reached is the same.
                        out.push(path);
                        return;
                    }
                    _ => {
                        out.push(path);
                        return;
                    }
                }
            }
            Some(Token::Punct("*")) => {
                *at += 1;
                out.push(path);
                return;
            }
            Some(Token::Punct("{")) => {
                *at += 1;
                loop {
                    match tokens.get(*at).map(|(_, t)| t) {
                        Some(Token::Punct("}")) => {
                            *at += 1;
                            return;
                        }
                        Some(Token::Punct(",")) => *at += 1,
                        None => return,
                        Some(_) => use_tree(tokens, at, path.clone(), out),
                    }
                }
            }
            _ => {
                out.push(path);
                return;
            }
        }
    }
}

/// The words and punctuation of blanked code, each with its line.
fn tokens(code: &str) -> Vec<(usize, Token)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // A raw identifier (`r#use`) is a name, never the keyword.
            out.push((line, Token::Word(word)));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((line, Token::Punct("::")));
            i += 2;
        } else {
            let punct = match c {
                '{' => Some("{"),
                '}' => Some("}"),
                ';' => Some(";"),
                ',' => Some(","),
                '*' => Some("*"),
                '#' => Some("#"),
                _ => None,
            };
            out.push((line, Token::Punct(punct.unwrap_or("other"))));
            i += 1;
        }
    }
    out
}

/// `text` with every comment, string, byte string, raw string and character literal blanked to
/// spaces, its line breaks kept, so what is left is code and lines still count the same.
pub fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let after_word = i > 0 && is_word(chars[i - 1]);
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut nesting = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    nesting += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    nesting -= 1;
                    out.push_str("  ");
                    i += 2;
                    if nesting == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if !after_word && raw_string_opening(&chars, i).is_some() {
            let (hashes, quote) = raw_string_opening(&chars, i).unwrap();
            let closing: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let mut j = quote + 1;
            while j < chars.len() && !chars[j..].starts_with(&closing) {
                j += 1;
            }
            let end = (j + closing.len()).min(chars.len());
            for &skipped in &chars[i..end] {
                blank(&mut out, skipped);
            }
            i = end;
        } else if c == '"' || (c == 'b' && next == Some('"') && !after_word) {
            let mut j = if c == 'b' { i + 2 } else { i + 1 };
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            for &skipped in &chars[i..end] {
                blank(&mut out, skipped);
            }
            i = end;
        } else if c == '\''
            && let Some(end) = char_literal_end(&chars, i)
        {
            for &skipped in &chars[i..end] {
                blank(&mut out, skipped);
            }
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Where a raw string (`r"…"`, `r#"…"#`, `br##"…"##`) opens at `i`: its number of `#`s and the
/// index of its opening quote; `None` when none does.
fn raw_string_opening(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|c| **c == '#').count();
    (chars.get(j + hashes) == Some(&'"')).then_some((hashes, j + hashes))
}

/// The end (one past the closing quote) of a character literal opening at `i` (`'a'`, `'\n'`,
/// `'\u{1F600}'`, `b'x'` from its quote); `None` for a lifetime or a label (`'a`, `'outer:`).
fn char_literal_end(chars: &[char], i: usize) -> Option<usize> {
    match chars.get(i + 1) {
        Some('\\') => {
            // The escaped character itself may be a quote (`'\''`): the closing one follows it.
            let close = (i + 3..chars.len()).find(|&j| chars[j] == '\'')?;
            Some(close + 1)
        }
        Some(_) if chars.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths of `text`, written out with their lines.
    fn written(text: &str) -> Vec<(usize, String)> {
        named_paths(text).0.iter().map(|p| (p.line, p.written())).collect()
    }

    #[test]
    fn use_trees_are_expanded_to_one_path_a_leaf() {
        let text = "pub(crate) use crate::a::{b, c::{self, d as e}, *};\nuse super::f;\nuse declared::g;\n";
        assert_eq!(
            written(text),
            [
                (1, "crate::a::b"),
                (1, "crate::a::c"),
                (1, "crate::a::c::d"),
                (1, "crate::a"),
                (2, "super::f"),
                (3, "declared::g")
            ]
            .map(|(line, path)| (line, path.to_string()))
        );
    }

    #[test]
    fn inline_paths_are_read_from_code_but_not_from_comments_or_strings() {
        let text = "/// see crate::doc::only\nfn f() {\n    let _ = \"crate::in::a::string\";\n    let c = '\"';\n    let q = '\\'';\n    \
                    let _ = r#\"crate::raw\"#;\n    crate::x::y::z(super::super::w::V, self::v);\n    /* crate::block */\n}\n";
        assert_eq!(
            written(text),
            [(7, "crate::x::y::z"), (7, "super::super::w::V"), (7, "self::v")].map(|(l, p)| (l, p.to_string()))
        );
    }

    #[test]
    fn a_path_knows_the_inline_modules_it_is_written_in() {
        let text = "use crate::a;\nmod tests {\n    use super::*;\n    fn f<'a>(x: &'a str) { crate::b::c(x) }\n}\nuse crate::d;\n";
        let (paths, _) = named_paths(text);
        let modules: Vec<(String, Vec<String>)> =
            paths.iter().map(|p| (p.written(), p.inline_modules.clone())).collect();
        assert_eq!(
            modules,
            [
                ("crate::a".to_string(), vec![]),
                ("super".to_string(), vec!["tests".to_string()]),
                ("crate::b::c".to_string(), vec!["tests".to_string()]),
                ("crate::d".to_string(), vec![]),
            ]
        );
    }

    #[test]
    fn a_macro_brought_in_by_text_is_found() {
        let (_, textual) = named_paths("#[macro_use]\nmod m;\n\n#[macro_export]\nmacro_rules! x { () => {} }\n");
        assert_eq!(textual, [1, 4]);
    }
}
