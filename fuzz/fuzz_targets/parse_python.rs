#![no_main]
//! The Python and notebook adapters, and the layout of their framework calls, on arbitrary
//! text: no panic, spans on character boundaries.

use libfuzzer_sys::fuzz_target;
use oomlint::syntax::Language;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        oomlint_fuzz::assert_document(text, &oomlint::format::document(text, Language::Python));
        oomlint_fuzz::assert_document(text, &oomlint::format::document(text, Language::Notebook));
    }
});
