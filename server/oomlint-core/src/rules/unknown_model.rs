//! ## What it does
//! Reports a model reference that oomlint cannot resolve: a name that no step of the
//! resolution ladder answers (a local directory, the local Hugging Face cache for a hub id,
//! the catalog of architectures, and a shape sized from a known family and a size in the
//! name; the message lists the steps tried), or a local checkpoint directory without a readable `config.json`
//! (Hugging Face) or `model_config.yaml` (LitGPT). It names the closest known models.
//! A script whose trainer gets a model that is not a decoder language model (a BERT-style
//! encoder, an embedding, speech or classification model) is told that it is not estimated
//! and why.
//!
//! ## Why
//! Without the architecture there is no memory estimate; oomlint sizes one from a name
//! only when the name gives both a family it knows and a size (and says so, with a wider
//! band). A typo in a hub id also fails the run itself when it downloads.
//!
//! ## Example
//! ```yaml
//! model_name_or_path: meta-llama/Llama-3.1-8b-instruct-typo
//! ```
//!
//! ## Fix
//! None: correct the name, or point at a local directory with a `config.json`.
//!
//! ## Source
//! oomlint's model catalog (`server/data/models.json`, each entry with its public
//! source) and `server/src/catalog/local.rs`.

use super::{Context, Reporter};
use crate::model::ModelLookup;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(lookup) = ctx.model else { return };
    match lookup {
        ModelLookup::Found(_) => {}
        ModelLookup::Unknown { name, suggestions, tried, span } => {
            let hint = if suggestions.is_empty() {
                String::new()
            } else {
                format!("; closest known: {}", suggestions.join(", "))
            };
            out.report(
                span.unwrap_or_default(),
                format!("unknown model `{name}`: no memory estimate (tried {tried}){hint}"),
            );
        }
        ModelLookup::Unreadable { name, reason, span } => {
            out.report(span.unwrap_or_default(), format!("cannot read the local model `{name}`: {reason}"));
        }
        ModelLookup::NotEstimated { reason, span, .. } => {
            out.report(span.unwrap_or_default(), reason.clone());
        }
    }
}
