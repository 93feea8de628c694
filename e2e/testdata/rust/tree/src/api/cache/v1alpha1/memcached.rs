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

//! Memcached (cache.example.com/v1alpha1): its desired state (Spec), how its operand is deployed,
//! and its observed state (Status). The CRD is derived from these types: after changing them,
//! run `make manifests`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of the Memcached objects: how the operand is deployed.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cache.example.com",
    version = "v1alpha1",
    kind = "Memcached",
    plural = "memcacheds",
    namespaced,
    status = "MemcachedStatus",
    printcolumn = r#"{"name": "Available", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Available\")].status"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedSpec {
    // TODO(user): add the fields users set to tune the operand. Each field becomes part of the
    // CRD's schema; doc comments become its descriptions. Run `make manifests` afterwards.
    /// The number of replicas of the operand's Deployment (1 when not set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0), extend("default" = 1))]
    pub size: Option<i32>,
    /// The port the operand's container listens on.
    pub container_port: i32,
}

/// The observed state of the Memcached objects, written by their controller.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedStatus {
    /// The conditions of the object, one entry per type: `Available` while the operand's
    /// Deployment exists with the requested size, `Degraded` while the object is being
    /// finalized. A list keyed by `type` for server-side apply: each writer owns the conditions
    /// it applies, so the controller's apply leaves the others' alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}
