//! Static values of Python expressions: literals, and names bound once at module level to
//! literals or to simple arithmetic and string expressions of them. Attributes are read at
//! run time, except those the caller names constants (a format knows `torch.bfloat16`):
//! they read as their text.
//!
//! Each value keeps the span an edit should replace: a literal's own span, or for a name
//! the span of the literal (or expression) that binds it, so a fix edits the constant and
//! not the call. Anything that needs running the program is [`Unknown`] with the reason.

use super::text_of;
use crate::span::Span;
use crate::HashMap;
use tree_sitter::Node as TsNode;

/// Expressions nested deeper than this are not evaluated (keeps recursion shallow).
const MAX_DEPTH: usize = 48;

/// A statically known Python value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// The decoded string and whether it was written with single quotes.
    Str(String, bool),
    List(Vec<Spanned>),
    /// String keys only, with the key's span.
    Dict(Vec<(String, Span, Spanned)>),
}

/// A value with the span an edit of it replaces.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned {
    pub value: Value,
    pub span: Span,
}

/// Why a value is not known statically.
pub(super) type Unknown = String;

/// The module-level bindings of each name: the expression of each straight-line binding,
/// in program order, and the names bound in ways a static reader cannot follow.
#[derive(Default)]
pub(super) struct Bindings<'t> {
    /// Name → the expressions bound to it, in program order (None for a binding whose
    /// expression is not read: a call's result unpacked, a chained assignment's inner part).
    bound: HashMap<String, Vec<Option<TsNode<'t>>>>,
    dynamic: HashMap<String, &'static str>,
}

impl<'t> Bindings<'t> {
    /// Collects the module-level bindings of `module` (a tree-sitter `module` node).
    pub(super) fn collect(module: TsNode<'t>, source: &str) -> Self {
        let mut bound: HashMap<String, Vec<Option<TsNode<'t>>>> = HashMap::default();
        let mut dynamic: HashMap<String, &'static str> = HashMap::default();
        let mut cursor = module.walk();
        for statement in module.named_children(&mut cursor) {
            match statement.kind() {
                "expression_statement" => {
                    let mut inner = statement.walk();
                    for expr in statement.named_children(&mut inner) {
                        record_assignment(expr, source, &mut bound, &mut dynamic);
                    }
                }
                "function_definition" | "class_definition" | "decorated_definition" => {
                    if let Some(name) = statement.child_by_field_name("name").and_then(|n| text_of(n, source)) {
                        dynamic.insert(name.to_string(), "a function or class");
                    }
                }
                "import_statement" | "import_from_statement" | "future_import_statement" => {}
                _ => mark_nested_bindings(statement, source, &mut dynamic),
            }
        }
        for (name, nodes) in &bound {
            if nodes.len() == 1 && nodes[0].is_none() {
                dynamic.entry(name.clone()).or_insert("not bound to a single expression");
            }
        }
        Bindings { bound, dynamic }
    }

    /// The expression `name` holds where `use_node` reads it: its only binding, or, for a
    /// name bound several times at module level, the last binding before a use outside any
    /// function (a function reads the name when it is called, which a static reader does
    /// not follow).
    fn at(&self, name: &str, use_node: TsNode<'t>) -> Result<TsNode<'t>, &'static str> {
        let nodes = self.bound.get(name).ok_or("not a module-level constant")?;
        if let [only] = nodes.as_slice() {
            return only.ok_or("not bound to a single expression");
        }
        if in_function(use_node) {
            return Err("bound more than once");
        }
        let before = nodes.iter().rev().find(|n| n.is_none_or(|n| n.end_byte() <= use_node.start_byte()));
        match before {
            Some(Some(node)) => Ok(*node),
            Some(None) => Err("bound more than once"),
            None => Err("not bound yet where it is read"),
        }
    }
}

/// Whether `node` lies inside a function or lambda.
fn in_function(node: TsNode) -> bool {
    let mut parent = node.parent();
    while let Some(p) = parent {
        if matches!(p.kind(), "function_definition" | "lambda") {
            return true;
        }
        parent = p.parent();
    }
    false
}

fn record_assignment<'t>(
    expr: TsNode<'t>,
    source: &str,
    bound: &mut HashMap<String, Vec<Option<TsNode<'t>>>>,
    dynamic: &mut HashMap<String, &'static str>,
) {
    match expr.kind() {
        "assignment" => {
            let (Some(left), right) = (expr.child_by_field_name("left"), expr.child_by_field_name("right")) else {
                return;
            };
            let mut bind = |name: TsNode, value: Option<TsNode<'t>>| {
                if let Some(name) = text_of(name, source) {
                    bound.entry(name.to_string()).or_default().push(value);
                }
            };
            if left.kind() == "identifier" {
                bind(left, right.filter(|r| r.kind() != "assignment"));
            } else if let Some(pairs) = right.and_then(|r| unpacked(left, r)) {
                // `model_id, output_dir = "Qwen/…", "out"`: each name its own expression.
                for (name, value) in pairs {
                    bind(name, Some(value));
                }
            } else {
                mark_names(left, source, dynamic, "bound by unpacking");
            }
            // `a = b = 1`: the inner assignment binds too.
            if let Some(right) = right.filter(|r| r.kind() == "assignment") {
                record_assignment(right, source, bound, dynamic);
            }
        }
        "augmented_assignment" => {
            if let Some(left) = expr.child_by_field_name("left") {
                mark_names(left, source, dynamic, "changed by an augmented assignment");
            }
        }
        _ => {}
    }
}

/// The names of a tuple target paired with the items of a tuple or list of the same
/// length (`a, b = 1, 2`; `(a, b) = [1, 2]`); None for anything else (`a, *b = …`, a call).
fn unpacked<'t>(left: TsNode<'t>, right: TsNode<'t>) -> Option<Vec<(TsNode<'t>, TsNode<'t>)>> {
    if !matches!(left.kind(), "pattern_list" | "tuple_pattern" | "list_pattern")
        || !matches!(right.kind(), "expression_list" | "tuple" | "list")
    {
        return None;
    }
    let named = |n: TsNode<'t>| {
        let mut cursor = n.walk();
        n.named_children(&mut cursor).filter(|c| c.kind() != "comment").collect::<Vec<_>>()
    };
    let (names, values) = (named(left), named(right));
    let all_names = names.iter().all(|n| n.kind() == "identifier");
    (all_names && names.len() == values.len()).then(|| names.into_iter().zip(values).collect())
}

/// Names assigned inside module-level `if`/`for`/`with`/`try` blocks depend on control flow.
fn mark_nested_bindings(node: TsNode, source: &str, dynamic: &mut HashMap<String, &'static str>) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "function_definition" | "class_definition" | "lambda" => continue,
            "assignment" | "augmented_assignment" => {
                if let Some(left) = n.child_by_field_name("left") {
                    mark_names(left, source, dynamic, "bound inside a block (depends on control flow)");
                }
            }
            "for_statement" => {
                if let Some(left) = n.child_by_field_name("left") {
                    mark_names(left, source, dynamic, "a loop variable");
                }
            }
            _ => {}
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
}

fn mark_names(target: TsNode, source: &str, dynamic: &mut HashMap<String, &'static str>, why: &'static str) {
    if target.kind() == "identifier" {
        if let Some(name) = text_of(target, source) {
            dynamic.insert(name.to_string(), why);
        }
        return;
    }
    if matches!(target.kind(), "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list") {
        let mut cursor = target.walk();
        for child in target.named_children(&mut cursor) {
            mark_names(child, source, dynamic, why);
        }
    }
}

/// Which attribute expressions (`torch.bfloat16`) read as constants: as their text.
pub(crate) type Constants<'c> = &'c dyn Fn(&str) -> bool;

/// Evaluates expressions against module-level bindings.
pub(super) struct Evaluator<'a, 't> {
    pub(crate) source: &'a str,
    pub(crate) bindings: &'a Bindings<'t>,
    pub(crate) constants: Constants<'a>,
}

impl<'t> Evaluator<'_, 't> {
    /// The value of `expr`; `local` lists names bound in the enclosing function (they shadow constants).
    pub(super) fn eval(&self, expr: TsNode<'t>, local: &[String]) -> Result<Spanned, Unknown> {
        self.eval_at(expr, local, 0, &mut Vec::new())
    }

    fn eval_at(
        &self,
        expr: TsNode<'t>,
        local: &[String],
        depth: usize,
        resolving: &mut Vec<usize>,
    ) -> Result<Spanned, Unknown> {
        if depth > MAX_DEPTH {
            return Err("expression nested too deeply".into());
        }
        let span = Span::new(expr.start_byte(), expr.end_byte());
        let here = |value| Ok(Spanned { value, span });
        let source = self.source;
        match expr.kind() {
            "integer" => here(parse_int(text_of(expr, source).unwrap_or_default())?),
            "float" => {
                let text = text_of(expr, source).unwrap_or_default().replace('_', "");
                text.parse::<f64>()
                    .map(Value::Float)
                    .map_err(|_| format!("`{text}` is not a number oomlint reads"))
                    .and_then(here)
            }
            "true" => here(Value::Bool(true)),
            "false" => here(Value::Bool(false)),
            "none" => here(Value::None),
            "string" => here(self.string_value(expr, local, depth, resolving)?),
            "concatenated_string" => {
                let mut out = String::new();
                let mut cursor = expr.walk();
                for part in expr.named_children(&mut cursor) {
                    if let Value::Str(s, _) = self.string_value(part, local, depth, resolving)? {
                        out.push_str(&s);
                    }
                }
                here(Value::Str(out, false))
            }
            "parenthesized_expression" => match expr.named_child(0) {
                Some(inner) => self.eval_at(inner, local, depth + 1, resolving),
                None => Err("empty parentheses".into()),
            },
            "identifier" => self.resolve(expr, local, depth, resolving),
            "unary_operator" => {
                let operand = expr.child_by_field_name("argument").ok_or("incomplete expression")?;
                let operator = expr.child_by_field_name("operator").and_then(|o| text_of(o, source)).unwrap_or("");
                let inner = self.eval_at(operand, local, depth + 1, resolving)?;
                let value = match (operator, inner.value) {
                    ("-", Value::Int(i)) => Value::Int(i.checked_neg().ok_or("integer overflow")?),
                    ("-", Value::Float(f)) => Value::Float(-f),
                    ("+", v @ (Value::Int(_) | Value::Float(_))) => v,
                    ("not", Value::Bool(b)) => Value::Bool(!b),
                    _ => return Err(format!("`{}` is not a constant expression", snippet(expr, source))),
                };
                here(value)
            }
            "not_operator" => {
                let operand = expr.child_by_field_name("argument").ok_or("incomplete expression")?;
                match self.eval_at(operand, local, depth + 1, resolving)?.value {
                    Value::Bool(b) => here(Value::Bool(!b)),
                    _ => Err(format!("`{}` is not a constant expression", snippet(expr, source))),
                }
            }
            "binary_operator" => {
                let (Some(left), Some(right)) = (expr.child_by_field_name("left"), expr.child_by_field_name("right"))
                else {
                    return Err("incomplete expression".into());
                };
                let operator = expr.child_by_field_name("operator").and_then(|o| text_of(o, source)).unwrap_or("");
                let a = self.eval_at(left, local, depth + 1, resolving)?.value;
                let b = self.eval_at(right, local, depth + 1, resolving)?.value;
                let value = arithmetic(operator, a, b)
                    .ok_or_else(|| format!("`{}` is not a constant expression", snippet(expr, source)))?;
                here(value)
            }
            "list" | "tuple" => {
                let mut items = Vec::new();
                let mut cursor = expr.walk();
                for item in expr.named_children(&mut cursor) {
                    if item.kind() == "comment" {
                        continue;
                    }
                    items.push(self.eval_at(item, local, depth + 1, resolving)?);
                }
                here(Value::List(items))
            }
            "dictionary" => {
                let mut entries = Vec::new();
                let mut cursor = expr.walk();
                for pair in expr.named_children(&mut cursor) {
                    if pair.kind() == "comment" {
                        continue;
                    }
                    let (Some(key), Some(value)) = (pair.child_by_field_name("key"), pair.child_by_field_name("value"))
                    else {
                        return Err("a dictionary built at run time".into());
                    };
                    let Value::Str(name, _) = self.eval_at(key, local, depth + 1, resolving)?.value else {
                        return Err("a dictionary with non-string keys".into());
                    };
                    let key_span = Span::new(key.start_byte(), key.end_byte());
                    entries.push((name, key_span, self.eval_at(value, local, depth + 1, resolving)?));
                }
                here(Value::Dict(entries))
            }
            "call" => Err(format!("`{}` is computed at run time", snippet(expr, source))),
            "attribute" if (self.constants)(text_of(expr, source).unwrap_or_default()) => {
                here(Value::Str(text_of(expr, source).unwrap_or_default().to_string(), false))
            }
            "attribute" | "subscript" => Err(format!("`{}` is read at run time", snippet(expr, source))),
            _ => Err(format!("`{}` is not a constant", snippet(expr, source))),
        }
    }

    /// A plain, byte or raw string literal, or an f-string whose replacement fields are
    /// constant strings, integers or bools without a format spec (`f"{BASE}-lora"`).
    fn string_value(
        &self,
        node: TsNode<'t>,
        local: &[String],
        depth: usize,
        resolving: &mut Vec<usize>,
    ) -> Result<Value, Unknown> {
        if node.kind() != "string" {
            return Err("not a string".into());
        }
        let source = self.source;
        let mut prefix = String::new();
        let mut out = String::new();
        let mut cursor = node.walk();
        for part in node.children(&mut cursor) {
            let text = text_of(part, source).unwrap_or_default();
            match part.kind() {
                "string_start" => prefix = text.to_ascii_lowercase(),
                "string_content" if prefix.contains('f') => out.push_str(&text.replace("{{", "{").replace("}}", "}")),
                "string_content" => out.push_str(text),
                "escape_sequence" if prefix.contains('r') => out.push_str(text),
                "escape_sequence" => out.push_str(&unescape(text)),
                "interpolation" => out.push_str(&self.replacement(part, local, depth, resolving)?),
                _ => {}
            }
        }
        if prefix.contains('b') {
            return Err("a bytes literal".into());
        }
        Ok(Value::Str(out, prefix.ends_with('\'')))
    }

    /// The text of an f-string's replacement field when its value is constant.
    fn replacement(
        &self,
        field: TsNode<'t>,
        local: &[String],
        depth: usize,
        resolving: &mut Vec<usize>,
    ) -> Result<String, Unknown> {
        let run_time = |why: String| format!("an f-string formatted at run time ({why})");
        if field.child_by_field_name("format_specifier").is_some()
            || field.child_by_field_name("type_conversion").is_some()
        {
            return Err(run_time("a conversion or format spec".into()));
        }
        let expr = field.child_by_field_name("expression").ok_or_else(|| run_time("an empty field".into()))?;
        match self.eval_at(expr, local, depth + 1, resolving).map_err(run_time)?.value {
            Value::Str(s, _) => Ok(s),
            Value::Int(i) => Ok(i.to_string()),
            Value::Bool(b) => Ok(if b { "True" } else { "False" }.into()),
            Value::None => Ok("None".into()),
            _ => Err(run_time("a value formatted by Python's rules".into())),
        }
    }

    fn resolve(
        &self,
        name_node: TsNode<'t>,
        local: &[String],
        depth: usize,
        resolving: &mut Vec<usize>,
    ) -> Result<Spanned, Unknown> {
        let name = text_of(name_node, self.source).unwrap_or_default().to_string();
        if local.contains(&name) {
            return Err(format!("`{name}` is a local variable of the enclosing function"));
        }
        if let Some(why) = self.bindings.dynamic.get(&name) {
            return Err(format!("`{name}` is {why}"));
        }
        let bound = self.bindings.at(&name, name_node).map_err(|why| format!("`{name}` is {why}"))?;
        if resolving.contains(&bound.id()) {
            return Err(format!("`{name}` refers to itself"));
        }
        resolving.push(bound.id());
        let value = self.eval_at(bound, &[], depth + 1, resolving);
        resolving.pop();
        value
    }
}

/// The source text of a node, shortened for messages.
fn snippet(node: TsNode, source: &str) -> String {
    let text = text_of(node, source).unwrap_or_default();
    let mut short: String = text.chars().take(60).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short.replace('\n', " ")
}

fn parse_int(text: &str) -> Result<Value, Unknown> {
    let clean = text.replace('_', "").to_ascii_lowercase();
    let parsed = if let Some(hex) = clean.strip_prefix("0x") {
        i64::from_str_radix(hex, 16)
    } else if let Some(oct) = clean.strip_prefix("0o") {
        i64::from_str_radix(oct, 8)
    } else if let Some(bin) = clean.strip_prefix("0b") {
        i64::from_str_radix(bin, 2)
    } else {
        clean.parse()
    };
    parsed.map(Value::Int).map_err(|_| format!("`{text}` is outside the 64-bit range"))
}

fn unescape(escape: &str) -> String {
    match escape {
        "\\n" => "\n".into(),
        "\\t" => "\t".into(),
        "\\r" => "\r".into(),
        "\\\\" => "\\".into(),
        "\\'" => "'".into(),
        "\\\"" => "\"".into(),
        "\\\n" => String::new(),
        other => other.to_string(),
    }
}

fn arithmetic(operator: &str, a: Value, b: Value) -> Option<Value> {
    use Value::{Float, Int, Str};
    Some(match (a, b) {
        (Int(x), Int(y)) => match operator {
            "+" => Int(x.checked_add(y)?),
            "-" => Int(x.checked_sub(y)?),
            "*" => Int(x.checked_mul(y)?),
            "//" if y != 0 => Int(floor_div(x, y)?),
            "%" if y != 0 => Int(x.checked_sub(floor_div(x, y)?.checked_mul(y)?)?),
            "/" if y != 0 => Float(x as f64 / y as f64),
            "**" if (0..=64).contains(&y) => Int(x.checked_pow(u32::try_from(y).ok()?)?),
            _ => return None,
        },
        (x @ (Int(_) | Float(_)), y @ (Int(_) | Float(_))) => {
            let (x, y) = (as_f64(&x)?, as_f64(&y)?);
            let result = match operator {
                "+" => x + y,
                "-" => x - y,
                "*" => x * y,
                "/" if y != 0.0 => x / y,
                "**" => x.powf(y),
                _ => return None,
            };
            Float(Some(result).filter(|r| r.is_finite())?)
        }
        (Str(x, q), Str(y, _)) if operator == "+" => Str(x + &y, q),
        _ => return None,
    })
}

/// Python's `//`: rounds towards negative infinity.
fn floor_div(x: i64, y: i64) -> Option<i64> {
    let q = x.checked_div(y)?;
    Some(if x % y != 0 && ((x < 0) != (y < 0)) { q - 1 } else { q })
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}
