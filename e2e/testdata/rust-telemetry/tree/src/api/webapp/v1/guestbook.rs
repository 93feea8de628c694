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

//! Guestbook (webapp.example.com/v1): its desired state (Spec) and observed state (Status).
//! The CRD is derived from these types: after changing them, run `make manifests`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of the Guestbook objects.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "webapp.example.com",
    version = "v1",
    kind = "Guestbook",
    plural = "guestbooks",
    namespaced,
    status = "GuestbookStatus",
    // A CEL rule the API server checks on each create and update (the CRD's
    // x-kubernetes-validations): no webhook to run. This one keeps spec.foo once it is set; to
    // enable it, remove the `//` and run `make manifests`. tests/cel_rule_test.rs tests the same
    // rule without an API server and on the tests' control plane.
    // validation = Rule::new("!has(oldSelf.spec.foo) || (has(self.spec.foo) && self.spec.foo == oldSelf.spec.foo)").message("spec.foo cannot change once set"),
    printcolumn = r#"{"name": "Available", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Available\")].status"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct GuestbookSpec {
    // TODO(user): the fields a user sets to say what they want. Each field becomes part of the
    // CRD's schema; doc comments become its descriptions.
    /// An example field; replace it with your own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// The observed state of the Guestbook objects, written by their controller.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GuestbookStatus {
    // TODO(user): what the controller observes and reports.
    /// The conditions of the object (Available, ...), as Kubernetes conventions describe them.
    /// A list keyed by `type` for server-side apply: each writer owns the conditions it applies,
    /// so the controller's apply leaves the others' alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}
