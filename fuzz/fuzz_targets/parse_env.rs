#![no_main]
//! The env-file and shell adapters, and the allocator-config parser, on arbitrary text.

use libfuzzer_sys::fuzz_target;
use oomlint::syntax::env::{parse, Dialect};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        oomlint_fuzz::assert_document(text, &parse(text, Dialect::Env));
        oomlint_fuzz::assert_document(text, &parse(text, Dialect::Shell));
        let conf = oomlint::alloc_conf::parse(text);
        for entry in &conf.entries {
            oomlint_fuzz::assert_span(text, entry.key_span, "allocator key");
            if let Some(span) = entry.value_span {
                oomlint_fuzz::assert_span(text, span, "allocator value");
            }
        }
        for problem in &conf.problems {
            oomlint_fuzz::assert_span(text, problem.span, "allocator problem");
        }
    }
});
