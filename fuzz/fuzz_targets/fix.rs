#![no_main]
//! Fix application on arbitrary text: each fix alone changes only its edits' bytes, and
//! fixing to convergence never panics or leaves the text invalid.

use libfuzzer_sys::fuzz_target;
use oomlint::analysis::{analyze_text, Options};
use oomlint::diagnostic::Applicability;
use oomlint::fix::{apply, fix_text, MAX_ROUNDS};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let (path, bytes) = oomlint_fuzz::path_and_bytes(data);
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    let path = Path::new(path);
    let options = Options::default();
    let analysis = analyze_text(path, text.to_string(), &options);
    for fix in analysis.diagnostics.iter().flat_map(|d| &d.fixes) {
        let applied = apply(text, &[fix]);
        if applied.count == 0 {
            continue;
        }
        let mut edits: Vec<_> = fix.edits.iter().collect();
        edits.sort_by_key(|e| (e.span.start, e.span.end));
        let (mut from, mut to) = (0, 0);
        for edit in edits {
            let kept = &text[from..edit.span.start];
            assert_eq!(&applied.text[to..to + kept.len()], kept, "bytes outside the edits changed");
            to += kept.len() + edit.content.len();
            from = edit.span.end;
        }
        assert_eq!(&applied.text[to..], &text[from..], "bytes after the last edit changed");
    }
    let fixed = fix_text(path, text, &options, Applicability::Unsafe);
    assert!(fixed.rounds <= MAX_ROUNDS);
});
