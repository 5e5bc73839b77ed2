"""Measure the real peak GPU memory of Hugging Face Trainer steps for the configs in grid.json.

Each row builds a randomly initialised model from the Hugging Face config in the grid (no weights, no
network), optionally wraps it with PEFT LoRA, and runs three optimizer steps of `transformers.Trainer` on
random tokens (labels = inputs, the causal-LM loss path TRL's SFTTrainer also takes). It records what
`torch.cuda.max_memory_allocated()` / `max_memory_reserved()` report, relative to the memory held before
the row started, for the model build and for each step, and writes one CSV line per row as it goes.

    python3 tests/gpu/measure_peaks.py --grid tests/gpu/grid.json --out DIR [--budget-s 360] [--only ID,..] [--exclude ID,..]
    python3 tests/gpu/measure_peaks.py --grid tests/gpu/grid.json --out DIR --dry-run-cpu   # plumbing check

`--dry-run-cpu` shrinks every model to two tiny layers and runs on the CPU with no memory figures: it
only proves that every row's configuration is accepted by transformers/PEFT before spending GPU time.
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
from transformers import AutoConfig, AutoModelForCausalLM, Trainer, TrainingArguments

from measure_common import StepPeaks, environment, reset_accelerate_state, select_rows

FIELDS = [
    "id", "model", "method", "lora_r", "lora_targets", "lora_dropout", "batch", "seq", "ga", "ckpt", "optim",
    "dtype", "bf16", "attn", "status", "baseline_bytes", "weights_bytes", "load_peak_bytes", "step1_peak_bytes",
    "steady_peak_bytes", "allocated_peak_bytes", "reserved_peak_bytes", "trainable_params", "total_params",
    "attn_effective", "seconds_per_step", "error",
]

GIB = 1024**3


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, n, seq, vocab):
        gen = torch.Generator().manual_seed(0)
        self.tokens = torch.randint(0, vocab, (n, seq), generator=gen)

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, i):
        return {"input_ids": self.tokens[i], "labels": self.tokens[i]}


def build_model(spec, row, device, dry_run):
    config = dict(spec["config"])
    if dry_run:
        config.update(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, vocab_size=min(config.get("vocab_size", 1000), 1000))
        config.pop("layer_types", None)
        config.update(pad_token_id=None, bos_token_id=None, eos_token_id=None)
    model_type = config.pop("model_type")
    cfg = AutoConfig.for_model(model_type, **config)
    dtype = getattr(torch, row["dtype"])
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=row["attn"])
    model.to(device)
    if row["method"] == "lora":
        from peft import LoraConfig, get_peft_model

        targets = row["lora_targets"]
        targets = targets if targets == "all-linear" else targets.split(",")
        lora = LoraConfig(r=row["lora_r"], lora_alpha=2 * row["lora_r"], lora_dropout=row["lora_dropout"],
                          target_modules=targets, task_type="CAUSAL_LM")
        model = get_peft_model(model, lora)
        if row["ckpt"]:
            # What TRL's SFTTrainer and peft's prepare_model_for_kbit_training do for reentrant checkpointing.
            model.enable_input_require_grads()
    return model, cfg.vocab_size


def run_row(row, models, device, dry_run, workdir):
    cuda = device == "cuda"
    result = {k: row.get(k, "") for k in FIELDS}
    result["status"] = "ok"
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        baseline = torch.cuda.memory_allocated()
    else:
        baseline = 0
    result["baseline_bytes"] = baseline
    model = trainer = None
    try:
        model, vocab = build_model(models[row["model"]], row, device, dry_run)
        result["total_params"] = sum(p.numel() for p in model.parameters())
        result["trainable_params"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
        inner = model.get_base_model() if hasattr(model, "get_base_model") else model
        result["attn_effective"] = getattr(inner.config, "_attn_implementation", "")
        if cuda:
            torch.cuda.synchronize()
            result["weights_bytes"] = torch.cuda.memory_allocated() - baseline
            result["load_peak_bytes"] = torch.cuda.max_memory_allocated() - baseline
            torch.cuda.reset_peak_memory_stats()
        steps = 3
        data = RandomTokens(row["batch"] * row["ga"] * steps, row["seq"], vocab)
        reset_accelerate_state()
        args = TrainingArguments(
            output_dir=workdir, per_device_train_batch_size=row["batch"], gradient_accumulation_steps=row["ga"],
            max_steps=steps, learning_rate=1e-5, lr_scheduler_type="constant", warmup_steps=0,
            bf16=bool(row["bf16"]) and cuda, gradient_checkpointing=bool(row["ckpt"]), optim=row["optim"],
            report_to="none", save_strategy="no", logging_strategy="no", disable_tqdm=True,
            remove_unused_columns=False, dataloader_num_workers=0, dataloader_pin_memory=False,
            use_cpu=not cuda, seed=0,
        )
        peaks = StepPeaks(cuda)
        trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=[peaks])
        trainer.train()
        if cuda:
            result["step1_peak_bytes"] = peaks.allocated[0] - baseline
            result["steady_peak_bytes"] = max(peaks.allocated[1:]) - baseline
            result["allocated_peak_bytes"] = max([result["load_peak_bytes"]] + [a - baseline for a in peaks.allocated])
            result["reserved_peak_bytes"] = max(peaks.reserved)
        result["seconds_per_step"] = round(sum(peaks.times[1:]) / max(1, len(peaks.times) - 1), 3)
    except torch.OutOfMemoryError as e:
        result["status"] = "oom"
        result["error"] = str(e).splitlines()[0][:300]
        if cuda:
            result["allocated_peak_bytes"] = torch.cuda.max_memory_allocated() - baseline
            result["reserved_peak_bytes"] = torch.cuda.max_memory_reserved()
    except Exception as e:  # a row that transformers rejects: record it, go on with the next
        result["status"] = "error"
        result["error"] = f"{type(e).__name__}: {e}".replace("\n", " ")[:300]
        traceback.print_exc()
    finally:
        del trainer, model
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--csv", default="peaks.csv")
    parser.add_argument("--budget-s", type=float, default=360)
    parser.add_argument("--only", default="", help="comma-separated row ids to run")
    parser.add_argument("--exclude", default="", help="comma-separated row ids to leave out")
    parser.add_argument("--dry-run-cpu", action="store_true")
    opts = parser.parse_args()

    grid = json.load(open(opts.grid))
    rows = select_rows(grid["rows"], opts.only, opts.exclude)
    device = "cpu" if opts.dry_run_cpu else "cuda"
    os.makedirs(opts.out, exist_ok=True)
    env = environment(device, ("peft", "accelerate"))
    print(json.dumps(env), flush=True)
    with open(os.path.join(opts.out, opts.csv.replace(".csv", ".env.json")), "w") as f:
        json.dump(env, f, indent=1)

    started = time.perf_counter()
    with open(os.path.join(opts.out, opts.csv), "w", newline="") as f, tempfile.TemporaryDirectory() as workdir:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for row in rows:
            if time.perf_counter() - started > opts.budget_s:
                writer.writerow({**{k: row.get(k, "") for k in FIELDS}, "status": "skipped", "error": "time budget"})
                continue
            if opts.dry_run_cpu:
                row = {**row, "batch": 1, "seq": 32}
            t0 = time.perf_counter()
            result = run_row(row, grid["models"], device, opts.dry_run_cpu, workdir)
            writer.writerow(result)
            f.flush()
            peak = result.get("allocated_peak_bytes") or 0
            print(f"{row['id']:<28} {result['status']:<6} {peak / GIB:7.2f} GiB  {time.perf_counter() - t0:5.1f} s",
                  flush=True)


if __name__ == "__main__":
    main()
