//! What the memory model depends on beyond the plan: the framework releases that decide
//! what stays alive, and whether the longest micro-batch is the first one.

use crate::plan::Framework;
use crate::versions::{Version, Versions};

/// Facts about the run that the configuration file does not hold. The default is the
/// newest releases and a steady state in which any micro-batch may be the longest.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The installed `bitsandbytes`, when known.
    pub bitsandbytes: Option<Version>,
    /// The installed `litgpt` (or `lit-gpt` before 0.1), when known.
    pub litgpt: Option<Version>,
    /// The installed `trl`, when known: its release decides the SFT/DPO/GRPO loss path.
    pub trl: Option<Version>,
    /// The installed `transformers`, when known: from 5.0 its mixture-of-experts layers hold
    /// their experts as fused 3-D parameters.
    pub transformers: Option<Version>,
    /// The installed `unsloth`, when known: its release decides how it quantizes and adapts
    /// fused experts.
    pub unsloth: Option<Version>,
    /// The longest micro-batch is the first of the run (LitGPT's resource tables force the
    /// longest sample into iteration 0), so nothing from an earlier iteration is alive at
    /// the peak.
    pub first_batch_longest: bool,
    /// The dataset's longest sample in tokens, as the user states it (`sample-tokens`), and
    /// where: batches whose length comes from the data reach no further.
    pub sample_tokens: Option<(u64, String)>,
}

/// Which code path runs the model: it decides what autograd saves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Implementation {
    /// LitGPT's `GPT` (fused QKV, chunked head and cross-entropy, always SDPA).
    Litgpt,
    /// Hugging Face transformers modelling code (Trainer, TRL, Axolotl, LLaMA-Factory).
    Hf,
    /// Unsloth's patched modelling code (fused kernels, offloaded checkpointing).
    Unsloth,
}

impl Implementation {
    pub(crate) fn of(framework: Framework) -> Self {
        match framework {
            Framework::Litgpt => Implementation::Litgpt,
            Framework::Unsloth => Implementation::Unsloth,
            _ => Implementation::Hf,
        }
    }
}

/// The resolved consequences of a [`Context`] for one framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Behaviour {
    /// bitsandbytes' `MatMul4Bit` keeps its input on `ctx.tensors` (releases before 0.43.2,
    /// fixed by bitsandbytes PR #1270). The attribute is not freed by the backward pass, only
    /// with the autograd graph.
    pub(crate) matmul_4bit_keeps_input: bool,
    /// LitGPT's fine-tuning scripts swap the embedding for bitsandbytes' `StableEmbedding`
    /// when quantizing (litgpt PR #1770, release 0.5.0).
    pub(crate) stable_embedding: bool,
    /// Whether an earlier micro-batch of the same length precedes the peak one.
    pub(crate) steady_state: bool,
    /// The TRL loss path of this release.
    pub(crate) trl_loss: TrlLoss,
}

/// What TRL's trainers compute the loss with, by release (`trl/trainer/sft_config.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrlLoss {
    /// TRL ≤ 1.5: `loss_type="nll"` is the default; DPO and GRPO take full logits.
    FullLogits,
    /// TRL 1.6–1.14: `loss_type=None` runs `chunked_nll`; an explicit `nll` takes full logits.
    ChunkedByDefault,
    /// TRL ≥ 1.15: `nll` (the default; `chunked_nll` is its deprecated alias) attaches the fused
    /// LM head (`sft_trainer.py:1144` `add_fused_lm_head`, `:1611` `model(**inputs, fused_lm_head=True)`),
    /// and DPO and GRPO call it too (`dpo_trainer.py:1299`, `grpo_trainer.py:1498`).
    FusedHead,
}

/// bitsandbytes release that stopped keeping `MatMul4Bit`'s input (PR #1270).
const BNB_DROPS_4BIT_INPUT: [u64; 3] = [0, 43, 2];
/// LitGPT release that added `StableEmbedding` for quantized fine-tuning (PR #1770).
const LITGPT_STABLE_EMBEDDING: [u64; 3] = [0, 5, 0];
/// LitGPT releases before this one pin `bitsandbytes==0.42.0` (pyproject.toml, v0.4.0–v0.5.4).
const LITGPT_PINS_NEWER_BNB: [u64; 3] = [0, 5, 5];
const BNB_PINNED_BY_OLD_LITGPT: [u64; 3] = [0, 42, 0];
/// TRL release whose SFT default became `loss_type=None` → `chunked_nll`.
const TRL_CHUNKED_DEFAULT: [u64; 3] = [1, 6, 0];
/// TRL release whose `nll` became the fused, chunked LM head.
const TRL_FUSED_HEAD: [u64; 3] = [1, 15, 0];

impl Context {
    /// The newest releases a config's pins allow (requirements, lock files, `framework-versions`).
    pub(crate) fn from_versions(versions: &Versions) -> Context {
        Context {
            bitsandbytes: versions.newest("bitsandbytes"),
            litgpt: versions.newest("litgpt"),
            trl: versions.newest("trl"),
            transformers: versions.newest("transformers"),
            unsloth: versions.newest("unsloth"),
            first_batch_longest: false,
            sample_tokens: None,
        }
    }

    /// The bitsandbytes release in effect: the one given, else LitGPT's pin, else the newest.
    fn bitsandbytes_for(&self, framework: Framework) -> Option<Version> {
        if let Some(v) = &self.bitsandbytes {
            return Some(v.clone());
        }
        let litgpt = self.litgpt.as_ref().filter(|_| framework == Framework::Litgpt)?;
        (*litgpt < Version::release(&LITGPT_PINS_NEWER_BNB)).then(|| Version::release(&BNB_PINNED_BY_OLD_LITGPT))
    }

    pub(crate) fn behaviour(&self, framework: Framework) -> Behaviour {
        let bnb = self.bitsandbytes_for(framework);
        Behaviour {
            matmul_4bit_keeps_input: bnb.is_some_and(|v| v < Version::release(&BNB_DROPS_4BIT_INPUT)),
            stable_embedding: self.litgpt.as_ref().is_none_or(|v| *v >= Version::release(&LITGPT_STABLE_EMBEDDING)),
            steady_state: !self.first_batch_longest,
            trl_loss: match &self.trl {
                Some(v) if *v < Version::release(&TRL_CHUNKED_DEFAULT) => TrlLoss::FullLogits,
                Some(v) if *v < Version::release(&TRL_FUSED_HEAD) => TrlLoss::ChunkedByDefault,
                _ => TrlLoss::FusedHead,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Option<Version> {
        Version::parse(text)
    }

    #[test]
    fn newest_releases_by_default() {
        let b = Context::default().behaviour(Framework::Litgpt);
        assert!(!b.matmul_4bit_keeps_input);
        assert!(b.stable_embedding);
        assert!(b.steady_state);
    }

    #[test]
    fn old_litgpt_implies_its_bitsandbytes_pin() {
        let ctx = Context { litgpt: v("0.4.7"), ..Context::default() };
        let b = ctx.behaviour(Framework::Litgpt);
        assert!(b.matmul_4bit_keeps_input);
        assert!(!b.stable_embedding);
        // The pin belongs to LitGPT's own dependencies, not to other frameworks.
        assert!(!ctx.behaviour(Framework::Trl).matmul_4bit_keeps_input);
        let newer = Context { litgpt: v("0.5.5"), ..Context::default() };
        assert!(!newer.behaviour(Framework::Litgpt).matmul_4bit_keeps_input);
    }

    #[test]
    fn the_trl_release_decides_the_loss_path() {
        let loss = |trl: &str| Context { trl: v(trl), ..Context::default() }.behaviour(Framework::Trl).trl_loss;
        assert_eq!(loss("1.5.0"), TrlLoss::FullLogits);
        assert_eq!(loss("1.6.0"), TrlLoss::ChunkedByDefault);
        assert_eq!(loss("1.14.999"), TrlLoss::ChunkedByDefault);
        assert_eq!(loss("1.15.0"), TrlLoss::FusedHead);
        assert_eq!(Context::default().behaviour(Framework::Trl).trl_loss, TrlLoss::FusedHead);
    }

    #[test]
    fn an_explicit_bitsandbytes_wins() {
        let ctx = Context { litgpt: v("0.4.0"), bitsandbytes: v("0.43.2"), ..Context::default() };
        assert!(!ctx.behaviour(Framework::Litgpt).matmul_4bit_keeps_input);
        let old = Context { bitsandbytes: v("0.43.1"), ..Context::default() };
        assert!(old.behaviour(Framework::Trl).matmul_4bit_keeps_input);
    }
}
