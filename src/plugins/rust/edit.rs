//! The Rust layout's `edit`: `--namespaced` (and `--namespaced=false`), which switches the
//! manager between watching the whole cluster with a ClusterRole and watching its own
//! namespace with a Role; `--plugins` with helm/v2-alpha or grafana/v1-alpha, which join the
//! layout (their own hooks plan their files). The flags that do not apply to the layout are
//! refused, saying why.

use super::init::{GO_WATCH_COMMENT, RUST_WATCH_COMMENT};
use super::rbac;
use crate::context::{ProjectCtx, MANAGER_FILE as MANAGER};
use crate::error::usage;
use crate::plan::IfExists;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::Cx;
use crate::plugins::golang::edit::{helper_roles, watch_namespace_with, WATCH_NAMESPACE};
use crate::project::Project;
use crate::project::RUST_LAYOUT as KEY;
use crate::templates;
use anyhow::{bail, Result};

/// Where the generated code says whether the manager is namespace-scoped (`make manifests`
/// writes a Role then).
const RBAC_FILE: &str = "src/rbac.rs";
const ROLE: &str = "config/rbac/role.yaml";

fn namespaced_line(on: bool) -> String {
    format!("pub const NAMESPACED: bool = {on};")
}

/// What the chain of an `edit` holds besides the Rust layout's own flags.
pub struct Joined {
    /// The chain holds the layout (from PROJECT, or named by --plugins).
    pub layout: bool,
    /// It holds helm/v2-alpha.
    pub helm: bool,
    /// --plugins names helm/v2-alpha, grafana/v1-alpha, autoupdate/v1-alpha, certs/v1-alpha or
    /// telemetry/v1-alpha: there is something to edit.
    pub plugins: bool,
}

/// Refuse what `edit` cannot do in a Rust project whose layout is `key`, before any plugin of
/// the chain runs (exit 2).
pub fn check_flags(project: &Project, args: &EditArgs, key: &str, chain: Joined) -> Result<()> {
    let example = "for example: opbuilder edit --namespaced";
    if (args.manifests.is_some() || args.output_dir.is_some() || args.skip_build_installer)
        && !chain.helm
    {
        return Err(usage(
            "--manifests, --output-dir and --skip-build-installer belong to the helm plugin, which --plugins \
             leaves out; add it, for example: opbuilder edit --plugins=helm/v2-alpha --output-dir=dist",
        ));
    }
    if args.multigroup.is_some() {
        return Err(usage(format!(
            "--multigroup: a Rust project ({key}) always lays out APIs by group \
             (src/api/<group>/<version>); there is nothing to switch. Leave it out, {example}"
        )));
    }
    if args.license.is_some() || args.license_file.is_some() || args.owner.is_some() {
        return Err(usage(format!(
            "--license, --license-file and --owner: the Rust layout ({key}) cannot change the license header \
             of a project yet; edit hack/boilerplate.rs.txt and the headers of the files by hand"
        )));
    }
    if args.namespaced.is_some() && !chain.layout {
        return Err(usage(format!(
            "--namespaced belongs to the Rust layout ({key}), which --plugins leaves out; add it (for example \
             --plugins={key},helm/v2-alpha) or run the two edits one after the other"
        )));
    }
    let Some(on) = args.namespaced else {
        if chain.plugins {
            return Ok(());
        }
        return Err(usage(format!(
            "nothing to edit: a Rust project ({key}) takes --namespaced or --namespaced=false, or --plugins \
             with helm/v2-alpha, grafana/v1-alpha, autoupdate/v1-alpha, certs/v1-alpha or telemetry/v1-alpha; \
             {example}"
        )));
    };
    if on {
        // A Role grants nothing on cluster-scoped kinds.
        if let Some(r) = project
            .resources
            .iter()
            .find(|r| r.api.as_ref().is_some_and(|a| !a.namespaced))
        {
            return Err(usage(format!(
                "--namespaced: {}/{} {} is cluster-scoped, and a namespace-scoped manager's Role cannot \
                 grant it; a manager that reconciles it watches the whole cluster. Leave --namespaced out",
                r.group, r.version, r.kind
            )));
        }
        // Nor the webhook configurations and CRDs whose caBundles the manager's own certificate
        // code writes (src/webhook_certs.rs).
        let certs = crate::plugins::certs::KEY;
        if project.plugin_config::<serde_yaml::Value>(certs)?.is_some() {
            return Err(usage(format!(
                "--namespaced: this project's manager keeps its own webhook certificate ({certs}) and writes \
                 the caBundles of webhook configurations and CRDs, which a namespace-scoped manager's Role \
                 cannot grant. Leave --namespaced out"
            )));
        }
    }
    Ok(())
}

/// The Rust layout's `edit`, in a project whose layout is `key` (its flags checked by
/// [`check_flags`] before the chain runs): nothing when only other plugins are edited.
pub fn plan(cx: &mut Cx, args: &EditArgs, key: &str) -> Result<()> {
    if args.namespaced.is_none() {
        return Ok(());
    }
    if key != KEY {
        // A project of 0.4.0 (v1-alpha): its manager and src/rbac.rs know no namespace.
        bail!(
            "--namespaced: this project's layout is {key}, made by opbuilder {}, whose manager always watches \
             the whole cluster; carry the project to {KEY} first with `opbuilder alpha update` (it keeps your \
             code), then run the edit again",
            crate::project::RUST_LAYOUT_V1_ALPHA_RELEASE
        );
    }
    let on = args.namespaced.unwrap_or_default();
    let root = cx.root;
    // src/rbac.rs says it to `make manifests`; a line the user changed is theirs to set.
    let text = std::fs::read_to_string(root.join(RBAC_FILE)).unwrap_or_default();
    let (from, to) = (namespaced_line(!on), namespaced_line(on));
    let edited = match (text.contains(&from), text.contains(&to)) {
        (true, false) => text.replacen(&from, &to, 1),
        (false, true) => text,
        _ => bail!(
            "{RBAC_FILE} has no line `{from}` to set to `{to}` (changed by hand); \
             add the constant as a new project has it (see docs/commands.md), then run the edit again"
        ),
    };
    let project = &mut *cx.project;
    project.namespaced = on;
    cx.plan.create(RBAC_FILE, edited, IfExists::Overwrite);
    // config/manager: WATCH_NAMESPACE from the Pod's namespace, which src/main.rs reads.
    let var = WATCH_NAMESPACE.replace(GO_WATCH_COMMENT, RUST_WATCH_COMMENT);
    let manager = crate::fsx::read_text(&root.join(MANAGER), 1 << 20)
        .map_err(|e| anyhow::anyhow!("{MANAGER}: {e}"))?
        .unwrap_or_default();
    match watch_namespace_with(&manager, on, &var) {
        Some(text) => cx.plan.create(MANAGER, text.into_owned(), IfExists::Overwrite),
        None => bail!(
            "{MANAGER} has no container named manager to {} WATCH_NAMESPACE; name the manager's container \
             `manager` as a new project has it, then run the edit again",
            if on { "give" } else { "take" }
        ),
    }
    // The binding as go/v4 writes it; the role as `make manifests` writes it from the code.
    let ctx = ProjectCtx::new(project, None);
    for f in templates::render_tree("init", &ctx, |t| t == "config/rbac/role_binding.yaml")? {
        cx.plan.create(f.path, f.content, IfExists::Overwrite);
    }
    helper_roles(cx.plan, project, &ctx)?;
    let role = std::fs::read_to_string(root.join(ROLE)).ok();
    match role.as_deref().and_then(rbac::read_rules) {
        Some(rules) => cx
            .plan
            .create(ROLE, rbac::role_yaml(&rules, on), IfExists::Overwrite),
        None => cx.notes.push(format!(
            "{ROLE} is not as `make manifests` writes it; run make manifests to write it as a {}",
            if on { "Role" } else { "ClusterRole" }
        )),
    }
    cx.notes.push(if on {
        format!(
            "The manager now watches only its own namespace ({}-system once deployed; WATCH_NAMESPACE), with \
             the Role manager-role there. Webhook configurations stay cluster-wide.",
            project.project_name
        )
    } else {
        "The manager now watches the whole cluster, with the ClusterRole manager-role.".to_string()
    });
    Ok(())
}
