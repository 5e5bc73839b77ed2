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
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// Why raw bytes are not analysable text, with the offending offset.
pub fn reject(bytes: &[u8]) -> Option<(usize, String)> {
    if bytes.len() > MAX_FILE_BYTES {
        return Some((0, format!("file is {} bytes, over the {} MiB limit", bytes.len(), MAX_FILE_BYTES >> 20)));
    }
    if let Err(e) = std::str::from_utf8(bytes) {
        return Some((e.valid_up_to(), format!("file is not valid UTF-8 (byte {})", e.valid_up_to())));
    }
    bytes.iter().position(|&b| b == 0).map(|at| (at, format!("file contains a NUL byte at offset {at}")))
}

pub fn check(ctx: &Context, out: &mut Reporter) {
    if let Some((at, message)) = ctx.rejected {
        let at = (*at).min(ctx.text.len());
        out.report(Span::new(at, at), message.clone());
    }
}
