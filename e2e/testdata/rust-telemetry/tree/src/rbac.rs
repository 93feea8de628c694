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

//! RBAC declared in the code: each controller lists the rules it needs next to its reconcile
//! (`RBAC` in src/controllers/<kind>.rs), and `make manifests` writes their union as
//! `manager-role` in config/rbac/role.yaml (a ClusterRole, or a Role when [`NAMESPACED`]); leader election lists its own
//! (src/leader_election.rs), written as the Role of config/rbac/leader_election_role.yaml.
//! Never edit those files by hand. The integration tests run the controllers with exactly
//! these rules (tests/support), so a rule the code needs and lacks fails them.

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};
use kube::api::ObjectMeta;
use std::collections::BTreeMap;

/// Whether the manager watches only its own namespace (`opbuilder init --namespaced`; `opbuilder
/// edit --namespaced` switches it, with config/manager's WATCH_NAMESPACE and the RoleBinding):
/// then `make manifests` writes the manager's rules as the Role `manager-role` of that
/// namespace instead of a ClusterRole.
pub const NAMESPACED: bool = false;

/// One rule: these verbs on these resources of these API groups (`""` is the core group).
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub groups: &'static [&'static str],
    pub resources: &'static [&'static str],
    pub verbs: &'static [&'static str],
}

/// What the manager itself needs besides its controllers: to publish events (kube's Recorder
/// creates an event, and patches it when the same one happens again).
pub const MANAGER: &[Rule] = &[Rule {
    groups: &["events.k8s.io"],
    resources: &["events"],
    verbs: &["create", "patch"],
}];

/// `rules` as policy rules: rules on the same group and resource are merged, and rules with
/// the same verbs are grouped, so the output is stable and short.
fn policy_rules(rules: &[&[Rule]]) -> Vec<PolicyRule> {
    // (group, resource) -> verbs
    let mut by_resource: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for rule in rules.iter().flat_map(|r| r.iter()) {
        for group in rule.groups {
            for resource in rule.resources {
                let verbs = by_resource.entry((group, resource)).or_default();
                verbs.extend(rule.verbs);
                verbs.sort_unstable();
                verbs.dedup();
            }
        }
    }
    // (group, verbs) -> resources
    let mut grouped: BTreeMap<(&str, Vec<&str>), Vec<&str>> = BTreeMap::new();
    for ((group, resource), verbs) in by_resource {
        grouped.entry((group, verbs)).or_default().push(resource);
    }
    let to_strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    grouped
        .into_iter()
        .map(|((group, verbs), resources)| PolicyRule {
            api_groups: Some(vec![group.to_string()]),
            resources: Some(to_strings(&resources)),
            verbs: to_strings(&verbs),
            ..PolicyRule::default()
        })
        .collect()
}

/// The ClusterRole `manager-role` granting every rule.
pub fn cluster_role(rules: &[&[Rule]]) -> ClusterRole {
    ClusterRole {
        metadata: ObjectMeta {
            name: Some("manager-role".into()),
            ..ObjectMeta::default()
        },
        rules: Some(policy_rules(rules)),
        ..ClusterRole::default()
    }
}

/// The Role `manager-role` granting every rule in the manager's namespace (`system`, which
/// config/default's namespace replaces), for a namespace-scoped manager.
pub fn role(rules: &[&[Rule]]) -> Role {
    Role {
        metadata: ObjectMeta {
            name: Some("manager-role".into()),
            namespace: Some("system".into()),
            ..ObjectMeta::default()
        },
        rules: Some(policy_rules(rules)),
    }
}

/// The Role `leader-election-role` granting `rules` in the manager's namespace, labelled as
/// the other objects of config/rbac.
pub fn leader_election_role(rules: &[Rule]) -> Role {
    let labels = [
        ("app.kubernetes.io/name", "guestbook"),
        ("app.kubernetes.io/managed-by", "kustomize"),
    ];
    Role {
        metadata: ObjectMeta {
            name: Some("leader-election-role".into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        rules: Some(policy_rules(&[rules])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_on_one_resource_merge_and_equal_verbs_group() {
        let a: &[Rule] = &[Rule {
            groups: &["apps"],
            resources: &["deployments"],
            verbs: &["get", "list"],
        }];
        let b: &[Rule] = &[Rule {
            groups: &["apps"],
            resources: &["deployments", "replicasets"],
            verbs: &["watch", "get"],
        }];
        let role = cluster_role(&[a, b]);
        let rules = role.rules.unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].resources, Some(vec!["deployments".to_string()]));
        assert_eq!(rules[0].verbs, ["get", "list", "watch"]);
        assert_eq!(rules[1].resources, Some(vec!["replicasets".to_string()]));
        assert_eq!(rules[1].verbs, ["get", "watch"]);
    }
}
