//! The Rust layout's `init`: a Cargo project with the manager, the manifests generator and the
//! test harness (`rust/init`), beside go/v4's kustomize tree under config/.

use super::context::{crate_name, RustProjectCtx};
use super::rbac;
use crate::context::{BOILERPLATE_FILE, RUST_BOILERPLATE_FILE};
use crate::error::{bad_flag, usage};
use crate::plan::IfExists;
use crate::planning::plugin::Cx;
use crate::templates;
use anyhow::Result;

/// The comment above config/manager's WATCH_NAMESPACE as go/v4 writes it, and as this layout
/// does (`edit --namespaced` adds and removes the Rust one).
pub const GO_WATCH_COMMENT: &str = "(see cmd/main.go)";
pub const RUST_WATCH_COMMENT: &str = "(see src/main.rs)";

/// The files of go/v4's `init` tree that the Rust layout shares: the kustomize tree, the
/// license header and the script that builds the envtest control plane from source.
fn shared(template: &str, boilerplate: bool) -> bool {
    template.starts_with("config/")
        || template == "hack/envtest-from-source.sh"
        || (template == BOILERPLATE_FILE && boilerplate)
}

/// The Rust layout's files for a new project.
pub fn plan_files(cx: &mut Cx, boilerplate_file: Option<&str>) -> Result<()> {
    let name = &cx.project.project_name;
    crate_name(name).map_err(|r| {
        if crate::plugins::external::given_flags(cx.plugin_args).contains(&"project-name") {
            return bad_flag("--project-name", name, &r, "guestbook");
        }
        // The name came from the directory's: say so, and how to choose another.
        let letters = name.trim_start_matches(|c: char| !c.is_ascii_lowercase());
        let example = if letters.is_empty() || crate_name(letters).is_err() {
            "guestbook"
        } else {
            letters
        };
        usage(format!(
            "without --project-name the project is named after this directory, {name:?}, and the name {r}.\n  \
             Choose a name with --project-name, for example: --project-name {example}; or run `opbuilder init` \
             in a directory with such a name"
        ))
    })?;
    if cx.project.namespaced
        && crate::releases::active_version() == Some(crate::project::RUST_LAYOUT_V1_ALPHA_RELEASE)
    {
        // Only reached by `alpha generate --templates-version 0.4.0` of a namespaced project.
        anyhow::bail!(
            "--namespaced: the Rust layout of opbuilder {} ({}) has no namespace-scoped manager; \
             generate the project with the current templates ({})",
            crate::project::RUST_LAYOUT_V1_ALPHA_RELEASE,
            crate::project::RUST_LAYOUT_V1_ALPHA,
            crate::project::RUST_LAYOUT
        );
    }
    // APIs always live in src/api/<group>/<version>: the layout is multigroup from the start.
    cx.project.multigroup = true;
    let ctx = RustProjectCtx::new(cx.project, boilerplate_file.map(String::from));
    let mut files =
        templates::render_tree("init", &ctx, |t| shared(t, boilerplate_file.is_some()))?;
    files.extend(templates::render_tree("rust/init", &ctx, |_| true)?);
    // The license header: hack/boilerplate.rs.txt; projects of v1-alpha (0.4.0's templates,
    // which `alpha update` replays) had go/v4's name for it.
    let rust_header =
        crate::releases::active_version() != Some(crate::project::RUST_LAYOUT_V1_ALPHA_RELEASE);
    for mut f in files {
        if f.template == BOILERPLATE_FILE && rust_header {
            f.path = RUST_BOILERPLATE_FILE.into();
        }
        // The RBAC the project's `make manifests` writes from the code, as it writes it: the
        // manager's rules (no controller yet) and leader election's.
        match f.template.as_str() {
            "config/rbac/role.yaml" => {
                f.content = rbac::role_yaml(&rbac::manager_rules(), cx.project.namespaced)
            }
            // The manager's WATCH_NAMESPACE is read by src/main.rs.
            "config/manager/manager.yaml" => {
                f.content = f.content.replace(GO_WATCH_COMMENT, RUST_WATCH_COMMENT)
            }
            "config/rbac/leader_election_role.yaml" => {
                f.content = rbac::leader_election_role_yaml(&cx.project.project_name)
            }
            _ => {}
        }
        let policy = match f.template.as_str() {
            "Makefile"
            | "Cargo.toml"
            | "config/default/kustomization.yaml"
            | "config/manager/kustomization.yaml"
            | "config/rbac/kustomization.yaml"
            | "config/default/manager_metrics_patch.yaml" => IfExists::Error,
            "config/rbac/role.yaml" | "config/rbac/role_binding.yaml" => IfExists::Overwrite,
            _ => IfExists::Skip,
        };
        cx.plan.create(f.path, f.content, policy);
    }
    Ok(())
}
