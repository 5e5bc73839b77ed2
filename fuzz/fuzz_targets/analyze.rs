#![no_main]
//! The whole check pipeline on arbitrary bytes (the first byte picks the file name, the
//! second whether a GPU is set), then every renderer over the result.

use libfuzzer_sys::fuzz_target;
use oomlint::analysis::{analyze_bytes, Options};
use oomlint::render;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let (path, rest) = oomlint_fuzz::path_and_bytes(data);
    let (gpu, bytes) = match rest.split_first() {
        Some((&flag, bytes)) if flag % 2 == 1 => (oomlint::catalog::gpus::resolve_gpu("A10G").ok().cloned(), bytes),
        _ => (None, rest),
    };
    let options = Options { gpu, ..Options::default() };
    let analysis = analyze_bytes(Path::new(path), bytes, &options);
    oomlint_fuzz::assert_analysis(&analysis);
    let mut out = String::new();
    render::full::render(&analysis, true, &mut out);
    render::concise(&analysis, &mut out);
    render::github::render(&analysis, &mut out);
    let analyses = [analysis];
    let _ = render::json::report(&analyses);
    let _ = render::sarif::report(&analyses);
    if let Some(estimate) = &analyses[0].estimate {
        let _ = render::estimate::table(&analyses[0], estimate);
        let _ = render::estimate::json(&analyses[0], estimate);
    }
});
