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

//! The EventResource controller: reconciles every EventResource (core/v1) of the cluster.

use crate::manager::{Context, Shutdown};
use crate::rbac::Rule;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Event as EventResource;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The controller's name in logs and metrics.
const NAME: &str = "event";

/// What this controller may do, written to config/rbac/role.yaml by `make manifests`.
/// TODO(user): add the rules of what the reconcile reads or changes.
pub const RBAC: &[Rule] = &[Rule {
    groups: &[""],
    resources: &["events"],
    verbs: &["get", "list", "watch", "update", "patch"],
}];

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
}

/// Run the controller until `shutdown`.
pub async fn run(ctx: Context, shutdown: Shutdown) {
    let api = Api::<EventResource>::all(ctx.client.clone());
    // TODO(user): to reconcile the owner when an object it owns changes, add
    // `.owns(Api::<Owned>::all(ctx.client.clone()), watcher::Config::default())`.
    Controller::new(api, watcher::Config::default())
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, Arc::new(ctx))
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::warn!(controller = NAME, error = %e, "reconcile failed");
            }
        })
        .await;
}

/// Bring the cluster closer to what `obj` asks for.
pub async fn reconcile(obj: Arc<EventResource>, ctx: Arc<Context>) -> Result<Action, Error> {
    let started = Instant::now();
    // TODO(user): the reconcile logic: compare what obj asks for with what exists, change what
    // differs, and say when to look again.
    tracing::info!(controller = NAME, name = %obj.name_any(), namespace = ?obj.namespace(), "reconciling");
    ctx.backoff.reset(&ObjectRef::from_obj(&*obj).to_string());
    ctx.metrics.reconciled(NAME, started, true);
    Ok(Action::requeue(Duration::from_secs(300)))
}

/// After a failed reconciliation: retry with exponential backoff.
pub fn error_policy(obj: Arc<EventResource>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.reconciled(NAME, Instant::now(), false);
    let delay = ctx.backoff.next(&ObjectRef::from_obj(&*obj).to_string());
    tracing::warn!(controller = NAME, name = %obj.name_any(), %error, ?delay, "retrying");
    Action::requeue(delay)
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::manager::Metrics;
    use http::{Request, Response};
    use kube::client::Body;

    #[tokio::test]
    async fn reconcile_looks_again_later() {
        let (service, _handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let ctx = Arc::new(Context::new(client, Arc::new(Metrics::default())));
        let mut obj = EventResource::default();
        obj.metadata.name = Some("test".into());
        let action = reconcile(Arc::new(obj), ctx).await.expect("reconciled");
        assert_eq!(action, Action::requeue(Duration::from_secs(300)));
    }
}
