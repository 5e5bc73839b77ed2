#!/usr/bin/env python3
"""Validate every config of the shared corpus against oomlint's JSON Schemas.

Not part of CI (needs Python packages). Set up once, outside the repository:

    python3 -m venv /work/schema-venv
    /work/schema-venv/bin/pip install jsonschema pyyaml

Run from the repository root:

    /work/schema-venv/bin/python tests/schemas/check_corpus.py [--corpus ../shared/corpus] [-v]

It first checks that schema/*.json match their generator tables (schema/tools/generate.py --check). For each
corpus file it picks the schema (`format` column of MANIFEST.tsv, refined by file name for LitGPT
scripts and TRL commands), validates it, and prints a table per schema. Validation errors must be listed in
tests/schemas/EXPECTED_CORPUS_FINDINGS.md (file + JSON path); any other error makes the script exit 1, and so
does a listed finding that no longer occurs. Keys marked `deprecated` in a schema are counted separately
(they are valid for the schema but belong to the removed-key rule, which is version-aware).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

try:
    import jsonschema
    import yaml
except ImportError:  # pragma: no cover - documented setup step
    sys.exit("needs jsonschema and pyyaml: see the docstring of this script")

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schema"
EXPECTED = Path(__file__).resolve().parent / "EXPECTED_CORPUS_FINDINGS.md"


class ConfigLoader(yaml.SafeLoader):
    """PyYAML's YAML 1.1 resolver (what the frameworks load configs with: `NO`/`yes`/`on` are booleans), plus
    dot-less exponents such as `1e-5` read as numbers, matching oomlint's YAML layer (server/src/syntax/yaml.rs)."""


ConfigLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def schema_for(fmt: str, local_path: str, doc: object) -> str | None:
    """Name of the schema a corpus file is checked against, or None when no schema covers it."""
    name = Path(local_path).name
    if fmt == "litgpt":
        if "/pretrain/" in local_path:
            return "litgpt-pretrain"
        stem = name.rsplit(".", 1)[0]
        return {"lora": "litgpt-lora", "qlora": "litgpt-lora", "full": "litgpt-full", "adapter": "litgpt-adapter",
                "adapter_v2": "litgpt-adapter-v2"}.get(stem)
    if fmt == "trl":
        lowered = local_path.lower()
        if "orpo" in lowered:
            return None  # ORPO moved to trl.experimental; no `trl orpo` schema
        for cmd in ("grpo", "dpo", "sft"):
            if f"/{cmd}/" in lowered or cmd in name.lower():
                return f"trl-{cmd}"
        keys = set(doc) if isinstance(doc, dict) else set()
        if keys & {"num_generations", "reward_funcs", "use_vllm"}:
            return "trl-grpo"
        if keys & {"beta", "precompute_ref_log_probs"}:
            return "trl-dpo"
        return "trl-sft"
    if fmt in ("axolotl", "llamafactory", "accelerate", "deepspeed", "transformers"):
        return fmt
    return None


def load(path: Path) -> object:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    return yaml.load(text, Loader=ConfigLoader)


def json_path(parts) -> str:
    return "/" + "/".join(str(p) for p in parts)


def deprecated_keys(instance: object, schema: dict, prefix=()) -> list[str]:
    found = []
    if isinstance(instance, dict) and isinstance(schema.get("properties"), dict):
        for key, value in instance.items():
            sub = schema["properties"].get(key)
            if not isinstance(sub, dict):
                continue
            if sub.get("deprecated"):
                found.append(json_path(prefix + (key,)))
            found += deprecated_keys(value, sub, prefix + (key,))
    return found


def findings(error) -> list[tuple[str, str]]:
    """(json path, message) pairs of one validation error; unknown keys are reported one by one, as oomlint does."""
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        return [(json_path(list(error.absolute_path) + [key]), f"unknown key {key!r}")
                for key in error.instance if key not in known]
    return [(json_path(error.absolute_path), error.message[:200])]


def read_expected() -> set[tuple[str, str]]:
    """Rows `| file | json-path | reason |` of the expectations file."""
    expected = set()
    if not EXPECTED.exists():
        return expected
    for line in EXPECTED.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*`([^`]+)`\s*\|\s*`([^`]*)`\s*\|", line)
        if m:
            expected.add((m.group(1), m.group(2)))
    return expected


def check_fixtures(validators: dict) -> list[str]:
    """Every `fixtures/<format>/valid.*` must validate against `schema/<format>.json`."""
    problems, checked = [], 0
    for name, (validator, _schema) in sorted(validators.items()):
        for path in sorted((REPO / "fixtures" / name).glob("valid.*")):
            checked += 1
            doc = load_fixture(path)
            for error in validator.iter_errors(doc):
                for where, message in findings(error):
                    problems.append(f"{path.relative_to(REPO)} {where}: {message}")
    print(f"fixtures: {checked} valid.* files checked, {len(problems)} errors")
    return problems


def load_fixture(path: Path) -> object:
    if path.suffix == ".toml":
        import tomllib

        return tomllib.loads(path.read_text(encoding="utf-8"))
    return load(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every error and deprecated key")
    args = parser.parse_args()
    manifest = args.corpus / "MANIFEST.tsv"
    if not manifest.exists():
        print(f"notice: corpus not found at {args.corpus}; nothing checked")
        return 0

    sys.path.insert(0, str(SCHEMAS / "tools"))
    sys.dont_write_bytecode = True  # keep schema/tools free of __pycache__
    import generate  # noqa: E402  (the schema generator, standard library only)

    if generate.main(["--check"]):
        return 1
    validators = {}
    for path in sorted(SCHEMAS.glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[path.stem] = (jsonschema.Draft202012Validator(schema), schema)

    expected = read_expected()
    seen_expected = set()
    stats = defaultdict(lambda: defaultdict(int))
    unexpected, skipped = [], defaultdict(int)
    rows = [line.split("\t") for line in manifest.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
    for local_path, *_rest, fmt in rows:
        path = args.corpus / local_path
        try:
            doc = load(path)
        except Exception as err:  # noqa: BLE001 - report any parse failure
            if fmt in ("env", "other"):
                skipped[fmt] += 1
                continue
            unexpected.append((local_path, "", f"parse error: {err}"))
            continue
        name = schema_for(fmt, local_path, doc)
        if name is None:
            skipped[f"{fmt} ({Path(local_path).name})" if fmt not in ("env", "other") else fmt] += 1
            continue
        validator, schema = validators[name]
        row = stats[name]
        row["files"] += 1
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        file_unexpected = 0
        for where, message in (pair for error in errors for pair in findings(error)):
            if (local_path, where) in expected:
                seen_expected.add((local_path, where))
                row["expected errors"] += 1
            else:
                unexpected.append((local_path, where, message))
                file_unexpected += 1
        row["valid" if not errors else "with expected errors" if not file_unexpected else "with unexpected errors"] += 1
        dep = deprecated_keys(doc, schema)
        row["deprecated keys"] += len(dep)
        if args.verbose:
            for key in dep:
                print(f"  deprecated  {name:18} {local_path}  {key}")

    fixture_errors = check_fixtures(validators)

    columns = ["files", "valid", "with expected errors", "with unexpected errors", "expected errors", "deprecated keys"]
    print(f"{'schema':18} " + " ".join(f"{c:>22}" for c in columns))
    totals = defaultdict(int)
    for name in sorted(stats):
        print(f"{name:18} " + " ".join(f"{stats[name][c]:>22}" for c in columns))
        for c in columns:
            totals[c] += stats[name][c]
    print(f"{'TOTAL':18} " + " ".join(f"{totals[c]:>22}" for c in columns))
    if skipped:
        print("not checked (no schema): " + ", ".join(f"{k}: {v}" for k, v in sorted(skipped.items())))
    stale = sorted(expected - seen_expected)
    for local_path, where, message in unexpected:
        print(f"UNEXPECTED {local_path} {where}: {message}")
    for local_path, where in stale:
        print(f"STALE EXPECTATION {local_path} {where} (no longer reported)")
    for message in fixture_errors:
        print(f"FIXTURE {message}")
    return 1 if unexpected or stale or fixture_errors else 0


if __name__ == "__main__":
    sys.exit(main())
