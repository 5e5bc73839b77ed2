"""Measure the real peak GPU memory of TRL's SFTTrainer, DPOTrainer and GRPOTrainer for the rows in grid_trl.json.

Each row builds a randomly initialised model from the Hugging Face config shapes in the grid's `models_from` file
(no weights, no network), gives it a small offline word-level tokenizer sized to the model's vocabulary, and runs a
few optimizer steps of the TRL trainer on fixed-length random tokens:

- sft:  pre-tokenized `input_ids` samples of `seq` tokens (packing and padding-free off), LoRA through `peft_config`;
- dpo:  pre-tokenized `prompt_ids`/`chosen_ids`/`rejected_ids` (DPOTrainer's own tokenization is skipped); LoRA rows
        take the reference from the disabled adapters, full rows get a separate random reference model;
- grpo: text prompts of `prompt_len` words, HF `generate` (no vLLM) of exactly `completion_len` tokens, a toy reward;
        full rows with `beta > 0` let TRL load the reference model from a saved copy of the policy, as it does
        for a model id.

A row with `quant` (`nf4`, `nf4-dq`, `int8`) is loaded the way `trl sft --load_in_4bit|--load_in_8bit --use_peft`
loads it: the random-init model is saved once per model and dtype (safetensors, in the run's temporary directory, not
counted), then TRL's `create_model_from_path` loads it with the `BitsAndBytesConfig` of TRL's
`get_quantization_config` (`bnb_4bit_compute_dtype` = the row's dtype, nf4, double quantization for `nf4-dq`).

It records what `torch.cuda.max_memory_allocated()` / `max_memory_reserved()` report, relative to the memory held
before the row started: after building the model, after building the trainer (adapters, reference model), for each
optimizer step and, for GRPO, for each rollout (generation, rewards, reference log-probs). One CSV line per row is
written as it goes; the exact config kwargs go in the `config` column, and the full resolved config of each row in
a JSON-lines file beside the CSV.

    python3 tests/gpu/measure_trl.py --grid tests/gpu/grid_trl.json --out DIR [--budget-s 180] [--only ID,..]
    python3 tests/gpu/measure_trl.py --grid tests/gpu/grid_trl.json --out DIR --dry-run-cpu   # plumbing check

`--dry-run-cpu` shrinks every model to two tiny layers and a 1000-token vocabulary, and the sequences to a few
dozen tokens, and runs on the CPU with no memory figures: it only proves that every row's configuration is accepted
by TRL/transformers/PEFT before spending GPU time.
"""

import argparse
import csv
import gc
import json
import os
import tempfile
import time
import traceback

import torch
from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedTokenizerFast

from measure_common import StepPeaks, environment, reset_accelerate_state, select_rows

FIELDS = [
    "id", "trainer", "model", "method", "quant", "lora_r", "lora_targets", "lora_dropout", "batch", "seq", "prompt_len",
    "completion_len", "num_generations", "beta", "loss_type", "ga", "ckpt", "optim", "dtype", "bf16", "attn", "steps",
    "status", "baseline_bytes", "weights_bytes", "load_peak_bytes", "trainer_bytes", "init_peak_bytes",
    "step1_peak_bytes", "steady_peak_bytes", "rollout_peak_bytes", "allocated_peak_bytes", "reserved_peak_bytes",
    "step_peaks_bytes", "step_reserved_bytes", "rollout_peaks_bytes", "trainable_params", "total_params",
    "param_dtype_bytes", "trainable_dtype_bytes", "attn_effective", "seconds_per_step", "config", "error",
]
# Config values read back from the trainer's args after construction (TRL resolves some of them).
RESOLVED = [
    "per_device_train_batch_size", "gradient_accumulation_steps", "gradient_checkpointing",
    "gradient_checkpointing_kwargs", "bf16", "optim", "max_length", "packing", "padding_free", "loss_type",
    "beta", "num_generations", "generation_batch_size", "steps_per_generation", "max_completion_length",
    "precompute_ref_log_probs", "use_vllm", "generation_kwargs", "num_iterations", "disable_dropout",
    "cast_lm_head_to_fp32", "use_liger_kernel", "activation_offloading",
]

GIB = 1024**3
SPECIAL = ["<pad>", "</s>", "<unk>"]  # ids 0, 1, 2; random tokens are drawn above them


def build_tokenizer(vocab_size):
    """A word-level tokenizer over `t3 .. t{vocab_size-1}`: one whitespace-separated word is one token."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {tok: i for i, tok in enumerate(SPECIAL)}
    vocab.update({f"t{i}": i for i in range(len(SPECIAL), vocab_size)})
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")


def model_config(spec, dry_run):
    config = dict(spec["config"])
    if dry_run:
        config.update(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, vocab_size=min(config.get("vocab_size", 1000), 1000))
        config.pop("layer_types", None)
    config.update(pad_token_id=0, eos_token_id=1, bos_token_id=None)
    model_type = config.pop("model_type")
    return AutoConfig.for_model(model_type, **config)


def build_model(cfg, row, device):
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=getattr(torch, row["dtype"]),
                                                 attn_implementation=row["attn"])
    return model.to(device)


def quantization_config(row):
    """The `BitsAndBytesConfig` that TRL's `get_quantization_config` builds for the row's `quant` (None without one)."""
    quant = row.get("quant") or ""
    if not quant:
        return None
    from transformers import BitsAndBytesConfig

    if quant in ("nf4", "nf4-dq"):
        return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=row["dtype"], bnb_4bit_quant_type="nf4",
                                  bnb_4bit_use_double_quant=quant == "nf4-dq", bnb_4bit_quant_storage=None)
    if quant == "int8":
        return BitsAndBytesConfig(load_in_8bit=True)
    raise ValueError(f"unknown quant {quant!r}")


def saved_model(cfg, row, device, workdir, saved):
    """The directory of a saved random-init copy of the row's model (built on `device`, saved once per model/dtype)."""
    key = f"{row['model']}-{row['dtype']}"
    if key not in saved:
        path = os.path.join(workdir, "models", key)
        model = build_model(cfg, row, device)
        model.save_pretrained(path)
        del model
        saved[key] = path
    return saved[key]


def load_quantized(path, row):
    """Load a saved model as TRL's sft script does with `--load_in_4bit`/`--load_in_8bit` (device_map "auto" on GPU)."""
    from trl.trainer.utils import create_model_from_path

    return create_model_from_path(path, dtype=row["dtype"], attn_implementation=row["attn"], revision=None,
                                  trust_remote_code=False, quantization_config=quantization_config(row))


def dtype_bytes(params):
    """`dtype=bytes;...` over the given parameters (a 4-bit weight counts its packed uint8 storage)."""
    sizes = {}
    for p in params:
        name = str(p.dtype).removeprefix("torch.")
        sizes[name] = sizes.get(name, 0) + p.numel() * p.element_size()
    return ";".join(f"{k}={v}" for k, v in sorted(sizes.items()))


def lora_config(row):
    if row["method"] != "lora":
        return None
    from peft import LoraConfig

    targets = row["lora_targets"]
    targets = targets if targets == "all-linear" else targets.split(",")
    return LoraConfig(r=row["lora_r"], lora_alpha=2 * row["lora_r"], lora_dropout=row["lora_dropout"],
                      target_modules=targets, task_type="CAUSAL_LM")


def random_ids(gen, n, length, vocab):
    return torch.randint(len(SPECIAL), vocab, (n, length), generator=gen).tolist()


def common_args(row, cuda, workdir):
    """The TrainingArguments part of every row's config, TRL's own defaults made explicit where they matter."""
    return dict(
        output_dir=os.path.join(workdir, "out"), per_device_train_batch_size=row["batch"],
        gradient_accumulation_steps=row["ga"], max_steps=row["steps"], learning_rate=1e-5,
        lr_scheduler_type="constant", warmup_steps=0, bf16=bool(row["bf16"]) and cuda,
        gradient_checkpointing=bool(row["ckpt"]), optim=row["optim"], report_to="none", save_strategy="no",
        logging_strategy="no", disable_tqdm=True, dataloader_num_workers=0, dataloader_pin_memory=False,
        use_cpu=not cuda, seed=0,
    )


def sft_trainer(row, model, tokenizer, vocab, cuda, workdir, callbacks):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    gen = torch.Generator().manual_seed(0)
    n = row["batch"] * row["ga"] * row["steps"]
    data = Dataset.from_dict({"input_ids": random_ids(gen, n, row["seq"], vocab)})
    kwargs = common_args(row, cuda, workdir)
    kwargs.update(max_length=row["seq"], packing=False, padding_free=False)
    if row.get("loss_type"):
        kwargs["loss_type"] = row["loss_type"]
    args = SFTConfig(**kwargs)
    trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tokenizer,
                         peft_config=lora_config(row), callbacks=callbacks)
    return trainer, kwargs


def dpo_trainer(row, model, tokenizer, vocab, cuda, workdir, callbacks, cfg, device):
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    class PreTokenizedDPOTrainer(DPOTrainer):
        """DPOTrainer on a dataset that already holds `prompt_ids`/`chosen_ids`/`rejected_ids`."""

        def _prepare_dataset(self, dataset, *args, **kwargs):
            return dataset

    gen = torch.Generator().manual_seed(0)
    n = row["batch"] * row["ga"] * row["steps"]
    data = Dataset.from_dict({
        "prompt_ids": random_ids(gen, n, row["prompt_len"], vocab),
        "chosen_ids": random_ids(gen, n, row["completion_len"], vocab),
        "rejected_ids": random_ids(gen, n, row["completion_len"], vocab),
    })
    kwargs = common_args(row, cuda, workdir)
    kwargs.update(max_length=row["prompt_len"] + row["completion_len"], beta=row["beta"],
                  precompute_ref_log_probs=False, padding_free=False)
    args = DPOConfig(**kwargs)
    ref_model = None if row["method"] == "lora" else build_model(cfg, row, device)
    trainer = PreTokenizedDPOTrainer(model=model, ref_model=ref_model, args=args, train_dataset=data,
                                     processing_class=tokenizer, peft_config=lora_config(row), callbacks=callbacks)
    return trainer, kwargs


def toy_reward(completions, **kwargs):
    return [float(c.count("t1")) for c in completions]


def grpo_trainer(row, model, tokenizer, vocab, cuda, workdir, callbacks):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    if row["method"] == "full" and row["beta"] > 0:
        # TRL builds the reference of a full model from its model id: give it a saved copy of the random policy.
        path = os.path.join(workdir, "policy")
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)
        model.config._name_or_path = path
    gen = torch.Generator().manual_seed(0)
    prompts = [" ".join(f"t{i}" for i in ids) for ids in random_ids(gen, 8, row["prompt_len"], vocab)]
    data = Dataset.from_dict({"prompt": prompts})
    kwargs = common_args(row, cuda, workdir)
    kwargs.update(num_generations=row["num_generations"], max_completion_length=row["completion_len"],
                  beta=row["beta"], use_vllm=False, generation_kwargs={"min_new_tokens": row["completion_len"]})
    args = GRPOConfig(**kwargs)
    trainer = GRPOTrainer(model=model, reward_funcs=toy_reward, args=args, train_dataset=data,
                          processing_class=tokenizer, peft_config=lora_config(row), callbacks=callbacks)
    return trainer, kwargs


def watch_rollouts(trainer, peaks):
    """Wrap GRPO's rollout so that its peak (generation, rewards, reference log-probs) is recorded on its own."""
    original = trainer._generate_and_score_completions
    rollouts = []

    def wrapped(*args, **kwargs):
        peaks.mark()
        out = original(*args, **kwargs)
        rollouts.append(peaks.mark())
        return out

    trainer._generate_and_score_completions = wrapped
    return rollouts


def resolved_config(args):
    return {k: getattr(args, k) for k in RESOLVED if hasattr(args, k)}


def memory_baseline(cuda):
    """Free what can be freed, reset the peak counters and return the bytes still allocated."""
    gc.collect()
    if not cuda:
        return 0
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return torch.cuda.memory_allocated()


def run_row(row, models, device, dry_run, workdir, saved):
    cuda = device == "cuda"
    result = {k: row.get(k, "") for k in FIELDS}
    result["status"] = "ok"
    full_config = None
    baseline = memory_baseline(cuda)
    result["baseline_bytes"] = baseline
    model = trainer = None
    try:
        cfg = model_config(models[row["model"]], dry_run)
        vocab = cfg.vocab_size
        tokenizer = build_tokenizer(vocab)
        if row.get("quant"):
            path = saved_model(cfg, row, device, workdir, saved)
            baseline = memory_baseline(cuda)  # the saved copy is not part of the row
            result["baseline_bytes"] = baseline
            model = load_quantized(path, row)
        else:
            model = build_model(cfg, row, device)
        result["attn_effective"] = getattr(model.config, "_attn_implementation", "")
        if cuda:
            torch.cuda.synchronize()
            result["weights_bytes"] = torch.cuda.memory_allocated() - baseline
            result["load_peak_bytes"] = torch.cuda.max_memory_allocated() - baseline
            torch.cuda.reset_peak_memory_stats()
        reset_accelerate_state()
        peaks = StepPeaks(cuda)
        with tempfile.TemporaryDirectory(dir=workdir) as rowdir:
            if row["trainer"] == "sft":
                trainer, kwargs = sft_trainer(row, model, tokenizer, vocab, cuda, rowdir, [peaks])
            elif row["trainer"] == "dpo":
                trainer, kwargs = dpo_trainer(row, model, tokenizer, vocab, cuda, rowdir, [peaks], cfg, device)
            elif row["trainer"] == "grpo":
                trainer, kwargs = grpo_trainer(row, model, tokenizer, vocab, cuda, rowdir, [peaks])
            else:
                raise ValueError(f"unknown trainer {row['trainer']!r}")
            kwargs = {k: v for k, v in kwargs.items() if k != "output_dir"}
            result["config"] = json.dumps(kwargs, sort_keys=True)
            full_config = {"id": row["id"], "kwargs": kwargs, "resolved": resolved_config(trainer.args),
                           "args": json.loads(trainer.args.to_json_string())}
            policy = trainer.model
            result["total_params"] = sum(p.numel() for p in policy.parameters())
            result["trainable_params"] = sum(p.numel() for p in policy.parameters() if p.requires_grad)
            result["param_dtype_bytes"] = dtype_bytes(policy.parameters())
            result["trainable_dtype_bytes"] = dtype_bytes(p for p in policy.parameters() if p.requires_grad)
            rollouts = watch_rollouts(trainer, peaks) if row["trainer"] == "grpo" else []
            if cuda:
                torch.cuda.synchronize()
                result["trainer_bytes"] = torch.cuda.memory_allocated() - baseline
                result["init_peak_bytes"] = torch.cuda.max_memory_allocated() - baseline
                torch.cuda.reset_peak_memory_stats()
            peaks.started = time.perf_counter()
            trainer.train()
        if cuda:
            allocated = [a - baseline for a in peaks.allocated]
            result["step1_peak_bytes"] = allocated[0]
            result["steady_peak_bytes"] = max(allocated[1:]) if len(allocated) > 1 else ""
            result["allocated_peak_bytes"] = max([result["load_peak_bytes"], result["init_peak_bytes"]] + allocated)
            result["reserved_peak_bytes"] = max(peaks.reserved)
            result["step_peaks_bytes"] = ";".join(map(str, allocated))
            result["step_reserved_bytes"] = ";".join(map(str, peaks.reserved))
            if rollouts:
                result["rollout_peaks_bytes"] = ";".join(str(r - baseline) for r in rollouts)
                result["rollout_peak_bytes"] = max(rollouts) - baseline
        result["seconds_per_step"] = round(sum(peaks.times[1:]) / max(1, len(peaks.times) - 1), 3)
    except torch.OutOfMemoryError as e:
        result["status"] = "oom"
        result["error"] = str(e).splitlines()[0][:300]
        if cuda:
            result["allocated_peak_bytes"] = torch.cuda.max_memory_allocated() - baseline
            result["reserved_peak_bytes"] = torch.cuda.max_memory_reserved()
    except Exception as e:  # a row that TRL rejects: record it, go on with the next
        result["status"] = "error"
        result["error"] = f"{type(e).__name__}: {e}".replace("\n", " ")[:300]
        traceback.print_exc()
    finally:
        del trainer, model
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
    return result, full_config


def load_grid(path):
    grid = json.load(open(path))
    models_path = os.path.join(os.path.dirname(os.path.abspath(path)), grid["models_from"])
    models = json.load(open(models_path))["models"]
    rows = [{**grid.get("defaults", {}), **row} for row in grid["rows"]]
    return models, rows


def shrink(row):
    """The dry-run row: a few dozen tokens, batch and generations kept (they are part of what TRL validates)."""
    small = {**row}
    for key, size in (("seq", 32), ("prompt_len", 16), ("completion_len", 16)):
        if key in small:
            small[key] = size
    return small


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--csv", default="peaks_trl.csv")
    parser.add_argument("--budget-s", type=float, default=180)
    parser.add_argument("--only", default="", help="comma-separated row ids to run")
    parser.add_argument("--exclude", default="", help="comma-separated row ids to leave out")
    parser.add_argument("--dry-run-cpu", action="store_true")
    opts = parser.parse_args()

    models, rows = load_grid(opts.grid)
    rows = select_rows(rows, opts.only, opts.exclude)
    device = "cpu" if opts.dry_run_cpu else "cuda"
    os.makedirs(opts.out, exist_ok=True)
    env = environment(device, (
        "trl", "peft", "accelerate", "bitsandbytes", "datasets", "tokenizers", "pyarrow", "pandas", "fsspec", "dill",
        "multiprocess",
    ))
    print(json.dumps(env), flush=True)
    stem = os.path.join(opts.out, opts.csv.removesuffix(".csv"))
    with open(stem + ".env.json", "w") as f:
        json.dump(env, f, indent=1)

    started = time.perf_counter()
    saved = {}  # model/dtype -> saved random-init copy for the quantized rows
    with open(stem + ".csv", "w", newline="") as f, open(stem + ".args.jsonl", "w") as args_file, \
            tempfile.TemporaryDirectory() as workdir:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for row in rows:
            if time.perf_counter() - started > opts.budget_s:
                writer.writerow({**{k: row.get(k, "") for k in FIELDS}, "status": "skipped", "error": "time budget"})
                f.flush()
                continue
            if opts.dry_run_cpu:
                row = shrink(row)
            t0 = time.perf_counter()
            result, full_config = run_row(row, models, device, opts.dry_run_cpu, workdir, saved)
            writer.writerow(result)
            f.flush()
            if full_config is not None:
                args_file.write(json.dumps(full_config, default=str) + "\n")
                args_file.flush()
            peak = result.get("allocated_peak_bytes") or 0
            print(f"{row['id']:<52} {result['status']:<6} {peak / GIB:7.2f} GiB  {time.perf_counter() - t0:5.1f} s",
                  flush=True)


if __name__ == "__main__":
    main()
