//! ## What it does
//! Notes that a file named on the command line was not checked: oomlint does not take it
//! for a config of a framework it reads, and says why (no framework's keys, keys of a tool
//! it does not read such as torchtune or ms-swift, or too many keys the proposed
//! framework does not know).
//!
//! ## Why
//! "No problems" for a file that was never read is a false promise. A file found by a
//! directory walk, or passed by the pre-commit hooks (`--skip-unrecognized`), stays
//! quiet instead: repositories hold many YAML files that are not training configs.
//!
//! ## Example
//! `oomlint check recipes/lora.yaml` on a torchtune recipe:
//! "not checked: its keys belong to torchtune (`_component_`), which oomlint does not read".
//!
//! ## Fix
//! None. If the file is a config oomlint reads, name its format with a
//! `# oomlint: format=trl-sft` modeline or a `[format]` entry in `oomlint.toml`; if it is
//! not, `--exclude` it.
//!
//! ## Source
//! oomlint's format recognition (`recognize.rs`).

use super::{Context, Reporter};
use crate::format::Format;
use crate::span::Span;

pub(crate) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(reason) = ctx.unrecognized.filter(|_| ctx.format == Format::Unknown) else { return };
    out.report(Span::empty(0), format!("not checked: {reason}"));
}
