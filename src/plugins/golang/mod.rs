//! go/v4: the default layout (Kubebuilder's `go.kubebuilder.io/v4`, the bundle of
//! `base.go.kubebuilder.io/v4` and `kustomize.common.kubebuilder.io/v2`). Its templates are the
//! `init`, `api`, `controller`, `webhook` and `fragments` trees of scaffolds/. Shared planning
//! decides what is asked (`planning::api::resolve`, `planning::webhook::resolve`); this plugin
//! plans the files (one module per command) and records the result in PROJECT.

use crate::plan::Next;
use crate::planning::api::ResolvedResource;
use crate::planning::delete::Undo;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::planning::webhook::ResolvedWebhook;
use anyhow::Result;

pub mod api;
pub mod delete;
pub mod edit;
pub mod init;
pub mod webhook;

/// `go.kubebuilder.io/v4`.
pub struct GoV4;

fn go_init(cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
    init::plan_files(cx, boilerplate)?;
    cx.plan.next = Some(Next::new(
        "add an API, for example with",
        &[crate::planning::init::ADD_API],
    ));
    Ok(())
}

fn go_create_api(cx: &mut Cx, res: &ResolvedResource) -> Result<()> {
    api::plan_files(cx.root, cx.project, res, cx.plan, cx.notes)?;
    cx.plan.next = api::next_step(cx.plan, res);
    res.record(cx.project);
    Ok(())
}

fn go_create_webhook(cx: &mut Cx, hook: &ResolvedWebhook) -> Result<()> {
    webhook::plan_files(cx.root, cx.project, hook, cx.plan, cx.notes)?;
    cx.plan.next = Some(webhook::next_step(cx.plan, hook));
    hook.record(cx.project);
    Ok(())
}

/// go/v4 and base.go/v4 plan the same files (opbuilder's templates hold both halves of the
/// go/v4 bundle); only their keys differ.
macro_rules! go_plugin {
    ($ty:ty, $key:literal) => {
        impl Plugin for $ty {
            fn key(&self) -> &'static str {
                $key
            }
            fn init(&self, cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
                go_init(cx, boilerplate)
            }
            fn create_api(&self, cx: &mut Cx, res: &ResolvedResource) -> Result<()> {
                go_create_api(cx, res)
            }
            fn create_webhook(&self, cx: &mut Cx, hook: &ResolvedWebhook) -> Result<()> {
                go_create_webhook(cx, hook)
            }
            fn edit(&self, cx: &mut Cx, args: &EditArgs) -> Result<()> {
                edit::plan(cx, args)
            }
            fn delete_api(
                &self,
                cx: &mut Cx,
                res: &ResolvedResource,
                undo: &mut Undo,
            ) -> Result<()> {
                delete::delete_api(cx, res, undo)
            }
            fn delete_webhook(
                &self,
                cx: &mut Cx,
                hook: &ResolvedWebhook,
                undo: &mut Undo,
            ) -> Result<()> {
                delete::delete_webhook(cx, hook, undo)
            }
        }
    };
}

go_plugin!(GoV4, "go.kubebuilder.io/v4");

/// `base.go.kubebuilder.io/v4`: go/v4 named as its two halves (`--plugins=kustomize/v2,base.go.kubebuilder.io/v4`).
pub struct BaseGoV4;

go_plugin!(BaseGoV4, "base.go.kubebuilder.io/v4");

/// `kustomize.common.kubebuilder.io/v2`: accepted only next to base.go/v4 (see
/// `plugins::go_layout`), whose templates already hold the kustomize files; it adds nothing itself.
pub struct KustomizeV2;

impl Plugin for KustomizeV2 {
    fn key(&self) -> &'static str {
        "kustomize.common.kubebuilder.io/v2"
    }
}
