//! rust.opbuilder.io/v1-alpha: operators written in Rust on kube-rs. `init` writes a Cargo
//! project (a manager binary, a manifests binary that writes the CRDs and RBAC from the Rust
//! source, the envtest-style test harness) beside go/v4's kustomize tree; `create api` adds a
//! kind's types module, its controller and their wiring above `+kubebuilder:scaffold:` markers.
//! Its templates are the `rust/init`, `rust/api`, `rust/controller`, `rust/webhook` and
//! `rust/conversion` trees and `rust/fragments/` of scaffolds/ (with go/v4's trees for config/).

use crate::error::usage;
use crate::planning::api::ResolvedResource;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::planning::webhook::ResolvedWebhook;
use anyhow::Result;

pub mod api;
pub mod context;
pub mod init;
pub mod rbac;
pub mod webhook;

/// The plugin's full name, as the registry and chain know it.
pub const NAME: &str = "rust.opbuilder.io";
/// Its key, as PROJECT's `layout` records it.
pub const KEY: &str = crate::project::RUST_LAYOUT;

/// `rust.opbuilder.io/v1-alpha`.
pub struct RustV1Alpha;

impl Plugin for RustV1Alpha {
    fn key(&self) -> &'static str {
        KEY
    }
    fn init(&self, cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
        init::plan_files(cx, boilerplate)?;
        cx.plan.next = Some(
            "Next: add an API with\n  opbuilder create api --group <group> --version v1 --kind <Kind>\n\
             then build and test with\n  make test"
                .into(),
        );
        Ok(())
    }
    fn create_api(&self, cx: &mut Cx, res: &ResolvedResource) -> Result<()> {
        api::plan_files(cx, res)?;
        cx.plan.next = Some(
            "Next: fill in the Spec and Status of the types and the reconcile of the controller under src/, then run\n  make manifests test"
                .into(),
        );
        Ok(())
    }
    fn create_webhook(&self, cx: &mut Cx, hook: &ResolvedWebhook) -> Result<()> {
        webhook::plan_files(cx, hook)?;
        cx.plan.next = Some(
            "Next: fill in default and validate in src/webhooks/, then run\n  make manifests test"
                .into(),
        );
        Ok(())
    }
    fn edit(&self, _cx: &mut Cx, _args: &EditArgs) -> Result<()> {
        Err(usage(
            "`edit` has nothing to change in a Rust project (rust.opbuilder.io/v1-alpha): it always lays out \
             APIs by group (src/api/<group>/<version>), and the other plugins do not run with it yet",
        ))
    }
}
