//! Arithmetic expansion, `$(( expression ))` (and the older `$[ expression ]`), as bash(1)
//! evaluates it under ARITHMETIC EVALUATION for what a launch script computes: integer
//! constants, variables, `+ - * / %` (binary and unary `+`/`-`) and parentheses, in 64-bit
//! signed integers, `/` and `%` truncating toward zero.
//!
//! As the shell does, `$NAME` and `${NAME}` inside the expression are expanded first, as
//! text, and a bare variable name is replaced by its value evaluated as an expression of its
//! own (`n=2+3; $(( n * 2 ))` is 10). Constants are decimal, `0x` hexadecimal or, with a
//! leading `0`, octal. Where bash would read something else (other operators, a variable the
//! script does not know, a command substitution), or would fail (division by zero,
//! overflow), the expansion has no known value, as other unknown expansions do. A variable
//! assigned to the empty string is 0, as in bash; one the script never assigns is unknown
//! here rather than bash's 0, since the environment may set it.

use std::cell::Cell;

/// How deep variables whose values are expressions are evaluated inside each other.
const MAX_DEPTH: usize = 16;

/// How many expressions (the expansion's and its variables') one expansion evaluates at most:
/// variables whose values name others several times would otherwise multiply the work.
const MAX_EVALUATIONS: u32 = 1024;

/// How deep parentheses and unary signs nest in one expression.
const MAX_NESTING: usize = 256;

/// The value of an arithmetic expansion written as `source` (`$(( … ))` or `$[ … ]`), with
/// `lookup` giving a variable's value (None: unknown, or never assigned).
pub(super) fn expand(source: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let inner = source
        .strip_prefix("$((")
        .and_then(|s| s.strip_suffix("))"))
        .or_else(|| source.strip_prefix("$[").and_then(|s| s.strip_suffix(']')))?;
    evaluate(inner, lookup, 0, &Cell::new(MAX_EVALUATIONS)).map(|n| n.to_string())
}

/// An expression's value: its `$` expansions replaced, then parsed and evaluated; `budget`
/// counts down the evaluations left.
fn evaluate(
    expression: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    budget: &Cell<u32>,
) -> Option<i64> {
    if depth > MAX_DEPTH || budget.get() == 0 {
        return None;
    }
    budget.set(budget.get() - 1);
    let text = substitute(expression, lookup)?;
    let tokens = tokens(&text)?;
    if tokens.is_empty() {
        // An empty expression (or an empty variable) is 0.
        return Some(0);
    }
    let mut parser = Parser { tokens: &tokens, at: 0, lookup, depth, budget, nesting: 0 };
    let value = parser.sum()?;
    (parser.at == tokens.len()).then_some(value)
}

/// `$NAME` and `${NAME}` replaced by their values; None where one is unknown or the text
/// expands anything else (`$(…)`, `` ` ``, `${NAME:-x}`, positional parameters).
fn substitute(expression: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if expression.contains('`') {
        return None;
    }
    let mut out = String::with_capacity(expression.len());
    let mut rest = expression;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, used) = match after.strip_prefix('{') {
            Some(braced) => {
                let end = braced.find('}')?;
                (&braced[..end], end + 2)
            }
            None => {
                let len = after.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
                (&after[..len], len)
            }
        };
        if !is_name(name) {
            return None;
        }
        out.push_str(&lookup(name)?);
        rest = &after[used..];
    }
    out.push_str(rest);
    Some(out)
}

fn is_name(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(i64),
    Name(String),
    Op(u8),
}

/// The expression's tokens; None at anything but constants, names, `+ - * / %` and
/// parentheses.
fn tokens(text: &str) -> Option<Vec<Token>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => i += 2,
            b'+' | b'-' | b'*' | b'/' | b'%' | b'(' | b')' => {
                // `**`, `++`, `--`, `+=` and the like are operators this reader leaves alone.
                let next = bytes.get(i + 1).copied();
                let doubled = matches!((b, next), (b'*', Some(b'*')) | (b'+', Some(b'+')) | (b'-', Some(b'-')));
                if doubled || (b != b'(' && b != b')' && next == Some(b'=')) {
                    return None;
                }
                out.push(Token::Op(b));
                i += 1;
            }
            b'0'..=b'9' => {
                let len = bytes[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
                out.push(Token::Number(constant(&text[i..i + len])?));
                i += len;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let len = bytes[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
                out.push(Token::Name(text[i..i + len].to_string()));
                i += len;
            }
            _ => return None,
        }
    }
    Some(out)
}

/// A constant: decimal, `0x`/`0X` hexadecimal, or octal after a leading `0`.
fn constant(text: &str) -> Option<i64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok();
    }
    if text.len() > 1 && text.starts_with('0') {
        return i64::from_str_radix(&text[1..], 8).ok();
    }
    text.parse().ok()
}

/// Recursive descent over bash's precedence: unary `+ -` above `* / %` above `+ -`, each
/// binary level left-associative.
struct Parser<'t> {
    tokens: &'t [Token],
    at: usize,
    lookup: &'t dyn Fn(&str) -> Option<String>,
    depth: usize,
    budget: &'t Cell<u32>,
    /// Parentheses and unary signs open around the token being read.
    nesting: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn sum(&mut self) -> Option<i64> {
        let mut value = self.product()?;
        while let Some(Token::Op(op @ (b'+' | b'-'))) = self.peek().cloned() {
            self.at += 1;
            let right = self.product()?;
            value = if op == b'+' { value.checked_add(right)? } else { value.checked_sub(right)? };
        }
        Some(value)
    }

    fn product(&mut self) -> Option<i64> {
        let mut value = self.unary()?;
        while let Some(Token::Op(op @ (b'*' | b'/' | b'%'))) = self.peek().cloned() {
            self.at += 1;
            let right = self.unary()?;
            value = match op {
                b'*' => value.checked_mul(right)?,
                // Division by zero is an error in bash; checked_* also refuse i64::MIN / -1.
                b'/' => value.checked_div(right)?,
                _ => value.checked_rem(right)?,
            };
        }
        Some(value)
    }

    fn unary(&mut self) -> Option<i64> {
        if self.nesting >= MAX_NESTING {
            return None;
        }
        self.nesting += 1;
        let value = self.operand();
        self.nesting -= 1;
        value
    }

    fn operand(&mut self) -> Option<i64> {
        match self.peek()?.clone() {
            Token::Op(b'-') => {
                self.at += 1;
                self.unary()?.checked_neg()
            }
            Token::Op(b'+') => {
                self.at += 1;
                self.unary()
            }
            Token::Op(b'(') => {
                self.at += 1;
                let value = self.sum()?;
                (self.peek() == Some(&Token::Op(b')'))).then(|| self.at += 1)?;
                Some(value)
            }
            Token::Number(n) => {
                self.at += 1;
                Some(n)
            }
            Token::Name(name) => {
                self.at += 1;
                evaluate(&(self.lookup)(&name)?, self.lookup, self.depth + 1, self.budget)
            }
            Token::Op(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(source: &str, vars: &[(&str, &str)]) -> Option<String> {
        expand(source, &|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn literals_variables_and_precedence() {
        let vars = [("nproc_per_gpu", "32"), ("nnodes", "1"), ("ngpu_per_node", "2"), ("total", "64")];
        assert_eq!(eval("$(( nproc_per_gpu * nnodes * ngpu_per_node ))", &vars).as_deref(), Some("64"));
        assert_eq!(eval("$(( total ))", &vars).as_deref(), Some("64"));
        assert_eq!(eval("$(($total/ 2 + 1))", &vars).as_deref(), Some("33"));
        assert_eq!(eval("$(( ${total} % 10 ))", &vars).as_deref(), Some("4"));
        assert_eq!(eval("$(( 2 + 3 * 4 ))", &[]).as_deref(), Some("14"));
        assert_eq!(eval("$(( (2 + 3) * 4 ))", &[]).as_deref(), Some("20"));
        assert_eq!(eval("$(( 10 - 4 - 3 ))", &[]).as_deref(), Some("3"), "left-associative");
        assert_eq!(eval("$(( 64 / 8 / 2 ))", &[]).as_deref(), Some("4"));
        assert_eq!(eval("$[ 3 * 3 ]", &[]).as_deref(), Some("9"));
    }

    #[test]
    fn division_truncates_and_signs_follow_the_shell() {
        assert_eq!(eval("$(( 7 / 2 ))", &[]).as_deref(), Some("3"));
        assert_eq!(eval("$(( -7 / 2 ))", &[]).as_deref(), Some("-3"));
        assert_eq!(eval("$(( -7 % 3 ))", &[]).as_deref(), Some("-1"));
        assert_eq!(eval("$(( - -3 + +2 ))", &[]).as_deref(), Some("5"));
    }

    #[test]
    fn constants_in_bash_bases() {
        assert_eq!(eval("$(( 0x10 + 010 + 10 ))", &[]).as_deref(), Some("34"));
        assert_eq!(eval("$(( 08 ))", &[]), None, "8 is no octal digit: bash fails");
    }

    #[test]
    fn a_variable_holding_an_expression_is_evaluated_as_one() {
        // A bare name is its value evaluated; `$n` is its text, expanded first.
        let vars = [("n", "2+3"), ("empty", "")];
        assert_eq!(eval("$(( n * 2 ))", &vars).as_deref(), Some("10"));
        assert_eq!(eval("$(( $n * 2 ))", &vars).as_deref(), Some("8"));
        assert_eq!(eval("$(( empty + 1 ))", &vars).as_deref(), Some("1"));
        // A variable that names itself never ends: unknown, not a hang.
        assert_eq!(eval("$(( x ))", &[("x", "x")]), None);
        // Nor do variables that each name the next many times (10^15 evaluations unbounded).
        let mut chain: Vec<(String, String)> =
            (0..15).map(|i| (format!("v{i}"), vec![format!("v{}", i + 1); 10].join("+"))).collect();
        chain.push(("v15".into(), "1".into()));
        let vars: Vec<(&str, &str)> = chain.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        assert_eq!(eval("$(( v0 ))", &vars), None);
        // Nor does nesting deep enough to exhaust the stack.
        let deep = format!("$(( {}1{} ))", "(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(eval(&deep, &[]), None);
        assert_eq!(eval(&format!("$(( {}1 ))", "- ".repeat(100_000)), &[]), None);
        assert_eq!(eval("$(( ((((1)))) + -(-2) ))", &[]).as_deref(), Some("3"));
    }

    #[test]
    fn what_is_not_known_leaves_the_value_unknown() {
        assert_eq!(eval("$(( missing * 2 ))", &[]), None);
        assert_eq!(eval("$(( $(nproc) * 2 ))", &[]), None);
        assert_eq!(eval("$(( `nproc` * 2 ))", &[]), None);
        assert_eq!(eval("$(( 1 / 0 ))", &[]), None);
        assert_eq!(eval("$(( 4 % 0 ))", &[]), None);
        assert_eq!(eval("$(( 9223372036854775807 + 1 ))", &[]), None);
        // Operators this reader does not evaluate.
        assert_eq!(eval("$(( 2 ** 3 ))", &[]), None);
        assert_eq!(eval("$(( 1 < 2 ))", &[]), None);
        assert_eq!(eval("$(( a = 2 ))", &[("a", "1")]), None);
        assert_eq!(eval("$(( 1, 2 ))", &[]), None);
        assert_eq!(eval("$(( (1 + 2 ))", &[]), None);
        assert_eq!(eval("$(( 1 2 ))", &[]), None);
    }
}
