//! `server/oomlint-core/data/models.json` is what `data/catalog/generate.py` makes of the
//! tables next to it (the generator's `--check` mode, run through `python3`).

use std::path::Path;
use std::process::Command;

#[test]
fn models_json_is_what_the_generator_makes_of_the_tables() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/oomlint-core/data/catalog/generate.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg("--check")
        .output()
        .unwrap_or_else(|e| panic!("python3 {}: {e}", script.display()));
    assert!(
        output.status.success(),
        "models.json is stale or a table is malformed (rerun {}):\n{}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}
