//! `hover`: what the language server shows for the key under the cursor (its documentation,
//! and for keys that move memory the breakdown, what the key costs and the levers that edit
//! it), as Markdown, from the core's [`oomlint_core::hover`].

use crate::offsets::Utf16;
use crate::project::Project;
use crate::report::{options, target_gpu};
use crate::Request;
use oomlint_core::analysis::analyze_bytes;
use oomlint_core::hover::{hover as hover_at, Hovered};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;

pub(crate) fn hover(request: &Request) -> Value {
    let gpu = match target_gpu(request) {
        Ok(gpu) => gpu,
        Err(error) => return json!({ "error": error }),
    };
    let Some(file) = request.files.iter().find(|f| f.name == request.active) else {
        return json!({ "error": format!("no file `{}` in the request", request.active) });
    };
    let project = Arc::new(Project::new(request.files.iter().map(|f| (f.name.as_str(), f.text.as_str()))));
    let path = Path::new(&file.name);
    let options = match options(&project, path, gpu, true) {
        Ok(options) => options,
        Err(error) => return json!({ "error": error.to_string() }),
    };
    let analysis = analyze_bytes(path, file.text.as_bytes(), &options);
    let offsets = Utf16::new(&analysis.text);
    let headroom = options.settings.with_modeline(&analysis.text).headroom;
    let hovered = Hovered { analysis: &analysis, options: &options, headroom };
    match hover_at(&hovered, offsets.byte_at(request.offset)) {
        Some((markdown, span)) => json!({
            "markdown": markdown,
            "from": offsets.units_at(span.start),
            "to": offsets.units_at(span.end),
        }),
        None => json!({ "markdown": null }),
    }
}
