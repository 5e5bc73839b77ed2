//! Editor settings under `oomlint`: from `initializationOptions` and
//! `workspace/didChangeConfiguration`.
//!
//! Both `{"oomlint": {...}}` and the bare object are accepted (clients differ). Unknown
//! keys and values of the wrong type are ignored rather than failing the session.

use crate::catalog::{resolve_gpu, Gpu};
use crate::diagnostic::Diagnostic;
use crate::gpu_detect::{resolve_auto, LocalProbe};
use serde_json::Value;

/// The settings an editor can send.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientOptions {
    /// A GPU name (`A10G`, `A100 80GB`) or `auto`.
    pub gpu: Option<String>,
    /// Share of the GPU that must stay free, e.g. 0.1.
    pub headroom: Option<f64>,
    /// Rule codes, code prefixes (`OOM6`) or names to report; empty means all.
    pub select: Vec<String>,
    /// Rule codes, code prefixes or names never to report.
    pub ignore: Vec<String>,
}

impl ClientOptions {
    /// Reads settings from `value`; `None` and non-objects give the defaults.
    pub fn from_json(value: Option<&Value>) -> Self {
        let Some(object) = value.map(|v| v.get("oomlint").unwrap_or(v)).and_then(Value::as_object) else {
            return Self::default();
        };
        let strings = |key: &str| -> Vec<String> {
            match object.get(key) {
                Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
                Some(Value::String(s)) => {
                    s.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
                }
                _ => Vec::new(),
            }
        };
        Self {
            gpu: object.get("gpu").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string),
            headroom: object.get("headroom").and_then(Value::as_f64).filter(|h| (0.0..1.0).contains(h)),
            select: strings("select"),
            ignore: strings("ignore"),
        }
    }

    /// Whether a `didChangeConfiguration` payload carries oomlint's settings at all
    /// (clients of the pull model send `null`, which must not reset them).
    pub fn present_in(settings: &Value) -> bool {
        const KEYS: [&str; 5] = ["oomlint", "gpu", "headroom", "select", "ignore"];
        settings.as_object().is_some_and(|object| KEYS.iter().any(|k| object.contains_key(*k)))
    }

    /// Whether `diagnostic` passes `select` and `ignore`.
    pub fn reports(&self, diagnostic: &Diagnostic) -> bool {
        let matches = |selector: &String| {
            selector.eq_ignore_ascii_case(diagnostic.rule)
                || (selector.len() <= diagnostic.code.len()
                    && diagnostic.code[..selector.len()].eq_ignore_ascii_case(selector))
        };
        (self.select.is_empty() || self.select.iter().any(matches)) && !self.ignore.iter().any(matches)
    }
}

/// The GPU a setting names, or why it names none. `auto` reads the local driver.
pub fn resolve_gpu_setting(setting: &str) -> Result<Gpu, String> {
    if setting.eq_ignore_ascii_case("auto") {
        let auto = resolve_auto(&LocalProbe, None);
        return auto.gpu.ok_or_else(|| auto.warnings.join("; "));
    }
    resolve_gpu(setting).cloned().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;
    use crate::span::Span;
    use serde_json::json;

    fn diagnostic(code: &'static str, rule: &'static str) -> Diagnostic {
        Diagnostic {
            code,
            rule,
            severity: Severity::Error,
            message: String::new(),
            span: Span::default(),
            related: Vec::new(),
            notes: Vec::new(),
            fixes: Vec::new(),
        }
    }

    #[test]
    fn reads_nested_and_bare_settings() {
        let nested =
            json!({"oomlint": {"gpu": "A10G", "headroom": 0.15, "select": ["OOM6"], "ignore": "OOM602, yaml-syntax"}});
        let options = ClientOptions::from_json(Some(&nested));
        assert_eq!(options.gpu.as_deref(), Some("A10G"));
        assert_eq!(options.headroom, Some(0.15));
        assert_eq!(options.select, ["OOM6"]);
        assert_eq!(options.ignore, ["OOM602", "yaml-syntax"]);
        assert_eq!(ClientOptions::from_json(Some(&json!({"gpu": "L4"}))).gpu.as_deref(), Some("L4"));
        assert_eq!(ClientOptions::from_json(Some(&json!({"gpu": 3, "headroom": 7}))), ClientOptions::default());
        assert_eq!(ClientOptions::from_json(Some(&json!([1]))), ClientOptions::default());
        assert!(ClientOptions::present_in(&nested) && ClientOptions::present_in(&json!({"gpu": null})));
        assert!(!ClientOptions::present_in(&Value::Null) && !ClientOptions::present_in(&json!({"yaml": {}})));
    }

    #[test]
    fn select_and_ignore_match_codes_prefixes_and_names() {
        let options = ClientOptions::from_json(Some(&json!({"select": ["oom6"], "ignore": ["low-memory-headroom"]})));
        assert!(options.reports(&diagnostic("OOM601", "exceeds-gpu-memory")));
        assert!(!options.reports(&diagnostic("OOM602", "low-memory-headroom")));
        assert!(!options.reports(&diagnostic("OOM001", "yaml-syntax")));
        assert!(ClientOptions::default().reports(&diagnostic("OOM001", "yaml-syntax")));
    }

    #[test]
    fn gpu_settings_resolve_through_the_catalog() {
        assert!(resolve_gpu_setting("A10G").is_ok());
        assert!(resolve_gpu_setting("not-a-gpu").is_err());
    }
}
