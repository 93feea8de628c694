//! go/v4's part of `delete api` and `delete webhook`: what its `create` wrote, planned again by
//! api.rs and webhook.rs as they would write it into the project without what goes, and what
//! else goes with it or is listed: the generated files that name it, the code that would still
//! use it, the templates' own form of the kustomizations (to comment out again what `create`
//! uncommented), and what server-side apply changed elsewhere.

use super::{api, webhook};
use crate::plan::{Edit, IfExists, Op, Plan};
use crate::planning::api::ResolvedResource;
use crate::planning::delete::{histories, Undo, Uses};
use crate::planning::plugin::Cx;
use crate::planning::webhook::ResolvedWebhook;
use crate::project::{Project, Webhooks};
use crate::resource::ResourceCtx;
use crate::templates;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub const DEFAULT_KUSTOMIZATION: &str = "config/default/kustomization.yaml";
pub const CRD_KUSTOMIZATION: &str = "config/crd/kustomization.yaml";
pub const ROLE: &str = "config/rbac/role.yaml";

/// The kustomizations as their templates write them (config/default's as `init` does,
/// config/crd's as the first `create api` does), for commenting out again what a command
/// uncommented. Shared with the Rust layout, whose kustomize tree is go/v4's.
pub fn kustomize_bases(ctx: &ResourceCtx, undo: &mut Undo) {
    let first = |r: Result<Vec<templates::Rendered>>| r.ok()?.pop().map(|f| f.content);
    let default = templates::render_tree("init", &ctx.project, |t| t == DEFAULT_KUSTOMIZATION);
    if let Some(t) = first(default) {
        undo.base.insert(PathBuf::from(DEFAULT_KUSTOMIZATION), t);
    }
    if let Some(t) = first(templates::render_tree("api", ctx, |t| {
        t == CRD_KUSTOMIZATION
    })) {
        undo.base.insert(PathBuf::from(CRD_KUSTOMIZATION), t);
    }
}

/// Whether `project` has another kind with types in `ctx`'s group and version.
fn package_stays(project: &Project, ctx: &ResourceCtx) -> bool {
    project
        .resources
        .iter()
        .any(|r| r.group == ctx.group && r.version == ctx.version && r.api.is_some())
}

/// Whether `project` has a version of `ctx`'s kind with types (its CRD stays).
fn crd_stays(project: &Project, ctx: &ResourceCtx) -> bool {
    project
        .resources
        .iter()
        .any(|r| r.group == ctx.group && r.kind == ctx.kind && r.api.is_some())
}

/// The text of `rel` under `root`, if readable.
pub fn read(root: &Path, rel: &str) -> Option<String> {
    crate::fsx::read_text(&root.join(rel), 16 << 20)
        .ok()
        .flatten()
}

/// The generated files of a kind's types and controller (CRD, DeepCopy, role), each removed
/// when it is about nothing that stays, else listed for the command that writes it again.
pub fn generated_of_api(root: &Path, ctx: &ResourceCtx, types: bool, undo: &mut Undo) {
    let exists = |p: &str| root.join(p).is_file();
    if types {
        let crd = format!("config/crd/bases/{}_{}.yaml", ctx.qgroup, ctx.plural);
        if exists(&crd) {
            let stays = crd_stays(&undo.after, ctx);
            undo.generated(crd, !stays, "make manifests");
        }
    }
    if read(root, ROLE).is_some_and(|t| t.lines().any(|l| l.trim() == format!("- {}", ctx.plural)))
    {
        undo.generated(ROLE, false, "make manifests");
    }
}

/// go/v4's `delete api`: what `create api` wrote (api.rs), and what else goes or is listed.
pub fn delete_api(cx: &mut Cx, res: &ResolvedResource, undo: &mut Undo) -> Result<()> {
    api::plan_files(cx.root, cx.project, res, cx.plan, cx.notes)?;
    let ctx = api::context(cx.root, cx.project, res)?;
    kustomize_bases(&ctx, undo);
    let root = cx.root;
    if res.do_resource {
        let stays = package_stays(&undo.after, &ctx);
        let deepcopy = format!("{}/zz_generated.deepcopy.go", ctx.api_dir);
        if root.join(&deepcopy).is_file() {
            undo.generated(deepcopy, !stays, "make generate");
        }
        if res.ssa {
            ssa(cx, &ctx, undo);
            applyconfigurations(root, &ctx, undo);
        } else {
            opted_out_later(cx, &ctx, undo);
        }
        undo.uses.push(Uses::Go {
            package: res.api_path.clone(),
            dir: ctx.api_dir.clone(),
            idents: ["", "List", "Spec", "Status"]
                .iter()
                .map(|s| format!("{}{s}", ctx.kind))
                .collect(),
            import: !stays,
        });
        undo.next("make generate manifests");
    }
    if res.do_controller {
        undo.uses.push(Uses::Go {
            package: format!("{}/{}", cx.project.repo, ctx.controller_dir),
            dir: ctx.controller_dir.clone(),
            idents: vec![ctx.reconciler.clone()],
            import: false,
        });
        undo.next("make manifests");
    }
    generated_of_api(root, &ctx, res.do_resource, undo);
    Ok(())
}

/// The apply configurations `make manifests` wrote for the package of a kind with server-side
/// apply: all generated (for each kind, and the package's registry of them), so they go, and
/// `make manifests` writes them again for the kinds that keep server-side apply.
fn applyconfigurations(root: &Path, ctx: &ResourceCtx, undo: &mut Undo) {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut files = vec![];
    walk(
        root,
        &root.join(&ctx.api_dir).join("applyconfiguration"),
        &mut files,
    );
    files.sort();
    for f in files {
        undo.generated(f, true, "make manifests");
    }
    undo.next("make manifests");
}

const AC_ENABLE: &str = "// +kubebuilder:ac:generate=true";
const AC_DISABLE: &str = "// +kubebuilder:ac:generate=false";
const OBJECT_ROOT: &str = "// +kubebuilder:object:root=true";

/// What `create api --ssa` changed beyond its own files, when no kind of the package (or of
/// the project, for the Makefile) keeps server-side apply: the package's marker, the other
/// kinds' opt-outs, and the Makefile's generator.
fn ssa(cx: &mut Cx, ctx: &ResourceCtx, undo: &mut Undo) {
    let project = undo.after.clone();
    let in_package =
        |r: &&crate::project::Resource| r.group == ctx.group && r.version == ctx.version;
    let ssa = |r: &crate::project::Resource| r.api.as_ref().is_some_and(|a| a.ssa);
    if project.resources.iter().filter(in_package).any(ssa) {
        return;
    }
    cx.plan.update(
        format!("{}/groupversion_info.go", ctx.api_dir),
        Edit::AfterLine {
            anchor: "// +kubebuilder:object:generate=true".into(),
            text: AC_ENABLE.into(),
        },
    );
    for r in project.resources.iter().filter(in_package) {
        if r.api.is_none() {
            continue;
        }
        cx.plan.update(
            format!("{}/{}_types.go", ctx.api_dir, r.kind.to_ascii_lowercase()),
            Edit::AfterLine {
                anchor: OBJECT_ROOT.into(),
                text: AC_DISABLE.into(),
            },
        );
    }
    if project.resources.iter().any(ssa) {
        return;
    }
    if let Some(text) = read(cx.root, "Makefile") {
        if let Some(without) = api::makefile_without_applyconfiguration(&text) {
            undo.op(Op::Create {
                path: "Makefile".into(),
                content: without,
                if_exists: IfExists::Overwrite,
                part: None,
            });
        }
    }
}

/// A kind without server-side apply in a package where a kind created after it has it: that
/// `create api --ssa` opted this kind out below its root marker (api.rs), so its types file is
/// as `create` wrote it with that line too (a variant of the plan).
fn opted_out_later(cx: &Cx, ctx: &ResourceCtx, undo: &mut Undo) {
    let later_ssa = undo.after.resources.iter().any(|r| {
        r.group == ctx.group
            && r.version == ctx.version
            && r.api.as_ref().is_some_and(|a| a.ssa)
            && !cx
                .project
                .resources
                .iter()
                .any(|e| e.is_gvk(&r.group, &r.version, &r.kind))
    });
    if !later_ssa {
        return;
    }
    let path = PathBuf::from(format!("{}/{}_types.go", ctx.api_dir, ctx.kind_lower));
    let mut ops: Vec<Op> = cx
        .plan
        .ops
        .iter()
        .filter(|o| *o.path() == path)
        .cloned()
        .collect();
    if ops.iter().any(
        |o| matches!(o, Op::Create { content, .. } if content.contains("+kubebuilder:ac:generate")),
    ) {
        return;
    }
    ops.push(Op::Update {
        path,
        edits: vec![Edit::AfterLine {
            anchor: OBJECT_ROOT.into(),
            text: AC_DISABLE.into(),
        }],
        part: None,
    });
    undo.variants.push(Plan {
        ops,
        ..Default::default()
    });
}

/// Whether config/default/kustomization.yaml serves metrics with cert-manager's certificate
/// (its patch switched on), which needs ../certmanager and the replacements after the last
/// webhook has gone.
pub fn metrics_certificate_on(root: &Path) -> bool {
    read(root, DEFAULT_KUSTOMIZATION).is_some_and(|t| {
        t.lines()
            .any(|l| l.trim() == "- path: cert_metrics_manager_patch.yaml")
    })
}

/// Take out of `plan` (what `create webhook` wrote) what the metrics certificate needs too:
/// the cert-manager tree and its switches in config/default/kustomization.yaml.
pub fn keep_for_metrics_certificate(plan: &mut Plan) {
    plan.ops.retain(
        |op| !matches!(op, Op::Create { path, .. } if path.starts_with("config/certmanager")),
    );
    for op in &mut plan.ops {
        if let Op::Update { path, edits, .. } = op {
            if path == Path::new(DEFAULT_KUSTOMIZATION) {
                edits.retain(|e| {
                    !matches!(e, Edit::Uncomment { block, .. }
                        if block == "- ../certmanager" || block == "replacements:")
                });
            }
        }
    }
}

/// Whether `hook` is the conversion of some spokes of a hub that keeps converting others (a
/// spoke version that goes, `delete api`).
pub fn spoke_only(hook: &ResolvedWebhook) -> bool {
    hook.conversion && hook.had.conversion
}

/// go/v4's `delete webhook`: what `create webhook` wrote for the types going (webhook.rs),
/// the kind's webhook and test files as the commands that made them would leave them with the
/// types that stay, and what else goes or is listed.
pub fn delete_webhook(cx: &mut Cx, hook: &ResolvedWebhook, undo: &mut Undo) -> Result<()> {
    let mut created = Plan::default();
    webhook::plan_files(cx.root, cx.project, hook, &mut created, cx.notes)?;
    let ctx = webhook::context(cx.root, cx.project, hook)?;
    let code = webhook::code_files(&ctx);
    created
        .ops
        .retain(|op| !code.iter().any(|c| op.path() == Path::new(c)));
    if metrics_certificate_on(cx.root) {
        keep_for_metrics_certificate(&mut created);
    }
    cx.plan.ops.extend(created.ops);
    kustomize_bases(&ctx, undo);
    if spoke_only(hook) {
        // The spoke's conversion file goes (above); the hub's files name no spoke.
        return Ok(());
    }
    code_files(cx, hook, &code, undo)?;
    let infix = webhook::type_infix();
    undo.uses.push(Uses::Go {
        package: format!("{}/{}", cx.project.repo, ctx.webhook_dir),
        dir: ctx.webhook_dir.clone(),
        idents: [
            (true, format!("Setup{}WebhookWithManager", ctx.kind)),
            (hook.defaulting, format!("{}{infix}Defaulter", ctx.kind)),
            (
                hook.programmatic_validation,
                format!("{}{infix}Validator", ctx.kind),
            ),
        ]
        .into_iter()
        .filter_map(|(on, id)| (on && !(id.starts_with("Setup") && hook.had.any())).then_some(id))
        .collect(),
        import: false,
    });
    generated_of_webhooks(cx.root, &ctx, undo);
    undo.next("make manifests");
    Ok(())
}

/// config/webhook/manifests.yaml, which `make manifests` writes from the webhooks' markers:
/// removed with the project's last webhook, else listed.
pub fn generated_of_webhooks(root: &Path, ctx: &ResourceCtx, undo: &mut Undo) {
    let manifests = "config/webhook/manifests.yaml";
    let Some(text) = read(root, manifests) else {
        return;
    };
    if !text.contains(&format!("-{}-{}", ctx.version, ctx.kind_lower)) {
        return;
    }
    let others = undo.after.resources.iter().any(|r| {
        r.webhooks
            .as_ref()
            .is_some_and(|w| w.defaulting || w.validation)
    });
    undo.generated(manifests, !others, "make manifests");
}

/// The kind's webhook and test files: each as some series of `create webhook` commands wrote
/// it, then rewritten as that series would have left it without the types going (removed when
/// none stays). A file no series wrote was changed since: kept and named (unless forced).
fn code_files(cx: &Cx, hook: &ResolvedWebhook, files: &[String; 2], undo: &mut Undo) -> Result<()> {
    let going = Webhooks {
        defaulting: hook.defaulting,
        validation: hook.programmatic_validation,
        conversion: hook.conversion,
        defaulting_path: hook.defaulting_path.clone().unwrap_or_default(),
        validation_path: hook.validation_path.clone().unwrap_or_default(),
        spoke: hook.spoke.clone(),
        webhook_version: String::new(),
    };
    let all = going.union(&hook.had);
    // Each file as some history wrote it, with the templates in use or those of the release
    // PROJECT's cliVersion names; the file is then written as that history would leave it.
    let mut found: Vec<Option<(Vec<Webhooks>, Option<&str>)>> = vec![None, None];
    let current: Vec<Option<String>> = files.iter().map(|f| read(cx.root, f)).collect();
    let v = cx.project.cli_version.as_str();
    let mut releases: Vec<Option<&str>> = vec![None];
    if crate::releases::is_known(v) && v != crate::releases::current_version() {
        releases.push(Some(v));
    }
    let after_with = |release: Option<&str>, history: &[Webhooks]| match release {
        None => webhook::code_after(cx.root, cx.project, hook, history),
        Some(r) => crate::releases::with(r, || {
            webhook::code_after(cx.root, cx.project, hook, history)
        }),
    };
    'search: for release in releases {
        for history in histories(&all) {
            if found
                .iter()
                .zip(&current)
                .all(|(f, c)| f.is_some() || c.is_none())
            {
                break 'search;
            }
            let Ok(after) = after_with(release, &history) else {
                continue;
            };
            for (i, f) in files.iter().enumerate() {
                if found[i].is_none() && current[i].is_some() && after.get(f) == current[i].as_ref()
                {
                    found[i] = Some((history.clone(), release));
                }
            }
        }
    }
    for (i, f) in files.iter().enumerate() {
        let Some(now) = &current[i] else { continue };
        let (history, release) = match &found[i] {
            Some(h) => h.clone(),
            None if undo.force => {
                undo.forced.push(PathBuf::from(f));
                (vec![all.clone()], None)
            }
            None => {
                undo.kept.push(PathBuf::from(f));
                continue;
            }
        };
        let left: Vec<Webhooks> = history
            .iter()
            .map(|step| step.without(&going))
            .filter(Webhooks::any)
            .collect();
        let target = if left.is_empty() {
            None
        } else {
            after_with(release, &left)?.remove(f)
        };
        match target {
            None => undo.op(Op::Remove {
                path: PathBuf::from(f),
            }),
            Some(t) if t != *now => undo.op(Op::Create {
                path: PathBuf::from(f),
                content: t,
                if_exists: IfExists::Overwrite,
                part: None,
            }),
            Some(_) => {}
        }
    }
    Ok(())
}
