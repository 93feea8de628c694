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

//! The Memcached controller (deploy-image) on a real API server, run as the manager's
//! ServiceAccount with the RBAC the code declares: a new Memcached gets the finalizer, its
//! Deployment (the image, command, port, user; owned by it) and an Available status; a new size
//! reaches the Deployment; deleting it runs the finalizer. (The API server alone runs no pods
//! and collects no garbage: those are a cluster's.)

mod support;

use futures::FutureExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use std::sync::Arc;
use std::time::Duration;

use guestbook::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use guestbook::controllers::memcached as controller;
use guestbook::manager::{Context, Metrics};

/// How long the controller may take to act on a change.
const WAIT: Duration = Duration::from_secs(30);

/// The operand image of the test.
const IMAGE: &str = "memcached:1.6.26-alpine3.19";

#[tokio::test]
async fn a_new_object_gets_its_deployment_and_follows_its_size() {
    let plane = support::ControlPlane::start().await;
    let ctx = Context::new(plane.manager_client().await, Arc::new(Metrics::default()));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        let _ = stopped.await;
    }
    .boxed()
    .shared();
    let image = Some(IMAGE.to_string());
    let running = tokio::spawn(controller::run_with_image(ctx, shutdown, image));

    let api: Api<Memcached> = Api::namespaced(plane.client.clone(), "default");
    let deployments: Api<Deployment> = Api::namespaced(plane.client.clone(), "default");
    let spec = serde_json::json!({ "size": 2, "containerPort": 11211 });
    let spec: MemcachedSpec = serde_json::from_value(spec).expect("a spec");
    let created = api
        .create(&PostParams::default(), &Memcached::new("sample", spec))
        .await
        .expect("creating the object");

    let available = await_condition(api.clone(), "sample", |o: Option<&Memcached>| {
        o.and_then(|o| o.status.as_ref()).is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.type_ == controller::AVAILABLE && c.status == "True")
        })
    });
    let obj = tokio::time::timeout(WAIT, available)
        .await
        .expect("the status in time")
        .expect("watching the object")
        .expect("the object");
    assert!(obj.finalizers().iter().any(|f| f == controller::FINALIZER));

    let deployment = deployments.get("sample").await.expect("the Deployment");
    let owners = deployment.owner_references();
    assert!(
        owners.iter().any(|o| o.controller == Some(true)
            && Some(&o.uid) == created.uid().as_ref()
            && o.block_owner_deletion == Some(true)),
        "the Deployment is not owned by the object: {owners:?}"
    );
    let spec = deployment.spec;
    assert_eq!(spec.replicas, Some(2));
    let pod = spec.template.spec.expect("a pod spec");
    let container = &pod.containers[0];
    assert_eq!(container.image.as_deref(), Some(IMAGE));
    let command = container.command.clone().unwrap_or_default();
    assert_eq!(command, controller::COMMAND);
    let ports = container.ports.clone().unwrap_or_default();
    assert_eq!(ports.first().map(|p| p.container_port), Some(11211));
    let security = container.security_context.clone().unwrap_or_default();
    assert_eq!(security.run_as_user, Some(controller::RUN_AS_USER));

    // A new size reaches the Deployment.
    let resize = serde_json::json!({ "spec": { "size": 3 } });
    api.patch("sample", &PatchParams::default(), &Patch::Merge(&resize))
        .await
        .expect("changing the size");
    let resized = await_condition(deployments.clone(), "sample", |d: Option<&Deployment>| {
        d.is_some_and(|d| d.spec.replicas == Some(3))
    });
    tokio::time::timeout(WAIT, resized)
        .await
        .expect("the new size in time")
        .expect("watching the Deployment");

    // A Deployment changed by someone else is brought back.
    let scale = serde_json::json!({ "spec": { "replicas": 7 } });
    deployments
        .patch("sample", &PatchParams::default(), &Patch::Merge(&scale))
        .await
        .expect("scaling the Deployment by hand");
    let restored = await_condition(deployments.clone(), "sample", |d: Option<&Deployment>| {
        d.is_some_and(|d| d.spec.replicas == Some(3))
    });
    tokio::time::timeout(WAIT, restored)
        .await
        .expect("the size restored in time")
        .expect("watching the Deployment");

    api.delete("sample", &DeleteParams::default())
        .await
        .expect("deleting the object");
    let uid = created.uid().expect("a uid");
    let gone = await_condition(api.clone(), "sample", conditions::is_deleted(&uid));
    tokio::time::timeout(WAIT, gone)
        .await
        .expect("the finalizer to run in time")
        .expect("watching the object");

    let _ = stop.send(());
    running.await.expect("the controller stops");
}
