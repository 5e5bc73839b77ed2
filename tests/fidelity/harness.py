"""Runs one framework's own start-up code on one fixture and prints its verdict as JSON.

Usage: python harness.py FRAMEWORK FIXTURE

FRAMEWORK is one of: litgpt, trl, trl-trainer, transformers, deepspeed, accelerate, axolotl, torch-alloc.
Prints {"verdict": "raises"|"accepts"|"not-run", "detail": "..."}:
- raises: the framework raised while reading/validating the config (the exception and
  its first line are in detail);
- accepts: the framework's checks passed;
- not-run: the check needs a GPU, a model or the network (detail says why).

Nothing here loads model weights, touches the network or needs a GPU: every framework
entry point is the one the framework runs at start-up, with the heavy steps around it
(checkpoint download, model loading, process launch) replaced by stubs. See README.md.
"""

import json
import os
import re
import sys
import tempfile
import traceback
from pathlib import Path

import yaml


def verdict(kind, detail=""):
    print(json.dumps({"verdict": kind, "detail": detail}))
    sys.exit(0)


def raised(exc):
    """The exception type and its most telling line (pydantic puts the message on line 2)."""
    text = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    telling = next((line for line in text if line.startswith(("Value error,", "Assertion failed,"))), None)
    line = (telling or (text[0] if text else "")).split(" [type=")[0]
    line = re.sub(r"/\S*/site-packages/", "", line)  # no local paths in the table
    return f"{type(exc).__name__}: {line}"[:300]


# --- LitGPT -------------------------------------------------------------------------


def litgpt(fixture: Path):
    """Runs the script's setup() through jsonargparse, as `litgpt <script> --config` does,
    with the checkpoint download and Fabric launch stubbed; the launched main() runs
    validate_args, the batch arithmetic, the LR scheduler construction and the bnb
    optimizer check on a one-parameter model."""
    import torch
    from jsonargparse import CLI

    import litgpt.finetune.adapter as adapter
    import litgpt.finetune.adapter_v2 as adapter_v2
    import litgpt.finetune.full as full
    import litgpt.finetune.lora as lora
    import litgpt.pretrain as pretrain
    from litgpt.config import Config

    text = fixture.read_text()
    head = text.splitlines()[:3]
    script = {"finetune_lora": lora, "finetune_full": full, "finetune_adapter": adapter,
              "finetune_adapter_v2": adapter_v2, "pretrain": pretrain}
    module = next((m for name, m in script.items() if any(f"litgpt {name} " in line for line in head)), lora)

    class Stop(Exception):
        pass

    def checks(devices, num_nodes, train, eval_, config=None, initial_checkpoint_dir=None, resume=None):
        """What main() checks first: validate_args, the batch arithmetic, the scheduler
        (fine-tuning) or the context length (pretrain)."""
        if module is pretrain:
            module.validate_args(train, eval_, initial_checkpoint_dir, resume)
            if config is not None and train.max_seq_length:
                from litgpt.model import GPT

                with torch.device("meta"):
                    GPT(config).max_seq_length = train.max_seq_length
        else:
            module.validate_args(train, eval_)
        train.gradient_accumulation_iters(devices, num_nodes)
        if module is not pretrain:
            optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
            module.get_lr_scheduler(optimizer, warmup_steps=train.lr_warmup_steps, max_steps=1000)
        raise Stop()

    class FakeLogger:
        def log_hyperparams(self, *_args, **_kwargs):
            pass

    class FakeFabric:
        def __init__(self, devices=1, num_nodes=1, **_):
            self.devices, self.num_nodes = devices, num_nodes
            self.global_rank = 0
            self.logger = FakeLogger()

        def print(self, *_args, **_kwargs):
            pass

        def launch(self, main=None, *args, **kwargs):
            if main is None:  # pretrain launches first and calls main() itself
                return
            devices = args[0] if args else self.devices
            train = next(a for a in args if type(a).__name__ == "TrainArgs")
            eval_ = next(a for a in args if type(a).__name__ == "EvalArgs")
            checks(devices, self.num_nodes, train, eval_)

    def fake_bnb(*_args, **_kwargs):
        return None

    module.auto_download_checkpoint = lambda model_name, **_: Path(str(model_name))
    if hasattr(module, "check_valid_checkpoint_dir"):
        module.check_valid_checkpoint_dir = lambda *_a, **_k: None
    script_config = getattr(module, "Config", Config)
    script_config.from_file = classmethod(lambda cls, path, **kw: cls.from_name("pythia-14m", **kw))
    module.L.Fabric = FakeFabric
    if hasattr(module, "BitsandbytesPrecision"):
        module.BitsandbytesPrecision = fake_bnb
    module.choose_logger = lambda *a, **k: None
    if module is pretrain:
        module.main = lambda **kw: checks(kw["devices"], kw.get("num_nodes", 1), kw["train"], kw["eval"],
                                          kw.get("config"), kw.get("initial_checkpoint_dir"), kw.get("resume"))
    # quantize: the optimizer check runs in main() after model setup; call it directly.
    raw = yaml.safe_load(text) or {}
    if str(raw.get("quantize") or "").startswith("bnb.") and "optimizer" in raw:
        from litgpt.utils import instantiate_bnb_optimizer

        try:
            instantiate_bnb_optimizer(raw["optimizer"], [torch.nn.Parameter(torch.zeros(1))])
        except ValueError as exc:
            verdict("raises", raised(exc))
        except ImportError:
            pass  # the check passed; bitsandbytes itself is not installed here
    try:
        CLI(module.setup, args=["--config", str(fixture)])
    except Stop:
        verdict("accepts")
    except SystemExit as exc:
        verdict("raises", f"argument parsing failed (exit {exc.code})")
    except (ValueError, NotImplementedError, AssertionError, KeyError, ZeroDivisionError, TypeError) as exc:
        verdict("raises", raised(exc) or type(exc).__name__)
    verdict("accepts")


# --- transformers / TRL ------------------------------------------------------------------


def training_arguments(fixture: Path, trl: bool):
    """Parses the flat YAML into the dataclasses the CLI uses (TRL: ScriptArguments, the
    command's config, ModelConfig; transformers: TrainingArguments) with use_cpu, and runs
    their __post_init__ checks; then the trainer-level check that needs no model."""
    raw = yaml.safe_load(fixture.read_text()) or {}
    raw.pop("env", None)
    # The CLI forwards unknown keys (num_processes, ...) to `accelerate launch`.
    launcher = {k: raw.pop(k) for k in ["num_processes", "mixed_precision", "accelerate_config"] if k in raw}
    raw["use_cpu"] = True  # no GPU here: bypass the "bf16 needs Ampere" device check only
    if launcher.get("num_processes"):
        os.environ["WORLD_SIZE"] = str(launcher["num_processes"])
    try:
        if trl:
            from transformers import HfArgumentParser
            from trl import DPOConfig, GRPOConfig, ModelConfig, ScriptArguments, SFTConfig

            text = fixture.read_text()
            config = GRPOConfig if ("trl grpo" in text or "num_generations" in raw) else DPOConfig if "trl dpo" in text else SFTConfig
            parser = HfArgumentParser((ScriptArguments, config, ModelConfig))
            _, args, model_args = parser.parse_dict(raw, allow_extra_keys=False)
            if getattr(args, "deepspeed", None) and getattr(args, "hf_deepspeed_config", None):
                mismatches = args.hf_deepspeed_config.mismatches
                if mismatches:
                    verdict("raises", "ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments values: " + "; ".join(mismatches))
            return args, model_args
        from transformers import HfArgumentParser, TrainingArguments

        (args,) = HfArgumentParser(TrainingArguments).parse_dict(raw)
        return args, None
    except (ValueError, TypeError, AssertionError, ImportError) as exc:
        verdict("raises", raised(exc))


def trl_run(fixture: Path):
    args, model_args = training_arguments(fixture, trl=True)
    verdict("accepts")


def transformers_run(fixture: Path):
    training_arguments(fixture, trl=False)
    verdict("accepts")


def tiny_model_dir():
    """A two-layer random Qwen2 model and a word-level tokenizer saved locally, so the
    trainers can load (and re-load, for a reference model) without the network."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    path = Path(tempfile.mkdtemp(prefix="oomlint-tiny-"))
    vocab = {w: i for i, w in enumerate(["<pad>", "<eos>", "<unk>", "hello", "world", "the", "a"])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>", unk_token="<unk>")
    config = Qwen2Config(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=1, intermediate_size=32)
    Qwen2ForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path, tokenizer


def trl_trainer_run(fixture: Path):
    """The config checks, then the trainer's own __init__ (SFTTrainer or GRPOTrainer) on a
    tiny local model and a four-row dataset: TRL's padding-free, packing and
    sync_ref_model checks live there."""
    args, _ = training_arguments(fixture, trl=True)
    from datasets import Dataset

    path, tokenizer = tiny_model_dir()
    args.output_dir = str(path / "out")
    try:
        if type(args).__name__ == "GRPOConfig":
            from trl import GRPOTrainer

            GRPOTrainer(model=str(path), reward_funcs=[lambda completions, **_: [0.0] * len(completions)], args=args,
                        train_dataset=Dataset.from_dict({"prompt": ["hello world"] * 8}), processing_class=tokenizer)
        else:
            from trl import SFTTrainer

            SFTTrainer(model=str(path), args=args, train_dataset=Dataset.from_dict({"text": ["hello world the a"] * 4}),
                       processing_class=tokenizer)
    except (ValueError, NotImplementedError, TypeError) as exc:
        verdict("raises", raised(exc))
    verdict("accepts")


# --- DeepSpeed ---------------------------------------------------------------------------


def deepspeed_run(fixture: Path):
    """DeepSpeedConfig is what deepspeed.initialize builds from the JSON (world size 1)."""
    from deepspeed.runtime.config import DeepSpeedConfig

    try:
        DeepSpeedConfig(str(fixture))
    except (ValueError, AssertionError) as exc:
        verdict("raises", raised(exc))
    except Exception as exc:  # pydantic ValidationError
        verdict("raises", raised(exc))
    verdict("accepts")


# --- accelerate ----------------------------------------------------------------------------


def launch_arguments(script: Path):
    """The arguments after `accelerate launch` in a shell script (line continuations joined),
    with the working directory moved beside the script so its relative paths resolve."""
    import shlex

    words = shlex.split(script.read_text().replace("\\\n", " "), comments=True)
    at = next(i for i in range(len(words) - 1) if words[i] == "accelerate" and words[i + 1] == "launch")
    os.chdir(script.parent)
    return words[at + 2:]


def accelerate_run(fixture: Path):
    """`accelerate launch --config_file FIXTURE train.py` (or, for a shell script, its own
    `accelerate launch` arguments) up to the per-process plugins: config loading, launch
    validation, the multi-GPU environment, then the FSDP or DeepSpeed plugin built from that
    environment, as each process does."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser

    parser = launch_command_parser()
    argv = launch_arguments(fixture) if fixture.suffix == ".sh" else ["--config_file", str(fixture), "train.py"]
    args = parser.parse_args(argv)
    try:
        args, defaults, mp_from_config = _validate_launch_command(args)
    except (ValueError, AssertionError, KeyError) as exc:
        verdict("raises", raised(exc))
    env = {}
    try:
        if args.use_fsdp:
            from accelerate.utils.launch import prepare_multi_gpu_env

            env = prepare_multi_gpu_env(args)
            os.environ.update({k: str(v) for k, v in env.items()})
            from accelerate.utils import FullyShardedDataParallelPlugin

            FullyShardedDataParallelPlugin()
            if env.get("ACCELERATE_USE_PARALLELISM_CONFIG") == "true":
                accelerate_parallelism(args)
        elif args.use_deepspeed:
            fields = list(defaults.deepspeed_config.keys()) if defaults else []
            if mp_from_config:
                fields.append("mixed_precision")
            os.environ["ACCELERATE_CONFIG_DS_FIELDS"] = ",".join(fields).lower()
            from accelerate.utils import DeepSpeedPlugin

            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as ds:
                json.dump({"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}, ds)
            DeepSpeedPlugin(hf_ds_config=ds.name)
    except (ValueError, AssertionError, NotImplementedError) as exc:
        verdict("raises", raised(exc))
    verdict("accepts")


def accelerate_parallelism(args):
    """What `Accelerator.__init__` does with the `PARALLELISM_CONFIG_*` variables the launcher set:
    `ParallelismConfig()` reads them and `_validate_accelerator` checks them against the world size
    (the device mesh, which needs the processes, is not built)."""
    from accelerate.parallelism_config import ParallelismConfig
    from accelerate.utils import DistributedType

    class Processes:
        num_processes = int(args.num_processes)
        multi_device = False
        is_fsdp2 = str(getattr(args, "fsdp_version", "1")) == "2"
        distributed_type = DistributedType.FSDP
        is_main_process = True

    ParallelismConfig()._validate_accelerator(Processes())


# --- Axolotl -------------------------------------------------------------------------------


def axolotl_run(fixture: Path):
    """Axolotl's pydantic validation of the YAML (validate_config), without capabilities."""
    try:
        from axolotl.utils.config import validate_config
        from axolotl.utils.dict import DictDefault
    except Exception as exc:  # noqa: BLE001 - any import failure means "not installable here"
        verdict("not-run", f"axolotl not importable here: {raised(exc)}")
    cfg = DictDefault(yaml.safe_load(fixture.read_text()) or {})
    try:
        validate_config(cfg, capabilities={"bf16": True, "n_gpu": 1, "compute_capability": "sm_90", "fp8": False},
                        env_capabilities={"torch_version": "2.8.0"})
    except (ValueError, TypeError) as exc:
        verdict("raises", raised(exc))
    except Exception as exc:  # pydantic ValidationError
        verdict("raises", raised(exc))
    verdict("accepts")


# --- PyTorch allocator ----------------------------------------------------------------------


def torch_alloc_run(fixture: Path):
    """Feeds each allocator variable's value to PyTorch's own parser
    (torch._C._accelerator_setAllocatorSettings, what PYTORCH_ALLOC_CONF goes through)."""
    import torch

    values = []
    for line in fixture.read_text().splitlines():
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export "):]
        for name in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
            if line.startswith(name + "="):
                values.append(line.split("=", 1)[1].strip().strip("'\""))
    if not values:
        verdict("not-run", "no allocator variable in the file")
    for value in values:
        if "backend:" in value:
            verdict("not-run", "backend is chosen when CUDA loads; needs a GPU process")
        try:
            torch._C._accelerator_setAllocatorSettings(value)
        except (ValueError, RuntimeError) as exc:
            verdict("raises", raised(exc))
    verdict("accepts")


RUNNERS = {
    "litgpt": litgpt,
    "trl": trl_run,
    "trl-trainer": trl_trainer_run,
    "transformers": transformers_run,
    "deepspeed": deepspeed_run,
    "accelerate": accelerate_run,
    "axolotl": axolotl_run,
    "torch-alloc": torch_alloc_run,
}

if __name__ == "__main__":
    framework, path = sys.argv[1], Path(sys.argv[2])
    try:
        RUNNERS[framework](path)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - report, never crash the driver
        verdict("not-run", "harness error: " + raised(exc) + " | " + traceback.format_exc().splitlines()[-1][:200])
