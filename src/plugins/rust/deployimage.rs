//! deploy-image/v1-alpha with the Rust layout: `create api --image ...` plans the layout's
//! files for the kind (types, controller, test, sample, kustomize entries, wiring), then
//! replaces the kind's types, controller, integration test and sample with the deploy-image
//! ones (`scaffolds/rust/deploy-image/`): a kube-rs controller that runs the image as a
//! Deployment it owns, with the command, port and user given, and reports Available and
//! Degraded conditions, as go/v4's deploy-image controller does.

use super::api::{self, Kind, RustResourceCtx};
use super::rbac;
use crate::error::usage;
use crate::planning::api::ResolvedResource;
use crate::planning::flags::Options;
use crate::planning::plugin::Cx;
use crate::plugins::deployimage::{plan_image_env, record, replace_created, OptionsCtx};
use crate::project::RUST_LAYOUT;
use crate::templates;
use anyhow::Result;
use serde::Serialize;

/// What the Rust deploy-image templates see.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Ctx<'a> {
    #[serde(flatten)]
    res: &'a RustResourceCtx,
    #[serde(flatten)]
    options: OptionsCtx,
}

/// The command as a Rust slice of string literals, laid out as rustfmt lays it out: on one
/// line when it fits rustfmt's array width (60) and the line (100), else one element a line.
fn command_expr(parts: &[String]) -> String {
    let items: Vec<String> = parts.iter().map(|p| format!("{p:?}")).collect();
    let one_line = items.join(", ");
    let decl = "pub const COMMAND: &[&str] = &[];".len();
    if one_line.len() <= 60 && decl + one_line.len() <= 100 {
        format!("&[{one_line}]")
    } else {
        let lines: Vec<String> = items.iter().map(|i| format!("    {i},\n")).collect();
        format!("&[\n{}]", lines.concat())
    }
}

/// deploy-image's `create api` in a Rust project (the chain runs it in place of the plugin's
/// go/v4 hook): the files, and the options in PROJECT.
pub fn create_api(cx: &mut Cx, res: &ResolvedResource) -> Result<()> {
    let Some(opts) = &res.deploy_image else {
        anyhow::bail!("internal error: the deploy-image plugin runs without its options");
    };
    plan_files(cx, res, opts)?;
    record(cx, res, opts)
}

/// deploy-image's `delete api` in a Rust project: what its `create api` wrote (the layout's
/// files and its own), and what else goes, with its controller's rules taken out of the role.
pub fn delete_api(
    cx: &mut Cx,
    res: &ResolvedResource,
    undo: &mut crate::planning::delete::Undo,
) -> Result<()> {
    let Some(opts) = &res.deploy_image else {
        anyhow::bail!("internal error: the deploy-image plugin runs without its options");
    };
    plan_files(cx, res, opts)?;
    super::delete::extras_of_api(cx, res, undo, true)
}

/// Plan the deploy-image API of a Rust project.
fn plan_files(cx: &mut Cx, res: &ResolvedResource, opts: &Options) -> Result<()> {
    if let Some(key) = cx.project.rust_layout().filter(|k| *k != RUST_LAYOUT) {
        return Err(usage(format!(
            "--plugins=deploy-image/v1-alpha: this project's layout is {key} (opbuilder {}), whose templates \
             have no deploy-image controller; carry the project to {RUST_LAYOUT} first with `opbuilder alpha \
             update` (it keeps your code), then run the command again",
            crate::project::RUST_LAYOUT_V1_ALPHA_RELEASE
        )));
    }
    let g = &res.gvk;
    let rctx = api::context(
        cx,
        Kind {
            gvk: g,
            plural: &res.plural,
            core: false,
            namespaced: true,
            has_api: true,
            storage: api::is_storage(cx.project, res),
            external: None,
        },
    )?;
    // The role as `make manifests` writes it once this controller's rules are in the code.
    let role = "config/rbac/role.yaml";
    let mut role_rules = std::fs::read_to_string(cx.root.join(role))
        .ok()
        .and_then(|text| rbac::read_rules(&text))
        .unwrap_or_else(rbac::manager_rules);
    role_rules.extend(rbac::deploy_image_rules(&rctx.api_group, &rctx.res.plural));
    api::plan_files(cx, res)?;

    let ctx = Ctx {
        res: &rctx,
        options: OptionsCtx::new(&g.kind, opts, command_expr)?,
    };
    for f in templates::render_tree("rust/deploy-image", &ctx, |_| true)? {
        replace_created(cx.plan, &f.path.to_string_lossy(), f.content)?;
    }
    if !res.undo {
        replace_created(
            cx.plan,
            role,
            rbac::role_yaml(&role_rules, cx.project.namespaced),
        )?;
    }
    plan_image_env(cx, &ctx.options.kind_upper, &opts.image, res.undo)?;
    let types = super::rust_file(cx.plan, "src/api/", |_| true)
        .unwrap_or_else(|| "the types in src/api/".into());
    cx.plan.next = Some(crate::plan::Next {
        note: Some(format!(
            "The controller (src/controllers/{}.rs) deploys {} for each {} object (the image is the {}_IMAGE \
             variable in config/manager/manager.yaml).",
            rctx.controller_mod, opts.image, g.kind, ctx.options.kind_upper
        )),
        lead: format!("after changing {types}, run"),
        run: super::test_commands(cx.root),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_laid_out_as_rustfmt_does() {
        let parts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            command_expr(&parts(&[
                "memcached",
                "--memory-limit=64",
                "-o",
                "modern",
                "-v"
            ])),
            r#"&["memcached", "--memory-limit=64", "-o", "modern", "-v"]"#
        );
        assert_eq!(
            command_expr(&parts(&["sh", "-c", "echo \"a\\b\"; sleep 3600 && echo done-and-over"])),
            "&[\n    \"sh\",\n    \"-c\",\n    \"echo \\\"a\\\\b\\\"; sleep 3600 && echo done-and-over\",\n]"
        );
    }
}
