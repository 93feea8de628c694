//! go/v4's part of `edit`: multigroup, namespaced and the license header.

use crate::context::{ProjectCtx, BOILERPLATE_FILE, MANAGER_FILE as MANAGER};
use crate::plan::IfExists;
use crate::planning::edit::EditArgs;
use crate::planning::init::{boilerplate, License};
use crate::planning::plugin::Cx;
use crate::resource::{CtxInput, Gvk, ResourceCtx};
use crate::templates;
use anyhow::Result;
use std::borrow::Cow;
use std::path::Path;

/// The manager's WATCH_NAMESPACE variable as `init --namespaced` writes it (the list item, at
/// the indentation of the container's fields).
pub const WATCH_NAMESPACE: &str = "# The manager only watches its own namespace (see cmd/main.go).
- name: WATCH_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
";

/// `config/manager/manager.yaml` with the manager container's WATCH_NAMESPACE variable added
/// (`on`) or removed, everything else as it was; None when no container named manager is found.
/// Line-based, like the rest of opbuilder's YAML edits, so comments and layout survive.
fn watch_namespace(text: &str, on: bool) -> Option<Cow<'_, str>> {
    watch_namespace_with(text, on, WATCH_NAMESPACE)
}

/// [`watch_namespace`] with the variable's block `block` (its first line a comment): the Rust
/// layout's comment names src/main.rs.
pub fn watch_namespace_with<'a>(text: &'a str, on: bool, block: &str) -> Option<Cow<'a, str>> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let blank = |l: &str| l.trim().is_empty() || l.trim_start().starts_with('#');
    // The container: the list item holding `name: manager`; its fields are at column `col`.
    let at = lines.iter().position(|l| {
        let t = l.trim();
        t == "name: manager" || t == "- name: manager"
    })?;
    let dashed = lines[at].trim_start().starts_with("- ");
    let col = indent(lines[at]) + if dashed { 2 } else { 0 };
    let start = if dashed {
        at
    } else {
        (0..at).rev().find(|&i| {
            !blank(lines[i])
                && (indent(lines[i]) + 2 == col && lines[i].trim_start().starts_with("- ")
                    || indent(lines[i]) < col)
        })?
    };
    let end = (at + 1..lines.len())
        .find(|&i| !blank(lines[i]) && indent(lines[i]) < col)
        .unwrap_or(lines.len());
    let env = (start..end).find(|&i| indent(lines[i]) == col && lines[i].trim() == "env:");
    let var = (start..end).find(|&i| lines[i].trim() == "- name: WATCH_NAMESPACE");
    let pad = |text: &str, n: usize| -> String {
        text.lines().map(|l| format!("{:n$}{l}\n", "")).collect()
    };
    let eol = |i: usize| if lines[i].ends_with('\n') { "" } else { "\n" };
    match (on, env, var) {
        (true, _, Some(_)) | (false, _, None) => Some(Cow::Borrowed(text)),
        (true, Some(e), None) => {
            // Join the list, at the indentation of its first item.
            let item = lines[e + 1..end]
                .iter()
                .find(|l| !blank(l))
                .map_or(col, |l| indent(l));
            let mut out = lines[..=e].concat();
            out.push_str(eol(e));
            out.push_str(&pad(block, item));
            out.push_str(&lines[e + 1..].concat());
            Some(Cow::Owned(out))
        }
        (true, None, None) => {
            let mut out = lines[..=at].concat();
            out.push_str(eol(at));
            out.push_str(&format!("{:col$}env:\n", ""));
            out.push_str(&pad(block, col));
            out.push_str(&lines[at + 1..].concat());
            Some(Cow::Owned(out))
        }
        (false, _, Some(v)) => {
            let dash = indent(lines[v]);
            let mut from = v;
            let comment = block.lines().next().expect("a comment line");
            if v > 0 && lines[v - 1].trim() == comment {
                from = v - 1;
            }
            let to = (v + 1..lines.len())
                .find(|&i| lines[i].trim().is_empty() || indent(lines[i]) <= dash)
                .unwrap_or(lines.len());
            let mut kept: Vec<&str> = lines[..from].to_vec();
            kept.extend_from_slice(&lines[to..]);
            // An `env:` left without items goes too.
            if let Some(e) = env {
                let items = kept[e + 1..].iter().find(|l| !blank(l)).is_some_and(|l| {
                    indent(l) > col || indent(l) == col && l.trim_start().starts_with("- ")
                });
                if e < from && !items {
                    kept.remove(e);
                }
            }
            Some(Cow::Owned(kept.concat()))
        }
    }
}

/// The admin, editor and viewer roles of every kind with types (config/rbac), written again for
/// the project's scope: Roles for a namespace-scoped manager, else ClusterRoles.
pub fn helper_roles(
    plan: &mut crate::plan::Plan,
    project: &crate::project::Project,
    ctx: &ProjectCtx,
) -> Result<()> {
    for r in project.resources.iter().filter(|r| r.api.is_some()) {
        let gvk = Gvk {
            group: r.group.to_string(),
            version: r.version.to_string(),
            kind: r.kind.clone(),
            domain: r.domain.to_string(),
        };
        let plural = if r.plural.is_empty() {
            crate::flect::pluralize(&r.kind.to_ascii_lowercase())
        } else {
            r.plural.clone()
        };
        let rctx = ResourceCtx::new(CtxInput {
            project,
            pctx: ctx.clone(),
            gvk: &gvk,
            plural: &plural,
            api_path: &r.path,
            cluster_scoped: !r.api.as_ref().is_some_and(|a| a.namespaced),
            core: r.core,
            external: r.external,
            controller_name: None,
            has_api: true,
        });
        for f in templates::render_tree("api", &rctx, |t| t.starts_with("config/rbac/"))? {
            plan.create(f.path, f.content, IfExists::Overwrite);
        }
    }
    Ok(())
}

/// go/v4's part of `edit`: multigroup, namespaced and the license header.
pub fn plan(cx: &mut Cx, args: &EditArgs) -> Result<()> {
    let (root, plan, project, notes) = (cx.root, &mut *cx.plan, &mut *cx.project, &mut *cx.notes);
    if let Some(m) = args.multigroup {
        project.multigroup = m;
        if m {
            notes.push(
                "New APIs go to api/<group>/<version>; existing files stay where they are.".into(),
            );
        }
    }
    if args.license.is_some() || args.license_file.is_some() || args.owner.is_some() {
        let license = args.license.unwrap_or(License::Apache2);
        match boilerplate(license, args.owner.as_deref(), args.license_file.as_deref())? {
            Some(text) => plan.create(BOILERPLATE_FILE, text, IfExists::Overwrite),
            None => plan.remove(BOILERPLATE_FILE),
        }
        notes.push(
            "The new header applies to files scaffolded from now on and to `make generate` output."
                .into(),
        );
    }
    if let Some(ns) = args.namespaced {
        project.namespaced = ns;
        let ctx = ProjectCtx::load(root, project)?;
        let files = templates::render_tree("init", &ctx, |t| {
            matches!(t, "config/rbac/role.yaml" | "config/rbac/role_binding.yaml")
                || (args.force && t == MANAGER)
        })?;
        for f in files {
            // manager.yaml gets or loses only its WATCH_NAMESPACE variable, so what else is in
            // it stays (deploy-image's <KIND>_IMAGE, the user's own changes); a file whose
            // manager container is not found is written anew, as --force says.
            if f.path == Path::new(MANAGER) {
                let current = crate::fsx::read_text(&root.join(MANAGER), 1 << 20)
                    .map_err(|e| anyhow::anyhow!("{MANAGER}: {e}"))?;
                if let Some(text) = current {
                    match watch_namespace(&text, ns) {
                        Some(edited) => {
                            plan.create(MANAGER, edited.into_owned(), IfExists::Overwrite)
                        }
                        None => {
                            notes.push(format!("{MANAGER} has no container named manager; it was written anew from the template."));
                            plan.create(f.path, f.content, IfExists::Overwrite);
                        }
                    }
                    continue;
                }
            }
            plan.create(f.path, f.content, IfExists::Overwrite);
        }
        helper_roles(plan, project, &ctx)?;
        if ns {
            notes.push(format!(
                "Next steps for a namespace-scoped manager:\n  - add namespace={}-system to the +kubebuilder:rbac markers of your controllers, then run make manifests\n  - make sure cmd/main.go restricts the cache to WATCH_NAMESPACE (projects made by `opbuilder init --namespaced` do)",
                project.project_name
            ));
            if !args.force {
                notes.push("config/manager/manager.yaml was kept; run again with --force to add the WATCH_NAMESPACE variable to it.".into());
            }
            if project.resources.iter().any(|r| r.webhooks.is_some()) {
                notes.push("warning: webhook configurations are cluster-wide even when the manager is namespace-scoped.".into());
            }
        } else {
            notes.push(format!(
                "Next steps for a cluster-scoped manager:\n  - remove namespace={}-system from the +kubebuilder:rbac markers of your controllers, then run make manifests\n  - remove the restriction of the cache to WATCH_NAMESPACE from cmd/main.go, if it has one{}",
                project.project_name,
                if args.force { "" } else { "\n  - config/manager/manager.yaml was kept; run again with --force to drop its WATCH_NAMESPACE variable" }
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Project;

    fn manager(namespaced: bool) -> String {
        let project = Project {
            repo: "example.com/ns".into(),
            domain: "example.com".into(),
            project_name: "ns".into(),
            namespaced,
            ..Default::default()
        };
        let ctx = ProjectCtx::new(&project, None);
        let mut files = templates::render_tree("init", &ctx, |t| t == MANAGER).unwrap();
        assert_eq!(files.len(), 1);
        files.remove(0).content
    }

    #[test]
    fn watch_namespace_turns_one_template_into_the_other() {
        let (off, on) = (manager(false), manager(true));
        assert_ne!(off, on);
        assert_eq!(watch_namespace(&off, true).unwrap(), on);
        assert_eq!(watch_namespace(&on, false).unwrap(), off);
        // Nothing to do: the text comes back as it was, not copied.
        assert!(matches!(watch_namespace(&on, true), Some(Cow::Borrowed(_))));
        assert!(matches!(
            watch_namespace(&off, false),
            Some(Cow::Borrowed(_))
        ));
    }

    #[test]
    fn watch_namespace_keeps_the_other_variables_and_the_users_changes() {
        let image = "        - name: CAPTAIN_IMAGE\n          value: busybox:1.36\n";
        // deploy-image's variable in a cluster-scoped manager, and a line of the user's.
        let off = manager(false)
            .replacen(
                "        name: manager\n",
                &format!("        name: manager\n        env:\n{image}"),
                1,
            )
            .replacen("        ports:\n", "        # mine\n        ports:\n", 1);
        let on = watch_namespace(&off, true).unwrap();
        assert!(on.contains(image) && on.contains("# mine"), "{on}");
        assert!(on.contains("        env:\n        # The manager only watches its own namespace (see cmd/main.go).\n        - name: WATCH_NAMESPACE\n"), "{on}");
        assert_eq!(on.matches("env:").count(), 1, "{on}");
        // Back: the variable goes, the list (still holding the image) stays.
        assert_eq!(watch_namespace(&on, false).unwrap(), off);
        // A list indented deeper than the key is joined at its own indentation.
        let deep = manager(false).replacen(
            "        name: manager\n",
            "        name: manager\n        env:\n          - name: A\n            value: b\n",
            1,
        );
        let on = watch_namespace(&deep, true).unwrap();
        assert!(on.contains("        env:\n          # The manager only watches its own namespace (see cmd/main.go).\n          - name: WATCH_NAMESPACE\n            valueFrom:\n"), "{on}");
        assert_eq!(watch_namespace(&on, false).unwrap(), deep);
    }

    #[test]
    fn watch_namespace_needs_the_manager_container() {
        let other = manager(false).replace("name: manager\n", "name: operator\n");
        assert!(watch_namespace(&other, true).is_none());
        // A container list that starts with its name.
        let dash =
            "      containers:\n      - name: manager\n        image: x\n      volumes: []\n";
        assert_eq!(
            watch_namespace(dash, true).unwrap(),
            format!("      containers:\n      - name: manager\n        env:\n{}        image: x\n      volumes: []\n", pad8(WATCH_NAMESPACE))
        );
        assert_eq!(
            watch_namespace(&watch_namespace(dash, true).unwrap(), false).unwrap(),
            dash
        );
    }

    fn pad8(s: &str) -> String {
        s.lines().map(|l| format!("        {l}\n")).collect()
    }
}
