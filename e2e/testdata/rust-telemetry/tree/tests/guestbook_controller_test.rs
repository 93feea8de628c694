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

//! The Guestbook controller on a real API server, run as the manager's ServiceAccount with the
//! RBAC the code declares: a new Guestbook gets an Available status (and the finalizer, when the
//! controller has one), which leaves the conditions of other writers alone; deleting it lets it
//! go (after the cleanup, with a finalizer).

mod support;

use futures::FutureExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Resource, ResourceExt};
use std::sync::Arc;
use std::time::Duration;

use guestbook::api::webapp::v1::{Guestbook, GuestbookSpec};
use guestbook::controllers::guestbook as controller;
use guestbook::manager::{Context, Metrics};

/// How long the controller may take to act on a change.
const WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_new_object_becomes_available_and_its_deletion_goes_through() {
    let plane = support::ControlPlane::start().await;
    let ctx = Context::new(plane.manager_client().await, Arc::new(Metrics::default()));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        let _ = stopped.await;
    }
    .boxed()
    .shared();
    let running = tokio::spawn(controller::run(ctx, shutdown));

    let api: Api<Guestbook> = Api::namespaced(plane.client.clone(), "default");
    // TODO(user): a spec that exercises your reconcile.
    let obj = Guestbook::new("sample", GuestbookSpec::default());
    let created = api
        .create(&PostParams::default(), &obj)
        .await
        .expect("creating the object");

    let available = await_condition(api.clone(), "sample", |o: Option<&Guestbook>| {
        o.and_then(|o| o.status.as_ref()).is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.type_ == "Available" && c.status == "True")
        })
    });
    let obj = tokio::time::timeout(WAIT, available)
        .await
        .expect("the status in time")
        .expect("watching the object")
        .expect("the object");
    assert_eq!(
        obj.finalizers(),
        controller::FINALIZER.map(String::from).as_slice(),
        "the object's finalizers are not the controller's"
    );

    // Another writer's condition survives the controller's next apply: the conditions are a
    // list keyed by `type`, so server-side apply gives each writer its own.
    let audited = serde_json::json!({
        "apiVersion": Guestbook::api_version(&()),
        "kind": Guestbook::kind(&()),
        "status": { "conditions": [{
            "type": "Audited",
            "status": "True",
            "reason": "Checked",
            "message": "another writer's condition",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }] },
    });
    api.patch_status(
        "sample",
        &PatchParams::apply("auditor").force(),
        &Patch::Apply(&audited),
    )
    .await
    .expect("applying another writer's condition");
    // A new spec makes the controller apply its status again.
    let spec = serde_json::json!({ "spec": { "foo": "changed" } });
    let changed = api
        .patch("sample", &PatchParams::default(), &Patch::Merge(&spec))
        .await
        .expect("changing the spec");
    let generation = changed.metadata.generation;
    let reapplied = move |o: Option<&Guestbook>| {
        o.and_then(|o| o.status.as_ref()).is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.type_ == "Available" && c.observed_generation == generation)
        })
    };
    let reapplied = await_condition(api.clone(), "sample", reapplied);
    let obj = tokio::time::timeout(WAIT, reapplied)
        .await
        .expect("the status of the new spec in time")
        .expect("watching the object")
        .expect("the object");
    let types: Vec<String> = obj
        .status
        .map(|s| s.conditions.into_iter().map(|c| c.type_).collect())
        .unwrap_or_default();
    assert!(
        types.iter().any(|t| t == "Audited"),
        "the controller's apply removed another writer's condition: {types:?}"
    );

    api.delete("sample", &DeleteParams::default())
        .await
        .expect("deleting the object");
    let uid = created.uid().expect("a uid");
    let gone = await_condition(api.clone(), "sample", conditions::is_deleted(&uid));
    tokio::time::timeout(WAIT, gone)
        .await
        .expect("the object to go in time")
        .expect("watching the object");

    let _ = stop.send(());
    running.await.expect("the controller stops");
}
