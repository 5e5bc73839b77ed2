//! Python training scripts: the keyword arguments of the calls that configure a run.
//!
//! The script is parsed with tree-sitter-python, which keeps a tree (with error nodes)
//! for code that is still being typed and gives exact byte spans. [`program`] finds the
//! recognized calls (Unsloth loaders, `TrainingArguments` and the TRL configs, PEFT,
//! bitsandbytes, the trainers) by name and through simple import aliases, resolves each
//! argument to a static value where one exists (see [`values`]), and collects
//! environment settings (`os.environ[...] = ...`, `os.environ.setdefault(...)`).
//!
//! [`Program::document`] lays the recognized arguments out the way a TRL CLI YAML is laid
//! out, so the schemas and rules apply unchanged: the config class's keyword arguments
//! at the top level, the LoRA arguments under `ModelConfig`'s names (`lora_r`, …), the
//! loader's arguments under `model_init_kwargs` and environment settings under `env`.
//! Each entry's key span is the keyword, its value span the literal that defines it.

mod cursor;
mod values;

pub use cursor::{open_call, OpenCall};
pub use values::{Spanned, Value as PyValue};

use super::{Comment, Document, Entry, Language, Mapping, Node, Scalar, ScalarKind, ScalarStyle, Value};
use crate::span::Span;
use std::collections::HashMap;
use tree_sitter::{Node as TsNode, Parser};
use values::{Bindings, Evaluator};

/// A call oomlint understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callee {
    /// `FastLanguageModel.from_pretrained`, `FastModel.from_pretrained`, `FastVisionModel.from_pretrained`.
    UnslothFromPretrained,
    /// `FastLanguageModel.get_peft_model` / `FastModel.get_peft_model`.
    UnslothGetPeftModel,
    /// `AutoModelForCausalLM.from_pretrained` (and the other `AutoModelFor…` classes).
    HfFromPretrained,
    TrainingArguments,
    SftConfig,
    GrpoConfig,
    DpoConfig,
    LoraConfig,
    /// `peft.get_peft_model(model, config)`.
    GetPeftModel,
    BitsAndBytesConfig,
    SftTrainer,
    GrpoTrainer,
    DpoTrainer,
    Trainer,
}

impl Callee {
    /// Recognizes a dotted callee path (after alias resolution) by its last segments.
    fn from_path(path: &[String]) -> Option<Callee> {
        let last = path.last()?.as_str();
        let owner = path.len().checked_sub(2).and_then(|i| path.get(i)).map(String::as_str);
        Some(match (owner, last) {
            (Some("FastLanguageModel" | "FastModel" | "FastVisionModel"), "from_pretrained") => {
                Callee::UnslothFromPretrained
            }
            (Some("FastLanguageModel" | "FastModel" | "FastVisionModel"), "get_peft_model") => {
                Callee::UnslothGetPeftModel
            }
            (Some(class), "from_pretrained") if class.starts_with("AutoModelFor") => Callee::HfFromPretrained,
            (_, "TrainingArguments") => Callee::TrainingArguments,
            (_, "SFTConfig") => Callee::SftConfig,
            (_, "GRPOConfig") => Callee::GrpoConfig,
            (_, "DPOConfig") => Callee::DpoConfig,
            (_, "LoraConfig") => Callee::LoraConfig,
            (None, "get_peft_model") | (Some("peft"), "get_peft_model") => Callee::GetPeftModel,
            (_, "BitsAndBytesConfig") => Callee::BitsAndBytesConfig,
            (_, "SFTTrainer") => Callee::SftTrainer,
            (_, "GRPOTrainer") => Callee::GrpoTrainer,
            (_, "DPOTrainer") => Callee::DpoTrainer,
            (_, "Trainer") => Callee::Trainer,
            _ => return None,
        })
    }

    pub fn is_config(self) -> bool {
        matches!(self, Callee::TrainingArguments | Callee::SftConfig | Callee::GrpoConfig | Callee::DpoConfig)
    }

    pub fn is_trainer(self) -> bool {
        matches!(self, Callee::SftTrainer | Callee::GrpoTrainer | Callee::DpoTrainer | Callee::Trainer)
    }

    pub fn is_loader(self) -> bool {
        matches!(self, Callee::UnslothFromPretrained | Callee::HfFromPretrained)
    }

    /// The parameter names of the leading positional arguments oomlint reads.
    fn positional(self) -> &'static [&'static str] {
        match self {
            Callee::UnslothFromPretrained => &["model_name"],
            Callee::HfFromPretrained => &["pretrained_model_name_or_path"],
            Callee::UnslothGetPeftModel => &["model"],
            Callee::GetPeftModel => &["model", "peft_config"],
            Callee::Trainer => &["model", "args"],
            Callee::SftTrainer | Callee::GrpoTrainer | Callee::DpoTrainer => &["model"],
            _ => &[],
        }
    }
}

/// The value of one argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    Known(Spanned),
    /// The result of another recognized call (an index into [`Program::calls`]).
    Call(usize),
    /// Not known without running the script; the reason.
    Unknown(String),
}

/// One argument of a recognized call.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    /// The parameter name: the keyword, or the name of a known positional parameter.
    pub name: String,
    /// The keyword's span (the whole argument for positional ones).
    pub key_span: Span,
    pub value: ArgValue,
}

/// A recognized call with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub callee: Callee,
    /// The callee's dotted path, import aliases resolved (`["unsloth", "FastModel", "from_pretrained"]`).
    pub path: Vec<String>,
    /// The callee expression (`FastLanguageModel.from_pretrained`).
    pub name_span: Span,
    /// The parenthesized argument list.
    pub args_span: Span,
    pub args: Vec<Arg>,
    /// `**kwargs` or `*args` hide arguments oomlint cannot see.
    pub has_splat: bool,
}

impl Call {
    pub fn arg(&self, name: &str) -> Option<&Arg> {
        self.args.iter().rev().find(|a| a.name == name)
    }

    /// A statically known argument.
    pub fn known(&self, name: &str) -> Option<(&Arg, &Spanned)> {
        let arg = self.arg(name)?;
        match &arg.value {
            ArgValue::Known(v) => Some((arg, v)),
            _ => None,
        }
    }
}

/// An environment variable set by the script.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvSetting {
    pub name: String,
    pub name_span: Span,
    pub value: ArgValue,
}

/// Everything oomlint reads from one script.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub calls: Vec<Call>,
    pub env: Vec<EnvSetting>,
    pub comments: Vec<Span>,
    /// The top-level modules the script imports (`unsloth`, `trl`).
    pub modules: Vec<String>,
}

/// Parses a Python script into its [`Document`].
pub fn parse(text: &str) -> Document {
    program(text).document(Language::Python)
}

/// Parses a Python script and reads its recognized calls.
pub fn program(source: &str) -> Program {
    let mut parser = Parser::new();
    if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
        return Program::default();
    }
    let Some(tree) = parser.parse(source, None) else {
        return Program::default();
    };
    Reader::new(source, tree.root_node()).read()
}

pub(super) fn text_of<'s>(node: TsNode, source: &'s str) -> Option<&'s str> {
    source.get(node.start_byte()..node.end_byte())
}

fn span_of(node: TsNode) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

struct Reader<'s, 't> {
    source: &'s str,
    root: TsNode<'t>,
    bindings: Bindings<'t>,
    /// Local name → imported dotted path (`C` → `trl.GRPOConfig`).
    aliases: HashMap<String, Vec<String>>,
    /// The top-level module of every import.
    modules: Vec<String>,
}

impl<'s, 't> Reader<'s, 't> {
    fn new(source: &'s str, root: TsNode<'t>) -> Self {
        let bindings = Bindings::collect(root, source);
        let mut reader = Reader { source, root, bindings, aliases: HashMap::new(), modules: Vec::new() };
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
        Some(self.resolve(segments))
    }

    /// A dotted path with its first segment's import alias applied.
    fn resolve(&self, segments: Vec<String>) -> Vec<String> {
        let Some(first) = segments.first() else { return segments };
        let mut path = self.aliases.get(first).cloned().unwrap_or_else(|| vec![first.clone()]);
        path.extend(segments.into_iter().skip(1));
        path
    }

    fn read(&self) -> Program {
        let nodes = self.nodes();
        let mut program = Program { modules: self.modules.clone(), ..Program::default() };
        // Pass 1: recognized calls, by node id, in document order.
        let mut call_ids: HashMap<usize, usize> = HashMap::new();
        let mut recognized: Vec<Found<'t>> = Vec::new();
        for node in &nodes {
            match node.kind() {
                "call" => {
                    let Some(function) = node.child_by_field_name("function") else { continue };
                    let Some(path) = self.callee_path(function) else { continue };
                    if let Some(callee) = Callee::from_path(&path) {
                        call_ids.insert(node.id(), recognized.len());
                        let arguments = node.child_by_field_name("arguments");
                        let args_span = arguments.map_or(span_of(*node), span_of);
                        let args = arguments.map(|a| self.argument_nodes(a)).unwrap_or_default();
                        let target = self.assigned_name(*node);
                        recognized.push(Found {
                            at: node.start_byte(),
                            callee,
                            path,
                            function,
                            args_span,
                            args,
                            target,
                        });
                    } else if path.ends_with(&["environ".to_string(), "setdefault".to_string()]) {
                        program.env.extend(self.setdefault(*node));
                    }
                }
                "ERROR" => recognized.extend(self.partial_calls(*node)),
                "assignment" => program.env.extend(self.environ_assignment(*node)),
                "comment" => program.comments.push(span_of(*node)),
                _ => {}
            }
        }
        // Variables bound to a recognized call: name → (position, call index).
        let mut targets: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
        for (index, found) in recognized.iter().enumerate() {
            if let Some(name) = &found.target {
                targets.entry(name.clone()).or_default().push((found.at, index));
            }
        }
        // Pass 2: arguments.
        let mut locals_cache: HashMap<usize, Vec<String>> = HashMap::new();
        for found in &recognized {
            let locals = self.locals(found.function, &mut locals_cache);
            let mut call = Call {
                callee: found.callee,
                path: found.path.clone(),
                name_span: span_of(found.function),
                args_span: found.args_span,
                args: Vec::new(),
                has_splat: false,
            };
            let mut position = 0;
            for argument in &found.args {
                match argument.kind() {
                    "keyword_argument" => {
                        let (Some(name), Some(value)) =
                            (argument.child_by_field_name("name"), argument.child_by_field_name("value"))
                        else {
                            continue;
                        };
                        let Some(keyword) = text_of(name, self.source) else { continue };
                        call.args.push(Arg {
                            name: keyword.to_string(),
                            key_span: span_of(name),
                            value: self.arg_value(value, &locals, &call_ids, &targets),
                        });
                    }
                    "list_splat" | "dictionary_splat" => call.has_splat = true,
                    _ => {
                        if let Some(name) = found.callee.positional().get(position) {
                            call.args.push(Arg {
                                name: name.to_string(),
                                key_span: span_of(*argument),
                                value: self.arg_value(*argument, &locals, &call_ids, &targets),
                            });
                        }
                        position += 1;
                    }
                }
            }
            program.calls.push(call);
        }
        program
    }

    /// The argument nodes of an argument list (comments left out).
    fn argument_nodes(&self, arguments: TsNode<'t>) -> Vec<TsNode<'t>> {
        let mut cursor = arguments.walk();
        arguments.named_children(&mut cursor).filter(|a| a.kind() != "comment").collect()
    }

    /// Calls whose closing parenthesis is not typed yet: tree-sitter leaves the callee,
    /// `(` and the arguments typed so far as children of an error node.
    fn partial_calls(&self, error: TsNode<'t>) -> Vec<Found<'t>> {
        let mut cursor = error.walk();
        let children: Vec<TsNode<'t>> = error.children(&mut cursor).collect();
        let mut out = Vec::new();
        for (i, open) in children.iter().enumerate() {
            if open.kind() != "(" || i == 0 {
                continue;
            }
            let function = children[i - 1];
            let Some(path) = self.callee_path(function) else { continue };
            let Some(callee) = Callee::from_path(&path) else { continue };
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
            out.push(Found { at: function.start_byte(), callee, path, function, args_span, args, target });
        }
        out
    }

    fn arg_value(
        &self,
        value: TsNode<'t>,
        locals: &[String],
        call_ids: &HashMap<usize, usize>,
        targets: &HashMap<String, Vec<(usize, usize)>>,
    ) -> ArgValue {
        if let Some(index) = call_ids.get(&value.id()) {
            return ArgValue::Call(*index);
        }
        if value.kind() == "identifier" {
            let name = text_of(value, self.source).unwrap_or_default();
            let bound = targets.get(name).and_then(|list| list.iter().rev().find(|(at, _)| *at < value.start_byte()));
            if let Some((_, index)) = bound {
                return ArgValue::Call(*index);
            }
        }
        let evaluator = Evaluator { source: self.source, bindings: &self.bindings };
        match evaluator.eval(value, locals) {
            Ok(v) => ArgValue::Known(v),
            Err(why) => ArgValue::Unknown(why),
        }
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
    fn environ_assignment(&self, node: TsNode<'t>) -> Option<EnvSetting> {
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
        self.env_setting(key, right)
    }

    /// `os.environ.setdefault("NAME", value)`.
    fn setdefault(&self, call: TsNode<'t>) -> Option<EnvSetting> {
        let arguments = call.child_by_field_name("arguments")?;
        let key = arguments.named_child(0)?;
        let value = arguments.named_child(1)?;
        self.env_setting(key, value)
    }

    fn env_setting(&self, key: TsNode<'t>, value: TsNode<'t>) -> Option<EnvSetting> {
        let evaluator = Evaluator { source: self.source, bindings: &self.bindings };
        let PyValue::Str(name, _) = evaluator.eval(key, &[]).ok()?.value else { return None };
        let value = match evaluator.eval(value, &[]) {
            Ok(v) => ArgValue::Known(v),
            Err(why) => ArgValue::Unknown(why),
        };
        Some(EnvSetting { name, name_span: span_of(key), value })
    }
}

/// A recognized call found in the tree, before its arguments are read.
struct Found<'t> {
    at: usize,
    callee: Callee,
    path: Vec<String>,
    function: TsNode<'t>,
    args_span: Span,
    args: Vec<TsNode<'t>>,
    target: Option<String>,
}

/// Which recognized calls make up the run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Roles {
    pub trainer: Option<usize>,
    pub config: Option<usize>,
    pub loader: Option<usize>,
    pub peft: Option<usize>,
    pub quantization: Option<usize>,
}

impl Program {
    /// Connects trainer, config, loader, PEFT and quantization config: through the
    /// trainer's arguments where it names them, else the last call of each kind.
    pub fn roles(&self) -> Roles {
        let last = |pred: &dyn Fn(Callee) -> bool| self.calls.iter().rposition(|c| pred(c.callee));
        let linked = |from: Option<usize>, arg: &str, pred: &dyn Fn(Callee) -> bool| {
            let call = self.calls.get(from?)?;
            match call.arg(arg)?.value {
                ArgValue::Call(i) if self.calls.get(i).is_some_and(|c| pred(c.callee)) => Some(i),
                _ => None,
            }
        };
        let trainer = last(&|c| c.is_trainer());
        let config = linked(trainer, "args", &|c| c.is_config()).or_else(|| last(&|c| c.is_config()));
        let unsloth = last(&|c| matches!(c, Callee::UnslothFromPretrained));
        let loader = unsloth.or_else(|| last(&|c| c.is_loader()));
        let is_lora = |c: Callee| c == Callee::LoraConfig;
        let peft = linked(trainer, "peft_config", &is_lora)
            .or_else(|| last(&|c| c == Callee::UnslothGetPeftModel))
            .or_else(|| {
                let get = last(&|c| c == Callee::GetPeftModel);
                linked(get, "peft_config", &is_lora)
            })
            .or_else(|| last(&is_lora));
        let is_bnb = |c: Callee| c == Callee::BitsAndBytesConfig;
        let quantization = linked(loader, "quantization_config", &is_bnb).or_else(|| last(&is_bnb));
        Roles { trainer, config, loader, peft, quantization }
    }

    /// Applies `map` to every span (notebooks map program offsets to file offsets).
    pub fn map_spans(&mut self, map: &dyn Fn(Span) -> Span) {
        fn value(v: &mut ArgValue, map: &dyn Fn(Span) -> Span) {
            if let ArgValue::Known(s) = v {
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
    }

    /// The recognized arguments laid out like a TRL CLI YAML (see the module docs). With
    /// `TrainingArguments` (the `transformers` schema) only its own arguments are laid out.
    pub fn document(&self, language: Language) -> Document {
        let roles = self.roles();
        let mut root = Mapping::default();
        let config = roles.config.and_then(|i| self.calls.get(i));
        if let Some(config) = config {
            root.entries.extend(config.args.iter().filter_map(|a| known_entry(&a.name, a)));
        }
        let trainer_call = roles.trainer.and_then(|i| self.calls.get(i));
        if let Some(trainer) = trainer_call.filter(|t| t.callee == Callee::SftTrainer) {
            // Before TRL 0.13 these went to `SFTTrainer` directly and overrode the config's.
            for arg in trainer.args.iter().filter(|a| SFT_TRAINER_CONFIG_ARGS.contains(&a.name.as_str())) {
                if let Some(entry) = known_entry(&arg.name, arg) {
                    root.entries.retain(|e| e.key != entry.key);
                    root.entries.push(entry);
                }
            }
        }
        // `TrainingArguments` given to a TRL trainer is read as that trainer's config.
        let transformers = match trainer_call.map(|c| c.callee) {
            Some(trainer) => trainer == Callee::Trainer,
            None => config.is_some_and(|c| c.callee == Callee::TrainingArguments),
        };
        if transformers {
            return Document {
                language,
                root: Some(Node { span: covering(&root), value: Value::Mapping(root) }),
                comments: self.comments.iter().map(|&span| Comment { span }).collect(),
                problems: Vec::new(),
            };
        }
        if let Some(peft) = roles.peft.and_then(|i| self.calls.get(i)) {
            for arg in &peft.args {
                if let Some(name) = lora_key(&arg.name) {
                    root.entries.extend(known_entry(name, arg));
                }
            }
        }
        if let Some(loader) = roles.loader.and_then(|i| self.calls.get(i)) {
            if !root.contains("model_init_kwargs") {
                let mut kwargs = Mapping::default();
                for arg in &loader.args {
                    if let ArgValue::Call(i) = arg.value {
                        if Some(i) == roles.quantization {
                            kwargs.entries.extend(self.call_entry(&arg.name, arg.key_span, i));
                        }
                        continue;
                    }
                    kwargs.entries.extend(known_entry(&arg.name, arg));
                }
                root.entries.push(Entry {
                    key: "model_init_kwargs".into(),
                    key_span: loader.name_span,
                    value: Node { span: loader.args_span, value: Value::Mapping(kwargs) },
                });
            }
        }
        let env: Vec<Entry> = self
            .env
            .iter()
            .filter_map(|s| match &s.value {
                ArgValue::Known(v) => Some(Entry { key: s.name.clone(), key_span: s.name_span, value: node_of(v) }),
                _ => None,
            })
            .collect();
        if let (Some(first), Some(last)) = (env.first(), env.last()) {
            let span = first.key_span.cover(last.value.span);
            root.entries.push(Entry {
                key: "env".into(),
                key_span: Span::empty(first.key_span.start),
                value: Node { span, value: Value::Mapping(Mapping { entries: env }) },
            });
        }
        Document {
            language,
            root: Some(Node { span: covering(&root), value: Value::Mapping(root) }),
            comments: self.comments.iter().map(|&span| Comment { span }).collect(),
            problems: Vec::new(),
        }
    }

    /// A nested call's known keyword arguments as a mapping entry.
    fn call_entry(&self, key: &str, key_span: Span, index: usize) -> Option<Entry> {
        let call = self.calls.get(index)?;
        let entries = call.args.iter().filter_map(|a| known_entry(&a.name, a)).collect();
        Some(Entry {
            key: key.to_string(),
            key_span,
            value: Node { span: call.args_span, value: Value::Mapping(Mapping { entries }) },
        })
    }
}

/// `SFTTrainer` keyword arguments of TRL before 0.13 that are `SFTConfig` fields the plan
/// reads (`trl/trainer/sft_trainer.py` at v0.12.0); laid out like the config's own.
pub const SFT_TRAINER_CONFIG_ARGS: &[&str] =
    &["max_seq_length", "packing", "eval_packing", "dataset_text_field", "dataset_num_proc", "neftune_noise_alpha"];

/// The span covering every entry of a mapping.
fn covering(mapping: &Mapping) -> Span {
    mapping.entries.iter().map(|e| e.key_span.cover(e.value.span)).reduce(Span::cover).unwrap_or_default()
}

/// `LoraConfig`/`get_peft_model` argument → TRL `ModelConfig` key.
fn lora_key(name: &str) -> Option<&'static str> {
    Some(match name {
        "r" => "lora_r",
        "lora_alpha" => "lora_alpha",
        "lora_dropout" => "lora_dropout",
        "target_modules" => "lora_target_modules",
        "modules_to_save" => "lora_modules_to_save",
        "use_rslora" => "use_rslora",
        "use_dora" => "use_dora",
        _ => return None,
    })
}

fn known_entry(key: &str, arg: &Arg) -> Option<Entry> {
    match &arg.value {
        ArgValue::Known(v) => Some(Entry { key: key.to_string(), key_span: arg.key_span, value: node_of(v) }),
        _ => None,
    }
}

/// A static Python value as a document node.
pub fn node_of(v: &Spanned) -> Node {
    let scalar = |text: String, style, kind| Value::Scalar(Scalar { text, style, kind });
    let value = match &v.value {
        PyValue::None => scalar("None".into(), ScalarStyle::Plain, ScalarKind::Null),
        PyValue::Bool(b) => scalar(if *b { "True" } else { "False" }.into(), ScalarStyle::Plain, ScalarKind::Bool(*b)),
        PyValue::Int(i) => scalar(i.to_string(), ScalarStyle::Plain, ScalarKind::Int(*i)),
        PyValue::Float(f) => scalar(f.to_string(), ScalarStyle::Plain, ScalarKind::Float(*f)),
        PyValue::Str(s, single) => scalar(
            s.clone(),
            if *single { ScalarStyle::SingleQuoted } else { ScalarStyle::DoubleQuoted },
            ScalarKind::Str,
        ),
        PyValue::List(items) => Value::Sequence(items.iter().map(node_of).collect()),
        PyValue::Dict(entries) => Value::Mapping(Mapping {
            entries: entries
                .iter()
                .map(|(key, key_span, value)| Entry { key: key.clone(), key_span: *key_span, value: node_of(value) })
                .collect(),
        }),
    };
    Node { span: v.span, value }
}

#[cfg(test)]
mod tests;
