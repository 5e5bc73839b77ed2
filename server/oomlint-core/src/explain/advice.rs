//! What to change: a static table of levers per component (without a config), and the
//! smallest set of the estimator's levers that frees the shortfall (with one).

use super::traceback::Component;
use crate::diagnostic::Fix;

/// One piece of advice: a change, what it frees when known, and its edits.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub title: String,
    pub saves_bytes: Option<u64>,
    pub fixes: Vec<Fix>,
}

impl Advice {
    pub(crate) fn text(title: impl Into<String>) -> Self {
        Self { title: title.into(), saves_bytes: None, fixes: Vec::new() }
    }
}

/// Levers ranked by how much they usually free when `component` grew.
///
/// The ranking is static and general: gradient checkpointing removes most stored
/// activations (per-layer inputs are kept, the rest recomputed); a fused or chunked
/// cross-entropy never materialises the `batch × seq × vocab` fp32 logits; an 8-bit or
/// paged AdamW keeps 2 instead of 8 bytes of state per parameter; LoRA keeps gradients and
/// optimizer state for the adapters only; 4-bit weights take ~0.5 byte per parameter; the
/// KV cache grows with sequences × generated tokens. With a config, the estimator's own
/// levers and sizes replace this table (see [`smallest_sufficient_set`]).
pub(crate) fn static_levers(component: Option<Component>) -> Vec<Advice> {
    let titles: &[&str] = match component {
        Some(Component::Activations) => &[
            "Turn on gradient checkpointing (frees most stored activations; costs ~30% more compute)",
            "Halve the per-device micro batch and double gradient accumulation (activations scale with the batch)",
            "Shorten the maximum sequence length (activations scale with tokens)",
            "Use SDPA or FlashAttention (attention without the seq x seq score matrix)",
        ],
        Some(Component::LogitsLoss) => &[
            "Use a fused or chunked cross-entropy (e.g. use_liger_kernel: true): the batch x seq x vocab fp32 logits are never materialised",
            "Halve the per-device micro batch and double gradient accumulation (logits scale with batch x seq x vocab)",
            "Shorten the maximum sequence length (logits scale with tokens)",
        ],
        Some(Component::Optimizer) => &[
            "Use an 8-bit or paged optimizer (optim: paged_adamw_8bit): AdamW state drops from 8 to 2 bytes per parameter",
            "Train LoRA/QLoRA adapters instead of all weights (optimizer state only for the adapters)",
            "Shard or offload optimizer state (DeepSpeed ZeRO-1/2, FSDP, or CPU offload)",
        ],
        Some(Component::Gradients) => &[
            "Train LoRA/QLoRA adapters instead of all weights (gradients only for the adapters)",
            "Halve the per-device micro batch and double gradient accumulation (activation gradients scale with the batch)",
            "Turn on gradient checkpointing (fewer activations kept for the backward pass)",
            "Shard gradients across GPUs (DeepSpeed ZeRO-2/3 or FSDP)",
        ],
        Some(Component::Weights) => &[
            "Load the model in 4-bit (QLoRA, load_in_4bit) or 8-bit: weights drop from 2 to ~0.5-1 byte per parameter",
            "Load the weights in bf16/fp16 instead of fp32 (torch_dtype: bfloat16)",
            "Shard the weights across GPUs (FSDP or DeepSpeed ZeRO-3) or pick a smaller model",
        ],
        Some(Component::Generation) => &[
            "Generate fewer sequences at once (a smaller generation batch or num_generations): the KV cache scales with them",
            "Shorten max_completion_length / max_new_tokens (the KV cache grows with every generated token)",
            "Lower the vLLM memory fraction (vllm_gpu_memory_utilization) or run vLLM on its own GPU (server mode)",
        ],
        None => &[
            "Halve the per-device micro batch and double gradient accumulation",
            "Turn on gradient checkpointing",
            "Shorten the maximum sequence length",
            "Use an 8-bit or paged optimizer, or LoRA/QLoRA instead of full fine-tuning",
        ],
    };
    titles.iter().map(|t| Advice::text(*t)).collect()
}

/// A change the estimator can make to the config, with what it frees.
#[derive(Debug, Clone, PartialEq)]
pub struct Lever {
    pub title: String,
    pub saves_bytes: u64,
    pub fixes: Vec<Fix>,
}

/// The levers chosen to cover a shortfall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeverChoice {
    /// Indices into the levers given, in the order given.
    pub(crate) chosen: Vec<usize>,
    pub(crate) saves_bytes: u64,
    /// Shortfall plus the 10 % margin.
    target_bytes: u64,
    /// Whether `saves_bytes` reaches the target; when not, `chosen` is the best effort.
    pub(crate) sufficient: bool,
}

/// The most levers searched exhaustively; beyond this a greedy choice is made.
const EXHAUSTIVE_LIMIT: usize = 16;

/// The shortfall plus a 10 % margin.
fn target_bytes(shortfall: u64) -> u64 {
    shortfall.saturating_add(shortfall.div_ceil(10))
}

/// The smallest set of compatible levers whose savings reach `shortfall` + 10 %.
///
/// Savings are assumed to add up. Two levers conflict when their edits overlap (two values
/// for the same key); conflicting levers are never chosen together. Among sets of equal
/// size the one that frees most wins. When no set suffices, all compatible levers are taken
/// greedily by savings and `sufficient` is false.
pub(crate) fn smallest_sufficient_set(levers: &[Lever], shortfall: u64) -> LeverChoice {
    let target = target_bytes(shortfall);
    if target == 0 {
        return LeverChoice { chosen: Vec::new(), saves_bytes: 0, target_bytes: 0, sufficient: true };
    }
    if levers.len() <= EXHAUSTIVE_LIMIT {
        if let Some(choice) = exhaustive(levers, target) {
            return choice;
        }
    }
    greedy(levers, target)
}

fn exhaustive(levers: &[Lever], target: u64) -> Option<LeverChoice> {
    let n = levers.len();
    let mut best: Option<(u32, u64, u32)> = None;
    for mask in 1u32..(1u32 << n) {
        let members: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        let saves = members.iter().fold(0u64, |sum, &i| sum.saturating_add(levers[i].saves_bytes));
        if saves < target || !compatible(levers, &members) {
            continue;
        }
        let size = mask.count_ones();
        let better = match best {
            None => true,
            Some((best_size, best_saves, _)) => size < best_size || (size == best_size && saves > best_saves),
        };
        if better {
            best = Some((size, saves, mask));
        }
    }
    best.map(|(_, saves, mask)| LeverChoice {
        chosen: (0..n).filter(|i| mask & (1 << i) != 0).collect(),
        saves_bytes: saves,
        target_bytes: target,
        sufficient: true,
    })
}

fn greedy(levers: &[Lever], target: u64) -> LeverChoice {
    let mut order: Vec<usize> = (0..levers.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(levers[i].saves_bytes));
    let mut chosen: Vec<usize> = Vec::new();
    let mut saves = 0u64;
    for i in order {
        if saves >= target {
            break;
        }
        if levers[i].saves_bytes == 0 || !chosen.iter().all(|&j| !conflict(&levers[i], &levers[j])) {
            continue;
        }
        chosen.push(i);
        saves = saves.saturating_add(levers[i].saves_bytes);
    }
    chosen.sort_unstable();
    LeverChoice { chosen, saves_bytes: saves, target_bytes: target, sufficient: saves >= target }
}

fn compatible(levers: &[Lever], members: &[usize]) -> bool {
    members.iter().enumerate().all(|(k, &i)| members[k + 1..].iter().all(|&j| !conflict(&levers[i], &levers[j])))
}

/// Whether two levers edit overlapping bytes (or insert at the same place).
fn conflict(a: &Lever, b: &Lever) -> bool {
    let spans = |l: &Lever| l.fixes.iter().flat_map(|f| f.edits.iter().map(|e| e.span)).collect::<Vec<_>>();
    let (sa, sb) = (spans(a), spans(b));
    sa.iter().any(|x| sb.iter().any(|y| x.start < y.end && y.start < x.end || x.start == y.start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Applicability, Edit};
    use crate::span::Span;

    const GIB: u64 = 1 << 30;

    fn lever(title: &str, gib: u64, span: Option<(usize, usize)>) -> Lever {
        let fixes = span
            .map(|(s, e)| {
                vec![Fix {
                    title: title.into(),
                    applicability: Applicability::Unsafe,
                    edits: vec![Edit::replace(Span::new(s, e), "x")],
                }]
            })
            .unwrap_or_default();
        Lever { title: title.into(), saves_bytes: gib * GIB, fixes }
    }

    #[test]
    fn margin_is_ten_percent_rounded_up() {
        assert_eq!(target_bytes(100), 110);
        assert_eq!(target_bytes(101), 112);
        assert_eq!(target_bytes(0), 0);
        assert_eq!(target_bytes(u64::MAX), u64::MAX);
    }

    #[test]
    fn one_lever_beats_two_when_it_suffices() {
        let levers = [lever("a", 3, Some((0, 1))), lever("b", 5, Some((2, 3))), lever("c", 12, Some((4, 5)))];
        let choice = smallest_sufficient_set(&levers, 10 * GIB);
        assert_eq!(choice.chosen, [2]);
        assert!(choice.sufficient);
        assert_eq!(choice.target_bytes, 11 * GIB);
    }

    #[test]
    fn the_margin_can_require_a_second_lever() {
        // 10 GiB frees the shortfall but not the 10 % margin.
        let levers = [lever("a", 10, Some((0, 1))), lever("b", 1, Some((2, 3))), lever("c", 2, Some((4, 5)))];
        let choice = smallest_sufficient_set(&levers, 10 * GIB);
        assert_eq!(choice.chosen, [0, 2]);
        assert_eq!(choice.saves_bytes, 12 * GIB);
    }

    #[test]
    fn conflicting_levers_are_not_combined() {
        // Two values for the same key (overlapping edits) cannot both apply.
        let levers = [
            lever("batch 4", 6, Some((10, 12))),
            lever("batch 2", 9, Some((10, 12))),
            lever("ckpt", 4, Some((20, 20))),
        ];
        let choice = smallest_sufficient_set(&levers, 11 * GIB);
        assert_eq!(choice.chosen, [1, 2]);
        assert!(choice.sufficient);
    }

    #[test]
    fn insufficient_levers_are_a_best_effort() {
        let levers = [lever("a", 1, Some((0, 1))), lever("b", 2, Some((0, 1))), lever("c", 1, None)];
        let choice = smallest_sufficient_set(&levers, 100 * GIB);
        assert!(!choice.sufficient);
        assert_eq!(choice.chosen, [1, 2]);
        assert_eq!(choice.saves_bytes, 3 * GIB);
    }

    #[test]
    fn many_levers_use_the_greedy_path() {
        let levers: Vec<Lever> =
            (0..40).map(|i| lever("l", 1 + i % 3, Some((i as usize * 2, i as usize * 2 + 1)))).collect();
        let choice = smallest_sufficient_set(&levers, 10 * GIB);
        assert!(choice.sufficient);
        assert_eq!(choice.chosen.len(), 4);
        assert!(choice.saves_bytes >= 11 * GIB);
    }

    #[test]
    fn no_shortfall_needs_no_lever() {
        let choice = smallest_sufficient_set(&[lever("a", 1, None)], 0);
        assert!(choice.chosen.is_empty() && choice.sufficient);
    }

    #[test]
    fn static_table_covers_every_component() {
        for c in [
            None,
            Some(Component::Activations),
            Some(Component::LogitsLoss),
            Some(Component::Optimizer),
            Some(Component::Gradients),
            Some(Component::Weights),
            Some(Component::Generation),
        ] {
            let levers = static_levers(c);
            assert!(levers.len() >= 3);
            assert!(levers.iter().all(|a| a.saves_bytes.is_none() && a.fixes.is_empty()));
        }
        assert!(static_levers(Some(Component::Optimizer))[0].title.contains("8-bit"));
        assert!(static_levers(Some(Component::LogitsLoss))[0].title.contains("cross-entropy"));
    }
}
