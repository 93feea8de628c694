//! A small compiler and renderer for the part of handlebars our templates use, with the exact
//! output of the `handlebars` crate (strict mode, no escaping, default partial indentation).
//!
//! Parsing with the `handlebars` crate costs about 900 instructions per byte of template, which
//! was most of a command's run. This module parses in one linear scan. It accepts:
//!
//! - raw text, with `\{{` escapes;
//! - `{{path}}` and `{{a.b}}` (ASCII identifiers joined by dots) holding a string, number or bool;
//! - `{{#if path}}` / `{{#unless path}}` blocks with `{{else}}`, `{{else if path}}` and
//!   `{{else unless path}}`;
//! - `{{> partial}}` not preceded by spaces or tabs (so no partial indentation applies).
//!
//! Anything else (other helpers, `~`, comments, triple braces, `this`, `..`, literals, partials
//! with parameters, values that are null, lists or objects, ...) makes [`compile`] or
//! [`render`] return [`Unsupported`], and the caller hands the template to the `handlebars`
//! crate instead. Whitespace follows that crate's rules: a block, else, close or partial tag alone
//! on its line removes the line. Unit tests compare both on every template and on random
//! templates.

use handlebars::JsonValue as Json;
use std::borrow::Cow;

/// The template uses something outside the supported subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported;

#[derive(Debug, PartialEq)]
pub enum Node<'a> {
    Text(Cow<'a, str>),
    Var(&'a str),
    Block(Block<'a>),
    Partial(&'a str),
}

#[derive(Debug, PartialEq)]
pub struct Block<'a> {
    /// `if` or `unless`: the closing tag must repeat it.
    name: &'a str,
    /// Each branch: its condition (negated for `unless`) and its nodes.
    branches: Vec<(Cond<'a>, Vec<Node<'a>>)>,
    otherwise: Option<Vec<Node<'a>>>,
}

#[derive(Debug, PartialEq, Clone, Copy)]
struct Cond<'a> {
    negate: bool,
    path: &'a str,
}

/// Helpers the `handlebars` crate registers by default: a bare `{{name}}` with one of these
/// names calls the helper instead of looking the name up.
const HELPERS: &[&str] = &[
    "if", "unless", "each", "with", "lookup", "raw", "log", "eq", "ne", "gt", "gte", "lt", "lte",
    "and", "or", "not", "len",
];

/// Names the handlebars grammar reads as literals or keywords, not as paths.
const RESERVED: &[&str] = &["this", "true", "false", "null", "as", "else"];

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

/// A dotted path of ASCII identifiers that handlebars resolves by plain lookup.
fn valid_path(p: &str) -> bool {
    !p.is_empty()
        && p.split('.').all(|seg| {
            let mut chars = seg.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !RESERVED.contains(&seg)
                && !HELPERS.contains(&seg)
                && !seg.starts_with("else")
        })
}

enum Tag<'a> {
    Var(&'a str),
    Open(&'a str, Cond<'a>),
    Else(Option<Cond<'a>>),
    Close(&'a str),
    Partial(&'a str),
}

/// `if x` / `unless x` (after `#` or `else`): the helper name and its condition.
fn parse_cond(s: &str) -> Result<(&str, Cond<'_>), Unsupported> {
    let s = s.trim_matches(is_ws);
    let (name, rest) = s.split_once(is_ws).ok_or(Unsupported)?;
    let path = rest.trim_start_matches(is_ws);
    let negate = match name {
        "if" => false,
        "unless" => true,
        _ => return Err(Unsupported),
    };
    if !valid_path(path) {
        return Err(Unsupported);
    }
    Ok((name, Cond { negate, path }))
}

/// Parse the inside of `{{ ... }}`.
fn parse_tag(inner: &str) -> Result<Tag<'_>, Unsupported> {
    if inner.contains('~') {
        return Err(Unsupported);
    }
    let t = inner.trim_matches(is_ws);
    if let Some(rest) = t.strip_prefix('#') {
        let rest = rest.trim_start_matches(is_ws);
        let (name, cond) = parse_cond(rest)?;
        return Ok(Tag::Open(name, cond));
    }
    if let Some(rest) = t.strip_prefix('/') {
        let name = rest.trim_start_matches(is_ws);
        return match name {
            "if" | "unless" => Ok(Tag::Close(name)),
            _ => Err(Unsupported),
        };
    }
    if let Some(rest) = t.strip_prefix('>') {
        let name = rest.trim_start_matches(is_ws);
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_@/.".contains(c));
        return if ok {
            Ok(Tag::Partial(name))
        } else {
            Err(Unsupported)
        };
    }
    if t == "else" {
        return Ok(Tag::Else(None));
    }
    if let Some(rest) = t.strip_prefix("else") {
        if rest.starts_with(is_ws) {
            let (_, cond) = parse_cond(rest)?;
            return Ok(Tag::Else(Some(cond)));
        }
        return Err(Unsupported);
    }
    if valid_path(t) {
        Ok(Tag::Var(t))
    } else {
        Err(Unsupported)
    }
}

/// The offset of the first `{{` in `s` (a search for the single byte, then a check of the next).
fn find_open(s: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(off) = s[from..].find('{') {
        let at = from + off;
        if s.as_bytes().get(at + 1) == Some(&b'{') {
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

struct Frame<'a> {
    name: &'a str,
    branches: Vec<(Cond<'a>, Vec<Node<'a>>)>,
    otherwise: Option<Vec<Node<'a>>>,
}

impl<'a> Frame<'a> {
    fn current(&mut self) -> &mut Vec<Node<'a>> {
        match &mut self.otherwise {
            Some(n) => n,
            None => &mut self.branches.last_mut().expect("a block has a branch").1,
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

/// Compile a template, or say that it needs the `handlebars` crate.
pub fn compile(src: &str) -> Result<Vec<Node<'_>>, Unsupported> {
    let mut root: Vec<Node> = vec![];
    let mut stack: Vec<Frame> = vec![];
    let mut trim_line = false;
    let mut pos = 0;
    loop {
        let (text, end) = scan_raw(src, pos);
        if end > pos {
            let node = if trim_line {
                trim_start_line(text)
            } else {
                text
            };
            trim_line = false;
            front(&mut root, &mut stack).push(Node::Text(node));
        }
        if end == src.len() {
            break;
        }
        if src[end..].starts_with("{{{") {
            return Err(Unsupported);
        }
        let close = src[end + 2..].find("}}").ok_or(Unsupported)? + end + 2;
        let tag_end = close + 2;
        match parse_tag(&src[end + 2..close])? {
            Tag::Var(p) => front(&mut root, &mut stack).push(Node::Var(p)),
            Tag::Open(name, cond) => {
                trim_line = standalone(src, end, tag_end, front(&mut root, &mut stack));
                stack.push(Frame {
                    name,
                    branches: vec![(cond, vec![])],
                    otherwise: None,
                });
            }
            Tag::Else(cond) => {
                let frame = stack.last_mut().ok_or(Unsupported)?;
                if frame.otherwise.is_some() {
                    return Err(Unsupported);
                }
                trim_line = standalone(src, end, tag_end, frame.current());
                match cond {
                    Some(c) => frame.branches.push((c, vec![])),
                    None => frame.otherwise = Some(vec![]),
                }
            }
            Tag::Close(name) => {
                let frame = stack.last_mut().ok_or(Unsupported)?;
                if frame.name != name {
                    return Err(Unsupported);
                }
                trim_line = standalone(src, end, tag_end, frame.current());
                let f = stack.pop().expect("checked above");
                front(&mut root, &mut stack).push(Node::Block(Block {
                    name: f.name,
                    branches: f.branches,
                    otherwise: f.otherwise,
                }));
            }
            Tag::Partial(name) => {
                if src[..end].ends_with(is_space_or_tab) {
                    return Err(Unsupported); // handlebars would indent the partial's lines
                }
                let nodes = front(&mut root, &mut stack);
                trim_line = standalone(src, end, tag_end, nodes);
                nodes.push(Node::Partial(name));
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

/// Look a dotted path up; `Ok(None)` when it is missing.
fn lookup<'c>(ctx: &'c Json, path: &str) -> Result<Option<&'c Json>, RenderError> {
    let mut v = ctx;
    for seg in path.split('.') {
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

/// Render compiled nodes with `ctx`, appending to `out`.
pub fn render(
    nodes: &[Node<'_>],
    ctx: &Json,
    partials: &Partials<'_>,
    out: &mut String,
) -> Result<(), RenderError> {
    render_depth(nodes, ctx, partials, out, 0)
}

fn render_depth(
    nodes: &[Node<'_>],
    ctx: &Json,
    partials: &Partials<'_>,
    out: &mut String,
    depth: usize,
) -> Result<(), RenderError> {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Var(p) => match lookup(ctx, p)? {
                None => return Err(RenderError::Missing((*p).to_string())),
                Some(Json::String(s)) => out.push_str(s),
                Some(Json::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
                Some(Json::Number(n)) => out.push_str(&n.to_string()),
                Some(_) => return Err(RenderError::Unsupported),
            },
            Node::Block(b) => {
                let mut chosen = b.otherwise.as_deref();
                for (cond, body) in &b.branches {
                    if truthy(lookup(ctx, cond.path)?) != cond.negate {
                        chosen = Some(body);
                        break;
                    }
                }
                if let Some(body) = chosen {
                    render_depth(body, ctx, partials, out, depth)?;
                }
            }
            Node::Partial(name) => {
                // Deep nesting is most likely a partial including itself: let handlebars say so.
                if depth >= 8 {
                    return Err(RenderError::Unsupported);
                }
                let text = partials(name).ok_or(RenderError::Unsupported)?;
                let compiled = compile(text)?;
                render_depth(&compiled, ctx, partials, out, depth + 1)?;
            }
        }
    }
    Ok(())
}

/// Compile and render in one go.
pub fn render_str(src: &str, ctx: &Json, partials: &Partials<'_>) -> Result<String, RenderError> {
    let nodes = compile(src)?;
    let mut out = String::with_capacity(src.len() + src.len() / 4);
    render(&nodes, ctx, partials, &mut out)?;
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
        hb
    }

    const PARTIAL: &str = "<{{#if a}}\n P{{x}}\n{{/if}}>\n";

    fn partials(name: &str) -> Option<&'static str> {
        (name == "p").then_some(PARTIAL)
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
        ];
        for src in cases {
            for ctx in contexts() {
                assert!(check(&hb, src, &ctx), "fell back on {src:?}");
            }
        }
        for unsupported in [
            "{{{x}}}",
            "{{~x}}",
            "{{! c }}",
            "{{#each l}}{{this}}{{/each}}",
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
    ];
    const COND: &[&str] = &["if a", "if b", "unless c", "if o.t", "unless nope"];

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
