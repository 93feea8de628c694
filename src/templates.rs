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

type Index = Vec<(&'static str, &'static include_dir::File<'static>)>;

/// The embedded file at `path` (below the tree of the set in use), found through a sorted index.
fn file(path: &str) -> Option<&'static include_dir::File<'static>> {
    static INDEX: OnceLock<Vec<OnceLock<Index>>> = OnceLock::new();
    let sets = INDEX.get_or_init(|| {
        (0..=crate::releases::RELEASES.len())
            .map(|_| OnceLock::new())
            .collect()
    });
    let index = sets[set().0].get_or_init(|| {
        let mut v: Vec<_> = all_files()
            .iter()
            .filter_map(|f| Some((f.path().to_str()?, *f)))
            .collect();
        v.sort_by_key(|(p, _)| *p);
        v
    });
    index
        .binary_search_by_key(&path, |(p, _)| p)
        .ok()
        .map(|i| index[i].1)
}

/// The text of template `name` (its path below scaffolds/ without `.hbs`).
fn template_text(name: &str) -> Option<&'static str> {
    file(&format!("{name}.hbs"))?.contents_utf8()
}

/// Render `text` (the template `name`) with our compiler ([`hbs`]); when the template needs more
/// than it supports, or fails, handlebars renders it (and reports the error).
fn render_text(name: &str, text: &'static str, ctx: &Json) -> Result<String> {
    match hbs::render_str(text, ctx, &template_text) {
        Ok(out) => Ok(out),
        Err(_) => {
            note_fallback(name);
            render_handlebars(name, ctx)
        }
    }
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

/// Every embedded file of the set in use, sorted by path (computed once per set).
pub fn all_files() -> &'static [&'static include_dir::File<'static>] {
    type Files = Vec<&'static include_dir::File<'static>>;
    static FILES: OnceLock<Vec<OnceLock<Files>>> = OnceLock::new();
    let sets = FILES.get_or_init(|| {
        (0..=crate::releases::RELEASES.len())
            .map(|_| OnceLock::new())
            .collect()
    });
    let (i, root) = set();
    sets[i].get_or_init(|| {
        fn walk(d: &'static Dir<'static>, out: &mut Vec<&'static include_dir::File<'static>>) {
            for e in d.entries() {
                match e {
                    DirEntry::Dir(sub) => walk(sub, out),
                    DirEntry::File(f) => out.push(f),
                }
            }
        }
        let mut out = vec![];
        walk(root, &mut out);
        out.sort_by_key(|f| f.path());
        out
    })
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
    let mut out = PathBuf::new();
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
            out.push(part);
        }
    }
    Ok(out)
}

/// Render every file of the tree `scaffolds/<tree>/`, keeping those `keep` accepts
/// (it receives the template's path below the tree, without `.hbs`).
pub fn render_tree(
    tree: &str,
    ctx: &impl Serialize,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<Rendered>> {
    if set().1.get_dir(tree).is_none() {
        if set().0 != 0 {
            // A tree that an earlier release did not have yet (a plugin added later): that
            // release wrote nothing for it.
            return Ok(vec![]);
        }
        return Err(MissingTemplate(format!("tree {tree:?}")).into());
    }
    let json = handlebars::to_json(ctx);
    let prefix = format!("{tree}/");
    let mut out = vec![];
    for file in all_files() {
        let Some(full) = file.path().to_str() else {
            continue;
        };
        let Some(rel) = full.strip_prefix(&prefix) else {
            continue;
        };
        let (rel, rendered) = match rel.strip_suffix(".hbs") {
            Some(r) => (r, true),
            None => (rel, false),
        };
        if !keep(rel) {
            continue;
        }
        let text = file
            .contents_utf8()
            .ok_or_else(|| anyhow!("{full} is not UTF-8"))?;
        let content = if rendered {
            render_text(full.strip_suffix(".hbs").unwrap(), text, &json)?
        } else {
            text.to_string()
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
    if set().0 != 0 && file(&format!("{name}.hbs")).is_none() {
        return Ok(String::new());
    }
    let text = template_text(name).ok_or_else(|| MissingTemplate(format!("{name}.hbs")))?;
    render_text(name, text, &handlebars::to_json(ctx))
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
                    match hbs::render_str(f.contents_utf8().unwrap(), &json, &template_text) {
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
        let p = render_path("{{apiDir}}/{{kindLower}}_types.go", &handlebars::to_json(m)).unwrap();
        assert_eq!(p, PathBuf::from("api/crew/v1/captain_types.go"));
    }
}
