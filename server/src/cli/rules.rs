//! `oomlint rules` and `oomlint rule CODE`.

use crate::rules::{find, RULES};
use std::process::ExitCode;

pub fn list() -> ExitCode {
    for rule in RULES {
        println!("{}  {:<36} {:<8} {}", rule.code, rule.name, rule.severity.as_str(), rule.summary());
    }
    ExitCode::SUCCESS
}

pub fn show(key: &str) -> ExitCode {
    match find(key) {
        Some(rule) => {
            println!("# {} ({})\n", rule.name, rule.code);
            println!("Default severity: {}. Category: {:?}. Fix: {:?}.\n", rule.severity.as_str(), rule.category, rule.fix);
            println!("{}", rule.doc());
            ExitCode::SUCCESS
        }
        None => super::usage_error(format!("no rule `{key}`; `oomlint rules` lists them")),
    }
}
