//! Typed reads of config keys, with the file path for errors.

use super::LocalModelError;
use crate::syntax::{Mapping, Node, Scalar};
use std::path::Path;

#[derive(Clone, Copy)]
pub(super) struct Fields<'a> {
    pub(crate) map: &'a Mapping,
    pub(crate) path: &'a Path,
}

impl<'a> Fields<'a> {
    pub(super) fn new(map: &'a Mapping, path: &'a Path) -> Self {
        Self { map, path }
    }

    fn scalar(&self, key: &str) -> Option<&'a Scalar> {
        self.map.get(key).and_then(Node::as_scalar)
    }

    /// A non-negative integer (`null`, negatives and other types read as absent).
    pub(super) fn u64(&self, key: &str) -> Option<u64> {
        self.scalar(key).and_then(Scalar::as_i64).and_then(|i| u64::try_from(i).ok())
    }

    /// The first of `keys` present as a non-negative integer.
    pub(super) fn first_u64(&self, keys: &[&str]) -> Option<u64> {
        keys.iter().find_map(|k| self.u64(k))
    }

    /// The first of `keys` present, or a [`LocalModelError::MissingField`] naming the first.
    pub(super) fn require(&self, keys: &[&str]) -> Result<u64, LocalModelError> {
        self.first_u64(keys).filter(|v| *v > 0).ok_or_else(|| LocalModelError::MissingField {
            path: self.path.to_path_buf(),
            field: keys.first().copied().unwrap_or_default().to_string(),
        })
    }

    /// A number (integer or float); other types read as absent.
    pub(super) fn f64(&self, key: &str) -> Option<f64> {
        self.scalar(key).and_then(Scalar::as_f64)
    }

    pub(super) fn bool(&self, key: &str) -> Option<bool> {
        self.scalar(key).and_then(Scalar::as_bool)
    }

    pub(super) fn str(&self, key: &str) -> Option<&'a str> {
        self.scalar(key).and_then(Scalar::as_str)
    }

    pub(super) fn mapping(&self, key: &str) -> Option<&'a Mapping> {
        self.map.get(key).and_then(Node::as_mapping)
    }

    /// A list of strings (`layer_types`); non-strings are skipped.
    pub(super) fn strings(&self, key: &str) -> Option<Vec<&'a str>> {
        let items = self.map.get(key)?.as_sequence()?;
        Some(items.iter().filter_map(|n| n.as_scalar()?.as_str()).collect())
    }

    /// A list of integers (`sliding_window_indices`); non-integers are skipped.
    pub(super) fn integers(&self, key: &str) -> Option<Vec<i64>> {
        let items = self.map.get(key)?.as_sequence()?;
        Some(items.iter().filter_map(|n| n.as_scalar()?.as_i64()).collect())
    }
}
