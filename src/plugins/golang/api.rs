//! go/v4's `create api`: types, samples, kustomize entries, controller, the wiring in
//! cmd/main.go and the suite test, and server-side apply.

use crate::context::{ProjectCtx, MAIN_GO};
use crate::plan::{Edit, IfExists, Next, Plan};
use crate::planning::api::ResolvedResource;
use crate::planning::parts;
use crate::project::{Project, Resource};
use crate::resource::{CtxInput, Gvk, ResourceCtx};
use crate::templates;
use anyhow::Result;
use std::path::Path;

/// go/v4's files for a resolved resource: types, samples, kustomize entries, controller and
/// the wiring in cmd/main.go and the suite test. Adds to `plan`; PROJECT is not touched.
pub fn plan_files(
    root: &Path,
    project: &Project,
    res: &ResolvedResource,
    plan: &mut Plan,
    notes: &mut Vec<String>,
) -> Result<()> {
    let ResolvedResource {
        api_path,
        do_resource,
        do_controller,
        in_project_api,
        external,
        ..
    } = res;
    let (do_resource, do_controller, in_project_api, external) =
        (*do_resource, *do_controller, *in_project_api, *external);
    let ctx = context(root, project, res)?;
    let repo = project.repo.clone();
    let replace = |normal: IfExists| {
        if res.force {
            IfExists::Overwrite
        } else {
            normal
        }
    };

    if do_resource {
        for f in templates::render_tree("api", &ctx, |_| true)? {
            let policy = match f.template.as_str() {
                t if t.ends_with("_types.go") => replace(IfExists::Error),
                t if t.starts_with("config/samples/") && !t.ends_with("kustomization.yaml") => {
                    replace(IfExists::Error)
                }
                t if t.starts_with("config/rbac/") => IfExists::Overwrite,
                _ => IfExists::Skip,
            };
            plan.create(f.path, f.content, policy);
        }
        // What --ssa changed in other files is read from them: `delete api` plans its undo
        // from what PROJECT says instead (`super::delete`).
        if res.ssa && !res.undo {
            plan_ssa(root, project, &ctx, plan, notes)?;
        }
        plan_kustomize_entries(plan, &ctx)?;
    }
    if do_resource || external {
        plan_main_scheme(plan, &ctx, api_path, &repo)?;
    }

    if do_controller {
        // The kind's controller test is written once, for the first controller created; like
        // Kubebuilder, later (named) controllers do not replace it.
        for f in templates::render_tree("controller", &ctx, |_| true)? {
            let policy = match f.template.as_str() {
                t if t.ends_with("suite_test.go") => IfExists::Skip,
                t if t.ends_with("_controller_test.go") => replace(IfExists::Skip),
                _ => replace(IfExists::Error),
            };
            plan.create(f.path, f.content, policy);
        }
        let suite = format!("{}/suite_test.go", ctx.controller_dir);
        if (do_resource || in_project_api || external) && !api_path.is_empty() {
            plan.part(parts::ENVTEST_SUITE, |plan| -> Result<()> {
                plan.go_import(&suite, Some(&ctx.import_alias), api_path, &repo);
                plan.above_marker(
                    &suite,
                    "scheme",
                    vec![templates::render("fragments/suite_scheme.go", &ctx)?],
                );
                Ok(())
            })?;
        }
        let (name, import) = if ctx.controller_pkg == "controller" {
            (None, format!("{repo}/internal/controller"))
        } else {
            (
                Some(crate::resource::controller_alias(&ctx.group)),
                format!("{repo}/{}", ctx.controller_dir),
            )
        };
        let mut c = ctx.clone();
        if let Some(n) = &name {
            c.controller_pkg = n.clone();
        }
        let setup = templates::render("fragments/main_controller.go", &c)?;
        plan.part(parts::MANAGER_SETUP, |plan| {
            plan.go_import(MAIN_GO, name.as_deref(), &import, &repo);
            plan.above_marker(MAIN_GO, "builder", vec![setup]);
        });
    }
    Ok(())
}

/// The template context of a resolved resource in `project`.
pub fn context(root: &Path, project: &Project, res: &ResolvedResource) -> Result<ResourceCtx> {
    let pctx = ProjectCtx::load(root, project)?;
    let mut ctx = ResourceCtx::new(CtxInput {
        project,
        pctx,
        gvk: &res.gvk,
        plural: &res.plural,
        api_path: &res.api_path,
        cluster_scoped: !res.namespaced,
        core: res.core,
        external: res.external,
        controller_name: res.controller_name.as_deref(),
        has_api: res.do_resource || res.in_project_api,
    });
    ctx.ssa = res.ssa;
    ctx.ac_opt_out = !res.ssa && ssa_kinds_beside(project, &res.gvk).next().is_some();
    Ok(ctx)
}

/// The API package in cmd/main.go's scheme (shared with `create webhook` for an external type).
pub fn plan_main_scheme(
    plan: &mut Plan,
    ctx: &ResourceCtx,
    api_path: &str,
    repo: &str,
) -> Result<()> {
    let scheme = templates::render("fragments/main_scheme.go", ctx)?;
    plan.part(parts::SCHEME, |plan| {
        plan.go_import(MAIN_GO, Some(&ctx.import_alias), api_path, repo);
        plan.above_marker(MAIN_GO, "scheme", vec![scheme]);
    });
    Ok(())
}

/// What comes next after go/v4's `create api` planned `plan`: the types to fill in (and the
/// controller's reconcile logic), or the reconcile logic of a controller of its own (none when
/// neither was planned).
pub fn next_step(plan: &Plan, res: &ResolvedResource) -> Option<Next> {
    let controller = plan.written("_controller.go").into_iter().next();
    if res.do_resource {
        let types = plan
            .written("_types.go")
            .into_iter()
            .next()
            .unwrap_or_else(|| "the *_types.go file".into());
        let reconcile = controller
            .map(|c| format!(" and the reconcile logic in {c}"))
            .unwrap_or_default();
        return Some(Next::new(
            format!("fill in the Spec and Status in {types}{reconcile}, then run"),
            &["make generate manifests"],
        ));
    }
    Some(Next::new(
        format!(
            "write the reconcile logic in {} (its +kubebuilder:rbac markers grant the access it needs), then run",
            controller?
        ),
        &["make manifests"],
    ))
}

/// The kustomize entries of a new kind, for every layout: its CRD base and sample in their
/// kustomizations, the CRDs in the default kustomization, and its helper roles in the RBAC one.
pub fn plan_kustomize_entries(plan: &mut Plan, ctx: &ResourceCtx) -> Result<()> {
    plan.part(parts::CRD_KUSTOMIZATION, |plan| {
        plan.above_marker(
            "config/crd/kustomization.yaml",
            "crdkustomizeresource",
            vec![format!("- bases/{}_{}.yaml", ctx.qgroup, ctx.plural)],
        )
    });
    plan.part(parts::SAMPLES_KUSTOMIZATION, |plan| {
        plan.above_marker(
            "config/samples/kustomization.yaml",
            "manifestskustomizesamples",
            vec![format!("- {}", ctx.sample_file)],
        )
    });
    plan.part(parts::DEFAULT_CRDS, |plan| {
        plan.update(
            "config/default/kustomization.yaml",
            Edit::Uncomment {
                block: "- ../crd".into(),
                required: false,
            },
        )
    });
    let anchor = templates::render("fragments/api/rbac_kustomization_comment.yaml", ctx)?;
    let last = anchor
        .trim_end()
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    let roles = ["admin", "editor", "viewer"]
        .map(|r| format!("- {}{}_{r}_role.yaml", ctx.role_file_prefix, ctx.kind_lower))
        .join("\n");
    plan.part(parts::RBAC_HELPER_ROLES, |plan| {
        plan.update(
            "config/rbac/kustomization.yaml",
            Edit::Append { text: anchor },
        );
        plan.update(
            "config/rbac/kustomization.yaml",
            Edit::AfterLine {
                anchor: last,
                text: roles,
            },
        );
    });
    Ok(())
}

/// The other kinds of `gvk`'s group/version that PROJECT records with server-side apply.
fn ssa_kinds_beside<'a>(project: &'a Project, gvk: &'a Gvk) -> impl Iterator<Item = &'a Resource> {
    project.resources.iter().filter(move |r| {
        r.group == gvk.group
            && r.version == gvk.version
            && r.kind != gvk.kind
            && r.api.as_ref().is_some_and(|a| a.ssa)
    })
}

const AC_ENABLE: &str = "// +kubebuilder:ac:generate=true";
const AC_DISABLE: &str = "// +kubebuilder:ac:generate=false";
const STORAGE_VERSION: &str = "// +kubebuilder:storageversion";
const OBJECT_GENERATE: &str = "// +kubebuilder:object:generate=true";
const OBJECT_ROOT: &str = "// +kubebuilder:object:root=true";
/// The generators of the Makefile's manifests recipe, and what server-side apply adds to them.
const MANIFESTS_GENERATORS: &str = "rbac:roleName=manager-role crd webhook";
const MANIFESTS_HELP: &str =
    "## Regenerate CRDs, RBAC (config/rbac/role.yaml) and webhook configurations from the code markers.";
const MANIFESTS_HELP_SSA: &str =
    "## Regenerate CRDs, RBAC (config/rbac/role.yaml), webhook configurations and apply \
     configurations from the code markers.";

fn read_project_file(root: &Path, rel: &str) -> Option<String> {
    crate::fsx::read_text(&root.join(rel), 4 << 20)
        .ok()
        .flatten()
}

/// Server-side apply (`--ssa`), beyond the types template: turn on apply-configuration
/// generation for the group/version package, keep the package's other kinds out of it, and make
/// `make manifests` generate the apply configurations. As in Kubebuilder, a file that has been
/// changed so that the edit has no place is reported with the change to make by hand; the
/// command goes on.
fn plan_ssa(
    root: &Path,
    project: &Project,
    ctx: &ResourceCtx,
    plan: &mut Plan,
    notes: &mut Vec<String>,
) -> Result<()> {
    // The package marker. A new package gets it from the template.
    let gv_file = format!("{}/groupversion_info.go", ctx.api_dir);
    if let Some(text) = read_project_file(root, &gv_file) {
        if !text.contains("+kubebuilder:ac:generate=true") {
            if text.lines().any(|l| l == OBJECT_GENERATE) {
                plan.update(
                    &gv_file,
                    Edit::AfterLine {
                        anchor: OBJECT_GENERATE.into(),
                        text: AC_ENABLE.into(),
                    },
                );
            } else {
                notes.push(format!(
                    "warning: {gv_file} has no `{OBJECT_GENERATE}` line; add `{AC_ENABLE}` to its package comment \
                     by hand to generate apply configurations for {}/{}",
                    ctx.group, ctx.version
                ));
            }
        }
    }
    // The package marker covers every kind in it: the kinds made without --ssa opt out.
    let mut known = vec![format!("{}_types.go", ctx.kind_lower)];
    for r in project
        .resources
        .iter()
        .filter(|r| r.group == ctx.group && r.version == ctx.version)
    {
        let file = format!("{}_types.go", r.kind.to_ascii_lowercase());
        known.push(file.clone());
        if r.kind == ctx.kind || r.api.as_ref().is_none_or(|a| a.ssa) {
            continue;
        }
        let path = format!("{}/{file}", ctx.api_dir);
        let manual = |why: &str| {
            format!(
                "warning: {path} {why}; add `{AC_DISABLE}` above the {} type by hand to keep it out of \
                 apply-configuration generation",
                r.kind
            )
        };
        match read_project_file(root, &path) {
            None => notes.push(manual("cannot be read")),
            Some(t) if t.contains("+kubebuilder:ac:generate") => {}
            Some(t) if t.lines().any(|l| l == OBJECT_ROOT) => plan.update(
                &path,
                Edit::AfterLine {
                    // Below a storage-version marker that follows the root marker, where
                    // `create webhook --conversion` puts it: the markers then come in one order
                    // whichever command ran first (`alpha generate` replays APIs before webhooks).
                    anchor: if t.contains(&format!("{OBJECT_ROOT}\n{STORAGE_VERSION}\n")) {
                        STORAGE_VERSION.into()
                    } else {
                        OBJECT_ROOT.into()
                    },
                    text: AC_DISABLE.into(),
                },
            ),
            Some(_) => notes.push(manual(&format!("has no `{OBJECT_ROOT}` line"))),
        }
    }
    if let Ok(rd) = std::fs::read_dir(root.join(&ctx.api_dir)) {
        let mut untracked: Vec<String> = rd
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with("_types.go") && !known.contains(n))
            .collect();
        untracked.sort();
        for n in untracked {
            notes.push(format!(
                "warning: {}/{n} holds types PROJECT does not list; if they should not get apply configurations, \
                 add `{AC_DISABLE}` above each of them",
                ctx.api_dir
            ));
        }
    }
    // The Makefile: the first kind with server-side apply adds the generator.
    let header = if root.join(crate::context::BOILERPLATE_FILE).is_file() {
        ":headerFile=\"hack/boilerplate.go.txt\""
    } else {
        ""
    };
    let generators = format!("{MANIFESTS_GENERATORS} applyconfiguration{header}");
    match read_project_file(root, "Makefile") {
        Some(text) if text.contains("applyconfiguration") => {}
        Some(text) => match makefile_with_applyconfiguration(&text, &generators) {
            Some(new) => plan.create("Makefile", new, IfExists::Overwrite),
            None => notes.push(format!(
                "warning: the Makefile's manifests recipe has no `{MANIFESTS_GENERATORS}`; add \
                 `applyconfiguration{header}` to its controller-gen generators by hand"
            )),
        },
        None => notes.push(format!(
            "warning: no Makefile; run controller-gen with `applyconfiguration{header}` to generate the apply configurations"
        )),
    }
    Ok(())
}

/// The Makefile without the apply-configuration generator in the `manifests` recipe (and with
/// its help text as it was): the reverse of [`makefile_with_applyconfiguration`], or None when
/// the recipe does not hold it as that wrote it.
pub fn makefile_without_applyconfiguration(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let target = lines.iter().position(|l| l.starts_with("manifests:"))?;
    let recipe = lines.get(target + 1)?;
    let at = recipe.find(&format!("{MANIFESTS_GENERATORS} applyconfiguration"))?;
    let rest = &recipe[at + MANIFESTS_GENERATORS.len()..];
    let generator = rest.split_whitespace().next()?;
    let mut out = String::with_capacity(text.len());
    for (i, l) in lines.iter().enumerate() {
        if i == target {
            out.push_str(&l.replacen(MANIFESTS_HELP_SSA, MANIFESTS_HELP, 1));
        } else if i == target + 1 {
            out.push_str(&l.replacen(&format!(" {generator}"), "", 1));
        } else {
            out.push_str(l);
        }
    }
    Some(out)
}

/// The Makefile with the apply-configuration generator in the `manifests` recipe (and its help
/// text updated when it is still ours), or None when the recipe is not recognised.
fn makefile_with_applyconfiguration(text: &str, generators: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let target = lines.iter().position(|l| l.starts_with("manifests:"))?;
    let recipe = target + 1;
    let line = lines.get(recipe)?;
    if !line.starts_with('\t') || !line.contains(MANIFESTS_GENERATORS) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 80);
    for (i, l) in lines.iter().enumerate() {
        if i == target {
            out.push_str(&l.replacen(MANIFESTS_HELP, MANIFESTS_HELP_SSA, 1));
        } else if i == recipe {
            out.push_str(&l.replacen(MANIFESTS_GENERATORS, generators, 1));
        } else {
            out.push_str(l);
        }
    }
    Some(out)
}
