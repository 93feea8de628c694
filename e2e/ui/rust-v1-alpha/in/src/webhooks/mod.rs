//! The webhooks: one module per kind and version. `opbuilder create webhook` adds each
//! module, its routes and its configuration above the marker lines; keep them.

use crate::webhook::{self, Conversion, Route, Webhook};

// +kubebuilder:scaffold:webhook-modules

/// Every webhook the server answers, the conversion webhook among them when a kind has
/// several versions that convert.
pub fn routes() -> Vec<Route> {
    let routes: Vec<Vec<Route>> = vec![
        // +kubebuilder:scaffold:webhook-routes
    ];
    let mut routes: Vec<Route> = routes.into_iter().flatten().collect();
    if !conversions().is_empty() {
        routes.push(Route {
            path: webhook::CONVERSION_PATH,
            handler: |body| webhook::converting(body, &conversions()),
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
        // +kubebuilder:scaffold:webhook-configurations
    ];
    webhooks.into_iter().flatten().copied().collect()
}
