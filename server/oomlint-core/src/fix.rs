//! Applying fixes: byte edits on the original text, repeated until nothing changes (the
//! leaves write the result back, through one atomic writer). A fix of a launch script may
//! edit the config it names (and one of a config, the launch that names it): each fix is
//! applied whole, in every file it edits, or not at all.
//!
//! A fix is applied whole or not at all; one that overlaps an edit already taken in the
//! same round is left for the next round (the text is re-analysed in between). Bytes
//! outside the edits are never touched, so comments, quoting, indentation and key order
//! survive.

use crate::analysis::{analyze_text, Options};
use crate::catalog::local::{Checkpoint, LocalModelError};
use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::model::{LinkedFile, Resolver};
use crate::own_arguments::OwnArguments;
use crate::span::Span;
use std::path::Path;
use std::sync::Arc;

/// Rounds of fix → re-analyse before giving up on convergence.
pub const MAX_ROUNDS: usize = 10;

/// The result of applying a set of fixes once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub text: String,
    /// How many fixes were applied.
    pub count: usize,
}

fn overlaps(a: Span, b: Span) -> bool {
    (a.start < b.end && b.start < a.end) || (a.start == b.start && (a.is_empty() || b.is_empty()))
}

/// Applies `fixes` in order to `text`, skipping a fix that overlaps an earlier one or
/// that has an edit outside the text or off a character boundary.
pub fn apply(text: &str, fixes: &[&Fix]) -> Applied {
    let fixes: Vec<Vec<(usize, Edit)>> =
        fixes.iter().map(|f| f.edits.iter().map(|e| (0, e.clone())).collect()).collect();
    let (mut texts, count) = apply_in_files(&[text], &fixes);
    Applied { text: texts.swap_remove(0), count }
}

/// Applies fixes whose edits are `(file, edit)` pairs over `texts` (indexed by file), each
/// fix whole or not at all: skipped when one of its edits overlaps an edit already taken
/// in its file, or lies outside that file's text or off a character boundary.
fn apply_in_files(texts: &[&str], fixes: &[Vec<(usize, Edit)>]) -> (Vec<String>, usize) {
    let mut taken: Vec<&(usize, Edit)> = Vec::new();
    let mut count = 0;
    for edits in fixes {
        let valid = edits.iter().all(|(file, e)| {
            texts.get(*file).is_some_and(|text| {
                e.span.start <= e.span.end && text.is_char_boundary(e.span.start) && text.is_char_boundary(e.span.end)
            })
        });
        let clash = |(file, e): &(usize, Edit), (other, o): &(usize, Edit)| file == other && overlaps(o.span, e.span);
        let free = edits
            .iter()
            .enumerate()
            .all(|(i, edit)| !taken.iter().any(|t| clash(edit, t)) && !edits[..i].iter().any(|o| clash(edit, o)));
        if valid && free && !edits.is_empty() {
            taken.extend(edits);
            count += 1;
        }
    }
    taken.sort_by_key(|(file, e)| (*file, e.span.start, e.span.end));
    let out = texts
        .iter()
        .enumerate()
        .map(|(file, text)| {
            let mut out = String::with_capacity(text.len());
            let mut at = 0;
            for (_, edit) in taken.iter().filter(|(f, _)| *f == file) {
                out.push_str(&text[at..edit.span.start]);
                out.push_str(&edit.content);
                at = edit.span.end;
            }
            out.push_str(&text[at..]);
            out
        })
        .collect();
    (out, count)
}

/// The first fix of each finding that is at least as safe as `minimum`.
fn fixes_at_least(diagnostics: &[Diagnostic], minimum: Applicability) -> Vec<&Fix> {
    diagnostics.iter().filter_map(|d| d.fixes.iter().find(|f| f.applicability >= minimum)).collect()
}

/// A file that fixes of another file's findings changed: the config a launch script names,
/// or the launch that names the fixed config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedFix {
    /// Its path, as the leaf read it.
    pub path: String,
    /// Its text when first read (a leaf writes only over these bytes).
    pub original: String,
    pub text: String,
}

/// The outcome of fixing one file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed {
    pub text: String,
    /// Fixes applied over all rounds.
    pub count: usize,
    pub rounds: usize,
    /// Whether the last round found nothing more to fix.
    pub converged: bool,
    /// The files read with it that its fixes changed, in the order first changed.
    pub linked: Vec<LinkedFix>,
}

/// Fixes `text` (the content of `path`) until no applicable fix is left, at most
/// [`MAX_ROUNDS`] times. A fix may edit a file the analysis read with `text` (where a
/// launch's value is set); each round reads those files as the earlier rounds left them.
pub fn fix_text(path: &Path, text: &str, options: &Options, minimum: Applicability) -> Fixed {
    let mut current = text.to_string();
    let mut linked: Vec<LinkedFix> = Vec::new();
    let mut count = 0;
    for round in 0..MAX_ROUNDS {
        let analysis = if linked.is_empty() {
            analyze_text(path, current.clone(), options)
        } else {
            let overlay = Overlay { inner: options.resolver.clone(), fixed: linked.clone() };
            analyze_text(path, current.clone(), &Options { resolver: Some(Arc::new(overlay)), ..options.clone() })
        };
        // File 0 is the analysed text, file i + 1 the analysis's linked file i (an edit at its
        // `Span::linked` place, moved to that file's byte range).
        let in_file = |e: &Edit| match e.span.as_linked() {
            Some((file, local)) => (file + 1, Edit { span: local, content: e.content.clone() }),
            None => (0, e.clone()),
        };
        let fixes: Vec<Vec<(usize, Edit)>> = fixes_at_least(&analysis.diagnostics, minimum)
            .into_iter()
            .map(|fix| fix.edits.iter().map(in_file).collect())
            .collect();
        let texts: Vec<&str> =
            std::iter::once(current.as_str()).chain(analysis.linked_files.iter().map(|f| f.text.as_str())).collect();
        let (mut after, applied) = apply_in_files(&texts, &fixes);
        let changed = after.iter().zip(&texts).any(|(a, b)| a != b);
        if applied == 0 || !changed {
            return Fixed { text: current, count, rounds: round, converged: true, linked };
        }
        count += applied;
        for (file, text) in analysis.linked_files.iter().zip(after.drain(1..)) {
            if text == file.text {
                continue;
            }
            match linked.iter_mut().find(|l| l.path == file.path) {
                Some(l) => l.text = text,
                None => linked.push(LinkedFix { path: file.path.clone(), original: file.text.clone(), text }),
            }
        }
        current = after.swap_remove(0);
    }
    Fixed { text: current, count, rounds: MAX_ROUNDS, converged: false, linked }
}

/// The leaf's resolver, with the linked files that fixes changed read as the fixes left them.
/// Every method of [`Resolver`] is forwarded.
struct Overlay {
    inner: Option<Arc<dyn Resolver>>,
    fixed: Vec<LinkedFix>,
}

impl Overlay {
    fn current(&self, mut file: LinkedFile) -> LinkedFile {
        if let Some(fixed) = self.fixed.iter().find(|f| f.path == file.path) {
            file.text = fixed.text.clone();
        }
        file
    }
}

impl Resolver for Overlay {
    fn checkpoint(&self, config: &Path, name: &str) -> Option<Result<Checkpoint, LocalModelError>> {
        self.inner.as_ref()?.checkpoint(config, name)
    }

    fn own_arguments(&self, config: &Path) -> Option<Arc<OwnArguments>> {
        self.inner.as_ref()?.own_arguments(config)
    }

    fn hub_cache(&self, repo: &str, revision: Option<&str>) -> Option<Result<Checkpoint, LocalModelError>> {
        self.inner.as_ref()?.hub_cache(repo, revision)
    }

    fn linked_file(&self, from: &Path, name: &str) -> Option<LinkedFile> {
        self.inner.as_ref()?.linked_file(from, name).map(|f| self.current(f))
    }

    fn launch_scripts(&self, config: &Path) -> Vec<LinkedFile> {
        let scripts = self.inner.as_ref().map_or_else(Vec::new, |r| r.launch_scripts(config));
        scripts.into_iter().map(|f| self.current(f)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(edits: Vec<Edit>) -> Fix {
        Fix { title: "t".into(), applicability: Applicability::Safe, edits }
    }

    #[test]
    fn non_overlapping_edits_apply_and_overlaps_wait() {
        let text = "precision: bf16-mixed\nquantize: bnb.nf4\n";
        let a = fix(vec![Edit::replace(Span::new(11, 21), "bf16-true")]);
        let b = fix(vec![Edit::replace(Span::new(16, 21), "true")]);
        let c = fix(vec![Edit::insert(text.len(), "# end\n")]);
        let applied = apply(text, &[&a, &b, &c]);
        assert_eq!(applied.count, 2);
        assert_eq!(applied.text, "precision: bf16-true\nquantize: bnb.nf4\n# end\n");
    }

    #[test]
    fn invalid_edits_are_skipped() {
        let text = "é: 1\n";
        let inside_char = fix(vec![Edit::delete(Span::new(1, 2))]);
        let past_end = fix(vec![Edit::delete(Span::new(3, 99))]);
        let same_point = fix(vec![Edit::insert(0, "a"), Edit::insert(0, "b")]);
        assert_eq!(apply(text, &[&inside_char, &past_end, &same_point]), Applied { text: text.into(), count: 0 });
    }
}
