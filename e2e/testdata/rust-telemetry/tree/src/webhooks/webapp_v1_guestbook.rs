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

//! The admission webhooks of Guestbook (webapp.example.com/v1). The API server calls them
//! through the webhook server of src/webhook.rs. `opbuilder create webhook` adds a webhook type
//! later above the marker lines; keep them.

use crate::api::webapp::v1::Guestbook;
use crate::webhook::{self, Cluster, Route, Webhook};
use crate::webhook::{FieldError, Validation};

/// The path of the defaulting webhook.
pub const DEFAULTING_PATH: &str = "/mutate-webapp-example-com-v1-guestbook";
/// The path of the validating webhook.
pub const VALIDATION_PATH: &str = "/validate-webapp-example-com-v1-guestbook";
// +kubebuilder:scaffold:webhook-paths

/// The webhooks' configurations, written to config/webhook/manifests.yaml by `make manifests`.
pub const WEBHOOKS: &[Webhook] = &[
    Webhook {
        name: "mguestbook-v1.kb.io",
        path: DEFAULTING_PATH,
        mutating: true,
        group: "webapp.example.com",
        version: "v1",
        resource: "guestbooks",
        operations: &["CREATE", "UPDATE"],
        failure_policy: "Fail",
        side_effects: "None",
        timeout_seconds: None,
        namespace_selector: &[],
        object_selector: &[],
    },
    Webhook {
        name: "vguestbook-v1.kb.io",
        path: VALIDATION_PATH,
        mutating: false,
        group: "webapp.example.com",
        version: "v1",
        resource: "guestbooks",
        operations: &["CREATE", "UPDATE"],
        failure_policy: "Fail",
        side_effects: "None",
        timeout_seconds: None,
        namespace_selector: &[],
        object_selector: &[],
    },
    // +kubebuilder:scaffold:webhook-configurations
];

/// The paths the webhook server answers, and their handlers.
pub fn routes() -> Vec<Route> {
    vec![
        Route {
            path: DEFAULTING_PATH,
            handler: |body, cluster| Box::pin(webhook::defaulting(body, cluster, default)),
        },
        Route {
            path: VALIDATION_PATH,
            handler: |body, cluster| Box::pin(webhook::validating(body, cluster, validate)),
        },
        // +kubebuilder:scaffold:webhook-routes
    ]
}

/// Fill in what a new or changed Guestbook leaves out; the API server stores the result.
/// `cluster` reads other objects: `cluster.client` from the API server (with a rule in the RBAC
/// of the code), `cluster.cached()` from a controller's cache where this replica has one.
pub async fn default(obj: &mut Guestbook, cluster: &Cluster) {
    let _ = cluster;
    // TODO(user): set the defaults. For example:
    if obj.spec.foo.is_none() {
        obj.spec.foo = Some("default".into());
    }
}

/// Accept (with warnings to show the user) or refuse a new or changed Guestbook: `new` is the
/// object as it would be stored, `old` the stored one on an update. `cluster` reads other
/// objects: `cluster.client` from the API server (with a rule in the RBAC of the code),
/// `cluster.cached()` from a controller's cache where this replica has one.
pub async fn validate(
    new: Option<&Guestbook>,
    old: Option<&Guestbook>,
    cluster: &Cluster,
) -> Validation {
    let _ = (old, cluster);
    // TODO(user): the rules. For example, an empty foo is refused:
    match new.and_then(|o| o.spec.foo.as_deref()) {
        Some("") => Err(FieldError::invalid("spec.foo", "", "must not be empty").into()),
        _ => Ok(vec![]),
    }
}
// +kubebuilder:scaffold:webhook-handlers

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::webapp::v1::GuestbookSpec;

    fn object() -> Guestbook {
        Guestbook::new("test", GuestbookSpec::default())
    }

    #[tokio::test]
    async fn defaulting_fills_in_the_example_field() {
        let mut obj = object();
        default(&mut obj, &Cluster::offline()).await;
        assert_ne!(obj.spec, object().spec);
    }

    #[tokio::test]
    async fn validation_accepts_the_defaults() {
        let accepted = validate(Some(&object()), None, &Cluster::offline()).await;
        assert_eq!(accepted, Ok(vec![]));
    }

    #[tokio::test]
    async fn validation_refuses_an_empty_foo() {
        let mut obj = object();
        obj.spec.foo = Some(String::new());
        let refused = FieldError::invalid("spec.foo", "", "must not be empty");
        let answer = validate(Some(&obj), None, &Cluster::offline()).await;
        assert_eq!(answer, Err(refused.into()));
    }
    // +kubebuilder:scaffold:webhook-tests

    #[test]
    fn every_route_has_its_configuration() {
        let paths: Vec<&str> = routes().iter().map(|r| r.path).collect();
        assert_eq!(paths, WEBHOOKS.iter().map(|w| w.path).collect::<Vec<_>>());
    }
}
