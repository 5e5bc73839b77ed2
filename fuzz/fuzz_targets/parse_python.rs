#![no_main]
//! The Python and notebook adapters on arbitrary text: no panic, spans on character boundaries.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        oomlint_fuzz::assert_document(text, &oomlint::syntax::python::parse(text));
        oomlint_fuzz::assert_document(text, &oomlint::syntax::notebook::parse(text));
    }
});
