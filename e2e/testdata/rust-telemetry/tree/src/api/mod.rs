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

//! The project's API types: one module per group (`src/api/<group>/<version>/<kind>.rs`).
//! `opbuilder create api` adds the modules and the CRD entries above the marker lines; keep them.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

pub mod webapp;
// +kubebuilder:scaffold:api-groups

/// Every CustomResourceDefinition of the project, one per kind, its versions merged (the
/// storage version is the one marked `true`). `make manifests` writes them to config/crd/bases.
pub fn crds() -> Vec<CustomResourceDefinition> {
    let versions: Vec<(CustomResourceDefinition, bool)> = vec![
        crd::<webapp::v1::Guestbook>(true),
        // +kubebuilder:scaffold:crds
    ];
    merge_versions(versions)
}

/// The CRD of one version of a kind, and whether that version is the storage version.
#[allow(dead_code)] // until the first `create api`
fn crd<K: CustomResourceExt>(storage: bool) -> (CustomResourceDefinition, bool) {
    (K::crd(), storage)
}

/// Merge the versions of each kind into one CustomResourceDefinition, in the order the kinds
/// were added.
fn merge_versions(
    versions: Vec<(CustomResourceDefinition, bool)>,
) -> Vec<CustomResourceDefinition> {
    let mut kinds: Vec<(String, Vec<CustomResourceDefinition>, String)> = Vec::new();
    for (crd, storage) in versions {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let version = crd
            .spec
            .versions
            .first()
            .map(|v| v.name.clone())
            .unwrap_or_default();
        let at = match kinds.iter().position(|(n, _, _)| *n == name) {
            Some(at) => at,
            None => {
                kinds.push((name, Vec::new(), String::new()));
                kinds.len() - 1
            }
        };
        if storage {
            kinds[at].2 = version;
        }
        kinds[at].1.push(crd);
    }
    kinds
        .into_iter()
        .map(|(name, crds, storage)| {
            kube::core::crd::merge_crds(crds, &storage)
                .unwrap_or_else(|e| panic!("the versions of {name} do not merge into one CRD: {e}"))
        })
        .collect()
}
