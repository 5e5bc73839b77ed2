//! A fix's edits as a unified diff of the lines they touch. The edits are byte ranges of the
//! file's text; line numbers appear only in the hunk headers.

use crate::diagnostic::Edit;
use std::ops::Range;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    /// `@@ -old,count +new,count @@`
    Hunk(String),
    Context(String),
    Removed(String),
    Added(String),
}

/// The diff of `edits` on `text`, one hunk per run of touched or adjoining lines; None when an
/// edit lies outside the text, off a character boundary, or overlaps another.
pub(crate) fn unified(text: &str, edits: &[Edit]) -> Option<Vec<Line>> {
    let mut edits: Vec<&Edit> = edits.iter().collect();
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    let valid = |e: &Edit| e.span.start <= e.span.end && text.get(e.span.start..e.span.end).is_some();
    if !edits.iter().all(|e| valid(e)) || edits.windows(2).any(|w| w[0].span.end > w[1].span.start) {
        return None;
    }
    // Byte offset where each line starts; after a final newline, where the next line would.
    let starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let line_of = |offset: usize| starts.partition_point(|s| *s <= offset) - 1;
    // The lines each edit touches, merged when they touch or adjoin.
    let mut regions: Vec<(Range<usize>, Vec<&Edit>)> = Vec::new();
    for edit in edits {
        let lines = line_of(edit.span.start)..line_of(edit.span.end) + 1;
        match regions.last_mut() {
            Some((region, group)) if lines.start <= region.end => {
                region.end = region.end.max(lines.end);
                group.push(edit);
            }
            _ => regions.push((lines, vec![edit])),
        }
    }
    let mut out = Vec::new();
    let mut shift: isize = 0;
    for (lines, group) in regions {
        let bytes = starts[lines.start]..starts.get(lines.end).copied().unwrap_or(text.len());
        let mut new = String::new();
        let mut at = bytes.start;
        for edit in group {
            new.push_str(&text[at..edit.span.start]);
            new.push_str(&edit.content);
            at = edit.span.end;
        }
        new.push_str(&text[at..bytes.end]);
        let old: Vec<&str> = text[bytes].split_inclusive('\n').collect();
        let new: Vec<&str> = new.split_inclusive('\n').collect();
        out.push(Line::Hunk(format!(
            "@@ -{} +{} @@",
            header(lines.start + 1, old.len()),
            header((lines.start + 1).saturating_add_signed(shift), new.len())
        )));
        shift += new.len() as isize - old.len() as isize;
        out.extend(hunk(&old, &new));
    }
    Some(out)
}

/// `start,count` as unified diffs write it: an empty side names the line before.
fn header(start: usize, count: usize) -> String {
    match count {
        0 => format!("{},0", start - 1),
        1 => start.to_string(),
        n => format!("{start},{n}"),
    }
}

/// Lines both sides share at the start and end are context; the rest is removed, then added.
/// Lines are given with their newline and shown without it.
fn hunk(old: &[&str], new: &[&str]) -> Vec<Line> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    let show = |line: &&str| line.strip_suffix('\n').unwrap_or(line).to_string();
    let mut out: Vec<Line> = old[..prefix].iter().map(|l| Line::Context(show(l))).collect();
    out.extend(old[prefix..old.len() - suffix].iter().map(|l| Line::Removed(show(l))));
    out.extend(new[prefix..new.len() - suffix].iter().map(|l| Line::Added(show(l))));
    out.extend(old[old.len() - suffix..].iter().map(|l| Line::Context(show(l))));
    out
}

#[cfg(test)]
mod tests {
    use super::Line::{Added, Context, Hunk, Removed};
    use super::*;
    use crate::span::Span;

    fn edit(text: &str, old: &str, new: &str) -> Edit {
        let start = text.find(old).expect("old text");
        Edit::replace(Span::new(start, start + old.len()), new)
    }

    #[test]
    fn a_replaced_value_shows_its_line_before_and_after() {
        let text = "a: 1\nmax_length: 2048\nb: 2\n";
        let diff = unified(text, &[edit(text, "2048", "1024")]).expect("diff");
        assert_eq!(
            diff,
            [Hunk("@@ -2 +2 @@".into()), Removed("max_length: 2048".into()), Added("max_length: 1024".into())]
        );
    }

    #[test]
    fn edits_on_adjacent_lines_share_a_hunk_and_far_ones_do_not() {
        let text = "a: 4\nb: 4\nc: 0\nd: 0\ne: 1\n";
        let diff = unified(text, &[edit(text, "b: 4", "b: 8"), edit(text, "a: 4", "a: 2"), edit(text, "e: 1", "e: 2")])
            .expect("diff");
        assert_eq!(
            diff,
            [
                Hunk("@@ -1,2 +1,2 @@".into()),
                Removed("a: 4".into()),
                Removed("b: 4".into()),
                Added("a: 2".into()),
                Added("b: 8".into()),
                Hunk("@@ -5 +5 @@".into()),
                Removed("e: 1".into()),
                Added("e: 2".into()),
            ]
        );
    }

    #[test]
    fn insertions_add_lines_and_shift_later_hunks() {
        let text = "a: 1\nb: 2\nc: 3\nd: 4\n";
        let before_b = Edit::replace(Span::new(5, 5), "new: true\n");
        let at_end = Edit::replace(Span::new(text.len(), text.len()), "optim: adamw_8bit\n");
        let diff = unified(text, &[before_b, edit(text, "4", "5"), at_end]).expect("diff");
        assert_eq!(
            diff,
            [
                Hunk("@@ -2 +2,2 @@".into()),
                Added("new: true".into()),
                Context("b: 2".into()),
                Hunk("@@ -4 +5,2 @@".into()),
                Removed("d: 4".into()),
                Added("d: 5".into()),
                Added("optim: adamw_8bit".into()),
            ]
        );
        let appended = unified(text, &[Edit::replace(Span::new(text.len(), text.len()), "x: 1\n")]).expect("diff");
        assert_eq!(appended, [Hunk("@@ -4,0 +5 @@".into()), Added("x: 1".into())]);
        let deleted = unified(text, &[edit(text, "b: 2\n", "")]).expect("diff");
        assert_eq!(deleted, [Hunk("@@ -2,2 +2 @@".into()), Removed("b: 2".into()), Context("c: 3".into())]);
    }

    #[test]
    fn edits_outside_the_text_or_overlapping_give_no_diff() {
        let text = "a: 1\n";
        assert_eq!(unified(text, &[Edit::replace(Span::new(3, 9), "2")]), None);
        assert_eq!(unified(text, &[Edit::replace(Span::new(0, 2), "x"), Edit::replace(Span::new(1, 3), "y")]), None);
    }
}
