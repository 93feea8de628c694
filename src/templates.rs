//! Templates embedded from `scaffolds/`. A file's path below its tree mirrors the generated path;
//! path segments may hold `{{variables}}`. Files ending `.hbs` are rendered with handlebars in
//! strict mode without HTML escaping (the suffix is dropped); every other file is copied as is.
//!
//! User input only ever reaches handlebars as data in the context, never as template text.

use crate::hbs;
use anyhow::{anyhow, Context, Result};
use handlebars::Handlebars;
use handlebars::JsonValue as Json;
use include_dir::{include_dir, Dir, DirEntry};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

pub static SCAFFOLDS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/scaffolds");

/// The handlebars registry, plus the raw-text pieces cut out of registered templates (see
/// [`skeleton`]). Templates are parsed on first use (with the partials they reference), so a
/// command pays only for the templates it renders.
struct Registry {
    hb: Handlebars<'static>,
    pieces: Vec<String>,
}

fn registry() -> &'static Mutex<Registry> {
    static HB: OnceLock<Mutex<Registry>> = OnceLock::new();
    HB.get_or_init(|| {
        Mutex::new(Registry {
            hb: new_handlebars(),
            pieces: vec![],
        })
    })
}

fn new_handlebars() -> Handlebars<'static> {
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    hb
}

const PIECE_OPEN: char = '\u{E000}';
const PIECE_CLOSE: char = '\u{E001}';

/// Handlebars' parser is slow on raw text (most of a template). Raw text is copied to the output
/// unchanged, so long runs of it are replaced by placeholders before parsing and put back after
/// rendering. Each run keeps its first and last line, which is what handlebars looks at to
/// decide whether a block tag stands alone on its line. Returns the skeleton; the cut pieces are
/// appended to `pieces` (placeholders hold their global index). An escaped `\{{...}}` stays in
/// the skeleton with its backslash. A template containing the placeholder characters is left
/// whole.
fn skeleton(text: &str, pieces: &mut Vec<String>) -> String {
    if text.contains(PIECE_OPEN) || text.contains(PIECE_CLOSE) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() / 4);
    let mut rest = text;
    loop {
        let (raw, tail) = match rest.find("{{") {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        match (raw.find('\n'), raw.rfind('\n')) {
            (Some(first), Some(last)) if last > first + 64 => {
                out.push_str(&raw[..=first]);
                out.push(PIECE_OPEN);
                out.push_str(&pieces.len().to_string());
                out.push(PIECE_CLOSE);
                pieces.push(raw[first + 1..last].to_string());
                out.push_str(&raw[last..]);
            }
            _ => out.push_str(raw),
        }
        if tail.is_empty() {
            return out;
        }
        let end = tail.find("}}").map_or(tail.len(), |e| e + 2);
        out.push_str(&tail[..end]);
        rest = &tail[end..];
    }
}

/// Put the cut pieces back into rendered output.
fn restore(rendered: &str, pieces: &[String]) -> String {
    let mut out = String::with_capacity(rendered.len() * 4);
    let mut rest = rendered;
    while let Some(i) = rest.find(PIECE_OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + PIECE_OPEN.len_utf8()..];
        let close = after
            .find(PIECE_CLOSE)
            .expect("placeholders are written whole");
        let idx: usize = after[..close].parse().expect("placeholder index");
        out.push_str(&pieces[idx]);
        rest = &after[close + PIECE_CLOSE.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// Names of the partials a template includes (`{{> name}}`).
fn partial_refs(text: &str) -> Vec<&str> {
    text.match_indices("{{>")
        .filter_map(|(i, _)| {
            let rest = text[i + 3..].trim_start();
            let end = rest.find(|c: char| c.is_whitespace() || c == '}')?;
            Some(&rest[..end])
        })
        .collect()
}

/// Register template `name` (its path below scaffolds/ without `.hbs`) and its partials.
fn ensure(reg: &mut Registry, name: &str) -> Result<()> {
    if reg.hb.has_template(name) {
        return Ok(());
    }
    let text = template_text(name).ok_or_else(|| MissingTemplate(format!("{name}.hbs (UTF-8)")))?;
    for partial in partial_refs(text) {
        ensure(reg, partial)?;
    }
    let skel = skeleton(text, &mut reg.pieces);
    reg.hb
        .register_template_string(name, skel)
        .with_context(|| format!("template {name}.hbs does not parse"))?;
    Ok(())
}

/// A template (or tree) the set in use does not have: an earlier release's set lacks what
/// later releases added.
#[derive(Debug)]
pub struct MissingTemplate(pub String);

impl std::fmt::Display for MissingTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no template {}", self.0)
    }
}

impl std::error::Error for MissingTemplate {}

/// The template set in use: the current `scaffolds/`, or an earlier release's while one is
/// active (see [`crate::releases::with`]). Index 0 is the current set, `1 + i` release `i`.
fn set() -> (usize, &'static Dir<'static>) {
    match crate::releases::active() {
        None => (0, &SCAFFOLDS),
        Some(i) => (1 + i, crate::releases::RELEASES[i].scaffolds),
    }
}

/// The embedded entry at `path` (below the tree of the set in use). include_dir sorts each
/// directory's entries by name, so each step down is a binary search (a unit test checks the
/// order).
fn entry(path: &str) -> Option<&'static DirEntry<'static>> {
    let mut dir = set().1;
    let mut from = 0;
    loop {
        let next = path[from..].find('/').map(|i| from + i);
        let full = &path.as_bytes()[..next.unwrap_or(path.len())];
        let entries = dir.entries();
        let i = entries
            .binary_search_by(|e| e.path().as_os_str().as_encoded_bytes().cmp(full))
            .ok()?;
        match (next, &entries[i]) {
            (None, e) => return Some(e),
            (Some(n), DirEntry::Dir(d)) => {
                dir = d;
                from = n + 1;
            }
            (Some(_), DirEntry::File(_)) => return None,
        }
    }
}

/// The embedded file at `path` (below the tree of the set in use).
fn file(path: &str) -> Option<&'static include_dir::File<'static>> {
    entry(path)?.as_file()
}

/// The text of template `name` (its path below scaffolds/ without `.hbs`).
fn template_text(name: &str) -> Option<&'static str> {
    file(&format!("{name}.hbs"))?.contents_utf8()
}

/// The files below `dir`, in the order of their paths.
fn walk(dir: &'static Dir<'static>, out: &mut Vec<&'static include_dir::File<'static>>) {
    for e in dir.entries() {
        match e {
            DirEntry::Dir(sub) => walk(sub, out),
            DirEntry::File(f) => out.push(f),
        }
    }
}

/// A template compiled by our compiler ([`hbs`]), or the reason it goes to handlebars.
type Compiled = std::result::Result<hbs::Template<'static>, hbs::Unsupported>;

/// The context as JSON, with only the top-level values `names` lists (sorted, deduplicated)
/// unless `whole`: serializing every value of a command's context took more instructions than
/// rendering its templates (issue 50).
fn context_json(ctx: &impl Serialize, names: &[&str], whole: bool) -> Json {
    if !whole {
        if let Ok(json) = ctx.serialize(pick::Pick {
            names: &sort_names(names),
        }) {
            return json;
        }
    }
    handlebars::to_json(ctx)
}

/// A name's first eight bytes as a number: ordering names by it, then by the whole name, is the
/// order of the strings, and spares most comparisons a `memcmp`.
fn prefix(n: &str) -> u64 {
    let mut b = [0u8; 8];
    let k = n.len().min(8);
    b[..k].copy_from_slice(&n.as_bytes()[..k]);
    u64::from_be_bytes(b)
}

/// Names (hundreds, a few dozen distinct), sorted and deduplicated, with their [`prefix`].
fn sort_names<'n>(names: &[&'n str]) -> Vec<(u64, &'n str)> {
    let mut keyed: Vec<(u64, &str)> = names.iter().map(|n| (prefix(n), *n)).collect();
    keyed.sort_unstable();
    keyed.dedup_by(|a, b| a.1 == b.1);
    keyed
}

/// Render a compiled template with `ctx` (holding at least the names it uses); when our
/// compiler cannot render it, or fails, handlebars renders it with the whole context (and
/// reports the error).
fn render_compiled(
    name: &str,
    compiled: &Compiled,
    ctx: &Json,
    whole: &mut dyn FnMut() -> Json,
) -> Result<String> {
    if let Ok(t) = compiled {
        let mut out = String::new();
        if t.render(ctx, &mut out).is_ok() {
            return Ok(out);
        }
    }
    note_fallback(name);
    render_handlebars(name, &whole())
}

/// A template our compiler cannot render goes to handlebars, which compiles it at run time
/// (about 900 instructions per byte of template; issue 50). Debug builds append its name to the
/// file `OPBUILDER_TEMPLATE_FALLBACK_LOG` names, if set: the golden tests (e2e/golden.rs) fail
/// on any. An earlier release's template is named `<version>:<name>`.
#[cfg(debug_assertions)]
fn note_fallback(name: &str) {
    use std::io::Write;
    let Some(log) = std::env::var_os("OPBUILDER_TEMPLATE_FALLBACK_LOG") else {
        return;
    };
    let line = match crate::releases::active_version() {
        Some(v) => format!("{v}:{name}\n"),
        None => format!("{name}\n"),
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        panic!("OPBUILDER_TEMPLATE_FALLBACK_LOG {log:?}: {e}");
    }
}

#[cfg(not(debug_assertions))]
#[inline(always)]
fn note_fallback(_name: &str) {}

fn render_handlebars(name: &str, ctx: &impl Serialize) -> Result<String> {
    if set().0 != 0 {
        // An earlier release's template: a registry of its own for this one rendering (rare:
        // our compiler renders nearly every template).
        let mut reg = Registry {
            hb: new_handlebars(),
            pieces: vec![],
        };
        ensure(&mut reg, name)?;
        let out = reg
            .hb
            .render(name, ctx)
            .with_context(|| format!("rendering {name}.hbs"))?;
        return Ok(restore(&out, &reg.pieces));
    }
    let mut reg = registry().lock().unwrap_or_else(|e| e.into_inner());
    ensure(&mut reg, name)?;
    let out = reg
        .hb
        .render(name, ctx)
        .with_context(|| format!("rendering {name}.hbs"))?;
    Ok(restore(&out, &reg.pieces))
}

/// Every embedded file of the set in use, in the order of their paths.
#[cfg(test)]
fn all_files() -> Vec<&'static include_dir::File<'static>> {
    let mut out = vec![];
    walk(set().1, &mut out);
    out
}

/// A rendered file: its path relative to the project root and its content.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub path: PathBuf,
    /// The template's path below its tree, before variables are filled in (for filtering).
    pub template: String,
    pub content: String,
}

fn render_path(template_path: &str, ctx: &Json) -> Result<PathBuf> {
    let b = template_path.as_bytes();
    let plain = !b.is_empty()
        && b[0] != b'/'
        && b[b.len() - 1] != b'/'
        && !b.windows(2).any(|w| w == b"//");
    if plain && memchr::memchr(b'{', b).is_none() {
        return Ok(PathBuf::from(template_path));
    }
    let mut out = String::with_capacity(template_path.len() + 32);
    for seg in template_path.split('/') {
        let seg = if seg.contains("{{") {
            match hbs::render_str(seg, ctx, &|_| None) {
                Ok(s) => s,
                Err(_) => {
                    note_fallback(&format!("path segment {seg}"));
                    let reg = registry().lock().unwrap_or_else(|e| e.into_inner());
                    reg.hb
                        .render_template(seg, ctx)
                        .with_context(|| format!("rendering path segment {seg:?}"))?
                }
            }
        } else {
            seg.to_string()
        };
        for part in seg.split('/').filter(|p| !p.is_empty()) {
            if !out.is_empty() {
                out.push('/');
            }
            out.push_str(part);
        }
    }
    Ok(PathBuf::from(out))
}

/// The names the `{{...}}` segments of a template's path use (see [`hbs::Template::names`]).
fn path_names(template_path: &'static str, out: &mut Vec<&'static str>) -> bool {
    memchr::memchr(b'{', template_path.as_bytes()).is_none()
        || template_path
            .split('/')
            .filter(|seg| seg.contains("{{"))
            .all(|seg| hbs::Template::compile(seg, &|_| None).is_ok_and(|t| t.names(out)))
}

/// Render every file of the tree `scaffolds/<tree>/`, keeping those `keep` accepts
/// (it receives the template's path below the tree, without `.hbs`).
pub fn render_tree(
    tree: &str,
    ctx: &impl Serialize,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<Rendered>> {
    let Some(DirEntry::Dir(dir)) = entry(tree) else {
        if set().0 != 0 {
            // A tree that an earlier release did not have yet (a plugin added later): that
            // release wrote nothing for it.
            return Ok(vec![]);
        }
        return Err(MissingTemplate(format!("tree {tree:?}")).into());
    };
    let mut files = vec![];
    walk(dir, &mut files);
    // Every template first, for the names the context must hold.
    let mut kept = vec![];
    let mut names = vec![];
    let mut whole = false;
    for file in files {
        let full = file
            .path()
            .to_str()
            .ok_or_else(|| anyhow!("{} is not UTF-8", file.path().display()))?;
        let rel = &full[tree.len() + 1..];
        let (rel, compile) = match rel.strip_suffix(".hbs") {
            Some(r) => (r, true),
            None => (rel, false),
        };
        if !keep(rel) {
            continue;
        }
        let text = file
            .contents_utf8()
            .ok_or_else(|| anyhow!("{full} is not UTF-8"))?;
        let compiled = compile.then(|| hbs::Template::compile(text, &template_text));
        if let Some(Ok(t)) = &compiled {
            whole |= !t.names(&mut names);
        }
        whole |= !path_names(rel, &mut names);
        kept.push((full, rel, text, compiled));
    }
    let json = context_json(ctx, &names, whole);
    let mut all = None;
    let mut whole = || all.get_or_insert_with(|| handlebars::to_json(ctx)).clone();
    let mut out = vec![];
    for (full, rel, text, compiled) in kept {
        let content = match &compiled {
            Some(c) => render_compiled(full.strip_suffix(".hbs").unwrap(), c, &json, &mut whole)?,
            None => text.to_string(),
        };
        out.push(Rendered {
            path: render_path(rel, &json)?,
            template: rel.to_string(),
            content,
        });
    }
    Ok(out)
}

/// Render one template by its path below `scaffolds/` without the `.hbs` suffix
/// (used for fragments inserted above markers).
///
/// While an earlier release is active, a fragment that release did not have renders as nothing
/// (an empty fragment is never inserted): that release wrote nothing there.
pub fn render(name: &str, ctx: &impl Serialize) -> Result<String> {
    let Some(text) = template_text(name) else {
        if set().0 != 0 && file(&format!("{name}.hbs")).is_none() {
            return Ok(String::new());
        }
        return Err(MissingTemplate(format!("{name}.hbs")).into());
    };
    let compiled = hbs::Template::compile(text, &template_text);
    let mut names = vec![];
    let whole = !compiled.as_ref().is_ok_and(|t| t.names(&mut names));
    let json = context_json(ctx, &names, whole);
    render_compiled(name, &compiled, &json, &mut || handlebars::to_json(ctx))
}

/// A serializer that keeps only some top-level values of a struct or map: it gives what
/// `serde_json::to_value` gives, less the other values, without serializing them.
mod pick {
    use handlebars::JsonValue as Json;
    use serde::ser::{self, Impossible, Serialize};
    use serde_json::{Error, Map};

    /// Keep the values named in `names` (sorted by [`super::sort_names`]).
    pub struct Pick<'n> {
        pub names: &'n [(u64, &'n str)],
    }

    /// The name in `names` that `key` is, if it is one.
    fn find<'n>(names: &[(u64, &'n str)], key: &str) -> Option<&'n str> {
        let i = names.binary_search(&(super::prefix(key), key)).ok()?;
        Some(names[i].1)
    }

    pub struct Fields<'n> {
        names: &'n [(u64, &'n str)],
        map: Map<String, Json>,
        /// The key of the value to come: `Some(None)` when it is not wanted.
        key: Option<Option<&'n str>>,
    }

    fn refused() -> Error {
        ser::Error::custom("the context is not a struct or a map")
    }

    /// The methods of a serializer for what it refuses: scalars, sequences, enums.
    macro_rules! refuse {
        () => {
            refuse!(
                serialize_bool(bool),
                serialize_i8(i8),
                serialize_i16(i16),
                serialize_i32(i32),
                serialize_i64(i64),
                serialize_u8(u8),
                serialize_u16(u16),
                serialize_u32(u32),
                serialize_u64(u64),
                serialize_f32(f32),
                serialize_f64(f64),
                serialize_char(char),
                serialize_bytes(&[u8]),
                serialize_none(),
                serialize_unit(),
                serialize_unit_struct(&'static str),
                serialize_unit_variant(&'static str, u32, &'static str),
            );

            fn serialize_newtype_variant<T: ?Sized + Serialize>(
                self,
                _: &'static str,
                _: u32,
                _: &'static str,
                _: &T,
            ) -> Result<Self::Ok, Error> {
                Err(refused())
            }

            fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
                Err(refused())
            }

            fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
                Err(refused())
            }

            fn serialize_tuple_struct(
                self,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeTupleStruct, Error> {
                Err(refused())
            }

            fn serialize_tuple_variant(
                self,
                _: &'static str,
                _: u32,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeTupleVariant, Error> {
                Err(refused())
            }

            fn serialize_struct_variant(
                self,
                _: &'static str,
                _: u32,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeStructVariant, Error> {
                Err(refused())
            }
        };
        ($($f:ident($($t:ty),*)),* $(,)?) => {
            $(fn $f(self, $(_: $t),*) -> Result<Self::Ok, Error> {
                Err(refused())
            })*
        };
    }

    impl<'n> ser::Serializer for Pick<'n> {
        type Ok = Json;
        type Error = Error;
        type SerializeSeq = Impossible<Json, Error>;
        type SerializeTuple = Impossible<Json, Error>;
        type SerializeTupleStruct = Impossible<Json, Error>;
        type SerializeTupleVariant = Impossible<Json, Error>;
        type SerializeMap = Fields<'n>;
        type SerializeStruct = Fields<'n>;
        type SerializeStructVariant = Impossible<Json, Error>;

        refuse!();
        refuse!(serialize_str(&str));

        fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Json, Error> {
            value.serialize(self)
        }

        fn serialize_newtype_struct<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            value: &T,
        ) -> Result<Json, Error> {
            value.serialize(self)
        }

        fn serialize_map(self, _: Option<usize>) -> Result<Fields<'n>, Error> {
            Ok(Fields {
                names: self.names,
                map: Map::new(),
                key: None,
            })
        }

        fn serialize_struct(self, _: &'static str, len: usize) -> Result<Fields<'n>, Error> {
            self.serialize_map(Some(len))
        }
    }

    impl ser::SerializeStruct for Fields<'_> {
        type Ok = Json;
        type Error = Error;

        fn serialize_field<T: ?Sized + Serialize>(
            &mut self,
            key: &'static str,
            value: &T,
        ) -> Result<(), Error> {
            if find(self.names, key).is_some() {
                self.map
                    .insert(key.to_string(), serde_json::to_value(value)?);
            }
            Ok(())
        }

        fn end(self) -> Result<Json, Error> {
            Ok(Json::Object(self.map))
        }
    }

    impl ser::SerializeMap for Fields<'_> {
        type Ok = Json;
        type Error = Error;

        fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
            self.key = Some(key.serialize(KeyName(self.names))?);
            Ok(())
        }

        fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
            if let Some(key) = self.key.take().ok_or_else(refused)? {
                self.map
                    .insert(key.to_string(), serde_json::to_value(value)?);
            }
            Ok(())
        }

        fn end(self) -> Result<Json, Error> {
            Ok(Json::Object(self.map))
        }
    }

    /// A map's key: the name in `names` it is, if it is one (without copying it). serde_json
    /// writes other keys (numbers, chars, ...) as strings of its own: they are refused, and the
    /// whole context is serialized instead.
    struct KeyName<'n>(&'n [(u64, &'n str)]);

    impl<'n> ser::Serializer for KeyName<'n> {
        type Ok = Option<&'n str>;
        type Error = Error;
        type SerializeSeq = Impossible<Self::Ok, Error>;
        type SerializeTuple = Impossible<Self::Ok, Error>;
        type SerializeTupleStruct = Impossible<Self::Ok, Error>;
        type SerializeTupleVariant = Impossible<Self::Ok, Error>;
        type SerializeMap = Impossible<Self::Ok, Error>;
        type SerializeStruct = Impossible<Self::Ok, Error>;
        type SerializeStructVariant = Impossible<Self::Ok, Error>;

        refuse!();

        fn serialize_str(self, key: &str) -> Result<Self::Ok, Error> {
            Ok(find(self.0, key))
        }

        fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<Self::Ok, Error> {
            Err(refused())
        }

        fn serialize_newtype_struct<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: &T,
        ) -> Result<Self::Ok, Error> {
            Err(refused())
        }

        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
            Err(refused())
        }

        fn serialize_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStruct, Error> {
            Err(refused())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ProjectCtx;
    use crate::project::Project;
    use crate::resource::{CtxInput, Gvk, ResourceCtx};

    fn project(namespaced: bool, multigroup: bool) -> Project {
        Project {
            domain: "example.com".into(),
            repo: "example.com/guestbook".into(),
            project_name: "guestbook".into(),
            namespaced,
            multigroup,
            version: "3".into(),
            ..Default::default()
        }
    }

    fn resource_ctx(p: &Project, license: Option<&str>, core: bool) -> ResourceCtx {
        let (group, domain, path) = if core {
            ("apps", "", "k8s.io/api/apps/v1".to_string())
        } else {
            ("ingress", "example.com", format!("{}/api/v1beta1", p.repo))
        };
        let gvk = Gvk {
            group: group.into(),
            version: "v1beta1".into(),
            kind: "Type".into(),
            domain: domain.into(),
        };
        let mut c = ResourceCtx::new(CtxInput {
            project: p,
            pctx: ProjectCtx::new(p, license.map(str::to_string)),
            gvk: &gvk,
            plural: "types",
            api_path: &path,
            cluster_scoped: true,
            core,
            external: false,
            controller_name: None,
            has_api: !core,
        });
        c.defaulting = true;
        c.validation = true;
        c.conversion = true;
        c.custom_defaulting_path = "/custom-default".into();
        c.hub_import_alias = "ingressv1".into();
        c.hub_api_path = format!("{}/api/v1", p.repo);
        c.spoke_version = "v2".into();
        c.spoke_dir = "api/v2".into();
        c
    }

    /// The values the Rust layout's templates see besides the go/v4 ones (what
    /// `plugins::rust` puts in its contexts), for a template named `name`.
    /// The parameters a partial gets from the template that includes it (`{{> name k=v}}`).
    fn add_partial_params(name: &str, json: &mut Json) {
        if name == "fragments/makefile_deploy" {
            let m = json.as_object_mut().unwrap();
            m.insert("setImage".into(), Json::from("$(SET_IMAGE)"));
            m.insert("build".into(), Json::from("$(BUILD)"));
        }
    }

    /// The deploy-image plugin's own values (go/v4's and the Rust layout's templates), every
    /// option set (core: none set).
    fn add_deploy_image_values(name: &str, json: &mut Json, core: bool) {
        if !name.starts_with("deploy-image/") && !name.starts_with("rust/deploy-image/") {
            return;
        }
        let m = json.as_object_mut().unwrap();
        for (k, v) in [
            ("kindUpper", Json::from("KIND")),
            ("image", Json::from("memcached:1.6")),
            ("hasCommand", Json::from(!core)),
            ("command", Json::from(r#"[]string{"a", "b"}"#)),
            ("hasPort", Json::from(!core)),
            ("port", Json::from("11211")),
            ("hasRunAsUser", Json::from(!core)),
            ("runAsUser", Json::from("1001")),
        ] {
            m.insert(k.into(), v);
        }
    }

    fn add_rust_values(name: &str, json: &mut Json, core: bool) {
        add_partial_params(name, json);
        if !name.starts_with("rust/") {
            return;
        }
        let pins = handlebars::to_json(&crate::versions::pins().rust);
        let m = json.as_object_mut().unwrap();
        for (k, v) in [
            ("crateName", Json::from("guest-book")),
            ("libName", Json::from("guest_book")),
            ("rust", pins),
            ("groupMod", Json::from("ingress")),
            ("versionMod", Json::from("v1")),
            ("kindMod", Json::from("app")),
            ("controllerMod", Json::from("app")),
            (
                "apiGroup",
                Json::from(if core { "" } else { "ingress.example.com" }),
            ),
            ("typePath", Json::from("crate::api::ingress::v1::App")),
            ("typeName", Json::from("App")),
            ("typeUse", Json::from("crate::api::ingress::v1::App")),
            ("webhookMod", Json::from("ingress_v1_app")),
            ("renamed", Json::from(core)),
            ("foreign", Json::from(core)),
            ("rustType", Json::from("App")),
            ("sampleLiteral", Json::from("r#\"kind: App\"#")),
            (
                "externalCrd",
                Json::from("external-crds/ingress.example.com_apps.yaml"),
            ),
            ("storage", Json::from(!core)),
            ("namespaced", Json::from(!core)),
            ("conversionMod", Json::from("ingress_app_conversion")),
            (
                "spokes",
                handlebars::to_json([std::collections::BTreeMap::from([
                    ("version", "v2"),
                    ("versionMod", "v2"),
                ])]),
            ),
        ] {
            m.insert(k.into(), v);
        }
    }

    /// Every template of every tree renders in strict mode, in each variant of the context.
    #[test]
    fn every_template_renders() {
        let mut rendered = 0;
        for (ns, mg, lic) in [
            (false, false, Some("/*\nCopyright YEAR X.\n*/")),
            (true, true, None),
        ] {
            let p = project(ns, mg);
            let pctx = ProjectCtx::new(&p, lic.map(str::to_string));
            rendered += render_tree("init", &pctx, |_| true).unwrap().len();
            for core in [false, true] {
                let rctx = resource_ctx(&p, lic, core);
                for tree in [
                    "api",
                    "controller",
                    "webhook",
                    "webhook-conversion",
                    "webhook-spoke",
                ] {
                    rendered += render_tree(tree, &rctx, |_| true).unwrap().len();
                }
                let mut rust = handlebars::to_json(&rctx);
                add_rust_values("rust/api", &mut rust, core);
                for tree in [
                    "rust/init",
                    "rust/api",
                    "rust/controller",
                    "rust/webhook",
                    "rust/conversion",
                    "rust/external",
                    "rust/telemetry",
                ] {
                    rendered += render_tree(tree, &rust, |_| true).unwrap().len();
                }
                let mut deploy = rust.clone();
                add_deploy_image_values("rust/deploy-image/", &mut deploy, core);
                rendered += render_tree("rust/deploy-image", &deploy, |_| true)
                    .unwrap()
                    .len();
                for f in all_files() {
                    let name = f.path().to_string_lossy();
                    let fragment =
                        name.starts_with("fragments/") || name.starts_with("rust/fragments/");
                    if let Some(stem) = name.strip_suffix(".hbs").filter(|_| fragment) {
                        let out = if stem.starts_with("rust/fragments/") {
                            render(stem, &rust)
                        } else {
                            let mut json = handlebars::to_json(&rctx);
                            add_partial_params(stem, &mut json);
                            render(stem, &json)
                        };
                        out.unwrap_or_else(|e| panic!("{name}: {e:#}"));
                        rendered += 1;
                    }
                }
            }
        }
        for define_scheme in [false, true] {
            let ctx = crate::plugins::typed_clients::HelperCtx {
                boilerplate: String::new(),
                version: "v1".into(),
                api_dir: "api/v1".into(),
                qgroup: "ship.example.com".into(),
                define_scheme,
                group_go_name: "Ship".into(),
            };
            rendered += render_tree("typed-clients", &ctx, |_| true).unwrap().len();
        }
        let templates = all_files()
            .iter()
            .filter(|f| f.path().extension().is_some_and(|e| e == "hbs"))
            .count();
        assert!(
            rendered >= templates,
            "rendered {rendered} of {templates} templates"
        );
    }

    #[test]
    fn strict_mode_rejects_unknown_variables_and_does_not_escape() {
        let reg = registry().lock().unwrap();
        let hb = &reg.hb;
        assert!(hb
            .render_template("{{nope}}", &serde_yaml::Mapping::new())
            .is_err());
        let mut m = std::collections::BTreeMap::new();
        m.insert("x", "a<b>&\"c\"");
        assert_eq!(hb.render_template("{{x}}", &m).unwrap(), "a<b>&\"c\"");
    }

    #[test]
    fn user_text_is_data_not_template() {
        let mut m = std::collections::BTreeMap::new();
        m.insert("x", "{{y}}");
        assert_eq!(
            registry()
                .lock()
                .unwrap()
                .hb
                .render_template("{{x}}", &m)
                .unwrap(),
            "{{y}}"
        );
    }

    /// Rendering from skeletons (raw text cut out before parsing) gives exactly what plain
    /// handlebars gives, for every template and both context variants.
    #[test]
    fn skeletons_render_like_plain_handlebars() {
        let mut plain = new_handlebars();
        for f in all_files() {
            if let Some(name) = f.path().to_str().and_then(|n| n.strip_suffix(".hbs")) {
                plain
                    .register_template_string(name, f.contents_utf8().unwrap())
                    .unwrap();
            }
        }
        let mut compared = 0;
        for (ns, mg, lic) in [
            (false, false, Some("/*\nCopyright YEAR X.\n*/")),
            (true, true, None),
        ] {
            let p = project(ns, mg);
            for core in [false, true] {
                let rctx = resource_ctx(&p, lic, core);
                let pctx = ProjectCtx::new(&p, lic.map(str::to_string));
                for f in all_files() {
                    let Some(name) = f.path().to_str().and_then(|n| n.strip_suffix(".hbs")) else {
                        continue;
                    };
                    let mut json = if name.starts_with("init/") {
                        handlebars::to_json(&pctx)
                    } else {
                        handlebars::to_json(&rctx)
                    };
                    add_rust_values(name, &mut json, core);
                    add_deploy_image_values(name, &mut json, core);
                    // The certs plugin's config/ names the file of the layout's certificate code.
                    if name.starts_with("certs/config/") {
                        let m = json.as_object_mut().unwrap();
                        m.insert("certsCode".into(), Json::from("src/webhook_certs.rs"));
                    }
                    assert_eq!(
                        render_handlebars(name, &json).unwrap(),
                        plain.render(name, &json).unwrap(),
                        "{name}"
                    );
                    compared += 1;
                }
            }
        }
        assert!(compared > 100);
        let mut pieces = vec![];
        let text = format!(
            "a\n{}\n{{{{#if x}}}}\nb\n{{{{/if}}}}\n",
            "long line\n".repeat(10)
        );
        let skel = skeleton(&text, &mut pieces);
        assert!(skel.len() < text.len() / 2 && pieces.len() == 1, "{skel}");
        assert_eq!(restore(&skel, &pieces), text);
    }

    /// Our compiler gives exactly what plain handlebars gives, for every template of the set
    /// in use in each context variant; returns how many it rendered and the templates it
    /// handed to handlebars.
    fn compare_with_handlebars() -> (usize, std::collections::BTreeSet<&'static str>) {
        let mut plain = new_handlebars();
        for f in all_files() {
            if let Some(name) = f.path().to_str().and_then(|n| n.strip_suffix(".hbs")) {
                plain
                    .register_template_string(name, f.contents_utf8().unwrap())
                    .unwrap();
            }
        }
        let mut ours = 0;
        let mut fell_back = std::collections::BTreeSet::new();
        for (ns, mg, lic) in [
            (false, false, Some("/*\nCopyright YEAR X.\n*/")),
            (true, true, None),
        ] {
            let p = project(ns, mg);
            let pctx = ProjectCtx::new(&p, lic.map(str::to_string));
            for core in [false, true] {
                let rctx = resource_ctx(&p, lic, core);
                for f in all_files() {
                    let Some(name) = f.path().to_str().and_then(|n| n.strip_suffix(".hbs")) else {
                        continue;
                    };
                    let mut json = if name.starts_with("init/") {
                        handlebars::to_json(&pctx)
                    } else {
                        handlebars::to_json(&rctx)
                    };
                    add_rust_values(name, &mut json, core);
                    add_deploy_image_values(name, &mut json, core);
                    let theirs = plain.render(name, &json);
                    // As a command renders: with only the values the template names.
                    let rendered =
                        hbs::Template::compile(f.contents_utf8().unwrap(), &template_text)
                            .map_err(hbs::RenderError::from)
                            .and_then(|t| {
                                let mut names = vec![];
                                let whole = !t.names(&mut names);
                                let picked = context_json(&json, &names, whole);
                                let mut out = String::new();
                                t.render(&picked, &mut out).map(|()| out)
                            });
                    match rendered {
                        Ok(out) => {
                            assert_eq!(out, theirs.unwrap(), "{name}");
                            ours += 1;
                        }
                        // An earlier release's template may want a value today's contexts lack.
                        Err(hbs::RenderError::Missing(v)) => {
                            assert!(theirs.is_err(), "{name}: we miss {v}, handlebars does not")
                        }
                        Err(hbs::RenderError::Unsupported) => {
                            fell_back.insert(name);
                        }
                    }
                }
            }
        }
        (ours, fell_back)
    }

    /// Our compiler renders every template of the current set itself (none is left to
    /// handlebars' run-time compiler), exactly as handlebars does.
    #[test]
    fn compiler_matches_handlebars_on_every_template() {
        let (ours, fell_back) = compare_with_handlebars();
        assert!(ours > 400, "only {ours} renderings compared");
        assert!(
            fell_back.is_empty(),
            "handed to handlebars (src/hbs.rs cannot render them): {fell_back:?}"
        );
    }

    /// Likewise for the earlier releases' templates (`alpha update` renders them).
    #[test]
    fn compiler_matches_handlebars_on_every_release_template() {
        for r in crate::releases::RELEASES {
            let (ours, fell_back) = crate::releases::with(r.version, compare_with_handlebars);
            eprintln!("release {}: {ours} rendered by us", r.version);
            assert!(ours > 100, "release {}: only {ours} compared", r.version);
            assert!(
                fell_back.is_empty(),
                "release {}: handed to handlebars: {fell_back:?}",
                r.version
            );
        }
    }

    /// include_dir sorts each directory's entries by name: [`entry`] searches them by bisection
    /// and [`walk`] lists files in the order of their paths.
    #[test]
    fn embedded_entries_are_sorted_by_name() {
        fn check(d: &'static Dir<'static>) {
            let paths: Vec<&[u8]> = d
                .entries()
                .iter()
                .map(|e| e.path().as_os_str().as_encoded_bytes())
                .collect();
            assert!(
                paths.windows(2).all(|w| w[0] < w[1]),
                "{}",
                d.path().display()
            );
            for sub in d.dirs() {
                check(sub);
            }
        }
        check(&SCAFFOLDS);
        for r in crate::releases::RELEASES {
            check(r.scaffolds);
        }
        let files = all_files();
        assert!(files.windows(2).all(|w| w[0].path() < w[1].path()));
        for f in &files {
            let p = f.path().to_str().unwrap();
            assert!(std::ptr::eq(file(p).unwrap(), *f), "{p}");
        }
        assert!(file("init").is_none() && entry("init").is_some_and(|e| e.as_dir().is_some()));
        assert!(file("init/Makefile.hbs/x").is_none() && file("nope/x").is_none());
        assert!(file("").is_none() && file("init/").is_none());
    }

    /// The context a template sees holds exactly `serde_json::to_value`'s values for the names
    /// it uses, for structs (with flattened fields) and maps alike.
    #[test]
    fn picked_context_is_to_value_less_the_other_names() {
        let p = project(false, false);
        let rctx = resource_ctx(&p, Some("/* x */"), false);
        let pctx = ProjectCtx::new(&p, None);
        let mut rust = handlebars::to_json(&rctx);
        add_rust_values("rust/api", &mut rust, false);
        let check = |full: Json, picked: &dyn Fn(&[&str]) -> Json| {
            let all: Vec<String> = full.as_object().unwrap().keys().cloned().collect();
            assert!(all.len() > 10, "{all:?}");
            // Unsorted, with duplicates and a name the context lacks, as templates give them.
            let mut names: Vec<&str> = all.iter().map(String::as_str).step_by(3).rev().collect();
            names.extend(["notAField", names[0], names[1]]);
            let got = picked(&names);
            let want: serde_json::Map<String, Json> = full
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| names.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(got, Json::Object(want));
            let every: Vec<&str> = all.iter().map(String::as_str).collect();
            assert_eq!(picked(&every), full);
        };
        check(handlebars::to_json(&rctx), &|n| {
            context_json(&rctx, n, false)
        });
        check(handlebars::to_json(&pctx), &|n| {
            context_json(&pctx, n, false)
        });
        check(rust.clone(), &|n| context_json(&rust, n, false));
        // Not a struct or map: the whole value.
        assert_eq!(context_json(&"text", &["a"], false), Json::from("text"));
        assert_eq!(context_json(&rctx, &[], true), handlebars::to_json(&rctx));
    }

    #[test]
    fn every_template_parses() {
        let mut reg = registry().lock().unwrap();
        for f in all_files() {
            if let Some(name) = f.path().to_str().and_then(|n| n.strip_suffix(".hbs")) {
                ensure(&mut reg, name).unwrap_or_else(|e| panic!("{e:#}"));
            }
        }
        assert_eq!(
            partial_refs("a {{> fragments/x.go}} b {{>y}}"),
            vec!["fragments/x.go", "y"]
        );
    }

    #[test]
    fn path_segments_are_rendered() {
        let mut m = std::collections::BTreeMap::new();
        m.insert("apiDir", "api/crew/v1");
        m.insert("kindLower", "captain");
        let p = render_path(
            "{{apiDir}}/{{kindLower}}_types.go",
            &handlebars::to_json(&m),
        )
        .unwrap();
        assert_eq!(p, PathBuf::from("api/crew/v1/captain_types.go"));
        let ctx = handlebars::to_json(m);
        for (template, want) in [
            ("cmd/main.go", "cmd/main.go"),
            ("a//b/", "a/b"),
            ("{{kindLower}}/{{apiDir}}/x", "captain/api/crew/v1/x"),
        ] {
            let got = render_path(template, &ctx).unwrap();
            assert_eq!(got.as_os_str(), want, "{template}");
            let mut pushed = PathBuf::new();
            for part in want.split('/') {
                pushed.push(part);
            }
            assert_eq!(got.as_os_str(), pushed.as_os_str());
        }
    }
}
