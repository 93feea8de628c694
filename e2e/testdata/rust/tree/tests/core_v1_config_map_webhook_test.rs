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

//! The webhooks of ConfigMap on a real API server: it calls them when an object is created.
//! `opbuilder create webhook` adds the checks of a webhook type later above the marker line.

mod support;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};
use std::time::Duration;

use guestbook::webhooks::core_v1_config_map as hooks;

fn object(name: &str) -> ConfigMap {
    let mut obj = ConfigMap::default();
    obj.metadata.name = Some(name.into());
    obj
}

#[tokio::test]
async fn the_api_server_calls_the_webhooks() {
    let plane = support::ControlPlane::start().await;
    plane.serve_webhooks(hooks::routes(), hooks::WEBHOOKS).await;
    let api: Api<ConfigMap> = Api::namespaced(plane.client.clone(), "default");

    // The API server takes a moment to start calling new webhooks: create probes until the
    // object it stores is the defaulted one.
    let cluster = plane.cluster().await;
    let mut defaulted = false;
    for _ in 0..100 {
        let created = api
            .create(&PostParams::default(), &object("probe"))
            .await
            .expect("creating the object");
        let mut expected = object("probe");
        hooks::default(&mut expected, &cluster).await;
        api.delete("probe", &DeleteParams::default())
            .await
            .expect("deleting the object");
        if created.metadata.labels == expected.metadata.labels {
            defaulted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(defaulted, "the defaulting webhook was never called");

    // The webhooks leave kube-system alone (webhook::OUTSIDE_SYSTEM_NAMESPACES).
    let system: Api<ConfigMap> = Api::namespaced(plane.client.clone(), "kube-system");
    let created = system
        .create(&PostParams::default(), &object("probe"))
        .await
        .expect("creating the object in kube-system");
    system
        .delete("probe", &DeleteParams::default())
        .await
        .expect("deleting the object");
    assert_eq!(
        created.metadata.labels,
        object("probe").metadata.labels,
        "the webhook changed an object of kube-system"
    );
    // +kubebuilder:scaffold:webhook-checks
}
