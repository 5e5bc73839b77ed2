#![no_main]
//! The TOML adapter on arbitrary text: no panic, spans on character boundaries.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        oomlint_fuzz::assert_document(text, &oomlint::syntax::toml::parse(text));
    }
});
