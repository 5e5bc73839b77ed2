"""Fidelity check: the frameworks themselves against oomlint, fixture by fixture.

For every rule that mirrors a framework start-up error, runs the framework's own code on
the rule's `fixtures/rules/<rule>/fail*` and `pass*` files (through harness.py, one
subprocess per fixture) and oomlint on the same file, and writes AGREEMENT.md.

Usage (see README.md for the virtual environment):
    python tests/fidelity/run.py [--oomlint PATH] [--python /work/fidelity-venv/bin/python]

--oomlint defaults to debug/oomlint in $CARGO_TARGET_DIR (a relative one taken from the
repository root), else in target/.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

# rule -> (harness, kind). kind "error": the framework raises on fail* and accepts pass*.
# kind "silent": the framework accepts both; the rule warns about what it silently does.
# kind "trainer": the check runs inside a Trainer with a loaded model (or in vLLM) and is
# not run here.
RULES = {
    "litgpt-quantize-mixed-precision": ("litgpt", "error"),
    "litgpt-quantize-multi-device": ("litgpt", "error"),
    "litgpt-quantize-optimizer": ("litgpt", "error"),
    "litgpt-batch-arithmetic": ("litgpt", "error"),
    "litgpt-batch-rounding": ("litgpt", "silent"),
    "litgpt-validate-args": ("litgpt", "error"),
    "litgpt-warmup-zero": ("litgpt", "error"),
    "litgpt-warmup-fraction-and-steps": ("litgpt", "error"),
    "litgpt-devices-invalid": ("litgpt", "error"),
    "litgpt-quantize-precision-unsupported": ("litgpt", "error"),
    "fp16-and-bf16": ("trl", "error"),
    "conflicting-quantization": ("trl", "error"),
    "quantized-without-adapter": ("trl", "trainer"),
    "trl-padding-free-without-packing": ("trl-trainer", "error"),
    "trl-packing-without-max-length": ("trl-trainer", "error"),
    "trl-dtype-unset-fp32": ("trl", "silent"),
    "grpo-generation-batch-divisibility": ("trl", "error"),
    "grpo-min-generations": ("trl", "error"),
    "grpo-generation-batch-and-steps": ("trl", "error"),
    "grpo-auto-find-batch-size": ("trl", "error"),
    "grpo-eval-batch-divisibility": ("trl", "error"),
    "grpo-sync-ref-without-beta": ("trl-trainer", "error"),
    "vllm-tp-divides-world": ("trl", "trainer"),
    "trl-vllm-8bit": ("trl", "trainer"),
    "dpo-loss-weights-length": ("trl", "error"),
    "transformers-prefetch-without-workers": ("transformers", "error"),
    "load-best-model-strategy-mismatch": ("transformers", "error"),
    "reduce-lr-on-plateau-without-eval": ("transformers", "error"),
    "axolotl-batch-keys": ("axolotl", "error"),
    "axolotl-qlora-requires-4bit": ("axolotl", "error"),
    "axolotl-deepspeed-and-fsdp": ("axolotl", "error"),
    "axolotl-sample-packing-with-rl": ("axolotl", "error"),
    "axolotl-activation-offloading-requires-checkpointing": ("axolotl", "error"),
    "axolotl-attention-legacy-flags": ("axolotl", "error"),
    "axolotl-fsdp2-8bit-optimizer": ("axolotl", "error"),
    "axolotl-beta-mismatch": ("axolotl", "error"),
    "axolotl-max-memory-exclusive": ("axolotl", "error"),
    "accelerate-missing-distributed-type": ("accelerate", "error"),
    "accelerate-num-processes-unset": ("accelerate", "error"),
    "accelerate-deepspeed-file-conflicts": ("accelerate", "error"),
    "accelerate-fsdp2-reshard-not-bool": ("accelerate", "error"),
    "accelerate-cpu-ram-efficient-loading": ("accelerate", "error"),
    "accelerate-fsdp2-local-state-dict": ("accelerate", "error"),
    "accelerate-parallelism-size-mismatch": ("accelerate", "error"),
    "deepspeed-batch-arithmetic": ("deepspeed", "error"),
    "deepspeed-offload-param-stage": ("deepspeed", "silent"),
    "deepspeed-partial-offload-stage": ("deepspeed", "error"),
    "deepspeed-hf-mismatch": ("trl", "error"),
    "alloc-conf-invalid": ("torch-alloc", "error"),
    "alloc-conf-ineffective": ("torch-alloc", "silent"),
    "alloc-conf-both-variables": ("torch-alloc", "silent"),
    "alloc-conf-legacy-variable": ("torch-alloc", "silent"),
    "expandable-segments-with-vllm-sleep": ("vllm", "trainer"),
    "seq-longer-than-context": ("trl", "silent"),
    "bf16-unsupported-gpu": ("trl", "gpu"),
}


# Fixtures whose framework raises although the rule is a warning elsewhere.
FIXTURE_KIND = {
    ("seq-longer-than-context", "fail-litgpt.yaml"): "error",
    ("quantized-without-adapter", "fail-axolotl.yaml"): "error",  # Axolotl validates it up front
}


def harness_for(rule, fixture, default):
    if "axolotl" in fixture.name:
        return "axolotl"
    if "litgpt" in fixture.name:
        return "litgpt"
    return default


def framework_verdict(python, harness, fixture):
    try:
        out = subprocess.run([python, str(HERE / "harness.py"), harness, str(fixture)], capture_output=True,
                             text=True, timeout=600, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"verdict": "not-run", "detail": "timed out"}
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"verdict": "not-run", "detail": "no verdict: " + (out.stderr.strip().splitlines() or [""])[-1][:200]}


def oomlint_fires(binary, rule, fixture):
    out = subprocess.run([binary, "check", str(fixture.relative_to(ROOT)), "--output-format", "json"],
                         capture_output=True, text=True, cwd=ROOT)
    report = json.loads(out.stdout)
    return any(d["rule"] == rule for f in report["files"] for d in f["diagnostics"])


def versions(python):
    code = ("import importlib.metadata as m\n"
            "for p in ['litgpt','trl','transformers','accelerate','deepspeed','axolotl','torch']:\n"
            "    try: print(p, m.version(p))\n"
            "    except Exception: print(p, '-')\n")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return dict(line.split(" ", 1) for line in out.stdout.splitlines())


def main():
    ap = argparse.ArgumentParser()
    target = ROOT / (os.environ.get("CARGO_TARGET_DIR") or "target")
    ap.add_argument("--oomlint", default=str(target / "debug" / "oomlint"))
    ap.add_argument("--python", default="/work/fidelity-venv/bin/python")
    ap.add_argument("--only", default="")
    ns = ap.parse_args()
    found = versions(ns.python)
    found["torch-alloc"] = found.get("torch", "-")
    found["trl-trainer"] = found.get("trl", "-")
    found["vllm"] = "-"
    rows = []
    for rule, (default, kind) in RULES.items():
        if ns.only and ns.only not in rule:
            continue
        # Files only: the snapshots/ folder beside them holds tests/rules.rs's snapshots.
        for fixture in sorted(p for p in (ROOT / "fixtures/rules" / rule).glob("*") if p.is_file()):
            expect_fail = fixture.name.startswith("fail")
            harness = harness_for(rule, fixture, default)
            kind = FIXTURE_KIND.get((rule, fixture.name), RULES[rule][1])
            fires = oomlint_fires(ns.oomlint, rule, fixture)
            if kind == "trainer":
                fw = {"verdict": "not-run", "detail": "checked inside the Trainer/vLLM with a loaded model"}
            elif kind == "gpu":
                fw = {"verdict": "not-run", "detail": "needs the target GPU (the check asks the device)"}
            else:
                fw = framework_verdict(ns.python, harness, fixture)
            v = fw["verdict"]
            if v == "not-run":
                agree = "n/a"
            elif kind == "silent":
                agree = "yes" if v == "accepts" and fires == expect_fail else "no"
            else:
                agree = "yes" if (v == "raises") == expect_fail and fires == expect_fail else "no"
            rows.append((rule, harness, found.get(harness, "-"), fixture.name, v, fw.get("detail", ""),
                         "fires" if fires else "silent", agree))
            print(rows[-1], file=sys.stderr)
    if ns.only:
        found = {**previous_versions(), **{k: v for k, v in found.items() if v != "-"}}
        rows = previous_rows(ns.only) + rows
        order = list(RULES)
        rows.sort(key=lambda r: (order.index(r[0]) if r[0] in order else len(order), r[3]))
    write(rows, found)


def previous_versions():
    """Framework versions of the committed AGREEMENT.md, kept for the rows not re-run (with --only)."""
    path = HERE / "AGREEMENT.md"
    line = next((l for l in path.read_text().splitlines() if l.startswith("Versions: ")), "") if path.exists() else ""
    return dict(item.split(" ", 1) for item in line.removeprefix("Versions: ").split(", ") if " " in item)


def previous_rows(only):
    """Rows of the committed AGREEMENT.md for the rules not re-run (with --only)."""
    path = HERE / "AGREEMENT.md"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 7 or cells[0] in ("rule", "---") or only in cells[0]:
            continue
        verdict, _, detail = cells[4].partition(": ")
        rows.append((cells[0], cells[1], cells[2], cells[3], verdict, detail.replace("\\|", "|"), cells[5], cells[6]))
    return rows


def write(rows, found):
    lines = [
        "# Framework agreement",
        "",
        "Generated by `tests/fidelity/run.py` (see `tests/fidelity/README.md`): each rule's fixtures run",
        "through the framework's own start-up code (`harness.py`) and through oomlint. *fail* fixtures",
        "should make the framework raise and oomlint report the rule; *pass* fixtures neither. Rules that",
        "flag silent behaviour (warnings) expect the framework to accept both. `not-run`: the check lives",
        "in a Trainer with a loaded model, in vLLM, or needs a GPU.",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(found.items()) if k not in ("torch-alloc", "trl-trainer", "vllm")),
        "",
        "| rule | framework | version | fixture | framework verdict | oomlint | agree |",
        "|---|---|---|---|---|---|---|",
    ]
    for rule, harness, version, fixture, v, detail, fires, agree in rows:
        shown = v if not detail else f"{v}: {detail}".replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {rule} | {harness} | {version} | {fixture} | {shown[:160]} | {fires} | {agree} |")
    counts = {k: sum(1 for r in rows if r[7] == k) for k in ("yes", "no", "n/a")}
    lines += ["", f"Summary: {len(rows)} fixtures; agree {counts['yes']}, disagree {counts['no']}, not run {counts['n/a']}.", ""]
    (HERE / "AGREEMENT.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
