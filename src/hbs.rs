//! A small compiler and renderer for the part of handlebars our templates use, with the exact
//! output of the `handlebars` crate (strict mode, no escaping, default partial indentation).
//!
//! Parsing with the `handlebars` crate costs about 900 instructions per byte of template, which
//! was most of a command's run. This module parses in one linear scan. It accepts:
//!
//! - raw text, with `\{{` escapes;
//! - `{{path}}` holding a string, number or bool, where a path is ASCII identifiers joined by
//!   dots, optionally after `this.` or `../` (each `../` one scope out), or `this`, or one of
//!   `@index`, `@first`, `@last`; `{{~path}}` and `{{path~}}` drop the whitespace before or after;
//! - `{{#if path}}` / `{{#unless path}}` blocks with `{{else}}`, `{{else if path}}` and
//!   `{{else unless path}}`;
//! - `{{#each path}}` over a list, with `{{else}}` (an empty list): each item is the scope of the
//!   block (`this`), `../` the scope around it;
//! - `{{> partial}}` and `{{> partial key='text' key2="text"}}` (string parameters without
//!   backslashes), not preceded by spaces or tabs (so no partial indentation applies).
//!
//! Anything else (other helpers, `~` on other tags, comments, triple braces, `..` beyond the
//! outermost scope, other literals, partials with a context, values that are null, lists or
//! objects, `#each` over anything but a list, ...) makes [`compile`] or [`render`] return
//! [`Unsupported`], and the caller hands the template to the `handlebars` crate instead.
//! Whitespace follows that crate's rules: a block, else, close or partial tag alone on its line
//! removes the line. Unit tests compare both on every template and on random templates.

use handlebars::JsonValue as Json;
use std::borrow::Cow;

/// The template uses something outside the supported subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported;

#[derive(Debug, PartialEq)]
pub enum Node<'a> {
    Text(Cow<'a, str>),
    Var(Path<'a>),
    Block(Block<'a>),
    Each(Each<'a>),
    Partial(Partial<'a>),
}

/// Where a value is looked up.
#[derive(Debug, PartialEq, Clone, Copy)]
pub struct Path<'a> {
    /// How many scopes out (`../`).
    up: usize,
    /// The dotted names below the scope's value (empty for `this`), or the local variable's name.
    names: &'a str,
    /// The first of `names`, and the rest after its dot (empty when there is none).
    first: &'a str,
    rest: &'a str,
    /// `@names`: a variable of the enclosing `#each` (`@index`, `@first`, `@last`).
    local: bool,
}

impl<'a> Path<'a> {
    fn new(up: usize, names: &'a str, local: bool) -> Self {
        let (first, rest) = match names.bytes().position(|c| c == b'.') {
            Some(i) => (&names[..i], &names[i + 1..]),
            None => (names, ""),
        };
        Path {
            up,
            names,
            first,
            rest,
            local,
        }
    }
}

#[derive(Debug, PartialEq)]
pub struct Block<'a> {
    /// `if` or `unless`: the closing tag must repeat it.
    name: &'a str,
    /// Each branch: its condition (negated for `unless`) and its nodes.
    branches: Vec<(Cond<'a>, Vec<Node<'a>>)>,
    otherwise: Option<Vec<Node<'a>>>,
}

#[derive(Debug, PartialEq)]
pub struct Each<'a> {
    list: Path<'a>,
    body: Vec<Node<'a>>,
    otherwise: Option<Vec<Node<'a>>>,
}

#[derive(Debug, PartialEq)]
pub struct Partial<'a> {
    name: &'a str,
    /// `key='text'` parameters: names the partial sees before any of its context's.
    params: Vec<(&'a str, Json)>,
}

#[derive(Debug, PartialEq, Clone, Copy)]
struct Cond<'a> {
    negate: bool,
    path: Path<'a>,
}

/// Whether handlebars reads `name` as something other than a path: one of the helpers it
/// registers by default (a bare `{{name}}` calls the helper instead of looking the name up), or
/// a literal or keyword of its grammar.
fn reserved(name: &str) -> bool {
    matches!(
        name,
        "if" | "unless"
            | "each"
            | "with"
            | "lookup"
            | "raw"
            | "log"
            | "eq"
            | "ne"
            | "gt"
            | "gte"
            | "lt"
            | "lte"
            | "and"
            | "or"
            | "not"
            | "len"
            | "this"
            | "true"
            | "false"
            | "null"
            | "as"
            | "else"
    )
}

/// The variables `#each` sets.
const LOCALS: &[&str] = &["index", "first", "last"];

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn is_space_or_tab(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn starts_with_empty_line(s: &str) -> bool {
    s.trim_start_matches(is_space_or_tab)
        .starts_with(['\n', '\r'])
}

fn ends_with_empty_line(s: &str) -> bool {
    let t = s.trim_end_matches(is_space_or_tab);
    t.is_empty() || t.ends_with(['\n', '\r'])
}

/// ASCII identifiers joined by dots that handlebars resolves by plain lookup (one pass over the
/// bytes: a command parses a few hundred paths).
fn valid_names(p: &str) -> bool {
    let b = p.as_bytes();
    let mut start = 0;
    for i in 0..=b.len() {
        if i < b.len() && b[i] != b'.' {
            if !(b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                return false;
            }
            continue;
        }
        let seg = &b[start..i];
        let ok = seg
            .first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            && !seg.starts_with(b"else")
            && !reserved(&p[start..i]);
        if !ok {
            return false;
        }
        start = i + 1;
    }
    true
}

/// `name.name`, `this`, `this.name`, `../name` (any number of `../`), `@index`, `@first`,
/// `@last`.
fn parse_path(p: &str) -> Option<Path<'_>> {
    if let Some(name) = p.strip_prefix('@') {
        return LOCALS.contains(&name).then(|| Path::new(0, name, true));
    }
    if p == "this" {
        return Some(Path::new(0, "", false));
    }
    let mut up = 0;
    let mut rest = p;
    while let Some(r) = rest.strip_prefix("../") {
        up += 1;
        rest = r;
    }
    if up == 0 {
        rest = rest.strip_prefix("this.").unwrap_or(rest);
    }
    valid_names(rest).then(|| Path::new(up, rest, false))
}

enum Tag<'a> {
    /// A value, and whether `~` drops the whitespace before and after it.
    Var(Path<'a>, bool, bool),
    Open(&'a str, Cond<'a>),
    Each(Path<'a>),
    Else(Option<Cond<'a>>),
    Close(&'a str),
    Partial(Partial<'a>),
}

/// `if x` / `unless x` (after `#` or `else`): the helper name and its condition.
fn parse_cond(s: &str) -> Result<(&str, Cond<'_>), Unsupported> {
    let s = s.trim_matches(is_ws);
    let (name, rest) = s.split_once(is_ws).ok_or(Unsupported)?;
    let path = parse_path(rest.trim_start_matches(is_ws)).ok_or(Unsupported)?;
    let negate = match name {
        "if" => false,
        "unless" => true,
        _ => return Err(Unsupported),
    };
    Ok((name, Cond { negate, path }))
}

/// `name key='text' key2="text"`: a partial's name and its string parameters.
fn parse_partial(s: &str) -> Result<Partial<'_>, Unsupported> {
    let (name, mut rest) = s.split_once(is_ws).unwrap_or((s, ""));
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_@/.".contains(c));
    if !ok {
        return Err(Unsupported);
    }
    let mut params = vec![];
    loop {
        rest = rest.trim_start_matches(is_ws);
        if rest.is_empty() {
            return Ok(Partial { name, params });
        }
        let (key, value) = rest.split_once('=').ok_or(Unsupported)?;
        let key_ok = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let quote = value.chars().next().filter(|q| *q == '\'' || *q == '"');
        let (Some(quote), true) = (quote, key_ok) else {
            return Err(Unsupported);
        };
        let (text, after) = value[1..].split_once(quote).ok_or(Unsupported)?;
        // Escapes and control characters (which JSON refuses) are handlebars' to judge.
        if text.contains(|c: char| c == '\\' || c.is_control())
            || params.iter().any(|(k, _)| *k == key)
        {
            return Err(Unsupported);
        }
        if !(after.is_empty() || after.starts_with(is_ws)) {
            return Err(Unsupported);
        }
        params.push((key, Json::String(text.to_string())));
        rest = after;
    }
}

/// Parse the inside of `{{ ... }}`.
fn parse_tag(inner: &str) -> Result<Tag<'_>, Unsupported> {
    let (trim_before, inner) = match inner.strip_prefix('~') {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    let (trim_after, inner) = match inner.strip_suffix('~') {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    // A byte loop: tags are short, and a command parses hundreds.
    if inner.bytes().any(|b| b == b'~') {
        return Err(Unsupported);
    }
    let t = inner.trim_matches(is_ws);
    let tag = if let Some(rest) = t.strip_prefix('#') {
        let rest = rest.trim_start_matches(is_ws);
        if let Some(list) = rest.strip_prefix("each") {
            if !list.starts_with(is_ws) {
                return Err(Unsupported);
            }
            Tag::Each(parse_path(list.trim_start_matches(is_ws)).ok_or(Unsupported)?)
        } else {
            let (name, cond) = parse_cond(rest)?;
            Tag::Open(name, cond)
        }
    } else if let Some(rest) = t.strip_prefix('/') {
        match rest.trim_start_matches(is_ws) {
            name @ ("if" | "unless" | "each") => Tag::Close(name),
            _ => return Err(Unsupported),
        }
    } else if let Some(rest) = t.strip_prefix('>') {
        Tag::Partial(parse_partial(rest.trim_start_matches(is_ws))?)
    } else if t == "else" {
        Tag::Else(None)
    } else if let Some(rest) = t.strip_prefix("else").filter(|r| r.starts_with(is_ws)) {
        Tag::Else(Some(parse_cond(rest)?.1))
    } else {
        let path = parse_path(t).ok_or(Unsupported)?;
        return Ok(Tag::Var(path, trim_before, trim_after));
    };
    if trim_before || trim_after {
        return Err(Unsupported);
    }
    Ok(tag)
}
/// The offset of the first `{{` in `s`.
fn find_open(s: &str) -> Option<usize> {
    find_pair(s, b'{')
}

/// The offset of the first `}}` in `s`.
fn find_close(s: &str) -> Option<usize> {
    find_pair(s, b'}')
}

/// The offset of the first two `c` in a row in `s`: a search for the single byte (memchr's,
/// with the CPU's vector instructions), then a check of the next. Cheaper than a search for the
/// pair when most text between tags is short and few single braces stand in it (callgrind).
fn find_pair(s: &str, c: u8) -> Option<usize> {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(off) = memchr::memchr(c, &b[from..]) {
        let at = from + off;
        if b.get(at + 1) == Some(&c) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Raw text from `pos` up to the next tag: its text (escapes resolved) and where it ends.
fn scan_raw(src: &str, pos: usize) -> (Cow<'_, str>, usize) {
    let mut owned: Option<String> = None;
    let mut i = pos;
    loop {
        let Some(off) = find_open(&src[i..]) else {
            return finish(src, pos, i, src.len(), owned);
        };
        let j = i + off;
        let backslashes = src[i..j].len() - src[i..j].trim_end_matches('\\').len();
        match backslashes {
            0 => return finish(src, pos, i, j, owned),
            1 => {
                // `\{{` (or `\{{{{`) is literal text without the backslash.
                let s = owned.get_or_insert_with(|| src[pos..i].to_string());
                s.push_str(&src[i..j - 1]);
                let len = if src[j + 2..].starts_with("{{") { 4 } else { 2 };
                s.push_str(&src[j..j + len]);
                i = j + len;
            }
            n => {
                // `\\{{x}}`: one backslash is dropped and the tag is a tag.
                let mut s = owned.unwrap_or_else(|| src[pos..i].to_string());
                s.push_str(&src[i..j - n]);
                s.push_str(&src[j - n + 1..j]);
                return (Cow::Owned(s), j);
            }
        }
    }
}

fn finish(
    src: &str,
    pos: usize,
    i: usize,
    end: usize,
    owned: Option<String>,
) -> (Cow<'_, str>, usize) {
    match owned {
        None => (Cow::Borrowed(&src[pos..end]), end),
        Some(mut s) => {
            s.push_str(&src[i..end]);
            (Cow::Owned(s), end)
        }
    }
}

enum FrameKind<'a> {
    /// `if` / `unless`, each branch with its condition.
    Cond(&'a str, Vec<(Cond<'a>, Vec<Node<'a>>)>),
    Each(Path<'a>, Vec<Node<'a>>),
}

struct Frame<'a> {
    kind: FrameKind<'a>,
    otherwise: Option<Vec<Node<'a>>>,
}

impl<'a> Frame<'a> {
    fn current(&mut self) -> &mut Vec<Node<'a>> {
        match (&mut self.otherwise, &mut self.kind) {
            (Some(n), _) => n,
            (None, FrameKind::Cond(_, branches)) => {
                &mut branches.last_mut().expect("a block has a branch").1
            }
            (None, FrameKind::Each(_, body)) => body,
        }
    }
}

fn front<'s, 'a>(root: &'s mut Vec<Node<'a>>, stack: &'s mut [Frame<'a>]) -> &'s mut Vec<Node<'a>> {
    match stack.last_mut() {
        Some(f) => f.current(),
        None => root,
    }
}

fn trim_end_spaces(t: &mut Cow<'_, str>) {
    match t {
        Cow::Borrowed(s) => *s = s.trim_end_matches(is_space_or_tab),
        Cow::Owned(s) => {
            let n = s.trim_end_matches(is_space_or_tab).len();
            s.truncate(n);
        }
    }
}

/// `{{~x}}`: the text before loses its trailing whitespace (of any kind, newlines too).
fn trim_end_all(t: &mut Cow<'_, str>) {
    match t {
        Cow::Borrowed(s) => *s = s.trim_end(),
        Cow::Owned(s) => {
            let n = s.trim_end().len();
            s.truncate(n);
        }
    }
}

/// `{{x~}}`: the text after loses its leading whitespace (of any kind).
fn trim_start_all(t: Cow<'_, str>) -> Cow<'_, str> {
    match t {
        Cow::Borrowed(s) => Cow::Borrowed(s.trim_start()),
        Cow::Owned(s) => Cow::Owned(s.trim_start().to_string()),
    }
}

fn trim_start_line(t: Cow<'_, str>) -> Cow<'_, str> {
    fn cut(s: &str) -> usize {
        let t = s.trim_start_matches(is_space_or_tab);
        let t = t
            .strip_prefix("\r\n")
            .or_else(|| t.strip_prefix('\n'))
            .unwrap_or(t);
        s.len() - t.len()
    }
    match t {
        Cow::Borrowed(s) => Cow::Borrowed(&s[cut(s)..]),
        Cow::Owned(s) => Cow::Owned(s[cut(&s)..].to_string()),
    }
}

/// Handlebars' standalone-line rule for block, else, partial and close tags: when the tag is
/// followed by a line end (or the end of the template) and preceded by a line start, the spaces
/// before it are dropped, and the return value asks to drop the spaces and the newline after it.
fn standalone(src: &str, start: usize, end: usize, nodes: &mut [Node<'_>]) -> bool {
    let after = &src[end..];
    if !(after.is_empty() || starts_with_empty_line(after)) {
        return false;
    }
    let leading = ends_with_empty_line(&src[..start]);
    if leading {
        if let Some(Node::Text(t)) = nodes.last_mut() {
            trim_end_spaces(t);
        }
    }
    start == 0 || leading
}

/// What the raw text after a tag loses.
#[derive(Clone, Copy, PartialEq)]
enum Trim {
    None,
    /// The rest of a standalone tag's line (spaces, then one line end).
    Line,
    /// All leading whitespace (`~}}`).
    All,
}

/// Compile a template, or say that it needs the `handlebars` crate.
pub fn compile(src: &str) -> Result<Vec<Node<'_>>, Unsupported> {
    let mut root: Vec<Node> = Vec::with_capacity(32);
    let mut stack: Vec<Frame> = vec![];
    let mut trim = Trim::None;
    let mut pos = 0;
    loop {
        let (text, end) = scan_raw(src, pos);
        if end > pos {
            let node = match trim {
                Trim::None => text,
                Trim::Line => trim_start_line(text),
                Trim::All => trim_start_all(text),
            };
            front(&mut root, &mut stack).push(Node::Text(node));
        }
        trim = Trim::None;
        if end == src.len() {
            break;
        }
        if src[end..].starts_with("{{{") {
            return Err(Unsupported);
        }
        let close = find_close(&src[end + 2..]).ok_or(Unsupported)? + end + 2;
        let tag_end = close + 2;
        let line = |nodes: &mut Vec<Node<'_>>| {
            if standalone(src, end, tag_end, nodes) {
                Trim::Line
            } else {
                Trim::None
            }
        };
        match parse_tag(&src[end + 2..close])? {
            Tag::Var(p, before, after) => {
                let nodes = front(&mut root, &mut stack);
                if before {
                    if let Some(Node::Text(t)) = nodes.last_mut() {
                        trim_end_all(t);
                    }
                }
                nodes.push(Node::Var(p));
                if after {
                    trim = Trim::All;
                }
            }
            Tag::Open(name, cond) => {
                trim = line(front(&mut root, &mut stack));
                stack.push(Frame {
                    kind: FrameKind::Cond(name, vec![(cond, vec![])]),
                    otherwise: None,
                });
            }
            Tag::Each(list) => {
                trim = line(front(&mut root, &mut stack));
                stack.push(Frame {
                    kind: FrameKind::Each(list, vec![]),
                    otherwise: None,
                });
            }
            Tag::Else(cond) => {
                let frame = stack.last_mut().ok_or(Unsupported)?;
                if frame.otherwise.is_some() {
                    return Err(Unsupported);
                }
                trim = line(frame.current());
                match (cond, &mut frame.kind) {
                    (Some(c), FrameKind::Cond(_, branches)) => branches.push((c, vec![])),
                    (None, _) => frame.otherwise = Some(vec![]),
                    (Some(_), FrameKind::Each(..)) => return Err(Unsupported),
                }
            }
            Tag::Close(name) => {
                let frame = stack.last_mut().ok_or(Unsupported)?;
                let open = match &frame.kind {
                    FrameKind::Cond(n, _) => n,
                    FrameKind::Each(..) => "each",
                };
                if open != name {
                    return Err(Unsupported);
                }
                trim = line(frame.current());
                let f = stack.pop().expect("checked above");
                let node = match f.kind {
                    FrameKind::Cond(name, branches) => Node::Block(Block {
                        name,
                        branches,
                        otherwise: f.otherwise,
                    }),
                    FrameKind::Each(list, body) => Node::Each(Each {
                        list,
                        body,
                        otherwise: f.otherwise,
                    }),
                };
                front(&mut root, &mut stack).push(node);
            }
            Tag::Partial(partial) => {
                if src[..end].ends_with(is_space_or_tab) {
                    return Err(Unsupported); // handlebars would indent the partial's lines
                }
                let nodes = front(&mut root, &mut stack);
                trim = line(nodes);
                nodes.push(Node::Partial(partial));
            }
        }
        pos = tag_end;
    }
    if stack.is_empty() {
        Ok(root)
    } else {
        Err(Unsupported)
    }
}

/// What can go wrong while rendering.
#[derive(Debug, PartialEq)]
pub enum RenderError {
    /// Hand the template to the `handlebars` crate.
    Unsupported,
    /// A variable is not in the context (strict mode).
    Missing(String),
}

impl From<Unsupported> for RenderError {
    fn from(_: Unsupported) -> Self {
        RenderError::Unsupported
    }
}

/// The variables `#each` sets for one item (handlebars' local variables).
#[derive(Clone)]
struct Locals {
    index: Json,
    first: Json,
    last: Json,
}

/// Where paths are looked up: the context, the item of an `#each`, or a partial's context
/// (what includes it, plus its parameters). handlebars keeps a stack of such blocks; `../`
/// goes one out.
struct Scope<'s> {
    value: &'s Json,
    /// A partial's parameters: a path's first name is looked for among them first, in every
    /// scope from the innermost out.
    params: &'s [(&'s str, Json)],
    /// handlebars' value of this scope is `value` with the parameters of this partial, or of one
    /// it is included in, merged in: only names inside an object are looked up alike.
    merged: bool,
    locals: Option<&'s Locals>,
    parent: Option<&'s Scope<'s>>,
}

/// Walk dotted `names` down from `v`; `Ok(None)` when one is missing.
fn walk<'c>(mut v: &'c Json, names: &str) -> Result<Option<&'c Json>, RenderError> {
    if names.is_empty() {
        return Ok(Some(v));
    }
    for seg in names.split('.') {
        v = match v {
            Json::Object(m) => match m.get(seg) {
                Some(next) => next,
                None => return Ok(None),
            },
            // handlebars reports a non-numeric index into a list as an error of its own
            Json::Array(_) => return Err(RenderError::Unsupported),
            _ => return Ok(None),
        };
    }
    Ok(Some(v))
}

/// Look a path up; `Ok(None)` when it is missing.
fn lookup<'c>(scope: &Scope<'c>, path: &Path<'_>) -> Result<Option<&'c Json>, RenderError> {
    if path.local {
        let Some(l) = scope.locals else {
            return Ok(None);
        };
        return Ok(Some(match path.names {
            "index" => &l.index,
            "first" => &l.first,
            _ => &l.last,
        }));
    }
    if !path.first.is_empty() {
        let mut s = Some(scope);
        while let Some(sc) = s {
            if let Some((_, v)) = sc.params.iter().find(|(k, _)| *k == path.first) {
                return walk(v, path.rest);
            }
            s = sc.parent;
        }
    }
    let mut target = scope;
    for _ in 0..path.up {
        target = target.parent.ok_or(RenderError::Unsupported)?;
    }
    if target.merged && (path.names.is_empty() || !target.value.is_object()) {
        return Err(RenderError::Unsupported);
    }
    match (target.value, path.first) {
        (_, "") => Ok(Some(target.value)),
        (Json::Object(m), first) => match m.get(first) {
            Some(v) => walk(v, path.rest),
            None => Ok(None),
        },
        // handlebars reports a non-numeric index into a list as an error of its own
        (Json::Array(_), _) => Err(RenderError::Unsupported),
        _ => Ok(None),
    }
}

fn truthy(v: Option<&Json>) -> bool {
    match v {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(Json::Number(n)) => n.as_f64().is_some_and(f64::is_normal),
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(a)) => !a.is_empty(),
        Some(Json::Object(o)) => !o.is_empty(),
    }
}

/// Partial templates by name.
pub type Partials<'p> = dyn Fn(&str) -> Option<&'static str> + 'p;

/// A compiled template with the partials it includes (and those include), each compiled once.
pub struct Template<'a> {
    /// The length of the source (most of the output is its text).
    len: usize,
    nodes: Vec<Node<'a>>,
    partials: Vec<(&'a str, Vec<Node<'static>>)>,
}

impl<'a> Template<'a> {
    /// Compile `src` and every partial it reaches, or say that it needs the `handlebars` crate.
    pub fn compile(src: &'a str, partials: &Partials<'_>) -> Result<Self, Unsupported> {
        let mut t = Template {
            len: src.len(),
            nodes: compile(src)?,
            partials: vec![],
        };
        let mut wanted = vec![];
        partial_names(&t.nodes, &mut wanted);
        while let Some(name) = wanted.pop() {
            if t.partials.iter().any(|(n, _)| *n == name) {
                continue;
            }
            let nodes = compile(partials(name).ok_or(Unsupported)?)?;
            partial_names(&nodes, &mut wanted);
            t.partials.push((name, nodes));
        }
        Ok(t)
    }

    /// Add the names this template (and its partials) looks up in its context to `out` (the
    /// first name of each path: what the context must hold); `false` when it needs the whole
    /// context (it uses `this` somewhere).
    pub fn names(&self, out: &mut Vec<&'a str>) -> bool {
        names(&self.nodes, out) && self.partials.iter().all(|(_, n)| names(n, out))
    }

    /// Render with `ctx`, appending to `out`.
    pub fn render(&self, ctx: &Json, out: &mut String) -> Result<(), RenderError> {
        out.reserve(self.len + self.len / 4);
        let scope = Scope {
            value: ctx,
            params: &[],
            merged: false,
            locals: None,
            parent: None,
        };
        self.render_in(&self.nodes, &scope, out, 0)
    }

    fn render_in(
        &self,
        nodes: &[Node<'_>],
        scope: &Scope<'_>,
        out: &mut String,
        depth: usize,
    ) -> Result<(), RenderError> {
        for node in nodes {
            match node {
                Node::Text(t) => out.push_str(t),
                Node::Var(p) => match lookup(scope, p)? {
                    None => return Err(RenderError::Missing(p.names.to_string())),
                    Some(Json::String(s)) => out.push_str(s),
                    Some(Json::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
                    Some(Json::Number(n)) => out.push_str(&n.to_string()),
                    Some(_) => return Err(RenderError::Unsupported),
                },
                Node::Block(b) => {
                    let mut chosen = b.otherwise.as_deref();
                    for (cond, body) in &b.branches {
                        if truthy(lookup(scope, &cond.path)?) != cond.negate {
                            chosen = Some(body);
                            break;
                        }
                    }
                    if let Some(body) = chosen {
                        self.render_in(body, scope, out, depth)?;
                    }
                }
                Node::Each(e) => {
                    let Some(Json::Array(items)) = lookup(scope, &e.list)? else {
                        return Err(RenderError::Unsupported);
                    };
                    if items.is_empty() {
                        if let Some(body) = &e.otherwise {
                            self.render_in(body, scope, out, depth)?;
                        }
                    }
                    for (i, item) in items.iter().enumerate() {
                        let locals = Locals {
                            index: Json::from(i),
                            first: Json::Bool(i == 0),
                            last: Json::Bool(i + 1 == items.len()),
                        };
                        let inner = Scope {
                            value: item,
                            params: &[],
                            merged: false,
                            locals: Some(&locals),
                            parent: Some(scope),
                        };
                        self.render_in(&e.body, &inner, out, depth)?;
                    }
                }
                Node::Partial(p) => {
                    // Deep nesting is most likely a partial including itself: let handlebars say
                    // so.
                    if depth >= 8 {
                        return Err(RenderError::Unsupported);
                    }
                    let (_, compiled) = self
                        .partials
                        .iter()
                        .find(|(n, _)| *n == p.name)
                        .ok_or(RenderError::Unsupported)?;
                    let inner = Scope {
                        value: scope.value,
                        params: &p.params,
                        merged: scope.merged || !p.params.is_empty(),
                        locals: scope.locals,
                        parent: Some(scope),
                    };
                    self.render_in(compiled, &inner, out, depth + 1)?;
                }
            }
        }
        Ok(())
    }
}

/// The partials `nodes` include.
fn partial_names<'a>(nodes: &[Node<'a>], out: &mut Vec<&'a str>) {
    for node in nodes {
        match node {
            Node::Partial(p) => out.push(p.name),
            Node::Block(b) => {
                for (_, body) in &b.branches {
                    partial_names(body, out);
                }
                partial_names(b.otherwise.as_deref().unwrap_or_default(), out);
            }
            Node::Each(e) => {
                partial_names(&e.body, out);
                partial_names(e.otherwise.as_deref().unwrap_or_default(), out);
            }
            Node::Text(_) | Node::Var(_) => {}
        }
    }
}

/// The first name of `p` into `out`; `false` for `this` (the whole scope).
fn path_name<'a>(p: &Path<'a>, out: &mut Vec<&'a str>) -> bool {
    if p.local {
        return true;
    }
    out.push(p.first);
    !p.first.is_empty()
}

/// See [`Template::names`] (partials not followed).
fn names<'a>(nodes: &[Node<'a>], out: &mut Vec<&'a str>) -> bool {
    nodes.iter().all(|node| match node {
        Node::Text(_) | Node::Partial(_) => true,
        Node::Var(p) => path_name(p, out),
        Node::Block(b) => {
            b.branches
                .iter()
                .all(|(cond, body)| path_name(&cond.path, out) && names(body, out))
                && names(b.otherwise.as_deref().unwrap_or_default(), out)
        }
        Node::Each(e) => {
            path_name(&e.list, out)
                && names(&e.body, out)
                && names(e.otherwise.as_deref().unwrap_or_default(), out)
        }
    })
}

/// Compile and render in one go.
pub fn render_str(src: &str, ctx: &Json, partials: &Partials<'_>) -> Result<String, RenderError> {
    let t = Template::compile(src, partials)?;
    let mut out = String::new();
    t.render(ctx, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use handlebars::Handlebars;
    use serde::Serialize;

    fn reference() -> Handlebars<'static> {
        let mut hb = Handlebars::new();
        hb.set_strict_mode(true);
        hb.register_escape_fn(handlebars::no_escape);
        hb.register_template_string("p", PARTIAL).unwrap();
        hb.register_template_string("q", PARTIAL_Q).unwrap();
        hb.register_template_string("r", PARTIAL_R).unwrap();
        hb
    }

    const PARTIAL: &str = "<{{#if a}}\n P{{x}}\n{{/if}}>\n";
    /// A partial that reads parameters, the scope it is included in and `#each`'s variables.
    const PARTIAL_Q: &str =
        "[{{#if k}}{{k}}{{else}}{{x}}{{/if}}{{#each items}}{{k}}{{y}}{{../x}}{{/each}}{{#if @first}}F{{/if}}]";

    /// A partial for an item of `items`: `../` is the item, as `this` (the partial's own scope).
    const PARTIAL_R: &str = "({{k}}{{@index}}{{../y}}{{y}}{{#if @last}}L{{/if}})";

    fn partials(name: &str) -> Option<&'static str> {
        match name {
            "p" => Some(PARTIAL),
            "q" => Some(PARTIAL_Q),
            "r" => Some(PARTIAL_R),
            _ => None,
        }
    }

    /// Our result must be handlebars' whenever we give one.
    fn check(hb: &Handlebars<'_>, src: &str, ctx: &Json) -> bool {
        let ours = render_str(src, ctx, &partials);
        let theirs = hb.render_template(src, ctx);
        match (ours, theirs) {
            (Err(RenderError::Unsupported), _) => false,
            (Ok(o), Ok(t)) => {
                assert_eq!(o, t, "template {src:?} with {ctx}");
                true
            }
            (Err(RenderError::Missing(_)), Err(_)) => true,
            (o, t) => panic!("template {src:?} with {ctx}: ours {o:?}, handlebars {t:?}"),
        }
    }

    #[derive(Serialize)]
    struct Inner {
        y: &'static str,
        t: bool,
    }

    #[derive(Serialize)]
    struct Ctx {
        a: bool,
        b: &'static str,
        c: f64,
        x: &'static str,
        n: i32,
        o: Inner,
        l: Vec<&'static str>,
        z: Option<bool>,
        items: Vec<Inner>,
        e: Vec<Inner>,
    }

    fn contexts() -> Vec<Json> {
        (0..8u8)
            .map(|bits| {
                handlebars::to_json(Ctx {
                    a: bits & 1 != 0,
                    b: if bits & 2 != 0 { "yes" } else { "" },
                    c: if bits & 4 != 0 { 1.5 } else { 0.0 },
                    x: "X",
                    n: 7,
                    o: Inner { y: "Y", t: true },
                    l: vec!["q"],
                    z: None,
                    items: (0..usize::from(bits % 3))
                        .map(|i| Inner {
                            y: ["Y0", "Y1"][i],
                            t: i == 0,
                        })
                        .collect(),
                    e: vec![],
                })
            })
            .collect()
    }

    #[test]
    fn examples_match_handlebars() {
        let hb = reference();
        let cases = [
            "plain",
            "{{x}} {{ x }} {{n}} {{o.y}} {{o.t}}",
            "a\\{{x}} \\\\{{x}} \\\\\\{{x}} \\{{{{x}}",
            "{{#if a}}\nA\n{{else}}\nB\n{{/if}}\n",
            "{{#if a}}\nA\n{{else}}\nB\n{{/if}}\nend",
            "  {{#if a}}  \n  A\n  {{/if}}  \n",
            "x {{#if a}}y{{/if}} z\n",
            "{{#unless a}}\nU\n{{else if b}}\nB\n{{else unless c}}\nC\n{{else}}\nE\n{{/unless}}\n",
            "{{#if o.t}}{{o.y}}{{/if}}{{#if nope}}x{{/if}}",
            "line\n{{> p}}\nafter\n",
            "{{> p}}",
            "\r\n{{#if a}}\r\nA\r\n{{/if}}\r\n",
            "{{#if a}}\n\n{{/if}}\n\n",
            "{{x}}}",
            // whitespace control on values
            "use m::{ {{~x}}, {{n}}};\n",
            "a \n\t {{~x~}} \n b",
            "{{#if a}}\n  {{~x}}\n{{/if}}\n{{x~}}\n\n{{#if a}}\nA\n{{/if}}\n",
            "{{~ o.y ~}}   {{x}}",
            // #each over lists, with this, ../, @index, @first, @last and else
            "{{#each l}}[{{this}}:{{@index}}{{@first}}{{@last}}]{{/each}}",
            "{{#each items}}\n- {{y}} {{this.t}} {{../x}}{{#if ../a}}!{{/if}}\n{{else}}\nnone\n{{/each}}\n",
            "{{#each e}}x{{else}}empty{{/each}}{{#each e}}x{{/each}}.",
            "{{#each items}}{{#each ../l}}{{../y}}{{this}}{{../../n}}{{/each}}{{/each}}",
            "{{#each items}}{{#unless @last}}{{y}}, {{/unless}}{{/each}}",
            "use m::{ {{~x}}{{#each items}}, {{this.y}}{{/each}}};",
            // partials with parameters, in #each
            "{{> q}}\n{{> q k='K \"1\"'}}\n{{> q k=\"K '2'\"}}",
            "{{#each items}}\n{{> r k='in'}}\n{{/each}}\n",
            "a\n{{> q k='x' j=''}}\nb\n",
        ];
        for src in cases {
            for ctx in contexts() {
                assert!(check(&hb, src, &ctx), "fell back on {src:?}");
            }
        }
        for unsupported in [
            "{{{x}}}",
            "{{~#if a}}{{/if}}",
            "{{#if a~}}{{/if}}",
            "{{ ~x}}",
            "{{! c }}",
            "{{#each l as |v|}}{{v}}{{/each}}",
            "{{#each o}}{{this}}{{/each}}",
            "{{#each z}}{{this}}{{/each}}",
            "{{#each l}}{{else if a}}{{/each}}",
            "{{#each l}}{{/if}}",
            "{{@key}}",
            "{{@../index}}",
            "{{../this}}",
            "{{this/x}}",
            "{{z}}",
            "{{l}}",
            "{{o}}",
            "{{len}}",
            "{{#if a b}}{{/if}}",
            "{{#if a}}",
            "{{/if}}",
            "{{else}}",
            "{{elsewhere}}",
            "  {{> p}}",
            "{{> p x}}",
            "{{> p a=b}}",
            "{{> p a = 'b'}}",
            "{{> p a='\\n'}}",
            "{{> p a='b'c}}",
            "{{> p a='b' a='c'}}",
            "{{> q k='v'}}{{#each l}}{{> q k='v'}}{{/each}}",
            "{{a/b}}",
            "{{../a}}",
            "{{#if true}}{{/if}}",
            "{{#if a}}{{else}}{{else}}{{/if}}",
            "{{#if a}}{{/unless}}",
            "{{x",
        ] {
            let r = render_str(unsupported, &contexts()[0], &partials);
            assert_eq!(r, Err(RenderError::Unsupported), "{unsupported:?}");
        }
        assert_eq!(
            render_str("{{nope}}", &contexts()[0], &partials),
            Err(RenderError::Missing("nope".into()))
        );
    }

    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    const SPACE: &[&str] = &[
        "", "", " ", "  ", "\t", "\n", "\n", "  \n", "\n  ", "\r\n", "\n\n",
    ];
    const LEAF: &[&str] = &[
        "{{x}}",
        "{{ o.y }}",
        "{{n}}",
        "{{> p}}",
        "text",
        "t",
        "\\{{x}}",
        "\\\\{{x}}",
        "}",
        "{",
        "\\",
        "{{x}}",
        "text",
        "{{> p}}",
        "{{nope}}",
        "{{else}}",
        "{{/if}}",
        "{{~x}}",
        "{{x~}}",
        "{{~ n ~}}",
        "{{@index}}",
        "{{@last}}",
        "{{this}}",
        "{{../x}}",
        "{{y}}",
        "{{> q k='K'}}",
        "{{> r k=\"K\"}}",
        "{{> q}}",
    ];
    const COND: &[&str] = &[
        "if a",
        "if b",
        "unless c",
        "if o.t",
        "unless nope",
        "if @first",
        "unless @last",
        "if ../a",
        "each l",
        "each items",
        "each e",
    ];

    /// A sequence of text, tags and (mostly well-formed) blocks with random spacing.
    fn gen(r: &mut Rng, depth: usize, out: &mut String) {
        for _ in 0..1 + r.below(4) {
            out.push_str(r.pick(SPACE));
            if depth < 3 && r.below(3) == 0 {
                let cond = r.pick(COND);
                out.push_str(&format!("{{{{#{cond}}}}}"));
                gen(r, depth + 1, out);
                for _ in 0..r.below(3) {
                    out.push_str(r.pick(SPACE));
                    if r.below(2) == 0 {
                        out.push_str(&format!("{{{{else {}}}}}", r.pick(COND)));
                    } else {
                        out.push_str("{{else}}");
                    }
                    gen(r, depth + 1, out);
                }
                out.push_str(r.pick(SPACE));
                let name = cond.split(' ').next().unwrap();
                out.push_str(&format!("{{{{/{name}}}}}"));
            } else {
                out.push_str(r.pick(LEAF));
            }
            out.push_str(r.pick(SPACE));
        }
    }

    /// Random templates built from what handlebars treats specially (block tags, spaces, tabs,
    /// newlines, escapes, braces): wherever we give a result, it is handlebars' result.
    #[test]
    fn random_templates_match_handlebars() {
        let hb = reference();
        let ctxs = contexts();
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        let total: usize = std::env::var("HBS_FUZZ")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3000);
        let mut ours = 0;
        for _ in 0..total {
            let mut src = String::new();
            gen(&mut r, 0, &mut src);
            let ctx = &ctxs[r.below(ctxs.len())];
            if check(&hb, &src, ctx) {
                ours += 1;
            }
        }
        eprintln!("{ours} of {total} random templates rendered by us");
        assert!(ours * 4 > total, "only {ours} of {total} rendered by us");
    }
}
