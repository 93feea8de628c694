//! A fast reader for PROJECT files in the shape opbuilder and Kubebuilder write (block style,
//! two-space mappings, unindented sequences, plain or double-quoted one-line scalars). It returns
//! `None` for anything else, and the caller reads the file with serde_yaml instead; a unit test
//! checks that whenever it returns a value, serde_yaml reads the same.

use super::model::{Api, Controller, Project, Resource, Webhooks};
use super::scalar::{needs_quotes, PLAIN};
use super::shared::Shared;
use serde_yaml::{Mapping, Value};

/// A one-line scalar read as a string: plain (only where our writer would leave it plain,
/// so it reads back as that string) or double-quoted with the escapes our writer uses.
fn string(s: &str) -> Option<String> {
    let Some(inner) = s.strip_prefix('"') else {
        return (!needs_quotes(s)).then(|| s.to_string());
    };
    let inner = inner.strip_suffix('"')?;
    if !inner.contains(['\\', '"']) && !inner.bytes().any(|c| c < 0x20) {
        return Some(inner.to_string());
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => match chars.next()? {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                'n' => out.push('\n'),
                't' => out.push('\t'),
                _ => return None,
            },
            c if (c as u32) < 0x20 => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

fn boolean(s: &str) -> Option<bool> {
    match s {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// `key:` or `key: value` with a plain key.
fn key_value(text: &str) -> Option<(&str, Option<&str>)> {
    // The key is plain and holds no `:`, so the first `:` or byte outside the plain set
    // must be its `:`.
    let colon = text.bytes().position(|c| c == b':' || !PLAIN[c as usize])?;
    let key = &text[..colon];
    let rest = match &text[colon..] {
        ":" => None,
        r => Some(r.strip_prefix(": ")?),
    };
    (!key.is_empty() && !key.starts_with('-')).then_some((key, rest))
}

/// The text of a line indented by exactly `n` spaces.
fn at_indent(line: &str, n: usize) -> Option<&str> {
    let rest = line.get(n..)?;
    (line.as_bytes()[..n].iter().all(|&c| c == b' ') && !rest.starts_with(' ')).then_some(rest)
}

/// A cursor over the lines of the text after its header comments, each found when the
/// cursor reaches it (no vector of lines: at 200 kinds PROJECT has 1,800 of them).
struct Lines<'a> {
    text: &'a str,
    /// Where the current line starts.
    pos: usize,
    /// The current line, without its newline; `None` at the end or at a bad line.
    cur: Option<&'a str>,
    /// Where the line after the current one starts.
    next: usize,
    /// A line this reader does not take (blank, a comment, trailing spaces) was reached.
    bad: bool,
    /// The last scalar read for each [`Slot`] and its value: resources mostly repeat their
    /// domain, group, path, version and CRD version, which are then shared, not read again.
    memo: [(Option<&'a str>, Shared); SLOTS],
}

/// The fields whose values are shared between resources (indexes into `Lines::memo`).
#[derive(Clone, Copy)]
enum Slot {
    Domain,
    Group,
    Path,
    Version,
    CrdVersion,
}
const SLOTS: usize = 5;

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let b = text.as_bytes();
        let mut pos = 0;
        while b.get(pos) == Some(&b'#') {
            pos = memchr::memchr(b'\n', &b[pos..]).map_or(b.len(), |i| pos + i + 1);
        }
        let mut lines = Lines {
            text,
            pos,
            cur: None,
            next: pos,
            bad: false,
            memo: Default::default(),
        };
        lines.advance();
        lines
    }

    /// Move to the next line.
    fn advance(&mut self) {
        let (b, pos) = (self.text.as_bytes(), self.next);
        self.pos = pos;
        self.cur = None;
        if pos >= b.len() {
            return;
        }
        let end = memchr::memchr(b'\n', &b[pos..]).map_or(b.len(), |i| pos + i);
        self.next = end + 1;
        let line = &self.text[pos..end];
        // Bytes, not chars: the first byte after the indent, and the last.
        let first = b[pos..end].iter().find(|&&c| c != b' ');
        if matches!(first, None | Some(b'#')) || b[pos..end].last() == Some(&b' ') {
            self.bad = true;
        } else {
            self.cur = Some(line);
        }
    }

    /// A scalar of field `slot` as a [`Shared`] string: the previous value of that field again
    /// if its text is the same.
    fn shared(&mut self, slot: Slot, text: &'a str) -> Option<Shared> {
        let (last, value) = &mut self.memo[slot as usize];
        if *last != Some(text) {
            *value = match text.starts_with('"') {
                false if !needs_quotes(text) => Shared::from(text),
                _ => Shared::from(string(text)?),
            };
            *last = Some(text);
        }
        Some(value.clone())
    }

    fn peek(&self) -> Option<&'a str> {
        self.cur
    }

    /// The next `key: value` line at indent `n` (keys strictly increasing after `prev`).
    fn entry(&mut self, n: usize, prev: &mut &'a str) -> Option<(&'a str, Option<&'a str>)> {
        let text = at_indent(self.peek()?, n)?;
        if text.starts_with("- ") {
            return None;
        }
        let (key, value) = key_value(text)?;
        if key <= *prev {
            return None;
        }
        *prev = key;
        self.advance();
        Some((key, value))
    }

    /// `- item` lines at indent `n`: their scalars.
    fn items(&mut self, n: usize) -> Option<Vec<String>> {
        let mut out = vec![];
        while let Some(item) = self
            .peek()
            .and_then(|l| at_indent(l, n)?.strip_prefix("- "))
        {
            out.push(string(item)?);
            self.advance();
        }
        (!out.is_empty()).then_some(out)
    }

    /// Lines after `key:` must start a block; this says whether one is there (else the
    /// value is null, which we leave to serde_yaml).
    fn block(&mut self, value: Option<&str>, n: usize) -> Option<bool> {
        match value {
            Some("{}") => Some(false),
            Some(_) => None,
            None => at_indent(self.peek()?, n).map(|_| true),
        }
    }

    fn api(&mut self, value: Option<&str>) -> Option<Api> {
        let mut a = Api::default();
        if self.block(value, 4)? {
            let mut prev = "";
            while let Some((k, v)) = self.entry(4, &mut prev) {
                match (k, v?) {
                    ("crdVersion", v) => a.crd_version = self.shared(Slot::CrdVersion, v)?,
                    ("namespaced", v) => a.namespaced = boolean(v)?,
                    ("ssa", v) => a.ssa = boolean(v)?,
                    _ => return None,
                }
            }
        }
        Some(a)
    }

    fn webhooks(&mut self, value: Option<&str>) -> Option<Webhooks> {
        let mut w = Webhooks::default();
        if self.block(value, 4)? {
            let mut prev = "";
            while let Some((k, v)) = self.entry(4, &mut prev) {
                if k == "spoke" {
                    v.is_none().then_some(())?;
                    w.spoke = self.items(4)?;
                    continue;
                }
                let v = v?;
                match k {
                    "conversion" => w.conversion = boolean(v)?,
                    "defaulting" => w.defaulting = boolean(v)?,
                    "defaultingPath" => w.defaulting_path = string(v)?,
                    "validation" => w.validation = boolean(v)?,
                    "validationPath" => w.validation_path = string(v)?,
                    "webhookVersion" => w.webhook_version = string(v)?,
                    _ => return None,
                }
            }
        }
        Some(w)
    }

    /// One `- ...` entry of `resources:`; its first key is on the dash line.
    fn resource(&mut self) -> Option<Resource> {
        let first = self.peek()?.strip_prefix("- ")?;
        let mut r = Resource::default();
        let (mut kind, mut version) = (false, false);
        let mut prev = "";
        let mut line = Some(first);
        loop {
            let (k, v) = match line.take() {
                Some(text) => {
                    let (k, v) = key_value(text)?;
                    prev = k;
                    self.advance();
                    (k, v)
                }
                None => match self.entry(2, &mut prev) {
                    Some(e) => e,
                    None => break,
                },
            };
            match k {
                "api" => r.api = Some(self.api(v)?),
                "controllers" => {
                    v.is_none().then_some(())?;
                    while let Some(item) = self
                        .peek()
                        .and_then(|l| at_indent(l, 2)?.strip_prefix("- "))
                    {
                        let ("name", Some(name)) = key_value(item)? else {
                            return None;
                        };
                        r.controllers.push(Controller {
                            name: string(name)?,
                        });
                        self.advance();
                    }
                    (!r.controllers.is_empty()).then_some(())?;
                }
                "webhooks" => r.webhooks = Some(self.webhooks(v)?),
                _ => {
                    let v = v?;
                    match k {
                        "controller" => r.controller = boolean(v)?,
                        "core" => r.core = boolean(v)?,
                        "domain" => r.domain = self.shared(Slot::Domain, v)?,
                        "external" => r.external = boolean(v)?,
                        "group" => r.group = self.shared(Slot::Group, v)?,
                        "kind" => {
                            r.kind = string(v)?;
                            kind = true;
                        }
                        "module" => r.module = string(v)?,
                        "path" => r.path = self.shared(Slot::Path, v)?,
                        "plural" => r.plural = string(v)?,
                        "version" => {
                            r.version = self.shared(Slot::Version, v)?;
                            version = true;
                        }
                        _ => return None,
                    }
                }
            }
        }
        (kind && version).then_some(r)
    }
}

pub fn parse(text: &str) -> Option<Project> {
    // Bytes, not chars: a char-set search decodes every character (a large share of the
    // read at 200 kinds).
    if memchr::memchr2(b'\r', b'\t', text.as_bytes()).is_some() {
        return None;
    }
    let mut p = Lines::new(text);
    let mut project = Project::default();
    let mut prev = "";
    let mut has_version = false;
    while p.peek().is_some() {
        let start = p.pos;
        let (key, value) = p.entry(0, &mut prev)?;
        match key {
            "layout" => {
                project.layout = match value {
                    Some(v) => vec![string(v)?],
                    None => p.items(0)?,
                }
            }
            "resources" => {
                value.is_none().then_some(())?;
                while p.peek().is_some_and(|l| l.starts_with("- ")) {
                    project.resources.push(p.resource()?);
                }
                (!project.resources.is_empty()).then_some(())?;
            }
            "cliVersion" => project.cli_version = string(value?)?,
            "domain" => project.domain = string(value?)?,
            "multigroup" => project.multigroup = boolean(value?)?,
            "namespaced" => project.namespaced = boolean(value?)?,
            "projectName" => project.project_name = string(value?)?,
            "repo" => project.repo = string(value?)?,
            "version" => {
                project.version = string(value?)?;
                has_version = true;
            }
            _ => {
                // A key we do not model: let serde_yaml read just its lines.
                while p.peek().is_some_and(|l| l.starts_with([' ', '-'])) {
                    p.advance();
                }
                if p.bad {
                    return None;
                }
                let end = p.pos.min(text.len());
                let block: Mapping = serde_yaml::from_str(&text[start..end]).ok()?;
                let (k, v) = block.into_iter().next()?;
                if !matches!(&k, Value::String(s) if s == key) {
                    return None;
                }
                project.other.insert(k, v);
            }
        }
    }
    (has_version && !p.bad).then_some(project)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::tests::{random_project, Rng};

    /// Values a resource repeats from the one before are one allocation; a changed or quoted
    /// value is read as itself.
    #[test]
    fn repeated_values_are_shared() {
        let text = "domain: example.com\nresources:\n\
            - api:\n    crdVersion: v1\n  domain: example.com\n  group: ship\n  kind: A\n  path: example.com/p/api/v1\n  version: v1\n\
            - api:\n    crdVersion: v1\n  domain: example.com\n  group: ship\n  kind: B\n  path: example.com/p/api/v1\n  version: v1\n\
            - domain: example.com\n  group: \"yes\"\n  kind: C\n  version: v2\n\
            - group: \"yes\"\n  kind: D\n  version: v1\nversion: \"3\"\n";
        let p = parse(text).expect("the fast reader takes this shape");
        let [a, b, c, d] = &p.resources[..] else {
            panic!("{:?}", p.resources)
        };
        assert!(a.group.same(&b.group) && a.domain.same(&c.domain) && a.path.same(&b.path));
        let crd = |r: &Resource| r.api.as_ref().unwrap().crd_version.clone();
        assert!(crd(a).same(&crd(b)) && a.version.same(&b.version) && crd(a) == "v1");
        assert!(
            c.group == "yes" && c.group.same(&d.group) && c.version == "v2" && d.version == "v1"
        );
        assert!(!a.version.same(&d.version));
        assert_eq!(Some(p), serde_yaml::from_str(text).ok());
    }

    /// Whenever the fast reader returns a project, serde_yaml reads the same project: on what
    /// we write, and on that text mangled line by line.
    #[test]
    fn fast_reader_agrees_with_serde_yaml() {
        let mut r = Rng(0xfeed);
        let (mut fast_read, mut written) = (0, 0);
        let mut mangled_read = 0;
        for _ in 0..3000 {
            let p = random_project(&mut r);
            let text = p.to_yaml();
            let slow: Option<Project> = serde_yaml::from_str(&text).ok();
            if let Some(f) = parse(&text) {
                assert_eq!(Some(&f), slow.as_ref(), "{text}");
                fast_read += 1;
            }
            written += 1;
            // Mangle: drop, repeat, swap, indent, unindent, quote or comment a line, add a blank line
            // or a trailing space.
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            for _ in 0..1 + r.below(2) {
                let i = r.below(lines.len());
                let j = (i + 1).min(lines.len() - 1);
                match r.below(11) {
                    0 => {
                        lines.remove(i);
                    }
                    1 => lines.insert(i, lines[i].clone()),
                    2 => lines.swap(i, j),
                    3 => lines[i].insert_str(0, "  "),
                    4 => lines[i] = lines[i].replacen("  ", "", 1),
                    5 => lines[i] = lines[i].replacen(": ", ": \"", 1) + "\"",
                    6 => lines.insert(i, "# note".into()),
                    7 => lines[i] = lines[i].replacen("- ", "-  ", 1),
                    8 => lines.insert(i, String::new()),
                    9 => lines[i].push(' '),
                    _ => lines[i].push_str(" #c"),
                }
                if lines.is_empty() {
                    break;
                }
            }
            let text = lines.join("\n") + "\n";
            if let Some(f) = parse(&text) {
                let slow: Project = serde_yaml::from_str(&text)
                    .unwrap_or_else(|e| panic!("serde_yaml fails ({e}) where we read:\n{text}"));
                assert_eq!(f, slow, "{text}");
                mangled_read += 1;
            }
        }
        assert!(fast_read * 4 > written * 3, "{fast_read} of {written}");
        assert!(mangled_read > 300, "{mangled_read}");
    }
}
