//! DeepSpeed ZeRO's buffer sizes in elements, as the run uses them.

use crate::format::facts::{self, Framework::Deepspeed};
use crate::plan::{ZeroBuckets, ZeroSize};

/// ZeRO's buffer sizes in elements, `"auto"` resolved as the Hugging Face Trainer fills it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Buckets {
    pub(crate) reduce: u64,
    pub(crate) prefetch: u64,
    pub(crate) max_live: u64,
    pub(crate) persistence: u64,
}

impl Buckets {
    /// `"auto"` from the hidden size `h` (`transformers/integrations/deepspeed.py`
    /// `HfTrainerDeepSpeedConfig.trainer_config_finalize`): `reduce_bucket_size = h²`,
    /// `stage3_prefetch_bucket_size = 0.9·h²`, `stage3_param_persistence_threshold = 10·h`;
    /// it does not fill `stage3_max_live_parameters`, which takes DeepSpeed's default.
    pub(crate) fn resolve(buckets: &ZeroBuckets, h: u64) -> Self {
        let size = |s: ZeroSize, auto: u64| match s {
            ZeroSize::Elements(n) => n,
            ZeroSize::Auto => auto,
        };
        let max_live = facts::count(Deepspeed, "zero_optimization.stage3_max_live_parameters");
        Buckets {
            reduce: size(buckets.reduce_bucket_size, h * h),
            prefetch: size(buckets.prefetch_bucket_size, h * h * 9 / 10),
            max_live: size(buckets.max_live_parameters, max_live),
            persistence: size(buckets.param_persistence_threshold, 10 * h),
        }
    }
}
