//! Templates embedded from `scaffolds/`. A file's path below its tree mirrors the generated path;
//! path segments may hold `{{variables}}`. Files ending `.hbs` are rendered with handlebars in
//! strict mode without HTML escaping (the suffix is dropped); every other file is copied as is.
//!
//! User input only ever reaches handlebars as data in the context, never as template text.

use anyhow::{anyhow, Context, Result};
use handlebars::Handlebars;
use include_dir::{include_dir, Dir, DirEntry};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

pub static SCAFFOLDS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/scaffolds");

/// The handlebars registry. Templates are parsed on first use (with the partials they
/// reference), so a command pays only for the templates it renders.
fn registry() -> &'static Mutex<Handlebars<'static>> {
    static HB: OnceLock<Mutex<Handlebars<'static>>> = OnceLock::new();
    HB.get_or_init(|| {
        let mut hb = Handlebars::new();
        hb.set_strict_mode(true);
        hb.register_escape_fn(handlebars::no_escape);
        Mutex::new(hb)
    })
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
fn ensure(hb: &mut Handlebars<'static>, name: &str) -> Result<()> {
    if hb.has_template(name) {
        return Ok(());
    }
    let file = SCAFFOLDS
        .get_file(format!("{name}.hbs"))
        .ok_or_else(|| anyhow!("no template {name}.hbs"))?;
    let text = file
        .contents_utf8()
        .ok_or_else(|| anyhow!("{name}.hbs is not UTF-8"))?;
    for partial in partial_refs(text) {
        ensure(hb, partial)?;
    }
    hb.register_template_string(name, text)
        .with_context(|| format!("template {name}.hbs does not parse"))?;
    Ok(())
}

fn render_registered(name: &str, ctx: &impl Serialize) -> Result<String> {
    let mut hb = registry().lock().unwrap_or_else(|e| e.into_inner());
    ensure(&mut hb, name)?;
    hb.render(name, ctx)
        .with_context(|| format!("rendering {name}.hbs"))
}

/// Every embedded file, depth first.
pub fn all_files() -> Vec<&'static include_dir::File<'static>> {
    fn walk(d: &'static Dir<'static>, out: &mut Vec<&'static include_dir::File<'static>>) {
        for e in d.entries() {
            match e {
                DirEntry::Dir(sub) => walk(sub, out),
                DirEntry::File(f) => out.push(f),
            }
        }
    }
    let mut out = vec![];
    walk(&SCAFFOLDS, &mut out);
    out.sort_by_key(|f| f.path());
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

fn render_path(template_path: &str, ctx: &impl Serialize) -> Result<PathBuf> {
    let hb = registry().lock().unwrap_or_else(|e| e.into_inner());
    let mut out = PathBuf::new();
    for seg in template_path.split('/') {
        let seg = if seg.contains("{{") {
            hb.render_template(seg, ctx)
                .with_context(|| format!("rendering path segment {seg:?}"))?
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
    let dir = SCAFFOLDS
        .get_dir(tree)
        .ok_or_else(|| anyhow!("no template tree {tree:?}"))?;
    let prefix = format!("{tree}/");
    let mut out = vec![];
    for file in all_files()
        .into_iter()
        .filter(|f| f.path().starts_with(dir.path()))
    {
        let full = file.path().to_string_lossy().to_string();
        let rel = full.strip_prefix(&prefix).expect("inside tree");
        let (rel, rendered) = match rel.strip_suffix(".hbs") {
            Some(r) => (r, true),
            None => (rel, false),
        };
        if !keep(rel) {
            continue;
        }
        let content = if rendered {
            render_registered(full.strip_suffix(".hbs").unwrap(), ctx)?
        } else {
            file.contents_utf8()
                .ok_or_else(|| anyhow!("{full} is not UTF-8"))?
                .to_string()
        };
        out.push(Rendered {
            path: render_path(rel, ctx)?,
            template: rel.to_string(),
            content,
        });
    }
    Ok(out)
}

/// Render one template by its path below `scaffolds/` without the `.hbs` suffix
/// (used for fragments inserted above markers).
pub fn render(name: &str, ctx: &impl Serialize) -> Result<String> {
    render_registered(name, ctx)
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
                for f in all_files() {
                    let name = f.path().to_string_lossy();
                    if let Some(stem) = name
                        .strip_prefix("fragments/")
                        .and(name.strip_suffix(".hbs"))
                    {
                        render(stem, &rctx).unwrap_or_else(|e| panic!("{name}: {e:#}"));
                        rendered += 1;
                    }
                }
            }
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
        let hb = registry().lock().unwrap();
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
                .render_template("{{x}}", &m)
                .unwrap(),
            "{{y}}"
        );
    }

    #[test]
    fn every_template_parses() {
        let mut hb = registry().lock().unwrap();
        for f in all_files() {
            if let Some(name) = f.path().to_str().and_then(|n| n.strip_suffix(".hbs")) {
                ensure(&mut hb, name).unwrap_or_else(|e| panic!("{e:#}"));
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
        let p = render_path("{{apiDir}}/{{kindLower}}_types.go", &m).unwrap();
        assert_eq!(p, PathBuf::from("api/crew/v1/captain_types.go"));
    }
}
