//! `PYTORCH_ALLOC_CONF` / `PYTORCH_CUDA_ALLOC_CONF` values, read the way PyTorch reads them.
//!
//! Mirrors `ConfigTokenizer` (`c10/core/AllocatorConfig.h`), the generic parser
//! (`c10/core/AllocatorConfig.cpp`) and the CUDA one (`c10/cuda/CUDAAllocatorConfig.cpp`):
//! the value splits into tokens on `,` `:` `[` `]`, whitespace is dropped (so `a b` is the
//! one token `ab`), and `=` is not a separator. PyTorch stops at the first error; this
//! parser reports every problem it can and keeps going. Messages quote PyTorch's own
//! error text. All spans are byte ranges relative to the value string.

use crate::diagnostic::Severity;
use crate::span::Span;
use crate::HashMap;

/// Keys of the generic accelerator parser (`AcceleratorAllocatorConfig::getKeys`).
const GENERIC_KEYS: [&str; 6] = [
    "max_split_size_mb",
    "max_non_split_rounding_mb",
    "garbage_collection_threshold",
    "roundup_power2_divisions",
    "expandable_segments",
    "pinned_use_background_threads",
];

/// Keys of the CUDA parser (`CUDAAllocatorConfig::getKeys`) in released PyTorch.
const CUDA_KEYS: [&str; 9] = [
    "backend",
    "release_lock_on_cudamalloc",
    "release_lock_on_hipmalloc",
    "pinned_use_cuda_host_register",
    "pinned_use_hip_host_register",
    "graph_capture_record_stream_reuse",
    "pinned_reserve_segment_size_mb",
    "pinned_num_register_threads",
    "per_process_memory_fraction",
];

/// Keys only recent development builds of the CUDA parser know.
const RECENT_KEYS: [&str; 4] = [
    "pinned_free_catch_all",
    "throw_on_cudamalloc_oom",
    "expandable_segments_reserve",
    "expandable_segments_reserve_by_class",
];

/// Options of the native caching allocator that `backend:cudaMallocAsync` ignores.
const NATIVE_ONLY_KEYS: [&str; 6] = [
    "max_split_size_mb",
    "max_non_split_rounding_mb",
    "garbage_collection_threshold",
    "roundup_power2_divisions",
    "expandable_segments",
    "release_lock_on_cudamalloc",
];

/// `kLargeBuffer / kMB`: the smallest accepted `max_split_size_mb` / `max_non_split_rounding_mb`.
const MIN_SPLIT_MB: u64 = 20;
/// `CUDAAllocatorConfig::pinned_max_register_threads()`.
const MAX_REGISTER_THREADS: u64 = 128;

/// One `key:value` entry as PyTorch tokenizes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key token (whitespace removed), e.g. `expandable_segments` or `expandable_segments=True`.
    pub(crate) key: String,
    pub key_span: Span,
    /// The value tokens joined (whitespace removed); a list keeps its brackets.
    pub(crate) value: Option<String>,
    pub value_span: Option<Span>,
    /// Whether some PyTorch parser recognises the key.
    pub(crate) known: bool,
}

/// What is wrong with a part of the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ProblemKind {
    /// A key no PyTorch parser knows.
    UnknownKey,
    /// `key=value`: `=` is not a separator, so PyTorch sees one unknown key.
    EqualsSeparator,
    /// A boolean that is not exactly `True` or `False`.
    InvalidBool,
    /// A number PyTorch cannot read.
    InvalidNumber,
    /// A number PyTorch reads only in part (`128MB` is 128) or wraps (`-1`).
    NumberPrefix,
    /// `max_split_size_mb` / `max_non_split_rounding_mb` below 20.
    TooSmall,
    /// A value outside the accepted range.
    OutOfRange,
    /// A value that must be a power of 2.
    NotPowerOfTwo,
    /// `backend` other than `native` / `cudaMallocAsync`.
    UnknownBackend,
    /// A key without a value.
    MissingValue,
    /// A missing `:` or `,`, or a stray separator.
    Syntax,
    /// A list without its closing `]`.
    UnclosedList,
    /// A list where a single value is expected, or the reverse.
    WrongShape,
    /// A key set twice; PyTorch keeps the last value.
    DuplicateKey,
    /// An option `backend:cudaMallocAsync` ignores.
    IgnoredByBackend,
    /// A setting that does nothing on its own (e.g. the garbage-collection threshold without a memory fraction).
    NoEffect,
    /// A key only recent development builds know.
    RecentKey,
}

/// A problem in the value, with an optional replacement for `span`.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub(crate) kind: ProblemKind,
    pub(crate) severity: Severity,
    pub(crate) message: String,
    pub span: Span,
    /// Text that fixes the problem when it replaces `span`. It is exact for
    /// `EqualsSeparator`, `InvalidBool` and `Syntax` (the spelling PyTorch needs for the same
    /// setting); for the other kinds it changes the value or guesses the key.
    pub(crate) replacement: Option<String>,
}

/// The parsed value: its entries in order and every problem found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AllocConf {
    pub entries: Vec<Entry>,
    pub problems: Vec<Problem>,
}

impl AllocConf {
    /// The last entry for `key` (PyTorch keeps the last value).
    pub(crate) fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().rev().find(|entry| entry.key == key)
    }

    /// Whether the value turns expandable segments on (`expandable_segments:True`).
    pub(crate) fn expandable_segments(&self) -> bool {
        self.get("expandable_segments").and_then(|e| e.value.as_deref()) == Some("True")
    }
}

/// Parses an allocator-config value. Never panics; linear in the length of `text`.
pub fn parse(text: &str) -> AllocConf {
    let tokens = tokenize(text);
    let mut parser =
        Parser { text, tokens: &tokens, out: AllocConf::default(), seen: HashMap::default(), merged_value: None };
    parser.run();
    parser.check_combinations();
    parser.out
}

#[derive(Debug, Clone, PartialEq)]
enum TokenKind {
    Sep(u8),
    Word(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    kind: TokenKind,
    span: Span,
}

impl Token {
    fn word(&self) -> Option<&str> {
        match &self.kind {
            TokenKind::Word(w) => Some(w),
            TokenKind::Sep(_) => None,
        }
    }

    fn is_sep(&self, c: u8) -> bool {
        self.kind == TokenKind::Sep(c)
    }

    fn text(&self) -> String {
        match &self.kind {
            TokenKind::Word(w) => w.clone(),
            TokenKind::Sep(c) => char::from(*c).to_string(),
        }
    }
}

/// `ConfigTokenizer`: separators are their own tokens, whitespace is dropped.
fn tokenize(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut word: Vec<u8> = Vec::new();
    let mut word_span: Option<Span> = None;
    let flush = |word: &mut Vec<u8>, span: &mut Option<Span>, tokens: &mut Vec<Token>| {
        if let Some(s) = span.take() {
            tokens.push(Token { kind: TokenKind::Word(String::from_utf8_lossy(word).into_owned()), span: s });
            word.clear();
        }
    };
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b',' | b':' | b'[' | b']' => {
                flush(&mut word, &mut word_span, &mut tokens);
                tokens.push(Token { kind: TokenKind::Sep(b), span: Span::new(i, i + 1) });
            }
            // std::isspace in the "C" locale.
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {}
            _ => {
                word.push(b);
                word_span = Some(match word_span {
                    Some(s) => Span::new(s.start, i + 1),
                    None => Span::new(i, i + 1),
                });
            }
        }
    }
    flush(&mut word, &mut word_span, &mut tokens);
    // A multi-byte character ends on its last byte, so spans stay on char boundaries.
    tokens
}

/// Whether some PyTorch parser recognises `key`.
fn is_known_key(key: &str) -> bool {
    GENERIC_KEYS.contains(&key) || CUDA_KEYS.contains(&key) || RECENT_KEYS.contains(&key)
}

/// Every key a PyTorch parser recognises.
fn known_keys() -> impl Iterator<Item = &'static str> {
    GENERIC_KEYS.iter().chain(CUDA_KEYS.iter()).chain(RECENT_KEYS.iter()).copied()
}

/// The known key closest to `key`, for a did-you-mean.
fn suggest_key(key: &str) -> Option<&'static str> {
    let cleaned: String = key.trim_matches(|c| c == '"' || c == '\'').to_ascii_lowercase().replace('-', "_");
    if let Some(exact) = known_keys().find(|k| *k == cleaned) {
        return Some(exact);
    }
    let limit = (cleaned.len() / 4).max(2);
    known_keys()
        .filter(|k| k.len().abs_diff(cleaned.len()) <= limit)
        .map(|k| (strsim::osa_distance(&cleaned, k), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// How a key's value is validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueRule {
    Bool,
    SplitSizeMb,
    GcThreshold,
    Fraction,
    RoundupDivisions,
    Backend,
    RegisterThreads,
    PositiveInt,
    ReserveSpec,
    ReserveByClass,
}

fn value_rule(key: &str) -> Option<ValueRule> {
    Some(match key {
        "max_split_size_mb" | "max_non_split_rounding_mb" => ValueRule::SplitSizeMb,
        "garbage_collection_threshold" => ValueRule::GcThreshold,
        "per_process_memory_fraction" => ValueRule::Fraction,
        "roundup_power2_divisions" => ValueRule::RoundupDivisions,
        "backend" => ValueRule::Backend,
        "pinned_num_register_threads" => ValueRule::RegisterThreads,
        "pinned_reserve_segment_size_mb" => ValueRule::PositiveInt,
        "expandable_segments_reserve" => ValueRule::ReserveSpec,
        "expandable_segments_reserve_by_class" => ValueRule::ReserveByClass,
        k if is_known_key(k) => ValueRule::Bool,
        _ => return None,
    })
}

struct Parser<'a> {
    text: &'a str,
    tokens: &'a [Token],
    out: AllocConf,
    /// First entry index per key, for duplicate detection.
    seen: HashMap<String, usize>,
    /// Token index of a boolean value that swallowed the next key (`Truemax_split_size_mb`).
    merged_value: Option<usize>,
}

impl Parser<'_> {
    fn problem(
        &mut self,
        kind: ProblemKind,
        severity: Severity,
        span: Span,
        message: String,
        replacement: Option<String>,
    ) {
        self.out.problems.push(Problem { kind, severity, message, span, replacement });
    }

    fn error(&mut self, kind: ProblemKind, span: Span, message: String, replacement: Option<String>) {
        self.problem(kind, Severity::Error, span, message, replacement);
    }

    fn run(&mut self) {
        let mut i = 0;
        while i < self.tokens.len() {
            let token = &self.tokens[i];
            if token.word().is_none() {
                let (sep, span) = (token.text(), token.span);
                let fix = (sep == ",").then(String::new);
                self.error(
                    ProblemKind::Syntax,
                    span,
                    format!("Unrecognized key '{sep}' in CUDA allocator config. (a stray '{sep}')"),
                    fix,
                );
                i = if sep == "," { i + 1 } else { self.next_comma(i + 1).map_or(self.tokens.len(), |c| c + 1) };
                continue;
            }
            let mut last = self.entry(i);
            if self.merged_value.take() == Some(last)
                && self.tokens.get(last + 1).is_some_and(|t| t.is_sep(b':'))
                && self.tokens.get(last + 2).is_some_and(|t| t.word().is_some())
            {
                // `Truemax_split_size_mb:128`: the merged key's value was reported with it.
                last += 2;
            }
            // After an entry: a `,` or the end.
            match self.tokens.get(last + 1) {
                None => break,
                Some(t) if t.is_sep(b',') => i = last + 2,
                Some(t) => {
                    let span = t.span;
                    self.error(
                        ProblemKind::Syntax,
                        span,
                        format!(
                            "expected ',' before '{}' (PyTorch: \"Error parsing CachingAllocator::AllocatorConfig settings, expected ,\")",
                            t.text()
                        ),
                        None,
                    );
                    i = self.next_comma(last + 1).map_or(self.tokens.len(), |c| c + 1);
                }
            }
        }
    }

    /// The index of the `]` closing the list opened at `open`, or of the last token when unclosed.
    fn list_end(&self, open: usize) -> (usize, bool) {
        match (open + 1..self.tokens.len()).find(|&j| self.tokens[j].is_sep(b']')) {
            Some(c) => (c, true),
            None => (self.tokens.len() - 1, false),
        }
    }

    fn next_comma(&self, from: usize) -> Option<usize> {
        (from..self.tokens.len()).find(|&j| self.tokens[j].is_sep(b','))
    }

    /// Parses the entry whose key is token `i`; returns the index of its last token.
    fn entry(&mut self, i: usize) -> usize {
        let token = &self.tokens[i];
        let key = token.word().map(str::to_owned).unwrap_or_default();
        let key_span = token.span;
        if let Some(eq) = key.find('=') {
            return self.equals_entry(i, &key, eq);
        }
        let known = is_known_key(&key);
        if !known {
            self.unknown_key(&key, key_span);
        }
        let (value, last) = self.value_after_key(i, &key, known);
        self.record(key, key_span, value, known);
        last
    }

    fn unknown_key(&mut self, key: &str, span: Span) {
        let suggestion = suggest_key(key);
        let hint = match suggestion {
            Some(s) => format!(" Did you mean '{s}'?"),
            None => String::new(),
        };
        self.error(
            ProblemKind::UnknownKey,
            span,
            format!("Unrecognized key '{key}' in CUDA allocator config.{hint}"),
            suggestion.map(str::to_owned),
        );
    }

    /// `key=value` (or a pasted `PYTORCH_CUDA_ALLOC_CONF=key:value`).
    fn equals_entry(&mut self, i: usize, token_text: &str, eq: usize) -> usize {
        let token_span = self.tokens[i].span;
        let raw = &self.text[token_span.start..token_span.end];
        let (before, after) = (&token_text[..eq], &token_text[eq + 1..]);
        if before.starts_with("PYTORCH_") && before.ends_with("ALLOC_CONF") {
            // The variable name was pasted into its own value: drop `NAME=`.
            let cut = raw.find('=').map_or(0, |p| p + 1);
            let span = Span::new(token_span.start, token_span.start + cut);
            self.error(
                ProblemKind::UnknownKey,
                span,
                format!(
                    "Unrecognized key '{token_text}' in CUDA allocator config. (the value contains the variable name '{before}=')"
                ),
                Some(String::new()),
            );
            let key_span = Span::new(token_span.start + cut, token_span.end);
            let known = is_known_key(after);
            if !known && !after.is_empty() {
                self.unknown_key(after, key_span);
            }
            let (value, last) = self.value_after_key(i, after, known);
            self.record(after.to_owned(), key_span, value, known);
            return last;
        }
        let target = if is_known_key(before) { Some(before) } else { suggest_key(before) };
        let replacement = target.map(|k| {
            let rest = raw.find('=').map_or("", |p| &raw[p + 1..]);
            format!("{k}:{rest}")
        });
        let hint = match target {
            Some(k) => format!(" Use ':' between key and value: '{k}:{after}'."),
            None => " Use ':' between key and value, not '='.".to_owned(),
        };
        // Only an exact key makes the `:` replacement certain; a misspelled one is a guess.
        let kind = if is_known_key(before) { ProblemKind::EqualsSeparator } else { ProblemKind::UnknownKey };
        self.error(
            kind,
            token_span,
            format!("Unrecognized key '{token_text}' in CUDA allocator config.{hint}"),
            replacement,
        );
        // Check the value as if `:` had been written, without reporting twice.
        if let Some(k) = target {
            if !after.is_empty() {
                let offset = raw.find('=').map_or(token_span.start, |p| token_span.start + p + 1);
                let value_span = Span::new(offset, token_span.end);
                self.check_single(k, after, value_span, i);
            }
        }
        let (value, last) = match self.tokens.get(i + 1) {
            Some(t) if after.is_empty() && t.is_sep(b'[') => {
                let (close, closed) = self.list_end(i + 1);
                if let Some(k) = target {
                    let span = Span::new(t.span.start, self.tokens[close].span.end);
                    self.check_list(k, i + 1, (close, closed), span);
                }
                (None, close)
            }
            _ => (None, i),
        };
        self.record(token_text.to_owned(), token_span, value, false);
        last
    }

    /// Reads `: value` after the key at `i`; returns the value and the index of its last token.
    fn value_after_key(&mut self, i: usize, key: &str, known: bool) -> (Option<(String, Span)>, usize) {
        let key_span = self.tokens[i].span;
        let colon = self.tokens.get(i + 1).filter(|t| t.is_sep(b':'));
        if colon.is_none() {
            if known {
                let example = example_value(key);
                let message = match self.tokens.get(i + 1) {
                    None => format!(
                        "'{key}' needs a value, e.g. '{key}:{example}' (PyTorch: \"Index out of bounds in ConfigTokenizer\")"
                    ),
                    Some(t) => format!(
                        "expected ':' after '{key}' but found '{}' (PyTorch: \"Error parsing CachingAllocator::AllocatorConfig settings, expected :\")",
                        t.text()
                    ),
                };
                self.error(ProblemKind::MissingValue, key_span, message, Some(format!("{key}:{example}")));
            }
            return (None, i);
        }
        let value_index = i + 2;
        let Some(value_token) = self.tokens.get(value_index) else {
            let span = Span::new(key_span.start, self.tokens[i + 1].span.end);
            if known {
                self.error(
                    ProblemKind::MissingValue,
                    span,
                    format!("'{key}' has no value after ':' (PyTorch: \"Index out of bounds in ConfigTokenizer\")"),
                    None,
                );
            }
            return (None, i + 1);
        };
        if value_token.is_sep(b'[') {
            let (close, closed) = self.list_end(value_index);
            let span = Span::new(value_token.span.start, self.tokens[close].span.end);
            let text: String = self.tokens[value_index..=close].iter().map(Token::text).collect();
            if !closed {
                self.error(
                    ProblemKind::UnclosedList,
                    span,
                    "Expected closing bracket ']' in ConfigTokenizer but reached end of config".to_owned(),
                    Some(format!("{}]", &self.text[span.start..span.end])),
                );
            }
            if known {
                self.check_list(key, value_index, (close, closed), span);
            }
            return (Some((text, span)), close);
        }
        if let Some(word) = value_token.word() {
            let (word, span) = (word.to_owned(), value_token.span);
            if known {
                self.check_single(key, &word, span, value_index);
            }
            return (Some((word, span)), value_index);
        }
        // A separator where the value should be: `key:,` or `key::`.
        if known {
            self.error(
                ProblemKind::MissingValue,
                key_span,
                format!("'{key}' has no value before '{}'", value_token.text()),
                None,
            );
        }
        (None, i + 1)
    }

    fn record(&mut self, key: String, key_span: Span, value: Option<(String, Span)>, known: bool) {
        if known {
            if let Some(&first) = self.seen.get(&key) {
                let span = self.out.entries[first].key_span;
                self.problem(
                    ProblemKind::DuplicateKey,
                    Severity::Warning,
                    span,
                    format!("'{key}' is set again later in the value; PyTorch keeps the last one"),
                    None,
                );
            } else {
                self.seen.insert(key.clone(), self.out.entries.len());
            }
        }
        let (value, value_span) = match value {
            Some((v, s)) => (Some(v), Some(s)),
            None => (None, None),
        };
        self.out.entries.push(Entry { key, key_span, value, value_span, known });
    }

    /// Validates a single-token value of a known key; `index` is its token index.
    fn check_single(&mut self, key: &str, value: &str, span: Span, index: usize) {
        let Some(rule) = value_rule(key) else { return };
        match rule {
            ValueRule::Bool => self.check_bool(key, value, span, index),
            ValueRule::SplitSizeMb => {
                if let Some(n) = self.read_uint(key, value, span) {
                    if n < MIN_SPLIT_MB {
                        self.error(
                            ProblemKind::TooSmall,
                            span,
                            format!("CachingAllocator option {key} too small, must be >= {MIN_SPLIT_MB}"),
                            Some(MIN_SPLIT_MB.to_string()),
                        );
                    }
                }
            }
            ValueRule::GcThreshold => {
                if let Some(x) = self.read_float(key, value, span) {
                    if !(x > 0.0 && x < 1.0) {
                        self.error(
                            ProblemKind::OutOfRange,
                            span,
                            "garbage_collect_threshold is invalid, set it in (0.0, 1.0)".to_owned(),
                            None,
                        );
                    }
                }
            }
            ValueRule::Fraction => {
                if let Some(x) = self.read_float(key, value, span) {
                    if !(0.0..=1.0).contains(&x) {
                        self.error(
                            ProblemKind::OutOfRange,
                            span,
                            "per_process_memory_fraction is invalid, set it in [0.0, 1.0]".to_owned(),
                            None,
                        );
                    }
                }
            }
            ValueRule::RoundupDivisions => {
                if let Some(n) = self.read_uint(key, value, span) {
                    if !n.is_power_of_two() {
                        self.error(
                            ProblemKind::NotPowerOfTwo,
                            span,
                            format!("For roundups, the divisions has to be power of 2 (got {n})"),
                            Some(next_power_of_two(n).to_string()),
                        );
                    }
                }
            }
            ValueRule::Backend => self.check_backend(value, span),
            ValueRule::RegisterThreads => {
                if let Some(n) = self.read_uint(key, value, span) {
                    if !n.is_power_of_two() {
                        self.error(
                            ProblemKind::NotPowerOfTwo,
                            span,
                            format!("Number of register threads has to be power of 2, got {n}"),
                            Some(next_power_of_two(n).min(MAX_REGISTER_THREADS).to_string()),
                        );
                    } else if n > MAX_REGISTER_THREADS {
                        self.error(
                            ProblemKind::OutOfRange,
                            span,
                            format!(
                                "Number of register threads should be less than or equal to {MAX_REGISTER_THREADS}, got {n}"
                            ),
                            Some(MAX_REGISTER_THREADS.to_string()),
                        );
                    }
                }
            }
            ValueRule::PositiveInt => {
                if self.read_uint(key, value, span) == Some(0) {
                    self.error(
                        ProblemKind::OutOfRange,
                        span,
                        "Pinned reserve segment size has to be greater than 0".to_owned(),
                        None,
                    );
                }
            }
            ValueRule::ReserveSpec => self.check_reserve_spec(value, span),
            ValueRule::ReserveByClass => self.error(
                ProblemKind::WrongShape,
                span,
                format!("'{key}' takes a list, e.g. '{key}:[name:0.5]'"),
                None,
            ),
        }
    }

    fn check_bool(&mut self, key: &str, value: &str, span: Span, index: usize) {
        if value == "True" || value == "False" {
            return;
        }
        let lowered = value.to_ascii_lowercase();
        let replacement = match lowered.as_str() {
            "true" | "1" | "yes" | "on" => Some("True"),
            "false" | "0" | "no" | "off" => Some("False"),
            _ => None,
        };
        // Entries written without a comma merge: `Truemax_split_size_mb`.
        let merged = ["True", "False"]
            .iter()
            .find(|b| value.len() > b.len() && value.starts_with(**b) && is_known_key(&value[b.len()..]));
        let message = format!("Expected 'True' or 'False' at index {index} in ConfigTokenizer but got '{value}'");
        match (replacement, merged) {
            (Some(r), _) => self.error(
                ProblemKind::InvalidBool,
                span,
                format!("{message} (booleans are case-sensitive: write '{r}'; older PyTorch: \"Expected a single True/False argument for {key}\")"),
                Some(r.to_owned()),
            ),
            (None, Some(b)) => {
                self.merged_value = Some(index);
                let raw = &self.text[span.start..span.end];
                let fixed = format!("{b},{}", raw.get(b.len()..).unwrap_or("").trim_start());
                self.error(
                    ProblemKind::Syntax,
                    span,
                    format!("{message}: a ',' is missing between entries (whitespace does not separate them)"),
                    Some(fixed),
                );
            }
            (None, None) => self.error(ProblemKind::InvalidBool, span, message, None),
        }
    }

    fn check_backend(&mut self, value: &str, span: Span) {
        match value {
            "native" | "cudaMallocAsync" => {}
            "hipMallocAsync" => self.problem(
                ProblemKind::UnknownBackend,
                Severity::Warning,
                span,
                "'hipMallocAsync' is accepted only by ROCm builds; CUDA builds raise \"Unknown allocator backend, options are native and cudaMallocAsync\"".to_owned(),
                None,
            ),
            other => {
                let replacement = ["native", "cudaMallocAsync"]
                    .into_iter()
                    .find(|b| b.eq_ignore_ascii_case(other) || strsim::osa_distance(&other.to_ascii_lowercase(), &b.to_ascii_lowercase()) <= 2);
                self.error(
                    ProblemKind::UnknownBackend,
                    span,
                    "Unknown allocator backend, options are native and cudaMallocAsync".to_owned(),
                    replacement.map(str::to_owned),
                );
            }
        }
    }

    /// `parseReserveSpec`: a positive fraction or an absolute size like `40G`; bad values are ignored with a warning.
    fn check_reserve_spec(&mut self, value: &str, span: Span) {
        let number = value.strip_suffix(['G', 'g']).unwrap_or(value);
        let ok = number.parse::<f64>().is_ok_and(|x| x.is_finite() && x > 0.0);
        if !ok {
            self.problem(
                ProblemKind::InvalidNumber,
                Severity::Warning,
                span,
                format!("Ignoring invalid expandable-segment reserve value '{value}' (expected a positive, finite fraction like 0.5 or an absolute size like 40G); using default."),
                None,
            );
        }
    }

    /// Validates a bracketed list for a known key.
    /// `open` is the index of `[`; `close` that of `]`, or of the last token when unclosed.
    fn check_list(&mut self, key: &str, open: usize, (close, closed): (usize, bool), span: Span) {
        match value_rule(key) {
            Some(ValueRule::RoundupDivisions) => self.check_roundup_list(open, close, closed),
            Some(ValueRule::ReserveByClass) => {
                for (name, value) in self.list_pairs(open, close, closed) {
                    if let (Some(_), Some(v)) = (name, value) {
                        let (text, vspan) = (self.tokens[v].text(), self.tokens[v].span);
                        self.check_reserve_spec(&text, vspan);
                    }
                }
            }
            _ => self.error(ProblemKind::WrongShape, span, format!("'{key}' takes a single value, not a list"), None),
        }
    }

    /// `key:value` pairs inside `[...]`, as token indices; reports missing `:` and `,`.
    fn list_pairs(&mut self, open: usize, close: usize, closed: bool) -> Vec<(Option<usize>, Option<usize>)> {
        let end = if closed { close } else { close + 1 };
        let mut pairs = Vec::new();
        let mut j = open + 1;
        while j < end {
            let token = &self.tokens[j];
            if token.is_sep(b',') {
                let span = token.span;
                self.error(ProblemKind::Syntax, span, "empty list entry (a stray ',')".to_owned(), Some(String::new()));
                j += 1;
                continue;
            }
            let name = token.word().map(|_| j);
            let has_colon = self.tokens.get(j + 1).is_some_and(|t| t.is_sep(b':')) && j + 1 < end;
            if !has_colon {
                let span = token.span;
                self.error(
                    ProblemKind::Syntax,
                    span,
                    format!("expected ':' after '{}' in the list (entries are 'size_mb:divisions')", token.text()),
                    None,
                );
                j = self.list_skip(j, end);
                continue;
            }
            let value = (j + 2 < end).then_some(j + 2).filter(|&v| self.tokens[v].word().is_some());
            if value.is_none() {
                let span = self.tokens[j + 1].span;
                self.error(ProblemKind::MissingValue, span, "a list entry has no value after ':'".to_owned(), None);
            }
            pairs.push((name, value));
            let after = if value.is_some() { j + 3 } else { j + 2 };
            if after < end && !self.tokens[after].is_sep(b',') {
                let span = self.tokens[after].span;
                self.error(
                    ProblemKind::Syntax,
                    span,
                    "expected ',' between list entries (PyTorch: \"Error parsing CachingAllocator::AllocatorConfig settings, expected ,\")".to_owned(),
                    None,
                );
                j = self.list_skip(after, end);
            } else {
                j = after + 1;
            }
        }
        pairs
    }

    /// The index after the next `,` inside a list.
    fn list_skip(&self, from: usize, end: usize) -> usize {
        (from..end).find(|&k| self.tokens[k].is_sep(b',')).map_or(end, |c| c + 1)
    }

    fn check_roundup_list(&mut self, open: usize, close: usize, closed: bool) {
        for (name, value) in self.list_pairs(open, close, closed) {
            if let Some(n) = name {
                let (text, span) = (self.tokens[n].text(), self.tokens[n].span);
                if text != ">" {
                    if let Some(interval) = self.read_uint("roundup_power2_divisions", &text, span) {
                        if !interval.is_power_of_two() {
                            self.error(
                                ProblemKind::NotPowerOfTwo,
                                span,
                                format!("For roundups, the intervals have to be power of 2 (got {interval})"),
                                Some(next_power_of_two(interval).to_string()),
                            );
                        }
                    }
                }
            }
            if let Some(v) = value {
                let (text, span) = (self.tokens[v].text(), self.tokens[v].span);
                if let Some(divisions) = self.read_uint("roundup_power2_divisions", &text, span) {
                    if divisions != 0 && !divisions.is_power_of_two() {
                        self.error(
                            ProblemKind::NotPowerOfTwo,
                            span,
                            format!("For roundups, the divisions has to be power of 2 or 0 to disable roundup (got {divisions})"),
                            Some(next_power_of_two(divisions).to_string()),
                        );
                    }
                }
            }
        }
    }

    /// Reads an unsigned integer the way `std::stoull` does; reports what PyTorch would do.
    fn read_uint(&mut self, key: &str, value: &str, span: Span) -> Option<u64> {
        match stoull(value) {
            Stoull::Exact(n) => Some(n),
            Stoull::Prefix(n, digits) => {
                self.problem(
                    ProblemKind::NumberPrefix,
                    Severity::Warning,
                    span,
                    format!("PyTorch reads only the leading number of '{value}' for '{key}', i.e. {n}"),
                    Some(digits),
                );
                Some(n)
            }
            Stoull::Negative => {
                self.error(
                    ProblemKind::InvalidNumber,
                    span,
                    format!("'{key}' must not be negative: std::stoull wraps '{value}' around to a huge number"),
                    None,
                );
                None
            }
            Stoull::Invalid => {
                self.error(
                    ProblemKind::InvalidNumber,
                    span,
                    format!("'{key}' expects an integer but got '{value}' (PyTorch raises std::invalid_argument: \"stoull\")"),
                    None,
                );
                None
            }
            Stoull::Overflow => {
                self.error(
                    ProblemKind::InvalidNumber,
                    span,
                    format!("'{value}' is too large for '{key}' (PyTorch raises std::out_of_range: \"stoull\")"),
                    None,
                );
                None
            }
        }
    }

    /// Reads a float the way `std::stod` does (a leading number; trailing text ignored).
    fn read_float(&mut self, key: &str, value: &str, span: Span) -> Option<f64> {
        let prefix = float_prefix(value);
        let Ok(x) = value[..prefix].parse::<f64>() else {
            self.error(
                ProblemKind::InvalidNumber,
                span,
                format!("'{key}' expects a number but got '{value}' (PyTorch raises std::invalid_argument: \"stod\")"),
                None,
            );
            return None;
        };
        if prefix < value.len() {
            self.problem(
                ProblemKind::NumberPrefix,
                Severity::Warning,
                span,
                format!("PyTorch reads only the leading number of '{value}' for '{key}', i.e. {x}"),
                Some(value[..prefix].to_owned()),
            );
        }
        Some(x)
    }

    /// Checks that need the whole value: backend interplay and settings without effect.
    fn check_combinations(&mut self) {
        let async_backend = self.out.get("backend").and_then(|e| e.value.as_deref()) == Some("cudaMallocAsync");
        let has_fraction = self.out.get("per_process_memory_fraction").is_some();
        let host_register = self.out.get("pinned_use_cuda_host_register").and_then(|e| e.value.as_deref())
            == Some("True")
            || self.out.get("pinned_use_hip_host_register").and_then(|e| e.value.as_deref()) == Some("True");
        let mut extra = Vec::new();
        for entry in &self.out.entries {
            let key = entry.key.as_str();
            if async_backend && NATIVE_ONLY_KEYS.contains(&key) {
                extra.push((
                    ProblemKind::IgnoredByBackend,
                    Severity::Warning,
                    entry.key_span,
                    format!("'{key}' has no effect with backend:cudaMallocAsync (PyTorch: \"backend:cudaMallocAsync ignores max_split_size_mb,roundup_power2_divisions, and garbage_collect_threshold.\")"),
                ));
            }
            if key == "garbage_collection_threshold" && !has_fraction {
                extra.push((
                    ProblemKind::NoEffect,
                    Severity::Info,
                    entry.key_span,
                    "garbage_collection_threshold only takes effect when a per-process memory fraction is set (torch.cuda.set_per_process_memory_fraction or per_process_memory_fraction)".to_owned(),
                ));
            }
            if key == "pinned_num_register_threads" && !host_register {
                extra.push((
                    ProblemKind::NoEffect,
                    Severity::Info,
                    entry.key_span,
                    "pinned_num_register_threads is used only with pinned_use_cuda_host_register:True".to_owned(),
                ));
            }
            if RECENT_KEYS.contains(&key) {
                extra.push((
                    ProblemKind::RecentKey,
                    Severity::Info,
                    entry.key_span,
                    format!("'{key}' is known only to recent development builds of PyTorch; released versions raise \"Unrecognized key '{key}' in CUDA allocator config.\""),
                ));
            }
        }
        for (kind, severity, span, message) in extra {
            self.problem(kind, severity, span, message, None);
        }
    }
}

/// A value that makes a valid example for `key`.
fn example_value(key: &str) -> &'static str {
    match value_rule(key) {
        Some(ValueRule::SplitSizeMb) => "128",
        Some(ValueRule::GcThreshold) => "0.8",
        Some(ValueRule::Fraction) => "0.9",
        Some(ValueRule::RoundupDivisions) => "4",
        Some(ValueRule::Backend) => "native",
        Some(ValueRule::RegisterThreads) => "8",
        Some(ValueRule::PositiveInt) => "64",
        Some(ValueRule::ReserveSpec) => "0.5",
        Some(ValueRule::ReserveByClass) => "[name:0.5]",
        Some(ValueRule::Bool) | None => "True",
    }
}

fn next_power_of_two(n: u64) -> u64 {
    n.checked_next_power_of_two().unwrap_or(1 << 63).max(1)
}

#[derive(Debug, PartialEq)]
enum Stoull {
    Exact(u64),
    /// A leading number followed by other text: the number and its digits.
    Prefix(u64, String),
    Negative,
    Invalid,
    Overflow,
}

/// `std::stoull` in base 10: optional sign, digits, anything after is ignored.
fn stoull(text: &str) -> Stoull {
    let unsigned = text.strip_prefix('+').unwrap_or(text);
    let negative = text.starts_with('-');
    let body = text.strip_prefix('-').unwrap_or(unsigned);
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Stoull::Invalid;
    }
    if negative {
        return Stoull::Negative;
    }
    match body[..digits].parse::<u64>() {
        Err(_) => Stoull::Overflow,
        Ok(n) if digits == body.len() => Stoull::Exact(n),
        Ok(n) => Stoull::Prefix(n, body[..digits].to_owned()),
    }
}

/// Length of the longest prefix `std::stod` would read as a decimal number.
fn float_prefix(text: &str) -> usize {
    let b = text.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let int_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        frac_digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        i += 1 + frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return 0;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp_digits = b[j.min(b.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp_digits > 0 {
            i = j + exp_digits;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<ProblemKind> {
        parse(text).problems.iter().map(|p| p.kind).collect()
    }

    fn only(text: &str) -> Problem {
        let conf = parse(text);
        assert_eq!(conf.problems.len(), 1, "{text}: {:#?}", conf.problems);
        conf.problems[0].clone()
    }

    fn slice(text: &str, span: Span) -> &str {
        &text[span.start..span.end]
    }

    /// Applies a problem's replacement and re-parses.
    fn fixed(text: &str, problem: &Problem) -> String {
        let replacement = problem.replacement.as_deref().expect("a replacement");
        format!("{}{}{}", &text[..problem.span.start], replacement, &text[problem.span.end..])
    }

    #[test]
    fn tokenizer_matches_pytorch() {
        let tokens = tokenize(" key1 :val1,key2:[val2, val3]");
        let texts: Vec<String> = tokens.iter().map(Token::text).collect();
        assert_eq!(texts, ["key1", ":", "val1", ",", "key2", ":", "[", "val2", ",", "val3", "]"]);
        assert_eq!(tokens[0].span, Span::new(1, 5));
        // Whitespace inside a word is dropped, not a separator.
        let merged = tokenize("max split");
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].word(), Some("maxsplit"));
        assert_eq!(merged[0].span, Span::new(0, 9));
    }

    #[test]
    fn valid_values_have_no_problems() {
        for text in [
            "",
            "   ",
            "expandable_segments:True",
            "expandable_segments:False",
            "max_split_size_mb:128",
            " max_split_size_mb : 20 , expandable_segments : True ",
            "garbage_collection_threshold:0.6,per_process_memory_fraction:0.9",
            "roundup_power2_divisions:4",
            "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
            "roundup_power2_divisions:[64:8,256:4,1024:4,>:0]",
            "backend:native",
            "backend:cudaMallocAsync",
            "max_non_split_rounding_mb:64",
            "pinned_use_cuda_host_register:True,pinned_num_register_threads:8",
            "pinned_use_background_threads:True",
            "release_lock_on_cudamalloc:True",
            "graph_capture_record_stream_reuse:False",
            "pinned_reserve_segment_size_mb:256",
            "per_process_memory_fraction:0",
            "per_process_memory_fraction:1.0",
            "expandable_segments:True,",
        ] {
            let conf = parse(text);
            assert!(conf.problems.is_empty(), "{text:?}: {:#?}", conf.problems);
        }
    }

    #[test]
    fn entries_carry_relative_spans() {
        let text = "max_split_size_mb:128, roundup_power2_divisions:[256:1,>:2]";
        let conf = parse(text);
        assert_eq!(conf.entries.len(), 2);
        let first = &conf.entries[0];
        assert_eq!(slice(text, first.key_span), "max_split_size_mb");
        assert_eq!(first.value.as_deref(), Some("128"));
        assert_eq!(slice(text, first.value_span.unwrap()), "128");
        let second = &conf.entries[1];
        assert_eq!(second.value.as_deref(), Some("[256:1,>:2]"));
        assert_eq!(slice(text, second.value_span.unwrap()), "[256:1,>:2]");
        assert!(conf.entries.iter().all(|e| e.known));
    }

    #[test]
    fn unknown_key_suggests_the_nearest() {
        let text = "expandable_segment:True";
        let p = only(text);
        assert_eq!(p.kind, ProblemKind::UnknownKey);
        assert_eq!(p.severity, Severity::Error);
        assert!(p.message.starts_with("Unrecognized key 'expandable_segment' in CUDA allocator config."));
        assert_eq!(p.replacement.as_deref(), Some("expandable_segments"));
        assert!(parse(&fixed(text, &p)).problems.is_empty());
        // The message's own historical spelling maps to the real key.
        assert_eq!(suggest_key("garbage_collect_threshold"), Some("garbage_collection_threshold"));
        assert_eq!(suggest_key("max_split_size"), Some("max_split_size_mb"));
        assert_eq!(suggest_key("Expandable_Segments"), Some("expandable_segments"));
        assert_eq!(suggest_key("completely_different"), None);
        let far = only("foo:1");
        assert_eq!(far.replacement, None);
        assert!(!parse("foo:1").entries[0].known);
    }

    #[test]
    fn equals_instead_of_colon() {
        let text = "expandable_segments=True";
        let p = only(text);
        assert_eq!(p.kind, ProblemKind::EqualsSeparator);
        assert!(p.message.contains("Unrecognized key 'expandable_segments=True'"));
        assert_eq!(fixed(text, &p), "expandable_segments:True");
        // The value is still checked, and each fix is reported once.
        let text = "max_split_size_mb=10";
        let kinds = kinds(text);
        assert_eq!(kinds, [ProblemKind::EqualsSeparator, ProblemKind::TooSmall]);
        let conf = parse("expandable_segments=true");
        assert!(conf.problems.iter().any(|p| p.kind == ProblemKind::InvalidBool));
        // A list after `=`.
        // A misspelled key before `=` makes the whole replacement a guess.
        let p = only("expandable_segment=True");
        assert_eq!(p.kind, ProblemKind::UnknownKey);
        assert_eq!(p.replacement.as_deref(), Some("expandable_segments:True"));
        assert_eq!(only("nonsense=True").replacement, None);
        let text = "roundup_power2_divisions=[256:1,>:3]";
        let conf = parse(text);
        assert_eq!(conf.problems.len(), 2, "{:#?}", conf.problems);
        assert_eq!(conf.problems[0].kind, ProblemKind::EqualsSeparator);
        assert_eq!(fixed(text, &conf.problems[0]), "roundup_power2_divisions:[256:1,>:3]");
        assert_eq!(conf.problems[1].kind, ProblemKind::NotPowerOfTwo);
    }

    #[test]
    fn pasted_variable_name() {
        let text = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True";
        let p = only(text);
        assert_eq!(p.kind, ProblemKind::UnknownKey);
        assert_eq!(fixed(text, &p), "expandable_segments:True");
        assert!(parse(text).expandable_segments());
    }

    #[test]
    fn booleans_are_case_sensitive() {
        let text = "expandable_segments:true";
        let p = only(text);
        assert_eq!(p.kind, ProblemKind::InvalidBool);
        assert!(p.message.starts_with("Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'true'"));
        assert_eq!(slice(text, p.span), "true");
        assert_eq!(fixed(text, &p), "expandable_segments:True");
        assert_eq!(only("release_lock_on_cudamalloc:0").replacement.as_deref(), Some("False"));
        assert_eq!(only("pinned_use_background_threads:maybe").replacement, None);
        // The token index counts every token before the value.
        let p = only("max_split_size_mb:128,expandable_segments:TRUE");
        assert!(p.message.contains("at index 6"), "{}", p.message);
    }

    #[test]
    fn entries_separated_by_spaces_merge() {
        let text = "expandable_segments:True max_split_size_mb:128";
        let conf = parse(text);
        let p = &conf.problems[0];
        assert_eq!(p.kind, ProblemKind::Syntax);
        assert!(p.message.contains("a ',' is missing"));
        assert_eq!(fixed(text, p), "expandable_segments:True,max_split_size_mb:128");
        assert!(parse(&fixed(text, p)).problems.is_empty());
    }

    #[test]
    fn split_sizes_must_be_at_least_20() {
        let text = "max_split_size_mb:10";
        let p = only(text);
        assert_eq!(p.kind, ProblemKind::TooSmall);
        assert_eq!(p.message, "CachingAllocator option max_split_size_mb too small, must be >= 20");
        assert_eq!(fixed(text, &p), "max_split_size_mb:20");
        assert_eq!(
            only("max_non_split_rounding_mb:0").message,
            "CachingAllocator option max_non_split_rounding_mb too small, must be >= 20"
        );
        assert!(parse("max_split_size_mb:20").problems.is_empty());
    }

    #[test]
    fn numbers_read_like_stoull() {
        let p = only("max_split_size_mb:128MB");
        assert_eq!(p.kind, ProblemKind::NumberPrefix);
        assert_eq!(p.severity, Severity::Warning);
        assert_eq!(p.replacement.as_deref(), Some("128"));
        assert_eq!(only("max_split_size_mb:abc").kind, ProblemKind::InvalidNumber);
        assert_eq!(only("max_split_size_mb:-1").kind, ProblemKind::InvalidNumber);
        assert_eq!(only("max_split_size_mb:99999999999999999999999").kind, ProblemKind::InvalidNumber);
        assert_eq!(stoull("+42"), Stoull::Exact(42));
        assert_eq!(stoull("12.5"), Stoull::Prefix(12, "12".into()));
        assert_eq!(float_prefix("0.5x"), 3);
        assert_eq!(float_prefix("1e-1"), 4);
        assert_eq!(float_prefix("1e"), 1);
        assert_eq!(float_prefix(".5"), 2);
        assert_eq!(float_prefix("."), 0);
    }

    #[test]
    fn garbage_collection_threshold() {
        for bad in ["0", "1", "1.5", "-0.2", "0.0"] {
            let conf = parse(&format!("garbage_collection_threshold:{bad},per_process_memory_fraction:0.9"));
            assert_eq!(conf.problems.len(), 1, "{bad}");
            assert_eq!(conf.problems[0].message, "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
        }
        let p = only("garbage_collection_threshold:0.6");
        assert_eq!(p.kind, ProblemKind::NoEffect);
        assert_eq!(p.severity, Severity::Info);
        assert_eq!(
            only("garbage_collection_threshold:x,per_process_memory_fraction:0.5").kind,
            ProblemKind::InvalidNumber
        );
    }

    #[test]
    fn memory_fraction_range() {
        let p = only("per_process_memory_fraction:1.2");
        assert_eq!(p.message, "per_process_memory_fraction is invalid, set it in [0.0, 1.0]");
        assert_eq!(only("per_process_memory_fraction:-0.1").kind, ProblemKind::OutOfRange);
    }

    #[test]
    fn roundup_power2_divisions() {
        let text = "roundup_power2_divisions:3";
        let p = only(text);
        assert_eq!(p.kind, ProblemKind::NotPowerOfTwo);
        assert_eq!(fixed(text, &p), "roundup_power2_divisions:4");
        // 0 is not a power of 2 in the single-value form.
        assert_eq!(only("roundup_power2_divisions:0").kind, ProblemKind::NotPowerOfTwo);
        let text = "roundup_power2_divisions:[300:2,512:3,>:0]";
        let conf = parse(text);
        assert_eq!(conf.problems.len(), 2, "{:#?}", conf.problems);
        assert!(conf.problems[0].message.starts_with("For roundups, the intervals have to be power of 2"));
        assert_eq!(slice(text, conf.problems[0].span), "300");
        assert!(conf.problems[1].message.starts_with("For roundups, the divisions has to be power of 2 or 0"));
        assert_eq!(slice(text, conf.problems[1].span), "3");
        assert_eq!(kinds("roundup_power2_divisions:[256:1"), [ProblemKind::UnclosedList]);
        let text = "roundup_power2_divisions:[256:1";
        assert!(parse(&fixed(text, &only(text))).problems.is_empty());
        assert_eq!(kinds("roundup_power2_divisions:[256,512:2]"), [ProblemKind::Syntax]);
        assert_eq!(kinds("roundup_power2_divisions:[256:1,,>:2]"), [ProblemKind::Syntax]);
        assert_eq!(kinds("roundup_power2_divisions:[256:]"), [ProblemKind::MissingValue]);
    }

    #[test]
    fn backend_values() {
        let text = "backend:cudamallocasync";
        let p = only(text);
        assert_eq!(p.message, "Unknown allocator backend, options are native and cudaMallocAsync");
        assert_eq!(fixed(text, &p), "backend:cudaMallocAsync");
        assert_eq!(only("backend:hipMallocAsync").severity, Severity::Warning);
        assert_eq!(only("backend:jemalloc").replacement, None);
    }

    #[test]
    fn native_only_keys_with_cuda_malloc_async() {
        let text = "backend:cudaMallocAsync,expandable_segments:True,max_split_size_mb:128";
        let conf = parse(text);
        let ignored: Vec<&str> = conf
            .problems
            .iter()
            .filter(|p| p.kind == ProblemKind::IgnoredByBackend)
            .map(|p| slice(text, p.span))
            .collect();
        assert_eq!(ignored, ["expandable_segments", "max_split_size_mb"]);
        assert!(conf.problems.iter().all(|p| p.severity != Severity::Error));
    }

    #[test]
    fn register_threads() {
        let p = only("pinned_use_cuda_host_register:True,pinned_num_register_threads:6");
        assert_eq!(p.message, "Number of register threads has to be power of 2, got 6");
        assert_eq!(p.replacement.as_deref(), Some("8"));
        let p = only("pinned_use_cuda_host_register:True,pinned_num_register_threads:256");
        assert_eq!(p.message, "Number of register threads should be less than or equal to 128, got 256");
        assert_eq!(only("pinned_num_register_threads:4").kind, ProblemKind::NoEffect);
        assert_eq!(
            only("pinned_reserve_segment_size_mb:0").message,
            "Pinned reserve segment size has to be greater than 0"
        );
    }

    #[test]
    fn missing_values_and_separators() {
        assert_eq!(kinds("expandable_segments"), [ProblemKind::MissingValue]);
        assert_eq!(only("expandable_segments").replacement.as_deref(), Some("expandable_segments:True"));
        assert_eq!(kinds("expandable_segments:"), [ProblemKind::MissingValue]);
        assert_eq!(kinds("expandable_segments:,max_split_size_mb:128"), [ProblemKind::MissingValue]);
        assert_eq!(kinds("max_split_size_mb:128:256"), [ProblemKind::Syntax]);
        let text = "expandable_segments:True,,max_split_size_mb:128";
        let p = only(text);
        assert!(p.message.starts_with("Unrecognized key ',' in CUDA allocator config."));
        assert_eq!(fixed(text, &p), "expandable_segments:True,max_split_size_mb:128");
        assert_eq!(kinds(",expandable_segments:True"), [ProblemKind::Syntax]);
        assert_eq!(kinds("expandable_segments:[True]"), [ProblemKind::WrongShape]);
        assert_eq!(kinds("]"), [ProblemKind::Syntax]);
        assert_eq!(kinds(":"), [ProblemKind::Syntax]);
    }

    #[test]
    fn duplicates_and_recent_keys() {
        let text = "max_split_size_mb:128,max_split_size_mb:256";
        let p = only(text);
        assert_eq!(p.kind, ProblemKind::DuplicateKey);
        assert_eq!(p.span, Span::new(0, 17));
        assert_eq!(parse(text).get("max_split_size_mb").and_then(|e| e.value.as_deref()), Some("256"));
        assert_eq!(only("throw_on_cudamalloc_oom:True").kind, ProblemKind::RecentKey);
        assert_eq!(kinds("expandable_segments_reserve:abc"), [ProblemKind::InvalidNumber, ProblemKind::RecentKey]);
        assert_eq!(only("expandable_segments_reserve_by_class:[a:0.5,b:40G]").kind, ProblemKind::RecentKey);
    }

    #[test]
    fn quoted_values_point_at_the_quote() {
        let text = "\"expandable_segments:True\"";
        let conf = parse(text);
        assert_eq!(conf.problems[0].kind, ProblemKind::UnknownKey);
        assert_eq!(conf.problems[0].replacement.as_deref(), Some("expandable_segments"));
    }

    #[test]
    fn never_panics_on_odd_input() {
        for text in [
            "[[[[",
            "]]]]",
            ":::",
            ",,,",
            "a:[",
            "a:[b",
            "roundup_power2_divisions:[",
            "roundup_power2_divisions:[:",
            "roundup_power2_divisions:[>",
            "roundup_power2_divisions:[>:",
            "roundup_power2_divisions:[,]",
            "=",
            "==:",
            "é:ü,ß",
            "expandable_segments:Trueé",
            "max_split_size_mb=",
            "max_split_size_mb=:",
            "PYTORCH_ALLOC_CONF=",
            "\u{0}:\u{0}",
            "backend:[native]",
            "garbage_collection_threshold:nan",
            "garbage_collection_threshold:inf",
        ] {
            let conf = parse(text);
            for p in &conf.problems {
                assert!(
                    p.span.end <= text.len()
                        && text.is_char_boundary(p.span.start)
                        && text.is_char_boundary(p.span.end),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn random_values_never_panic_and_spans_stay_valid() {
        const PIECES: [&str; 16] = [
            "expandable_segments",
            "max_split_size_mb",
            "roundup_power2_divisions",
            "backend",
            ":",
            ",",
            "[",
            "]",
            "=",
            " ",
            "True",
            "true",
            "128",
            ">",
            "é",
            "0.5",
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..1 + state % 12 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(PIECES[(state % PIECES.len() as u64) as usize]);
            }
            let conf = parse(&text);
            let spans = conf
                .problems
                .iter()
                .map(|p| p.span)
                .chain(conf.entries.iter().flat_map(|e| [Some(e.key_span), e.value_span]).flatten());
            for span in spans {
                assert!(span.start <= span.end && span.end <= text.len(), "{text:?}");
                assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end), "{text:?}");
            }
        }
    }

    #[test]
    fn a_hundred_thousand_entries_parse() {
        const ENTRIES: usize = 100_000;
        let mut text = String::new();
        for i in 0..ENTRIES {
            match i % 4 {
                0 => text.push_str("max_split_size_mb:128,"),
                1 => text.push_str("expandable_segments:true,"),
                2 => text.push_str(&format!("unknown_key_{i}:1,")),
                _ => text.push_str("roundup_power2_divisions:[256:1,>:2],"),
            }
        }
        // 2.6 MB in ~0.9 s of a debug build: a parser quadratic in entries or tokens would take
        // minutes or more on it, so a regression shows as a hung test, without a clock here.
        let conf = parse(&text);
        assert_eq!(conf.entries.len(), ENTRIES);
        assert_eq!(conf.problems.iter().filter(|p| p.kind == ProblemKind::InvalidBool).count(), ENTRIES / 4);
        assert_eq!(conf.problems.iter().filter(|p| p.kind == ProblemKind::UnknownKey).count(), ENTRIES / 4);
    }
}
