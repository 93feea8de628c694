//! go/v4's `init`: the files of a new project.

use crate::context::{ProjectCtx, BOILERPLATE_FILE};
use crate::plan::IfExists;
use crate::planning::plugin::Cx;
use crate::templates;
use anyhow::Result;

/// go/v4's files for a new project.
pub fn plan_files(cx: &mut Cx, boilerplate_file: Option<&str>) -> Result<()> {
    let ctx = ProjectCtx::new(cx.project, boilerplate_file.map(String::from));
    let files = templates::render_tree("init", &ctx, |t| {
        t != BOILERPLATE_FILE || boilerplate_file.is_some()
    })?;
    for f in files {
        let policy = match f.template.as_str() {
            "Makefile"
            | "config/default/kustomization.yaml"
            | "config/manager/kustomization.yaml"
            | "config/rbac/kustomization.yaml"
            | "config/default/manager_metrics_patch.yaml" => IfExists::Error,
            "go.mod" | "config/rbac/role.yaml" | "config/rbac/role_binding.yaml" => {
                IfExists::Overwrite
            }
            _ => IfExists::Skip,
        };
        cx.plan.create(f.path, f.content, policy);
    }
    Ok(())
}
