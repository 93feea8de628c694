//! Reading the kustomize output the chart is made from: its objects, the manager's Deployment,
//! and the name prefix and namespace kustomize gave them.

use super::chart::{default_container, get, s};
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
    let deployments: Vec<&Value> = docs.iter().filter(|d| kind(d) == "Deployment").collect();
    let deployment = match manager_deployment(&deployments) {
        Some(d) => d.clone(),
        None if deployments.is_empty() => bail!(
            "the manifests hold no Deployment of the manager; give the output of `kustomize build config/default`"
        ),
        None => bail!(
            "the manifests hold {} Deployments and none of them is recognisably the manager: label the manager's \
             Deployment `control-plane: controller-manager` (as config/manager does) and build the manifests again",
            deployments.len()
        ),
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

/// The manager among the Deployments of the manifests: the only one, else the first that is
/// labelled `control-plane: controller-manager`, else the first whose pod names a default
/// container, else the first with a container called `manager`, else the first whose name holds
/// `controller-manager`. The other Deployments go into the chart as they are.
fn manager_deployment<'a>(deployments: &[&'a Value]) -> Option<&'a Value> {
    if let [only] = deployments {
        return Some(only);
    }
    let tests: [&dyn Fn(&Value) -> bool; 4] = [
        &|d| get(d, &["metadata", "labels", "control-plane"]).map(s) == Some("controller-manager"),
        &|d| default_container(d).is_some(),
        &|d| {
            get(d, &["spec", "template", "spec", "containers"])
                .and_then(Value::as_sequence)
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| get(c, &["name"]).map(s) == Some("manager"))
                })
        },
        &|d| name(d).contains("controller-manager"),
    ];
    tests
        .iter()
        .find_map(|test| deployments.iter().find(|d| test(d)).copied())
}
