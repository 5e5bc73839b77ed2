//! Python scripts as a static reader sees them: every call with its arguments, the names
//! bound to calls, the branches that never run, environment settings, comments and imports.
//!
//! The script is parsed with tree-sitter-python, which keeps a tree (with error nodes)
//! for code that is still being typed and gives exact byte spans. [`program`] reads it
//! into a [`Program`]: each call's callee as a dotted path with simple import aliases
//! resolved (`trl.GRPOConfig` for `C` after `from trl import GRPOConfig as C`), its
//! positional and keyword arguments with their spans and static values (see [`values`]),
//! the names bound to call results in program order, whether a call lies in a branch that
//! never runs (`if False:`, a module-level function never called), and environment
//! settings (`os.environ[...] = ...`, `os.environ.setdefault(...)`; a notebook adds `%env`
//! and `!export`). A `**` argument whose value is a constant dict reads as its keywords.
//!
//! This layer knows Python, not frameworks: which calls configure a training run, and how
//! their arguments read as a config, is `format::python`'s business.

mod cursor;
mod values;

pub use cursor::open_call;
pub(crate) use values::Constants;
pub use values::{Spanned, Value as PyValue};

use super::{Comment, Document, Language, Literal};
use crate::span::Span;
use crate::HashMap;
use tree_sitter::{Node as TsNode, Parser};
use values::{Bindings, Evaluator};

/// A value known without running the program, or why it is not.
#[derive(Debug, Clone, PartialEq)]
pub enum Static {
    Known(Spanned),
    /// Not known without running the script; the reason.
    Unknown(String),
}

/// One argument of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    /// The keyword; None for a positional argument.
    pub(crate) keyword: Option<String>,
    /// How many positional arguments come before this one.
    pub(crate) position: usize,
    /// The keyword's span (the whole argument for positional ones).
    pub key_span: Span,
    /// The argument's expression.
    pub span: Span,
    /// The expression's static value (for a name, the value of the constant it names).
    pub value: Static,
    /// The call the expression is (an index into [`Program::calls`]).
    pub call: Option<usize>,
    /// The variable the expression is (`args=cfg`), to look up in [`Program::bindings`].
    pub(crate) name: Option<String>,
}

/// A call whose callee is a dotted name, with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The callee's dotted path, import aliases resolved (`["unsloth", "FastModel", "from_pretrained"]`).
    pub(crate) path: Vec<String>,
    /// The callee expression (`FastLanguageModel.from_pretrained`).
    pub name_span: Span,
    /// The parenthesized argument list (up to the end of the code typed so far when it is
    /// not closed; such a call has only its keyword arguments).
    pub args_span: Span,
    pub args: Vec<Arg>,
    /// `**kwargs` or `*args` hide arguments a static reader cannot see.
    pub(crate) has_splat: bool,
    /// The call lies in a branch that never runs (`if False:`, `else:` after `if True:`).
    pub(crate) dead: bool,
}

/// A variable bound to a call's result (`args = SFTConfig(...)`; `model, tok = load(...)`
/// binds `model`).
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub(crate) name: String,
    /// An index into [`Program::calls`]; the binding takes effect after the call's start.
    pub call: usize,
}

/// An environment variable set by the script.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvSetting {
    pub(crate) name: String,
    pub name_span: Span,
    pub value: Static,
    /// The assignment lies in a branch that never runs.
    pub(crate) dead: bool,
}

/// A notebook's code cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The cell's number among all cells, from 1.
    pub(crate) number: usize,
    /// The span of its code (in the file).
    pub span: Span,
}

/// Everything a static reader takes from one script (or the code cells of a notebook).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    /// Every call with a dotted callee, in document order.
    pub calls: Vec<Call>,
    /// Variables bound to calls, in the order of the calls.
    pub bindings: Vec<Binding>,
    pub env: Vec<EnvSetting>,
    pub(crate) comments: Vec<Span>,
    /// The top-level modules the script imports (`unsloth`, `trl`).
    pub(crate) modules: Vec<String>,
    /// A notebook's code cells, in order (empty for a script).
    pub cells: Vec<Cell>,
    /// Local name → imported dotted path (`C` → `trl.GRPOConfig`).
    aliases: HashMap<String, Vec<String>>,
}

impl Program {
    /// A dotted path as written in the script with its first segment's import alias
    /// applied (`["C"]` → `["trl", "GRPOConfig"]`).
    pub fn resolve(&self, segments: Vec<String>) -> Vec<String> {
        resolve(&self.aliases, segments)
    }

    /// The call a variable refers to at `at`: the last call bound to `name` that ends
    /// before `at` and for which `accept` holds (in `model = wrap(model)` the argument is
    /// the earlier `model`).
    pub(crate) fn bound_call(&self, name: &str, at: usize, accept: impl Fn(usize) -> bool) -> Option<usize> {
        self.bindings
            .iter()
            .rev()
            .filter(|b| b.name == name && accept(b.call))
            .find(|b| self.calls.get(b.call).is_some_and(|c| c.name_span.start < at && c.args_span.end <= at))
            .map(|b| b.call)
    }

    /// Applies `map` to every span (notebooks map program offsets to file offsets).
    pub(crate) fn map_spans(&mut self, map: &dyn Fn(Span) -> Span) {
        fn value(v: &mut Static, map: &dyn Fn(Span) -> Span) {
            if let Static::Known(s) = v {
                spanned(s, map);
            }
        }
        fn spanned(s: &mut Spanned, map: &dyn Fn(Span) -> Span) {
            s.span = map(s.span);
            match &mut s.value {
                PyValue::List(items) => items.iter_mut().for_each(|i| spanned(i, map)),
                PyValue::Dict(entries) => {
                    for (_, key, v) in entries {
                        *key = map(*key);
                        spanned(v, map);
                    }
                }
                _ => {}
            }
        }
        for call in &mut self.calls {
            call.name_span = map(call.name_span);
            call.args_span = map(call.args_span);
            for arg in &mut call.args {
                arg.key_span = map(arg.key_span);
                arg.span = map(arg.span);
                value(&mut arg.value, map);
            }
        }
        for setting in &mut self.env {
            setting.name_span = map(setting.name_span);
            value(&mut setting.value, map);
        }
        for comment in &mut self.comments {
            *comment = map(*comment);
        }
        for cell in &mut self.cells {
            cell.span = map(cell.span);
        }
    }
}

/// Parses a Python script into its [`Document`]: its comments and its [`Program`]. The
/// document has no tree of its own; `format` lays the program's calls out as one.
pub(crate) fn parse(text: &str) -> Document {
    parse_with(text, &|_| false)
}

/// [`parse`], reading the attributes `constants` names as constants.
pub(crate) fn parse_with(text: &str, constants: Constants) -> Document {
    let program = program_with(text, constants);
    Document {
        language: Language::Python,
        root: None,
        comments: program.comments.iter().map(|&span| Comment { span }).collect(),
        problems: Vec::new(),
        program: Some(Box::new(program)),
    }
}

/// How Python writes `literal` (`True`, `None`, a double-quoted string).
pub(crate) fn spell(literal: &Literal) -> String {
    match literal {
        Literal::Null => "None".into(),
        Literal::Bool(true) => "True".into(),
        Literal::Bool(false) => "False".into(),
        Literal::Str(s) => format!("\"{}\"", escape(s, '"')),
        number => number.to_string(),
    }
}

/// `text` escaped for a Python string literal delimited by `quote`.
pub(crate) fn escape(text: &str, quote: char) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
thread_local! {
    /// Tree-sitter parses of Python source on this thread: tests count them to check that
    /// one analysis parses its script once.
    pub(crate) static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Parses a Python script and reads its [`Program`].
pub fn program(source: &str) -> Program {
    program_with(source, &|_| false)
}

/// [`program`], reading the attributes `constants` names as constants (their text).
pub(crate) fn program_with(source: &str, constants: Constants) -> Program {
    #[cfg(test)]
    PARSES.with(|parses| parses.set(parses.get() + 1));
    let mut parser = Parser::new();
    if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
        return Program::default();
    }
    let Some(tree) = parser.parse(source, None) else {
        return Program::default();
    };
    Reader::new(source, tree.root_node(), constants).read()
}

pub(super) fn text_of<'s>(node: TsNode, source: &'s str) -> Option<&'s str> {
    source.get(node.start_byte()..node.end_byte())
}

fn span_of(node: TsNode) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// A dotted path with its first segment's import alias applied.
fn resolve(aliases: &HashMap<String, Vec<String>>, segments: Vec<String>) -> Vec<String> {
    let Some(first) = segments.first() else { return segments };
    let mut path = aliases.get(first).cloned().unwrap_or_else(|| vec![first.clone()]);
    path.extend(segments.into_iter().skip(1));
    path
}

struct Reader<'s, 't> {
    source: &'s str,
    constants: Constants<'s>,
    root: TsNode<'t>,
    bindings: Bindings<'t>,
    /// Local name → imported dotted path (`C` → `trl.GRPOConfig`).
    aliases: HashMap<String, Vec<String>>,
    /// The top-level module of every import.
    modules: Vec<String>,
}

impl<'s, 't> Reader<'s, 't> {
    fn new(source: &'s str, root: TsNode<'t>, constants: Constants<'s>) -> Self {
        let bindings = Bindings::collect(root, source);
        let mut reader = Reader { source, constants, root, bindings, aliases: HashMap::default(), modules: Vec::new() };
        reader.collect_imports();
        reader
    }

    /// Every node in document order, without recursion.
    fn nodes(&self) -> Vec<TsNode<'t>> {
        let mut out = Vec::new();
        let mut stack = vec![self.root];
        while let Some(node) = stack.pop() {
            out.push(node);
            let mut cursor = node.walk();
            let children: Vec<_> = node.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
        out
    }

    fn collect_imports(&mut self) {
        for node in self.nodes() {
            match node.kind() {
                "import_from_statement" => {
                    let module = node.child_by_field_name("module_name").map(|m| self.dotted(m)).unwrap_or_default();
                    self.note_module(&module);
                    let mut cursor = node.walk();
                    for name in node.children_by_field_name("name", &mut cursor) {
                        let (imported, local) = self.import_name(name);
                        let mut path = module.clone();
                        path.extend(imported);
                        if let Some(local) = local {
                            self.aliases.insert(local, path);
                        }
                    }
                }
                "import_statement" => {
                    let mut cursor = node.walk();
                    for name in node.children_by_field_name("name", &mut cursor) {
                        let (imported, alias) = self.import_name(name);
                        self.note_module(&imported);
                        if let Some(alias) = alias.filter(|_| name.kind() == "aliased_import") {
                            self.aliases.insert(alias, imported);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn note_module(&mut self, path: &[String]) {
        if let Some(first) = path.first().filter(|m| !m.is_empty() && !self.modules.contains(m)) {
            self.modules.push(first.clone());
        }
    }

    /// (imported path, the local name it is bound to).
    fn import_name(&self, name: TsNode) -> (Vec<String>, Option<String>) {
        match name.kind() {
            "aliased_import" => {
                let path = name.child_by_field_name("name").map(|n| self.dotted(n)).unwrap_or_default();
                let alias = name.child_by_field_name("alias").and_then(|a| text_of(a, self.source)).map(str::to_string);
                (path, alias)
            }
            _ => {
                let path = self.dotted(name);
                let local = path.last().cloned();
                (path, local)
            }
        }
    }

    fn dotted(&self, node: TsNode) -> Vec<String> {
        text_of(node, self.source).unwrap_or_default().split('.').map(|s| s.trim().to_string()).collect()
    }

    /// The dotted path of a callee (`a.b.c`), with the first segment's import alias applied.
    fn callee_path(&self, function: TsNode) -> Option<Vec<String>> {
        let mut segments = Vec::new();
        let mut node = function;
        loop {
            match node.kind() {
                "identifier" => {
                    segments.push(text_of(node, self.source)?.to_string());
                    break;
                }
                "attribute" => {
                    segments.push(text_of(node.child_by_field_name("attribute")?, self.source)?.to_string());
                    node = node.child_by_field_name("object")?;
                }
                _ => return None,
            }
        }
        segments.reverse();
        Some(resolve(&self.aliases, segments))
    }

    fn read(self) -> Program {
        let nodes = self.nodes();
        let mut program = Program { modules: self.modules.clone(), ..Program::default() };
        let mut liveness = Liveness { uncalled: self.uncalled_functions(&nodes), ..Liveness::default() };
        // Pass 1: calls, by node id, in document order.
        let mut call_ids: HashMap<usize, usize> = HashMap::default();
        let mut found: Vec<Found<'t>> = Vec::new();
        for node in &nodes {
            match node.kind() {
                "call" => {
                    let Some(function) = node.child_by_field_name("function") else { continue };
                    let Some(path) = self.callee_path(function) else { continue };
                    if path.ends_with(&["environ".to_string(), "setdefault".to_string()]) {
                        program.env.extend(self.setdefault(*node, &mut liveness));
                    }
                    call_ids.insert(node.id(), found.len());
                    let arguments = node.child_by_field_name("arguments");
                    let args_span = arguments.map_or(span_of(*node), span_of);
                    let args = arguments.map(|a| self.argument_nodes(a)).unwrap_or_default();
                    let target = self.assigned_name(*node);
                    let dead = liveness.of(*node, &self);
                    found.push(Found { path, function, args_span, args, target, dead });
                }
                "ERROR" => {
                    let partial = self.partial_calls(*node, &mut liveness);
                    found.extend(partial);
                }
                "assignment" => program.env.extend(self.environ_assignment(*node, &mut liveness)),
                "comment" => program.comments.push(span_of(*node)),
                _ => {}
            }
        }
        program.bindings =
            found.iter().enumerate().filter_map(|(call, f)| Some(Binding { name: f.target.clone()?, call })).collect();
        // Pass 2: arguments.
        let mut locals_cache: HashMap<usize, Vec<String>> = HashMap::default();
        for f in found {
            let locals = self.locals(f.function, &mut locals_cache);
            let mut call = Call {
                path: f.path,
                name_span: span_of(f.function),
                args_span: f.args_span,
                args: Vec::new(),
                has_splat: false,
                dead: f.dead,
            };
            let mut position = 0;
            for argument in &f.args {
                match argument.kind() {
                    "keyword_argument" => {
                        let (Some(name), Some(value)) =
                            (argument.child_by_field_name("name"), argument.child_by_field_name("value"))
                        else {
                            continue;
                        };
                        let Some(keyword) = text_of(name, self.source) else { continue };
                        call.args.push(self.arg(
                            Some(keyword.to_string()),
                            position,
                            span_of(name),
                            value,
                            &locals,
                            &call_ids,
                        ));
                    }
                    "dictionary_splat" => match self.splat(*argument, position, &locals) {
                        // `**{"r": 16}` or `**LORA` for a constant dict: its entries are keywords.
                        Some(args) => call.args.extend(args),
                        None => call.has_splat = true,
                    },
                    "list_splat" => call.has_splat = true,
                    _ => {
                        call.args.push(self.arg(None, position, span_of(*argument), *argument, &locals, &call_ids));
                        position += 1;
                    }
                }
            }
            program.calls.push(call);
        }
        program.aliases = self.aliases;
        program
    }

    /// The module-level functions the program never names after defining them (never
    /// called, passed or decorated), by node id: their bodies never run.
    fn uncalled_functions(&self, nodes: &[TsNode<'t>]) -> Vec<usize> {
        let mut uses: HashMap<&str, usize> = HashMap::default();
        for node in nodes.iter().filter(|n| n.kind() == "identifier") {
            *uses.entry(text_of(*node, self.source).unwrap_or_default()).or_default() += 1;
        }
        let mut cursor = self.root.walk();
        self.root
            .named_children(&mut cursor)
            .filter(|f| f.kind() == "function_definition")
            .filter(|f| {
                let name = f.child_by_field_name("name").and_then(|n| text_of(n, self.source)).unwrap_or_default();
                !name.is_empty() && uses.get(name).copied().unwrap_or(0) <= 1
            })
            .map(|f| f.id())
            .collect()
    }

    /// The argument nodes of an argument list (comments left out).
    fn argument_nodes(&self, arguments: TsNode<'t>) -> Vec<TsNode<'t>> {
        let mut cursor = arguments.walk();
        arguments.named_children(&mut cursor).filter(|a| a.kind() != "comment").collect()
    }

    /// Calls whose closing parenthesis is not typed yet: tree-sitter leaves the callee,
    /// `(` and the arguments typed so far as children of an error node. Only their keyword
    /// arguments are read.
    fn partial_calls(&self, error: TsNode<'t>, dead: &mut Liveness) -> Vec<Found<'t>> {
        let mut cursor = error.walk();
        let children: Vec<TsNode<'t>> = error.children(&mut cursor).collect();
        let mut out = Vec::new();
        for (i, open) in children.iter().enumerate() {
            if open.kind() != "(" || i == 0 {
                continue;
            }
            let function = children[i - 1];
            let Some(path) = self.callee_path(function) else { continue };
            let args: Vec<TsNode<'t>> = children[i + 1..]
                .iter()
                .take_while(|c| c.kind() != ")" && c.kind() != "(")
                .filter(|c| c.kind() == "keyword_argument")
                .copied()
                .collect();
            let target = (i >= 3 && children[i - 2].kind() == "=" && children[i - 3].kind() == "identifier")
                .then(|| text_of(children[i - 3], self.source).map(str::to_string))
                .flatten();
            let args_span = Span::new(open.start_byte(), error.end_byte());
            let dead = dead.of(function, self);
            out.push(Found { path, function, args_span, args, target, dead });
        }
        out
    }

    fn arg(
        &self,
        keyword: Option<String>,
        position: usize,
        key_span: Span,
        value: TsNode<'t>,
        locals: &[String],
        call_ids: &HashMap<usize, usize>,
    ) -> Arg {
        let evaluator = Evaluator { source: self.source, bindings: &self.bindings, constants: self.constants };
        let name = (value.kind() == "identifier").then(|| text_of(value, self.source).map(str::to_string)).flatten();
        Arg {
            keyword,
            position,
            key_span,
            span: span_of(value),
            value: match evaluator.eval(value, locals) {
                Ok(v) => Static::Known(v),
                Err(why) => Static::Unknown(why),
            },
            call: call_ids.get(&value.id()).copied(),
            name,
        }
    }

    /// The entries of a `**expr` argument whose value is a constant dict, as keyword
    /// arguments (the key's span is the entry's key, the value's the entry's value).
    fn splat(&self, splat: TsNode<'t>, position: usize, locals: &[String]) -> Option<Vec<Arg>> {
        let evaluator = Evaluator { source: self.source, bindings: &self.bindings, constants: self.constants };
        let expr = splat.named_child(0)?;
        let PyValue::Dict(entries) = evaluator.eval(expr, locals).ok()?.value else { return None };
        Some(
            entries
                .into_iter()
                .map(|(keyword, key_span, value)| Arg {
                    keyword: Some(keyword),
                    position,
                    key_span,
                    span: value.span,
                    value: Static::Known(value),
                    call: None,
                    name: None,
                })
                .collect(),
        )
    }

    /// `name = call(...)` or `name, other = call(...)`: the first name bound.
    fn assigned_name(&self, call: TsNode) -> Option<String> {
        let parent = call.parent()?;
        if parent.kind() != "assignment" || parent.child_by_field_name("right")?.id() != call.id() {
            return None;
        }
        let left = parent.child_by_field_name("left")?;
        let first = match left.kind() {
            "identifier" => left,
            "pattern_list" | "tuple_pattern" | "list_pattern" => left.named_child(0)?,
            _ => return None,
        };
        (first.kind() == "identifier").then(|| text_of(first, self.source).map(str::to_string)).flatten()
    }

    /// Names bound inside the function enclosing `node` (its parameters and assignments).
    fn locals(&self, node: TsNode, cache: &mut HashMap<usize, Vec<String>>) -> Vec<String> {
        let mut scope = node.parent();
        while let Some(s) = scope {
            if matches!(s.kind(), "function_definition" | "lambda") {
                break;
            }
            scope = s.parent();
        }
        let Some(function) = scope else { return Vec::new() };
        cache
            .entry(function.id())
            .or_insert_with(|| {
                let mut names = Vec::new();
                let mut stack = vec![function];
                while let Some(n) = stack.pop() {
                    match n.kind() {
                        "identifier"
                            if n.parent().is_some_and(|p| {
                                matches!(
                                    p.kind(),
                                    "parameters"
                                        | "default_parameter"
                                        | "typed_parameter"
                                        | "typed_default_parameter"
                                        | "pattern_list"
                                        | "tuple_pattern"
                                ) && p.child_by_field_name("value").is_none_or(|v| v.id() != n.id())
                            }) =>
                        {
                            names.extend(text_of(n, self.source).map(str::to_string));
                        }
                        "assignment" | "augmented_assignment" | "for_statement" => {
                            if let Some(left) = n.child_by_field_name("left").filter(|l| l.kind() == "identifier") {
                                names.extend(text_of(left, self.source).map(str::to_string));
                            }
                        }
                        _ => {}
                    }
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
                names
            })
            .clone()
    }

    /// `os.environ["NAME"] = value`.
    fn environ_assignment(&self, node: TsNode<'t>, dead: &mut Liveness) -> Option<EnvSetting> {
        let left = node.child_by_field_name("left")?;
        let right = node.child_by_field_name("right")?;
        if left.kind() != "subscript" {
            return None;
        }
        let object = left.child_by_field_name("value")?;
        if !self.callee_path(object)?.ends_with(&["environ".to_string()]) {
            return None;
        }
        let key = left.child_by_field_name("subscript")?;
        self.env_setting(key, right, dead.of(node, self))
    }

    /// `os.environ.setdefault("NAME", value)`.
    fn setdefault(&self, call: TsNode<'t>, dead: &mut Liveness) -> Option<EnvSetting> {
        let arguments = call.child_by_field_name("arguments")?;
        let key = arguments.named_child(0)?;
        let value = arguments.named_child(1)?;
        self.env_setting(key, value, dead.of(call, self))
    }

    fn env_setting(&self, key: TsNode<'t>, value: TsNode<'t>, dead: bool) -> Option<EnvSetting> {
        let evaluator = Evaluator { source: self.source, bindings: &self.bindings, constants: self.constants };
        let PyValue::Str(name, _) = evaluator.eval(key, &[]).ok()?.value else { return None };
        let value = match evaluator.eval(value, &[]) {
            Ok(v) => Static::Known(v),
            Err(why) => Static::Unknown(why),
        };
        Some(EnvSetting { name, name_span: span_of(key), value, dead })
    }
}

/// A call found in the tree, before its arguments are read.
struct Found<'t> {
    path: Vec<String>,
    function: TsNode<'t>,
    args_span: Span,
    args: Vec<TsNode<'t>>,
    target: Option<String>,
    dead: bool,
}

/// Which branches never run: the constant truth of conditions, by statement, and the
/// names local to each function (they shadow module constants).
#[derive(Default)]
struct Liveness {
    truth: HashMap<usize, Option<bool>>,
    locals: HashMap<usize, Vec<String>>,
    /// Module-level functions the program never calls (node ids).
    uncalled: Vec<usize>,
}

impl Liveness {
    /// Whether `node` lies in a branch that never runs: the body of an `if`, `elif` or
    /// `while` whose condition is always false, a clause after a condition that always
    /// holds, or a module-level function the program never calls.
    fn of(&mut self, node: TsNode, reader: &Reader) -> bool {
        let mut child = node;
        while let Some(parent) = child.parent() {
            if parent.kind() == "function_definition" && self.uncalled.contains(&parent.id()) {
                return true;
            }
            if matches!(parent.kind(), "if_statement" | "elif_clause" | "while_statement") {
                let body = parent.child_by_field_name("consequence").or_else(|| parent.child_by_field_name("body"));
                if body.is_some_and(|b| b.id() == child.id()) && self.truth(parent, reader) == Some(false) {
                    return true;
                }
            }
            if parent.kind() == "if_statement" && matches!(child.kind(), "elif_clause" | "else_clause") {
                if self.truth(parent, reader) == Some(true) {
                    return true;
                }
                let mut cursor = parent.walk();
                let clauses: Vec<TsNode> = parent.children_by_field_name("alternative", &mut cursor).collect();
                for clause in clauses.into_iter().take_while(|c| c.id() != child.id()) {
                    if clause.kind() == "elif_clause" && self.truth(clause, reader) == Some(true) {
                        return true;
                    }
                }
            }
            child = parent;
        }
        false
    }

    /// The truth of a statement's condition when it is a constant.
    fn truth(&mut self, statement: TsNode, reader: &Reader) -> Option<bool> {
        if let Some(known) = self.truth.get(&statement.id()) {
            return *known;
        }
        let truth = statement.child_by_field_name("condition").and_then(|condition| {
            let locals = reader.locals(condition, &mut self.locals);
            let evaluator =
                Evaluator { source: reader.source, bindings: &reader.bindings, constants: reader.constants };
            Some(match evaluator.eval(condition, &locals).ok()?.value {
                PyValue::None => false,
                PyValue::Bool(b) => b,
                PyValue::Int(i) => i != 0,
                PyValue::Float(f) => f != 0.0,
                PyValue::Str(s, _) => !s.is_empty(),
                PyValue::List(items) => !items.is_empty(),
                PyValue::Dict(entries) => !entries.is_empty(),
            })
        });
        self.truth.insert(statement.id(), truth);
        truth
    }
}

#[cfg(test)]
mod tests;
