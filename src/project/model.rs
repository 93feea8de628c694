//! What PROJECT holds: the project's settings and its resources, the queries commands ask of
//! them, and each plugin's section under `plugins:`.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Deserializer, Serialize};
use serde_yaml::{Mapping, Value};

use super::shared::{self, Shared};

pub const FILE: &str = "PROJECT";
pub const LAYOUT: &str = "go.kubebuilder.io/v4";
/// opbuilder's layout for operators written in Rust on kube-rs.
pub const RUST_LAYOUT: &str = "rust.opbuilder.io/v1-beta";
/// The Rust layout's key in projects made by opbuilder 0.4.0 (its first release); `alpha
/// update` carries them to [`RUST_LAYOUT`].
pub const RUST_LAYOUT_V1_ALPHA: &str = "rust.opbuilder.io/v1-alpha";
/// The release whose templates are the Rust layout's v1-alpha.
pub const RUST_LAYOUT_V1_ALPHA_RELEASE: &str = "0.4.0";

/// Whether `key` is the Rust layout, of any version.
pub fn is_rust_layout(key: &str) -> bool {
    key == RUST_LAYOUT || key == RUST_LAYOUT_V1_ALPHA
}
/// go/v4 without kustomize: the layout `--plugins=kustomize/v2,base.go.kubebuilder.io/v4` records.
pub const BASE_GO: &str = "base.go.kubebuilder.io/v4";

const PLUGINS: &str = "plugins";

fn is_false(b: &bool) -> bool {
    !*b
}

fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => vec![],
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    })
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cli_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    #[serde(
        default,
        deserialize_with = "one_or_many",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub layout: Vec<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub multigroup: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub namespaced: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub project_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repo: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
    #[serde(default)]
    pub version: String,
    /// Keys opbuilder does not model (`plugins`, future keys): kept as they are.
    #[serde(flatten)]
    pub other: Mapping,
    /// The comment lines PROJECT starts with, as read (Kubebuilder's header, opbuilder's, a
    /// user's, or none: `Some("")`): written back as they are. `None` for a new project, which
    /// gets opbuilder's header.
    #[serde(skip)]
    pub header: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub controller: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controllers: Vec<Controller>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub core: bool,
    #[serde(default, skip_serializing_if = "shared::is_empty")]
    pub domain: Shared,
    #[serde(default, skip_serializing_if = "is_false")]
    pub external: bool,
    #[serde(default, skip_serializing_if = "shared::is_empty")]
    pub group: Shared,
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub module: String,
    #[serde(default, skip_serializing_if = "shared::is_empty")]
    pub path: Shared,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub plural: String,
    pub version: Shared,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<Webhooks>,
    #[serde(flatten)]
    pub other: Mapping,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Api {
    #[serde(default, skip_serializing_if = "shared::is_empty")]
    pub crd_version: Shared,
    #[serde(default, skip_serializing_if = "is_false")]
    pub namespaced: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub ssa: bool,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct Controller {
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Webhooks {
    #[serde(default, skip_serializing_if = "is_false")]
    pub conversion: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub defaulting: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub defaulting_path: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spoke: Vec<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub validation: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub validation_path: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub webhook_version: String,
}

impl Webhooks {
    /// Whether any webhook type is recorded.
    pub fn any(&self) -> bool {
        self.defaulting || self.validation || self.conversion
    }

    /// The types of both, with their paths and spokes (those of `self` first).
    pub fn union(&self, other: &Webhooks) -> Webhooks {
        let pick = |a: &String, b: &String| if a.is_empty() { b.clone() } else { a.clone() };
        let mut spoke = self.spoke.clone();
        for s in &other.spoke {
            if !spoke.contains(s) {
                spoke.push(s.clone());
            }
        }
        Webhooks {
            defaulting: self.defaulting || other.defaulting,
            validation: self.validation || other.validation,
            conversion: self.conversion || other.conversion,
            defaulting_path: pick(&self.defaulting_path, &other.defaulting_path),
            validation_path: pick(&self.validation_path, &other.validation_path),
            spoke,
            webhook_version: pick(&self.webhook_version, &other.webhook_version),
        }
    }

    /// The types of `self` that `other` does not have (with their paths and spokes).
    pub fn without(&self, other: &Webhooks) -> Webhooks {
        let defaulting = self.defaulting && !other.defaulting;
        let validation = self.validation && !other.validation;
        let conversion = self.conversion && !other.conversion;
        Webhooks {
            defaulting,
            validation,
            conversion,
            defaulting_path: if defaulting {
                self.defaulting_path.clone()
            } else {
                String::new()
            },
            validation_path: if validation {
                self.validation_path.clone()
            } else {
                String::new()
            },
            spoke: if conversion {
                self.spoke.clone()
            } else {
                vec![]
            },
            webhook_version: self.webhook_version.clone(),
        }
    }

    /// The types recorded, as words: "defaulting", "validating", "conversion".
    pub fn names(&self) -> Vec<&'static str> {
        [
            (self.defaulting, "defaulting"),
            (self.validation, "validating"),
            (self.conversion, "conversion"),
        ]
        .into_iter()
        .filter_map(|(on, n)| on.then_some(n))
        .collect()
    }
}

impl Resource {
    /// Same group, version and kind (group compared case-insensitively, as Kubebuilder does).
    pub fn is_gvk(&self, group: &str, version: &str, kind: &str) -> bool {
        self.kind == kind && self.version == version && self.group.eq_ignore_ascii_case(group)
    }
}

impl Project {
    /// The Rust layout's key when the project is of that layout (v1-beta, or v1-alpha of 0.4.0).
    pub fn rust_layout(&self) -> Option<&str> {
        self.layout
            .iter()
            .map(String::as_str)
            .find(|k| is_rust_layout(k))
    }

    /// The version of `group`/`kind`, other than `version`, whose entry owns the kind's
    /// unnamed controller (the one in `<kind>_controller.go`), if any.
    pub fn kind_controller(&self, group: &str, kind: &str, version: &str) -> Option<&str> {
        let file_owner = kind.to_ascii_lowercase();
        self.resources
            .iter()
            .find(|r| {
                r.group.eq_ignore_ascii_case(group)
                    && r.kind == kind
                    && r.version != version
                    && (r.controller || r.controllers.iter().any(|c| c.name == file_owner))
            })
            .map(|r| r.version.as_str())
    }

    /// Whether any resource already uses `group` (case-insensitive).
    pub fn has_group(&self, group: &str) -> bool {
        self.resources
            .iter()
            .any(|r| r.group.eq_ignore_ascii_case(group))
    }

    /// Drop a `plugins` key that holds nothing (`plugins: []`, `plugins: {}`, `plugins:`), which
    /// Kubebuilder writes as no key at all (and cannot read as `[]`).
    pub(super) fn drop_empty_plugins(&mut self) {
        let empty = match self.other.get(PLUGINS) {
            Some(Value::Null) => true,
            Some(Value::Sequence(s)) => s.is_empty(),
            Some(Value::Mapping(m)) => m.is_empty(),
            _ => false,
        };
        if empty {
            self.other.remove(PLUGINS);
        }
    }

    /// The keys of PROJECT's `plugins:` section, in file order.
    pub fn plugin_keys(&self) -> Vec<String> {
        match self.other.get(PLUGINS) {
            Some(Value::Mapping(m)) => m
                .keys()
                .filter_map(|k| k.as_str().map(String::from))
                .collect(),
            _ => vec![],
        }
    }

    /// A plugin's section under `plugins:`, decoded; `None` when the plugin has none.
    pub fn plugin_config<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let Some(Value::Mapping(m)) = self.other.get(PLUGINS) else {
            return Ok(None);
        };
        match m.get(key) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(serde_yaml::from_value(
                Value::Mapping(Mapping::new()),
            )?)),
            Some(v) => serde_yaml::from_value(v.clone())
                .map(Some)
                .with_context(|| format!("PROJECT's plugins section for {key} is not valid")),
        }
    }

    /// Write a plugin's section under `plugins:` (an empty section is written `{}`, as Kubebuilder does).
    pub fn set_plugin_config<T: Serialize>(&mut self, key: &str, config: &T) -> Result<()> {
        let value = serde_yaml::to_value(config)?;
        let entry = self
            .other
            .entry(Value::String(PLUGINS.into()))
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if !entry.is_mapping() {
            bail!("PROJECT's `plugins` is not a mapping; fix it by hand");
        }
        if let Value::Mapping(m) = entry {
            m.insert(Value::String(key.into()), value);
        }
        Ok(())
    }

    /// Drop a plugin's section under `plugins:` (the section itself goes when it is left empty).
    pub fn remove_plugin_config(&mut self, key: &str) {
        if let Some(Value::Mapping(m)) = self.other.get_mut(PLUGINS) {
            m.remove(key);
            if m.is_empty() {
                self.other.remove(PLUGINS);
            }
        }
    }

    pub fn find(&self, group: &str, version: &str, kind: &str) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.is_gvk(group, version, kind))
    }

    pub fn find_mut(&mut self, group: &str, version: &str, kind: &str) -> Option<&mut Resource> {
        self.resources
            .iter_mut()
            .find(|r| r.is_gvk(group, version, kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::tests::sample;

    #[test]
    fn plugin_sections_read_and_write_like_kubebuilders() {
        #[derive(Deserialize, Serialize, PartialEq, Debug, Default)]
        struct Cfg {
            #[serde(default, rename = "useGHModels", skip_serializing_if = "is_false")]
            use_gh_models: bool,
        }
        let mut p = sample();
        assert_eq!(
            p.plugin_config::<Cfg>("a.kubebuilder.io/v1-alpha").unwrap(),
            None
        );
        p.set_plugin_config("b.kubebuilder.io/v1-alpha", &Cfg::default())
            .unwrap();
        p.set_plugin_config(
            "a.kubebuilder.io/v1-alpha",
            &Cfg {
                use_gh_models: true,
            },
        )
        .unwrap();
        let y = p.to_yaml();
        assert!(
            y.contains("plugins:\n  a.kubebuilder.io/v1-alpha:\n    useGHModels: true\n  b.kubebuilder.io/v1-alpha: {}\nprojectName"),
            "{y}"
        );
        let back = Project::parse(&y).unwrap();
        assert_eq!(
            back.plugin_keys(),
            ["a.kubebuilder.io/v1-alpha", "b.kubebuilder.io/v1-alpha"]
        );
        assert_eq!(
            back.plugin_config::<Cfg>("a.kubebuilder.io/v1-alpha")
                .unwrap(),
            Some(Cfg {
                use_gh_models: true
            })
        );
    }
}
