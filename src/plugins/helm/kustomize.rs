//! Reading the kustomize output the chart is made from: its objects, the manager's Deployment,
//! and the name prefix and namespace kustomize gave them.

use super::chart::{get, s};
use anyhow::{bail, Result};
use serde::Deserialize;
use serde_yaml::Value;

/// The objects of the kustomize output, with what the chart needs to know about them first.
pub struct Manifests {
    /// Every object (YAML documents that are mappings), in order.
    pub docs: Vec<Value>,
    /// The manager's Deployment.
    pub deployment: Value,
    /// kustomize's namePrefix (the part before `-controller-manager`).
    pub prefix: String,
    /// The namespace the manager runs in.
    pub ns: String,
}

/// An object's kind.
pub fn kind(v: &Value) -> String {
    s(get(v, &["kind"]).unwrap_or(&Value::Null)).to_string()
}

/// An object's metadata.name.
pub fn name(v: &Value) -> String {
    s(get(v, &["metadata", "name"]).unwrap_or(&Value::Null)).to_string()
}

/// Parse `manifests` (a multi-document YAML stream) for the project `project`.
pub fn read(project: &str, manifests: &str) -> Result<Manifests> {
    let mut docs = vec![];
    for d in serde_yaml::Deserializer::from_str(manifests) {
        let v = Value::deserialize(d)?;
        if v.is_mapping() {
            docs.push(v);
        }
    }
    let deployment = docs
        .iter()
        .find(|d| kind(d) == "Deployment" && name(d).ends_with("controller-manager"))
        .or_else(|| docs.iter().find(|d| kind(d) == "Deployment"))
        .cloned();
    let Some(deployment) = deployment else {
        bail!("the manifests hold no Deployment of the manager; give the output of `kustomize build config/default`");
    };
    let prefix = name(&deployment)
        .strip_suffix("-controller-manager")
        .unwrap_or(project)
        .to_string();
    let ns = s(get(&deployment, &["metadata", "namespace"]).unwrap_or(&Value::Null)).to_string();
    let ns = if ns.is_empty() {
        format!("{project}-system")
    } else {
        ns
    };
    Ok(Manifests {
        docs,
        deployment,
        prefix,
        ns,
    })
}
