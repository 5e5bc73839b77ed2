//! ## What it does
//! Reports a file oomlint will not analyse: larger than the size limit
//! (16 MiB), not valid UTF-8, or containing NUL bytes.
//!
//! ## Why
//! Training configs are small text files. Such input is almost always a wrong
//! path (a checkpoint, a dataset shard, a binary) and would waste time or memory.
//!
//! ## Example
//! `oomlint check model.safetensors`
//!
//! ## Fix
//! None: point oomlint at the config file.
//!
//! ## Source
//! oomlint's own input limits (README, "Limits").

use super::{Context, Reporter};
use crate::span::Span;

/// Files above this size are not parsed.
pub(crate) const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// Raw bytes as analysable text, or why they are not, with the offending offset.
pub(crate) fn accept(bytes: &[u8]) -> Result<&str, (usize, String)> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err((0, format!("file is {} bytes, over the {} MiB limit", bytes.len(), MAX_FILE_BYTES >> 20)));
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|e| (e.valid_up_to(), format!("file is not valid UTF-8 (byte {})", e.valid_up_to())))?;
    match text.find('\0') {
        Some(at) => Err((at, format!("file contains a NUL byte at offset {at}"))),
        None => Ok(text),
    }
}

pub(crate) fn check(ctx: &Context, out: &mut Reporter) {
    if let Some((at, message)) = ctx.rejected {
        let at = (*at).min(ctx.text.len());
        out.report(Span::new(at, at), message.clone());
    }
}
