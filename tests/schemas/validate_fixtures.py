#!/usr/bin/env python3
"""The schemas in schema/ as other editors use them, checked with an external validator.

check-jsonschema (PyPI; what pre-commit and CI users run, installed here into a cached
venv) must accept every schema against its metaschema, and validate the fixtures the way
oomlint's own schema rules judge them:

- each file in fixtures/<format>/ (a directory named after a schema) against that schema,
  every other YAML/JSON/TOML fixture against the schema of the format oomlint detects;
- a fixture must validate exactly when oomlint reports no schema-level finding on it
  (yaml-syntax, duplicate-key, unknown-key, invalid-value, unreadable-input), apart from
  the exceptions listed below with their reason; every fixtures/<format>/valid.* must
  validate, and every schema must accept at least one fixture.

Usage: python3 tests/schemas/validate_fixtures.py
"""

import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECK_JSONSCHEMA = "check-jsonschema==0.39.0"
SUFFIXES = {".yaml", ".yml", ".json", ".toml"}
# Findings that mean the file breaks its schema (or cannot be parsed at all; a duplicate
# key is a parse error for check-jsonschema).
SCHEMA_RULES = {"yaml-syntax", "duplicate-key", "unknown-key", "invalid-value", "unreadable-input"}
# Fixtures where check-jsonschema and oomlint disagree by design.
EXCEPTIONS = {
    "fixtures/rules/unused-suppression/pass.yaml": (
        "invalid",
        "its unknown key is suppressed by `# oomlint: ignore[unknown-key]`, which JSON Schema cannot express",
    ),
    "fixtures/rules/unused-suppression/fail-partial.yaml": (
        "invalid",
        "its unknown key is suppressed by `# oomlint: ignore[unknown-key, OOM101]` (the OOM101 part is the unused one)",
    ),
    "fixtures/rules/invalid-value/pass-trl-argparse-strings.yaml": (
        "invalid",
        "TRL's argparse converts quoted defaults with the field's type (`\"2.0e-5\"` → 2e-05, `\"true\"` → True) "
        "before the config class sees them, so oomlint accepts them; JSON Schema sees strings",
    ),
    "fixtures/rules/axolotl-deepspeed-and-fsdp/pass-placeholders.yaml": (
        "invalid",
        "`${DEEPSPEED}` and `${FSDP}` are placeholders a launcher fills in before Axolotl reads the file; "
        "oomlint takes them for values it cannot know, JSON Schema for strings",
    ),
}


def check_jsonschema() -> Path:
    """The check-jsonschema executable of the cached venv, installed on first use."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    venv = cache / "oomlint-tests" / "check-jsonschema-venv"
    exe = venv / "bin" / "check-jsonschema"
    wanted = CHECK_JSONSCHEMA.split("==")[1]
    if exe.exists():
        version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        if version.split()[-1:] == [wanted]:
            return exe
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run(
        [venv / "bin" / "pip", "install", "--quiet", "--disable-pip-version-check", CHECK_JSONSCHEMA],
        check=True,
    )
    return exe


def oomlint_binary() -> Path:
    # $CARGO_TARGET_DIR (a relative one taken from the repository root, as the shell scripts
    # do), else target/; passed to cargo as an absolute path so that the two agree.
    target = REPO / (os.environ.get("CARGO_TARGET_DIR") or "target")
    env = {**os.environ, "CARGO_TARGET_DIR": str(target)}
    subprocess.run(["cargo", "build", "--quiet", "--manifest-path", REPO / "Cargo.toml"], check=True, env=env)
    return target / "debug" / "oomlint"


def oomlint_findings(binary: Path, files: list[str]) -> dict[str, tuple[str | None, set[str]]]:
    """Per file: the format oomlint detects and the rules it reports."""
    run = subprocess.run(
        [binary, "check", "--output-format", "json", *files], cwd=REPO, capture_output=True, text=True
    )
    if run.returncode not in (0, 1):
        sys.exit(f"FAIL: oomlint check exited {run.returncode}: {run.stderr}")
    report = json.loads(run.stdout)
    return {
        f["path"]: (f.get("format"), {d["rule"] for d in f["diagnostics"]}) for f in report["files"]
    }


def validate(exe: Path, schema: Path, files: list[str]) -> dict[str, list[str]]:
    """check-jsonschema's complaints per file (absent: the file validates)."""
    run = subprocess.run(
        [exe, "--output-format", "json", "--schemafile", schema, *files], cwd=REPO, capture_output=True, text=True
    )
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        sys.exit(f"FAIL: check-jsonschema gave no JSON for {schema} (exit {run.returncode}): {run.stderr}")
    complaints: dict[str, list[str]] = defaultdict(list)
    for error in report.get("errors", []):
        complaints[error["filename"]].append(f"{error['path']}: {error['message']}")
    for error in report.get("parse_errors", []):
        complaints[error["filename"]].append(error["message"])
    if run.returncode != 0 and not complaints:
        sys.exit(f"FAIL: check-jsonschema exited {run.returncode} on {schema}: {run.stderr}")
    return complaints


def check_metaschema(exe: Path) -> int:
    schemas = sorted(str(p.relative_to(REPO)) for p in (REPO / "schema").glob("*.json"))
    run = subprocess.run([exe, "--check-metaschema", *schemas], cwd=REPO, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"FAIL: check-jsonschema --check-metaschema rejects a schema:\n{run.stdout}{run.stderr}")
    # The check can fail: a schema with a bad keyword value is refused.
    with tempfile.NamedTemporaryFile("w", suffix=".json") as broken:
        json.dump({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": 12}, broken)
        broken.flush()
        if subprocess.run([exe, "--check-metaschema", broken.name], capture_output=True).returncode == 0:
            sys.exit("FAIL: check-jsonschema --check-metaschema accepted a broken schema")
    return len(schemas)


def main() -> None:
    exe = check_jsonschema()
    schema_count = check_metaschema(exe)
    print(f"check-jsonschema --check-metaschema: {schema_count} schemas accepted")

    fixtures = sorted(
        str(p.relative_to(REPO)) for p in (REPO / "fixtures").rglob("*") if p.is_file() and p.suffix in SUFFIXES
    )
    findings = oomlint_findings(oomlint_binary(), fixtures)
    by_schema: dict[str, list[str]] = defaultdict(list)
    skipped = []
    for path in fixtures:
        directory = Path(path).parts[1]
        detected, _ = findings.get(path, (None, set()))
        schema_format = directory if (REPO / "schema" / f"{directory}.json").exists() else detected
        if schema_format is None or not (REPO / "schema" / f"{schema_format}.json").exists():
            skipped.append(path)
            continue
        by_schema[schema_format].append(path)

    failures = []
    accepted_per_schema = {}
    rejected = 0
    for schema_format, files in sorted(by_schema.items()):
        complaints = validate(exe, REPO / "schema" / f"{schema_format}.json", files)
        accepted_per_schema[schema_format] = sum(1 for f in files if f not in complaints)
        for path in files:
            schema_rules = findings.get(path, (None, set()))[1] & SCHEMA_RULES
            expected_valid = not schema_rules
            if path in EXCEPTIONS:
                expected_valid = EXCEPTIONS[path][0] == "valid"
            if Path(path).stem == "valid" and not expected_valid:
                failures.append(f"{path}: a valid.* fixture has schema findings {sorted(schema_rules)}")
            valid = path not in complaints
            rejected += not valid
            if valid and not expected_valid:
                failures.append(
                    f"{path}: check-jsonschema accepts it against schema/{schema_format}.json, "
                    f"but oomlint reports {sorted(schema_rules) or EXCEPTIONS.get(path)}"
                )
            elif not valid and expected_valid:
                failures.append(
                    f"{path}: check-jsonschema rejects it against schema/{schema_format}.json "
                    f"(oomlint reports no schema finding): {'; '.join(complaints[path])}"
                )

    for schema in sorted((REPO / "schema").glob("*.json")):
        if accepted_per_schema.get(schema.stem, 0) == 0:
            failures.append(f"schema/{schema.name}: no fixture validates against it")
    for path in EXCEPTIONS:
        if not any(path in files for files in by_schema.values()):
            failures.append(f"{path}: listed as an exception but not validated (moved or removed?)")

    validated = sum(len(files) for files in by_schema.values())
    if failures:
        print("\n".join(f"FAIL: {failure}" for failure in failures), file=sys.stderr)
        sys.exit(1)
    print(
        f"check-jsonschema: {validated} fixtures against {len(by_schema)} schemas agree with oomlint "
        f"({validated - rejected} valid, {rejected} rejected); {len(skipped)} without a schema skipped"
    )


if __name__ == "__main__":
    main()
