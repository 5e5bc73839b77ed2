//! What the word under the cursor in a launch script is writing, for completion: the program
//! the command runs, read as [`super::plan`] reads it (its wrappers, its launcher's options,
//! then the program's flags), and the keys that word may set there.

use super::{base, launcher, module_target, program_flags, Launcher};
use crate::format::{openrlhf, verl, Format};
use crate::span::Span;
use crate::syntax::shell::{self, Command, Word};

/// The keys a word of a launch command sets, by the program that reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keys {
    /// verl's Hydra overrides (`key=value`) of a trainer config of [`verl::TRAINERS`].
    Verl { trainer: &'static str },
    /// OpenRLHF's flags (`--flag value`) of one of its programs, in the dotted or the
    /// underscore spelling.
    Openrlhf { program: &'static str, dotted: bool },
    /// A format's keys as `--key value` flags (the `trl` CLI, an `HfArgumentParser` script,
    /// Axolotl, LitGPT); `script`: a script of the repository, not the framework's CLI.
    Flags { format: Format, script: bool },
    /// A format's keys as `key=value` words (`llamafactory-cli train`).
    Assignments(Format),
    /// `accelerate launch`'s own options, before the program.
    AccelerateLaunch,
}

/// The word under the cursor and the keys it may set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) keys: Keys,
    /// The word up to the cursor, as written (dashes, `+` or `~` included); empty where a
    /// new word starts.
    pub(crate) typed: Span,
    /// The key part of the word (up to and with its `=`, or the whole flag), which a chosen
    /// key replaces.
    pub(crate) key: Span,
    /// The keys the command's other words set, without their dashes, `+` or `~`.
    pub(crate) given: Vec<String>,
}

/// Programs whose command word is followed by a subcommand (`trl sft`, `llamafactory-cli train`).
const SUBCOMMANDS: [&str; 5] = ["trl", "llamafactory-cli", "lmf", "axolotl", "litgpt"];

/// The word of `text` under `offset` (or the new word starting there, after blanks and line
/// continuations), when it is a key of a launch command's program or launcher.
pub(crate) fn cursor(text: &str, offset: usize) -> Option<Cursor> {
    let script = shell::parse(text)?;
    script.commands.iter().rev().find_map(|command| in_command(command, text, offset))
}

/// Where `offset` is in `command`: (the index of the word under it, or of the new word it
/// starts; whether that word exists).
fn position(command: &Command, text: &str, offset: usize) -> Option<(usize, bool)> {
    let words = &command.words;
    if let Some(i) = words.iter().position(|w| w.span.start <= offset && offset <= w.span.end) {
        return Some((i, true));
    }
    // A new word: only blanks and `\` line continuations since the command's word before it.
    let (i, before) = words.iter().enumerate().filter(|(_, w)| w.span.end < offset).max_by_key(|(_, w)| w.span.end)?;
    let between = text.get(before.span.end..offset)?.replace("\\\r\n", " ").replace("\\\n", " ");
    (!between.is_empty() && between.chars().all(|c| c == ' ' || c == '\t')).then_some((i + 1, false))
}

fn in_command(command: &Command, text: &str, offset: usize) -> Option<Cursor> {
    let (at, exists) = position(command, text, offset)?;
    let words = &command.words;
    // The word's text as written, from its start (a quote left out) to the cursor.
    let (typed, key) = if exists {
        let word = words[at].span;
        let written = text.get(word.start..word.end)?;
        let start = word.start + usize::from(written.starts_with(['"', '\'']));
        let typed = Span::new(start.min(offset), offset);
        let rest = text.get(offset..word.end)?;
        let end = match rest.find('=') {
            Some(i) => offset + i + 1,
            None => word.end - usize::from(rest.ends_with(['"', '\''])),
        };
        (typed, Span::new(typed.start, end.max(offset)))
    } else {
        (Span::new(offset, offset), Span::new(offset, offset))
    };
    let typed_text = text.get(typed.start..typed.end)?;
    if typed_text.contains('=') || typed_text.contains('$') {
        return None;
    }
    let Launcher { name, options, program, .. } = launcher(words)?;
    let program_start = words.len() - program.len();
    let options_start = program_start - options.len();
    let given = |range: std::ops::Range<usize>| -> Vec<String> {
        let others = words.iter().enumerate().filter(|(i, _)| range.contains(i) && !(exists && *i == at));
        others.filter_map(|(_, w)| given_key(w)).collect()
    };
    // Among `accelerate launch`'s options, or a new word where its program would start.
    let before_program = at < program_start || (!exists && at == program_start);
    if name == Some("accelerate launch") && at >= options_start && before_program {
        let given = given(options_start..program_start);
        return flag_word(typed_text).then_some(Cursor { keys: Keys::AccelerateLaunch, typed, key, given });
    }
    let module = module_target(program);
    let target = program.get(module.unwrap_or(0))?;
    let sub = SUBCOMMANDS.contains(&base(target));
    let args_start = program_start + module.unwrap_or(0) + 1 + usize::from(sub);
    if at < args_start {
        return None;
    }
    // The program read without the word being written, which may be anything yet.
    let mut config = None;
    let read: Vec<Word> = program
        .iter()
        .enumerate()
        .filter(|(i, _)| !(exists && program_start + i == at))
        .map(|(_, w)| w.clone())
        .collect();
    let (format, flags) = program_flags(&read, module, &mut config)?;
    let script = module.is_some() || super::text(target).ends_with(".py");
    let keys = match format {
        Format::Verl => Keys::Verl { trainer: verl::trainer(&flags) },
        Format::Openrlhf => {
            let (program, dotted) = openrlhf::spelling(&flags)?;
            Keys::Openrlhf { program, dotted }
        }
        Format::Llamafactory => Keys::Assignments(format),
        Format::Unknown | Format::Env => return None,
        format => Keys::Flags { format, script },
    };
    let fits = match keys {
        Keys::Verl { .. } | Keys::Assignments(_) => !typed_text.starts_with('-'),
        _ => flag_word(typed_text),
    };
    fits.then(|| Cursor { keys, typed, key, given: given(args_start..words.len()) })
}

/// Whether a word being written may be a flag: empty, or starting with a dash.
fn flag_word(typed: &str) -> bool {
    typed.is_empty() || typed.starts_with('-')
}

/// The key a word sets: `--key`, `--key=value`, `key=value`, `+key=value`, `~key`.
fn given_key(word: &Word) -> Option<String> {
    let t = word.text.as_deref()?;
    let key = match t.strip_prefix("--") {
        Some(flag) => flag.split('=').next()?,
        None if t.starts_with('~') => t,
        None => t.split_once('=')?.0,
    };
    let key = key.trim_start_matches(['+', '~']);
    (!key.is_empty()).then(|| key.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cursor at the `|` of `marked`, with the text without it.
    fn at(marked: &str) -> (String, Option<Cursor>) {
        let offset = marked.find('|').unwrap();
        let text = marked.replacen('|', "", 1);
        let cursor = cursor(&text, offset);
        (text, cursor)
    }

    fn typed(text: &str, cursor: &Cursor) -> String {
        text[cursor.typed.start..cursor.typed.end].to_string()
    }

    #[test]
    fn a_verl_override_being_written() {
        let (text, c) = at("python3 -m verl.trainer.main_ppo \\\n  data.train_batch_size=8 \\\n  actor_rollout_ref.rollout.gpu_| \\\n  trainer.nnodes=1\n");
        let c = c.expect("a cursor");
        assert_eq!(c.keys, Keys::Verl { trainer: "ppo_trainer" });
        assert_eq!(typed(&text, &c), "actor_rollout_ref.rollout.gpu_");
        assert_eq!(c.key, c.typed);
        assert_eq!(c.given, ["data.train_batch_size", "trainer.nnodes"]);
        // On the key of a written override: the key and its `=` are replaced.
        let (text, c) =
            at("python3 -m verl.trainer.main_ppo --config-name ppo_megatron_trainer data.train_ba|tch_size=8\n");
        let c = c.expect("a cursor");
        assert_eq!(c.keys, Keys::Verl { trainer: "ppo_megatron_trainer" });
        assert_eq!(&text[c.key.start..c.key.end], "data.train_batch_size=");
        // A value, the module, a flag of Hydra's: nothing.
        assert!(at("python3 -m verl.trainer.main_ppo data.train_batch_size=|8\n").1.is_none());
        assert!(at("python3 -m verl.trainer.ma|in_ppo data.x=1\n").1.is_none());
        assert!(at("python3 -m verl.trainer.main_ppo data.x=1 --|\n").1.is_none());
    }

    #[test]
    fn a_new_word_after_a_line_continuation() {
        let (_, c) = at("python3 -m verl.trainer.fsdp_sft_trainer \\\n  data.micro_batch_size_per_gpu=4 \\\n  |");
        let c = c.expect("a cursor");
        assert_eq!(c.keys, Keys::Verl { trainer: "sft_trainer" });
        assert!(c.typed.is_empty());
        // A new line without a continuation is another command.
        assert!(at("python3 -m verl.trainer.main_ppo data.x=1\n|").1.is_none());
    }

    #[test]
    fn openrlhf_flags_in_their_spelling() {
        let (text, c) = at("ray job submit -- python3 -m openrlhf.cli.train_ppo_ray --actor.num_nodes 1 --vllm.gpu|");
        let c = c.expect("a cursor");
        assert_eq!(c.keys, Keys::Openrlhf { program: "train_ppo_ray", dotted: true });
        assert_eq!(typed(&text, &c), "--vllm.gpu");
        assert_eq!(c.given, ["actor.num_nodes"]);
        let (_, c) = at("deepspeed --module openrlhf.cli.train_sft --pretrain x --micro_train_batch_size 2 --|");
        assert_eq!(c.expect("a cursor").keys, Keys::Openrlhf { program: "train_sft", dotted: false });
    }

    #[test]
    fn trl_llamafactory_and_accelerate_launch() {
        let (_, c) = at("trl sft --model_name_or_path x --per_dev|");
        assert_eq!(c.expect("trl").keys, Keys::Flags { format: Format::TrlSft, script: false });
        assert!(at("tr|l sft --x 1").1.is_none());
        assert!(at("trl s|ft --x 1").1.is_none());
        let (_, c) = at("llamafactory-cli train cfg.yaml per_device_train_batch_size=2 learn|");
        let c = c.expect("llamafactory");
        assert_eq!(c.keys, Keys::Assignments(Format::Llamafactory));
        assert_eq!(c.given, ["per_device_train_batch_size"]);
        let (_, c) = at("accelerate launch --num_processes 8 --mixed|");
        let c = c.expect("accelerate, no program yet");
        assert_eq!(c.keys, Keys::AccelerateLaunch);
        assert_eq!(c.given, ["num_processes"]);
        let (_, c) = at("accelerate launch --num_processes 8 \\\n  --mix| \\\n  train.py --per_device_train_batch_size 2 --gradient_checkpointing --bf16");
        assert_eq!(c.expect("accelerate before its program").keys, Keys::AccelerateLaunch);
        let (_, c) = at("accelerate launch --num_processes 8 trl_sft.py --model_name_or_path x --max_length 4096 \\\n  --per_device_train_batch_size 2 --gradient_checkpointing --bf16 --output_dir out --|");
        let keys = c.expect("the script's flags").keys;
        assert_eq!(keys, Keys::Flags { format: Format::TrlSft, script: true });
    }
}
