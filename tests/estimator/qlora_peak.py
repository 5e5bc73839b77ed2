"""Peak allocated bytes of a steady-state LitGPT QLoRA step, simulated on CPU like
../shared/oracle/litgpt_peak.py (FakeTensorMode + MemTracker, bf16-true, lm_head_chunk_size=128, chunked
cross-entropy), with bitsandbytes' MatMul4Bit emulated on every frozen linear: it keeps its input on
`ctx.tensors` (bitsandbytes < 0.43.2, --keeps-input) or nothing (0.43.2 on). Weights stay bf16 here; only
what autograd keeps differs. The previous step's `logits` stays referenced into the measured step, as in
LitGPT's loop. Run with the oracle's virtual environment (see tests/estimator/oracle_litgpt_qlora.csv)."""
import argparse, json, types
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.distributed._tools.mem_tracker import MemTracker


class _NoHook:
    def remove(self):
        pass


class MatMul4Bit(torch.autograd.Function):
    keeps_input = False

    @staticmethod
    def forward(ctx, A, W):
        ctx.tensors = (A, W) if MatMul4Bit.keeps_input else (None, W)
        return torch.nn.functional.linear(A, W)

    @staticmethod
    def backward(ctx, grad):
        _, W = ctx.tensors
        return grad @ W, None


def quantized_forward(self, x):
    return MatMul4Bit.apply(x, self.weight)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--targets", default="query,value")
    p.add_argument("--lora-r", type=int, default=8)
    p.add_argument("--keeps-input", action="store_true")
    a = p.parse_args()
    MatMul4Bit.keeps_input = a.keeps_input
    from litgpt.lora import GPT, Config, mark_only_lora_as_trainable
    from litgpt.utils import chunked_cross_entropy
    t = set(a.targets.split(","))
    config = Config.from_name(a.model, lora_r=a.lora_r, lora_alpha=2 * a.lora_r, lora_dropout=0.05,
                              lora_query="query" in t, lora_key="key" in t, lora_value="value" in t,
                              lora_projection="projection" in t, lora_mlp="mlp" in t, lora_head="head" in t)
    with FakeTensorMode(allow_non_fake_inputs=True):
        torch.set_default_dtype(torch.bfloat16)
        with torch.device("cpu"):
            model = GPT(config)
            model.max_seq_length = a.seq
        torch.set_default_dtype(torch.float32)
        mark_only_lora_as_trainable(model)
        for m in model.modules():
            if type(m) is torch.nn.Linear:
                m.forward = types.MethodType(quantized_forward, m)
        params = [q for q in model.parameters() if q.requires_grad]
        opt = torch.optim.AdamW(params, lr=3e-4, foreach=True)
        ids = torch.randint(0, config.padded_vocab_size, (a.batch, a.seq))
        state = {}

        def step():
            state["logits"] = model(ids, lm_head_chunk_size=128)
            logits = state["logits"]
            logits[-1] = logits[-1][..., :-1, :]
            loss = chunked_cross_entropy(logits, ids[..., 1:])
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        step()
        mt = MemTracker()
        for q in model.parameters():
            if not q.requires_grad:
                mt._param_to_grad_hook_handles[q] = (_NoHook(), _NoHook())
        mt.track_external(model, opt)
        with mt:  # two steps: the second sees what the first leaves alive
            step()
            mt.reset_mod_stats()
            step()
        peak = mt.get_tracker_snapshot("peak")
        dev = [d for d in peak if str(d).startswith("cpu")]
        tot = sum(peak[d]["Total"] for d in dev)
        print(json.dumps({"peak_bytes": tot, "by_type": {str(k): v for d in dev for k, v in peak[d].items()}}))


if __name__ == "__main__":
    main()
