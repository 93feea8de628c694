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

//! The webhooks of Guestbook on a real API server: it calls them when an object is created.
//! `opbuilder create webhook` adds the checks of a webhook type later above the marker line.

mod support;

use kube::api::{Api, DeleteParams, PostParams};
use std::time::Duration;

use guestbook::api::webapp::v1::{Guestbook, GuestbookSpec};
use guestbook::webhooks::webapp_v1_guestbook as hooks;

fn object(name: &str) -> Guestbook {
    Guestbook::new(name, GuestbookSpec::default())
}

#[tokio::test]
async fn the_api_server_calls_the_webhooks() {
    let plane = support::ControlPlane::start().await;
    plane.serve_webhooks(hooks::routes(), hooks::WEBHOOKS).await;
    let api: Api<Guestbook> = Api::namespaced(plane.client.clone(), "default");

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
        if created.spec == expected.spec {
            defaulted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(defaulted, "the defaulting webhook was never called");

    // An object the validation refuses is refused by the API server as Invalid (422), with
    // the field and the handler's message. The API server takes a moment to start calling new
    // webhooks: try until it refuses.
    let mut refused = None;
    for _ in 0..100 {
        let mut bad = object("bad");
        bad.spec.foo = Some(String::new());
        match api.create(&PostParams::default(), &bad).await {
            Err(kube::Error::Api(status)) => {
                refused = Some(status);
                break;
            }
            Err(e) => panic!("creating the invalid object: {e}"),
            Ok(_) => {
                let _ = api.delete("bad", &DeleteParams::default()).await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    let status = refused.expect("the API server never refused the invalid object");
    assert_eq!(
        (status.code, status.reason.as_str()),
        (422, "Invalid"),
        "{status:?}"
    );
    assert!(status.message.contains("must not be empty"), "{status:?}");
    let causes = status.details.map(|d| d.causes).unwrap_or_default();
    assert_eq!(
        causes.first().map(|c| c.field.as_str()),
        Some("spec.foo"),
        "{causes:?}"
    );
    // +kubebuilder:scaffold:webhook-checks
}
