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

//! The admission webhooks of ConfigMap (core/v1). The API server calls them
//! through the webhook server of src/webhook.rs. `opbuilder create webhook` adds a webhook type
//! later above the marker lines; keep them.

use crate::webhook::{self, Cluster, Route, Webhook};
use k8s_openapi::api::core::v1::ConfigMap;

/// The path of the defaulting webhook.
pub const DEFAULTING_PATH: &str = "/mutate--v1-configmap";
// +kubebuilder:scaffold:webhook-paths

/// The webhooks' configurations, written to config/webhook/manifests.yaml by `make manifests`.
pub const WEBHOOKS: &[Webhook] = &[
    Webhook {
        name: "mconfigmap-v1.kb.io",
        path: DEFAULTING_PATH,
        mutating: true,
        group: "",
        version: "v1",
        resource: "configmaps",
        operations: &["CREATE", "UPDATE"],
        failure_policy: "Fail",
        side_effects: "None",
        // A short wait, and neither kube-system nor the manager's namespace: a webhook on
        // a core type must not stop the writes the cluster depends on.
        timeout_seconds: Some(5),
        namespace_selector: webhook::OUTSIDE_SYSTEM_NAMESPACES,
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
        // +kubebuilder:scaffold:webhook-routes
    ]
}

/// Fill in what a new or changed ConfigMap leaves out; the API server stores the result.
/// `cluster` reads other objects: `cluster.client` from the API server (with a rule in the RBAC
/// of the code), `cluster.cached()` from a controller's cache where this replica has one.
pub async fn default(obj: &mut ConfigMap, cluster: &Cluster) {
    let _ = cluster;
    // TODO(user): set the defaults. For example, a label on every object:
    obj.metadata
        .labels
        .get_or_insert_default()
        .entry("guestbook/defaulted".into())
        .or_insert_with(|| "true".into());
}
// +kubebuilder:scaffold:webhook-handlers

#[cfg(test)]
mod tests {
    use super::*;

    fn object() -> ConfigMap {
        ConfigMap::default()
    }

    #[tokio::test]
    async fn defaulting_fills_in_the_example_field() {
        let mut obj = object();
        default(&mut obj, &Cluster::offline()).await;
        assert_ne!(obj.metadata.labels, object().metadata.labels);
    }
    // +kubebuilder:scaffold:webhook-tests

    #[test]
    fn every_route_has_its_configuration() {
        let paths: Vec<&str> = routes().iter().map(|r| r.path).collect();
        assert_eq!(paths, WEBHOOKS.iter().map(|w| w.path).collect::<Vec<_>>());
    }
}
