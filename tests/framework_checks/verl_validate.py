"""Run verl's own start-up checks on oomlint's verl rule fixtures, on CPU.

For each `fixtures/rules/verl-*/*.sh` this script takes the `verl.trainer.main_ppo` command,
joins its line continuations, expands `$VAR`/`${VAR}` from the script's own assignments,
splits it with shlex, composes the configuration with Hydra's compose API from verl's own
config directory (`verl/trainer/config`, `ppo_trainer` or the script's `--config-name`) and
then runs, in the order a real launch reaches them, and stopping at the first failure:

1. `validate_config` (`verl/utils/config.py`, called by `TaskRunner.run` in
   `verl/trainer/main_ppo.py` after `OmegaConf.resolve`), with `use_reference_policy` and
   `use_critic` from verl's `need_reference_policy` and `need_critic`
   (`verl/trainer/ppo/utils.py`), as `main_ppo` computes them. It builds `ActorConfig` (its
   `__post_init__`) and runs `ActorConfig.validate`, and for a critic `CriticConfig`.
2. The worker start-up normalisation: `ActorRolloutRefWorker.__init__`
   (`verl/workers/fsdp_workers.py`, the class `main_ppo` picks for `fsdp`/`fsdp2` with
   `trainer.use_legacy_worker_impl` `auto` or `enable`) for the role `actor_rollout`, then
   the reference worker (role `ref`) and `CriticWorker` when they exist. These need
   `torch.distributed`: the script starts torch's single-process fake process group
   (`backend="fake"`, from `torch.testing._internal.distributed.fake_pg`) with the world size
   `trainer.n_gpus_per_node × trainer.nnodes`, so the code reads the same data-parallel size
   as on the cluster; no collective runs in these constructors.
3. The Ulysses attention-head check of `apply_monkey_patch`
   (`verl/models/transformers/monkey_patch.py`, called from `_build_model_optimizer`) when
   `ulysses_sequence_parallel_size > 1`, on the model built on the `meta` device (no weights)
   from its `config.json`.

4. For a LoRA actor under FSDP, the argument checks of `collect_lora_params`
   (`verl/utils/fsdp_utils.py`), which the first weight hand-over (`rollout_mode`) runs:
   see `lora_collection`. verl's LoRA configuration imports vLLM in step 1, which cannot be
   installed without a GPU: such a fixture is not run, except that a rejection by this later
   check, which needs no vLLM, is recorded as one.

Megatron actors (`megatron_workers.py` needs megatron-core and CUDA) and the engine workers
(`use_legacy_worker_impl=disable`) are recorded as not runnable on CPU, without a verdict.

No model is downloaded. Steps 1 (critic only) and 3 read the model's `config.json` and
tokenizer through Hugging Face's cache; the script writes an offline cache holding, for the
models in `STAND_INS`, the model's published `config.json` values and a placeholder tokenizer
(verl reads only its special-token ids from it, which no check here looks at). A fixture
naming any other model is recorded as not runnable where a step needs the model.

verl's code is not part of this repository. To reproduce `verl.tsv` (from the repository
root; the venv needs torch, transformers, omegaconf, hydra-core, ray, tensordict, codetiming,
peft, accelerate, datasets, pillow and pyzmq, none of them GPU-only):

    rm -rf /tmp/verl-src && mkdir -p /tmp/verl-src
    git -C <verl clone> archive b178a3cd56f58b2d502255daba591e92833930a7 | tar -x -C /tmp/verl-src
    PYTHONPATH=/tmp/verl-src python tests/framework_checks/verl_validate.py \\
        --verl /tmp/verl-src > tests/framework_checks/verl.tsv

Each fixture runs in its own subprocess (verl's config objects and the process group are
global state). transformers 5 removed `AutoModelForVision2Seq`, which verl's model helpers
import; the script aliases it to `AutoModelForImageTextToText` (neither is used by the checks).
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

from launch_script import NotRunnable, command_lines, expand

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "rules"
TRAINER_MODULE = "verl.trainer.main_ppo"

# The published config.json values of the models the fixtures name (Hugging Face model card
# files; the head counts agree with litgpt's config for Qwen2.5-0.5B).
STAND_INS = {
    "Qwen/Qwen2.5-0.5B-Instruct": {
        "architectures": ["Qwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "hidden_act": "silu",
        "hidden_size": 896,
        "initializer_range": 0.02,
        "intermediate_size": 4864,
        "max_position_embeddings": 32768,
        "max_window_layers": 21,
        "model_type": "qwen2",
        "num_attention_heads": 14,
        "num_hidden_layers": 24,
        "num_key_value_heads": 2,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "sliding_window": 32768,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 151936,
    }
}


# Reading the launch script.


def script_command(text):
    """The `main_ppo` command's arguments, or raise NotRunnable."""
    for line, env in command_lines(text, expand_values=True):
        if TRAINER_MODULE in line:
            words = shlex.split(line, comments=True)
            start = words.index(TRAINER_MODULE) + 1
            return [expand(w, env) for w in words[start:]]
    raise NotRunnable(f"no `{TRAINER_MODULE}` command")


def split_hydra(args):
    """(config name, overrides) from `main_ppo`'s arguments."""
    config_name, overrides, i = "ppo_trainer", [], 0
    while i < len(args):
        a = args[i]
        if a in ("--config-name", "-cn"):
            config_name, i = args[i + 1], i + 2
            continue
        if a.startswith("--config-name="):
            config_name = a.split("=", 1)[1]
        elif a in ("--config-path", "-cp"):
            raise NotRunnable("the script names its own --config-path")
        elif a.startswith("-"):
            raise NotRunnable(f"Hydra flag {a} is not handled")
        else:
            overrides.append(a)
        i += 1
    return config_name, overrides


# The checks, in the subprocess.


def stand_in_cache(root):
    """An offline Hugging Face cache with the STAND_INS models' config and a placeholder tokenizer."""
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    for model_id, config in STAND_INS.items():
        snapshot = Path(root) / "hub" / ("models--" + model_id.replace("/", "--"))
        commit = "0" * 40
        (snapshot / "refs").mkdir(parents=True, exist_ok=True)
        (snapshot / "refs" / "main").write_text(commit)
        files = snapshot / "snapshots" / commit
        files.mkdir(parents=True, exist_ok=True)
        (files / "config.json").write_text(json.dumps(config, indent=2))
        vocab = {"<|endoftext|>": 0, "<|im_start|>": 1, "<|im_end|>": 2, "x": 3}
        tok = PreTrainedTokenizerFast(
            tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="x")),
            eos_token="<|im_end|>",
            pad_token="<|endoftext|>",
        )
        tok.save_pretrained(files)


VLLM_MISSING = "verl's LoRA configuration imports vLLM (verl/third_party/vllm), which needs a GPU to install"


def vllm_missing(exc):
    """Whether `exc` is `verl/third_party/vllm`'s refusal to import without vLLM or SGLang."""
    return isinstance(exc, ValueError) and str(exc).startswith("vllm version None not supported")


def verdict_of(exc):
    # Hydra's instantiate wraps what the config class raised; report that.
    while type(exc).__name__ == "InstantiationException" and exc.__cause__ is not None:
        exc = exc.__cause__
    message = str(exc).strip().splitlines()
    return type(exc).__name__, (message[0] if message else "")


def run_checks(config_name, overrides, verl_root):
    """[step, verdict, exception, message]; verdict is pass, reject or not-run."""
    import transformers

    # verl's model helpers import a class transformers 5 renamed; the checks never use it.
    t = sys.modules["transformers"]
    if not hasattr(t, "AutoModelForVision2Seq"):
        t.AutoModelForVision2Seq = t.AutoModelForImageTextToText
    import peft  # noqa: F401  (imported first: it re-imports transformers)

    t = sys.modules["transformers"]
    if not hasattr(t, "AutoModelForVision2Seq"):
        t.AutoModelForVision2Seq = t.AutoModelForImageTextToText
    del transformers

    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    with initialize_config_dir(config_dir=str(Path(verl_root) / "verl/trainer/config"), version_base=None):
        try:
            config = compose(config_name=config_name, overrides=overrides)
        except Exception as e:  # Hydra rejects the override itself
            return ["hydra compose", "reject", *verdict_of(e)]
    OmegaConf.resolve(config)

    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    use_ref = bool(need_reference_policy(config))
    use_critic = bool(need_critic(config))
    model_path = config.actor_rollout_ref.model.path

    def needs_model(step):
        if model_path not in STAND_INS:
            raise NotRunnable(f"{step} reads the model's files ({model_path}: no offline copy)")

    step = "validate_config"
    try:
        if use_critic:
            needs_model(step)
        validate_config(config, use_reference_policy=use_ref, use_critic=use_critic)
    except NotRunnable as e:
        return [step, "not-run", "", str(e)]
    except Exception as e:
        if not vllm_missing(e):
            return [step, "reject", *verdict_of(e)]
        # The later hand-over check does not need vLLM: a rejection there stands on its own.
        lora = config.actor_rollout_ref.model.get("lora_rank", 0) > 0
        if lora and config.actor_rollout_ref.actor.strategy in ("fsdp", "fsdp2"):
            row = lora_collection(config)
            if row[1] == "reject":
                return [f"{row[0]} ({step} not run: vLLM missing)", *row[1:]]
        return [step, "not-run", "", VLLM_MISSING]

    legacy = config.trainer.get("use_legacy_worker_impl", "auto")
    strategy = config.actor_rollout_ref.actor.strategy
    if legacy not in ("auto", "enable"):
        return ["worker normalisation", "not-run", "", f"use_legacy_worker_impl={legacy}: engine workers not run"]
    if strategy not in ("fsdp", "fsdp2"):
        return ["worker normalisation", "not-run", "", f"{strategy} workers need megatron-core and CUDA"]

    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    n_gpus = config.trainer.n_gpus_per_node * config.trainer.nnodes
    dist.init_process_group(backend="fake", store=FakeStore(), rank=0, world_size=n_gpus)
    os.environ.update(WORLD_SIZE=str(n_gpus), RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT="29500")

    from verl.workers.fsdp_workers import AsyncActorRolloutRefWorker, CriticWorker

    step = "ActorRolloutRefWorker.__init__ (actor_rollout)"
    try:
        actor = AsyncActorRolloutRefWorker(config.actor_rollout_ref.copy(), role="actor_rollout")
        if use_ref:
            step = "ActorRolloutRefWorker.__init__ (ref)"
            AsyncActorRolloutRefWorker(config.actor_rollout_ref.copy(), role="ref")
        if use_critic and config.critic.strategy in ("fsdp", "fsdp2"):
            step = "CriticWorker.__init__"
            from verl.utils.config import omega_conf_to_dataclass

            CriticWorker(omega_conf_to_dataclass(config.critic))
    except Exception as e:
        if vllm_missing(e):
            return [step, "not-run", "", VLLM_MISSING]
        return [step, "reject", *verdict_of(e)]

    sp = config.actor_rollout_ref.actor.get("ulysses_sequence_parallel_size", 1)
    if sp > 1:
        step = "apply_monkey_patch (Ulysses heads)"
        try:
            needs_model(step)
        except NotRunnable as e:
            return [step, "not-run", "", str(e)]
        from transformers import AutoConfig, AutoModelForCausalLM

        from verl.models.transformers.monkey_patch import apply_monkey_patch

        hf_config = AutoConfig.from_pretrained(model_path)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(hf_config)
        try:
            apply_monkey_patch(
                model=model,
                use_remove_padding=config.actor_rollout_ref.model.get("use_remove_padding", False),
                ulysses_sp_size=sp,
            )
        except AssertionError as e:
            return [step, "reject", *verdict_of(e)]
        except Exception as e:  # a patch after the asserts that needs a GPU kernel
            return [step, "not-run", "", f"after the head asserts: {verdict_of(e)}"]
        return [step, "pass", "", ""]
    if actor._is_lora and config.actor_rollout_ref.actor.strategy in ("fsdp", "fsdp2"):
        return lora_collection(config)
    return ["worker normalisation", "pass", "", ""]


def lora_collection(config):
    """The first weight hand-over of a LoRA actor: `rollout_mode` (`fsdp_workers.py`) calls
    `collect_lora_params` with `rollout.layered_summon` and `base_sync_done = "dummy" not in
    rollout.load_format` (set in `init_model`). Its argument checks come before it touches the
    module, so it runs here on an FSDP2-module stand-in (`fsdp_version` is 2) that holds no
    weights: a ValueError from those checks rejects the config; past them, the stand-in has
    nothing to summon and the step passes."""
    from torch.distributed.fsdp import FSDPModule

    from verl.utils.fsdp_utils import collect_lora_params

    import torch

    class StandIn(FSDPModule, torch.nn.Module):
        pass

    # FSDPModule.__new__ builds the class it was mixed into; the stand-in is made directly.
    stand_in = torch.nn.Module.__new__(StandIn)
    torch.nn.Module.__init__(stand_in)
    step = "rollout_mode (collect_lora_params)"
    rollout = config.actor_rollout_ref.rollout
    try:
        collect_lora_params(
            module=stand_in,
            layered_summon=rollout.get("layered_summon", False),
            base_sync_done="dummy" not in rollout.load_format,
        )
    except ValueError as e:
        return [step, "reject", *verdict_of(e)]
    except Exception:
        pass
    return [step, "pass", "", ""]


def child(fixture, verl_root):
    with tempfile.TemporaryDirectory() as hf_home:
        os.environ.update(HF_HOME=hf_home, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        stand_in_cache(hf_home)
        try:
            config_name, overrides = split_hydra(script_command(Path(fixture).read_text()))
            row = run_checks(config_name, overrides, verl_root)
        except NotRunnable as e:
            row = ["launch script", "not-run", "", str(e)]
        except Exception as e:
            traceback.print_exc()
            row = ["harness", "not-run", "", "harness error: " + " ".join(verdict_of(e))]
    print("ROW\t" + json.dumps(row))


def commit_of(verl_root):
    """The commit recorded by the caller (git archive keeps no .git)."""
    return os.environ.get("VERL_COMMIT", "b178a3cd56f58b2d502255daba591e92833930a7")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verl", required=True, help="verl's source tree")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.verl)
        return
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([args.verl, os.environ.get("PYTHONPATH", "")]))
    print("fixture\tverl_commit\tstep\tverdict\texception\tmessage")
    for fixture in sorted(FIXTURES.glob("verl-*/*.sh")):
        out = subprocess.run(
            [sys.executable, __file__, "--verl", args.verl, "--child", str(fixture)],
            capture_output=True,
            text=True,
            env=env,
            cwd=args.verl,
        )
        rows = [line[4:] for line in out.stdout.splitlines() if line.startswith("ROW\t")]
        if rows:
            step, verdict, exc, message = json.loads(rows[-1])
        else:
            tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
            step, verdict, exc, message = "harness", "not-run", "", f"harness crashed: {tail}"
        clean = [s.replace("\t", " ").replace("\n", " ") for s in (step, verdict, exc, message)]
        rel = fixture.relative_to(ROOT).as_posix()
        print("\t".join([rel, commit_of(args.verl)[:12], *clean]), flush=True)


if __name__ == "__main__":
    main()
