#![no_main]
//! The OOM-log reader on arbitrary text, with both renderers.

use libfuzzer_sys::fuzz_target;
use oomlint::explain;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let errors = explain::explain(text);
    for error in &errors {
        oomlint_fuzz::assert_span(text, error.span, "OOM message");
    }
    let failures = explain::failure::failures(text);
    for failure in &failures {
        oomlint_fuzz::assert_span(text, failure.span, "vLLM or Ray failure");
    }
    let _ = oomlint::render::explain::render(&errors, &failures, "train.log", text, true);
    let _ = explain::json::report(&errors, &failures);
});
