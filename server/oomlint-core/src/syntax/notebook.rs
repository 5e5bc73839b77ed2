//! Jupyter notebooks (`.ipynb`): the code cells, in order, read as one Python program.
//!
//! The notebook JSON is parsed with the JSON adapter; each code cell's `source` strings
//! are decoded and concatenated (a newline between cells) into one program, with a map
//! from every program byte back to the bytes of the JSON file that encode it. The
//! [`Program`] is read by the Python adapter and its spans are mapped through that map,
//! so every span above this layer points into the `.ipynb` file itself (fixes edit the
//! JSON text); it records each code cell's span. [`cell_position`] turns a file offset
//! into a cell number and a line in the cell for output that speaks of cells.
//!
//! IPython lines (`%…`, `!…`) are blanked before parsing; `%env NAME=value`,
//! `%env NAME value` and `!export NAME=value` are read as environment settings.

use super::python::{self, Cell, Constants, EnvSetting, Program, PyValue, Spanned, Static};
use super::{json, Comment, Document, Language, Node, ProblemKind, SyntaxProblem};
use crate::span::Span;

/// The code cells of a notebook as one program.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Cells {
    /// The concatenated source of the code cells (IPython lines blanked).
    pub(crate) program: String,
    /// For each program byte, the file range of the JSON text that encodes it.
    origin: Vec<(usize, usize)>,
    /// Per code cell: (cell index among all cells, program offset where it starts).
    starts: Vec<(usize, usize)>,
    /// Environment settings from `%env` and `!export` lines, in program offsets.
    env: Vec<EnvSetting>,
}

impl Cells {
    /// Maps a program span to the file span that encodes it.
    fn to_file(&self, span: Span) -> Span {
        let at = |i: usize| self.origin.get(i).copied();
        let last_end = self.origin.last().map_or(0, |o| o.1);
        let start = at(span.start).map_or(last_end, |o| o.0);
        let end = if span.end <= span.start { start } else { at(span.end - 1).map_or(last_end, |o| o.1) };
        Span::new(start, end.max(start))
    }
}

/// Parses a notebook into the [`Document`] of its code cells: their comments and their
/// [`Program`], or the problem that makes it no notebook.
pub(crate) fn parse(text: &str) -> Document {
    parse_with(text, &|_| false)
}

/// [`parse`], reading the attributes `constants` names as constants.
pub(crate) fn parse_with(text: &str, constants: Constants) -> Document {
    match program_with(text, constants) {
        Ok(program) => Document {
            language: Language::Notebook,
            root: None,
            comments: program.comments.iter().map(|&span| Comment { span }).collect(),
            problems: Vec::new(),
            program: Some(Box::new(program)),
        },
        Err(problem) => Document {
            language: Language::Notebook,
            root: None,
            comments: Vec::new(),
            problems: vec![problem],
            program: None,
        },
    }
}

/// The notebook's code cells as one program, with every span in file offsets, reading the
/// attributes `constants` names as constants.
pub(crate) fn program_with(text: &str, constants: Constants) -> Result<Program, SyntaxProblem> {
    let json = json::parse(text);
    if let Some(problem) = json.problems.iter().find(|p| p.kind == ProblemKind::Syntax) {
        return Err(problem.clone());
    }
    let Some(cells) = cells(text, &json) else {
        return Err(SyntaxProblem {
            kind: ProblemKind::Syntax,
            message: "not a Jupyter notebook (no `cells` list)".into(),
            span: Span::empty(0),
        });
    };
    let mut program = python::program_with(&cells.program, constants);
    program.env.extend(cells.env.iter().cloned());
    let ends = cells.starts.iter().skip(1).map(|&(_, start)| start.saturating_sub(1)).chain([cells.program.len()]);
    program.cells = cells
        .starts
        .iter()
        .zip(ends)
        .map(|(&(index, start), end)| Cell { number: index + 1, span: Span::new(start, end.max(start)) })
        .collect();
    program.map_spans(&|span| cells.to_file(span));
    Ok(program)
}

/// The code cells of a parsed notebook (None when the JSON is not a notebook).
pub(crate) fn cells(text: &str, json: &Document) -> Option<Cells> {
    let mut out = Cells::default();
    for (index, strings) in code_cells(json)? {
        if !out.program.is_empty() {
            let joint = out.origin.last().map_or(0, |o| o.1);
            out.program.push('\n');
            out.origin.push((joint, joint));
        }
        out.starts.push((index, out.program.len()));
        let cell_start = out.program.len();
        for string in strings {
            decode_into(text, string.span, &mut out.program, &mut out.origin);
        }
        blank_ipython_lines(&mut out, cell_start);
    }
    Some(out)
}

/// The code cells of a notebook's JSON: (index among all cells, the strings of its `source`).
fn code_cells(json: &Document) -> Option<Vec<(usize, Vec<&Node>)>> {
    let list = json.root_mapping()?.get("cells")?.as_sequence()?;
    let mut out = Vec::new();
    for (index, cell) in list.iter().enumerate() {
        let Some(cell) = cell.as_mapping() else { continue };
        if cell.get("cell_type").and_then(Node::as_scalar).map(|s| s.text.as_str()) != Some("code") {
            continue;
        }
        let strings = match cell.get("source") {
            Some(source) => source.as_sequence().map_or_else(|| vec![source], |items| items.iter().collect()),
            None => Vec::new(),
        };
        out.push((index, strings));
    }
    Some(out)
}

/// One code cell's source as written (IPython lines kept), for output that shows cells.
#[derive(Debug, Clone, PartialEq)]
pub struct CellSource {
    /// The cell's number among all cells, from 1.
    pub number: usize,
    pub text: String,
    /// For each byte of `text`, the file range of the JSON text that encodes it.
    origin: Vec<(usize, usize)>,
}

impl CellSource {
    /// The span in the cell's text of a file span that starts inside this cell.
    pub fn span_of(&self, file: Span) -> Option<Span> {
        let start = self.origin.iter().position(|&(s, e)| s <= file.start && file.start < e.max(s + 1))?;
        let end = self.origin.iter().rposition(|&(s, _)| s < file.end).map_or(start, |i| i + 1).max(start);
        Some(Span::new(start, end))
    }
}

/// Every code cell of a notebook, decoded on its own (empty when the text is not one).
pub fn cell_sources(text: &str) -> Vec<CellSource> {
    let json = json::parse(text);
    let Some(cells) = code_cells(&json) else { return Vec::new() };
    cells
        .into_iter()
        .map(|(index, strings)| {
            let mut cell = CellSource { number: index + 1, text: String::new(), origin: Vec::new() };
            for string in strings {
                decode_into(text, string.span, &mut cell.text, &mut cell.origin);
            }
            cell
        })
        .collect()
}

/// Appends the decoded JSON string at `span` (quotes included) to `program`, and the file
/// range of each decoded byte to `origin`.
fn decode_into(text: &str, span: Span, program: &mut String, origin: &mut Vec<(usize, usize)>) {
    let Some(raw) = text.get(span.start..span.end) else { return };
    if raw.len() < 2 || !raw.starts_with('"') {
        return;
    }
    let body = &raw[1..raw.len() - 1];
    let base = span.start + 1;
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let (decoded, end) = if c == '\\' {
            match chars.next() {
                Some((j, 'u')) => {
                    let hex = body.get(j + 1..j + 5).and_then(|h| u32::from_str_radix(h, 16).ok());
                    for _ in 0..4 {
                        chars.next();
                    }
                    let mut end = j + 5;
                    let mut code = hex.unwrap_or(0xFFFD);
                    if (0xD800..0xDC00).contains(&code) && body.get(end..end + 2) == Some("\\u") {
                        if let Some(low) = body.get(end + 2..end + 6).and_then(|h| u32::from_str_radix(h, 16).ok()) {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low.saturating_sub(0xDC00) & 0x3FF);
                            for _ in 0..6 {
                                chars.next();
                            }
                            end += 6;
                        }
                    }
                    (char::from_u32(code).unwrap_or('\u{FFFD}'), end)
                }
                Some((j, e)) => {
                    let decoded = match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        other => other,
                    };
                    (decoded, j + e.len_utf8())
                }
                None => break,
            }
        } else {
            (c, i + c.len_utf8())
        };
        let mut buf = [0u8; 4];
        for _ in decoded.encode_utf8(&mut buf).bytes() {
            origin.push((base + i, base + end));
        }
        program.push(decoded);
    }
}

/// Blanks IPython lines of the cell starting at `cell_start`, reading `%env`/`!export`.
fn blank_ipython_lines(out: &mut Cells, cell_start: usize) {
    let mut line_start = cell_start;
    let mut blanks = Vec::new();
    while line_start < out.program.len() {
        let line_end = out.program[line_start..].find('\n').map_or(out.program.len(), |n| line_start + n);
        let line = &out.program[line_start..line_end];
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim_start();
        if trimmed.starts_with('%') || trimmed.starts_with('!') {
            let command_start = line_start + indent;
            out.env.extend(magic_env(trimmed, command_start));
            blanks.push(Span::new(command_start, line_end));
        }
        line_start = line_end + 1;
    }
    for span in blanks {
        let spaces = " ".repeat(out.program[span.start..span.end].chars().count());
        // Keep one program byte per original byte so the origin map stays aligned.
        let per_char: Vec<(usize, usize)> =
            out.program[span.start..span.end].char_indices().map(|(i, _)| out.origin[span.start + i]).collect();
        out.program.replace_range(span.start..span.end, &spaces);
        out.origin.splice(span.start..span.end, per_char);
    }
}

/// `%env NAME=value`, `%env NAME value` or `!export NAME=value`, at program offset `at`.
fn magic_env(line: &str, at: usize) -> Option<EnvSetting> {
    let rest = line.strip_prefix("%env").or_else(|| line.strip_prefix("!export"))?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let body = rest.trim_start();
    let body_at = at + (line.len() - body.len());
    let body = body.trim_end();
    let split = body.find(['=', ' ', '\t'])?;
    let name = &body[..split];
    let raw_value = body[split + 1..].trim_start();
    let value_at = body_at + (body.len() - raw_value.len());
    let (value, value_span) = match raw_value.as_bytes().first() {
        Some(b'"' | b'\'') if raw_value.len() >= 2 && raw_value.ends_with(&raw_value[..1]) => {
            (&raw_value[1..raw_value.len() - 1], Span::new(value_at, value_at + raw_value.len()))
        }
        _ => (raw_value, Span::new(value_at, value_at + raw_value.len())),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    Some(EnvSetting {
        name: name.to_string(),
        name_span: Span::new(body_at, body_at + name.len()),
        value: Static::Known(Spanned { value: PyValue::Str(value.to_string(), false), span: value_span }),
        dead: false,
    })
}

/// Cell text as it is stored in the notebook: inside a JSON string.
pub(crate) fn encode(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_string()
}

/// Where a file offset lies in a notebook: (cell number from 1, line in the cell from 1,
/// column in characters from 1). None for offsets outside the code cells.
pub fn cell_position(text: &str, offset: usize) -> Option<(usize, usize, usize)> {
    let json = json::parse(text);
    let cells = cells(text, &json)?;
    let program_offset =
        cells.origin.iter().position(|&(start, end)| start <= offset && offset < end.max(start + 1))?;
    let cell = cells.starts.iter().rev().find(|(_, start)| *start <= program_offset)?;
    let before = cells.program.get(cell.1..program_offset)?;
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some((cell.0 + 1, line, column))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notebook(cells: &[&str]) -> String {
        let cells: Vec<String> = cells
            .iter()
            .map(|source| {
                let lines: Vec<String> =
                    source.split_inclusive('\n').map(|l| serde_json::to_string(l).unwrap_or_default()).collect();
                format!(
                    "{{\"cell_type\": \"code\", \"metadata\": {{}}, \"outputs\": [], \"source\": [{}]}}",
                    lines.join(", ")
                )
            })
            .collect();
        format!("{{\"cells\": [{}], \"metadata\": {{}}, \"nbformat\": 4, \"nbformat_minor\": 5}}", cells.join(", "))
    }

    fn slice(text: &str, span: Span) -> &str {
        &text[span.start..span.end]
    }

    /// The notebook's program with no attribute read as a constant.
    fn program(text: &str) -> Result<Program, SyntaxProblem> {
        program_with(text, &|_| false)
    }

    /// A keyword argument of the first call to `callee`: (keyword span, value span).
    fn keyword(program: &Program, callee: &str, keyword: &str) -> (Span, Span) {
        let call = program.calls.iter().find(|c| c.path.last().is_some_and(|l| l == callee)).unwrap();
        let arg = call.args.iter().find(|a| a.keyword.as_deref() == Some(keyword)).unwrap();
        match &arg.value {
            Static::Known(v) => (arg.key_span, v.span),
            Static::Unknown(why) => panic!("{keyword}: {why}"),
        }
    }

    #[test]
    fn code_cells_read_as_one_program_with_file_spans() {
        let text = notebook(&[
            "%env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n!pip install unsloth\nR = 16\n",
            "from peft import LoraConfig\ncfg = LoraConfig(r=R, target_modules=[\"q_proj\"])\n",
        ]);
        let program = program(&text).unwrap();
        let (rank_key, rank) = keyword(&program, "LoraConfig", "r");
        assert_eq!(slice(&text, rank_key), "r");
        // The value is the constant's literal in the first cell.
        assert_eq!(slice(&text, rank), "16");
        let (_, targets) = keyword(&program, "LoraConfig", "target_modules");
        assert_eq!(slice(&text, targets), "[\\\"q_proj\\\"]");
        let conf = program.env.iter().find(|e| e.name == "PYTORCH_CUDA_ALLOC_CONF").unwrap();
        let Static::Known(value) = &conf.value else { panic!("{conf:?}") };
        assert_eq!(slice(&text, value.span), "expandable_segments:True");
        assert_eq!(cell_position(&text, rank_key.start), Some((2, 2, 18)));
        assert_eq!(cell_position(&text, conf.name_span.start), Some((1, 1, 6)));
        let cells: Vec<(usize, &str)> = program.cells.iter().map(|c| (c.number, slice(&text, c.span))).collect();
        assert_eq!(cells[0].0, 1);
        assert!(cells[0].1.starts_with("%env") && cells[0].1.ends_with("R = 16\\n"), "{cells:?}");
        assert_eq!(cells[1].0, 2);
        assert!(cells[1].1.starts_with("from peft") && cells[1].1.ends_with(")\\n"), "{cells:?}");
        assert_eq!(parse(&text).comments, []);
    }

    #[test]
    fn escapes_map_back_to_their_json_bytes() {
        // "é" as \u00e9, an emoji as a surrogate pair, a tab, then a constant.
        let text = "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"# \\u00e9 \\ud83d\\ude00\\tx\\nfrom trl import SFTConfig\\nSFTConfig(max_length=77)\"}, {\"cell_type\": \"code\", \"source\": 5}, \"junk\"]}";
        let program = program(text).unwrap();
        let (key, value) = keyword(&program, "SFTConfig", "max_length");
        assert_eq!(slice(text, value), "77");
        assert_eq!(slice(text, key), "max_length");
        assert_eq!(cell_position(text, key.start), Some((1, 3, 11)));
        let comment = parse(text).comments[0].span;
        assert_eq!(slice(text, comment), "# \\u00e9 \\ud83d\\ude00\\tx");
    }

    #[test]
    fn cell_sources_keep_ipython_lines_and_map_file_spans() {
        let text = notebook(&["x = 1\n", "%env A=1\nSFTConfig(max_length=\"é\")\n"]);
        let cells = cell_sources(&text);
        assert_eq!(cells.len(), 2);
        assert_eq!((cells[1].number, cells[1].text.as_str()), (2, "%env A=1\nSFTConfig(max_length=\"é\")\n"));
        // The quoted value is escaped in the file (`\"é\"`) and plain in the cell.
        let at = text.find("\\\"é").unwrap();
        let in_cell = cells[1].span_of(Span::new(at, at + "\\\"é\\\"".len())).unwrap();
        assert_eq!(&cells[1].text[in_cell.start..in_cell.end], "\"é\"");
        assert_eq!(cells[0].span_of(Span::new(at, at + 1)), None);
        assert!(cell_sources("{\"cells\": 3}").is_empty());
    }

    #[test]
    fn broken_notebooks_are_syntax_problems() {
        assert!(parse("{\"cells\": [").is_incomplete());
        assert!(parse("{\"nbformat\": 4}").is_incomplete());
        assert!(!parse("{\"cells\": []}").is_incomplete());
    }
}
