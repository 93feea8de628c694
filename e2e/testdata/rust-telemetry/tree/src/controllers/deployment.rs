/*
Copyright 2026 The Guestbook Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

//! The Deployment controller: reads the Deployment objects (apps/v1) of the cluster and
//! reconciles each one when it changes.

use crate::manager::{Context, Shutdown};
use crate::rbac::Rule;
use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use std::sync::Arc;

/// The controller's name in logs and metrics, unique among the manager's controllers.
pub const NAME: &str = "apps-deployment";

/// What this controller may do, written to config/rbac/role.yaml by `make manifests`: watch
/// the Deployment objects (list and watch), and nothing else.
/// TODO(user): add the rules of what the reconcile reads or changes.
pub const RBAC: &[Rule] = &[Rule {
    groups: &["apps"],
    resources: &["deployments"],
    verbs: &["list", "watch"],
}];

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
}

/// Run the controller until `shutdown`.
pub async fn run(ctx: Context, shutdown: Shutdown) {
    let api = ctx.watched::<Deployment>();
    // Every Deployment of the cluster (or of the watched namespace) is watched and kept in memory (without its managedFields).
    // TODO(user): keep only those the reconcile needs, with a label selector
    // (`watcher::Config::default().labels("app=web")`) or a field selector, or only their
    // metadata (`kube::runtime::metadata_watcher`, with `Controller::for_stream`).
    let config = watcher::Config::default();
    let (reader, changes) = ctx.watch(NAME, api, config);
    let controller = Controller::for_stream(changes, reader)
        .with_config(ctx.controller_config())
        .graceful_shutdown_on(shutdown);
    let ctx = Arc::new(ctx);
    ctx.drive(NAME, controller.run(reconcile, error_policy, ctx.clone()))
        .await;
}

/// Look at `obj`, which changed; the next change brings it back.
#[tracing::instrument(name = "reconcile", skip_all, fields(otel.name = format!("reconcile {NAME}"), controller = NAME, k8s.namespace.name = kube::ResourceExt::namespace(obj.as_ref()), k8s.object.name = kube::ResourceExt::name_any(obj.as_ref()), reconcile.result, trace_id))]
pub async fn reconcile(obj: Arc<Deployment>, ctx: Arc<Context>) -> Result<Action, Error> {
    let reconciliation = ctx.metrics.start(NAME);
    // TODO(user): the reconcile logic: compare what obj says with what should be, change what
    // differs.
    tracing::debug!(controller = NAME, name = %obj.name_any(), namespace = ?obj.namespace(), "reconciling");
    ctx.backoff.reset(&ObjectRef::from_obj(&*obj).to_string());
    let result = Ok(Action::await_change());
    reconciliation.finish(&result);
    result
}

/// After a failed reconciliation: retry with exponential backoff.
pub fn error_policy(obj: Arc<Deployment>, error: &Error, ctx: Arc<Context>) -> Action {
    let delay = ctx.backoff.next(&ObjectRef::from_obj(&*obj).to_string());
    tracing::warn!(controller = NAME, name = %obj.name_any(), %error, ?delay, "reconcile failed; retrying");
    Action::requeue(delay)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manager::Metrics;
    use http::{Request, Response};
    use kube::client::Body;

    #[tokio::test]
    async fn reconcile_waits_for_the_next_change() {
        let (service, _handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let ctx = Arc::new(Context::new(client, Arc::new(Metrics::default())));
        let mut obj = Deployment::default();
        obj.metadata.name = Some("test".into());
        let action = reconcile(Arc::new(obj), ctx).await.expect("reconciled");
        assert_eq!(action, Action::await_change());
    }
}
