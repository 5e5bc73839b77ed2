//! didChange → publishDiagnostics latency of `oomlint server` (written next).

fn main() {}
