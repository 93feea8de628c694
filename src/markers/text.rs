//! What the edits of every format share: lines borrowed from the text, indentation, the search
//! for a fragment already present (so that every insertion is idempotent), and the plain edits
//! anchored on a line: after it, before it, or appended at the end.

use memchr::memmem;
use std::borrow::Cow;

pub(super) fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The lines of `text` read through `norm`, those left empty dropped.
fn significant_by(text: &str, norm: fn(&str) -> &str) -> Vec<&str> {
    text.lines().map(norm).filter(|l| !l.is_empty()).collect()
}

/// Whether the non-blank lines of `fragment` already appear, consecutively, in `content`
/// (each compared trimmed). Looks for the first line with a substring search, so a large file
/// costs one scan.
pub fn contains_fragment(content: &str, fragment: &str) -> bool {
    fragment_in(content, fragment, str::trim)
}

/// The lines of `s`, exactly as [`str::lines`] gives them, with the newlines found by a
/// vectorised search (`str::lines` costs about 200 instructions a line, which dominated edits
/// of large files).
pub fn lines(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 32 + 1);
    let mut start = 0;
    for at in memchr::memchr_iter(b'\n', b) {
        let l = &s[start..at];
        out.push(l.strip_suffix('\r').unwrap_or(l));
        start = at + 1;
    }
    if start < b.len() {
        out.push(&s[start..]);
    }
    out
}

/// Lines borrowed from the content (an edit replaces or inserts only a few).
pub(super) fn split_lines(content: &str) -> (Vec<Cow<'_, str>>, bool) {
    let trailing_newline = content.ends_with('\n');
    let lines = lines(content).into_iter().map(Cow::Borrowed).collect();
    (lines, trailing_newline)
}

pub(super) fn join_lines(lines: &[Cow<'_, str>], trailing_newline: bool) -> String {
    let mut s = lines.join("\n");
    if trailing_newline || lines.is_empty() {
        s.push('\n');
    }
    s
}

pub(super) fn indent_fragment<'a>(fragment: &str, indent: &str) -> Vec<Cow<'a, str>> {
    fragment
        .trim_end_matches('\n')
        .lines()
        .map(|l| {
            Cow::Owned(if l.trim().is_empty() {
                String::new()
            } else {
                format!("{indent}{l}")
            })
        })
        .collect()
}

/// Whether an edit may work on the text directly. Without carriage returns, splitting into
/// lines and joining them again changes nothing, so the result is the same.
pub(super) fn direct(content: &str) -> bool {
    #[cfg(test)]
    if LINE_BY_LINE.with(std::cell::Cell::get) {
        return false;
    }
    memchr::memchr(b'\r', content.as_bytes()).is_none()
}

#[cfg(test)]
thread_local! {
    /// Tests set this to compare the direct edits with the line-by-line ones.
    pub(super) static LINE_BY_LINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the non-blank lines of `fragment` appear, consecutively, in `content`, each line of
/// both texts first read through `norm` (which must give a trimmed substring of its line), without
/// copying `content`. [`contains_fragment`] is this with `str::trim`.
pub(super) fn fragment_in(content: &str, fragment: &str, norm: fn(&str) -> &str) -> bool {
    let needle = significant_by(fragment, norm);
    let Some((first, rest)) = needle.split_first() else {
        return true;
    };
    memmem::find_iter(content.as_bytes(), first.as_bytes()).any(|at| {
        let (start, end) = line_around(content, at);
        let line = content[start..end]
            .strip_suffix('\r')
            .unwrap_or(&content[start..end]);
        if norm(line) != *first {
            return false;
        }
        let mut following = content[end..].lines().map(norm).filter(|l| !l.is_empty());
        rest.iter().all(|want| following.next() == Some(want))
    })
}

/// The byte range (without the newline) of the line holding byte `at`.
pub(super) fn line_around(content: &str, at: usize) -> (usize, usize) {
    let end = memchr::memchr(b'\n', &content.as_bytes()[at..]).map_or(content.len(), |i| at + i);
    (line_start(content, at), end)
}

/// The start of the line holding byte `at`.
pub(super) fn line_start(content: &str, at: usize) -> usize {
    memchr::memrchr(b'\n', &content.as_bytes()[..at]).map_or(0, |i| i + 1)
}

/// The first (or last) line whose trimmed content is `anchor` (non-empty, trimmed).
fn find_line(content: &str, anchor: &str, last: bool) -> Option<(usize, usize)> {
    let is_line = |at: usize| {
        let (start, end) = line_around(content, at);
        (content[start..end].trim() == anchor).then_some((start, end))
    };
    let (text, anchor) = (content.as_bytes(), anchor.as_bytes());
    if last {
        memmem::rfind_iter(text, anchor).find_map(is_line)
    } else {
        memmem::find_iter(text, anchor).find_map(is_line)
    }
}

/// `content` with `lines` (each followed by a newline) inserted at byte `at`, a line start.
pub(super) fn insert_lines(content: &str, at: usize, lines: &[Cow<'_, str>]) -> String {
    let added: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut out = String::with_capacity(content.len() + added);
    out.push_str(&content[..at]);
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(&content[at..]);
    out
}

/// Insert `text` right after the first line whose trimmed content equals `anchor`, unless the
/// text (by significant lines) is already present. `None` when the anchor is missing.
pub fn insert_after_line<'a>(content: &'a str, anchor: &str, text: &str) -> Option<Cow<'a, str>> {
    if contains_fragment(content, text) {
        return Some(Cow::Borrowed(content));
    }
    if direct(content) && !anchor.trim().is_empty() {
        let (_, end) = find_line(content, anchor.trim(), false)?;
        let new: Vec<Cow<str>> = text
            .trim_end_matches('\n')
            .lines()
            .map(Cow::Borrowed)
            .collect();
        if end < content.len() {
            return Some(Cow::Owned(insert_lines(content, end + 1, &new)));
        }
        // The anchor is the last line and has no newline: neither does the result.
        return Some(Cow::Owned(format!("{content}\n{}", new.join("\n"))));
    }
    let (mut lines, nl) = split_lines(content);
    let at = lines.iter().position(|l| l.trim() == anchor.trim())?;
    let new: Vec<Cow<str>> = text
        .trim_end_matches('\n')
        .lines()
        .map(Cow::Borrowed)
        .collect();
    lines.splice(at + 1..at + 1, new);
    Some(Cow::Owned(join_lines(&lines, nl)))
}

/// Insert `text` above the last line whose trimmed content equals `anchor`, taking that line's
/// indentation, unless the text (by significant lines) is already present. `None` when the
/// anchor is missing.
pub fn insert_before_line<'a>(content: &'a str, anchor: &str, text: &str) -> Option<Cow<'a, str>> {
    if contains_fragment(content, text) {
        return Some(Cow::Borrowed(content));
    }
    if direct(content) && !anchor.trim().is_empty() {
        let (start, end) = find_line(content, anchor.trim(), true)?;
        let new = indent_fragment(text, indentation(&content[start..end]));
        return Some(Cow::Owned(insert_lines(content, start, &new)));
    }
    let (mut lines, nl) = split_lines(content);
    let at = lines.iter().rposition(|l| l.trim() == anchor.trim())?;
    let indent = indentation(&lines[at]).to_string();
    lines.splice(at..at, indent_fragment(text, &indent));
    Some(Cow::Owned(join_lines(&lines, nl)))
}

/// Replace the first line whose trimmed content equals `line` by `text`, which takes that line's
/// indentation, unless the text (by significant lines) is already present. `None` when neither
/// the line nor the text is there.
pub fn replace_line<'a>(content: &'a str, line: &str, text: &str) -> Option<Cow<'a, str>> {
    if contains_fragment(content, text) {
        return Some(Cow::Borrowed(content));
    }
    let (mut lines, nl) = split_lines(content);
    let at = lines.iter().position(|l| l.trim() == line.trim())?;
    let indent = indentation(&lines[at]).to_string();
    lines.splice(at..=at, indent_fragment(text, &indent));
    Some(Cow::Owned(join_lines(&lines, nl)))
}

/// Append `text` unless it is already present.
pub fn append_once<'a>(content: &'a str, text: &str) -> Cow<'a, str> {
    if contains_fragment(content, text) {
        return Cow::Borrowed(content);
    }
    let mut s = content.to_string();
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(text);
    if !s.ends_with('\n') {
        s.push('\n');
    }
    Cow::Owned(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_line_takes_the_anchor_indentation() {
        let src = "func f() {\n\treturn b.\n\t\tFor(x).\n\t\tComplete()\n}\n";
        let out = insert_before_line(src, "Complete()", "WithValidator(&V{}).").unwrap();
        assert_eq!(
            out,
            "func f() {\n\treturn b.\n\t\tFor(x).\n\t\tWithValidator(&V{}).\n\t\tComplete()\n}\n"
        );
        assert_eq!(
            insert_before_line(&out, "Complete()", "WithValidator(&V{}).").unwrap(),
            out
        );
        assert!(insert_before_line(src, "Nope()", "x").is_none());
    }

    #[test]
    fn replace_line_takes_the_line_indentation_once() {
        let src = "fn main() {\n    init();\n    run();\n}\n";
        let out = replace_line(src, "init();", "let t = setup();\nt.start();").unwrap();
        assert_eq!(
            out,
            "fn main() {\n    let t = setup();\n    t.start();\n    run();\n}\n"
        );
        assert_eq!(
            replace_line(&out, "init();", "let t = setup();\nt.start();").unwrap(),
            out
        );
        assert!(replace_line(src, "nope();", "x").is_none());
    }

    #[test]
    fn after_line_and_append() {
        let src = "resources:\n- a.yaml\n";
        let out = insert_after_line(src, "resources:", "- b.yaml").unwrap();
        assert_eq!(out, "resources:\n- b.yaml\n- a.yaml\n");
        assert_eq!(
            insert_after_line(&out, "resources:", "- b.yaml").unwrap(),
            out
        );
        assert!(insert_after_line(src, "nope:", "x").is_none());
        assert_eq!(append_once("a", "b\n"), "a\nb\n");
        assert_eq!(append_once("a\nb\n", "b\n"), "a\nb\n");
    }

    /// The search-based check agrees with comparing every window of significant lines.
    #[test]
    fn fragment_search_matches_window_comparison() {
        fn windows(content: &str, fragment: &str) -> bool {
            let needle = significant_by(fragment, str::trim);
            needle.is_empty()
                || significant_by(content, str::trim)
                    .windows(needle.len())
                    .any(|w| w == needle.as_slice())
        }
        const LINES: &[&str] = &[
            "a", " a", "a ", "b", "\tb", "", "  ", "ab", "ba", "a\r", "- a",
        ];
        let mut seed: u64 = 0x2545_f491;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..20000 {
            let mut text = |max: usize| {
                let n = next(max);
                let mut t: String = (0..n)
                    .map(|_| LINES[next(LINES.len())])
                    .collect::<Vec<_>>()
                    .join("\n");
                if next(2) == 0 {
                    t.push('\n');
                }
                t
            };
            let content = text(8);
            let fragment = text(3);
            assert_eq!(
                contains_fragment(&content, &fragment),
                windows(&content, &fragment),
                "{content:?} {fragment:?}"
            );
        }
    }

    #[test]
    fn lines_are_str_lines() {
        let mut seed: u64 = 0x1234_5678;
        for _ in 0..20000 {
            let len = {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % 40) as usize
            };
            let text: String = (0..len)
                .map(|k| {
                    let r = (seed >> (k % 60)) as usize;
                    ["a", "\n", "\r", "\u{b}", "é", "\n\n", "xyz", "\r\n"][r % 8]
                })
                .collect();
            assert_eq!(lines(&text), text.lines().collect::<Vec<_>>(), "{text:?}");
        }
    }
}
