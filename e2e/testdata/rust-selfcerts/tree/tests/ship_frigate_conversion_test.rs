/*
Copyright 2026.

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

//! Frigate's conversion webhook on a real API server: an object written as one version
//! reads the same as the others, and writes back.

mod support;

use kube::api::{Api, PostParams};
use std::time::Duration;

use harbor::api::ship::{v1, v2};
use harbor::webhooks;

#[tokio::test]
async fn objects_convert_between_the_versions() {
    let plane = support::ControlPlane::start().await;
    let server = plane.serve_webhooks(webhooks::routes(), &[]).await;
    plane
        .convert_with_webhook("frigates.ship.example.com", &server)
        .await;
    let hub_spec = v1::FrigateSpec {
        foo: Some("bar".into()),
    };
    let hub: Api<v1::Frigate> = Api::namespaced(plane.client.clone(), "default");
    let obj = v1::Frigate::new("sample", hub_spec);
    hub.create(&PostParams::default(), &obj)
        .await
        .expect("creating the object");

    let spoke: Api<v2::Frigate> = Api::namespaced(plane.client.clone(), "default");
    // The API server takes a moment to use the changed CRD.
    let mut read = None;
    for _ in 0..100 {
        if let Ok(obj) = spoke.get("sample").await {
            read = Some(obj);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut obj = read.expect("reading the object as v2");
    assert_eq!(obj.spec.foo.as_deref(), Some("bar"));
    obj.spec.foo = Some("v2".into());
    spoke
        .replace("sample", &PostParams::default(), &obj)
        .await
        .expect("writing the object as v2");
    let stored = hub.get("sample").await.expect("reading it as the hub");
    assert_eq!(stored.spec.foo.as_deref(), Some("v2"));
}
