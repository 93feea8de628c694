//! Text edits on existing files: insertion above `+kubebuilder:scaffold:<name>` markers, Go import
//! insertion in sorted position, and uncommenting of blocks.
//!
//! Marker syntax is Kubebuilder's: a line whose content, after trimming and removing the comment
//! token (`//` in Go, `#` in YAML, Makefiles and shell), is `+kubebuilder:scaffold:<name>`.
//! Inserted text takes the indentation of the marker line. An insertion is skipped when the
//! fragment's non-blank lines, trimmed, already appear as consecutive non-blank lines of the file.

use memchr::memmem;
use std::borrow::Cow;
use std::path::Path;

/// The line-comment token for a file, by extension or name.
pub fn comment_token(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("go" | "rs") => Some("//"),
        Some("yaml" | "yml" | "sh" | "mk" | "toml") => Some("#"),
        _ if name == "Makefile" || name == "Dockerfile" || name == "PROJECT" => Some("#"),
        _ => None,
    }
}

/// Whether `line` is the marker `name` for the comment token `token`.
pub fn is_marker(line: &str, token: &str, name: &str) -> bool {
    line.trim()
        .strip_prefix(token)
        .and_then(|rest| rest.trim().strip_prefix("+kubebuilder:scaffold:"))
        .is_some_and(|n| n == name)
}

fn indentation(line: &str) -> &str {
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
fn split_lines(content: &str) -> (Vec<Cow<'_, str>>, bool) {
    let trailing_newline = content.ends_with('\n');
    let lines = lines(content).into_iter().map(Cow::Borrowed).collect();
    (lines, trailing_newline)
}

fn join_lines(lines: &[Cow<'_, str>], trailing_newline: bool) -> String {
    let mut s = lines.join("\n");
    if trailing_newline || lines.is_empty() {
        s.push('\n');
    }
    s
}

fn indent_fragment<'a>(fragment: &str, indent: &str) -> Vec<Cow<'a, str>> {
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
fn direct(content: &str) -> bool {
    #[cfg(test)]
    if LINE_BY_LINE.with(std::cell::Cell::get) {
        return false;
    }
    memchr::memchr(b'\r', content.as_bytes()).is_none()
}

#[cfg(test)]
thread_local! {
    /// Tests set this to compare the direct edits with the line-by-line ones.
    static LINE_BY_LINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Why code cannot be inserted at a marker.
#[derive(Debug, PartialEq)]
pub enum MarkerError {
    /// The marker (as written here) is not in the file.
    Missing(String),
    /// The marker is where inserted code would not be Go code (1-based line).
    Misplaced {
        marker: String,
        line: usize,
        why: &'static str,
    },
    /// The marker appears more than once (1-based lines).
    Duplicate { marker: String, lines: Vec<usize> },
}

impl std::fmt::Display for MarkerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MarkerError::Missing(m) => write!(f, "the marker `{m}` is missing"),
            MarkerError::Misplaced { marker, line, why } => write!(
                f,
                "the marker `{marker}` on line {line} is {why}, where inserted code would not compile; move it back to where new code belongs"
            ),
            MarkerError::Duplicate { marker, lines } => write!(
                f,
                "the marker `{marker}` appears more than once (lines {}); keep only the one where new code belongs",
                lines
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        }
    }
}

/// Where a Go marker line cannot take code: above the package clause, or inside a raw string
/// literal or a block comment. `before` is the text above the marker line; a small lexer runs
/// over it. `None` when the marker line is ordinary Go.
pub fn go_marker_problem(before: &str) -> Option<&'static str> {
    #[derive(PartialEq)]
    enum St {
        Code,
        Block,
        Raw,
    }
    // One pass over the bytes (no line splitting: the text above a marker near the end of a
    // large main.go is most of the file, and this runs for every edit). Ordinary code and
    // string contents are skipped by vectorised searches for the bytes that can end them.
    let b = before.as_bytes();
    let mut st = St::Code;
    let mut package = false;
    let mut line_start = true;
    // The next `'` at or after some earlier position (`usize::MAX`: none); 0 until searched for.
    let mut apostrophe = 0;
    // Only a backquote or `/*` can leave the lexer in a state that lasts past a line's end.
    // Once the package clause is behind and neither comes again, the marker is in code: the
    // rest (most of a large main.go) need not be read.
    // (`*` is rare in Go, so `/*` is found from its `*`.)
    let last_block = memchr::memrchr_iter(b'*', b).find(|&k| k > 0 && b[k - 1] == b'/');
    let last_opener = [memchr::memrchr(b'`', b), last_block.map(|k| k - 1)]
        .into_iter()
        .flatten()
        .max();
    let mut i = 0;
    while i < b.len() {
        match st {
            St::Block => match memmem::find(&b[i..], b"*/") {
                Some(j) => {
                    i += j + 2;
                    st = St::Code;
                    line_start = false;
                }
                None => break,
            },
            St::Raw => match memchr::memchr(b'`', &b[i..]) {
                Some(j) => {
                    i += j + 1;
                    st = St::Code;
                    line_start = false;
                }
                None => break,
            },
            St::Code => {
                if line_start && !package {
                    let t = before[i..].trim_start_matches([' ', '\t', '\r']);
                    if t.starts_with("package") && t[7..].starts_with(|c: char| c.is_whitespace()) {
                        package = true;
                    }
                }
                if package && last_opener.is_none_or(|k| k < i) {
                    break;
                }
                line_start = false;
                match b[i] {
                    b'\n' => {
                        i += 1;
                        line_start = true;
                    }
                    b'/' if b.get(i + 1) == Some(&b'/') => match memchr::memchr(b'\n', &b[i..]) {
                        Some(j) => i += j,
                        None => break,
                    },
                    b'/' if b.get(i + 1) == Some(&b'*') => {
                        st = St::Block;
                        i += 2;
                    }
                    b'`' => {
                        st = St::Raw;
                        i += 1;
                    }
                    q @ (b'"' | b'\'') => {
                        // To the closing quote (an escape skips the byte after it) or the
                        // line's end, where an unterminated literal stops.
                        i += 1;
                        loop {
                            // (After an escape at the very end, `i` is past it.)
                            let rest = b.get(i..).unwrap_or_default();
                            match memchr::memchr3(q, b'\n', b'\\', rest).map(|j| i + j) {
                                Some(j) if b[j] == b'\\' => i = j + 2,
                                Some(j) => {
                                    i = j + usize::from(b[j] == q);
                                    break;
                                }
                                None => {
                                    i = b.len();
                                    break;
                                }
                            }
                        }
                    }
                    // Skip to the next byte that can start a comment or a literal (or a line,
                    // while the package clause is still to be found).
                    _ => {
                        let next = if package {
                            // Three of the four bytes by one vectorised search; `'` is rare in
                            // Go, so its next position is found once and kept until passed.
                            if apostrophe < i + 1 {
                                apostrophe = memchr::memchr(b'\'', &b[i + 1..])
                                    .map_or(usize::MAX, |j| i + 1 + j);
                            }
                            let other = memchr::memchr3(b'/', b'`', b'"', &b[i + 1..])
                                .map_or(usize::MAX, |j| i + 1 + j);
                            let n = other.min(apostrophe);
                            (n != usize::MAX).then_some(n)
                        } else {
                            find_any(b, i + 1, [b'/', b'`', b'"', b'\'', b'\n'])
                        };
                        i = next.unwrap_or(b.len());
                    }
                }
            }
        }
    }
    match st {
        St::Raw => Some("inside a raw string literal"),
        St::Block => Some("inside a /* */ comment"),
        St::Code if !package => Some("above the package clause"),
        St::Code => None,
    }
}

/// The first index at or after `from` holding one of `needles`, found eight bytes at a time
/// (each word is tested for every needle at once; a candidate is confirmed byte by byte, as
/// the test can flag a byte above a real match).
fn find_any<const N: usize>(b: &[u8], from: usize, needles: [u8; N]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        let mut hits = 0;
        for n in needles {
            let x = w ^ (ONES * u64::from(n));
            hits |= x.wrapping_sub(ONES) & !x & HIGH;
        }
        while hits != 0 {
            let at = i + hits.trailing_zeros() as usize / 8;
            if needles.contains(&b[at]) {
                return Some(at);
            }
            hits &= hits - 1;
        }
        i += 8;
    }
    (i.min(b.len())..b.len()).find(|&j| needles.contains(&b[j]))
}

/// The marker `name` as written with comment token `token`.
fn marker_text(token: &str, name: &str) -> String {
    format!("{token} +kubebuilder:scaffold:{name}")
}

/// The 1-based number of the line starting at byte `start`.
fn line_number(content: &str, start: usize) -> usize {
    content.as_bytes()[..start]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

/// Whether the marker line starting at byte `start` may take code: in Go, not above the package
/// clause, in a raw string or in a block comment. Shared by both ways of finding the marker.
fn check_placement(
    content: &str,
    start: usize,
    token: &str,
    name: &str,
    go: bool,
) -> Result<(), MarkerError> {
    if go && token == "//" {
        if let Some(why) = go_marker_problem(&content[..start]) {
            return Err(MarkerError::Misplaced {
                marker: marker_text(token, name),
                line: line_number(content, start),
                why,
            });
        }
    }
    Ok(())
}

/// The one line holding marker `name`, checked: present, not duplicated, and (for Go) where
/// code may go. `lines` are `content`'s lines; returns the line's index.
fn find_marker(
    content: &str,
    lines: &[Cow<'_, str>],
    token: &str,
    name: &str,
    go: bool,
) -> Result<usize, MarkerError> {
    let positions: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| is_marker(l, token, name))
        .map(|(i, _)| i)
        .collect();
    match positions.as_slice() {
        [] => Err(MarkerError::Missing(marker_text(token, name))),
        &[at] => {
            // Line `at` starts after the `at`-th newline.
            let start = match at {
                0 => 0,
                _ => content
                    .match_indices('\n')
                    .nth(at - 1)
                    .map_or(content.len(), |(i, _)| i + 1),
            };
            check_placement(content, start, token, name, go)?;
            Ok(at)
        }
        many => Err(MarkerError::Duplicate {
            marker: marker_text(token, name),
            lines: many.iter().map(|i| i + 1).collect(),
        }),
    }
}

/// [`find_marker`] on the text directly: the byte range (without the newline) of the one line
/// holding marker `name`, with the same checks and errors.
fn find_marker_direct(
    content: &str,
    token: &str,
    name: &str,
    go: bool,
) -> Result<(usize, usize), MarkerError> {
    match marker_lines(content, token, name).as_slice() {
        [] => Err(MarkerError::Missing(marker_text(token, name))),
        &[(start, end)] => {
            check_placement(content, start, token, name, go)?;
            Ok((start, end))
        }
        many => Err(MarkerError::Duplicate {
            marker: marker_text(token, name),
            lines: many.iter().map(|&(s, _)| line_number(content, s)).collect(),
        }),
    }
}

/// Whether `fragment` is already in `content`. In `#`-comment files a fragment counts as present
/// whether it is commented out or not: YAML fragments are inserted commented and enabled
/// afterwards.
fn fragment_present(content: &str, token: &str, fragment: &str) -> bool {
    if token == "#" {
        fragment_in(content, fragment, uncommented)
    } else {
        contains_fragment(content, fragment)
    }
}

/// A line as [`uncomment_all`] then [`contains_fragment`] compare it: one leading `#` (after
/// the indentation) removed, trimmed.
fn uncommented(line: &str) -> &str {
    let rest = &line[indentation(line).len()..];
    rest.strip_prefix('#').unwrap_or(rest).trim()
}

/// Whether the non-blank lines of `fragment` appear, consecutively, in `content`, each line of
/// both texts first read through `norm` (which must give a trimmed substring of its line), without
/// copying `content`. [`contains_fragment`] is this with `str::trim`.
fn fragment_in(content: &str, fragment: &str, norm: fn(&str) -> &str) -> bool {
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

/// Byte ranges (without the newline) of the lines holding marker `name`, found by searching
/// for the marker text instead of walking every line.
fn marker_lines(content: &str, token: &str, name: &str) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = vec![];
    for at in memmem::find_iter(content.as_bytes(), "+kubebuilder:scaffold:") {
        let (start, end) = line_around(content, at);
        if out.last().is_none_or(|l| l.0 != start) && is_marker(&content[start..end], token, name) {
            out.push((start, end));
        }
    }
    out
}

/// Whether `content` has a line holding marker `name` (found as [`marker_lines`] finds them).
pub fn has_marker(content: &str, token: &str, name: &str) -> bool {
    !marker_lines(content, token, name).is_empty()
}

/// The byte range (without the newline) of the line holding byte `at`.
fn line_around(content: &str, at: usize) -> (usize, usize) {
    let end = memchr::memchr(b'\n', &content.as_bytes()[at..]).map_or(content.len(), |i| at + i);
    (line_start(content, at), end)
}

/// The start of the line holding byte `at`.
fn line_start(content: &str, at: usize) -> usize {
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
fn insert_lines(content: &str, at: usize, lines: &[Cow<'_, str>]) -> String {
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

/// Insert each fragment (unless already present) directly above the one line holding the
/// marker; a missing, duplicated or (Go) misplaced marker is an error.
#[cfg(test)]
pub fn insert_above<'a>(
    content: &'a str,
    token: &str,
    name: &str,
    fragments: &[String],
) -> Result<Cow<'a, str>, MarkerError> {
    insert_above_in(content, token, name, fragments, true)
}

/// [`insert_above`] for a file of `path`: Go's placement rules apply to Go files only (a Rust
/// file shares the `//` token but has no package clause).
pub fn insert_above_for<'a>(
    path: &Path,
    content: &'a str,
    token: &str,
    name: &str,
    fragments: &[String],
) -> Result<Cow<'a, str>, MarkerError> {
    let go = path.extension().is_some_and(|e| e == "go");
    insert_above_in(content, token, name, fragments, go)
}

fn insert_above_in<'a>(
    content: &'a str,
    token: &str,
    name: &str,
    fragments: &[String],
    go: bool,
) -> Result<Cow<'a, str>, MarkerError> {
    if direct(content) {
        let (start, end) = find_marker_direct(content, token, name, go)?;
        let indent = indentation(&content[start..end]);
        // The marker line's start in `current`; each insertion lands above it.
        let mut at = start;
        let mut current = Cow::Borrowed(content);
        for fragment in fragments {
            if fragment_present(&current, token, fragment) {
                continue;
            }
            let out = insert_lines(&current, at, &indent_fragment(fragment, indent));
            at += out.len() - current.len();
            current = Cow::Owned(out);
        }
        return Ok(current);
    }
    let (mut lines, nl) = split_lines(content);
    let mut at = find_marker(content, &lines, token, name, go)?;
    let mut current = Cow::Borrowed(content);
    for fragment in fragments {
        if fragment_present(&current, token, fragment) {
            continue;
        }
        let indent = indentation(&lines[at]).to_string();
        let new = indent_fragment(fragment, &indent);
        let n = new.len();
        lines.splice(at..at, new);
        at += n;
        current = Cow::Owned(join_lines(&lines, nl));
    }
    Ok(current)
}

/// Compare two lines as rustfmt orders `mod` declarations: runs of digits by their value
/// (`v2` before `v10`), everything else byte by byte.
fn version_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = vec![];
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, x), (db, y)) in ca.iter().zip(cb.iter()) {
        let ord = if *da && *db {
            let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
            x.len().cmp(&y.len()).then(x.cmp(y))
        } else {
            x.cmp(y)
        };
        if ord.is_ne() {
            return ord;
        }
    }
    ca.len().cmp(&cb.len())
}

/// Insert `line` into the run of non-blank lines directly above the one line holding marker
/// `name`, at its sorted position (as rustfmt sorts `mod` declarations), unless the run holds
/// it already; it takes the marker's indentation.
pub fn insert_sorted_above<'a>(
    content: &'a str,
    token: &str,
    name: &str,
    line: &str,
) -> Result<Cow<'a, str>, MarkerError> {
    let (mut lines, nl) = split_lines(content);
    let at = find_marker(content, &lines, token, name, false)?;
    let indent = indentation(&lines[at]).to_string();
    let mut first = at;
    while first > 0
        && !lines[first - 1].trim().is_empty()
        && !lines[first - 1].trim().starts_with("//")
    {
        first -= 1;
    }
    let want = line.trim();
    if lines[first..at].iter().any(|l| l.trim() == want) {
        return Ok(Cow::Borrowed(content));
    }
    let pos = (first..at)
        .find(|&i| version_order(lines[i].trim(), want).is_gt())
        .unwrap_or(at);
    lines.insert(pos, Cow::Owned(format!("{indent}{want}")));
    Ok(Cow::Owned(join_lines(&lines, nl)))
}

/// One `import` spec: optional name and the path.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportSpec {
    pub name: Option<String>,
    pub path: String,
}

impl ImportSpec {
    pub fn new(name: Option<&str>, path: &str) -> Self {
        ImportSpec {
            name: name.map(str::to_string),
            path: path.to_string(),
        }
    }

    fn line(&self) -> String {
        match &self.name {
            Some(n) => format!("{n} \"{}\"", self.path),
            None => format!("\"{}\"", self.path),
        }
    }

    /// Parse a line of an import block (`"fmt"`, `name "a/b"`, `_ "x"`, with an optional trailing comment).
    fn parse(line: &str) -> Option<ImportSpec> {
        let t = line.trim();
        if t.starts_with("//") || t.is_empty() {
            return None;
        }
        let q = t.find('"')?;
        let end = q + 1 + t[q + 1..].find('"')?;
        let name = t[..q].trim();
        Some(ImportSpec {
            name: (!name.is_empty()).then(|| name.to_string()),
            path: t[q + 1..end].to_string(),
        })
    }
}

/// Import groups in goimports' order: standard library, third party, this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Std,
    Third,
    Local,
}

fn classify(path: &str, module: &str) -> Class {
    if path == module || path.starts_with(&format!("{module}/")) {
        Class::Local
    } else if path
        .split('/')
        .next()
        .is_some_and(|first| first.contains('.'))
    {
        Class::Third
    } else {
        Class::Std
    }
}

/// Add `spec` to the import block that holds the `imports` marker, keeping the file gofmt-clean:
/// into the blank-line-separated group of its class (std / third-party / `module`-local) at its
/// sorted position, or as a new group placed in class order. A spec already imported is left alone.
#[cfg(test)]
pub fn insert_go_import(
    content: &str,
    spec: &ImportSpec,
    module: &str,
) -> Result<String, MarkerError> {
    Ok(
        insert_go_imports(content, std::slice::from_ref(spec), module)?
            .0
            .into_owned(),
    )
}

/// [`insert_go_import`] for several imports at once: the marker is found and the file copied
/// once, however many there are. Also says whether the imports marker was there (without it
/// they go into the first import block).
pub fn insert_go_imports<'a>(
    content: &'a str,
    specs: &[ImportSpec],
    module: &str,
) -> Result<(Cow<'a, str>, bool), MarkerError> {
    if direct(content) {
        // Work on the lines from the block's `import (` to the marker only. Without a marker,
        // or without an `import (` above it, the line-by-line path below does the work.
        match find_marker_direct(content, "//", "imports", true) {
            Ok((marker, marker_end)) => {
                let mut pos = marker;
                while pos > 0 {
                    let start = line_start(content, pos - 1);
                    if content[start..pos - 1].trim_start().starts_with("import (") {
                        let end = (marker_end + 1).min(content.len());
                        let mut block = content[start..end].to_string();
                        for spec in specs {
                            let (lines, nl) = split_lines(&block);
                            let last = lines.len() - 1;
                            block = add_import(&block, lines, nl, 0, last, spec, module);
                        }
                        if block == content[start..end] {
                            return Ok((Cow::Borrowed(content), true));
                        }
                        let mut out = String::with_capacity(content.len() + block.len());
                        out.push_str(&content[..start]);
                        out.push_str(&block);
                        out.push_str(&content[end..]);
                        return Ok((Cow::Owned(out), true));
                    }
                    pos = start;
                }
            }
            Err(MarkerError::Missing(_)) => {}
            Err(e) => return Err(e),
        }
    }
    let mut out = content.to_string();
    for spec in specs {
        out = insert_go_import_lines(&out, spec, module)?;
    }
    let out = if out == content {
        Cow::Borrowed(content)
    } else {
        Cow::Owned(out)
    };
    Ok((out, has_marker(content, "//", "imports")))
}

fn insert_go_import_lines(
    content: &str,
    spec: &ImportSpec,
    module: &str,
) -> Result<String, MarkerError> {
    let (lines, nl) = split_lines(content);
    // The block ends at the imports marker when there is one, else at the first block's `)`.
    let found = match find_marker(content, &lines, "//", "imports", true) {
        Ok(m) => Some(m),
        Err(MarkerError::Missing(_)) => None,
        Err(e) => return Err(e),
    };
    let (open, marker) = match found {
        Some(m) => {
            let open = lines[..m]
                .iter()
                .rposition(|l| l.trim_start().starts_with("import ("))
                .ok_or_else(|| {
                    MarkerError::Missing(
                        "// +kubebuilder:scaffold:imports inside an `import (` block".into(),
                    )
                })?;
            (open, m)
        }
        None => {
            let open = lines
                .iter()
                .position(|l| l.trim_start().starts_with("import ("))
                .ok_or_else(|| {
                    MarkerError::Missing(
                        "// +kubebuilder:scaffold:imports (or an `import (` block)".into(),
                    )
                })?;
            let close = open
                + lines[open..]
                    .iter()
                    .position(|l| l.trim() == ")")
                    .ok_or_else(|| {
                        MarkerError::Missing("the closing `)` of the import block".into())
                    })?;
            (open, close)
        }
    };
    Ok(add_import(content, lines, nl, open, marker, spec, module))
}

/// `content` (split into `lines`) with `spec` added to the import block from line `open`
/// (`import (`) to line `marker` (the imports marker or the closing `)`).
fn add_import(
    content: &str,
    mut lines: Vec<Cow<'_, str>>,
    nl: bool,
    open: usize,
    marker: usize,
    spec: &ImportSpec,
    module: &str,
) -> String {
    if lines[open + 1..marker]
        .iter()
        .filter_map(|l| ImportSpec::parse(l))
        .any(|s| s.path == spec.path)
    {
        return content.to_string();
    }
    // Indentation: the marker's, else that of an existing spec, else a tab.
    let indent_src = if lines[marker].trim() == ")" {
        lines[open + 1..marker]
            .iter()
            .find(|l| ImportSpec::parse(l).is_some())
            .cloned()
            .unwrap_or(Cow::Borrowed("\t"))
    } else {
        lines[marker].clone()
    };
    let indent = indentation(&indent_src).to_string();
    let new_line: Cow<str> = Cow::Owned(format!("{indent}{}", spec.line()));
    let class = classify(&spec.path, module);

    // Groups: runs of non-blank lines between `import (` and the marker.
    let mut groups: Vec<(usize, usize)> = vec![]; // [start, end)
    let mut i = open + 1;
    while i < marker {
        if lines[i].trim().is_empty() {
            i += 1;
            continue;
        }
        let start = i;
        while i < marker && !lines[i].trim().is_empty() {
            i += 1;
        }
        groups.push((start, i));
    }
    let group_class = |&(s, e): &(usize, usize)| {
        lines[s..e]
            .iter()
            .find_map(|l| ImportSpec::parse(l))
            .map(|sp| classify(&sp.path, module))
    };

    // The group directly above the marker (no blank line between) ends at the marker.
    if let Some(g) = groups
        .iter()
        .rev()
        .find(|g| group_class(g) == Some(class))
        .copied()
    {
        let (start, end) = g;
        let mut at = end;
        for j in start..end {
            if let Some(existing) = ImportSpec::parse(&lines[j]) {
                if (existing.path.as_str(), existing.name.as_deref())
                    > (spec.path.as_str(), spec.name.as_deref())
                {
                    // Insert before this spec and any comment lines that lead into it.
                    let mut k = j;
                    while k > start && lines[k - 1].trim_start().starts_with("//") {
                        k -= 1;
                    }
                    at = k;
                    break;
                }
            }
        }
        if at == end {
            // After the last spec of the group (before trailing comments other than the marker).
            at = (start..end)
                .rev()
                .find(|&j| ImportSpec::parse(&lines[j]).is_some())
                .map_or(end, |j| j + 1);
        }
        lines.insert(at, new_line);
        return join_lines(&lines, nl);
    }

    // New group, before the first group of a later class, else at the end above the marker.
    if let Some(&(start, _)) = groups
        .iter()
        .find(|g| group_class(g).is_some_and(|c| c > class))
    {
        lines.splice(start..start, [new_line, Cow::Borrowed("")]);
    } else {
        let previous = lines[marker - 1].trim();
        let mut add = vec![];
        if !previous.is_empty() && !previous.starts_with("import (") {
            add.push(Cow::Borrowed(""));
        }
        add.push(new_line);
        lines.splice(marker..marker, add);
    }
    join_lines(&lines, nl)
}

/// Remove the first `#` (and nothing else) from each line of `block`'s commented form.
/// `block` is given uncommented. Returns `None` when neither form is present.
pub fn uncomment(content: &str, block: &str) -> Option<String> {
    let want: Vec<&str> = block.trim_end_matches('\n').lines().collect();
    if want.is_empty() {
        return Some(content.to_string());
    }
    let (mut lines, nl) = split_lines(content);
    let commented = |l: &str, w: &str| -> bool {
        let (ind, rest) = l.split_at(l.len() - l.trim_start().len());
        rest.strip_prefix('#')
            .is_some_and(|r| w.strip_prefix(ind) == Some(r))
    };
    for start in 0..lines.len() {
        if start + want.len() > lines.len() {
            break;
        }
        if lines[start..start + want.len()]
            .iter()
            .zip(&want)
            .all(|(l, w)| commented(l, w))
        {
            for (l, w) in lines[start..start + want.len()].iter_mut().zip(&want) {
                *l = Cow::Borrowed(w);
            }
            return Some(join_lines(&lines, nl));
        }
    }
    // Already uncommented?
    if lines
        .windows(want.len())
        .any(|w| w.iter().zip(&want).all(|(a, b)| a == b))
    {
        return Some(content.to_string());
    }
    None
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

/// Add `tags` (whole comment lines, such as `// +genclient`) at the top of the comments above
/// `type <type_name> struct`: the doc comment, or the marker block one blank line above it
/// (code-generator reads both). A tag already in those comments is not added again. `None`
/// when the declaration is missing.
pub fn tag_go_type(content: &str, type_name: &str, tags: &[String]) -> Option<String> {
    let (mut lines, nl) = split_lines(content);
    let decl = lines.iter().position(|l| {
        l.strip_prefix("type ")
            .and_then(|r| r.trim_start().strip_prefix(type_name))
            .is_some_and(|r| r.trim_start().starts_with("struct"))
    })?;
    let is_comment = |l: &str| l.trim_start().starts_with("//");
    let mut top = decl;
    while top > 0 && is_comment(&lines[top - 1]) {
        top -= 1;
    }
    if top >= 2 && lines[top - 1].trim().is_empty() && is_comment(&lines[top - 2]) {
        top -= 1;
        while top > 0 && is_comment(&lines[top - 1]) {
            top -= 1;
        }
    }
    let missing: Vec<Cow<str>> = tags
        .iter()
        .filter(|t| !lines[top..decl].iter().any(|l| l.trim() == t.trim()))
        .map(|t| Cow::Owned(t.clone()))
        .collect();
    if missing.is_empty() {
        return Some(content.to_string());
    }
    lines.splice(top..top, missing);
    Some(join_lines(&lines, nl))
}

/// Insert `text` after the last recipe line (tab-indented) of the Makefile rule `<target>:`,
/// unless it is already present. `None` when the rule is missing.
pub fn insert_after_recipe(content: &str, target: &str, text: &str) -> Option<String> {
    if contains_fragment(content, text) {
        return Some(content.to_string());
    }
    let (mut lines, nl) = split_lines(content);
    let rule = lines.iter().position(|l| {
        l.strip_prefix(target)
            .is_some_and(|r| r.starts_with(':') && !r.starts_with(":="))
    })?;
    let mut end = rule + 1;
    while end < lines.len() && lines[end].starts_with('\t') {
        end += 1;
    }
    let new: Vec<Cow<str>> = text
        .trim_end_matches('\n')
        .lines()
        .map(|l| Cow::Owned(l.to_string()))
        .collect();
    lines.splice(end..end, new);
    Some(join_lines(&lines, nl))
}

/// `text` with one leading `#` removed from every line.
#[cfg(test)]
fn uncomment_all(text: &str) -> String {
    text.lines()
        .map(|l| strip_hash(l).0)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line with one leading `#` (after indentation) removed, and whether there was one.
fn strip_hash(line: &str) -> (Cow<'_, str>, bool) {
    let ind = indentation(line);
    match line[ind.len()..].strip_prefix('#') {
        Some(rest) => {
            let mut s = String::with_capacity(line.len());
            s.push_str(ind);
            s.push_str(rest);
            (Cow::Owned(s), true)
        }
        None => (Cow::Borrowed(line), false),
    }
}

/// The YAML value of a line without its trailing ` # comment`, trimmed.
fn yaml_text(line: &str) -> &str {
    let t = line.trim();
    match t.find(" #") {
        Some(i) => t[..i].trim_end(),
        None => t,
    }
}

/// Uncomment every YAML list entry whose first line reads `start` (e.g. `- source:`) and whose
/// lines include every line of `needs` (compared without indentation and trailing comments),
/// whether the entry is commented out, partly commented (lines inserted later) or not at all.
///
/// An entry is recognised by its structure, not its comments: it runs from its first line over
/// the following lines indented deeper than its `-`, and ends at a blank line, a scaffold marker
/// or a line indented no deeper. This reads both opbuilder's own files and Kubebuilder's.
/// Returns `None` when no such entry exists.
pub fn enable_entries(content: &str, start: &str, needs: &[&str]) -> Option<String> {
    let (mut lines, nl) = split_lines(content);
    let mut found = false;
    let mut i = 0;
    while i < lines.len() {
        let (head, _) = strip_hash(&lines[i]);
        if yaml_text(&head) != start {
            i += 1;
            continue;
        }
        let depth = indentation(&head).len();
        let mut end = i + 1;
        while end < lines.len() {
            let (l, _) = strip_hash(&lines[end]);
            if l.trim().is_empty()
                || l.trim().starts_with("+kubebuilder:scaffold:")
                || indentation(&l).len() <= depth
            {
                break;
            }
            end += 1;
        }
        let texts: Vec<String> = lines[i..end]
            .iter()
            .map(|l| yaml_text(&strip_hash(l).0).to_string())
            .collect();
        if needs.iter().all(|n| texts.iter().any(|t| t == n.trim())) {
            found = true;
            for l in &mut lines[i..end] {
                let uncommented = strip_hash(l).0.into_owned();
                *l = Cow::Owned(uncommented);
            }
        }
        i = end;
    }
    found.then(|| join_lines(&lines, nl))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_mod_declarations_go_in_rustfmt_order_above_their_marker() {
        let text =
            "use a::B;\n\npub mod infra;\npub mod webapp;\n// +kubebuilder:scaffold:api-groups\n";
        let out = insert_sorted_above(text, "//", "api-groups", "pub mod core;").unwrap();
        assert_eq!(
            out,
            "use a::B;\n\npub mod core;\npub mod infra;\npub mod webapp;\n// +kubebuilder:scaffold:api-groups\n"
        );
        let out = insert_sorted_above(&out, "//", "api-groups", "pub mod zoo;").unwrap();
        assert!(
            out.contains("pub mod webapp;\npub mod zoo;\n// +kubebuilder"),
            "{out}"
        );
        // Present already: unchanged.
        assert!(matches!(
            insert_sorted_above(&out, "//", "api-groups", "pub mod infra;").unwrap(),
            Cow::Borrowed(_)
        ));
        // The first one after the comment above the marker's run, with the marker's indentation.
        let text = "fn f() {\n    // mods\n    // +kubebuilder:scaffold:x\n}\n";
        let out = insert_sorted_above(text, "//", "x", "pub mod a;").unwrap();
        assert_eq!(
            out,
            "fn f() {\n    // mods\n    pub mod a;\n    // +kubebuilder:scaffold:x\n}\n"
        );
        // Versions sort by their numbers, as rustfmt does.
        let text = "pub mod v1;\npub mod v10;\n// +kubebuilder:scaffold:versions\n";
        let out = insert_sorted_above(text, "//", "versions", "pub mod v2;").unwrap();
        assert_eq!(
            out,
            "pub mod v1;\npub mod v2;\npub mod v10;\n// +kubebuilder:scaffold:versions\n"
        );
        let out = insert_sorted_above(text, "//", "versions", "pub mod v1beta1;").unwrap();
        assert!(out.starts_with("pub mod v1;\npub mod v1beta1;\n"), "{out}");
        assert!(insert_sorted_above(text, "//", "missing", "pub mod a;").is_err());
    }

    #[test]
    fn go_placement_rules_stay_out_of_rust_files() {
        // No package clause: a Go file's marker is refused, a Rust file's is fine.
        let text = "// +kubebuilder:scaffold:x\n";
        let frag = ["a".to_string()];
        assert!(insert_above_for(Path::new("a.go"), text, "//", "x", &frag).is_err());
        assert_eq!(
            insert_above_for(Path::new("a.rs"), text, "//", "x", &frag).unwrap(),
            "a\n// +kubebuilder:scaffold:x\n"
        );
    }

    const MAIN: &str = "package main\n\nimport (\n\t\"os\"\n\n\tutilruntime \"k8s.io/apimachinery/pkg/util/runtime\"\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\t// +kubebuilder:scaffold:imports\n)\n\nfunc init() {\n\t// +kubebuilder:scaffold:scheme\n}\n";

    #[test]
    fn marker_matching_ignores_spacing_and_needs_token() {
        assert!(is_marker(
            "\t//   +kubebuilder:scaffold:imports  ",
            "//",
            "imports"
        ));
        assert!(is_marker(
            "# +kubebuilder:scaffold:crdkustomizeresource",
            "#",
            "crdkustomizeresource"
        ));
        assert!(!is_marker(
            "// +kubebuilder:scaffold:importsX",
            "//",
            "imports"
        ));
        assert!(!is_marker("+kubebuilder:scaffold:imports", "//", "imports"));
        assert_eq!(comment_token(Path::new("a/b.go")), Some("//"));
        assert_eq!(comment_token(Path::new("Makefile")), Some("#"));
        assert_eq!(comment_token(Path::new("x.yml")), Some("#"));
        assert_eq!(comment_token(Path::new("x.txt")), None);
    }

    #[test]
    fn go_insert_takes_marker_indentation_and_is_idempotent() {
        let frag = "utilruntime.Must(appv1.AddToScheme(scheme))\n".to_string();
        let once = insert_above(MAIN, "//", "scheme", std::slice::from_ref(&frag)).unwrap();
        assert!(once.contains(
            "\tutilruntime.Must(appv1.AddToScheme(scheme))\n\t// +kubebuilder:scaffold:scheme\n"
        ));
        let twice = insert_above(&once, "//", "scheme", &[frag]).unwrap();
        assert_eq!(once, twice);
    }

    #[test]
    fn multi_line_fragment_keeps_relative_indentation_and_blank_lines() {
        let src = "package main\nfunc main() {\n\t// +kubebuilder:scaffold:builder\n}\n";
        // Blank lines inside a fragment stay (without indentation); trailing ones are dropped.
        let frag = "a()\n\nif err := x(); err != nil {\n\tos.Exit(1)\n}\n\n".to_string();
        let out = insert_above(src, "//", "builder", &[frag]).unwrap();
        assert_eq!(out, "package main\nfunc main() {\n\ta()\n\n\tif err := x(); err != nil {\n\t\tos.Exit(1)\n\t}\n\t// +kubebuilder:scaffold:builder\n}\n");
    }

    #[test]
    fn a_duplicated_marker_is_an_error_naming_both_lines() {
        let src = "resources:\n  # +kubebuilder:scaffold:x\nother:\n# +kubebuilder:scaffold:x\n";
        let e = insert_above(src, "#", "x", &["- a.yaml".to_string()]).unwrap_err();
        assert_eq!(
            e,
            MarkerError::Duplicate {
                marker: "# +kubebuilder:scaffold:x".into(),
                lines: vec![2, 4]
            }
        );
        assert!(e.to_string().contains("lines 2 and 4"), "{e}");
        let go = "package main\n\nimport (\n\t// +kubebuilder:scaffold:imports\n)\n\n// +kubebuilder:scaffold:imports\n";
        assert!(matches!(
            insert_go_import(go, &ImportSpec::new(None, "fmt"), "m"),
            Err(MarkerError::Duplicate { .. })
        ));
    }

    #[test]
    fn markers_above_package_or_in_raw_strings_or_comments_take_no_code() {
        let above = "// +kubebuilder:scaffold:builder\npackage main\n";
        let e = insert_above(above, "//", "builder", &["x()".into()]).unwrap_err();
        assert!(
            e.to_string().contains("line 1 is above the package clause"),
            "{e}"
        );
        let raw = "package main\n\nvar s = `\n// +kubebuilder:scaffold:builder\n`\n";
        let e = insert_above(raw, "//", "builder", &["x()".into()]).unwrap_err();
        assert!(
            e.to_string().contains("line 4 is inside a raw string"),
            "{e}"
        );
        let block = "package main\n/*\n\t// +kubebuilder:scaffold:builder\n*/\n";
        let e = insert_above(block, "//", "builder", &["x()".into()]).unwrap_err();
        assert!(e.to_string().contains("inside a /* */ comment"), "{e}");
        let imports =
            "package main\n\nvar s = `\nimport (\n\t// +kubebuilder:scaffold:imports\n)`\n";
        assert!(matches!(
            insert_go_import(imports, &ImportSpec::new(None, "fmt"), "m"),
            Err(MarkerError::Misplaced { line: 5, .. })
        ));
        // Strings and comments that close on their line, and backquotes inside them, are fine.
        let ok = "/* licence */\npackage main // x\n\nvar a = \"`\" + '`' + `x` /* ` */\nfunc main() {\n\t// +kubebuilder:scaffold:builder\n}\n";
        assert!(insert_above(ok, "//", "builder", &["x()".into()]).is_ok());
    }

    #[test]
    fn fragments_in_order_and_partial_presence() {
        let src = "# +kubebuilder:scaffold:m\n";
        let once = insert_above(src, "#", "m", &["- a".into()]).unwrap();
        let out = insert_above(&once, "#", "m", &["- a".into(), "- b".into()]).unwrap();
        assert_eq!(out, "- a\n- b\n# +kubebuilder:scaffold:m\n");
    }

    #[test]
    fn missing_marker_is_an_error() {
        let e = insert_above("package x\n", "//", "builder", &["x".into()]).unwrap_err();
        assert!(e.to_string().contains("+kubebuilder:scaffold:builder"));
        assert!(insert_go_import("package x\n", &ImportSpec::new(None, "fmt"), "m").is_err());
    }

    #[test]
    fn first_local_import_opens_a_new_group_above_the_marker() {
        let out = insert_go_import(
            MAIN,
            &ImportSpec::new(Some("appv1"), "example.com/g/api/v1"),
            "example.com/g",
        )
        .unwrap();
        assert!(
            out.contains("\tctrl \"sigs.k8s.io/controller-runtime\"\n\n\tappv1 \"example.com/g/api/v1\"\n\t// +kubebuilder:scaffold:imports\n)"),
            "{out}"
        );
        // Sorted insertion into the existing local group, before and after.
        let out = insert_go_import(
            &out,
            &ImportSpec::new(None, "example.com/g/internal/controller"),
            "example.com/g",
        )
        .unwrap();
        let out = insert_go_import(
            &out,
            &ImportSpec::new(Some("aaa"), "example.com/g/api/a"),
            "example.com/g",
        )
        .unwrap();
        assert!(
            out.contains("\n\taaa \"example.com/g/api/a\"\n\tappv1 \"example.com/g/api/v1\"\n\t\"example.com/g/internal/controller\"\n\t// +kubebuilder:scaffold:imports\n"),
            "{out}"
        );
        // Idempotent.
        assert_eq!(
            insert_go_import(
                &out,
                &ImportSpec::new(Some("aaa"), "example.com/g/api/a"),
                "example.com/g"
            )
            .unwrap(),
            out
        );
    }

    #[test]
    fn third_party_and_std_imports_go_to_their_groups() {
        let out = insert_go_import(
            MAIN,
            &ImportSpec::new(None, "example.com/g/internal/controller"),
            "example.com/g",
        )
        .unwrap();
        let out = insert_go_import(
            &out,
            &ImportSpec::new(
                Some("certv1"),
                "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
            ),
            "example.com/g",
        )
        .unwrap();
        let out =
            insert_go_import(&out, &ImportSpec::new(None, "context"), "example.com/g").unwrap();
        assert_eq!(
            out,
            "package main\n\nimport (\n\t\"context\"\n\t\"os\"\n\n\tcertv1 \"github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1\"\n\tutilruntime \"k8s.io/apimachinery/pkg/util/runtime\"\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\n\t\"example.com/g/internal/controller\"\n\t// +kubebuilder:scaffold:imports\n)\n\nfunc init() {\n\t// +kubebuilder:scaffold:scheme\n}\n"
        );
        // All three at once: the same file, and the marker was there.
        let specs = [
            ImportSpec::new(None, "example.com/g/internal/controller"),
            ImportSpec::new(
                Some("certv1"),
                "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
            ),
            ImportSpec::new(None, "context"),
        ];
        assert_eq!(
            insert_go_imports(MAIN, &specs, "example.com/g").unwrap(),
            (Cow::Owned(out.clone()), true)
        );
        // With carriage returns (the line-by-line path): as one at a time.
        let mut one_by_one = MAIN.replace('\n', "\r\n");
        let crlf = one_by_one.clone();
        for spec in &specs {
            one_by_one = insert_go_import(&one_by_one, spec, "example.com/g").unwrap();
        }
        assert_eq!(
            insert_go_imports(&crlf, &specs, "example.com/g").unwrap(),
            (Cow::Owned(one_by_one), true)
        );
    }

    #[test]
    fn sorting_respects_leading_comments_and_byte_order() {
        let src = "package m\nimport (\n\t\"a.com/x\"\n\t// why z\n\t_ \"a.com/z\"\n\t// +kubebuilder:scaffold:imports\n)\n";
        let out = insert_go_import(src, &ImportSpec::new(None, "a.com/y"), "m").unwrap();
        assert_eq!(out, "package m\nimport (\n\t\"a.com/x\"\n\t\"a.com/y\"\n\t// why z\n\t_ \"a.com/z\"\n\t// +kubebuilder:scaffold:imports\n)\n");
        // '.' sorts before '/', as gofmt does.
        let src = "package m\nimport (\n\tfoov1 \"m/api/foo/v1\"\n\t// +kubebuilder:scaffold:imports\n)\n";
        let out = insert_go_import(
            src,
            &ImportSpec::new(Some("foopolicyv1"), "m/api/foo.policy/v1"),
            "m",
        )
        .unwrap();
        assert!(
            out.find("foo.policy").unwrap() < out.find("foo/v1").unwrap(),
            "{out}"
        );
    }

    #[test]
    fn imports_without_a_marker_go_into_the_first_block() {
        let src = "package v1\n\nimport (\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\n\tappv1 \"m/api/v1\"\n)\n\nfunc x() {}\n";
        let out = insert_go_import(src, &ImportSpec::new(None, "context"), "m").unwrap();
        let out = insert_go_import(
            &out,
            &ImportSpec::new(None, "sigs.k8s.io/controller-runtime/pkg/webhook/admission"),
            "m",
        )
        .unwrap();
        assert_eq!(
            out,
            "package v1\n\nimport (\n\t\"context\"\n\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\t\"sigs.k8s.io/controller-runtime/pkg/webhook/admission\"\n\n\tappv1 \"m/api/v1\"\n)\n\nfunc x() {}\n"
        );
        assert!(insert_go_import("package v1\n", &ImportSpec::new(None, "context"), "m").is_err());
    }

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
    fn uncomment_block_once() {
        let src = "resources:\n#- ../crd\n- ../rbac\n#patches:\n#- path: p.yaml\n#  target:\n#    kind: Deployment\n";
        let out = uncomment(src, "#- ../crd".trim_start_matches('#')).unwrap();
        assert!(out.contains("\n- ../crd\n"));
        let out = uncomment(
            &out,
            "patches:\n- path: p.yaml\n  target:\n    kind: Deployment",
        )
        .unwrap();
        assert!(
            out.ends_with("patches:\n- path: p.yaml\n  target:\n    kind: Deployment\n"),
            "{out}"
        );
        assert_eq!(uncomment(&out, "- ../crd").unwrap(), out);
        assert!(uncomment(&out, "- ../nope").is_none());
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

    #[test]
    fn commented_fragment_search_matches_uncommenting_the_whole_file() {
        // The search reads each line through `uncommented` instead of copying the file with
        // every line uncommented; both must agree on any text.
        const PIECES: &[&str] = &[
            "#", "# ", "  ", "- a.yaml", "- b.yaml", "kind: X", "\n", "\r\n", "\r", " #", "\t", "a",
        ];
        let mut seed: u64 = 0x2545_f491;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut agree_present = 0;
        for _ in 0..50000 {
            let mut text = |max: usize| -> String {
                let n = next(max);
                (0..n).map(|_| PIECES[next(PIECES.len())]).collect()
            };
            let content = text(30);
            let fragment = text(8);
            let old = contains_fragment(&uncomment_all(&content), &uncomment_all(&fragment));
            assert_eq!(
                fragment_present(&content, "#", &fragment),
                old,
                "content {content:?}, fragment {fragment:?}"
            );
            agree_present += usize::from(old);
        }
        // Both outcomes were exercised.
        assert!((1000..49000).contains(&agree_present), "{agree_present}");
    }

    #[test]
    fn go_lexer_skipping_by_words_matches_the_byte_by_byte_one() {
        // The lexer as it was before it skipped eight bytes at a time: the reference.
        fn byte_by_byte(before: &str) -> Option<&'static str> {
            #[derive(PartialEq)]
            enum St {
                Code,
                Block,
                Raw,
            }
            // One pass over the bytes (no line splitting: the text above a marker near the end of a
            // large main.go is most of the file, and this runs for every edit).
            let b = before.as_bytes();
            let mut st = St::Code;
            let mut package = false;
            let mut line_start = true;
            let mut i = 0;
            while i < b.len() {
                match st {
                    St::Block => match before[i..].find("*/") {
                        Some(j) => {
                            i += j + 2;
                            st = St::Code;
                            line_start = false;
                        }
                        None => break,
                    },
                    St::Raw => match before[i..].find('`') {
                        Some(j) => {
                            i += j + 1;
                            st = St::Code;
                            line_start = false;
                        }
                        None => break,
                    },
                    St::Code => {
                        if line_start && !package {
                            let t = before[i..].trim_start_matches([' ', '\t', '\r']);
                            if t.starts_with("package")
                                && t[7..].starts_with(|c: char| c.is_whitespace())
                            {
                                package = true;
                            }
                        }
                        line_start = false;
                        match b[i] {
                            b'\n' => {
                                i += 1;
                                line_start = true;
                            }
                            b'/' if b.get(i + 1) == Some(&b'/') => match before[i..].find('\n') {
                                Some(j) => i += j,
                                None => break,
                            },
                            b'/' if b.get(i + 1) == Some(&b'*') => {
                                st = St::Block;
                                i += 2;
                            }
                            b'`' => {
                                st = St::Raw;
                                i += 1;
                            }
                            q @ (b'"' | b'\'') => {
                                i += 1;
                                while i < b.len() && b[i] != q && b[i] != b'\n' {
                                    i += if b[i] == b'\\' { 2 } else { 1 };
                                }
                                if i < b.len() && b[i] == q {
                                    i += 1;
                                }
                            }
                            // Skip to the next byte that can start a comment or a literal (or a line,
                            // while the package clause is still to be found).
                            _ => {
                                i += 1 + b[i + 1..]
                                    .iter()
                                    .position(|&c| {
                                        matches!(c, b'/' | b'`' | b'"' | b'\'')
                                            || (c == b'\n' && !package)
                                    })
                                    .unwrap_or(b.len() - i - 1);
                            }
                        }
                    }
                }
            }
            match st {
                St::Raw => Some("inside a raw string literal"),
                St::Block => Some("inside a /* */ comment"),
                St::Code if !package => Some("above the package clause"),
                St::Code => None,
            }
        }
        const PIECES: &[&str] = &[
            "package main\n",
            "package",
            " ",
            "\n",
            "\t",
            "\r",
            "//",
            "/*",
            "*/",
            "`",
            "\"",
            "'",
            "\\",
            "x",
            "abcdefghij",
            "import (\n",
            "\"k8s.io/a\"",
            "a/b",
            "*",
            "\\\"",
        ];
        let mut seed: u64 = 0x9e37_79b9;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..50000 {
            let n = next(24);
            let text: String = (0..n).map(|_| PIECES[next(PIECES.len())]).collect();
            assert_eq!(go_marker_problem(&text), byte_by_byte(&text), "{text:?}");
        }
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

    /// Every edit gives the same result working on the text directly as line by line: the same
    /// text, or the same error (missing, duplicated or misplaced marker).
    #[test]
    fn direct_edits_match_line_by_line_edits() {
        const LINES: &[&str] = &[
            "\t// +kubebuilder:scaffold:builder",
            "// +kubebuilder:scaffold:imports",
            "  # +kubebuilder:scaffold:x",
            "package main",
            "package main",
            "import (",
            "\t\"os\"",
            "\tappv1 \"m/api/v1\"",
            "\t\"m/internal/controller\"",
            ")",
            "",
            "  ",
            "a()",
            "\tb()",
            "Complete()",
            "resources:",
            "- a.yaml",
            "var s = `",
            "`",
            "/*",
            "*/",
            "x := \"`/*\" + '`' // `",
        ];
        let mut seed: u64 = 0x0bad_cafe;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        fn both<T: PartialEq + std::fmt::Debug>(f: impl Fn() -> T) -> T {
            let direct = f();
            LINE_BY_LINE.with(|c| c.set(true));
            let lines = f();
            LINE_BY_LINE.with(|c| c.set(false));
            assert_eq!(direct, lines);
            direct
        }
        // How often each outcome came up, so the comparison covers every kind of result.
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        let mut tally = |r: Result<String, MarkerError>| {
            let kind = match r {
                Ok(_) => "ok".to_string(),
                Err(MarkerError::Missing(_)) => "missing".into(),
                Err(MarkerError::Duplicate { .. }) => "duplicate".into(),
                Err(MarkerError::Misplaced { why, .. }) => why.into(),
            };
            *seen.entry(kind).or_default() += 1;
        };
        for _ in 0..10000 {
            let mut text: String = (0..next(12))
                .map(|_| LINES[next(LINES.len())])
                .collect::<Vec<_>>()
                .join("\n");
            if next(3) > 0 {
                text.push('\n');
            }
            let frag = ["a()\n", "x()\n\ny()\n", "- a.yaml", "", "\tb()"][next(5)].to_string();
            let t = &text;
            tally(both(|| {
                insert_above(t, "//", "builder", std::slice::from_ref(&frag)).map(Cow::into_owned)
            }));
            tally(both(|| {
                insert_above(t, "#", "x", &[frag.clone(), "- b".into()]).map(Cow::into_owned)
            }));
            tally(both(|| {
                insert_go_import(t, &ImportSpec::new(Some("bv1"), "m/api/b/v1"), "m")
            }));
            tally(both(|| {
                insert_go_import(t, &ImportSpec::new(None, "context"), "m")
            }));
            both(|| insert_after_line(t, " resources: ", &frag));
            both(|| insert_before_line(t, "Complete()", &frag));
        }
        for kind in [
            "ok",
            "missing",
            "duplicate",
            "above the package clause",
            "inside a raw string literal",
            "inside a /* */ comment",
        ] {
            assert!(seen.get(kind).copied().unwrap_or(0) >= 100, "{seen:?}");
        }
    }

    const KB_STYLE: &str = "#replacements:
# - source: # for any webhook
#     kind: Service
#     version: v1
#     name: webhook-service
#     fieldPath: .metadata.name # Name of the service
#   targets:
#     - select:
#         kind: Certificate
# - source:
#     kind: Certificate
#     name: serving-cert
#     fieldPath: .metadata.namespace # Namespace of the certificate CR
#   targets: # keep the marker below
#     - select:
#         kind: CustomResourceDefinition
#         name: a.example.com
# +kubebuilder:scaffold:crdkustomizecainjectionns
# - source:
#     kind: Certificate
#     name: serving-cert
#     fieldPath: .metadata.name
#   targets:
# +kubebuilder:scaffold:crdkustomizecainjectionname
";

    #[test]
    fn entries_are_found_by_structure_and_uncommented_whole() {
        let out = enable_entries(
            KB_STYLE,
            "- source:",
            &[
                "kind: Certificate",
                "fieldPath: .metadata.namespace",
                "kind: CustomResourceDefinition",
            ],
        )
        .unwrap();
        assert!(out.contains(" - source:\n     kind: Certificate\n     name: serving-cert\n     fieldPath: .metadata.namespace # Namespace of the certificate CR\n   targets: # keep the marker below\n     - select:\n         kind: CustomResourceDefinition\n         name: a.example.com\n# +kubebuilder:scaffold:crdkustomizecainjectionns\n"), "{out}");
        // The entries around it stay commented: the marker and the next `- source:` end it.
        assert!(out.contains("# - source: # for any webhook\n"));
        assert!(out.contains("# - source:\n#     kind: Certificate\n#     name: serving-cert\n#     fieldPath: .metadata.name\n"));
        // Idempotent, and a second pass finds the (now uncommented) entry again.
        let again = enable_entries(
            &out,
            "- source:",
            &[
                "kind: Certificate",
                "fieldPath: .metadata.namespace",
                "kind: CustomResourceDefinition",
            ],
        )
        .unwrap();
        assert_eq!(out, again);
    }

    #[test]
    fn entries_need_every_line_and_report_absence() {
        // The name entry has no CRD target yet: it is not a conversion entry.
        assert_eq!(
            enable_entries(
                KB_STYLE,
                "- source:",
                &[
                    "fieldPath: .metadata.name",
                    "kind: CustomResourceDefinition",
                    "name: serving-cert"
                ],
            ),
            None
        );
        let out = enable_entries(
            KB_STYLE,
            "- source:",
            &[
                "kind: Service",
                "name: webhook-service",
                "fieldPath: .metadata.name",
            ],
        )
        .unwrap();
        assert!(out.contains("\n - source: # for any webhook\n     kind: Service\n"));
        assert!(out.contains("\n     - select:\n         kind: Certificate\n# - source:\n"));
    }

    #[test]
    fn lines_inserted_commented_into_an_enabled_entry_are_uncommented() {
        let src = " - source:\n     kind: Certificate\n   targets:\n     - select:\n         name: a\n#     - select:\n#         name: b\n# +kubebuilder:scaffold:x\n";
        let out = enable_entries(src, "- source:", &["kind: Certificate", "name: b"]).unwrap();
        assert_eq!(out, " - source:\n     kind: Certificate\n   targets:\n     - select:\n         name: a\n     - select:\n         name: b\n# +kubebuilder:scaffold:x\n");
    }

    #[test]
    fn type_tags_go_on_top_of_the_marker_block_above_the_doc_comment() {
        let src = "package v1\n\n// +kubebuilder:object:root=true\n// +kubebuilder:subresource:status\n\n// Foo is a kind.\ntype Foo struct {\n}\n\n// +kubebuilder:object:root=true\n\n// FooList lists.\ntype FooList struct {\n}\n";
        let tags = vec![
            "// +genclient".to_string(),
            "// +genclient:nonNamespaced".to_string(),
        ];
        let out = tag_go_type(src, "Foo", &tags).unwrap();
        assert!(out.contains("\n\n// +genclient\n// +genclient:nonNamespaced\n// +kubebuilder:object:root=true\n// +kubebuilder:subresource:status\n\n// Foo is a kind.\ntype Foo struct {"), "{out}");
        assert!(
            out.contains("}\n\n// +kubebuilder:object:root=true\n\n// FooList lists."),
            "{out}"
        );
        assert_eq!(tag_go_type(&out, "Foo", &tags).unwrap(), out, "idempotent");
        // A tag already present is not repeated; the missing one is added.
        let one = tag_go_type(src, "Foo", &tags[..1]).unwrap();
        assert_eq!(
            tag_go_type(&one, "Foo", &tags).unwrap(),
            out.replacen(
                "// +genclient\n// +genclient:nonNamespaced\n",
                "// +genclient:nonNamespaced\n// +genclient\n",
                1
            )
        );
        // No comment at all: right above the declaration.
        assert_eq!(
            tag_go_type("type Foo struct{}\n", "Foo", &tags[..1]).unwrap(),
            "// +genclient\ntype Foo struct{}\n"
        );
        assert!(tag_go_type(src, "Bar", &tags).is_none());
        assert!(
            tag_go_type(src, "Fo", &tags).is_none(),
            "a prefix is not the type"
        );
    }

    #[test]
    fn after_recipe_goes_below_the_last_recipe_line_of_the_rule() {
        let mk = "generate: controller-gen ## Gen.\n\t$(CONTROLLER_GEN) object\n\n.PHONY: fmt\ngenerate-client:\n\tx\n";
        let out = insert_after_recipe(mk, "generate", "\t$(MAKE) generate-client").unwrap();
        assert_eq!(out, "generate: controller-gen ## Gen.\n\t$(CONTROLLER_GEN) object\n\t$(MAKE) generate-client\n\n.PHONY: fmt\ngenerate-client:\n\tx\n");
        assert_eq!(
            insert_after_recipe(&out, "generate", "\t$(MAKE) generate-client").unwrap(),
            out
        );
        assert!(insert_after_recipe("GENERATE := 1\n", "generate", "\tx").is_none());
        assert!(insert_after_recipe("generate-client:\n\tx\n", "generate", "\ty").is_none());
    }
}
