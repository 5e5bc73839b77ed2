"""Run OpenRLHF's own start-up checks on oomlint's OpenRLHF rule fixtures, on CPU.

For each `fixtures/rules/openrlhf-*/*.sh` this script takes the `openrlhf.cli.<entry>` command
(`python -m …` or `deepspeed --module …`), joins its line continuations, expands `$VAR` from the
script's own assignments, splits it with shlex, and runs the entry point's file as `__main__`
with those flags: OpenRLHF's argparse, `hierarchize`, and every check its `__main__` block makes
after parsing (the estimator / sample-count assert, the packing assert, the sample-batch
assert, …), unchanged. The source is OpenRLHF at 3c3be62 for the dotted flags
(`--actor.model_name_or_path`) and v0.8.0 for the underscore flags (`--pretrain`).

The modules the entry point imports at the top for training (`ray`, `openrlhf.trainer.*`,
`openrlhf.models`, `openrlhf.datasets`, `openrlhf.utils`' strategy and tokenizer helpers, which
pull in DeepSpeed, vLLM and flash-attn) are replaced by stubs; none of them is called before
the checks end. Any use of a stub raises `ReachedTrain`: once argparse has returned, that means
`__main__` passed its checks and called `train(args)`, the verdict `pass`. Before argparse
returns it would mean the stubs were wrong, recorded as not runnable.

Not runnable on CPU: the colocation assert of `train_ppo_ray.py`
(`actor_num_nodes * actor_num_gpus_per_node must be equal to vllm_num_engines *
vllm_tensor_parallel_size`) sits inside `train()`, after `ray.init`, the DeepSpeed strategy
and `ray.get(placement_group(bundles of {"GPU": 1}).ready())`, which never returns on a
machine without GPUs. Rows for that rule record the `__main__` verdict and `not-run` for the
assert itself.

OpenRLHF's code is not part of this repository. To reproduce `openrlhf.tsv` (from the
repository root, with any Python 3.10+; nothing needs installing):

    mkdir -p /tmp/openrlhf-head /tmp/openrlhf-v0.8.0
    git -C <OpenRLHF clone> archive 3c3be6234e0cb353e76bb8019947db9dfe99fca7 | tar -x -C /tmp/openrlhf-head
    git -C <OpenRLHF clone> archive v0.8.0 | tar -x -C /tmp/openrlhf-v0.8.0
    python tests/framework_checks/openrlhf_validate.py --head /tmp/openrlhf-head \\
        --v080 /tmp/openrlhf-v0.8.0 > tests/framework_checks/openrlhf.tsv
"""

import argparse
import importlib.machinery
import json
import runpy
import shlex
import subprocess
import sys
import types
from pathlib import Path

from launch_script import NotRunnable, command_lines, expand

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "rules"
COMMITS = {"head": "3c3be6234e0c", "v0.8.0": "a542dd98d29e"}
# The rules whose check `__main__` does not reach on CPU, and why.
IN_TRAIN = {
    "openrlhf-colocate-vllm-gpus": "the assert is in train(), after ray.get() on a placement group "
    'of {"GPU": 1} bundles, which never becomes ready without GPUs',
    "openrlhf-colocated-group-sizes": "the asserts are in train(), after ray.init and the DeepSpeed "
    "strategy, around placement groups of GPU bundles that never become ready without GPUs",
}
STUBBED = (
    "ray",
    "deepspeed",
    "vllm",
    "flash_attn",
    "openrlhf.trainer",
    "openrlhf.models",
    "openrlhf.datasets",
)


class ReachedTrain(BaseException):
    """A stub was used: `__main__` got past its checks (when argparse has returned)."""


def script_command(text):
    for line, env in command_lines(text, expand_values=False):
        words = shlex.split(line, comments=True)
        for i, w in enumerate(words):
            if w.startswith("openrlhf.cli."):
                return w, [expand(a, env) for a in words[i + 1 :]]
    raise NotRunnable("no openrlhf.cli command")


class Stub(types.ModuleType):
    """A module whose every attribute, called or read further, raises ReachedTrain."""

    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Thing(f"{self.__name__}.{attr}")


class _Thing:
    def __init__(self, name):
        self._name = name

    def __call__(self, *a, **k):
        raise ReachedTrain(self._name)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Thing(f"{self._name}.{attr}")


class StubFinder:
    def find_spec(self, name, path=None, target=None):
        if any(name == s or name.startswith(s + ".") for s in STUBBED):
            return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        return Stub(spec.name)

    def exec_module(self, module):
        pass


def child(entry, flags, source):
    sys.meta_path.insert(0, StubFinder())
    sys.path.insert(0, source)
    # openrlhf.utils' __init__ imports the DeepSpeed strategy; keep its submodules real
    # (`openrlhf.utils.config.hierarchize` is part of the checks) without running it.
    utils = Stub("openrlhf.utils")
    utils.__path__ = [str(Path(source) / "openrlhf" / "utils")]
    sys.modules["openrlhf.utils"] = utils

    parsed = {"done": False}
    original = argparse.ArgumentParser.parse_args

    def parse_args(self, *a, **k):
        result = original(self, *a, **k)
        parsed["done"] = True
        return result

    argparse.ArgumentParser.parse_args = parse_args
    file = Path(source) / (entry.replace(".", "/") + ".py")
    sys.argv = [str(file), *flags]
    try:
        runpy.run_path(str(file), run_name="__main__")
        row = ["__main__", "pass", "", "returned"]
    except ReachedTrain as e:
        if parsed["done"]:
            row = ["__main__", "pass", "", ""]
        else:
            row = ["__main__", "not-run", "", f"stub {e} used before argparse returned"]
    except SystemExit as e:
        row = ["argparse", "reject" if e.code else "pass", "SystemExit", f"exit status {e.code}"]
    except Exception as e:
        lines = str(e).strip().splitlines()
        row = ["__main__", "reject", type(e).__name__, lines[0] if lines else ""]
    print("ROW\t" + json.dumps(row))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--head", required=True, help="OpenRLHF source at 3c3be62")
    parser.add_argument("--v080", required=True, help="OpenRLHF source at v0.8.0")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        entry, flags, source = args.child
        child(entry, json.loads(flags), source)
        return
    print("fixture\topenrlhf_commit\tstep\tverdict\texception\tmessage")
    for fixture in sorted(FIXTURES.glob("openrlhf-*/*.sh")):
        rel = fixture.relative_to(ROOT).as_posix()
        try:
            entry, flags = script_command(fixture.read_text())
        except NotRunnable as e:
            print("\t".join([rel, COMMITS["head"], "launch script", "not-run", "", str(e)]))
            continue
        dotted = any(f.startswith("--") and "." in f.split("=")[0] for f in flags)
        release = "head" if dotted else "v0.8.0"
        source = args.head if dotted else args.v080
        out = subprocess.run(
            [sys.executable, __file__, "--head", args.head, "--v080", args.v080, "--child", entry, json.dumps(flags), source],
            capture_output=True,
            text=True,
        )
        rows = [line[4:] for line in out.stdout.splitlines() if line.startswith("ROW\t")]
        if rows:
            step, verdict, exc, message = json.loads(rows[-1])
        else:
            tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
            step, verdict, exc, message = "harness", "not-run", "", f"harness crashed: {tail}"
        if exc == "SystemExit":
            err = [line for line in out.stderr.splitlines() if "error:" in line]
            message = err[-1] if err else message
        rule = fixture.parent.name
        if rule in IN_TRAIN and verdict == "pass":
            step, verdict, message = "train() colocation assert", "not-run", f"__main__ passes; {IN_TRAIN[rule]}"
        clean = [s.replace("\t", " ").replace("\n", " ") for s in (step, verdict, exc, message)]
        print("\t".join([rel, COMMITS[release], *clean]), flush=True)


if __name__ == "__main__":
    main()
