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
use crate::webhook::{self, Route, Webhook};
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
            handler: |body| webhook::defaulting(body, default),
        },
        Route {
            path: VALIDATION_PATH,
            handler: |body| webhook::validating(body, validate),
        },
        // +kubebuilder:scaffold:webhook-routes
    ]
}

/// Fill in what a new or changed Guestbook leaves out; the API server stores the result.
pub fn default(obj: &mut Guestbook) {
    // TODO(user): set the defaults. For example:
    if obj.spec.foo.is_none() {
        obj.spec.foo = Some("default".into());
    }
}

/// Accept (with warnings to show the user) or refuse a new or changed Guestbook: `new` is the
/// object as it would be stored, `old` the stored one on an update.
pub fn validate(new: Option<&Guestbook>, old: Option<&Guestbook>) -> Validation {
    let _ = old;
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

    #[test]
    fn defaulting_fills_in_the_example_field() {
        let mut obj = object();
        default(&mut obj);
        assert_ne!(obj.spec, object().spec);
    }

    #[test]
    fn validation_accepts_the_defaults() {
        assert_eq!(validate(Some(&object()), None), Ok(vec![]));
    }

    #[test]
    fn validation_refuses_an_empty_foo() {
        let mut obj = object();
        obj.spec.foo = Some(String::new());
        let refused = FieldError::invalid("spec.foo", "", "must not be empty");
        assert_eq!(validate(Some(&obj), None), Err(refused.into()));
    }
    // +kubebuilder:scaffold:webhook-tests

    #[test]
    fn every_route_has_its_configuration() {
        let paths: Vec<&str> = routes().iter().map(|r| r.path).collect();
        assert_eq!(paths, WEBHOOKS.iter().map(|w| w.path).collect::<Vec<_>>());
    }
}
