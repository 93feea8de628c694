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

//! The Guestbook controller: reconciles each Guestbook (webapp.example.com/v1) and reports
//! what it found in its status.

use crate::api::webapp::v1::{Guestbook, GuestbookStatus};
use crate::manager::{Context, MANAGER_NAME, Shutdown};
use crate::rbac::Rule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType};
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use std::sync::Arc;

/// The controller's name in logs and metrics, unique among the manager's controllers.
pub const NAME: &str = "webapp-guestbook";

/// The finalizer that makes the API server wait for [`cleanup`] before it deletes an object:
/// none, as go/v4's controller has none. What a Guestbook owns through an owner reference is
/// deleted with it by Kubernetes; a finalizer costs a write per object and holds every
/// deletion, of the objects and of their namespaces and CRD (`make undeploy`), until the
/// manager has run [`cleanup`]: without a running manager they stay Terminating.
/// TODO(user): when a Guestbook leaves something behind that owner references cannot delete
/// (outside the cluster, or in another namespace), set `Some("webapp.example.com/finalizer")` and
/// write [`cleanup`]; `RBAC` then grants the patch that adds and removes it.
pub const FINALIZER: Option<&str> = None;

/// What this controller may do, written to config/rbac/role.yaml by `make manifests`: watch
/// the Guestbook objects (list and watch; patch when it has a finalizer to add and remove), apply
/// their status (patch), and give what it creates an owner reference that blocks the
/// Guestbook's deletion (update on finalizers, which the API server asks for where the
/// OwnerReferencesPermissionEnforcement admission plugin is on, as in OpenShift); nothing else.
/// TODO(user): add the rules of what the reconcile reads or changes (e.g. Deployments).
pub const RBAC: &[Rule] = &[
    Rule {
        groups: &["webapp.example.com"],
        resources: &["guestbooks"],
        verbs: if FINALIZER.is_some() {
            &["list", "patch", "watch"]
        } else {
            &["list", "watch"]
        },
    },
    Rule {
        groups: &["webapp.example.com"],
        resources: &["guestbooks/status"],
        verbs: &["patch"],
    },
    Rule {
        groups: &["webapp.example.com"],
        resources: &["guestbooks/finalizers"],
        verbs: &["update"],
    },
];

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),
}

/// Run the controller until `shutdown`.
pub async fn run(ctx: Context, shutdown: Shutdown) {
    let api = ctx.watched::<Guestbook>();
    let (reader, changes) = ctx.watch(NAME, api, watcher::Config::default());
    // TODO(user): to reconcile the owner when an object it owns changes, add
    // `.owns(Api::<Deployment>::all(ctx.client.clone()), watcher::Config::default())`.
    let controller = Controller::for_stream(changes, reader)
        .with_config(ctx.controller_config())
        .graceful_shutdown_on(shutdown);
    let ctx = Arc::new(ctx);
    ctx.drive(NAME, controller.run(reconcile, error_policy, ctx.clone()))
        .await;
}

/// The API of the Guestbook objects where `obj` lives.
fn api_for(obj: &Guestbook, ctx: &Context) -> Api<Guestbook> {
    Api::namespaced(ctx.client.clone(), &obj.namespace().unwrap_or_default())
}

/// Bring the cluster closer to what `obj` asks for: [`apply`], or with a [`FINALIZER`],
/// [`apply`] while it exists and [`cleanup`] once it is being deleted.
#[tracing::instrument(name = "reconcile", skip_all, fields(otel.name = format!("reconcile {NAME}"), controller = NAME, k8s.namespace.name = kube::ResourceExt::namespace(obj.as_ref()), k8s.object.name = kube::ResourceExt::name_any(obj.as_ref()), reconcile.result, trace_id))]
pub async fn reconcile(obj: Arc<Guestbook>, ctx: Arc<Context>) -> Result<Action, Error> {
    let reconciliation = ctx.metrics.start(NAME);
    let key = ObjectRef::from_obj(&*obj).to_string();
    let result = match FINALIZER {
        None => apply(obj, &ctx).await,
        Some(name) => finalized(name, obj, &ctx).await,
    };
    if result.is_ok() {
        ctx.backoff.reset(&key);
    }
    reconciliation.finish(&result);
    result
}

/// [`apply`] while `obj` exists, [`cleanup`] once it is being deleted, with the finalizer
/// `name` holding its deletion until then (added first, removed after the cleanup).
async fn finalized(name: &str, obj: Arc<Guestbook>, ctx: &Context) -> Result<Action, Error> {
    finalizer(&api_for(&obj, ctx), name, obj, |event| async {
        match event {
            Finalizer::Apply(obj) => apply(obj, ctx).await,
            Finalizer::Cleanup(obj) => cleanup(obj, ctx).await,
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))
}

/// The condition `Available` that `obj` should report now.
fn available(obj: &Guestbook) -> Condition {
    Condition {
        type_: "Available".into(),
        status: "True".into(),
        reason: "Reconciled".into(),
        message: "the Guestbook is reconciled".into(),
        observed_generation: obj.metadata.generation,
        last_transition_time: Time(Timestamp::now()),
    }
}

/// The object exists: make the cluster match its spec, then report in its status, unless it
/// says so already. A change of the object brings it back; nothing else does (no periodic
/// requeue).
async fn apply(obj: Arc<Guestbook>, ctx: &Context) -> Result<Action, Error> {
    // TODO(user): the reconcile logic: compare what obj.spec asks for with what exists, create
    // or change what differs, and report it in the status below. Give what you create an owner
    // reference, `obj.controller_owner_ref(&())`, so that it goes with the Guestbook (with
    // `block_owner_deletion: Some(true)` in it, as controller-runtime's, a foreground deletion
    // of the Guestbook waits for it: RBAC's finalizers rule allows that), and watch it (see
    // `run`). To look again later at what no watch reports (something outside the cluster),
    // return `Action::requeue(<delay>)`.
    let mut condition = available(&obj);
    let previous = obj
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == condition.type_));
    if let Some(previous) = previous
        && previous.status == condition.status
    {
        // The transition time holds while the status does.
        condition.last_transition_time = previous.last_transition_time.clone();
        if *previous == condition {
            // Nothing to report: no write (a write would be the API server's work for nothing,
            // and bring the object back here).
            return Ok(Action::await_change());
        }
    }
    let transition = previous.is_none_or(|c| c.status != condition.status);
    let status = GuestbookStatus {
        conditions: vec![condition],
    };
    // Server-side apply of the status: the manager owns exactly the fields it writes.
    let patch = serde_json::json!({
        "apiVersion": Guestbook::api_version(&()),
        "kind": Guestbook::kind(&()),
        "status": status,
    });
    api_for(&obj, ctx)
        .patch_status(
            &obj.name_any(),
            &PatchParams::apply(MANAGER_NAME).force(),
            &Patch::Apply(&patch),
        )
        .await?;
    if transition {
        publish(ctx, &obj, "Reconciled", "Reconcile", "available").await;
    }
    Ok(Action::await_change())
}

/// The object is being deleted (with a [`FINALIZER`]): remove what cannot be left to garbage
/// collection.
async fn cleanup(obj: Arc<Guestbook>, ctx: &Context) -> Result<Action, Error> {
    // TODO(user): delete what lives outside the cluster or is not owned through owner
    // references; objects owned by this Guestbook are collected by Kubernetes.
    publish(ctx, &obj, "Deleting", "Cleanup", "being deleted").await;
    Ok(Action::await_change())
}

/// Publish an event about `obj`; a failure is logged, never fails the reconciliation.
async fn publish(ctx: &Context, obj: &Guestbook, reason: &str, action: &str, note: &str) {
    let event = Event {
        type_: EventType::Normal,
        reason: reason.into(),
        note: Some(note.into()),
        action: action.into(),
        secondary: None,
    };
    if let Err(e) = ctx.recorder.publish(&event, &obj.object_ref(&())).await {
        tracing::warn!(controller = NAME, error = %e, "cannot publish an event");
    }
}

/// After a failed reconciliation: retry with exponential backoff.
pub fn error_policy(obj: Arc<Guestbook>, error: &Error, ctx: Arc<Context>) -> Action {
    let delay = ctx.backoff.next(&ObjectRef::from_obj(&*obj).to_string());
    tracing::warn!(controller = NAME, name = %obj.name_any(), %error, ?delay, "reconcile failed; retrying");
    Action::requeue(delay)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::webapp::v1::GuestbookSpec;
    use crate::manager::Metrics;
    use http::{Request, Response};
    use kube::client::Body;
    use tower_test::mock::Handle;

    /// A context whose client talks to a mocked API server, and the mock's handle.
    fn mocked() -> (Arc<Context>, Handle<Request<Body>, Response<Body>>) {
        let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let ctx = Context::new(client, Arc::new(Metrics::default()));
        (Arc::new(ctx), handle)
    }

    /// An object as the controller finds it: with its [`FINALIZER`], if it has one.
    fn object() -> Guestbook {
        let mut obj = Guestbook::new("test", GuestbookSpec::default());
        obj.metadata.namespace = Some("default".into());
        obj.metadata.generation = Some(1);
        obj.metadata.finalizers = FINALIZER.map(|f| vec![f.to_string()]);
        obj
    }

    /// Answer `n` requests (with the object, or the request's own body for events) and return
    /// each one's method, path and body.
    async fn answer(mut handle: Handle<Request<Body>, Response<Body>>, n: usize) -> Vec<String> {
        let mut seen = vec![];
        for _ in 0..n {
            let (request, send) = handle.next_request().await.expect("a request");
            let line = format!("{} {}", request.method(), request.uri().path());
            let body = request.into_body().collect_bytes().await.expect("a body");
            let reply = if line.ends_with("/events") {
                body.to_vec()
            } else {
                serde_json::to_vec(&object()).expect("JSON")
            };
            seen.push(format!("{line} {}", String::from_utf8_lossy(&body)));
            let response = Response::builder().body(Body::from(reply));
            send.send_response(response.expect("a response"));
        }
        seen
    }

    #[tokio::test]
    async fn a_new_object_gets_an_available_status_and_an_event() {
        let (ctx, handle) = mocked();
        let server = tokio::spawn(answer(handle, 2));
        let action = reconcile(Arc::new(object()), ctx).await;
        let seen = server.await.expect("the mock server");
        let action = action.expect("reconciled");
        assert!(seen[0].contains("/guestbooks/test/status "), "{seen:?}");
        assert!(seen[0].contains(r#""type":"Available""#), "{seen:?}");
        assert!(seen[1].starts_with("POST "), "{seen:?}");
        assert!(seen[1].contains("/events "), "{seen:?}");
        // No periodic requeue: the next change brings the object back.
        assert_eq!(action, Action::await_change());
    }

    #[tokio::test]
    async fn an_object_that_reports_its_state_already_is_not_written() {
        let (ctx, handle) = mocked();
        // The API server answers nothing: any request would fail the reconcile.
        drop(handle);
        let mut obj = object();
        let mut reported = available(&obj);
        reported.last_transition_time = Time(Timestamp::UNIX_EPOCH);
        obj.status = Some(GuestbookStatus {
            conditions: vec![reported],
        });
        let action = reconcile(Arc::new(obj), ctx).await.expect("no request");
        assert_eq!(action, Action::await_change());
    }

    #[tokio::test]
    async fn the_finalizer_pattern_adds_the_finalizer_first() {
        let (ctx, handle) = mocked();
        let server = tokio::spawn(answer(handle, 1));
        let mut obj = object();
        obj.metadata.finalizers = None;
        let name = "webapp.example.com/finalizer";
        let action = finalized(name, Arc::new(obj), &ctx).await;
        let seen = server.await.expect("the mock server");
        assert!(seen[0].starts_with("PATCH "), "{seen:?}");
        assert!(seen[0].contains(name), "{seen:?}");
        assert_eq!(action.expect("reconciled"), Action::await_change());
    }
}
