//! Shell scripts as commands (tree-sitter-bash): each simple command's words with their
//! spans, expanded from the variables the script assigns before it, and `#SBATCH` lines.
//!
//! Expansion follows the shell for what a script writes to configure a launch: `$VAR`,
//! `${VAR}`, `${VAR:-default}` / `${VAR-default}` / `${VAR:=default}`, integer arithmetic
//! `$(( … ))` over constants and the script's variables ([`arithmetic`]), quoting and `\`
//! escapes; a word that expands anything else (a positional parameter, a command
//! substitution, a variable the script never assigns) has no known text. An unquoted
//! expansion that is a whole word is split at blanks into words, as the shell's field
//! splitting does with the default `IFS` (`deepspeed $ARGS train.py`); each field's span is
//! its text in the assignment when the value is literal. An array (`ARGS=(--a 1)`) expanded as
//! `${ARGS[@]}` gives its elements, each where it is written. `read -d '' NAME <<EOF` assigns
//! the here-document to NAME. The variables SLURM sets from the script's `#SBATCH` directives
//! (node and GPU counts) are known from those lines. The string of `bash -c STRING` (also
//! `sh -lc`, after `srun`'s options) is read as commands of the script, where it is written.

use crate::span::Span;
use crate::HashMap;
use tree_sitter::{Node as TsNode, Parser};

mod arithmetic;

/// One word of a command: its text after expansion (None when unknown) and where it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Word {
    pub(crate) text: Option<String>,
    pub(crate) span: Span,
}

/// A simple command: the assignments before it (`CUDA_VISIBLE_DEVICES=0,1 torchrun …`)
/// and its words, the command name first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Command {
    pub(crate) env: Vec<(String, Word)>,
    pub(crate) words: Vec<Word>,
}

/// The commands of a script in order, the `#SBATCH` directives' words, and every
/// variable the script assigns (its last value).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Script {
    pub(crate) commands: Vec<Command>,
    pub(crate) sbatch: Vec<Word>,
    pub(crate) assignments: Vec<(String, Word)>,
}

/// Reads `text` as a bash script; None when tree-sitter cannot run.
pub(crate) fn parse(text: &str) -> Option<Script> {
    parse_at(text, 0)
}

/// How deep `bash -c` strings are read inside each other.
const MAX_SHELL_STRINGS: usize = 4;

fn parse_at(text: &str, nesting: usize) -> Option<Script> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
    let tree = parser.parse(text, None)?;
    let mut reader = ScriptReader {
        text,
        variables: HashMap::default(),
        literal: HashMap::default(),
        arrays: HashMap::default(),
        script: Script::default(),
        nesting,
    };
    reader.walk(tree.root_node(), 0);
    Some(reader.script)
}

const MAX_DEPTH: usize = 256;

struct ScriptReader<'t> {
    text: &'t str,
    /// None: assigned, but to something unknown.
    variables: HashMap<String, Option<String>>,
    /// Where a variable's literal value is written (its last assignment).
    literal: HashMap<String, (usize, usize)>,
    /// Arrays the script assigns (`ARGS=(--a 1 --b "$X")`): each element expanded (None when
    /// unknown) where it is written.
    arrays: HashMap<String, Vec<Word>>,
    script: Script,
    /// How many `bash -c` strings this script is inside.
    nesting: usize,
}

fn span(node: TsNode) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

impl ScriptReader<'_> {
    fn source(&self, node: TsNode) -> &str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    fn walk(&mut self, node: TsNode, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        match node.kind() {
            "command" => return self.command(node),
            "variable_assignment" => {
                if let Some((name, word)) = self.assignment(node) {
                    match node.child_by_field_name("value").filter(|v| v.kind() == "array") {
                        Some(array) => {
                            let mut cursor = array.walk();
                            let elements: Vec<TsNode> =
                                array.named_children(&mut cursor).filter(|c| c.kind() != "comment").collect();
                            let words = elements.iter().map(|e| Word { text: self.expand(*e, 0), span: span(*e) });
                            self.arrays.insert(name.clone(), words.collect());
                        }
                        None => {
                            self.arrays.remove(&name);
                        }
                    }
                    match self.literal_range(node.child_by_field_name("value")) {
                        Some(range) => self.literal.insert(name.clone(), range),
                        None => self.literal.remove(&name),
                    };
                    self.variables.insert(name.clone(), word.text.clone());
                    self.script.assignments.push((name, word));
                }
                return;
            }
            "comment" => return self.comment(node),
            "redirected_statement" => self.read_heredoc(node),
            "command_substitution" | "process_substitution" | "heredoc_body" => return,
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<TsNode> = node.children(&mut cursor).collect();
        for child in children {
            self.walk(child, depth + 1);
        }
    }

    /// `read [-r] [-d ''] NAME <<EOF … EOF` assigns the here-document to NAME (`-d ''` reads
    /// it whole; without `-d` only its first line): `\`-newline continuations are removed
    /// where the delimiter is unquoted. A body that expands anything leaves NAME unknown.
    fn read_heredoc(&mut self, node: TsNode) {
        let Some(body) = node.child_by_field_name("body").filter(|b| b.kind() == "command") else { return };
        let mut cursor = body.walk();
        let words: Vec<String> = body.named_children(&mut cursor).map(|c| self.source(c).to_string()).collect();
        if words.first().map(String::as_str) != Some("read") {
            return;
        }
        let Some(name) = words.iter().skip(1).rfind(|w| !w.starts_with('-') && !matches!(w.as_str(), "''" | "\"\""))
        else {
            return;
        };
        let whole = words.windows(2).any(|w| w[0] == "-d" && matches!(w[1].as_str(), "''" | "\"\""));
        let mut cursor = node.walk();
        let redirect = node.named_children(&mut cursor).find(|c| c.kind() == "heredoc_redirect");
        let Some(redirect) = redirect else { return };
        let mut cursor = redirect.walk();
        let children: Vec<TsNode> = redirect.named_children(&mut cursor).collect();
        let Some(heredoc) = children.iter().find(|c| c.kind() == "heredoc_body") else { return };
        let quoted =
            children.iter().any(|c| c.kind() == "heredoc_start" && self.source(*c).contains(['\'', '"', '\\']));
        let raw = self.source(*heredoc);
        let text = if quoted { raw.to_string() } else { raw.replace("\\\n", "") };
        let text = if whole { text } else { text.lines().next().unwrap_or("").to_string() };
        let expands = !quoted && (text.contains('$') || text.contains('`'));
        let value = (!expands).then_some(text);
        let range = (heredoc.start_byte(), heredoc.end_byte());
        match value {
            Some(_) => self.literal.insert(name.clone(), range),
            None => self.literal.remove(name),
        };
        self.variables.insert(name.clone(), value.clone());
        self.script.assignments.push((name.clone(), Word { text: value, span: span(*heredoc) }));
    }

    fn assignment(&self, node: TsNode) -> Option<(String, Word)> {
        let name = self.source(node.child_by_field_name("name")?).to_string();
        let word = match node.child_by_field_name("value") {
            Some(value) => Word { text: self.expand(value, 0), span: span(value) },
            None => Word { text: Some(String::new()), span: Span::new(node.end_byte(), node.end_byte()) },
        };
        Some((name, word))
    }

    /// Where `value` is written when its text is literal (a plain word or a quoted string
    /// that expands nothing, or the literal default of `${NAME:-default}` and its kin, which is
    /// the value where the environment leaves NAME unset): the fields split from it are found
    /// there.
    fn literal_range(&self, value: Option<TsNode>) -> Option<(usize, usize)> {
        let value = value?;
        if value.kind() == "expansion" {
            let mut cursor = value.walk();
            let children: Vec<TsNode> = value.named_children(&mut cursor).collect();
            return match children.as_slice() {
                [name, default] if name.kind() == "variable_name" && matches!(default.kind(), "word" | "number") => {
                    Some((default.start_byte(), default.end_byte()))
                }
                _ => None,
            };
        }
        let literal = match value.kind() {
            "word" | "number" | "raw_string" => true,
            "string" => {
                let mut cursor = value.walk();
                let literal = value.named_children(&mut cursor).all(|c| c.kind() == "string_content");
                literal
            }
            _ => false,
        };
        literal.then(|| (value.start_byte(), value.end_byte()))
    }

    /// The array `${NAME[@]}` or `${NAME[*]}` expands (also quoted), and whether it is quoted.
    fn array(&self, node: TsNode) -> Option<(&[Word], bool)> {
        let source = self.source(node);
        let (inner, quoted) = match node.kind() {
            "string" => (source.strip_prefix('"')?.strip_suffix('"')?, true),
            "expansion" => (source, false),
            _ => return None,
        };
        let name = inner.strip_prefix("${")?.strip_suffix('}')?;
        let name = name.strip_suffix("[@]").or_else(|| name.strip_suffix("[*]"))?;
        Some((self.arrays.get(name)?.as_slice(), quoted))
    }

    /// A command word: an unquoted expansion splits into fields; an array's expansion gives
    /// its elements (each split into fields unless quoted), where they are written.
    fn words(&self, node: TsNode, word_span: Span, out: &mut Vec<Word>) {
        if let Some((elements, quoted)) = self.array(node) {
            for element in elements {
                match element.text.as_deref() {
                    Some(text) if !quoted => {
                        let written = self.text.get(element.span.start..element.span.end).unwrap_or("");
                        for field in text.split([' ', '\t', '\n']).filter(|f| !f.is_empty()) {
                            let span = match written.find(field) {
                                Some(at) => Span::new(element.span.start + at, element.span.start + at + field.len()),
                                None => element.span,
                            };
                            out.push(Word { text: Some(field.to_string()), span });
                        }
                    }
                    _ => out.push(element.clone()),
                }
            }
            return;
        }
        let text = self.expand(node, 0);
        let name = match node.kind() {
            "simple_expansion" | "expansion" => self
                .source(node)
                .trim_start_matches(['$', '{'])
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next(),
            _ => None,
        };
        let (Some(name), Some(value)) = (name, text.as_ref()) else { return out.push(Word { text, span: word_span }) };
        // The assignment's text, when the value is the variable's own (not a default).
        let literal =
            self.literal.get(name).filter(|_| self.variables.get(name).cloned().flatten().as_ref() == Some(value));
        let mut at = literal.map_or(0, |r| r.0);
        for field in value.split([' ', '\t', '\n']).filter(|f| !f.is_empty()) {
            let found = literal.and_then(|&(_, end)| Some(at + self.text.get(at..end)?.find(field)?));
            let span = match found {
                Some(start) => {
                    at = start + field.len();
                    Span::new(start, at)
                }
                None => word_span,
            };
            out.push(Word { text: Some(field.to_string()), span });
        }
    }

    fn command(&mut self, node: TsNode) {
        let mut env = Vec::new();
        let mut words = Vec::new();
        // The double-quoted strings among the words, for a `bash -c` string's text.
        let mut strings = Vec::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "variable_assignment" => env.extend(self.assignment(child)),
                "file_redirect" | "herestring_redirect" | "comment" => {}
                "command_name" => self.words(child.named_child(0).unwrap_or(child), span(child), &mut words),
                "string" => {
                    strings.push(child);
                    self.words(child, span(child), &mut words)
                }
                _ => self.words(child, span(child), &mut words),
            }
        }
        // `env A=1 cmd`: the assignments `env` sets belong to the command after it.
        while words.first().and_then(|w| w.text.as_deref()) == Some("env") {
            words.remove(0);
            while let Some((name, value)) = words.first().and_then(split_assignment) {
                env.push((name, value));
                words.remove(0);
            }
        }
        // A string that expands something unknown keeps that expansion as written: the inner
        // shell's reading leaves the words holding it unknown, and reads the others.
        let inner = shell_string(&words).cloned().map(|mut string| {
            if string.text.is_none() {
                let node = strings.iter().find(|n| span(**n) == string.span);
                string.text = node.and_then(|n| self.pieces_keeping_unknown(*n));
            }
            string
        });
        if !words.is_empty() || !env.is_empty() {
            self.script.commands.push(Command { env, words });
        }
        if let Some(string) = inner {
            self.shell_string_commands(&string);
        }
    }

    /// The commands of a `bash -c STRING` string, run where the string is: read as a script of
    /// their own, their spans moved to where their text is in this one. The string's text is
    /// found in place when it is written literally (`'…'`, or `"…"` that expands and escapes
    /// nothing); otherwise each word is looked for in the string's source in turn, and a word
    /// the outer shell expanded is placed on the whole string. The inner shell sees the
    /// exported variables, not this script's others: only the outer shell's expansions (in a
    /// double-quoted string) are known inside it.
    fn shell_string_commands(&mut self, string: &Word) {
        let Some(inner) = string.text.as_deref().filter(|_| self.nesting < MAX_SHELL_STRINGS) else { return };
        let Some(mut script) = parse_at(inner, self.nesting + 1) else { return };
        let written = self.text.get(string.span.start..string.span.end).unwrap_or("");
        let quoted = written.len() >= 2 && written.starts_with(['\'', '"']) && written.ends_with(&written[..1]);
        let (source, base) =
            if quoted { (&written[1..written.len() - 1], string.span.start + 1) } else { (written, string.span.start) };
        let mut spans: Vec<Span> = script
            .commands
            .iter()
            .flat_map(|c| c.words.iter().map(|w| w.span).chain(c.env.iter().map(|(_, w)| w.span)))
            .chain(script.assignments.iter().map(|(_, w)| w.span))
            .collect();
        spans.sort_by_key(|s| (s.start, s.end));
        spans.dedup();
        let mut moved: HashMap<(usize, usize), Span> = HashMap::default();
        let mut at = 0;
        for span in spans {
            let piece = inner.get(span.start..span.end).unwrap_or("");
            let found = if source == inner {
                Some(span.start)
            } else {
                source.get(at..).and_then(|rest| rest.find(piece)).map(|i| at + i).filter(|_| !piece.is_empty())
            };
            let place = match found {
                Some(start) => {
                    at = at.max(start + piece.len());
                    Span::new(base + start, base + start + piece.len())
                }
                None => string.span,
            };
            moved.insert((span.start, span.end), place);
        }
        let mut relocate =
            |w: &mut Word| w.span = moved.get(&(w.span.start, w.span.end)).copied().unwrap_or(string.span);
        for command in &mut script.commands {
            command.words.iter_mut().for_each(&mut relocate);
            command.env.iter_mut().for_each(|(_, w)| relocate(w));
        }
        script.assignments.iter_mut().for_each(|(_, w)| relocate(w));
        self.script.commands.append(&mut script.commands);
        self.script.assignments.append(&mut script.assignments);
    }

    fn comment(&mut self, node: TsNode) {
        let text = self.text;
        let Some(rest) = text.get(node.byte_range()).and_then(|c| c.strip_prefix("#SBATCH")) else { return };
        let base = node.start_byte() + "#SBATCH".len();
        let mut offset = 0;
        let mut line = Vec::new();
        for piece in rest.split(|c: char| c.is_ascii_whitespace()) {
            if !piece.is_empty() {
                if piece.starts_with('#') {
                    break;
                }
                let start = base + offset;
                line.push(Word { text: Some(piece.to_string()), span: Span::new(start, start + piece.len()) });
            }
            offset += piece.len() + 1;
        }
        self.sbatch_variables(&line);
        self.script.sbatch.extend(line);
    }

    /// The variables SLURM sets in the job from a directive (sbatch(1), OUTPUT ENVIRONMENT
    /// VARIABLES): `SLURM_NNODES` and `SLURM_JOB_NUM_NODES` from `--nodes`/`-N` when it is
    /// one count (not a range), `SLURM_GPUS_ON_NODE` from `--gres=gpu:[type:]N` or
    /// `--gpus-per-node`, and `SLURM_GPUS_PER_NODE` from `--gpus-per-node` only.
    fn sbatch_variables(&mut self, line: &[Word]) {
        let Some(first) = line.first().and_then(|w| w.text.as_deref()) else { return };
        let (option, value) = match first.split_once('=') {
            Some((option, value)) => {
                let at = line[0].span.end - value.len();
                (option, Some((value.to_string(), Span::new(at, line[0].span.end))))
            }
            None => (first, line.get(1).and_then(|w| Some((w.text.clone()?, w.span)))),
        };
        let Some((value, span)) = value else { return };
        let count = |text: &str, span: Span| -> Option<(String, Span)> {
            let digits = text.rsplit(':').next()?;
            let at = span.end - digits.len();
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| (digits.to_string(), Span::new(at, span.end)))
        };
        let (names, found): (&[&str], _) = match option {
            "--nodes" | "-N" => {
                (&["SLURM_NNODES", "SLURM_JOB_NUM_NODES"], count(&value, span).filter(|_| !value.contains(':')))
            }
            "--gpus-per-node" => (&["SLURM_GPUS_ON_NODE", "SLURM_GPUS_PER_NODE"], count(&value, span)),
            "--gres" => {
                // --gres=gpu:8 or gpu:a100:8, possibly among other resources.
                let mut at = span.start;
                let gpus = value.split(',').find_map(|g| {
                    let found = g.starts_with("gpu").then(|| count(g, Span::new(at, at + g.len()))).flatten();
                    at += g.len() + 1;
                    found
                });
                (&["SLURM_GPUS_ON_NODE"], gpus)
            }
            _ => return,
        };
        for name in names {
            // A later directive replaces an earlier one; a range of nodes is no count.
            self.variables.insert(name.to_string(), found.as_ref().map(|(text, _)| text.clone()));
            match &found {
                Some((_, span)) => self.literal.insert(name.to_string(), (span.start, span.end)),
                None => self.literal.remove(*name),
            };
        }
    }

    /// The text of a word node after expansion; None when it expands something unknown.
    fn expand(&self, node: TsNode, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        match node.kind() {
            "word" | "number" => Some(unescape(self.source(node))),
            "raw_string" => {
                let s = self.source(node);
                Some(s.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')).unwrap_or(s).to_string())
            }
            "ansi_c_string" => {
                let s = self.source(node);
                Some(s.strip_prefix("$'").and_then(|s| s.strip_suffix('\'')).unwrap_or(s).to_string())
            }
            "string_content" => Some(unescape_double(self.source(node))),
            "simple_expansion" => {
                let name = self.source(node).trim_start_matches('$');
                self.variables.get(name).cloned().flatten()
            }
            "expansion" => self.parameter(self.source(node)),
            "arithmetic_expansion" => {
                arithmetic::expand(self.source(node), &|name| self.variables.get(name).cloned().flatten())
            }
            "string" => self.pieces(node, 1, 1, depth),
            "concatenation" => self.pieces(node, 0, 0, depth),
            _ => None,
        }
    }

    /// The children of a string or concatenation expanded and joined, with the literal text
    /// between them (inside `trim_start`/`trim_end` bytes of quotes).
    fn pieces(&self, node: TsNode, trim_start: usize, trim_end: usize, depth: usize) -> Option<String> {
        let (start, end) = (node.start_byte() + trim_start, node.end_byte().saturating_sub(trim_end));
        let mut out = String::new();
        let mut at = start;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            out.push_str(&unescape_double(self.text.get(at..child.start_byte().max(at))?));
            out.push_str(&self.expand(child, depth + 1)?);
            at = child.end_byte();
        }
        out.push_str(&unescape_double(self.text.get(at..end.max(at))?));
        Some(out)
    }

    /// A double-quoted string's text with what expands to something unknown left as written.
    fn pieces_keeping_unknown(&self, node: TsNode) -> Option<String> {
        let (start, end) = (node.start_byte() + 1, node.end_byte().saturating_sub(1));
        let mut out = String::new();
        let mut at = start;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            out.push_str(&unescape_double(self.text.get(at..child.start_byte().max(at))?));
            match self.expand(child, 1) {
                Some(text) => out.push_str(&text),
                None => out.push_str(self.source(child)),
            }
            at = child.end_byte();
        }
        out.push_str(&unescape_double(self.text.get(at..end.max(at))?));
        Some(out)
    }

    /// `${NAME}`, `${NAME:-default}`, `${NAME-default}`, `${NAME:=default}`.
    fn parameter(&self, source: &str) -> Option<String> {
        let inner = source.strip_prefix("${")?.strip_suffix('}')?;
        let name_len = inner.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        let (name, operator) = inner.split_at(name_len);
        let value = self.variables.get(name).cloned().flatten();
        let (unset_only, default) = match operator {
            "" => return value,
            op => match op.strip_prefix(":-").or_else(|| op.strip_prefix(":=")) {
                Some(d) => (false, d),
                None => (true, op.strip_prefix('-').or_else(|| op.strip_prefix('='))?),
            },
        };
        let assigned = self.variables.contains_key(name);
        match value {
            Some(v) if !v.is_empty() || (unset_only && assigned) => Some(v),
            None if assigned => None,
            _ if default.contains(['$', '`']) => self.default_with_variables(default),
            _ => Some(default.to_string()),
        }
    }

    /// A default that itself names variables (`${A:-$B}`).
    fn default_with_variables(&self, default: &str) -> Option<String> {
        let name = default.strip_prefix('$')?;
        let name = name.strip_prefix('{').and_then(|n| n.strip_suffix('}')).unwrap_or(name);
        if name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            self.variables.get(name).cloned().flatten()
        } else {
            None
        }
    }
}

/// The string a shell runs (`bash -c STRING`, `sh -lc STRING`, also after `srun`, `nohup`,
/// `exec`, `time` and their options, `srun -w "$node" bash -c …`): bash(1) runs the first
/// argument after an option cluster with `c` as a command string.
fn shell_string(words: &[Word]) -> Option<&Word> {
    fn text(w: &Word) -> &str {
        w.text.as_deref().unwrap_or("")
    }
    let name = |w: &Word| text(w).rsplit('/').next().unwrap_or("").to_string();
    let shell = |w: &Word| matches!(name(w).as_str(), "bash" | "sh" | "zsh" | "dash");
    // After a wrapper, the first shell among its options and their values.
    let wrapped = matches!(name(words.first()?).as_str(), "srun" | "nohup" | "exec" | "time");
    let i = if wrapped { words.iter().position(shell)? } else { 0 };
    if !shell(&words[i]) {
        return None;
    }
    let mut command = false;
    for word in &words[i + 1..] {
        match text(word).strip_prefix('-') {
            Some(options) if !options.starts_with('-') => command |= options.contains('c'),
            Some(_) => {}
            None => return command.then_some(word),
        }
    }
    None
}

/// `NAME=value` as one word (after `env`).
fn split_assignment(word: &Word) -> Option<(String, Word)> {
    let text = word.text.as_deref()?;
    let (name, value) = text.split_once('=')?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let start = word.span.start + name.len() + 1;
    Some((name.to_string(), Word { text: Some(value.to_string()), span: Span::new(start, word.span.end) }))
}

/// An unquoted word's text: `\x` is `x`; a `\` before a newline continues the line.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            },
            c => out.push(c),
        }
    }
    out
}

/// Text inside double quotes: only `\"`, `\\`, `\$`, `` \` `` and `\`-newline are escapes.
fn unescape_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('"' | '\\' | '$' | '`')) => out.extend(chars.next()),
            ('\\', Some('\n')) => {
                chars.next();
            }
            (c, _) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(command: &Command) -> Vec<String> {
        command.words.iter().map(|w| w.text.clone().unwrap_or_else(|| "?".into())).collect()
    }

    #[test]
    fn commands_expand_assignments_defaults_and_continuations() {
        let text = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:8  # eight\nexport NGPU=${NGPU:-4}\nCFG=\"configs/a b.yaml\"\n\
                    CUDA_VISIBLE_DEVICES=0,1 accelerate launch --num_processes $NGPU \\\n  --config_file \"$CFG\" train.py --lr '1e-5' --out ${OUT}/x $1\n";
        let script = parse(text).unwrap();
        let sbatch: Vec<_> = script.sbatch.iter().filter_map(|w| w.text.clone()).collect();
        assert_eq!(sbatch, ["--nodes=2", "--gres=gpu:8"]);
        let launch = script.commands.last().unwrap();
        assert_eq!(
            texts(launch),
            [
                "accelerate",
                "launch",
                "--num_processes",
                "4",
                "--config_file",
                "configs/a b.yaml",
                "train.py",
                "--lr",
                "1e-5",
                "--out",
                "?",
                "?"
            ]
        );
        // The value is `${NGPU:-4}`'s default: found there, where it is written.
        assert_eq!(launch.words[3].span.start, text.find("4}").unwrap());
        assert_eq!(launch.env[0].0, "CUDA_VISIBLE_DEVICES");
        assert_eq!(launch.env[0].1.text.as_deref(), Some("0,1"));
    }

    #[test]
    fn unquoted_expansions_split_into_fields_found_in_their_assignment() {
        let text =
            "ARGS=\"--nproc_per_node 8 \\\n  --nnodes 2\"\nQ=\"a b\"\ntorchrun $ARGS train.py \"$Q\" ${MISSING:-x y}\n";
        let script = parse(text).unwrap();
        let launch = script.commands.last().unwrap();
        assert_eq!(texts(launch), ["torchrun", "--nproc_per_node", "8", "--nnodes", "2", "train.py", "a b", "x", "y"]);
        let at = |i: usize| &text[launch.words[i].span.start..launch.words[i].span.end];
        assert_eq!((at(1), at(2), at(4)), ("--nproc_per_node", "8", "2"));
        // A default's fields have no assignment: the expansion is where they are.
        assert_eq!(at(7), "${MISSING:-x y}");
    }

    #[test]
    fn a_heredoc_read_whole_assigns_its_variable() {
        let text = "read -r -d '' cmds <<EOF\nopenrlhf.cli.train_sft \\\n   --data.max_len 2048\nEOF\n\
                    deepspeed --module $cmds\nread -r -d '' other <<EOF\n--x $HOME\nEOF\necho $other\n";
        let script = parse(text).expect("script");
        let launch = &script.commands.iter().find(|c| c.words[0].text.as_deref() == Some("deepspeed")).expect("launch");
        let words: Vec<_> = launch.words.iter().map(|w| w.text.clone().unwrap_or_default()).collect();
        assert_eq!(words, ["deepspeed", "--module", "openrlhf.cli.train_sft", "--data.max_len", "2048"]);
        assert_eq!(&text[launch.words[4].span.start..launch.words[4].span.end], "2048");
        let echo = script.commands.last().expect("echo");
        assert_eq!(echo.words[1].text, None, "the body expands $HOME");
    }

    #[test]
    fn an_array_expands_to_its_elements_where_they_are_written() {
        let text = "M=org/model\nARGS=(\n   --model ${M}\n   # --lr 1\n   --out \"$(pwd)/x\"\n)\npython -m t ${ARGS[@]} --z 1\n";
        let script = parse(text).expect("script");
        let launch = script.commands.last().expect("launch");
        let words: Vec<_> = launch.words.iter().map(|w| w.text.clone()).collect();
        let known = |s: &str| Some(s.to_string());
        assert_eq!(
            words,
            [
                known("python"),
                known("-m"),
                known("t"),
                known("--model"),
                known("org/model"),
                known("--out"),
                None,
                known("--z"),
                known("1")
            ]
        );
        assert_eq!(&text[launch.words[3].span.start..launch.words[3].span.end], "--model");
        assert_eq!(&text[launch.words[4].span.start..launch.words[4].span.end], "${M}");
    }

    #[test]
    fn a_variable_with_a_literal_default_is_found_at_its_default() {
        let text = "MB=${MB:-8}\nLR=${LR:-$BASE}\ntrl sft --per_device_train_batch_size $MB --lr $LR\n";
        let script = parse(text).unwrap();
        let words = &script.commands[0].words;
        assert_eq!(words[3].text.as_deref(), Some("8"));
        assert_eq!(&text[words[3].span.start..words[3].span.end], "8");
        assert_eq!(words[3].span.start, text.find("8}").unwrap(), "the default in the assignment");
        // A default that expands something else is not where the value is written.
        assert_eq!(&text[words[5].span.start..words[5].span.end], "$LR");
    }

    #[test]
    fn a_bash_c_string_is_read_as_commands_where_its_text_is() {
        let text = "#!/bin/bash\nMODEL=org/m\nsrun -N 1 -w \"$node\" bash -lc 'export CUDA_VISIBLE_DEVICES=0,1; \\\n  trl sft --lr 1e-5 --x \"a b\"'\n\
                    sh -c \"trl dpo --model_name_or_path $MODEL --beta 0.1\"\nbash run.sh -c x\n";
        let script = parse(text).unwrap();
        let commands: Vec<Vec<String>> = script.commands.iter().map(texts).collect();
        assert_eq!(commands[1], ["trl", "sft", "--lr", "1e-5", "--x", "a b"]);
        assert_eq!(commands[3], ["trl", "dpo", "--model_name_or_path", "org/m", "--beta", "0.1"]);
        assert_eq!(commands.len(), 5, "a script's `-c` is no command string: {commands:?}");
        // Literal text: every word where it is written.
        for word in &script.commands[1].words {
            let written = &text[word.span.start..word.span.end];
            assert_eq!(written.trim_matches('"'), word.text.as_deref().unwrap(), "{word:?}");
        }
        let (name, visible) = &script.assignments.last().unwrap();
        assert_eq!((name.as_str(), &text[visible.span.start..visible.span.end]), ("CUDA_VISIBLE_DEVICES", "0,1"));
        // Expanded by the outer shell: found in turn, the expansion on the whole string.
        let dpo = &script.commands[3].words;
        assert_eq!(&text[dpo[4].span.start..dpo[4].span.end], "--beta");
        let string = &script.commands[2].words[2];
        assert_eq!(dpo[3].span, string.span);
        // An unknown expansion leaves its words unknown, not the whole string.
        let text = "bash -c \"pip install ray==$VERSION && trl sft --lr $(cat lr) --x 1\"\n";
        let script = parse(text).unwrap();
        let commands: Vec<Vec<String>> = script.commands.iter().map(texts).collect();
        assert_eq!(commands[1], ["pip", "install", "?"]);
        assert_eq!(commands[2], ["trl", "sft", "--lr", "?", "--x", "1"]);
        let x = &script.commands[2].words[4];
        assert_eq!(&text[x.span.start..x.span.end], "--x");
    }

    #[test]
    fn arithmetic_expansions_over_the_scripts_variables() {
        let text = "nproc_per_gpu=32\nnnodes=1\nngpu_per_node=2\ntotal_procs=$(( nproc_per_gpu * nnodes * ngpu_per_node ))\n\
                    mini_batch_size=$(( total_procs ))\npython3 -m verl.trainer.main_ppo data.train_batch_size=${total_procs} \\\n  \
                    a.ppo_micro_batch_size=${mini_batch_size} b=\"$(( mini_batch_size / 2 ))x\" c=$((ngpu_per_node*4)) d=$(( n * 2 ))\n";
        let script = parse(text).unwrap();
        let launch = script.commands.last().unwrap();
        assert_eq!(
            texts(launch),
            [
                "python3",
                "-m",
                "verl.trainer.main_ppo",
                "data.train_batch_size=64",
                "a.ppo_micro_batch_size=64",
                "b=32x",
                "c=8",
                "?"
            ]
        );
        let assigned: Vec<_> = script.assignments.iter().map(|(n, w)| (n.as_str(), w.text.as_deref())).collect();
        assert_eq!(assigned[3], ("total_procs", Some("64")));
        // A variable assigned to something unknown leaves what it computes unknown.
        let script = parse("n=$(nproc)\nm=$(( n * 2 ))\ntorchrun --nproc_per_node $m x.py\n").unwrap();
        assert_eq!(texts(script.commands.last().unwrap()), ["torchrun", "--nproc_per_node", "?", "x.py"]);
    }

    #[test]
    fn sbatch_directives_set_slurm_node_and_gpu_variables() {
        let text = "#!/bin/bash\n#SBATCH --nodes=2-3\n#SBATCH -N 4\n#SBATCH --gres=gpu:h100:8\n\
                    torchrun --nnodes $SLURM_NNODES --nproc_per_node=$SLURM_GPUS_ON_NODE train.py $SLURM_GPUS_PER_NODE\n";
        let script = parse(text).unwrap();
        let launch = script.commands.last().unwrap();
        // SLURM_GPUS_PER_NODE is set by --gpus-per-node only.
        assert_eq!(texts(launch), ["torchrun", "--nnodes", "4", "--nproc_per_node=8", "train.py", "?"]);
        assert_eq!(&text[launch.words[2].span.start..launch.words[2].span.end], "4");
        // A range of nodes is no count.
        let script = parse("#SBATCH -N 4\n#SBATCH --nodes=2-3\ntorchrun --nnodes $SLURM_JOB_NUM_NODES x.py\n").unwrap();
        assert_eq!(texts(script.commands.last().unwrap()), ["torchrun", "--nnodes", "?", "x.py"]);
    }
}
