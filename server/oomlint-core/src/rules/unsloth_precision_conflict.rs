//! ## What it does
//! Reports an Unsloth `FastLanguageModel.from_pretrained` / `FastModel.from_pretrained`
//! call that asks for two weight precisions at once: two of `load_in_4bit`,
//! `load_in_8bit`, `load_in_16bit` and `load_in_fp8`, remembering that `load_in_4bit`
//! defaults to True.
//!
//! ## Why
//! Unsloth loads the weights one way and raises at load time otherwise:
//! `RuntimeError: Unsloth: Can only load in 4bit or 8bit or 16bit, not a combination!`
//! (`FastModel`, which `FastLanguageModel` hands 8-bit loads, full finetuning and the
//! architectures it has no fast path for), or `ValueError: Unsloth: load_in_fp8 is not
//! compatible with load_in_4bit, load_in_8bit or load_in_16bit` (`FastLanguageModel` with
//! fp8). The usual trigger is `load_in_8bit=True` or `load_in_16bit=True` without
//! `load_in_4bit=False`. `full_finetuning=True` turns 4-bit and 8-bit (and with them every
//! flag) off first, and a `quantization_config` with `load_in_4bit`/`load_in_8bit`
//! replaces those two flags. `FastLanguageModel` on its own fast path (Llama, Mistral,
//! Gemma, Gemma 2, Qwen 2/3) loads 4-bit and ignores `load_in_16bit`: still reported,
//! since the run is not the 16-bit one asked for.
//!
//! ## Example
//! ```python
//! model, tokenizer = FastLanguageModel.from_pretrained(
//!     model_name="unsloth/Llama-3.2-3B-Instruct",
//!     load_in_8bit=True,   # error: load_in_4bit is True by default
//! )
//! ```
//!
//! ## Fix
//! Keep one precision: add `load_in_4bit=False` next to `load_in_8bit=True` or
//! `load_in_16bit=True`, or drop the extra flag. No automatic fix: the precisions differ
//! in memory and quality.
//!
//! ## Source
//! Unsloth `unsloth/models/loader.py` (`FastLanguageModel.from_pretrained` delegating to
//! `FastModel.from_pretrained`, which checks `int(load_in_4bit) + int(load_in_8bit) +
//! int(load_in_16bit) + int(load_in_fp8 != False) >= 2` after the `full_finetuning`
//! reset) and `unsloth/models/loader_utils.py` (`_get_fp8_mode_and_check_settings`).

use super::{Context, Reporter};
use crate::format::python::{script, Arg, ArgValue, Call, Callee, Script};
use crate::span::Span;
use crate::syntax::python::PyValue;

const COMBINATION: &str = "Unsloth: Can only load in 4bit or 8bit or 16bit, not a combination!";

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(script) = script(ctx.document) else { return };
    let Some(loader) = script.call(script.roles().loader) else { return };
    if loader.callee != Callee::UnslothFromPretrained {
        return;
    }
    let Some(flags) = Flags::read(&script, loader) else { return };
    let language_model = loader.path.iter().any(|s| s == "FastLanguageModel");
    let on: Vec<&Flag> = flags.all().into_iter().filter(|f| f.on).collect();
    let delegated = !language_model || flags.eight.on || flags.full;
    let message = if delegated {
        // FastModel: `full_finetuning` with 4- or 8-bit turns every flag off.
        if (flags.full && (flags.four.on || flags.eight.on)) || on.len() < 2 {
            return;
        }
        format!("{} together: Unsloth raises \"{COMBINATION}\"", describe(&on))
    } else if flags.fp8.on && (flags.four.on || flags.sixteen.on) {
        format!(
            "{} together: Unsloth raises \"`load_in_fp8` is not compatible with `load_in_4bit`, `load_in_8bit` or `load_in_16bit`\" (unless the name maps to a pre-quantized FP8 checkpoint)",
            describe(&on)
        )
    } else if flags.four.on && flags.sixteen.on {
        format!(
            "{} together: FastLanguageModel loads Llama, Mistral, Gemma and Qwen in 4 bits and ignores `load_in_16bit`; other architectures go to FastModel, which raises \"{COMBINATION}\"",
            describe(&on)
        )
    } else {
        return;
    };
    let hint = if flags.four.arg.is_none() && flags.four.on { "; set `load_in_4bit=False` to use another" } else { "" };
    let written: Vec<&Arg> = on.iter().filter_map(|f| f.arg).collect();
    let Some(primary) = written.last() else { return };
    let diagnostic = out.report(place(loader, primary), format!("{message}{hint}"));
    for other in &written[..written.len() - 1] {
        diagnostic.with_related(place(loader, other), "also set here");
    }
    if flags.four.arg.is_none() && flags.four.on {
        diagnostic.with_related(loader.name_span, "`load_in_4bit` is True by default");
    }
}

/// One precision flag: whether it is on, and the argument that says so (None: default).
struct Flag<'a> {
    name: &'static str,
    on: bool,
    arg: Option<&'a Arg>,
}

struct Flags<'a> {
    four: Flag<'a>,
    eight: Flag<'a>,
    sixteen: Flag<'a>,
    fp8: Flag<'a>,
    full: bool,
}

impl<'a> Flags<'a> {
    /// The flags as `from_pretrained` sees them after a `quantization_config` replaced
    /// 4-bit and 8-bit; None when one of them is not known statically.
    fn read(script: &Script, loader: &'a Call) -> Option<Flags<'a>> {
        let mut flags = Flags {
            four: flag(loader, "load_in_4bit", true)?,
            eight: flag(loader, "load_in_8bit", false)?,
            sixteen: flag(loader, "load_in_16bit", false)?,
            fp8: flag(loader, "load_in_fp8", false)?,
            full: flag(loader, "full_finetuning", false)?.on,
        };
        if let Some(arg) = loader.arg("quantization_config") {
            let (four, eight) = bnb_flags(script, &arg.value)?;
            if four {
                flags.four = Flag { name: "load_in_4bit", on: true, arg: Some(arg) };
                flags.eight.on = false;
            }
            if eight {
                flags.eight = Flag { name: "load_in_8bit", on: true, arg: Some(arg) };
                flags.four.on = false;
            }
        }
        Some(flags)
    }

    fn all(&self) -> [&Flag<'a>; 4] {
        [&self.four, &self.eight, &self.sixteen, &self.fp8]
    }
}

/// A flag's value: a literal (fp8 also takes `"block"`), else its default.
fn flag<'a>(call: &'a Call, name: &'static str, default: bool) -> Option<Flag<'a>> {
    let Some(arg) = call.arg(name) else { return Some(Flag { name, on: default, arg: None }) };
    let ArgValue::Known(value) = &arg.value else { return None };
    let on = match &value.value {
        PyValue::Bool(b) => *b,
        PyValue::None => false,
        PyValue::Int(i) => *i != 0,
        PyValue::Str(s, _) => !s.is_empty(),
        _ => return None,
    };
    Some(Flag { name, on, arg: Some(arg) })
}

/// `load_in_4bit` and `load_in_8bit` of a `BitsAndBytesConfig(...)` or a dict literal.
fn bnb_flags(script: &Script, value: &ArgValue) -> Option<(bool, bool)> {
    let truthy = |v: &PyValue| matches!(v, PyValue::Bool(true));
    match value {
        ArgValue::Call(index) => {
            let config = script.calls.get(*index).filter(|c| c.callee == Callee::BitsAndBytesConfig)?;
            let get = |name: &str| match config.arg(name).map(|a| &a.value) {
                None => Some(false),
                Some(ArgValue::Known(v)) => Some(truthy(&v.value)),
                Some(_) => None,
            };
            Some((get("load_in_4bit")?, get("load_in_8bit")?))
        }
        ArgValue::Known(v) => match &v.value {
            PyValue::Dict(entries) => {
                let get =
                    |name: &str| entries.iter().rev().find(|(k, _, _)| k == name).is_some_and(|e| truthy(&e.2.value));
                Some((get("load_in_4bit"), get("load_in_8bit")))
            }
            _ => None,
        },
        ArgValue::Unknown(_) => None,
    }
}

/// `load_in_4bit` (True by default) and `load_in_16bit=True`.
fn describe(flags: &[&Flag]) -> String {
    let names: Vec<String> = flags
        .iter()
        .map(|f| match f.arg {
            Some(_) => format!("`{}`", f.name),
            None => format!("`{}` (True by default)", f.name),
        })
        .collect();
    names.join(" and ")
}

/// The keyword with its value when the value is written in the call, else the keyword.
fn place(call: &Call, arg: &Arg) -> Span {
    match &arg.value {
        ArgValue::Known(v) if v.span.start >= arg.key_span.end && v.span.end <= call.args_span.end => {
            arg.key_span.cover(v.span)
        }
        _ => arg.key_span,
    }
}
