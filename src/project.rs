//! The PROJECT file: Kubebuilder's project config, version "3".
//!
//! Read with serde_yaml (accepting `layout` as a scalar or a list and keeping keys we do not
//! model, such as `plugins`), written by our own emitter so the output has Kubebuilder's shape:
//! keys sorted alphabetically at every level, empty and false values omitted, sequences not
//! indented under their key, and `version: "3"` quoted.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Deserializer, Serialize};
use serde_yaml::{Mapping, Value};
use std::path::{Path, PathBuf};

pub const FILE: &str = "PROJECT";
pub const LAYOUT: &str = "go.kubebuilder.io/v4";
const HEADER: &str =
    "# Written by opbuilder (https://kubebuilder.io compatible, project version 3).\n\
# It records how this project was scaffolded so later `create` commands, and Kubebuilder itself,\n\
# can extend it. Edit it only if you know what you are doing.\n";

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
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub external: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub module: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub plural: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<Webhooks>,
    #[serde(flatten)]
    pub other: Mapping,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Api {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub crd_version: String,
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

impl Resource {
    /// Same group, version and kind (group compared case-insensitively, as Kubebuilder does).
    pub fn is_gvk(&self, group: &str, version: &str, kind: &str) -> bool {
        self.group.eq_ignore_ascii_case(group) && self.version == version && self.kind == kind
    }
}

/// The root of the project the current directory is in: the nearest directory, from `cwd`
/// upward, that holds a PROJECT file (as git and cargo find theirs). Returned relative to
/// `cwd` (`.`, `..`, `../..`, ...) so that messages stay short.
pub fn find_root(cwd: &Path) -> Result<PathBuf> {
    for (up, dir) in cwd.ancestors().enumerate() {
        if dir.join(FILE).is_file() {
            if up == 0 {
                return Ok(PathBuf::from("."));
            }
            return Ok(std::iter::repeat_n("..", up).collect());
        }
    }
    bail!(
        "no {FILE} file in {} or any directory above it, so this is not an opbuilder (or Kubebuilder) project.\n  \
         Run the command inside a project (any subdirectory works), or create one in an empty directory with:\n    \
         opbuilder init --domain example.com --repo example.com/guestbook",
        cwd.display()
    )
}

impl Project {
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

    /// Load and check PROJECT from `root`. A missing file means "not a project".
    pub fn load(root: &Path) -> Result<Project> {
        let path = root.join(FILE);
        let text = match crate::fsx::read_text(&path, 4 << 20) {
            Ok(Some(t)) => t,
            Ok(None) => bail!(
                "no PROJECT file in {}: run this command in a project made by `opbuilder init` (or `kubebuilder init`)",
                root.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        Self::parse(&text)
    }

    pub fn parse(text: &str) -> Result<Project> {
        let p: Project = serde_yaml::from_str(text).map_err(|e| {
            anyhow::anyhow!("PROJECT is not valid: {e}\n  fix the YAML by hand, or restore it from version control")
        })?;
        match p.version.as_str() {
            "3" | "3-alpha" => {}
            "" => bail!("PROJECT has no `version`; opbuilder understands project version \"3\""),
            v => bail!("PROJECT version {v:?} is not supported; opbuilder understands project version \"3\""),
        }
        if !p.layout.is_empty()
            && !p
                .layout
                .iter()
                .any(|l| l == LAYOUT || l == "go.kubebuilder.io/v3")
        {
            bail!(
                "PROJECT layout {:?} is not supported; opbuilder scaffolds the {LAYOUT} layout",
                p.layout
            );
        }
        Ok(p)
    }

    /// Serialise with the header, sorted keys, and Kubebuilder's formatting.
    pub fn to_yaml(&self) -> String {
        let mut p = self.clone();
        if p.version == "3-alpha" {
            p.version = "3".into();
        }
        let value = serde_yaml::to_value(&p).expect("PROJECT serialises");
        let mut out = String::from(HEADER);
        emit(&value, 0, &mut out);
        out
    }

    /// Whether any resource already uses `group` (case-insensitive).
    pub fn has_group(&self, group: &str) -> bool {
        self.resources
            .iter()
            .any(|r| r.group.eq_ignore_ascii_case(group))
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

/// Emit a YAML value with sorted mapping keys; sequences sit at their key's indentation.
fn emit(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Mapping(m) => {
            for (k, val) in sorted(m) {
                out.push_str(&pad);
                out.push_str(&scalar(k));
                out.push(':');
                emit_child(val, indent, out);
            }
        }
        Value::Sequence(items) => {
            for item in items {
                out.push_str(&pad);
                out.push('-');
                match item {
                    Value::Mapping(m) if !m.is_empty() => {
                        // First key on the dash line, the rest aligned under it.
                        let mut first = true;
                        for (k, val) in sorted(m) {
                            if first {
                                out.push(' ');
                                first = false;
                            } else {
                                out.push_str(&" ".repeat(indent + 2));
                            }
                            out.push_str(&scalar(k));
                            out.push(':');
                            emit_child(val, indent + 2, out);
                        }
                    }
                    other => {
                        out.push(' ');
                        out.push_str(&inline(other));
                        out.push('\n');
                    }
                }
            }
        }
        other => {
            out.push_str(&pad);
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
}

fn emit_child(val: &Value, indent: usize, out: &mut String) {
    match val {
        Value::Mapping(m) if !m.is_empty() => {
            out.push('\n');
            emit(val, indent + 2, out);
        }
        Value::Sequence(s) if !s.is_empty() => {
            out.push('\n');
            emit(val, indent, out);
        }
        other => {
            out.push(' ');
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
}

fn sorted(m: &Mapping) -> Vec<(&Value, &Value)> {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_by_key(|(k, _)| scalar(k));
    v
}

fn inline(v: &Value) -> String {
    match v {
        Value::Mapping(m) if m.is_empty() => "{}".into(),
        Value::Sequence(s) if s.is_empty() => "[]".into(),
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => scalar(v),
        Value::Tagged(t) => inline(&t.value),
        Value::Mapping(_) | Value::Sequence(_) => serde_yaml::to_string(v)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

/// A string as a YAML scalar: plain where that reads back as the same string, else double-quoted.
fn scalar(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.as_str(),
        other => return inline(other),
    };
    let reserved = matches!(
        s.to_ascii_lowercase().as_str(),
        "" | "~" | "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    );
    let numeric = s.parse::<f64>().is_ok()
        || s.starts_with("0x")
        || s.starts_with("0o")
        || (s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars()
                .all(|c| c.is_ascii_digit() || c == '_' || c == ':'));
    let plain = !reserved
        && !numeric
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./()@+~".contains(c))
        && !s.starts_with(['-', '.', '@', '~']);
    if plain {
        s.to_string()
    } else {
        let mut q = String::from('"');
        for c in s.chars() {
            match c {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                '\n' => q.push_str("\\n"),
                '\t' => q.push_str("\\t"),
                c if (c as u32) < 0x20 => q.push_str(&format!("\\x{:02x}", c as u32)),
                c => q.push(c),
            }
        }
        q.push('"');
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_project_file_that_is_a_fifo_is_refused_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(t.path().join(FILE))
            .status()
            .unwrap()
            .success());
        let e = Project::load(t.path()).unwrap_err();
        assert!(format!("{e:#}").contains("not a regular file"), "{e:#}");
    }

    fn sample() -> Project {
        Project {
            cli_version: "0.1.0".into(),
            domain: "example.com".into(),
            layout: vec![LAYOUT.into()],
            project_name: "guestbook".into(),
            repo: "example.com/guestbook".into(),
            version: "3".into(),
            resources: vec![Resource {
                api: Some(Api {
                    crd_version: "v1".into(),
                    namespaced: true,
                    ssa: false,
                }),
                controller: true,
                domain: "example.com".into(),
                group: "ingress".into(),
                kind: "App".into(),
                path: "example.com/guestbook/api/v1beta1".into(),
                version: "v1beta1".into(),
                webhooks: Some(Webhooks {
                    defaulting: true,
                    validation: true,
                    webhook_version: "v1".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn writes_kubebuilder_shape() {
        let y = sample().to_yaml();
        let body: String = y
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let want = [
            "cliVersion: 0.1.0",
            "domain: example.com",
            "layout:",
            "- go.kubebuilder.io/v4",
            "projectName: guestbook",
            "repo: example.com/guestbook",
            "resources:",
            "- api:",
            "    crdVersion: v1",
            "    namespaced: true",
            "  controller: true",
            "  domain: example.com",
            "  group: ingress",
            "  kind: App",
            "  path: example.com/guestbook/api/v1beta1",
            "  version: v1beta1",
            "  webhooks:",
            "    defaulting: true",
            "    validation: true",
            "    webhookVersion: v1",
            "version: \"3\"",
        ];
        assert_eq!(body, want.map(|l| format!("{l}\n")).concat());
    }

    #[test]
    fn round_trips_and_keeps_unknown_keys() {
        let mut y = sample().to_yaml();
        y.push_str("plugins:\n  grafana.kubebuilder.io/v1-alpha: {}\n");
        let p = Project::parse(&y).unwrap();
        assert_eq!(p.resources, sample().resources);
        let again = p.to_yaml();
        assert!(
            again.contains("plugins:\n  grafana.kubebuilder.io/v1-alpha: {}\n"),
            "{again}"
        );
        assert_eq!(Project::parse(&again).unwrap(), p);
    }

    #[test]
    fn reads_scalar_layout_and_rejects_bad_versions() {
        let p = Project::parse("layout: go.kubebuilder.io/v4\nversion: \"3\"\n").unwrap();
        assert_eq!(p.layout, vec![LAYOUT.to_string()]);
        let e = Project::parse("version: \"2\"\n").unwrap_err().to_string();
        assert!(e.contains("not supported"), "{e}");
        let e = Project::parse("version: [\n").unwrap_err().to_string();
        assert!(e.contains("not valid"), "{e}");
    }

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(scalar(&Value::String("3".into())), "\"3\"");
        assert_eq!(scalar(&Value::String("0.1.0".into())), "0.1.0");
        assert_eq!(scalar(&Value::String("1.5".into())), "\"1.5\"");
        assert_eq!(scalar(&Value::String("(devel)".into())), "(devel)");
        assert_eq!(scalar(&Value::String("true".into())), "\"true\"");
        assert_eq!(scalar(&Value::String("a: b".into())), "\"a: b\"");
    }
}
