//! `oomlint rules` and `oomlint rule CODE`.

use crate::rules::{find, RULES};
use std::process::ExitCode;

pub fn list() -> ExitCode {
    let mut out = String::new();
    for rule in RULES {
        out.push_str(&format!("{}  {:<36} {:<8} {}\n", rule.code, rule.name, rule.severity.as_str(), rule.summary()));
    }
    super::print(&out);
    ExitCode::SUCCESS
}

pub fn show(key: &str) -> ExitCode {
    match find(key) {
        Some(rule) => {
            super::print(&format!(
                "# {} ({})\n\nDefault severity: {}. Category: {:?}. Fix: {:?}.\n\n{}\n",
                rule.name,
                rule.code,
                rule.severity.as_str(),
                rule.category,
                rule.fix,
                rule.doc()
            ));
            ExitCode::SUCCESS
        }
        None => super::usage_error(format!("no rule `{key}`; `oomlint rules` lists them")),
    }
}
