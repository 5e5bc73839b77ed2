"""Peak memory of one FSDP2 rank, simulated on the CPU: the oracle behind `fsdp2_oracle.csv`.

One training step of a Hugging Face causal LM built from a catalog model's config (random
weights, nothing downloaded) runs under `FakeTensorMode` (tensors carry shapes and dtypes, no
data) on a fake process group of `--world` ranks, as rank 0. PyTorch's `FSDPMemTracker`
(`torch/distributed/_tools/fsdp2_mem_tracker.py`) records the peak of live tensor bytes and
splits it by kind (sharded/unsharded params and grads, all-gather and reduce-scatter buffers,
activations, temporaries, optimizer state). That is what `torch.cuda.max_memory_allocated()`
reports on a GPU, without the CUDA context, allocator rounding and fragmentation.

The approach follows torchtitan's `scripts/estimate/estimation.py` (pytorch/torchtitan):
`FakeStore` + `init_process_group("fake")`, the model built and sharded under
`FakeTensorMode`, `FSDPMemTracker(mod, optm)` around the training steps. Differences:
- torchtitan's script puts the model on `cuda` and reads `torch.cuda.memory_stats()`; here the
  device mesh and the model are on `cpu` (FSDP2 supports a CPU mesh; the fake process group
  answers every collective without communicating), so no CUDA device or driver is needed;
- the model is a transformers `AutoModelForCausalLM` and the loss is its own (labels = inputs,
  logits upcast to fp32 for the cross-entropy), as the Hugging Face Trainer and TRL compute it;
  the model output is dropped before backward, as `Trainer.compute_loss` returns only the loss;
- one warm-up step creates the optimizer state outside the tracker; the tracked step is the
  steady state (the tracker registers the existing shards, gradients and optimizer state when
  entered).

Sharding (FSDP2 defaults, `torch.distributed.fsdp.fully_shard`): one `fully_shard` per decoder
layer, then the root (embedding, final norm, head); `reshard_after_forward=True` (the root keeps
its parameters gathered between forward and backward, as FSDP2 does for the root).
Precision: the model is built in bf16 and sharded without a `MixedPrecisionPolicy` (pure bf16:
bf16 shards, gathers, gradients and AdamW moments), as torchtune's distributed recipes and a
Hugging Face Trainer run with `bf16=False` on a bf16-loaded model do. SDPA attention, torch
AdamW (foreach), `zero_grad(set_to_none=True)`. Activation checkpointing: transformers'
`gradient_checkpointing_enable(use_reentrant=False)`, one checkpoint per decoder layer (what
accelerate's `fsdp_activation_checkpointing` and torchtitan's full AC also checkpoint).

Prints one JSON line. Usage:
    python tests/estimator/fsdp2_oracle.py --model Qwen2.5-0.5B --world 4 --batch 1 --seq 1024 [--ac]
    [--show-modules]   # also print each FSDP module's peak (proof the tracker runs on the CPU)
"""
import argparse
import json
import os
import sys

import torch
import torch.distributed as dist
import transformers
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.distributed._tools.fsdp2_mem_tracker import FSDPMemTracker, _FSDPModState
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule, fully_shard
from torch.testing._internal.distributed.fake_pg import FakeStore

# The shapes of the catalog rows (server/oomlint-core/data/catalog/qwen.tsv), as the models'
# config.json files on the Hugging Face Hub state them.
QWEN25 = dict(model_type="qwen2", vocab_size=151936, tie_word_embeddings=True, rope_theta=1000000.0,
              rms_norm_eps=1e-6, max_position_embeddings=32768, hidden_act="silu")
MODELS = {
    "Qwen2.5-0.5B": dict(QWEN25, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                         num_attention_heads=14, num_key_value_heads=2),
    "Qwen2.5-1.5B": dict(QWEN25, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                         num_attention_heads=12, num_key_value_heads=2),
    "Qwen2.5-3B": dict(QWEN25, hidden_size=2048, intermediate_size=11008, num_hidden_layers=36,
                       num_attention_heads=16, num_key_value_heads=2),
}


def show_modules(tracker):
    """Each FSDP module's peak total in forward and backward (MiB), as the tracker recorded it."""
    for stats in tracker.memory_tracking.values():
        peaks = []
        for state in (_FSDPModState.PEAK_FW, _FSDPModState.PEAK_BW):
            snaps = stats.snapshots.get(state, [])
            peaks.append(max((sum(dev["Total"] for dev in snap.values()) for snap in snaps), default=0) / 2**20)
        print(f"{stats.mod_fqn:<45} peak forward {peaks[0]:9.1f} MiB  peak backward {peaks[1]:9.1f} MiB")
    snap = tracker.get_tracker_snapshot("peak")
    for dev, kinds in snap.items():
        print(f"peak on {dev}: " + ", ".join(f"{str(k).split('.')[-1]} {v / 2**20:.1f}" for k, v in kinds.items()) + " MiB")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True, choices=sorted(MODELS))
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--ac", action="store_true", help="activation checkpointing per decoder layer")
    p.add_argument("--show-modules", action="store_true")
    a = p.parse_args()

    dist.init_process_group("fake", rank=0, world_size=a.world, store=FakeStore())
    mesh = init_device_mesh("cpu", (a.world,))  # outside fake mode, as torchtitan builds its mesh
    config = transformers.AutoConfig.for_model(**MODELS[a.model])
    with FakeTensorMode():
        with torch.device("cpu"):
            model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="sdpa",
                                                                  dtype=torch.bfloat16)
        model.config.use_cache = False
        if a.ac:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.train()
        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh, reshard_after_forward=True)
        fully_shard(model, mesh=mesh, reshard_after_forward=True)
        assert isinstance(model, FSDPModule)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=True)
        ids = torch.randint(0, config.vocab_size, (a.batch, a.seq), device="cpu")

        def step():
            loss = model(input_ids=ids, labels=ids).loss  # the output (logits) dies here
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        step()  # creates the optimizer state
        tracker = FSDPMemTracker(mod=model, optm=opt)
        tracker.track_inputs((ids,))
        with tracker:
            step()
        peak = tracker.get_tracker_snapshot("peak")
        if a.show_modules:
            show_modules(tracker)
    devices = [d for d in peak if str(d).startswith("cpu")]
    total = sum(peak[d]["Total"] for d in devices)
    by_kind = {str(k): v for d in devices for k, v in peak[d].items() if k != "Total"}
    n_params = sum(q.numel() for q in model.parameters())  # DTensor numel: the full parameter
    print(json.dumps({
        "model": a.model, "world": a.world, "ac": a.ac, "batch": a.batch, "seq": a.seq,
        "params": n_params, "peak_bytes": total, "by_kind": by_kind,
        "torch": torch.__version__, "transformers": transformers.__version__,
    }))
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
