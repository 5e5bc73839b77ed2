//! Typed reads of document values, each with the spans of its key and value.

use crate::plan::Sourced;
use crate::syntax::{Entry, Mapping, ScalarKind};

/// A truthy value as Python sees it: a true boolean, a non-zero number, a non-empty
/// string other than the boolean words `false`/`no`/`off`/`0` (which CLI-style parsers
/// turn into False), or any list or mapping.
pub(crate) fn truthy(entry: &Entry) -> bool {
    match entry.value.as_scalar() {
        Some(s) => match s.kind {
            ScalarKind::Bool(b) => b,
            ScalarKind::Int(i) => i != 0,
            ScalarKind::Float(f) => f != 0.0,
            ScalarKind::BigInt => true,
            ScalarKind::Null => false,
            ScalarKind::Str => {
                !s.text.is_empty() && !matches!(s.text.to_ascii_lowercase().as_str(), "false" | "no" | "off" | "0")
            }
        },
        None => true,
    }
}

/// Reads values from a document's root mapping by dotted path.
pub(crate) struct Reader<'a> {
    pub(crate) root: &'a Mapping,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(root: &'a Mapping) -> Self {
        Self { root }
    }

    /// The entry at `path`; none when its value is a placeholder (`${VAR}`, `{{ var }}`):
    /// a value filled in before the framework reads the file is not known, and the plan
    /// must not take it for set, true or a number.
    pub(crate) fn entry(&self, path: &str) -> Option<&'a Entry> {
        self.root.entry_path(path).filter(|e| !e.value.as_scalar().is_some_and(|s| s.is_template()))
    }

    pub(crate) fn has(&self, path: &str) -> bool {
        self.entry(path).is_some()
    }

    /// Present with an explicit null (`key:` or `key: null`).
    pub(crate) fn is_null(&self, path: &str) -> bool {
        self.entry(path).and_then(|e| e.value.as_scalar()).is_some_and(|s| s.is_null())
    }

    fn sourced<T>(&self, path: &str, convert: impl FnOnce(&'a Entry) -> Option<T>) -> Option<Sourced<T>> {
        let entry = self.entry(path)?;
        let value = convert(entry)?;
        Some(Sourced::file(value, entry.key_span, entry.value.span))
    }

    /// A non-negative integer (also from integral floats and numeric strings like `"8"`).
    pub(crate) fn u64(&self, path: &str) -> Option<Sourced<u64>> {
        self.sourced(path, |e| {
            let s = e.value.as_scalar()?;
            match s.kind {
                ScalarKind::Str => s.text.trim().parse().ok(),
                _ => s.as_i64().and_then(|i| u64::try_from(i).ok()),
            }
        })
    }

    /// A count: a non-negative integer as [`Reader::u64`] reads it, and a negative one as 0
    /// (a count the framework rejects, not an unreadable value).
    pub(crate) fn count(&self, path: &str) -> Option<Sourced<u64>> {
        self.u64(path).or_else(|| self.i64(path).map(|n| n.map(|_| 0)))
    }

    /// An integer that may be negative (e.g. `devices: -1`).
    pub(crate) fn i64(&self, path: &str) -> Option<Sourced<i64>> {
        self.sourced(path, |e| e.value.as_scalar()?.as_i64())
    }

    pub(crate) fn f64(&self, path: &str) -> Option<Sourced<f64>> {
        self.sourced(path, |e| {
            let s = e.value.as_scalar()?;
            match s.kind {
                ScalarKind::Str => s.text.trim().parse().ok(),
                _ => s.as_f64(),
            }
        })
    }

    /// A truthy value as Python sees it (see [`truthy`]): how a flag reads that the
    /// framework tests with `if config.flag:`.
    pub(crate) fn flag(&self, path: &str) -> Option<Sourced<bool>> {
        self.sourced(path, |e| Some(truthy(e)))
    }

    /// Whether the key is given a value (not null), for settings tested with `is not None`.
    pub(crate) fn given(&self, path: &str) -> Option<Sourced<bool>> {
        self.sourced(path, |e| Some(e.value.as_scalar().is_none_or(|s| !s.is_null())))
    }

    /// A setting that may be Python's `None`: `Some(None)` for an explicit null, `Some(value)`
    /// for a value `read` accepts, None when the key is absent or its value unreadable.
    pub(crate) fn nullable<T>(
        &self,
        path: &str,
        read: impl FnOnce(&Self, &str) -> Option<Sourced<T>>,
    ) -> Option<Sourced<Option<T>>> {
        if self.is_null(path) {
            let entry = self.entry(path)?;
            return Some(Sourced::file(None, entry.key_span, entry.value.span));
        }
        read(self, path).map(|s| s.map(Some))
    }

    /// A boolean; also the strings `"true"`/`"false"` that CLI-style parsers accept.
    pub(crate) fn bool(&self, path: &str) -> Option<Sourced<bool>> {
        self.sourced(path, |e| {
            let s = e.value.as_scalar()?;
            s.as_bool().or_else(|| cli_bool(&s.text))
        })
    }

    /// Any non-null scalar, as its text.
    pub(crate) fn str(&self, path: &str) -> Option<Sourced<String>> {
        self.sourced(path, |e| {
            let s = e.value.as_scalar()?;
            (!s.is_null()).then(|| s.text.clone())
        })
    }

    /// A list of strings, or one string (split on commas when `split` is set).
    pub(crate) fn strings(&self, path: &str, split: bool) -> Option<Sourced<Vec<String>>> {
        self.sourced(path, |e| {
            if let Some(items) = e.value.as_sequence() {
                return Some(items.iter().filter_map(|n| n.as_scalar()).map(|s| s.text.clone()).collect());
            }
            let s = e.value.as_scalar()?;
            if s.is_null() {
                return None;
            }
            Some(if split {
                s.text.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
            } else {
                vec![s.text.clone()]
            })
        })
    }

    /// The first of `paths` that is present (for aliases and renamed keys).
    pub(crate) fn first<T>(
        &self,
        paths: &[&str],
        read: impl Fn(&Self, &str) -> Option<Sourced<T>>,
    ) -> Option<Sourced<T>> {
        paths.iter().find_map(|p| read(self, p))
    }
}

/// `true`/`false` in any case, as command-line parsers (argparse's `str2bool`, Hydra) accept them.
pub(crate) fn cli_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}
