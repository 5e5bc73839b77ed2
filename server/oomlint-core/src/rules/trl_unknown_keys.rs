//! What TRL does with a key its config classes do not have, in a config file, by release.
//! The file is read either by the `trl` CLI (`trl sft --config x.yaml`) or by a script
//! through `TrlParser.parse_args_and_config`; oomlint does not know which, so a release
//! where the two disagree gives a warning.
//!
//! | TRL | `TrlParser` (scripts) | `trl sft` | `trl dpo`/`grpo`/`kto` |
//! |---|---|---|---|
//! | ≤ 0.12 | raises | raises | raises |
//! | 0.13 – 0.17 | ignores | ignores | ignores |
//! | 0.18 | ignores | rejects (forwarded to `accelerate launch`) | ignores |
//! | 0.19 – 0.21 | raises | rejects | raises |
//! | 0.22 – 0.28 | raises | rejects | ignores |
//! | ≥ 0.29 | raises | rejects | rejects |
//!
//! Sources: `trl/commands/cli_utils.py` (≤ 0.12), `trl/scripts/utils.py`
//! (`parse_args_and_config`, `fail_with_unknown_args` since 0.19), `trl/cli.py` (0.18 –
//! 0.28), `trl/cli/main.py` (0.29), `trl/cli/commands/training.py` (≥ 1.0).

use super::Context;
use crate::format::Format;
use crate::syntax::Language;
use crate::versions::{Version, Versions};

/// What an unknown key in a TRL config file leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every reader refuses the file.
    Fails,
    /// Some readers refuse it, others drop the key.
    Depends(&'static str),
    /// Every reader drops the key: it has no effect.
    Ignored(&'static str),
}

/// The outcome under the TRL release the config runs with (the newest when none is pinned).
pub(crate) fn outcome(format: Format, versions: &Versions) -> Outcome {
    let Some(trl) = versions.newest("trl") else { return Outcome::Fails };
    let at_least = |parts: &[u64]| trl >= Version::release(parts);
    let sft = format == Format::TrlSft;
    if !at_least(&[0, 13]) || at_least(&[0, 29]) || (at_least(&[0, 19]) && !at_least(&[0, 22])) {
        Outcome::Fails
    } else if !at_least(&[0, 18]) || (!at_least(&[0, 19]) && !sft) {
        Outcome::Ignored("the pinned TRL (0.13 to 0.18) drops unknown config keys without a word")
    } else if sft && at_least(&[0, 22]) {
        Outcome::Fails
    } else if sft {
        Outcome::Depends("under the pinned TRL 0.18, `trl sft` rejects it while a script's `TrlParser` drops it")
    } else {
        Outcome::Depends(
            "under the pinned TRL (0.22 to 0.28), `trl dpo|grpo` drops it while a script's `TrlParser` raises",
        )
    }
}

/// For a TRL config file (YAML or JSON, not a script, which names its class): what an
/// unknown key leads to under the TRL release it runs with.
pub(crate) fn for_config_file(ctx: &Context) -> Option<Outcome> {
    let trl = matches!(ctx.format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo);
    let config_file = matches!(ctx.document.language, Language::Yaml | Language::Json);
    (trl && config_file).then(|| outcome(ctx.format, ctx.versions))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(format: Format, trl: &str) -> Outcome {
        let file = format!("trl=={trl}\n");
        outcome(format, &Versions::from_file("requirements.txt", &file, std::path::Path::new("requirements.txt")))
    }

    #[test]
    fn by_release_and_command() {
        assert_eq!(outcome(Format::TrlGrpo, &Versions::default()), Outcome::Fails, "the newest release");
        assert_eq!(at(Format::TrlGrpo, "0.12.2"), Outcome::Fails);
        assert!(matches!(at(Format::TrlGrpo, "0.16.0"), Outcome::Ignored(_)));
        assert!(matches!(at(Format::TrlGrpo, "0.18.0"), Outcome::Ignored(_)));
        assert!(matches!(at(Format::TrlSft, "0.18.0"), Outcome::Depends(_)));
        assert_eq!(at(Format::TrlDpo, "0.20.0"), Outcome::Fails);
        assert!(matches!(at(Format::TrlGrpo, "0.25.1"), Outcome::Depends(_)));
        assert_eq!(at(Format::TrlSft, "0.25.1"), Outcome::Fails);
        assert_eq!(at(Format::TrlGrpo, "0.29.0"), Outcome::Fails);
        assert_eq!(at(Format::TrlGrpo, "1.9.0"), Outcome::Fails);
    }
}
