//! Environment files and shell scripts: variable assignments only.
//!
//! Reads `KEY=value`, `export KEY=value`, `env KEY=value cmd`, inline `KEY=value cmd`
//! prefixes (also across `\` line continuations), single and double quotes, and
//! `${KEY:-default}` (the default is the value when the variable is unset). Only
//! assignments at the start of a command count: `python train.py a=b` sets nothing.
//! Each assignment becomes an entry of the root mapping, in file order; a later one
//! wins. Values that expand other variables keep their raw text and are marked
//! [`ScalarKind::Str`] with `ScalarStyle::Plain` but `text` starting with `$`.

use super::{Comment, Document, Entry, Language, Literal, Mapping, Node, Scalar, ScalarKind, ScalarStyle, Value};
use crate::span::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `.env` files.
    Env,
    /// `sh`/`bash` scripts.
    Shell,
}

/// How an environment file or shell script writes `literal` as a variable's value: plain
/// where nothing in it needs quoting, else single-quoted; None for null (unsetting is no
/// value) and for strings with a single quote.
pub(crate) fn spell(literal: &Literal) -> Option<String> {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-.,:/=+@%".contains(c);
    match literal {
        Literal::Null => None,
        Literal::Str(s) if !s.is_empty() && s.chars().all(safe) => Some(s.clone()),
        Literal::Str(s) if s.contains('\'') => None,
        Literal::Str(s) => Some(format!("'{s}'")),
        other => Some(other.to_string()),
    }
}

pub fn parse(text: &str, dialect: Dialect) -> Document {
    let mut scanner = Scanner { text, bytes: text.as_bytes(), pos: 0, entries: Vec::new(), comments: Vec::new() };
    scanner.run();
    let language = match dialect {
        Dialect::Env => Language::Env,
        Dialect::Shell => Language::Shell,
    };
    let root = Node { span: Span::new(0, text.len()), value: Value::Mapping(Mapping { entries: scanner.entries }) };
    Document { language, root: Some(root), comments: scanner.comments, problems: Vec::new(), program: None }
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    entries: Vec<Entry>,
    comments: Vec<Comment>,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn run(&mut self) {
        while self.pos < self.bytes.len() {
            self.command();
        }
    }

    /// Skips blanks and `\`-newline continuations; stops at a newline.
    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r') => self.pos += 1,
                Some(b'\\') if matches!(self.bytes.get(self.pos + 1), Some(b'\n')) => self.pos += 2,
                Some(b'\\')
                    if self.bytes.get(self.pos + 1) == Some(&b'\r') && self.bytes.get(self.pos + 2) == Some(&b'\n') =>
                {
                    self.pos += 3
                }
                _ => return,
            }
        }
    }

    /// One simple command: leading assignments, then words up to a separator.
    fn command(&mut self) {
        self.skip_blanks();
        for keyword in ["export", "env", "declare -x", "local", "readonly"] {
            if self.text[self.pos..].starts_with(keyword)
                && matches!(self.bytes.get(self.pos + keyword.len()), Some(b' ' | b'\t'))
            {
                self.pos += keyword.len();
                self.skip_blanks();
            }
        }
        while self.assignment() {
            self.skip_blanks();
        }
        self.rest_of_command();
    }

    /// Parses `NAME=value` at the cursor; returns false (cursor unchanged) otherwise.
    fn assignment(&mut self) -> bool {
        let start = self.pos;
        let name_len = self.bytes[start..]
            .iter()
            .enumerate()
            .take_while(|&(i, &b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()))
            .count();
        if name_len == 0 || self.bytes.get(start + name_len) != Some(&b'=') {
            return false;
        }
        let key = self.text[start..start + name_len].to_string();
        let key_span = Span::new(start, start + name_len);
        self.pos = start + name_len + 1;
        let value = self.word();
        let node = Node { span: value.span, value: Value::Scalar(value.scalar) };
        self.entries.push(Entry { key, key_span, value: node });
        true
    }

    /// A shell word at the cursor, unquoted; `${NAME:-default}` of the same
    /// assignment yields its default.
    fn word(&mut self) -> Word {
        let start = self.pos;
        let mut text = String::new();
        let mut style = ScalarStyle::Plain;
        let mut content_span = None;
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b')' => break,
                b'\'' => {
                    let end = self.text[self.pos + 1..].find('\'').map_or(self.bytes.len(), |i| self.pos + 1 + i);
                    text.push_str(&self.text[self.pos + 1..end]);
                    style = ScalarStyle::SingleQuoted;
                    self.pos = (end + 1).min(self.bytes.len());
                }
                b'"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek() {
                        match c {
                            b'"' => break,
                            b'\\' if matches!(self.bytes.get(self.pos + 1), Some(b'"' | b'\\' | b'$' | b'`')) => {
                                text.push(self.bytes[self.pos + 1] as char);
                                self.pos += 2;
                            }
                            _ => {
                                let ch = self.text[self.pos..].chars().next().unwrap_or('\0');
                                text.push(ch);
                                self.pos += ch.len_utf8();
                            }
                        }
                    }
                    self.pos = (self.pos + 1).min(self.bytes.len());
                    style = ScalarStyle::DoubleQuoted;
                }
                b'$' if self.bytes.get(self.pos + 1) == Some(&b'{') => {
                    let close = matching_brace(self.bytes, self.pos + 1);
                    let inner = &self.text[self.pos + 2..close.min(self.bytes.len())];
                    match inner.split_once(":-").or_else(|| inner.split_once('-')) {
                        Some((_, default)) if text.is_empty() => {
                            let default_start = self.pos + 2 + (inner.len() - default.len());
                            content_span = Some(Span::new(default_start, default_start + default.len()));
                            text.push_str(default);
                        }
                        _ => text.push_str(&self.text[self.pos..(close + 1).min(self.bytes.len())]),
                    }
                    self.pos = (close + 1).min(self.bytes.len());
                }
                b'\\' if self.pos + 1 < self.bytes.len() && self.bytes[self.pos + 1] != b'\n' => {
                    let ch = self.text[self.pos + 1..].chars().next().unwrap_or('\\');
                    text.push(ch);
                    self.pos += 1 + ch.len_utf8();
                }
                b'\\' => break,
                _ => {
                    let ch = self.text[self.pos..].chars().next().unwrap_or('\0');
                    text.push(ch);
                    self.pos += ch.len_utf8();
                }
            }
        }
        let span = content_span.unwrap_or(Span::new(start, self.pos));
        Word { span, scalar: Scalar { text, style, kind: ScalarKind::Str } }
    }

    /// Skips the command's words, recording comments, up to the next command start.
    fn rest_of_command(&mut self) {
        loop {
            self.skip_blanks();
            match self.peek() {
                None => return,
                Some(b'\n') => {
                    self.pos += 1;
                    return;
                }
                Some(b';') | Some(b'&') | Some(b'|') | Some(b'(') | Some(b')') | Some(b'{') | Some(b'}') => {
                    self.pos += 1;
                    return;
                }
                Some(b'#') => {
                    let end = self.text[self.pos..].find('\n').map_or(self.bytes.len(), |i| self.pos + i);
                    let end = if self.text[..end].ends_with('\r') { end - 1 } else { end };
                    self.comments.push(Comment { span: Span::new(self.pos, end) });
                    self.pos = end;
                }
                Some(_) => {
                    let before = self.pos;
                    self.word();
                    if self.pos == before {
                        self.pos += 1;
                    }
                }
            }
        }
    }
}

struct Word {
    span: Span,
    scalar: Scalar,
}

/// Index of the `}` closing the `{` at `open` (nested braces count), or the end.
fn matching_brace(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            b'\n' => return i,
            _ => {}
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assignments(text: &str) -> Vec<(String, String, String)> {
        let doc = parse(text, Dialect::Shell);
        doc.root_mapping()
            .unwrap()
            .entries
            .iter()
            .map(|e| {
                let s = e.value.span;
                (e.key.clone(), e.value.as_scalar().unwrap().text.clone(), text[s.start..s.end].to_string())
            })
            .collect()
    }

    #[test]
    fn export_quotes_and_prefixes() {
        let text = "export PYTORCH_CUDA_ALLOC_CONF=\"expandable_segments:False\"\n\
                    CUDA_VISIBLE_DEVICES=0,1 \\\nPYTORCH_ALLOC_CONF='expandable_segments:True' \\\n  torchrun x=1 y=2 \\\n  --z\n";
        let found = assignments(text);
        assert_eq!(
            found,
            vec![
                (
                    "PYTORCH_CUDA_ALLOC_CONF".into(),
                    "expandable_segments:False".into(),
                    "\"expandable_segments:False\"".into()
                ),
                ("CUDA_VISIBLE_DEVICES".into(), "0,1".into(), "0,1".into()),
                ("PYTORCH_ALLOC_CONF".into(), "expandable_segments:True".into(), "'expandable_segments:True'".into()),
            ]
        );
    }

    #[test]
    fn default_expansion_yields_its_default() {
        let text = "export PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True,max_split_size_mb:512}\n";
        let found = assignments(text);
        assert_eq!(found[0].1, "expandable_segments:True,max_split_size_mb:512");
        assert_eq!(found[0].2, found[0].1, "span covers the default only");
    }

    #[test]
    fn comments_and_arguments_are_not_assignments() {
        let text = "# PYTORCH_CUDA_ALLOC_CONF=x\npython train.py data.size=3 # A=B\nA=1; B=2 && C=3\nX=\"a b\" cmd\n";
        let keys: Vec<String> = assignments(text).into_iter().map(|a| a.0).collect();
        assert_eq!(keys, ["A", "B", "C", "X"]);
        assert_eq!(parse(text, Dialect::Shell).comments.len(), 2);
    }

    #[test]
    fn empty_values_and_no_final_newline() {
        let found = assignments("PYTORCH_CUDA_ALLOC_CONF='' \\\nswift rlhf\nZ=1");
        assert_eq!(found[0].1, "");
        assert_eq!(found[1], ("Z".into(), "1".into(), "1".into()));
    }
}
