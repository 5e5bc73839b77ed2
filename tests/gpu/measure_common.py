"""What measure_peaks.py (transformers Trainer) and measure_trl.py (TRL trainers) share: row selection, the
per-step peak recorder, accelerate's state reset between rows and the environment record."""

import os
import sys
import time

import torch
import transformers
from transformers import TrainerCallback


def select_rows(rows, only, exclude):
    """The rows named in `only` (comma-separated ids, all when empty) minus those in `exclude`."""
    if only:
        wanted = set(only.split(","))
        rows = [r for r in rows if r["id"] in wanted]
    if exclude:
        unwanted = set(exclude.split(","))
        rows = [r for r in rows if r["id"] not in unwanted]
    return rows


class StepPeaks(TrainerCallback):
    """Peak allocated/reserved bytes of each optimizer step (the first one creates the optimizer state);
    `mark` closes a phase inside a step (a GRPO rollout)."""

    def __init__(self, cuda):
        self.cuda = cuda
        self.allocated, self.reserved, self.times = [], [], []
        self.pending_allocated = self.pending_reserved = 0
        self.started = time.perf_counter()

    def mark(self):
        """Peak allocated bytes since the last reset, folded into the current step's peak; resets the counters."""
        if not self.cuda:
            return 0
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        self.pending_allocated = max(self.pending_allocated, peak)
        self.pending_reserved = max(self.pending_reserved, torch.cuda.max_memory_reserved())
        torch.cuda.reset_peak_memory_stats()
        return peak

    def on_step_end(self, args, state, control, **kwargs):
        if self.cuda:
            self.mark()
            self.allocated.append(self.pending_allocated)
            self.reserved.append(self.pending_reserved)
            self.pending_allocated = self.pending_reserved = 0
        now = time.perf_counter()
        self.times.append(now - self.started)
        self.started = now


def reset_accelerate_state():
    try:
        from accelerate.state import AcceleratorState

        AcceleratorState._reset_state()
    except Exception:  # older/newer accelerate: nothing to reset
        pass


def environment(device, packages):
    """Versions of torch, transformers and `packages` (None when missing), and on CUDA the GPU, its
    capacity and the CUDA context's bytes."""
    env = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": sys.version.split()[0],
        "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
    }
    for name in packages:
        try:
            env[name] = __import__(name).__version__
        except Exception:
            env[name] = None
    if device == "cuda":
        torch.cuda.init()
        torch.empty(1, device="cuda")
        free, total = torch.cuda.mem_get_info()
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=props.name, total_bytes=total, cuda_version=torch.version.cuda,
                   context_bytes=total - free - torch.cuda.memory_reserved())
    return env
