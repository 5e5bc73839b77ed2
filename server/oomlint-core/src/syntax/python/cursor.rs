//! The call being typed at the cursor, for keyword completion. Its argument list is often
//! not closed yet (`SFTConfig(per_dev`), so it is found by scanning the text — strings and
//! comments skipped, brackets counted. Its callee is the dotted name as written; the
//! script's imports resolve it ([`super::Program::resolve`]) like a parsed call's.

use crate::span::Span;

/// A call whose argument list holds the cursor where a keyword goes.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenCall {
    /// The callee's dotted name as written (`["trl", "SFTConfig"]`, `["C"]`).
    pub path: Vec<String>,
    /// The part of the keyword typed so far (empty right after `(` or `,`).
    pub prefix: Span,
    /// The keywords the call already has (the one being typed left out).
    pub given: Vec<String>,
}

/// The call at `offset`, when the cursor is at a keyword position of its arguments (not
/// in a value, a string or a nested bracket) and its callee is a dotted name.
pub fn open_call(source: &str, offset: usize) -> Option<OpenCall> {
    let before = source.get(..offset)?;
    let typed: usize = before.chars().rev().take_while(|c| is_ident(*c)).map(char::len_utf8).sum();
    let prefix = Span::new(offset - typed, offset);
    if before[prefix.start..].starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let head = &before[..prefix.start];
    let open = unclosed_paren(head)?;
    let mut separator = open;
    walk(head, open + 1, |i, b, depth| {
        if b == b',' && depth == 0 {
            separator = i;
        }
        true
    });
    if !head.get(separator + 1..)?.trim().is_empty() {
        return None;
    }
    let path = callee_before(head.get(..open)?)?;
    Some(OpenCall { path, prefix, given: given_keywords(source, open, prefix) })
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Walks the code bytes of `text[from..]` (strings and comments skipped), calling `visit`
/// with each byte's offset and the bracket depth outside it, relative to `from`; stops
/// when `visit` returns false.
fn walk(text: &str, from: usize, mut visit: impl FnMut(usize, u8, isize) -> bool) {
    let bytes = text.as_bytes();
    let mut i = from;
    let mut depth: isize = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'#' => {
                i = bytes[i..].iter().position(|&c| c == b'\n').map_or(bytes.len(), |n| i + n);
                continue;
            }
            b'"' | b'\'' => {
                i = string_end(bytes, i);
                continue;
            }
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        if !visit(i, b, depth) {
            return;
        }
        if matches!(b, b'(' | b'[' | b'{') {
            depth += 1;
        }
        i += 1;
    }
}

/// The offset after the string literal starting at `start` (an unterminated one-line
/// string ends at its line's end).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let triple = bytes.get(start..start + 3) == Some(&[quote, quote, quote][..]);
    let close: &[u8] = if triple { &bytes[start..start + 3] } else { &bytes[start..start + 1] };
    let mut j = start + close.len();
    while j < bytes.len() {
        if bytes[j] == b'\\' {
            j += 2;
        } else if bytes[j..].starts_with(close) {
            return j + close.len();
        } else if !triple && bytes[j] == b'\n' {
            return j;
        } else {
            j += 1;
        }
    }
    bytes.len()
}

/// The innermost bracket left open in `text`, when it is a parenthesis.
fn unclosed_paren(text: &str) -> Option<usize> {
    let mut open: Vec<(usize, u8)> = Vec::new();
    walk(text, 0, |i, b, _| {
        match b {
            b'(' | b'[' | b'{' => open.push((i, b)),
            b')' | b']' | b'}' => {
                open.pop();
            }
            _ => {}
        }
        true
    });
    open.last().filter(|(_, b)| *b == b'(').map(|(i, _)| *i)
}

/// The dotted name written just before an opening parenthesis (`trl.SFTConfig`).
fn callee_before(text: &str) -> Option<Vec<String>> {
    let text = text.trim_end();
    let start =
        text.len() - text.chars().rev().take_while(|&c| is_ident(c) || c == '.').map(char::len_utf8).sum::<usize>();
    let segments: Vec<String> = text[start..].split('.').map(str::to_string).collect();
    if segments.iter().any(String::is_empty) {
        return None;
    }
    Some(segments)
}

/// The keywords given in the call opened at `open`, up to its closing parenthesis (or,
/// unclosed, the first line after the cursor that starts at the left margin).
fn given_keywords(source: &str, open: usize, typing: Span) -> Vec<String> {
    let bytes = source.as_bytes();
    let mut given = Vec::new();
    let mut previous = b'(';
    walk(source, open + 1, |i, b, depth| {
        if depth < 0 {
            return false;
        }
        let line_start = i > typing.end && bytes.get(i.wrapping_sub(1)) == Some(&b'\n');
        if line_start && !b.is_ascii_whitespace() {
            return false;
        }
        if depth > 0 || b.is_ascii_whitespace() {
            return true;
        }
        if matches!(previous, b'(' | b',') && i != typing.start {
            let name: String = source[i..].chars().take_while(|&c| is_ident(c)).collect();
            let after = source[i + name.len()..].trim_start_matches([' ', '\t']);
            if !name.is_empty() && after.starts_with('=') && !after.starts_with("==") {
                given.push(name);
            }
        }
        previous = b;
        true
    });
    given
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_marker(text: &str) -> (String, usize) {
        let offset = text.find('|').expect("a cursor marker");
        (text.replacen('|', "", 1), offset)
    }

    fn open(text: &str) -> Option<OpenCall> {
        let (source, offset) = at_marker(text);
        open_call(&source, offset)
    }

    #[test]
    fn finds_the_call_being_typed_without_a_closing_parenthesis() {
        let call = open("from trl import SFTConfig\nargs = SFTConfig(output_dir=\"o\", per_dev|").unwrap();
        assert_eq!(call.path, ["SFTConfig"]);
        assert_eq!(call.prefix, Span::new(59, 66));
        assert_eq!(call.given, ["output_dir"]);
    }

    #[test]
    fn skips_strings_comments_and_nested_calls() {
        let text = "from trl import GRPOConfig as C\nx = C(\n    # a (comment\n    beta=f(\"(,\", k=1),\n    |\n    num_generations=8,\n)\nprint(1)\n";
        let call = open(text).unwrap();
        assert_eq!(call.path, ["C"]);
        assert_eq!(call.given, ["beta", "num_generations"]);
        let loader =
            open("from unsloth import FastLanguageModel as F\nF.from_pretrained(model_name=\"m\", |)").unwrap();
        assert_eq!(loader.path, ["F", "from_pretrained"]);
    }

    #[test]
    fn no_keyword_position_no_call() {
        assert_eq!(open("from trl import SFTConfig\nSFTConfig(max_length=|"), None, "a value");
        assert_eq!(open("from trl import SFTConfig\nSFTConfig(max_length=[1, |"), None, "inside a list");
        assert_eq!(open("from trl import SFTConfig\nSFTConfig(\"a, |"), None, "inside a string");
        assert_eq!(open("print(|").map(|c| c.path), Some(vec!["print".to_string()]), "any call");
        assert_eq!(open("f()(|"), None, "not a dotted callee");
        assert_eq!(open("from trl import SFTConfig\nSFTConfig()|"), None, "after the call");
        assert_eq!(open("from trl import SFTConfig\nSFTConfig(x 1|"), None, "after a value");
    }

    #[test]
    fn any_offset_of_odd_text_is_safe() {
        let texts = [
            "from trl import SFTConfig as S\nS(é=1, 😀, \"\"\"(\n, a='x\\",
            "SFTConfig(a=(b, [c, {d: (e,",
            "LoraConfig(\n#(\nr=1,\n)) ) ] } x(",
            "\\'\"",
        ];
        for text in texts {
            for offset in 0..=text.len() + 1 {
                let _ = open_call(text, offset);
            }
        }
        let call = open("from trl import SFTConfig as S\nS(é=1, |").unwrap();
        assert_eq!(call.given, ["é"]);
    }

    #[test]
    fn an_unclosed_call_stops_at_the_next_statement() {
        let call = open("from peft import LoraConfig\nLoraConfig(r=8, |\ntrainer = SFTTrainer(alpha=1)\n").unwrap();
        assert_eq!(call.given, ["r"]);
    }
}
