//! The argument dataclasses a repository defines for its own training scripts, as the leaf
//! found them around a config (`model::Resolver::own_arguments`): a script that parses a
//! TRL or transformers config with `TrlParser((ScriptArguments, SFTConfig, ModelConfig))`
//! or `HfArgumentParser(...)` accepts the fields of its own `ScriptArguments` in that config.

use std::collections::BTreeMap;

/// The dataclasses of a repository's scripts that a `TrlParser`/`HfArgumentParser` call
/// takes, and their fields (with those of their bases defined in the repository).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnArguments {
    /// `ScriptArguments (scripts/run_sft.py)`: each class with the file that defines it.
    pub classes: Vec<String>,
    /// Every field name of those classes, with the first class (as in `classes`) that has it.
    pub fields: BTreeMap<String, String>,
}

impl OwnArguments {
    /// Whether `key` is a field of one of the classes.
    pub fn defines(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }

    /// The class that has the field `key`, as listed in `classes`.
    pub fn owner(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    /// The classes for a message: "`ScriptArguments` (scripts/run_sft.py), …" (three at most).
    pub fn describe(&self) -> String {
        let mut named: Vec<String> = self.classes.iter().take(3).cloned().collect();
        if self.classes.len() > 3 {
            named.push(format!("{} more", self.classes.len() - 3));
        }
        named.join(", ")
    }
}
