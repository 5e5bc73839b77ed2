//! YAML through `saphyr-parser` events, built into the spanned [`Document`].
//!
//! Scalars resolve like PyYAML's YAML 1.1 resolver (what LitGPT, TRL, Axolotl and
//! accelerate load configs with): `yes`/`no`/`on`/`off` are booleans, `~` is null.
//! One deliberate difference: exponent floats without a dot (`1e-5`) resolve as floats,
//! because every framework converts them through its typed argument parser.
//! Aliases are expanded under a node budget, merge keys (`<<`) are applied, duplicate
//! keys are reported and the last value wins, and parsing stops at the first error.

use super::chars::CharOffsets;
use super::{
    hash_comments, Document, Entry, Language, Literal, Mapping, Node, ProblemKind, Scalar, ScalarKind, ScalarStyle,
    SyntaxProblem, Value, MAX_DEPTH,
};
use crate::span::Span;
use crate::HashMap;
use saphyr_parser::{Event, Parser, ScalarStyle as YamlStyle};
use std::borrow::Cow;

/// At most this many nodes may be produced by alias expansion in one document.
const ALIAS_NODE_BUDGET: usize = 100_000;

pub fn parse(text: &str) -> Document {
    // PyYAML does not check the indentation of lines inside flow collections; saphyr
    // does. To read what the frameworks read, a line rejected for its indentation
    // inside a flow collection is joined to the previous one (the newline becomes a
    // space, so every byte offset stays valid) and the text is parsed again.
    let mut patched: Option<String> = None;
    for _ in 0..MAX_FLOW_REPAIRS {
        let source = patched.as_deref().unwrap_or(text);
        let (builder, error_at) = build(source);
        match error_at.and_then(|at| flow_line_break(source, at)) {
            Some(newline) => {
                let mut bytes = patched.take().unwrap_or_else(|| text.to_string()).into_bytes();
                bytes[newline] = b' ';
                if newline > 0 && bytes[newline - 1] == b'\r' {
                    bytes[newline - 1] = b' ';
                }
                patched = String::from_utf8(bytes).ok();
                if patched.is_none() {
                    return builder.finish(text);
                }
            }
            None => return builder.finish(text),
        }
    }
    build(patched.as_deref().unwrap_or(text)).0.finish(text)
}

const MAX_FLOW_REPAIRS: usize = 64;

/// Builds the tree; also returns where an indentation error stopped the parser.
fn build(text: &str) -> (Builder, Option<usize>) {
    let offsets = CharOffsets::new(text);
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    let mut documents = 0;
    let mut indentation_error = None;
    while let Some(next) = parser.next_event() {
        let (event, span) = match next {
            Ok(ok) => ok,
            Err(error) => {
                let at = offsets.byte(error.marker().index());
                if error.info().contains("indentation") {
                    indentation_error = Some(at);
                }
                builder.fail(error_span(text, at, error.info()), error.info().to_string());
                break;
            }
        };
        let span = Span::new(offsets.byte(span.start.index()), offsets.byte(span.end.index()));
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    break;
                }
            }
            Event::Scalar(text, style, anchor, _) => builder.scalar(text, style, anchor, span),
            Event::Alias(anchor) => builder.alias(anchor, span),
            Event::MappingStart(anchor, _) => builder.open(Frame::mapping(anchor, span.start)),
            Event::SequenceStart(anchor, _) => builder.open(Frame::sequence(anchor, span.start)),
            Event::MappingEnd | Event::SequenceEnd => builder.close(span.end),
            _ => {}
        }
        if builder.stopped {
            break;
        }
    }
    (builder, indentation_error)
}

/// The newline to join when an indentation error at `at` is inside a flow collection:
/// only blanks precede `at` on its line, and the line closes a collection or the
/// previous non-blank line opens one or ends with a comma.
fn flow_line_break(text: &str, at: usize) -> Option<usize> {
    let line_start = text[..at].rfind('\n')? + 1;
    if !text[line_start..at].bytes().all(|b| b == b' ' || b == b'\t') {
        return None;
    }
    let closes = text[at..].starts_with([']', '}']);
    let previous = text[..line_start - 1].trim_end();
    let previous = previous.rsplit('\n').next().unwrap_or(previous);
    let previous = previous.split(" #").next().unwrap_or(previous).trim_end();
    let continues = previous.ends_with(['[', '{', ',']);
    (closes || continues).then_some(line_start - 1)
}

/// The span to show for a parse error at `at`: the offending tab when the message is
/// about tabs (the scanner reports the position after it), else one character.
fn error_span(text: &str, at: usize, message: &str) -> Span {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    if message.contains("tab") {
        if let Some(tab) = text[line_start..at].rfind('\t') {
            return Span::new(line_start + tab, line_start + tab + 1);
        }
    }
    let width = text[at..].chars().next().map_or(0, char::len_utf8);
    Span::new(at, at + width)
}

enum FrameKind {
    Mapping { entries: Vec<Entry>, pending_key: Option<(String, Span)> },
    Sequence { items: Vec<Node> },
}

struct Frame {
    kind: FrameKind,
    anchor: usize,
    start: usize,
}

impl Frame {
    fn mapping(anchor: usize, start: usize) -> Self {
        Self { kind: FrameKind::Mapping { entries: Vec::new(), pending_key: None }, anchor, start }
    }

    fn sequence(anchor: usize, start: usize) -> Self {
        Self { kind: FrameKind::Sequence { items: Vec::new() }, anchor, start }
    }
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
    anchors: HashMap<usize, Node>,
    expanded_nodes: usize,
    problems: Vec<SyntaxProblem>,
    /// Spans of scalars, in document order, to tell comments from `#` inside values.
    scalar_spans: Vec<Span>,
    stopped: bool,
}

impl Builder {
    fn fail(&mut self, span: Span, message: String) {
        self.problems.push(SyntaxProblem { kind: ProblemKind::Syntax, message, span });
        self.stopped = true;
    }

    fn scalar(&mut self, text: Cow<str>, style: YamlStyle, anchor: usize, span: Span) {
        self.scalar_spans.push(span);
        let (style, kind) = match style {
            YamlStyle::Plain => (ScalarStyle::Plain, resolve_plain(&text)),
            YamlStyle::SingleQuoted => (ScalarStyle::SingleQuoted, ScalarKind::Str),
            YamlStyle::DoubleQuoted => (ScalarStyle::DoubleQuoted, ScalarKind::Str),
            YamlStyle::Literal | YamlStyle::Folded => (ScalarStyle::Block, ScalarKind::Str),
        };
        let node = Node { span, value: Value::Scalar(Scalar { text: text.into_owned(), style, kind }) };
        self.remember(anchor, &node);
        self.push(node);
    }

    fn alias(&mut self, anchor: usize, span: Span) {
        let Some(node) = self.anchors.get(&anchor) else {
            self.fail(span, "unknown alias".into());
            return;
        };
        let size = node_count(node);
        self.expanded_nodes = self.expanded_nodes.saturating_add(size);
        if self.expanded_nodes > ALIAS_NODE_BUDGET {
            let message = format!("alias expansion exceeds {ALIAS_NODE_BUDGET} nodes (an alias bomb?)");
            self.fail(span, message);
            return;
        }
        let node = node.clone();
        self.push(node);
    }

    fn open(&mut self, frame: Frame) {
        if self.stack.len() >= MAX_DEPTH {
            let at = frame.start;
            self.fail(Span::new(at, at + 1), format!("nesting deeper than {MAX_DEPTH} levels"));
            return;
        }
        self.stack.push(frame);
    }

    fn close(&mut self, end: usize) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        let span = Span::new(frame.start, end.max(frame.start));
        let value = match frame.kind {
            FrameKind::Mapping { entries, .. } => Value::Mapping(self.finish_mapping(entries)),
            FrameKind::Sequence { items } => Value::Sequence(items),
        };
        let node = Node { span, value };
        self.remember(frame.anchor, &node);
        self.push(node);
    }

    fn remember(&mut self, anchor: usize, node: &Node) {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
    }

    fn push(&mut self, node: Node) {
        let Some(frame) = self.stack.last_mut() else {
            if self.root.is_none() {
                self.root = Some(node);
            }
            return;
        };
        match &mut frame.kind {
            FrameKind::Sequence { items } => items.push(node),
            FrameKind::Mapping { entries, pending_key } => match pending_key.take() {
                Some((key, key_span)) => entries.push(Entry { key, key_span, value: node }),
                None => {
                    let key = match node.value {
                        Value::Scalar(s) => s.text,
                        _ => String::from("<complex key>"),
                    };
                    *pending_key = Some((key, node.span));
                }
            },
        }
    }

    /// Reports duplicate keys and applies merge keys: explicit keys win over merged
    /// ones, and earlier merge sources win over later ones (YAML merge-key spec).
    fn finish_mapping(&mut self, entries: Vec<Entry>) -> Mapping {
        for (entry, first) in repeated_keys(&entries) {
            self.problems.push(SyntaxProblem {
                kind: ProblemKind::DuplicateKey { first },
                message: format!("duplicate key `{}`; the last value wins", entry.key),
                span: entry.key_span,
            });
        }
        if !entries.iter().any(|e| e.key == "<<") {
            return Mapping { entries };
        }
        let mut explicit: Vec<Entry> = Vec::with_capacity(entries.len());
        let mut merge_sources = Vec::new();
        for entry in entries {
            if entry.key == "<<" {
                match entry.value.value {
                    Value::Mapping(m) => merge_sources.push(m),
                    Value::Sequence(items) => merge_sources.extend(items.into_iter().filter_map(|n| match n.value {
                        Value::Mapping(m) => Some(m),
                        _ => None,
                    })),
                    Value::Scalar(_) => explicit.push(entry),
                }
            } else {
                explicit.push(entry);
            }
        }
        for source in merge_sources {
            for entry in source.entries {
                if !explicit.iter().any(|e| e.key == entry.key) {
                    explicit.push(entry);
                }
            }
        }
        Mapping { entries: explicit }
    }

    fn finish(mut self, text: &str) -> Document {
        // Close whatever an error left open so the partial tree stays usable.
        while !self.stack.is_empty() {
            self.close(text.len());
        }
        let comments = hash_comments(text, &self.scalar_spans);
        if let Some(root) = self.root.as_mut() {
            place_empty_values(root, text);
        }
        Document { language: Language::Yaml, root: self.root, comments, problems: self.problems, program: None }
    }
}

/// Mappings up to this size are searched for repeated keys without a hash map.
const LINEAR_KEY_SEARCH: usize = 32;

/// Each entry whose key (other than `<<`) an earlier entry has, with that first key's span.
fn repeated_keys(entries: &[Entry]) -> Vec<(&Entry, Span)> {
    let keyed = entries.iter().filter(|e| e.key != "<<");
    if entries.len() <= LINEAR_KEY_SEARCH {
        // A key whose fingerprint bit no earlier key set cannot repeat one: most keys
        // skip the search.
        let mut fingerprints = 0u64;
        let mut repeated = Vec::new();
        for (i, entry) in entries.iter().enumerate().filter(|(_, e)| e.key != "<<") {
            let bit = 1u64 << key_fingerprint(&entry.key);
            if fingerprints & bit != 0 {
                if let Some(first) = entries[..i].iter().find(|e| e.key == entry.key) {
                    repeated.push((entry, first.key_span));
                }
            }
            fingerprints |= bit;
        }
        return repeated;
    }
    let mut first_seen: HashMap<&str, Span> = HashMap::with_capacity_and_hasher(entries.len(), Default::default());
    keyed
        .filter_map(|entry| match first_seen.get(entry.key.as_str()) {
            Some(&first) => Some((entry, first)),
            None => {
                first_seen.insert(&entry.key, entry.key_span);
                None
            }
        })
        .collect()
}

/// A number below 64 from a key's length and last byte.
fn key_fingerprint(key: &str) -> u32 {
    let last = key.as_bytes().last().copied().unwrap_or(0);
    ((key.len() as u32).wrapping_mul(7) ^ u32::from(last)) % 64
}

/// The parser reports an empty value (`use_peft:`) at the end of its key, before the
/// colon. Moves it just after the colon, where an edit that fills the value must go.
fn place_empty_values(root: &mut Node, text: &str) {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match &mut node.value {
            Value::Mapping(m) => {
                for entry in &mut m.entries {
                    let empty =
                        entry.value.span.is_empty() && entry.value.as_scalar().is_some_and(|s| s.text.is_empty());
                    if empty && entry.value.span.start <= entry.key_span.end {
                        if let Some(at) = after_colon(text, entry.key_span.end) {
                            entry.value.span = Span::empty(at);
                        }
                    }
                    stack.push(&mut entry.value);
                }
            }
            Value::Sequence(items) => stack.extend(items.iter_mut()),
            Value::Scalar(_) => {}
        }
    }
}

/// The offset just after the `:` that follows a key ending at `key_end`, on the same
/// line (an edit filling the value inserts ` value` there, keeping any comment after it).
fn after_colon(text: &str, key_end: usize) -> Option<usize> {
    let rest = text.get(key_end..)?;
    let line = &rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())];
    Some(key_end + line.find(':')? + 1)
}

fn node_count(node: &Node) -> usize {
    let mut count = 0;
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        count += 1;
        if count > ALIAS_NODE_BUDGET {
            return count;
        }
        match &node.value {
            Value::Mapping(m) => stack.extend(m.entries.iter().map(|e| &e.value)),
            Value::Sequence(items) => stack.extend(items),
            Value::Scalar(_) => {}
        }
    }
    count
}

/// PyYAML's implicit resolver for plain scalars (YAML 1.1), plus dot-less exponents.
/// How YAML writes `literal`: a string plain where it reads back as that string, else
/// double-quoted.
pub(crate) fn spell(literal: &Literal) -> String {
    match literal {
        Literal::Str(s) if reads_as_plain_string(s) => s.clone(),
        Literal::Str(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// Whether `text` written as a plain scalar reads back as the string `text`.
pub(crate) fn reads_as_plain_string(text: &str) -> bool {
    resolve_plain(text) == ScalarKind::Str
        && !text.is_empty()
        && !text.starts_with(['"', '\'', '[', '{', '&', '*', '!', '|', '>', '%', '@', '`'])
        && !text.contains(": ")
        && !text.contains(" #")
}

pub(crate) fn resolve_plain(text: &str) -> ScalarKind {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarKind::Null,
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => return ScalarKind::Bool(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => return ScalarKind::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return ScalarKind::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return ScalarKind::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return ScalarKind::Float(f64::NAN),
        _ => {}
    }
    resolve_int(text).or_else(|| resolve_float(text)).unwrap_or(ScalarKind::Str)
}

fn resolve_int(text: &str) -> Option<ScalarKind> {
    let (negative, body) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(hex) = body.strip_prefix("0x") {
        (16, hex)
    } else if let Some(bin) = body.strip_prefix("0b") {
        (2, bin)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    // Every integer body starts with a digit (`0x`, `0b`, `0` or a decimal digit), so
    // words are rejected before any copy.
    if !body.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let clean = without_underscores(digits);
    if clean.is_empty() || !clean.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = match i128::from_str_radix(&clean, radix) {
        Ok(m) => m,
        Err(_) => return Some(ScalarKind::BigInt),
    };
    let value = if negative { -magnitude } else { magnitude };
    Some(i64::try_from(value).map_or(ScalarKind::BigInt, ScalarKind::Int))
}

fn resolve_float(text: &str) -> Option<ScalarKind> {
    let body = text.trim_start_matches(['-', '+']);
    let first = body.chars().next()?;
    if !(first.is_ascii_digit() || first == '.') || text.len() - body.len() > 1 {
        return None;
    }
    let clean = without_underscores(text);
    let ok_chars = clean.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'));
    if !ok_chars || !clean.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    clean.parse::<f64>().ok().map(ScalarKind::Float)
}

/// `text` without its digit-group underscores (`1_000`), copied only when it has some.
fn without_underscores(text: &str) -> Cow<'_, str> {
    if text.contains('_') {
        Cow::Owned(text.chars().filter(|&c| c != '_').collect())
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Mapping {
        parse(text).root.and_then(|n| n.as_mapping().cloned()).expect("mapping root")
    }

    #[test]
    fn spans_cover_keys_and_values() {
        let text = "train:\n  micro_batch_size: 4  # per device\nquantize: \"bnb.nf4\"\n";
        let doc = parse(text);
        let m = doc.root_mapping().unwrap();
        let mbs = m.entry_path("train.micro_batch_size").unwrap();
        assert_eq!(&text[mbs.key_span.start..mbs.key_span.end], "micro_batch_size");
        assert_eq!(&text[mbs.value.span.start..mbs.value.span.end], "4");
        let q = m.entry("quantize").unwrap();
        assert_eq!(&text[q.value.span.start..q.value.span.end], "\"bnb.nf4\"");
        assert_eq!(doc.comments.len(), 1);
        let c = doc.comments[0].span;
        assert_eq!(&text[c.start..c.end], "# per device");
    }

    #[test]
    fn spans_are_bytes_with_multibyte_text() {
        let text = "# 注释 ✓\nlr: 1e-5\nname: \"é # not a comment\"\n";
        let doc = parse(text);
        let m = doc.root_mapping().unwrap();
        let lr = m.entry("lr").unwrap();
        assert_eq!(&text[lr.value.span.start..lr.value.span.end], "1e-5");
        assert_eq!(lr.value.as_scalar().unwrap().as_f64(), Some(1e-5));
        assert_eq!(doc.comments.len(), 1, "{:?}", doc.comments);
    }

    #[test]
    fn resolves_like_pyyaml() {
        let m = root("a: NO\nb: yes\nc: ~\nd:\ne: 0x1f\nf: 1_000\ng: 3.5\nh: '12'\ni: 99999999999999999999999\nj: 017\nk: v1.0\n");
        let kind = |k: &str| m.get(k).unwrap().as_scalar().unwrap().kind;
        assert_eq!(kind("a"), ScalarKind::Bool(false));
        assert_eq!(kind("b"), ScalarKind::Bool(true));
        assert_eq!(kind("c"), ScalarKind::Null);
        assert_eq!(kind("d"), ScalarKind::Null);
        assert_eq!(kind("e"), ScalarKind::Int(31));
        assert_eq!(kind("f"), ScalarKind::Int(1000));
        assert_eq!(kind("g"), ScalarKind::Float(3.5));
        assert_eq!(kind("h"), ScalarKind::Str);
        assert_eq!(kind("i"), ScalarKind::BigInt);
        assert_eq!(kind("j"), ScalarKind::Int(15));
        assert_eq!(kind("k"), ScalarKind::Str);
    }

    #[test]
    fn numbers_resolve_without_copying_words() {
        let cases = [
            ("_1", ScalarKind::Str),
            ("1_0", ScalarKind::Int(10)),
            ("0b1_0", ScalarKind::Int(2)),
            ("-0x1f", ScalarKind::Int(-31)),
            ("+7", ScalarKind::Int(7)),
            ("1__0", ScalarKind::Int(10)),
            ("0x", ScalarKind::Str),
            ("1e-5", ScalarKind::Float(1e-5)),
            ("1_0.5", ScalarKind::Float(10.5)),
            ("auto", ScalarKind::Str),
            ("+-1", ScalarKind::Str),
        ];
        for (text, kind) in cases {
            assert_eq!(resolve_plain(text), kind, "{text}");
        }
    }

    #[test]
    fn repeated_keys_in_large_mappings() {
        let mut text: String = (0..40).map(|i| format!("k{i}: {i}\n")).collect();
        text.push_str("k3: again\nk39: again\n");
        let doc = parse(&text);
        let firsts: Vec<usize> = doc
            .problems
            .iter()
            .filter_map(|p| match p.kind {
                ProblemKind::DuplicateKey { first } => Some(first.start),
                _ => None,
            })
            .collect();
        assert_eq!(firsts, vec![text.find("k3:").unwrap_or(0), text.find("k39:").unwrap_or(0)]);
    }

    #[test]
    fn duplicate_keys_warn_and_last_wins() {
        let doc = parse("debug: false\nx: 1\ndebug: true\n");
        assert_eq!(doc.problems.len(), 1);
        assert!(matches!(doc.problems[0].kind, ProblemKind::DuplicateKey { first } if first == Span::new(0, 5)));
        assert_eq!(doc.root_mapping().unwrap().get("debug").unwrap().as_scalar().unwrap().as_bool(), Some(true));
    }

    #[test]
    fn merge_keys_and_aliases() {
        let m = root("base: &b\n  lr: 1\n  bs: 2\nrun:\n  <<: *b\n  bs: 8\n");
        let run = m.get("run").unwrap().as_mapping().unwrap();
        assert_eq!(run.get("bs").unwrap().as_scalar().unwrap().as_i64(), Some(8));
        assert_eq!(run.get("lr").unwrap().as_scalar().unwrap().as_i64(), Some(1));
    }

    #[test]
    fn alias_bomb_is_stopped() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = (b'a' + i - 1) as char;
            let name = (b'a' + i) as char;
            text.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        let doc = parse(&text);
        assert!(doc.problems.iter().any(|p| p.message.contains("alias expansion")));
    }

    #[test]
    fn tabs_and_deep_nesting_are_syntax_problems() {
        let doc = parse("a:\n\tb: 1\n");
        assert_eq!(doc.problems[0].kind, ProblemKind::Syntax);
        assert_eq!(doc.problems[0].span.start, 3);
        let deep = "[".repeat(200_000);
        let doc = parse(&deep);
        assert_eq!(doc.problems.len(), 1);
        let block: String = (0..5000).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect();
        let doc = parse(&block);
        assert!(doc.problems[0].message.contains("nesting deeper"));
    }

    #[test]
    fn flow_collections_may_be_under_indented_like_pyyaml() {
        let text = "m:\n  k:\n    targets: [\n      'a',\n      'b',\n    ]\n    start: 0\n  save: true\n";
        let doc = parse(text);
        assert!(doc.problems.is_empty(), "{:?}", doc.problems);
        let m = doc.root_mapping().unwrap();
        let targets = m.entry_path("m.k.targets").unwrap();
        assert_eq!(targets.value.as_sequence().unwrap().len(), 2);
        let start = m.entry_path("m.k.start").unwrap();
        assert_eq!(&text[start.value.span.start..start.value.span.end], "0");
        assert!(parse("a:\n  b: 1\n c: 2\n").is_incomplete());
    }

    #[test]
    fn empty_values_sit_after_the_colon() {
        let text = "use_peft:\nquantize: # none\nlr: 1\n";
        let m = root(text);
        let peft = m.entry("use_peft").unwrap();
        assert_eq!(peft.value.span, Span::empty(9));
        let quantize = m.entry("quantize").unwrap();
        assert_eq!(quantize.value.span, Span::empty(text.find(": # none").unwrap() + 1));
    }

    #[test]
    fn block_scalars_hide_hashes() {
        let doc = parse("cmd: |\n  echo # not a comment\n  run\nx: 1 # real\n");
        assert_eq!(doc.comments.len(), 1);
    }
}
