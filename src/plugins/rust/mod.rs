//! rust.opbuilder.io/v1-beta: operators written in Rust on kube-rs. `init` writes a Cargo
//! project (a manager binary, a manifests binary that writes the CRDs and RBAC from the Rust
//! source, the envtest-style test harness) beside go/v4's kustomize tree; `create api` adds a
//! kind's types module, its controller and their wiring above `+kubebuilder:scaffold:` markers.
//! Its templates are the `rust/init`, `rust/api`, `rust/controller`, `rust/webhook`,
//! `rust/conversion` and `rust/deploy-image` (deploy-image/v1-alpha's controller) trees and `rust/fragments/` of scaffolds/ (with go/v4's trees for config/).
//!
//! Projects made by opbuilder 0.4.0 record the layout's first key, rust.opbuilder.io/v1-alpha:
//! they are extended with 0.4.0's templates (see `crate::planning::release`) until `alpha
//! update` carries them to v1-beta, and `alpha generate --templates-version 0.4.0` replays them
//! under their own key.

use crate::error::usage;
use crate::plan::Next;
use crate::planning::api::ResolvedResource;
use crate::planning::delete::Undo;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::planning::webhook::ResolvedWebhook;
use anyhow::Result;

pub mod api;
pub mod context;
pub mod delete;
pub mod deployimage;
pub mod edit;
pub mod external;
pub mod init;
pub mod kopium;
pub mod rbac;
pub mod telemetry;
pub mod webhook;

/// The plugin's full name, as the registry and chain know it.
pub const NAME: &str = "rust.opbuilder.io";
/// Its key, as PROJECT's `layout` records it.
pub const KEY: &str = crate::project::RUST_LAYOUT;
/// Its key in projects made by opbuilder 0.4.0.
pub const KEY_V1_ALPHA: &str = crate::project::RUST_LAYOUT_V1_ALPHA;
/// The release whose templates are the layout's v1-alpha.
pub const V1_ALPHA_RELEASE: &str = crate::project::RUST_LAYOUT_V1_ALPHA_RELEASE;

/// The layout's key for the templates in use: v1-alpha while release 0.4.0's templates are
/// active (`alpha update` from 0.4.0, `alpha generate --templates-version 0.4.0`, `create` in a
/// v1-alpha project), v1-beta otherwise.
pub fn key_for_templates() -> &'static str {
    if crate::releases::active_version() == Some(V1_ALPHA_RELEASE) {
        KEY_V1_ALPHA
    } else {
        KEY
    }
}

/// The Rust layout under one of its keys: `rust.opbuilder.io/v1-beta`, and
/// `rust.opbuilder.io/v1-alpha` for projects made by 0.4.0.
pub struct RustLayout {
    key: &'static str,
}

pub static V1_BETA: RustLayout = RustLayout { key: KEY };
pub static V1_ALPHA: RustLayout = RustLayout { key: KEY_V1_ALPHA };

impl RustLayout {
    /// A key of another version than the templates in use write: `init` refuses it (a new
    /// project gets the current layout), the other hooks are not reached with it (a v1-alpha
    /// project is extended with 0.4.0's templates).
    fn check_key(&self) -> Result<()> {
        let want = key_for_templates();
        if self.key == want {
            return Ok(());
        }
        Err(usage(format!(
            "--plugins {}: that key is the Rust layout of projects made by opbuilder {V1_ALPHA_RELEASE}; \
             a new project gets {want}, which `alpha update` carries those projects to. For example: \
             opbuilder init --plugins={want} --domain example.com --project-name guestbook",
            self.key
        )))
    }
}

/// The first Rust file the plan writes under `dir` (a module's own file, not a `mod.rs`) that
/// `pick` takes.
pub(crate) fn rust_file(
    plan: &crate::plan::Plan,
    dir: &str,
    pick: impl Fn(&str) -> bool,
) -> Option<String> {
    plan.written(".rs")
        .into_iter()
        .find(|f| f.starts_with(dir) && !f.ends_with("/mod.rs") && pick(f))
}

/// Whether the test control plane (kube-apiserver and etcd) is in the project's bin/k8s, where
/// `make setup-envtest` puts it.
fn envtest_ready(root: &std::path::Path) -> bool {
    std::fs::read_dir(root.join("bin/k8s")).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().join("kube-apiserver").is_file())
    })
}

/// The commands that test the project: `make setup-envtest` first while the test control
/// plane is missing, then `make manifests test`.
pub(crate) fn test_commands(root: &std::path::Path) -> Vec<String> {
    let mut run = vec![];
    if !envtest_ready(root) {
        run.push(
            "make setup-envtest      # once: kube-apiserver and etcd for the tests, into bin/k8s"
                .into(),
        );
    }
    run.push("make manifests test".into());
    run
}

/// What comes next after the types (and the controller, `controller`) were planned: fill
/// them in, then test.
fn next_after_types(cx: &Cx, controller: bool) -> Next {
    let types = rust_file(cx.plan, "src/api/", |_| true)
        .unwrap_or_else(|| "the types under src/api/".into());
    let reconcile = rust_file(cx.plan, "src/controllers/", |_| true)
        .filter(|_| controller)
        .map(|c| format!(" and the reconcile in {c}"))
        .unwrap_or_default();
    Next {
        lead: format!("fill in the Spec and Status in {types}{reconcile}, then run"),
        run: test_commands(cx.root),
        note: None,
    }
}

/// What comes next after a controller for another project's kind: its reconcile (its types
/// are kopium's), then test.
fn next_after_external(cx: &Cx) -> Next {
    let reconcile = rust_file(cx.plan, "src/controllers/", |_| true)
        .unwrap_or_else(|| "src/controllers/".into());
    let types = rust_file(cx.plan, "src/external/", |_| true)
        .map(|t| format!(" (its types, kopium's, are in {t})"))
        .unwrap_or_default();
    Next {
        lead: format!("fill in the reconcile in {reconcile}{types}, then run"),
        run: test_commands(cx.root),
        note: None,
    }
}

impl Plugin for RustLayout {
    fn key(&self) -> &'static str {
        self.key
    }
    fn init(&self, cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
        self.check_key()?;
        init::plan_files(cx, boilerplate)?;
        let mut run = vec![crate::planning::init::ADD_API.to_string()];
        run.extend(test_commands(cx.root));
        cx.plan.next = Some(Next {
            lead: "add an API, then test the project, for example with".into(),
            run,
            note: None,
        });
        Ok(())
    }
    fn create_api(&self, cx: &mut Cx, res: &ResolvedResource) -> Result<()> {
        api::plan_files(cx, res)?;
        cx.plan.next = Some(if res.external {
            next_after_external(cx)
        } else {
            next_after_types(cx, res.do_controller)
        });
        Ok(())
    }
    fn create_webhook(&self, cx: &mut Cx, hook: &ResolvedWebhook) -> Result<()> {
        webhook::plan_files(cx, hook)?;
        let mut todo = vec![];
        if let Some(f) = rust_file(cx.plan, "src/webhooks/", |f| !f.ends_with("_conversion.rs")) {
            todo.push(format!("default and validate in {f}"));
        }
        if let Some(f) = rust_file(cx.plan, "src/webhooks/", |f| f.ends_with("_conversion.rs")) {
            todo.push(format!("the conversion between versions in {f}"));
        }
        if todo.is_empty() {
            todo.push("the webhooks in src/webhooks/".into());
        }
        cx.plan.next = Some(Next {
            lead: format!("fill in {}, then run", todo.join(", and ")),
            run: test_commands(cx.root),
            note: None,
        });
        Ok(())
    }
    fn edit(&self, cx: &mut Cx, args: &EditArgs) -> Result<()> {
        edit::plan(cx, args, self.key)
    }
    fn delete_api(&self, cx: &mut Cx, res: &ResolvedResource, undo: &mut Undo) -> Result<()> {
        delete::delete_api(cx, res, undo)
    }
    fn delete_webhook(&self, cx: &mut Cx, hook: &ResolvedWebhook, undo: &mut Undo) -> Result<()> {
        delete::delete_webhook(cx, hook, undo)
    }
}
