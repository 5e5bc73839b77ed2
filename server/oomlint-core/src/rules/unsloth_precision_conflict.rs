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
use crate::plan::{UnslothFlag, UnslothSettings};
use crate::span::Span;

const COMBINATION: &str = "Unsloth: Can only load in 4bit or 8bit or 16bit, not a combination!";

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(load) = ctx.plan.and_then(|p| p.unsloth.as_ref()) else { return };
    let Some(flags) = Flags::read(load) else { return };
    let on: Vec<&Flag> = flags.all().into_iter().filter(|f| f.on).collect();
    let delegated = !load.language_model || flags.eight.on || flags.full;
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
    let written: Vec<Span> = on.iter().filter_map(|f| f.arg).collect();
    let Some(primary) = written.last() else { return };
    let diagnostic = out.report(*primary, format!("{message}{hint}"));
    for other in &written[..written.len() - 1] {
        diagnostic.with_related(*other, "also set here");
    }
    if flags.four.arg.is_none() && flags.four.on {
        diagnostic.with_related(load.loader, "`load_in_4bit` is True by default");
    }
}

/// One precision flag: whether it is on, and the argument that says so (None: default).
struct Flag {
    name: &'static str,
    on: bool,
    arg: Option<Span>,
}

struct Flags {
    four: Flag,
    eight: Flag,
    sixteen: Flag,
    fp8: Flag,
    full: bool,
}

impl Flags {
    /// The flags as `from_pretrained` sees them after a `quantization_config` replaced
    /// 4-bit and 8-bit; None when one of them is not known statically.
    fn read(load: &UnslothSettings) -> Option<Flags> {
        let flag = |name: &'static str, flag: &UnslothFlag| Some(Flag { name, on: flag.on.value?, arg: flag.argument });
        Some(Flags {
            four: flag("load_in_4bit", &load.load_in_4bit)?,
            eight: flag("load_in_8bit", &load.load_in_8bit)?,
            sixteen: flag("load_in_16bit", &load.load_in_16bit)?,
            fp8: flag("load_in_fp8", &load.load_in_fp8)?,
            full: load.full_finetuning.on.value?,
        })
    }

    fn all(&self) -> [&Flag; 4] {
        [&self.four, &self.eight, &self.sixteen, &self.fp8]
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
