//! certs.opbuilder.io/v1-alpha: webhooks in production without cert-manager. The manager makes
//! its own certificate authority and serving certificate, keeps them in a Secret of its
//! namespace, serves that certificate, writes the authority into the caBundle of its webhook
//! configurations and CRD conversions, and rotates both before they expire; every replica
//! agrees through the Secret (internal/webhookcerts/cluster.go, `scaffolds/certs/`).
//! docs/certs.md has the design, for both layouts.
//!
//! On `init` or `edit` it adds that code, the manager's `--webhook-cert-secret` and
//! `--webhook-service` flags with their setup in cmd/main.go, and a Role for the one Secret. It
//! is recorded under PROJECT's `plugins:` (not in `layout`) and joins every later
//! `create webhook`, whose cert-manager parts (config/certmanager, its kustomize entries and
//! replacements, the certificate volume of the manager patch) it takes out of go/v4's plan.
//! Kubebuilder has no such plugin.

use crate::context::ProjectCtx;
use crate::error::usage;
use crate::plan::{Edit, IfExists, Op, Plan};
use crate::planning::delete::Undo;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::planning::webhook::ResolvedWebhook;
use crate::plugins::rust::context::RustProjectCtx;
use crate::plugins::rust::rbac;
use crate::templates;
use anyhow::Result;
use serde::Serialize;
use std::path::Path;

pub const NAME: &str = "certs.opbuilder.io";
pub const KEY: &str = "certs.opbuilder.io/v1-alpha";

pub struct Certs;

/// The plugin's PROJECT section: empty (`{}`); its presence keeps the plugin on.
#[derive(Serialize)]
struct Section {}

const MAIN: &str = "cmd/main.go";
const DEFAULT_KUSTOMIZATION: &str = "config/default/kustomization.yaml";
const MANAGER_PATCH: &str = "config/default/manager_webhook_patch.yaml";
const RBAC_KUSTOMIZATION: &str = "config/rbac/kustomization.yaml";
const E2E_SUITE: &str = "test/e2e/e2e_suite_test.go";
const E2E_TEST: &str = "test/e2e/e2e_test.go";

/// The e2e suite of `init` installs cert-manager unless told not to; the manager's own
/// certificate needs none, so a certs project's suite installs it only when asked.
const E2E_SKIP: (&str, &str) = (
    "\t// skipCertManagerInstall lets CERT_MANAGER_INSTALL_SKIP=true keep the suite
\t// from touching cert-manager, e.g. on a cluster that manages it itself.
\tskipCertManagerInstall = os.Getenv(\"CERT_MANAGER_INSTALL_SKIP\") == \"true\"",
    "\t// skipCertManagerInstall: the manager keeps its own webhook certificate
\t// (certs.opbuilder.io/v1-alpha), so the suite installs cert-manager only when
\t// CERT_MANAGER_INSTALL_SKIP=false asks for it (say, for a metrics certificate).
\tskipCertManagerInstall = os.Getenv(\"CERT_MANAGER_INSTALL_SKIP\") != \"false\"",
);

/// Who stores the webhooks' serving certificate, in the e2e check `create webhook` adds.
const E2E_WAIT: (&str, &str) = (
    "By(\"waiting for cert-manager to store it in the secret webhook-server-cert\")",
    "By(\"waiting for the manager to store it in the secret webhook-server-cert\")",
);

const MAIN_VARS: &str = "\t\twebhookCertSecret    string\n\t\twebhookService       string";

const MAIN_FLAGS: &str = "\tflag.StringVar(&webhookCertSecret, \"webhook-cert-secret\", \"\",
\t\t\"Make, keep and rotate the webhook certificate in this Secret of the manager's namespace, and write \"+
\t\t\t\"its authority into the caBundles of the webhooks and CRD conversions that call --webhook-service \"+
\t\t\t\"(no cert-manager). Empty: off.\")
\tflag.StringVar(&webhookService, \"webhook-service\", \"\",
\t\t\"Name of the webhook Service in the manager's namespace, for --webhook-cert-secret.\")";

const VARS_ANCHOR: &str = "webhookDevHost       string";
const FLAGS_ANCHOR: &str =
    "\"webhook configurations of its own and the CRDs' conversion at itself until it stops.\")";
const SETUP_ANCHOR: &str = "if metricsCertWatcher != nil {";
/// Where the setup goes in a main.go without the metrics certificate watcher (Kubebuilder
/// v4.16 sets it up before the manager, releases before v4.2 have none).
const SETUP_ANCHOR_OLDER: &str =
    "if err := mgr.AddHealthzCheck(\"healthz\", healthz.Ping); err != nil {";

/// The variables of the two flags in a main.go without init's var block.
const MAIN_VARS_OWN: &str =
    "// The manager's own webhook certificate (certs.opbuilder.io/v1-alpha).
var webhookCertSecret, webhookService string";

/// Inserted above the metrics certificate watcher; its last line (a space) keeps a blank line
/// before it, which indenting the fragment empties.
const MAIN_SETUP: &str =
    "// --webhook-cert-secret: the manager's own certificate, kept in a Secret and rotated, with
// no cert-manager (certs.opbuilder.io/v1-alpha); see internal/webhookcerts/cluster.go.
if err := webhookcerts.SetupCluster(mgr, webhookServer, webhookcerts.ClusterOptions{
\tSecret:  webhookCertSecret,
\tService: webhookService,
}, webhookCertPath); err != nil {
\tsetupLog.Error(err, \"Failed to set up the webhook certificate\")
\tos.Exit(1)
}
 
";

const RBAC_ENTRIES: &str =
    "# The Secret of the manager's own webhook certificate (certs.opbuilder.io/v1-alpha).
- webhook_cert_role.yaml
- webhook_cert_role_binding.yaml";

/// The Go code, the manager's flags and setup, the Role, and the PROJECT section. `boilerplate`:
/// the license header of `init` (whose file is only planned yet); `None` reads the project's.
fn enable(cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
    let ctx = match boilerplate {
        Some(b) => ProjectCtx::new(cx.project, Some(b.to_string())),
        None => ProjectCtx::load(cx.root, cx.project)?,
    };
    if cx.project.rust_layout().is_some() {
        return enable_rust(cx, ctx);
    }
    cx.project.set_plugin_config(KEY, &Section {})?;
    // The certificate authority of make run's webhooks (init's), which projects made before
    // it lack.
    for f in templates::render_tree("init", &ctx, |t| t == "internal/webhookcerts/certs.go")? {
        cx.plan.create(f.path, f.content, IfExists::Skip);
    }
    // The e2e suite: only planned yet (`init`), or as `init` wrote it (`edit`; a suite changed
    // there is left alone).
    if let Some(content) = cx.plan.created_mut(Path::new(E2E_SUITE)) {
        *content = content.replace(E2E_SKIP.0, E2E_SKIP.1);
    } else {
        let suite = crate::fsx::read_text(&cx.root.join(E2E_SUITE), 1 << 20)
            .map_err(|e| anyhow::anyhow!("{E2E_SUITE}: {e}"))?
            .unwrap_or_default();
        if suite.contains(E2E_SKIP.0) {
            cx.plan.create(
                E2E_SUITE,
                suite.replace(E2E_SKIP.0, E2E_SKIP.1),
                IfExists::Overwrite,
            );
        }
    }
    plan_config(cx, &ctx, GO_CODE)?;
    for f in templates::render_tree("certs", &ctx, |t| t.starts_with("internal/"))? {
        cx.plan.create(f.path, f.content, IfExists::Skip);
    }
    // cmd/main.go as `init` writes it now (planned, or found so by `edit`), else as an earlier
    // release or Kubebuilder wrote it: then the flags go above the logger's options and the
    // setup above the health checks, lines every one of them has.
    let main_go = match boilerplate {
        Some(_) => None,
        None => crate::fsx::read_text(&cx.root.join(MAIN), 1 << 24)
            .map_err(|e| anyhow::anyhow!("{MAIN}: {e}"))?,
    };
    let has = |line: &str| main_go.as_deref().is_none_or(|m| m.contains(line));
    if has(VARS_ANCHOR) && has(FLAGS_ANCHOR) {
        for (anchor, text) in [(VARS_ANCHOR, MAIN_VARS), (FLAGS_ANCHOR, MAIN_FLAGS)] {
            cx.plan.update(
                MAIN,
                Edit::AfterLine {
                    anchor: anchor.into(),
                    text: text.into(),
                },
            );
        }
    } else {
        let flags: Vec<&str> = MAIN_FLAGS
            .lines()
            .map(|l| l.strip_prefix('\t').unwrap_or(l))
            .collect();
        cx.plan.update(
            MAIN,
            Edit::BeforeLine {
                anchor: "opts := zap.Options{".into(),
                text: format!("{MAIN_VARS_OWN}\n{}\n", flags.join("\n")),
            },
        );
    }
    let anchor = if has(SETUP_ANCHOR) {
        SETUP_ANCHOR
    } else {
        SETUP_ANCHOR_OLDER
    };
    // Kubebuilder before v4.2 has no --webhook-cert-path.
    let setup = if has("webhookCertPath") {
        MAIN_SETUP.to_string()
    } else {
        MAIN_SETUP.replace("}, webhookCertPath); err", "}, \"\"); err")
    };
    cx.plan.update(
        MAIN,
        Edit::BeforeLine {
            anchor: anchor.into(),
            text: setup,
        },
    );
    cx.plan.go_import(
        MAIN,
        None,
        &format!("{}/internal/webhookcerts", cx.project.repo),
        &cx.project.repo,
    );
    Ok(())
}

/// Where each layout's manager keeps its certificate, as the YAML comments name it.
const GO_CODE: &str = "internal/webhookcerts/cluster.go";
const RUST_CODE: &str = "src/webhook_certs.rs";

/// The file of the project's certificate code.
fn certs_code(cx: &Cx) -> &'static str {
    match cx.project.rust_layout() {
        Some(_) => RUST_CODE,
        None => GO_CODE,
    }
}

/// What the templates of config/ see: the project, and the file of the certificate code.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigCtx<'a> {
    #[serde(flatten)]
    project: &'a ProjectCtx,
    certs_code: &'a str,
}

/// The Role of the Secret and its entries in config/rbac/kustomization.yaml (both layouts).
fn plan_config(cx: &mut Cx, ctx: &ProjectCtx, code: &str) -> Result<()> {
    let ctx = ConfigCtx {
        project: ctx,
        certs_code: code,
    };
    for f in templates::render_tree("certs", &ctx, |t| {
        t.starts_with("config/") && t != MANAGER_PATCH
    })? {
        cx.plan.create(f.path, f.content, IfExists::Skip);
    }
    cx.plan.update(
        RBAC_KUSTOMIZATION,
        Edit::Append {
            text: RBAC_ENTRIES.into(),
        },
    );
    Ok(())
}

const RUST_MAIN: &str = "src/main.rs";

/// The manager's flags, after `--webhook-dev-host`'s.
const RUST_FLAGS: &str =
    "    /// Make, keep and rotate the webhook certificate in this Secret of the manager's
    /// namespace, and write its authority into the caBundles of the webhooks and CRD
    /// conversions that call --webhook-service (no cert-manager; src/webhook_certs.rs).
    #[arg(
        long,
        requires = \"webhook_service\",
        conflicts_with = \"webhook_dev_host\"
    )]
    webhook_cert_secret: Option<String>,
    /// Name of the webhook Service in the manager's namespace, for --webhook-cert-secret.
    #[arg(long)]
    webhook_service: Option<String>,";

/// The webhook server with the Secret's certificate: an arm of the match on
/// `--webhook-dev-host`, above the one that reads --webhook-cert-path.
const RUST_SERVER: &str =
    "// --webhook-cert-secret: the manager's own certificate, kept in a Secret and rotated,
// with no cert-manager (certs.opbuilder.io/v1-alpha; src/webhook_certs.rs).
None if flags.webhook_cert_secret.is_some() => {
    let options = webhook_certs::Options::new(
        flags.webhook_cert_secret.as_deref().unwrap_or_default(),
        flags.webhook_service.as_deref().unwrap_or_default(),
    )?;
    let certificate = webhook_certs::start(client.clone(), options, health.clone())?;
    (
        webhook::Server::bind_certificate(address, certificate, routes, cluster)
            .await?,
        None,
    )
}";

/// The Rust layout's part: src/webhook_certs.rs, its module, the manager's flags and setup,
/// its RBAC (in the code and in config/rbac/role.yaml as `make manifests` writes it), and the
/// Role of the Secret.
fn enable_rust(cx: &mut Cx, ctx: ProjectCtx) -> Result<()> {
    if cx.project.namespaced {
        return Err(usage(format!(
            "--plugins {KEY}: a namespace-scoped manager (--namespaced) has a Role, which cannot grant the \
             webhook configurations and CRDs whose caBundles the manager writes; use cert-manager there, as \
             `create webhook` scaffolds it, or a cluster-scoped project, for example opbuilder init --domain \
             example.com --plugins=rust.opbuilder.io/v1-beta,{KEY}"
        )));
    }
    cx.project.set_plugin_config(KEY, &Section {})?;
    let rctx = RustProjectCtx::new(cx.project, Some(ctx.boilerplate_file.clone()));
    for f in templates::render_tree("rust/certs", &rctx, |_| true)? {
        cx.plan.create(f.path, f.content, IfExists::Skip);
    }
    plan_config(cx, &ctx, RUST_CODE)?;
    let lib = &rctx.lib_name;
    cx.plan.update(
        "src/lib.rs",
        Edit::AfterLine {
            anchor: "pub mod webhook;".into(),
            text: "pub mod webhook_certs;".into(),
        },
    );
    cx.plan.above_marker(
        "src/controllers/mod.rs",
        "rbac",
        vec!["crate::webhook_certs::RBAC,".into()],
    );
    for (anchor, text) in [
        (
            format!("use {lib}::webhook::{{self, Cluster}};"),
            format!("use {lib}::webhook_certs;"),
        ),
        (
            "webhook_dev_host: Option<String>,".to_string(),
            RUST_FLAGS.to_string(),
        ),
    ] {
        cx.plan.update(RUST_MAIN, Edit::AfterLine { anchor, text });
    }
    cx.plan.update(
        RUST_MAIN,
        Edit::BeforeLine {
            anchor: "None => (".into(),
            text: RUST_SERVER.into(),
        },
    );
    // config/rbac/role.yaml as `make manifests` writes it with the module's rules: the one
    // `init` plans, or the project's.
    let planned = cx.plan.created_mut(Path::new(ROLE));
    let text = match &planned {
        Some(content) => Some(content.to_string()),
        None => std::fs::read_to_string(cx.root.join(ROLE)).ok(),
    };
    let mut rules = text
        .as_deref()
        .and_then(rbac::read_rules)
        .unwrap_or_else(rbac::manager_rules);
    rules.extend(rbac::webhook_certs_rules());
    let role = rbac::role_yaml(&rules, false);
    match planned {
        Some(content) => *content = role,
        None => cx.plan.create(ROLE, role, IfExists::Overwrite),
    }
    Ok(())
}

const ROLE: &str = "config/rbac/role.yaml";

/// Take cert-manager out of go/v4's plan of `create webhook` (or of what `delete webhook`
/// undoes): the cert-manager tree, its switches and replacements in config/default, and the
/// manager patch that mounts its certificate, which becomes ours.
fn without_cert_manager(plan: &mut Plan, patch: &str) {
    plan.ops.retain(
        |op| !matches!(op, Op::Create { path, .. } if path.starts_with("config/certmanager")),
    );
    for op in &mut plan.ops {
        match op {
            Op::Create { path, content, .. } if path == Path::new(MANAGER_PATCH) => {
                *content = patch.to_string();
            }
            Op::Update { path, edits, .. } if path == Path::new(E2E_TEST) => {
                for e in edits.iter_mut() {
                    if let Edit::AboveMarker { fragments, .. } = e {
                        for f in fragments.iter_mut() {
                            *f = f.replace(E2E_WAIT.0, E2E_WAIT.1);
                        }
                    }
                }
            }
            Op::Update { path, edits, .. } if path == Path::new(DEFAULT_KUSTOMIZATION) => {
                edits.retain(|e| match e {
                    Edit::Uncomment { block, .. } => {
                        block != "- ../certmanager" && block != "replacements:"
                    }
                    // Every replacement copies a field of a cert-manager Certificate.
                    Edit::EnableEntry { .. } => false,
                    Edit::AboveMarker { marker, .. } => {
                        !marker.starts_with("crdkustomizecainjection")
                    }
                    _ => true,
                });
            }
            _ => {}
        }
    }
    plan.ops
        .retain(|op| !matches!(op, Op::Update { edits, .. } if edits.is_empty()));
}

fn manager_patch(cx: &Cx) -> Result<String> {
    let ctx = ProjectCtx::load(cx.root, cx.project)?;
    let code = certs_code(cx);
    let ctx = ConfigCtx {
        project: &ctx,
        certs_code: code,
    };
    Ok(
        templates::render_tree("certs", &ctx, |t| t == MANAGER_PATCH)?
            .pop()
            .map(|f| f.content)
            .unwrap_or_default(),
    )
}

/// Whether the plugin is on in this project.
fn on(cx: &Cx) -> Result<bool> {
    Ok(cx
        .project
        .plugin_config::<serde_yaml::Value>(KEY)?
        .is_some())
}

impl Plugin for Certs {
    fn key(&self) -> &'static str {
        KEY
    }

    fn follows_project(&self) -> bool {
        true
    }

    fn joins_deletion(&self) -> bool {
        true
    }

    fn init(&self, cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
        enable(cx, boilerplate)?;
        let code = certs_code(cx);
        cx.notes.push(format!(
            "Webhooks will need no cert-manager: the manager makes, keeps and rotates its own certificate in the \
             Secret webhook-server-cert ({code})."
        ));
        Ok(())
    }

    fn create_webhook(&self, cx: &mut Cx, _hook: &ResolvedWebhook) -> Result<()> {
        if on(cx)? {
            let patch = manager_patch(cx)?;
            without_cert_manager(cx.plan, &patch);
        }
        Ok(())
    }

    fn delete_webhook(&self, cx: &mut Cx, hook: &ResolvedWebhook, _undo: &mut Undo) -> Result<()> {
        self.create_webhook(cx, hook)
    }

    fn edit(&self, cx: &mut Cx, _args: &EditArgs) -> Result<()> {
        enable(cx, None)?;
        let default =
            std::fs::read_to_string(cx.root.join(DEFAULT_KUSTOMIZATION)).unwrap_or_default();
        if default.lines().any(|l| l.trim() == "- ../certmanager") {
            cx.notes.push(format!(
                "warning: the webhooks already use cert-manager. To move them to the manager's own certificate, \
                 in {DEFAULT_KUSTOMIZATION} comment out `- ../certmanager` (unless the metrics certificate uses \
                 it) and the replacements that copy the Certificate's fields, and replace {MANAGER_PATCH} with \
                 the one `create webhook` writes now (--webhook-cert-secret=webhook-server-cert, \
                 --webhook-service, no certificate volume); docs/certs.md shows both."
            ));
        }
        cx.notes.push(
            "The manager keeps its own webhook certificate from now on (certs.opbuilder.io/v1-alpha): run make \
             manifests for its RBAC, and create webhook writes no cert-manager objects."
                .into(),
        );
        Ok(())
    }
}
