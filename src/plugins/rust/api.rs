//! The Rust layout's `create api`: a kind's types module (src/api/<group>/<version>/<kind>.rs),
//! its controller (src/controllers/<kind>.rs) and integration test, their wiring above the
//! `+kubebuilder:scaffold:` markers of the module files, and go/v4's kustomize entries.

use super::context::{module_name, type_name, RustProjectCtx};
use super::external;
use super::kopium;
use super::rbac;
use crate::context::ProjectCtx;
use crate::error::usage;
use crate::plan::{Edit, IfExists, Plan};
use crate::planning::api::ResolvedResource;
use crate::planning::parts;
use crate::planning::plugin::Cx;
use crate::project::Project;
use crate::resource::{CtxInput, Gvk, ResourceCtx};
use crate::templates;
use anyhow::Result;
use serde::Serialize;
use std::path::Path;

/// What the Rust api and controller templates see.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RustResourceCtx {
    #[serde(flatten)]
    pub res: ResourceCtx,
    pub crate_name: String,
    pub lib_name: String,
    pub rust: crate::versions::Rust,
    /// Module names: `src/api/<groupMod>/<versionMod>/<kindMod>.rs`, `src/controllers/<kindMod>.rs`.
    pub group_mod: String,
    pub version_mod: String,
    pub kind_mod: String,
    /// The controller's module: `<kindMod>`, or `<groupMod>_<kindMod>` when a kind of that name
    /// in another group has a controller already.
    pub controller_mod: String,
    /// How the controller's line in `run_all` is laid out, as rustfmt lays it out for a module
    /// name of that length ([`RunLayout`]).
    pub controller_run: RunLayout,
    /// The API group in RBAC rules and API paths: `""` for the core group.
    pub api_group: String,
    /// The kind's Rust type: the kind, or `<Kind>Resource` when the name is taken (`Event`).
    pub type_name: String,
    /// Whether `type_name` is not the kind's Rust type (`rust_type`).
    pub renamed: bool,
    /// The kind's Rust type as its module declares it: the kind, or for another project's kind
    /// the name kopium gives it (`HTTPRoute` → `HttpRoute`).
    pub rust_type: String,
    /// The kind is not the project's: a core type or another project's (`--external-api-path`).
    pub foreign: bool,
    /// Another project's kind: its CRD's copy in the project (`external-crds/...`), else empty.
    pub external_crd: String,
    /// Another project's kind: the object its integration test creates, as a Rust string
    /// literal (empty for the project's kinds).
    pub sample_literal: String,
    /// What a `use` of the kind's type says: `k8s_openapi::api::apps::v1::Deployment`,
    /// `k8s_openapi::api::core::v1::Event as EventResource`.
    pub type_path: String,
    /// The same from inside the crate (`crate::api::webapp::v1::Guestbook` for a kind of the
    /// project).
    pub type_use: String,
    /// The module of the kind's webhooks: `src/webhooks/<group>_<version>_<kind>.rs`.
    pub webhook_mod: String,
    /// This version is the kind's storage version (the first version created).
    pub storage: bool,
    pub namespaced: bool,
    /// For the kinds of events (core/v1 and events.k8s.io/v1 Event), the field of the
    /// component that reported one, by which the controller leaves out the manager's own.
    pub own_events_field: Option<&'static str>,
}

/// The layout of `futures::FutureExt::boxed(<controllerMod>::run(ctx.clone(), shutdown.clone())),`
/// in the `vec!` of `run_all` (indented 8), as rustfmt (max_width 100, fn_call_width 60) writes
/// it, so that `cargo fmt --check` passes for a module name of any length: on one line up to 24
/// characters, then with the arguments on their own lines up to 54, then with the inner call on
/// a line of its own too. The unit test below checks it against rustfmt.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RunLayout {
    pub one_line: bool,
    pub args_on_lines: bool,
}

impl RunLayout {
    pub fn for_module(name: &str) -> RunLayout {
        let n = name.len();
        RunLayout {
            one_line: n <= 24,
            args_on_lines: n > 24 && n <= 54,
        }
    }
}

/// Where a kind's Rust type lives: the project's api module, k8s-openapi for a core type, or
/// the project's external module for another project's kind.
fn type_module(lib_name: &str, g: &Gvk, core: bool, external: bool) -> String {
    if external {
        format!(
            "crate::external::{}::{}",
            module_name(&g.qgroup()),
            module_name(&g.version)
        )
    } else if core {
        let group = g.group.split('.').next().unwrap_or_default();
        format!(
            "k8s_openapi::api::{}::{}",
            module_name(group),
            module_name(&g.version)
        )
    } else {
        format!(
            "{lib_name}::api::{}::{}",
            module_name(&g.group),
            module_name(&g.version)
        )
    }
}

/// Refuse what the Rust layout cannot scaffold yet, saying what to do instead.
fn check_supported(res: &ResolvedResource) -> Result<()> {
    let what = if res.controller_name.is_some() {
        Some("--controller-name (a second controller for one kind)")
    } else if res.ssa {
        Some("--ssa (the Rust layout always writes status by server-side apply; there is nothing to switch on)")
    } else if res.do_controller
        && !res.do_resource
        && !res.in_project_api
        && !res.core
        && !res.external
    {
        Some(
            "a controller for a kind that is neither in this project nor a core Kubernetes type without its \
             CRD: give it with --external-api-path (see `opbuilder create api --help`)",
        )
    } else {
        None
    };
    match what {
        Some(w) => Err(usage(format!(
            "the Rust layout (rust.opbuilder.io/v1-beta) does not support {w}.\n  Example of what it does: \
             opbuilder create api --group webapp --version v1 --kind Guestbook"
        ))),
        None => Ok(()),
    }
}

/// Whether `version` is (or becomes) the storage version of the kind: the first version of it
/// created in this project.
pub(crate) fn is_storage(project: &Project, res: &ResolvedResource) -> bool {
    let g = &res.gvk;
    !project.resources.iter().any(|r| {
        r.group == g.group && r.kind == g.kind && r.version != g.version && r.api.is_some()
    })
}

/// What the context of a kind is made from.
pub struct Kind<'a> {
    pub gvk: &'a Gvk,
    pub plural: &'a str,
    pub core: bool,
    pub namespaced: bool,
    /// The kind has types in this project (created now or before).
    pub has_api: bool,
    pub storage: bool,
    /// Another project's kind, and what its CRD says.
    pub external: Option<&'a external::ExternalCrd>,
}

/// The context of the kind's, its controller's and its webhooks' templates.
pub fn context(cx: &Cx, k: Kind) -> Result<RustResourceCtx> {
    let project: &Project = cx.project;
    let rp = RustProjectCtx::new(project, None);
    let mut pctx = ProjectCtx::load(cx.root, project)?;
    pctx.leader_election_id = rp.project.leader_election_id.clone();
    let g = k.gvk;
    let ext = k.external;
    let module = type_module(&rp.lib_name, g, k.core, ext.is_some());
    let rctx = ResourceCtx::new(CtxInput {
        project,
        pctx,
        gvk: g,
        plural: k.plural,
        api_path: &module,
        cluster_scoped: !k.namespaced,
        core: k.core,
        external: false,
        controller_name: None,
        has_api: k.has_api,
    });
    let controller_mod = if project.resources.iter().any(|r| {
        r.kind == g.kind && r.group != g.group && (r.controller || !r.controllers.is_empty())
    }) {
        format!("{}_{}", module_name(&g.group), module_name(&g.kind))
    } else {
        module_name(&g.kind)
    };
    let rust_type = if ext.is_some() {
        external::rust_type(&g.kind)
    } else {
        g.kind.clone()
    };
    let tname = type_name(&rust_type);
    let type_path = if tname != rust_type {
        format!("{module}::{rust_type} as {tname}")
    } else {
        format!("{module}::{rust_type}")
    };
    let group_mod = if ext.is_some() {
        module_name(&g.qgroup())
    } else {
        module_name(&g.group)
    };
    let local = format!(
        "crate::api::{}::{}::{tname}",
        module_name(&g.group),
        module_name(&g.version)
    );
    Ok(RustResourceCtx {
        crate_name: rp.crate_name,
        lib_name: rp.lib_name,
        rust: rp.rust,
        group_mod,
        version_mod: module_name(&g.version),
        kind_mod: module_name(&g.kind),
        controller_run: RunLayout::for_module(&controller_mod),
        controller_mod,
        webhook_mod: format!(
            "{}_{}_{}",
            module_name(&g.group),
            module_name(&g.version),
            module_name(&g.kind)
        ),
        api_group: if k.core && g.group == "core" {
            String::new()
        } else {
            g.qgroup()
        },
        renamed: tname != rust_type,
        type_name: tname,
        rust_type,
        foreign: k.core || ext.is_some(),
        external_crd: ext.map(|e| e.copy.clone()).unwrap_or_default(),
        sample_literal: ext.map(|e| raw_string(&e.sample)).unwrap_or_default(),
        type_use: if k.core || ext.is_some() {
            type_path.clone()
        } else {
            local
        },
        type_path,
        storage: k.storage,
        namespaced: k.namespaced,
        own_events_field: match (k.core, g.group.as_str(), g.kind.as_str()) {
            (true, "core", "Event") => Some("reportingComponent"),
            (true, "events", "Event") => Some("reportingController"),
            _ => None,
        },
        res: rctx,
    })
}

/// `text` as a raw string literal (`r#"..."#`, with as many `#` as it needs), starting on a
/// new line.
fn raw_string(text: &str) -> String {
    let mut hashes = "#".to_string();
    while text.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    format!("r{hashes}\"\n{text}\"{hashes}")
}

/// Declare `pub mod <name>;` among the declarations above `marker`, sorted.
fn sorted_mod(plan: &mut crate::plan::Plan, file: &str, marker: &str, name: &str) {
    plan.update(
        file,
        crate::plan::Edit::SortedAboveMarker {
            marker: marker.into(),
            line: format!("pub mod {name};"),
        },
    );
}

/// The Rust layout's files for a resolved resource; records it in PROJECT with the Rust path of
/// its type.
pub fn plan_files(cx: &mut Cx, res: &ResolvedResource) -> Result<()> {
    check_supported(res)?;
    let g = &res.gvk;
    let ext = if res.external {
        Some(external::read(cx.root, res)?)
    } else {
        None
    };
    let namespaced = if let Some(e) = &ext {
        e.namespaced
    } else if res.in_project_api && !res.do_resource {
        cx.project
            .find(&g.group, &g.version, &g.kind)
            .and_then(|r| r.api.as_ref())
            .is_none_or(|a| a.namespaced)
    } else {
        res.namespaced
    };
    if ext.as_ref().is_some_and(|e| e.namespaced) && !res.namespaced {
        return Err(usage(format!(
            "--namespaced=false: {} {} is namespaced (its CRD says `scope: Namespaced`), and the scope of \
             another project's kind is its CRD's. Leave --namespaced out",
            g.qgroup(),
            g.kind
        )));
    }
    if cx.project.namespaced && !namespaced && ext.is_some() {
        return Err(usage(format!(
            "--external-api-path {}: {} {} is cluster-scoped (its CRD says `scope: Cluster`), and this project's \
             manager watches one namespace (PROJECT namespaced: true), whose Role cannot grant a cluster-scoped \
             kind. Make the manager cluster-scoped first: opbuilder edit --namespaced=false",
            res.api_path,
            g.qgroup(),
            g.kind
        )));
    }
    if cx.project.namespaced && !namespaced && (res.do_resource || res.do_controller) {
        return Err(usage(format!(
            "--namespaced=false: {}/{} {} is cluster-scoped, and this project's manager watches one namespace \
             (PROJECT namespaced: true), whose Role cannot grant a cluster-scoped kind. Make the kind \
             namespaced (leave --namespaced=false out), or make the manager cluster-scoped first: \
             opbuilder edit --namespaced=false",
            g.group, g.version, g.kind
        )));
    }
    let ctx = context(
        cx,
        Kind {
            gvk: g,
            plural: ext.as_ref().map_or(&res.plural, |e| &e.plural),
            core: res.core,
            namespaced,
            has_api: res.do_resource || res.in_project_api,
            storage: is_storage(cx.project, res),
            external: ext.as_ref(),
        },
    )?;
    let replace = |normal: IfExists| {
        if res.force {
            IfExists::Overwrite
        } else {
            normal
        }
    };
    let plan = &mut *cx.plan;
    if res.do_resource {
        let config = templates::render_tree("api", &ctx.res, |t| {
            t.starts_with("config/") && !t.starts_with("config/samples/{{")
        })?;
        for f in config {
            let policy = if f.template.starts_with("config/rbac/") {
                IfExists::Overwrite
            } else {
                IfExists::Skip
            };
            plan.create(f.path, f.content, policy);
        }
        for f in templates::render_tree("rust/api", &ctx, |_| true)? {
            let policy = if f.template.ends_with("mod.rs") {
                IfExists::Skip
            } else {
                replace(IfExists::Error)
            };
            plan.create(f.path, f.content, policy);
        }
        crate::plugins::golang::api::plan_kustomize_entries(plan, &ctx.res)?;
        let group_dir = format!("src/api/{}", ctx.group_mod);
        let version_dir = format!("{group_dir}/{}", ctx.version_mod);
        plan.part(parts::RUST_API, |plan| -> Result<()> {
            // `mod` declarations in the order rustfmt keeps them; the rest above their markers.
            sorted_mod(plan, "src/api/mod.rs", "api-groups", &ctx.group_mod);
            sorted_mod(
                plan,
                &format!("{group_dir}/mod.rs"),
                "versions",
                &ctx.version_mod,
            );
            for (file, marker, fragment) in [
                ("src/api/mod.rs".to_string(), "crds", "api_crd"),
                (format!("{version_dir}/mod.rs"), "kinds", "api_kind"),
            ] {
                let text = templates::render(&format!("rust/fragments/{fragment}.rs"), &ctx)?;
                plan.above_marker(file, marker, vec![text]);
            }
            Ok(())
        })?;
    }
    if res.do_controller {
        for f in templates::render_tree("rust/controller", &ctx, |t| {
            // The integration test needs a kind whose CRD the project installs (another
            // project's kind has a test of its own).
            !t.starts_with("tests/") || !ctx.foreign
        })? {
            plan.create(f.path, f.content, replace(IfExists::Error));
        }
        if let Some(e) = &ext {
            plan_external(cx.root, plan, res, &ctx, e)?;
        }
        plan.part(parts::MANAGER_SETUP, |plan| -> Result<()> {
            sorted_mod(
                plan,
                "src/controllers/mod.rs",
                "controller-modules",
                &ctx.controller_mod,
            );
            for (marker, fragment) in [
                ("controllers", "controller_run"),
                ("rbac", "controller_rbac"),
            ] {
                let text = templates::render(&format!("rust/fragments/{fragment}.rs"), &ctx)?;
                plan.above_marker("src/controllers/mod.rs", marker, vec![text]);
            }
            Ok(())
        })?;
        // config/rbac/role.yaml as `make manifests` writes it with the new controller's rules:
        // those of the file it wrote last, or the manager's. (`delete api` plans the role
        // without them itself, from the rules that stay.)
        let role = "config/rbac/role.yaml";
        if res.undo {
            return Ok(());
        }
        let mut rules = std::fs::read_to_string(cx.root.join(role))
            .ok()
            .and_then(|text| rbac::read_rules(&text))
            .unwrap_or_else(rbac::manager_rules);
        rules.extend(rbac::controller_rules(
            &ctx.api_group,
            &ctx.res.plural,
            ctx.foreign,
        ));
        plan.create(
            role,
            rbac::role_yaml(&rules, cx.project.namespaced),
            IfExists::Overwrite,
        );
    }
    let mut recorded = res.clone();
    match &ext {
        // Another project's kind: PROJECT records its CRD's copy (whose types' module follows
        // from the group, version and kind), from which `alpha generate` makes it again.
        Some(e) => {
            recorded.api_path = e.copy.clone();
            recorded.external_module = None;
        }
        None => recorded.api_path = type_module(&ctx.lib_name, &res.gvk, res.core, false),
    }
    recorded.record(cx.project);
    Ok(())
}

/// A file `create` writes: kept when it holds `content` already, else created with `policy`.
fn create_unless_same(plan: &mut Plan, root: &Path, path: &str, content: String, policy: IfExists) {
    let same = std::fs::read_to_string(root.join(path)).is_ok_and(|t| t == content);
    plan.create(path, content, if same { IfExists::Skip } else { policy });
}

/// Another project's kind: its CRD's copy, its types (kopium's), their modules, the Makefile's
/// line that generates them again, and the controller's integration test.
fn plan_external(
    root: &Path,
    plan: &mut Plan,
    res: &ResolvedResource,
    ctx: &RustResourceCtx,
    e: &external::ExternalCrd,
) -> Result<()> {
    let g = &res.gvk;
    let policy = if res.force {
        IfExists::Overwrite
    } else {
        IfExists::Error
    };
    let version_dir = format!("src/external/{}/{}", ctx.group_mod, ctx.version_mod);
    let types_path = format!("{version_dir}/{}.rs", ctx.kind_mod);
    let types = if res.undo {
        // `delete api`: the types as they are (kopium is not run to take them out).
        std::fs::read_to_string(root.join(&types_path)).unwrap_or_default()
    } else {
        let why = format!("to generate the Rust types of {} ({})", g.kind, g.qgroup());
        let types =
            kopium::find_or_install(&ctx.rust.kopium, &why)?.generate(&e.text, &g.version)?;
        external::check_types(&types, &ctx.rust_type, &g.kind)?;
        types
    };
    create_unless_same(plan, root, &e.copy, e.text.clone(), policy);
    create_unless_same(plan, root, &types_path, types, policy);
    for f in templates::render_tree("rust/external", ctx, |_| true)? {
        let policy = if f.template.starts_with("tests/") {
            policy
        } else {
            IfExists::Skip
        };
        plan.create(f.path, f.content, policy);
    }
    plan.part(parts::RUST_EXTERNAL, |plan| -> Result<()> {
        sorted_mod(
            plan,
            "src/external/mod.rs",
            "external-groups",
            &ctx.group_mod,
        );
        sorted_mod(
            plan,
            &format!("src/external/{}/mod.rs", ctx.group_mod),
            "versions",
            &ctx.version_mod,
        );
        let kind = templates::render("rust/fragments/api_kind.rs", ctx)?;
        plan.above_marker(format!("{version_dir}/mod.rs"), "kinds", vec![kind]);
        plan.update(
            "src/lib.rs",
            Edit::AfterLine {
                anchor: "pub mod controllers;".into(),
                text: "pub mod external;".into(),
            },
        );
        Ok(())
    })?;
    plan.part(parts::RUST_EXTERNAL_TYPES_TARGET, |plan| -> Result<()> {
        let section = templates::render("rust/fragments/makefile_external", ctx)?;
        plan.update("Makefile", Edit::Append { text: section });
        let line = templates::render("rust/fragments/makefile_external_kind", ctx)?;
        plan.update(
            "Makefile",
            Edit::AfterRecipe {
                target: "external-types".into(),
                text: line,
            },
        );
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::RunLayout;
    use std::path::Path;

    /// The fragment, inserted above the marker of the `src/controllers/mod.rs` that `init`
    /// writes (by the marker code `create api` uses), is what rustfmt writes, for every module
    /// name length up to well past the longest a kind gives.
    #[test]
    fn controller_run_line_is_rustfmt_clean_for_any_module_length() {
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Ctx {
            boilerplate: &'static str,
            controller_mod: String,
            controller_run: RunLayout,
        }
        let file = "src/controllers/mod.rs";
        let init = crate::templates::render(
            "rust/init/src/controllers/mod.rs",
            &Ctx {
                boilerplate: "",
                controller_mod: String::new(),
                controller_run: RunLayout::for_module(""),
            },
        )
        .unwrap();
        for n in 1..=120 {
            let m = "k".repeat(n);
            let ctx = Ctx {
                boilerplate: "",
                controller_run: RunLayout::for_module(&m),
                controller_mod: m,
            };
            let fragment =
                crate::templates::render("rust/fragments/controller_run.rs", &ctx).unwrap();
            let with = crate::markers::scaffold::insert_above_for(
                Path::new(file),
                &init,
                "//",
                "controllers",
                &[fragment],
            )
            .unwrap();
            let formatted = rustfmt(&with);
            if formatted != with {
                let diff: Vec<String> = with
                    .lines()
                    .zip(formatted.lines())
                    .filter(|(a, b)| a != b)
                    .take(6)
                    .map(|(a, b)| format!("ours:    {a}\nrustfmt: {b}"))
                    .collect();
                panic!(
                    "rustfmt lays out the controller line of a {n}-character module otherwise:\n{}",
                    diff.join("\n")
                );
            }
        }
    }

    /// The text as rustfmt (edition 2024, as a generated Cargo.toml says) writes it; rustfmt is
    /// part of the toolchain CI builds with.
    fn rustfmt(src: &str) -> String {
        use std::io::Write;
        let mut child = std::process::Command::new("rustfmt")
            .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("rustfmt runs (rustup component add rustfmt)");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(src.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "rustfmt failed on:\n{src}");
        String::from_utf8(out.stdout).unwrap()
    }
}
