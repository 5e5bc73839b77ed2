//! Saved activations per layer, logits and loss: what autograd keeps alive between the
//! forward and the backward pass, in bytes per token, following each framework's code.
//!
//! Notation in the formula strings: `h` hidden size, `q` = heads × head size, `kv` = KV
//! heads × head size, `I` MLP width, `V` vocabulary rows, `β` compute bytes, `T` tokens
//! per micro-batch (micro batch × sequence length).

use super::context::Implementation;
use super::setup::Setup;
use super::weights::{self, mamba_dims};
use super::{Component, Phase, Provenance};
use crate::catalog::{MlpKind, NormKind};
use crate::plan::{Attention, CeChunkTarget, Checkpointing, LossImpl, Method, Quantization, RlAlgorithm};

/// One named term of a per-token table.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Term {
    pub(crate) label: String,
    pub(crate) bytes: u64,
}

fn term(label: impl Into<String>, bytes: u64) -> Term {
    Term { label: label.into(), bytes }
}

pub(super) fn sum(terms: &[Term]) -> u64 {
    terms.iter().map(|t| t.bytes).sum()
}

fn describe(terms: &[Term]) -> String {
    terms.iter().filter(|t| t.bytes > 0).map(|t| format!("{} {}", t.label, t.bytes)).collect::<Vec<_>>().join(" + ")
}

/// Whether the block shares one norm between attention and MLP (Falcon, Phi parallel residual).
fn shared_norm(s: &Setup) -> bool {
    s.arch.parallel_residual && s.arch.shared_attention_norm
}

/// Norm input kept by autograd: RMSNorm upcasts to fp32, LayerNorm keeps its input. Under
/// Megatron's sequence parallelism each tensor-parallel rank holds `1/t` of the sequence there.
fn norm_bytes(s: &Setup, trainable: bool) -> u64 {
    norm_bytes_of_width(s, hidden_share(s), trainable)
}

/// The width per token of a hidden state that is whole on every tensor-parallel rank (a block's
/// input, the norms' inputs and outputs, the column-parallel linears' input): `h`, or `h / t` under
/// Megatron's sequence parallelism, which splits those tensors along the sequence over the `t`
/// ranks (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
/// §4.2.2; `megatron/core/tensor_parallel/mappings.py` scatter/gather to the sequence-parallel
/// region): `T / t` tokens of width `h` are the bytes of `T` tokens of width `h / t`.
fn hidden_share(s: &Setup) -> u64 {
    s.arch.n_embd.div_ceil(s.sequence_parallel_split())
}

fn norm_bytes_of_width(s: &Setup, h: u64, trainable: bool) -> u64 {
    let beta = s.activation_bytes;
    if s.arch.norm == NormKind::LayerNorm {
        return beta * h;
    }
    match s.implementation {
        // Unsloth's fused RMSNorm keeps the input and one fp32 rstd per row.
        Implementation::Unsloth => beta * h + 4,
        // fp32 input; a trainable weight also keeps the normalized tensor (fp32 in LitGPT, β in HF).
        Implementation::Litgpt => 4 * h + 4 + if trainable { 4 * h } else { 0 },
        Implementation::Hf => 4 * h + 4 + if trainable { beta * h } else { 0 },
    }
}

fn mlp_width(s: &Setup) -> u64 {
    match s.arch.mlp {
        MlpKind::Moe => s.arch.expert_intermediate_size(),
        _ => s.arch.intermediate_size,
    }
}

/// Whether frozen linear layers still keep their input. A plain frozen `F.linear` needs only
/// the weight; bitsandbytes' `MatMul4Bit` kept its input on `ctx.tensors` before 0.43.2, and
/// `MatMul8bitLt` still does. Unsloth runs quantized linears through its own kernels, whose
/// saved inputs are kept whatever the bitsandbytes release.
fn linear_inputs_saved(s: &Setup) -> bool {
    matches!(s.method, Method::Full | Method::Pretrain)
        || match s.quantization {
            Some(Quantization::Nf4 { .. } | Quantization::Fp4 { .. }) => {
                s.behaviour.matmul_4bit_keeps_input || s.implementation == Implementation::Unsloth
            }
            // GPTQ/AWQ kernels and FP8 linears keep their input for the input gradient.
            Some(Quantization::Int8 | Quantization::Fp8 | Quantization::Gptq { .. } | Quantization::Awq) => true,
            None => false,
        }
}

/// Per token of one layer, the distinct inputs its linears receive: QKV `β·h`, output
/// projection `β·q`, MLP `β·h` (the QKV input itself when one norm feeds both branches) and
/// down projection `β·I` (per routed expert for MoE).
fn linear_input_bytes(s: &Setup) -> u64 {
    s.activation_bytes * (s.arch.n_embd + weights::q_width(&s.arch) + mlp_branch_input_width(s))
}

/// Width of the MLP's own linear inputs per token: its input (unless shared with attention)
/// and the down projection's.
fn mlp_branch_input_width(s: &Setup) -> u64 {
    let input = if shared_norm(s) { 0 } else { s.arch.n_embd };
    let per_expert = input + mlp_width(s);
    match s.arch.mlp {
        MlpKind::Moe => s.arch.n_expert_per_token.max(1) * per_expert,
        _ => per_expert,
    }
}

/// LitGPT's loop keeps the previous iteration's autograd graph until the next forward returns
/// (`logits` still references it), and the graph keeps what bitsandbytes stored on
/// `ctx.tensors` (the backward pass frees only `save_for_backward` tensors): one more copy
/// of every 4-bit linear's input, `lm_head` included, in the next forward and during the step.
pub(super) fn retained_4bit_inputs(s: &Setup) -> Option<Component> {
    let four_bit = matches!(s.quantization, Some(Quantization::Nf4 { .. } | Quantization::Fp4 { .. }));
    if s.implementation != Implementation::Litgpt || !four_bit || !s.behaviour.matmul_4bit_keeps_input {
        return None;
    }
    let beta = s.activation_bytes;
    let per_layer = linear_input_bytes(s);
    let head = beta * s.arch.n_embd;
    // With a frozen embedding, the first layer's inputs need no gradient until a LoRA output
    // joins them: its QKV input, and with a parallel residual its whole MLP branch.
    let first_layer_frozen = if s.behaviour.stable_embedding {
        0
    } else {
        head + if s.arch.parallel_residual { beta * mlp_branch_input_width(s) } else { 0 }
    };
    let per_token = (s.arch.n_layer * per_layer + head).saturating_sub(first_layer_frozen);
    let steady = s.behaviour.steady_state;
    Some(Component {
        name: "retained-4bit-inputs",
        bytes: s.tokens().saturating_mul(per_token),
        phase: Phase::OptimizerStep,
        live_in: if steady { vec![Phase::Forward, Phase::OptimizerStep] } else { vec![Phase::OptimizerStep] },
        formula: format!(
            "T × ({} layers × linear inputs {per_layer} + lm_head input {head} − first-layer inputs without gradient \
             {first_layer_frozen}): MatMul4Bit's `ctx.tensors`, alive while `logits` holds the graph (the step{})",
            s.arch.n_layer,
            if steady { " and the next forward" } else { "" }
        ),
        provenance: Provenance::Derived,
    })
}

/// bitsandbytes' `MatMul8bitLt` (and `MatMul4Bit` before 0.43.2) keeps its input on `ctx.tensors`
/// (`bitsandbytes/autograd/_functions.py`: `ctx.tensors = (CAt, subA, A)`), not through
/// `save_for_backward`, so activation checkpointing's saved-tensor hooks never see it: every
/// layer's linear inputs stay alive until backward, on top of the checkpointed boundaries.
pub(super) fn checkpoint_bypassing_inputs(s: &Setup) -> Option<Component> {
    let kept = match s.quantization {
        Some(Quantization::Int8) => true,
        Some(Quantization::Nf4 { .. } | Quantization::Fp4 { .. }) => s.behaviour.matmul_4bit_keeps_input,
        _ => false,
    };
    if !kept || s.checkpointing == Checkpointing::None || s.implementation != Implementation::Hf {
        return None;
    }
    let per_layer = linear_input_bytes(s);
    Some(Component {
        name: "quantized-linear-inputs",
        bytes: s.tokens().saturating_mul(s.arch.n_layer.saturating_mul(per_layer)),
        phase: Phase::Forward,
        live_in: vec![Phase::Forward, Phase::Backward],
        formula: format!(
            "T × {} layers × linear inputs {per_layer}: bitsandbytes keeps them on `ctx.tensors`, out of \
             checkpointing's reach",
            s.arch.n_layer
        ),
        provenance: Provenance::Derived,
    })
}

/// Saved bytes per token of the MLP (all routed experts for MoE).
fn mlp_terms(s: &Setup) -> Vec<Term> {
    let beta = s.activation_bytes;
    let h = s.arch.n_embd;
    let i = mlp_width(s);
    let inputs = linear_inputs_saved(s);
    let fused = s.implementation == Implementation::Unsloth;
    // Gated: activation input, activation output and up output (the product feeds the down
    // projection, kept only when that input is saved). GeLU (or squared ReLU): the activation input.
    let gated = s.arch.gated_mlp();
    let (dense, label) = match s.arch.mlp {
        _ if !gated && inputs => (2 * beta * i, "activation input + projection input 2β·I"),
        _ if !gated => (beta * i, "activation input β·I"),
        _ if fused => (2 * beta * i, "fused gate/up outputs 2β·I"),
        _ if inputs => (4 * beta * i, "gate, activation, up, down input 4β·I"),
        _ => (3 * beta * i, "gate, activation, up outputs 3β·I"),
    };
    // With one norm feeding both branches, the MLP input is the QKV input, counted there.
    let input = if inputs && !shared_norm(s) { beta * hidden_share(s) } else { 0 };
    match s.arch.mlp {
        MlpKind::Moe => {
            let k = s.arch.n_expert_per_token.max(1);
            let matrices = s.arch.expert_matrices();
            let shared = s.arch.shared_expert_intermediate_size.map_or(0, |w| matrices * beta * w + input);
            vec![
                term("router fp32 logits 4·E", 4 * s.arch.n_expert),
                term("k × (gathered input β·h + expert + weighted output β·h)", k * (2 * beta * h + dense)),
                term("shared expert", shared),
            ]
        }
        _ => vec![term("MLP input β·h", input), term(label, dense)],
    }
}

/// Widths K and V reach the attention kernel with, and the storage V keeps alive.
fn kernel_kv_bytes(s: &Setup) -> (u64, &'static str) {
    let a = &s.arch;
    let beta = s.activation_bytes;
    let q = weights::q_width(a);
    let kv = weights::kv_width(a);
    match s.implementation {
        // LitGPT repeats K and V to every head for grouped queries; with full multi-head
        // attention V stays a view of the fused QKV output, which keeps all of it alive.
        Implementation::Litgpt if a.n_query_groups.max(1) < a.n_head => {
            (2 * beta * q, "K, V repeated to all heads 2β·q")
        }
        Implementation::Litgpt => {
            (beta * q + beta * (q + 2 * kv), "roped K β·q + V as a view of the fused QKV β·(q + 2·kv)")
        }
        Implementation::Hf if s.attention == Attention::Eager => (2 * beta * q, "K, V repeated to all heads 2β·q"),
        _ => (2 * beta * kv, "K, V 2β·kv"),
    }
}

/// Saved bytes per token of one attention layer (norms, attention, MLP, adapters).
pub(super) fn attention_layer_terms(s: &Setup) -> Vec<Term> {
    let a = &s.arch;
    let beta = s.activation_bytes;
    let q = weights::q_width(a);
    let norms_trainable = matches!(s.method, Method::Full | Method::Pretrain | Method::AdapterV2);
    let inputs = linear_inputs_saved(s);
    let mut t = vec![term("norm input", norm_bytes(s, norms_trainable))];
    if inputs {
        t.push(term("QKV input β·h", beta * hidden_share(s)));
    }
    let (kv_bytes, kv_label) = kernel_kv_bytes(s);
    t.push(term("roped Q β·q", beta * q));
    t.push(term(kv_label, kv_bytes));
    if a.norm_qk {
        t.push(term("per-head Q/K norm inputs", norm_bytes_of_width(s, q + weights::kv_width(a), false)));
    }
    t.push(term("attention output β·q + log-sum-exp 4·heads", beta * q + 4 * a.n_head));
    if inputs {
        t.push(term("output-projection input β·q", beta * q));
    }
    if s.implementation == Implementation::Litgpt && a.attention_logit_softcapping.is_some() {
        // LitGPT's softcapped attention is plain PyTorch: tanh output, fp32 softmax and its cast.
        t.push(term("softcapped scores heads·s·(2β + 4)", a.n_head * s.seq_len * (2 * beta + 4)));
    }
    if s.attention == Attention::Eager && s.implementation == Implementation::Hf {
        // fp32 softmax output and its 16-bit cast, per key position; softcapped scores also keep
        // tanh's output (`modeling_gemma2.py` `eager_attention_forward`).
        if a.attention_logit_softcapping.is_some() {
            t.push(term("softcapped eager scores heads·s·(4 + 2β)", a.n_head * s.seq_len * (4 + 2 * beta)));
        } else {
            t.push(term("eager scores heads·s·(4 + β)", a.n_head * s.seq_len * (4 + beta)));
        }
    }
    if a.post_attention_norm {
        t.push(term("post-attention norm input", norm_bytes(s, norms_trainable)));
    }
    // A single-purpose attention block (Nemotron-H) ends here; its MLP is a block of its own.
    if a.layer_pattern.is_some() {
        t.extend(adapter_terms(s));
        t.retain(|t| t.bytes > 0);
        return t;
    }
    // A LayerNorm keeps its input: with a parallel residual both norms read the same tensor.
    let second_norm_shared = shared_norm(s) || (a.parallel_residual && a.norm == NormKind::LayerNorm);
    if !second_norm_shared {
        t.push(term("second norm input", norm_bytes(s, norms_trainable)));
    }
    t.extend(mlp_terms(s));
    if a.post_mlp_norm {
        t.push(term("post-MLP norm input", norm_bytes(s, norms_trainable)));
    }
    t.extend(adapter_terms(s));
    t.retain(|t| t.bytes > 0);
    t
}

/// Saved bytes per token of one Mamba-2 mixer (fused-kernel path) with its norm and MLP.
pub(super) fn mamba_layer_terms(s: &Setup) -> Vec<Term> {
    // Beside attention (Falcon-H1) the layer's norms and MLP are counted with the attention.
    if s.arch.parallel_mamba {
        return mamba_mixer_terms(s);
    }
    let mut t = vec![term("norm input", norm_bytes(s, false))];
    t.extend(mamba_mixer_terms(s));
    if s.arch.layer_pattern.is_some() {
        return t;
    }
    t.push(term("second norm input", norm_bytes(s, false)));
    t.extend(mlp_terms(s));
    t
}

/// Saved bytes per token of a single-purpose MLP block (Nemotron-H's `-` and `E`): its norm,
/// the MLP and its adapters.
fn mlp_block_terms(s: &Setup) -> Vec<Term> {
    let norms_trainable = matches!(s.method, Method::Full | Method::Pretrain | Method::AdapterV2);
    let mut t = vec![term("norm input", norm_bytes(s, norms_trainable))];
    t.extend(mlp_terms(s));
    t.extend(adapter_terms(s));
    t.retain(|t| t.bytes > 0);
    t
}

/// What the mixer itself saves: its input (scaled apart from attention's in Falcon-H1), the
/// packed projection and the scan output.
fn mamba_mixer_terms(s: &Setup) -> Vec<Term> {
    let beta = s.activation_bytes;
    let (d_in, in_proj_out) = mamba_dims(&s.arch);
    let mut t = vec![
        term("in_proj input β·h", beta * hidden_share(s)),
        term("packed in_proj output β·(2·d_in + 2·N + H)", beta * in_proj_out),
        term("scan output β·d_in + rstd", beta * d_in + 4),
    ];
    // Mamba-1 saves the convolved x that x_proj reads, x_proj's output and the time steps.
    let x_proj = s.arch.mamba.map_or(0, |m| m.x_proj_size());
    if x_proj > 0 {
        t.push(term("x_proj input, output and Δ β·(2·d_in + R + 2·N)", beta * (2 * d_in + x_proj)));
    }
    t
}

/// Inputs of the adapted linears of one layer, grouped as the framework feeds them.
fn lora_inputs(s: &Setup) -> Vec<(&'static str, u64, u64)> {
    let a = &s.arch;
    let t = &s.lora_targets;
    let h = a.n_embd;
    let q = weights::q_width(a);
    let kv = weights::kv_width(a);
    let i = mlp_width(s);
    let gated = a.gated_mlp();
    let mut out = Vec::new();
    // PEFT adapts Hugging Face's fused projections as one module each.
    let layout = a.hf_projections;
    let hf = s.implementation == Implementation::Hf;
    if hf && layout.fused_qkv() && (t.query || t.key || t.value) {
        out.push(("qkv", h, q + 2 * kv));
    }
    let separate_qkv = !(hf && layout.fused_qkv());
    let fused_gate_up = hf && layout.fused_gate_up() && gated;
    // (module, d_in, d_out)
    if t.query && separate_qkv {
        out.push(("q", h, q));
    }
    if t.key && separate_qkv {
        out.push(("k", h, kv));
    }
    if t.value && separate_qkv {
        out.push(("v", h, kv));
    }
    if t.output {
        out.push(("o", q, h));
    }
    if fused_gate_up && (t.mlp_gate || t.mlp_up) {
        out.push(("gate_up", h, 2 * i));
    }
    if t.mlp_gate && gated && !fused_gate_up {
        out.push(("gate", h, i));
    }
    if (t.mlp_up && !fused_gate_up) || (t.mlp_gate && !gated) {
        out.push(("up", h, i));
    }
    if t.mlp_down {
        out.push(("down", i, h));
    }
    out
}

/// LoRA branches and LitGPT adapters, per token of one layer.
fn adapter_terms(s: &Setup) -> Vec<Term> {
    let a = &s.arch;
    let beta = s.activation_bytes;
    let h = a.n_embd;
    let q = weights::q_width(a);
    let r = s.lora_rank;
    let mask = u64::from(s.lora_dropout);
    match s.method {
        Method::Lora | Method::Qlora => {
            let modules = lora_inputs(s);
            let n = modules.len() as u64;
            match s.implementation {
                Implementation::Litgpt => {
                    // One dropout on the fused QKV input; the other adapted linears drop their own input.
                    let qkv: Vec<_> = modules.iter().filter(|m| matches!(m.0, "q" | "k" | "v")).collect();
                    let qkv_in = if qkv.is_empty() { 0 } else { h };
                    let qkv_out: u64 = qkv.iter().map(|m| m.2).sum();
                    let others: u64 = modules.iter().filter(|m| !matches!(m.0, "q" | "k" | "v")).map(|m| m.1).sum();
                    vec![
                        term("LoRA dropout output (and mask) (β + 1)·d_in", (qkv_in + others) * (beta + mask)),
                        term("LoRA B outputs of the fused QKV β·Σd_out", beta * qkv_out),
                        term("LoRA A outputs β·r", n * beta * r),
                    ]
                }
                // PEFT casts each adapter's input to the adapter dtype (fp32) before lora_A.
                Implementation::Hf => {
                    // Under autocast (Trainer's bf16/fp16, whatever the weights' dtype) the adapter
                    // matmul keeps its 16-bit cast of the input instead of the fp32 one
                    // (peft `tuners/lora/layer.py` Linear.forward: `x = self._cast_input_dtype(x, lora_A.weight.dtype)`).
                    let cast = if s.autocast { s.compute_bytes } else { s.trainable_bytes };
                    let inputs: u64 = modules.iter().map(|m| m.1).sum();
                    vec![
                        term("LoRA input casts (and dropout masks) per adapter", inputs * (cast + mask)),
                        term("LoRA A outputs", n * cast * r),
                    ]
                }
                // Unsloth runs a group through its fused kernel (`unsloth/kernels/fast_lora.py`
                // `LoRA_QKV`, `LoRA_W`, `LoRA_MLP`) when every linear of the group is adapted and
                // dropout is 0 (`unsloth/models/llama.py` `patch_peft_model`). The kernel saves the
                // group's input X, which the layer terms above already count as the linear's
                // input, and for the MLP `e` and `g` (the fused gate/up outputs above); it
                // recomputes X·A and the down projection's input in backward. A group adapted in
                // part keeps PEFT's Linear: its input and its A output.
                Implementation::Unsloth => {
                    let has = |name: &str| modules.iter().any(|m| m.0 == name);
                    let mlp = if a.mlp == MlpKind::Gelu { &["up", "down"][..] } else { &["gate", "up", "down"][..] };
                    let group = |name: &str| -> &[&str] {
                        match name {
                            "q" | "k" | "v" => &["q", "k", "v"],
                            "o" => &["o"],
                            _ => mlp,
                        }
                    };
                    let fused = |name: &str| !s.lora_dropout && group(name).iter().all(|m| has(m));
                    let unfused: Vec<_> = modules.iter().filter(|m| !fused(m.0)).collect();
                    let inputs: u64 = unfused.iter().map(|m| m.1).sum();
                    vec![
                        term("inputs of adapters outside a fused group (β + mask)·d_in", inputs * (beta + mask)),
                        term("their LoRA A outputs β·r", unfused.len() as u64 * beta * r),
                    ]
                }
            }
        }
        Method::Adapter => vec![term(
            "adapter prefix attention + gate 2β·q + 4·heads",
            adapter_layer_share(s, 2 * beta * q + 4 * a.n_head),
        )],
        Method::AdapterV2 => {
            let outs = q
                + 2 * weights::kv_width(a)
                + h
                + match a.mlp {
                    MlpKind::Gelu => a.intermediate_size + h,
                    _ => 2 * a.intermediate_size + h,
                };
            vec![
                term("adapter prefix attention + gate", adapter_layer_share(s, 2 * beta * q + 4 * a.n_head)),
                term("adapter-v2 scaled linear outputs β·Σout", beta * outs),
            ]
        }
        Method::Full | Method::Pretrain => Vec::new(),
    }
}

/// A per-layer amount averaged over all layers: LitGPT adapters start at the third layer.
fn adapter_layer_share(s: &Setup, bytes: u64) -> u64 {
    let l = s.arch.n_layer.max(1);
    bytes * l.saturating_sub(2) / l
}

/// The layer-input hidden state kept per checkpointed layer.
fn boundary_bytes(s: &Setup) -> u64 {
    s.activation_bytes * hidden_share(s)
}

/// The saved-activations component, with checkpointing applied.
pub(super) fn activations_component(s: &Setup) -> Component {
    let a = &s.arch;
    let tokens = s.tokens();
    let attention = attention_layer_terms(s);
    let mamba = mamba_layer_terms(s);
    let mamba_layers = a.n_mamba_layers.min(a.n_layer);
    let attention_layers = a.attention_layer_count();
    let per_attention = sum(&attention);
    let per_mamba = sum(&mamba);
    // Nemotron-H's MLP blocks stand alone; elsewhere the MLP is inside each layer's terms.
    let mlp_blocks = if a.layer_pattern.is_some() { a.mlp_layer_count() } else { 0 };
    let mlp_block = mlp_block_terms(s);
    let per_mlp_block = if mlp_blocks > 0 { sum(&mlp_block) } else { 0 };
    let largest_layer = largest_layer_per_token(s);
    let boundary = boundary_bytes(s);
    let (per_token, formula) = match s.checkpointing {
        Checkpointing::None => {
            let total = attention_layers * per_attention + mamba_layers * per_mamba + mlp_blocks * per_mlp_block;
            let mut f = format!("T × ({attention_layers} layers × [{}]", describe(&attention));
            if mamba_layers > 0 {
                let what = if a.parallel_mamba { "Mamba mixers beside attention" } else { "Mamba layers" };
                f.push_str(&format!(" + {mamba_layers} {what} × [{}]", describe(&mamba)));
            }
            if mlp_blocks > 0 {
                f.push_str(&format!(" + {mlp_blocks} MLP blocks × [{}]", describe(&mlp_block)));
            }
            f.push(')');
            (total, f)
        }
        Checkpointing::Full if moments_apart(s) => (
            a.n_layer * boundary,
            format!(
                "T × {} layer inputs × β·h {boundary} (the recomputed layer counts with the backward temporaries)",
                a.n_layer
            ),
        ),
        Checkpointing::Full => (
            a.n_layer * boundary + largest_layer,
            format!(
                "T × ({} layer inputs × β·h {boundary} + one recomputed layer {largest_layer} [{}])",
                a.n_layer,
                describe(&attention)
            ),
        ),
        // Inputs go to pinned CPU memory; the GPU keeps the last layer's input and one recomputed layer.
        Checkpointing::CpuOffload if moments_apart(s) => {
            (2 * boundary, format!("T × 2 layer inputs × β·h {boundary}; the rest offloaded to CPU"))
        }
        Checkpointing::CpuOffload => (
            2 * boundary + largest_layer,
            format!("T × (2 layer inputs × β·h {boundary} + one recomputed layer {largest_layer}; the rest offloaded to CPU)"),
        ),
    };
    Component {
        name: "activations",
        bytes: tokens.saturating_mul(per_token),
        phase: Phase::Forward,
        live_in: vec![Phase::Forward, Phase::Backward],
        formula: format!("{tokens} tokens: {formula}"),
        provenance: Provenance::Derived,
    }
}

/// Rows of the output head that receive logits (the vocabulary; 1 for a reward model's score).
pub(super) fn vocab(s: &Setup) -> u64 {
    s.head_rows
}

/// Tokens that reach the output head: GRPO keeps only the completion (`logits_to_keep`).
fn logit_tokens(s: &Setup) -> u64 {
    if matches!(s.loss, LossImpl::TokenLogProbs { .. }) {
        // verl runs the head over every token of the (unpadded) micro batch.
        return s.tokens();
    }
    match (&s.rl, s.algorithm) {
        (Some(rl), Some(RlAlgorithm::Grpo)) => {
            s.micro_batch.saturating_mul(rl.max_completion_length.value.min(s.seq_len))
        }
        _ => s.tokens(),
    }
}

/// Logits and the loss at the start of backward, the final norm's input and the head's input.
/// `resident` is what the GPU holds when the loss first runs (weights, adapters, the first
/// forward's activations): Unsloth sizes its loss chunks from the memory left.
pub(super) fn logits_component(s: &Setup, resident: u64) -> Component {
    let v = vocab(s);
    let tokens = logit_tokens(s);
    let beta = s.compute_bytes;
    let h = s.arch.n_embd;
    let head_input = if head_trainable(s) { beta * h } else { 0 };
    let final_norm = norm_bytes(s, false);
    let (per_token, chunk_bytes, formula) = if s.fused_head {
        fused_head_bytes(s)
    } else {
        match s.loss {
            // Every 128-token chunk of logits stays referenced until backward, and each chunk's
            // cross-entropy keeps its log-softmax output.
            LossImpl::LitgptChunked => {
                (2 * beta * v, 0, format!("T × (logits β·V + log-softmax β·V) = T × {}", 2 * beta * v))
            }
            // logits β·V, fp32 upcast 4·V and log-softmax output 4·V at the loss; 12·V early in backward.
            // Softcapped logits (`modeling_gemma2.py` Gemma2ForCausalLM) also keep tanh's output β·V.
            LossImpl::Full => {
                let softcapped = s.arch.final_logit_softcapping.is_some() && s.implementation == Implementation::Hf;
                let softcap = if softcapped { beta * v } else { 0 };
                (
                    12 * v + softcap,
                    0,
                    format!(
                        "T × (saved fp32 log-softmax 4·V + its gradient 4·V + input gradient 4·V{}) = T × {}",
                        if softcapped { " + softcapped logits' tanh output β·V" } else { "" },
                        12 * v + softcap
                    ),
                )
            }
            LossImpl::TrlChunkedNll => {
                let chunk = 256u64.min(tokens);
                (0, chunk * v * (beta + 8), format!("256-token chunks × V × (β + 8) = {chunk} × {v} × {}", beta + 8))
            }
            // `fast_cross_entropy_loss` (`unsloth/kernels/cross_entropy_loss.py`) keeps the
            // logits and one fp32 logsumexp per row, and writes the gradient into the logits.
            LossImpl::UnslothLogits => (
                beta * v + 4,
                0,
                format!("T × (logits β·V, gradient in place, + fp32 logsumexp) = T × {}", beta * v + 4),
            ),
            LossImpl::UnslothFused(target) => unsloth_fused_chunk(s, tokens, v, target, resident),
            // The language model's logits (in the residual stream's dtype: fp32 under Unsloth's
            // forced float32) and, in backward, their gradient; each chunk's fp32 copy and its
            // softmax gradient one chunk at a time.
            LossImpl::UnslothWholeLogits { chunks } => {
                let b = s.activation_bytes;
                let chunk = tokens.div_ceil(chunks.max(1));
                (
                    2 * b * v,
                    chunk * v * 8,
                    format!(
                        "T × (logits + their gradient, 2 × {b}·V) = T × {} + one of {chunks} chunks of {chunk} tokens × V × fp32 (copy + gradient 8)",
                        2 * b * v
                    ),
                )
            }
            // Every token of the sequence, not only the completion: the log-probs are sliced after.
            LossImpl::Fp32LogProbs => (
                0,
                s.tokens().saturating_mul(8 * v),
                format!("all {} tokens × (fp32 logits 4·V + their fp32 gradient 4·V) = T × {}", s.tokens(), 8 * v),
            ),
            // verl's fused kernels (`use_fused_kernels`, `FusedLinearForPPO`) keep the head's
            // input and one fp32 log-prob and entropy per token, no `[T, V]` logits.
            LossImpl::TokenLogProbs { fused: true, .. } => (
                beta * h + 8,
                0,
                format!("fused head: T × (hidden state β·h + fp32 log-prob and entropy 8) = T × {}", beta * h + 8),
            ),
            LossImpl::TokenLogProbs { fused: false, entropy_copies, response_copy } => {
                let copies = 1 + u64::from(entropy_copies);
                let per_sequence_copy = response_copy.map_or(0, |r| r.min(s.seq_len)) * beta * v;
                (
                    copies * beta * v + 8,
                    s.micro_batch.saturating_mul(per_sequence_copy),
                    format!(
                        "T × ({copies} × logits β·V{} + fp32 log-sum-exp and log-prob 8) = T × {}{}",
                        match entropy_copies {
                            0 => ", gradient written in place",
                            1 => " and their gradient (the entropy turns the in-place backward off)",
                            _ => ", their gradient and the eager entropy's softmax",
                        },
                        copies * beta * v + 8,
                        if per_sequence_copy > 0 { " + the copied response slice of the padded logits" } else { "" }
                    ),
                )
            }
            LossImpl::Liger => {
                let chunk = tokens.div_ceil(v.div_ceil(h.max(1)).max(1)).next_power_of_two().min(tokens);
                (
                    beta * h,
                    chunk * v * (beta + 4),
                    format!("chunk of {chunk} tokens × V × (β + 4) + input gradient T × β·h"),
                )
            }
        }
    };
    let bytes = s
        .tokens()
        .saturating_mul(head_input + final_norm)
        .saturating_add(tokens.saturating_mul(per_token))
        .saturating_add(chunk_bytes);
    Component {
        name: "logits-loss",
        bytes,
        phase: Phase::Backward,
        live_in: vec![Phase::Forward, Phase::Backward],
        formula: format!(
            "{formula} (T = {tokens} tokens reach the head) + final norm {final_norm}/token + head input {head_input}/token, V = {v}"
        ),
        provenance: Provenance::Derived,
    }
}

/// unsloth-zoo's `UnslothFusedLoss` (`fused_losses/cross_entropy_loss.py`): the input gradient
/// `grad_inputs = empty_like(hidden_states)` for the whole batch, and one chunk at a time
/// through `torch.func.grad_and_value` of the compiled loss, whose peak holds the chunk's fp32
/// logits (`.float()`) and their fp32 gradient. The chunk count comes from `get_chunk_size`:
/// `r` = fp32 logits of the batch ÷ target, `round(r / 4) * 4` (at least 1), or from 2026.7.1
/// 1 when `r ≤ 1` else `ceil(r / 4) * 4`; `torch.chunk` makes chunks of `ceil(T / n)` rows.
fn unsloth_fused_chunk(s: &Setup, tokens: u64, v: u64, target: CeChunkTarget, resident: u64) -> (u64, u64, String) {
    const MIB: u64 = 1 << 20;
    let logits_fp32 = tokens.saturating_mul(v).saturating_mul(4);
    let free =
        s.gpu_capacity.map(|total| total.saturating_sub(super::views::CUDA_CONTEXT_BYTES).saturating_sub(resident));
    let (target_bytes, target_text, round_up) = match (target, free) {
        (CeChunkTarget::Fixed { mib }, _) => (Some(mib * MIB), format!("target {mib} MiB"), false),
        (CeChunkTarget::ShareOfFree { percent, cap_mib, round_up }, Some(free)) => {
            let share = free / 100 * percent;
            let capped = cap_mib.map_or(share, |cap| share.min(cap * MIB));
            let cap = cap_mib.map_or(String::new(), |cap| format!(", at most {cap} MiB"));
            (
                Some(capped),
                format!(
                    "target {percent} % of free {}{cap} = {}",
                    super::format_bytes(free),
                    super::format_bytes(capped)
                ),
                round_up,
            )
        }
        // Every card with twice the cap free uses the cap.
        (CeChunkTarget::ShareOfFree { cap_mib: Some(cap), round_up, .. }, None) => {
            (Some(cap * MIB), format!("target {cap} MiB (no GPU given: its cap assumed)"), round_up)
        }
        (CeChunkTarget::ShareOfFree { cap_mib: None, .. }, None) => {
            (None, "no GPU given, so no free memory to size chunks by: one chunk assumed".to_string(), false)
        }
    };
    let chunks = match target_bytes {
        Some(t) if t > 0 => {
            let r = logits_fp32 as f64 / t as f64;
            if round_up {
                if r <= 1.0 {
                    1
                } else {
                    ((r / 4.0).ceil() as u64) * 4
                }
            } else {
                ((round_half_even(r / 4.0) as u64) * 4).max(1)
            }
        }
        _ => 1,
    };
    let rows = tokens.div_ceil(chunks.max(1));
    let chunk_bytes = rows.saturating_mul(v).saturating_mul(8);
    (
        s.compute_bytes * s.arch.n_embd,
        chunk_bytes,
        format!(
            "input gradient T × β·h + one chunk of {rows} tokens × V × (fp32 logits 4 + fp32 gradient 4); {chunks} chunks ({target_text})"
        ),
    )
}

/// Python's `round`: halves go to the even neighbour.
pub(super) fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

/// TRL's fused LM head (`trl/kernels/chunked_logprob.py` `ChunkedLogProbFunction`) saves the label
/// tokens' hidden states (`hidden_states[mask]`, `trainer/utils.py` `add_fused_lm_head`) and no
/// `[T, V]` logits: (bytes per label token, fixed bytes, formula). Its tiles are transient:
/// [`fused_head_tile`] and [`fused_head_backward_bytes`].
fn fused_head_bytes(s: &Setup) -> (u64, u64, String) {
    (s.compute_bytes * s.arch.n_embd, 0, "fused LM head: saved label-token hidden states β·h".to_string())
}

const TOKEN_TILE: u64 = 4096;
const VOCAB_TILE: u64 = 32768;

/// One `[4096 tokens, 32768 vocabulary]` scratch tile in the compute dtype (`mm_buf`).
pub(super) fn fused_tile_bytes(s: &Setup) -> u64 {
    TOKEN_TILE.min(logit_tokens(s)) * VOCAB_TILE.min(vocab(s)) * s.compute_bytes
}

/// Whether the head's backward and the last layer's backward are counted as separate moments
/// (Hugging Face modelling code): the logits' gradients are freed before the first layer's
/// backward, and a checkpointed layer is recomputed only then.
fn moments_apart(s: &Setup) -> bool {
    s.implementation == Implementation::Hf
}

/// Saved bytes per token of the largest layer (what checkpointing recomputes at a time).
fn largest_layer_per_token(s: &Setup) -> u64 {
    let mamba = if s.arch.n_mamba_layers > 0 { sum(&mamba_layer_terms(s)) } else { 0 };
    let attention = sum(&attention_layer_terms(s));
    let mlp_block = if s.arch.layer_pattern.is_some() { sum(&mlp_block_terms(s)) } else { 0 };
    if s.arch.parallel_mamba {
        attention + mamba
    } else {
        attention.max(mamba).max(mlp_block)
    }
}

/// The layer being recomputed under checkpointing: alive during a layer's forward and backward,
/// not while the head runs.
fn recomputed_layer_bytes(s: &Setup) -> u64 {
    match s.checkpointing {
        Checkpointing::None => 0,
        _ => s.tokens().saturating_mul(largest_layer_per_token(s)),
    }
}

/// The fused head's forward tile, at the end of the forward pass.
pub(super) fn fused_head_tile(s: &Setup) -> Option<Component> {
    if !s.fused_head {
        return None;
    }
    let tile = fused_tile_bytes(s);
    Some(Component {
        name: "lm-head-tile",
        bytes: tile,
        phase: Phase::Forward,
        live_in: vec![Phase::Forward],
        formula: format!(
            "fused LM head tile {} tokens × {} vocabulary × β",
            TOKEN_TILE.min(logit_tokens(s)),
            VOCAB_TILE.min(vocab(s)),
        ),
        provenance: Provenance::Derived,
    })
}

/// The fused head's backward: the tile again, an fp32 gradient for the hidden states and its cast
/// (`grad_hidden.to(hidden.dtype)`), and when the head trains an fp32 weight gradient and its cast.
fn fused_head_backward_bytes(s: &Setup) -> (u64, String) {
    let beta = s.compute_bytes;
    let h = s.arch.n_embd;
    // `grad_weight.to(weight.dtype)` copies only when the weight is not fp32.
    let weight_cast = if s.param_bytes < 4 { s.param_bytes } else { 0 };
    let weight_grad = if head_trainable(s) { vocab(s) * h * (4 + weight_cast) } else { 0 };
    let hidden_grad = logit_tokens(s).saturating_mul((4 + beta) * h);
    let bytes = fused_tile_bytes(s).saturating_add(hidden_grad).saturating_add(weight_grad);
    (bytes, format!("fused head backward: tile + hidden gradient fp32 and cast {hidden_grad} + head weight gradient {weight_grad}"))
}

/// LitGPT's loop keeps the list of logit chunks referenced until the next iteration, so the
/// 16-bit logits are still allocated during `optimizer.step()`.
pub(super) fn retained_logits(s: &Setup) -> Option<Component> {
    if s.implementation != Implementation::Litgpt {
        return None;
    }
    let v = vocab(s);
    Some(Component {
        name: "logits-retained",
        bytes: s.tokens().saturating_mul(s.compute_bytes * v),
        phase: Phase::OptimizerStep,
        live_in: vec![Phase::OptimizerStep],
        formula: format!(
            "T × β·V = {} × {} × {v} (the loop's `logits` variable outlives backward)",
            s.tokens(),
            s.compute_bytes
        ),
        provenance: Provenance::Derived,
    })
}

fn head_trainable(s: &Setup) -> bool {
    matches!(s.method, Method::Full | Method::Pretrain) || s.lora_targets.lm_head
}

/// Gradients of activations alive during the first layers of the backward pass, and in
/// LitGPT the gradients of the first logits chunk.
pub(super) fn backward_temporaries(s: &Setup, resident: u64) -> Component {
    let beta = s.activation_bytes;
    let i = mlp_width(s) * if s.arch.mlp == MlpKind::Moe { s.arch.n_expert_per_token.max(1) } else { 1 };
    let (lora_grad, lora_label) = lora_input_gradient(s);
    let per_token = 2 * beta * hidden_share(s) + 2 * beta * i + lora_grad;
    let (chunk, chunk_label) = logits_chunk_gradients(s);
    let layers = s.tokens().saturating_mul(per_token).saturating_add(chunk);
    let formula = format!(
        "T × (two hidden-state gradients 2β·h + two MLP-width gradients 2β·I{lora_label}) = {} × {per_token}{chunk_label}",
        s.tokens()
    );
    // The fused head's backward finishes before the first layer's: the larger of the two moments
    // (the head's without the recomputed layer, which is not alive then).
    let (bytes, formula) = if !moments_apart(s) {
        (layers, formula)
    } else {
        // The last layer's backward (with its recomputed activations) starts once the head's
        // backward is done: the larger of the two moments counts.
        let recomputed = recomputed_layer_bytes(s);
        let layer_moment = layers.saturating_add(recomputed);
        let formula = if recomputed > 0 { format!("{formula} + recomputed layer {recomputed}") } else { formula };
        if s.fused_head {
            let (head, head_formula) = fused_head_backward_bytes(s);
            if head > layer_moment {
                (head, format!("{head_formula} (larger than the last layer's backward {layer_moment})"))
            } else {
                (layer_moment, format!("{formula} (larger than the fused head's backward {head})"))
            }
        } else {
            let logits = logits_component(s, resident).bytes;
            (
                layer_moment.saturating_sub(logits),
                format!("{formula}, beyond the logits and loss {logits} that the head's backward frees first"),
            )
        }
    };
    Component {
        name: "backward-temporaries",
        bytes,
        phase: Phase::Backward,
        live_in: vec![Phase::Backward],
        formula,
        provenance: Provenance::Heuristic,
    }
}

/// PEFT casts each adapter's input to the fp32 adapter dtype (`lora/layer.py` `_cast_input_dtype`),
/// so the adapter's input gradient comes back through that cast as an fp32 tensor next to its
/// 16-bit copy: per token (4 + β)·d_in for the widest adapted input, while that layer runs backward.
fn lora_input_gradient(s: &Setup) -> (u64, &'static str) {
    let fp32_adapters = s.implementation == Implementation::Hf && s.trainable_bytes == 4 && s.compute_bytes < 4;
    if !fp32_adapters || !matches!(s.method, Method::Lora | Method::Qlora) {
        return (0, "");
    }
    let widest = lora_inputs(s).iter().map(|m| m.1).max().unwrap_or(0);
    ((4 + s.compute_bytes) * widest, " + fp32 adapter input gradient and its cast (4 + β)·d_in")
}

/// LitGPT's chunked loss starts backward with one 128-token chunk: the gradient from
/// `nll_loss` and the one `log_softmax` computes from it, plus the scaled copy of a LoRA head.
fn logits_chunk_gradients(s: &Setup) -> (u64, String) {
    if s.loss != LossImpl::LitgptChunked {
        return (0, String::new());
    }
    const CHUNK: u64 = 128;
    let chunk_tokens = s.micro_batch.saturating_mul(CHUNK.min(s.seq_len));
    let copies = 2 + u64::from(s.lora_targets.lm_head && matches!(s.method, Method::Lora | Method::Qlora));
    let bytes = copies.saturating_mul(chunk_tokens).saturating_mul(s.compute_bytes * vocab(s));
    (bytes, format!(" + {copies} logits-chunk gradients × {chunk_tokens} tokens × β·V"))
}
