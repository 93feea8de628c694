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

//! The webhooks: one module per kind and version. `opbuilder create webhook` adds each
//! module, its routes and its configuration above the marker lines; keep them.

use crate::webhook::{self, Conversion, Route, Webhook};

pub mod webapp_v1_guestbook;
// +kubebuilder:scaffold:webhook-modules

/// Every webhook the server answers, the conversion webhook among them when a kind has
/// several versions that convert.
pub fn routes() -> Vec<Route> {
    let routes: Vec<Vec<Route>> = vec![
        webapp_v1_guestbook::routes(),
        // +kubebuilder:scaffold:webhook-routes
    ];
    let mut routes: Vec<Route> = routes.into_iter().flatten().collect();
    if !conversions().is_empty() {
        routes.push(Route {
            path: webhook::CONVERSION_PATH,
            handler: |body, _| Box::pin(async move { webhook::converting(&body, &conversions()) }),
        });
    }
    routes
}

/// How the kinds with a conversion webhook convert between their versions.
pub fn conversions() -> Vec<Conversion> {
    vec![
        // +kubebuilder:scaffold:conversions
    ]
}

/// Every webhook's configuration: `make manifests` writes them to config/webhook/manifests.yaml.
pub fn webhooks() -> Vec<Webhook> {
    let webhooks: Vec<&[Webhook]> = vec![
        webapp_v1_guestbook::WEBHOOKS,
        // +kubebuilder:scaffold:webhook-configurations
    ];
    webhooks.into_iter().flatten().copied().collect()
}
