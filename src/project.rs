//! The PROJECT file: Kubebuilder's project config, version "3".
//!
//! Read with serde_yaml (accepting `layout` as a scalar or a list and keeping keys we do not
//! model, such as `plugins`), written by our own emitter so the output has Kubebuilder's shape:
//! keys sorted alphabetically at every level, empty and false values omitted, sequences not
//! indented under their key, and `version: "3"` quoted.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Deserializer, Serialize};
use serde_yaml::{Mapping, Value};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub const FILE: &str = "PROJECT";
pub const LAYOUT: &str = "go.kubebuilder.io/v4";
/// opbuilder's layout for operators written in Rust on kube-rs.
pub const RUST_LAYOUT: &str = "rust.opbuilder.io/v1-alpha";
/// go/v4 without kustomize: the layout `--plugins=kustomize/v2,base.go.kubebuilder.io/v4` records.
pub const BASE_GO: &str = "base.go.kubebuilder.io/v4";
const PLUGINS: &str = "plugins";
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
        self.kind == kind && self.version == version && self.group.eq_ignore_ascii_case(group)
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
        Ok(Self::load_with_text(root)?.0)
    }

    /// [`Self::load`], also giving the text read.
    pub fn load_with_text(root: &Path) -> Result<(Project, String)> {
        let path = root.join(FILE);
        let text = match crate::fsx::read_text(&path, 4 << 20) {
            Ok(Some(t)) => t,
            Ok(None) => bail!(
                "no PROJECT file in {}: run this command in a project made by `opbuilder init` (or `kubebuilder init`)",
                root.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let p = Self::parse(&text)?;
        Ok((p, text))
    }

    pub fn parse(text: &str) -> Result<Project> {
        let p = match fast::parse(text) {
            Some(p) => p,
            None => Self::parse_yaml(text)?,
        };
        match p.version.as_str() {
            "3" | "3-alpha" => {}
            "" => bail!("PROJECT has no `version`; opbuilder understands project version \"3\""),
            v => bail!("PROJECT version {v:?} is not supported; opbuilder understands project version \"3\""),
        }
        // Any layout reads: the plugin chain says what it can run (external plugins may stand
        // alone in a layout).
        Ok(p)
    }

    /// Read with serde_yaml: any YAML the format allows.
    fn parse_yaml(text: &str) -> Result<Project> {
        serde_yaml::from_str(text).map_err(|e| {
            anyhow::anyhow!("PROJECT is not valid: {e}\n  fix the YAML by hand, or restore it from version control")
        })
    }

    /// Serialise with the header, sorted keys, and Kubebuilder's formatting. Written field by
    /// field in one pass (a unit test checks it against the generic emitter on random projects).
    pub fn to_yaml(&self) -> String {
        enum Top<'a> {
            Str(&'a str),
            True,
            Layout,
            Resources,
            Other(&'a Value),
        }
        let version = if self.version == "3-alpha" {
            "3"
        } else {
            self.version.as_str()
        };
        let mut top: Vec<(Cow<str>, Top)> = vec![];
        for (key, v) in [
            ("cliVersion", &self.cli_version),
            ("domain", &self.domain),
            ("projectName", &self.project_name),
            ("repo", &self.repo),
        ] {
            if !v.is_empty() {
                top.push((Cow::Borrowed(key), Top::Str(v)));
            }
        }
        top.push((Cow::Borrowed("version"), Top::Str(version)));
        for (on, key) in [
            (self.multigroup, "multigroup"),
            (self.namespaced, "namespaced"),
        ] {
            if on {
                top.push((Cow::Borrowed(key), Top::True));
            }
        }
        if !self.layout.is_empty() {
            top.push((Cow::Borrowed("layout"), Top::Layout));
        }
        if !self.resources.is_empty() {
            top.push((Cow::Borrowed("resources"), Top::Resources));
        }
        for (k, v) in &self.other {
            top.push((scalar(k), Top::Other(v)));
        }
        top.sort_by(|a, b| a.0.cmp(&b.0));

        let mut out = String::with_capacity(HEADER.len() + 256 + 320 * self.resources.len());
        out.push_str(HEADER);
        for (key, item) in &top {
            out.push_str(key);
            out.push(':');
            match item {
                Top::Str(s) => line_value(&mut out, s),
                Top::True => out.push_str(" true\n"),
                Top::Layout => {
                    out.push('\n');
                    for l in &self.layout {
                        out.push('-');
                        line_value(&mut out, l);
                    }
                }
                Top::Resources => {
                    out.push('\n');
                    for r in &self.resources {
                        emit_resource(r, &mut out);
                    }
                }
                Top::Other(v) => emit_child(v, 0, &mut out),
            }
        }
        out
    }

    /// The PROJECT text after a command added resources to the project read from `text`, whose
    /// top-level keys were `before` (its `resources` left empty) and which had `existing`
    /// resources, all left as they were (the caller knows: `create api` of a new
    /// group/version/kind only appends). When `text` ends with its `resources:` list followed by
    /// `version: "3"`, as Kubebuilder and [`Self::to_yaml`] write it, the new entries are inserted
    /// there: no re-serialisation of every resource, which grows with the project. Otherwise the
    /// whole file is written by [`Self::to_yaml`].
    pub fn to_yaml_appended(&self, before: &Project, existing: usize, text: &str) -> String {
        const TAIL: &str = "version: \"3\"\n";
        let same_top = existing > 0
            && self.resources.len() > existing
            && self.version == "3"
            && self.cli_version == before.cli_version
            && self.domain == before.domain
            && self.layout == before.layout
            && self.multigroup == before.multigroup
            && self.namespaced == before.namespaced
            && self.project_name == before.project_name
            && self.repo == before.repo
            && self.version == before.version
            && self.other == before.other
            && self
                .other
                .keys()
                .all(|k| k.as_str().is_some_and(|k| k < "resources"));
        let end = text.len().wrapping_sub(TAIL.len());
        let shaped = same_top
            && text.ends_with(TAIL)
            && text[..end].ends_with('\n')
            && text[..end - 1]
                .rsplit('\n')
                .next()
                .is_some_and(|l| l.starts_with("  ") || l.starts_with("- "))
            && (text.starts_with("resources:\n- ") || text.contains("\nresources:\n- "));
        if !shaped {
            return self.to_yaml();
        }
        let mut out = String::with_capacity(text.len() + 400);
        out.push_str(&text[..end]);
        for r in &self.resources[existing..] {
            emit_resource(r, &mut out);
        }
        out.push_str(TAIL);
        out
    }

    /// Whether any resource already uses `group` (case-insensitive).
    pub fn has_group(&self, group: &str) -> bool {
        self.resources
            .iter()
            .any(|r| r.group.eq_ignore_ascii_case(group))
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

/// ` <scalar>\n`
fn line_value(out: &mut String, s: &str) {
    out.push(' ');
    out.push_str(&scalar_str(s));
    out.push('\n');
}

/// One entry of `resources:`, as the generic emitter writes it.
fn emit_resource(r: &Resource, out: &mut String) {
    if !r.other.is_empty() {
        // Keys we do not model: let the generic emitter sort them in.
        let v = serde_yaml::to_value(std::slice::from_ref(r)).expect("a resource serialises");
        emit(&v, 0, out);
        return;
    }
    let mut first = true;
    let mut key = |out: &mut String, k: &str| {
        out.push_str(if first { "- " } else { "  " });
        first = false;
        out.push_str(k);
        out.push(':');
    };
    if let Some(a) = &r.api {
        key(out, "api");
        if a.crd_version.is_empty() && !a.namespaced && !a.ssa {
            out.push_str(" {}\n");
        } else {
            out.push('\n');
            if !a.crd_version.is_empty() {
                out.push_str("    crdVersion:");
                line_value(out, &a.crd_version);
            }
            if a.namespaced {
                out.push_str("    namespaced: true\n");
            }
            if a.ssa {
                out.push_str("    ssa: true\n");
            }
        }
    }
    if r.controller {
        key(out, "controller");
        out.push_str(" true\n");
    }
    if !r.controllers.is_empty() {
        key(out, "controllers");
        out.push('\n');
        for c in &r.controllers {
            out.push_str("  - name:");
            line_value(out, &c.name);
        }
    }
    if r.core {
        key(out, "core");
        out.push_str(" true\n");
    }
    if !r.domain.is_empty() {
        key(out, "domain");
        line_value(out, &r.domain);
    }
    if r.external {
        key(out, "external");
        out.push_str(" true\n");
    }
    for (k, v, always) in [
        ("group", &r.group, false),
        ("kind", &r.kind, true),
        ("module", &r.module, false),
        ("path", &r.path, false),
        ("plural", &r.plural, false),
        ("version", &r.version, true),
    ] {
        if always || !v.is_empty() {
            key(out, k);
            line_value(out, v);
        }
    }
    if let Some(w) = &r.webhooks {
        key(out, "webhooks");
        let mut body = String::new();
        for (on, k) in [(w.conversion, "conversion"), (w.defaulting, "defaulting")] {
            if on {
                body.push_str("    ");
                body.push_str(k);
                body.push_str(": true\n");
            }
        }
        if !w.defaulting_path.is_empty() {
            body.push_str("    defaultingPath:");
            line_value(&mut body, &w.defaulting_path);
        }
        if !w.spoke.is_empty() {
            body.push_str("    spoke:\n");
            for v in &w.spoke {
                body.push_str("    -");
                line_value(&mut body, v);
            }
        }
        if w.validation {
            body.push_str("    validation: true\n");
        }
        for (k, v) in [
            ("validationPath", &w.validation_path),
            ("webhookVersion", &w.webhook_version),
        ] {
            if !v.is_empty() {
                body.push_str("    ");
                body.push_str(k);
                body.push(':');
                line_value(&mut body, v);
            }
        }
        if body.is_empty() {
            out.push_str(" {}\n");
        } else {
            out.push('\n');
            out.push_str(&body);
        }
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
        Value::String(_) => scalar(v).into_owned(),
        Value::Tagged(t) => inline(&t.value),
        Value::Mapping(_) | Value::Sequence(_) => serde_yaml::to_string(v)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

fn scalar(v: &Value) -> Cow<'_, str> {
    match v {
        Value::String(s) => scalar_str(s),
        other => Cow::Owned(inline(other)),
    }
}

/// Bytes a plain scalar may hold: ASCII letters, digits and `-_./()@+~,=:` (no space, so never
/// `: ` or ` #`).
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'.' | b'/' | b'(' | b')' | b'@' | b'+' | b'~' | b',' | b'=' | b':'
            );
        c += 1;
    }
    t
};

/// Whether `s` must be double-quoted to read back as the same string: it holds a character
/// outside a safe set, starts with an indicator, or reads as null, a bool or a number.
fn needs_quotes(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return true;
    };
    if !b.iter().all(|&c| PLAIN[c as usize])
        || matches!(first, b'-' | b'.' | b'@' | b'~' | b',' | b':' | b'=')
        || b.last() == Some(&b':')
    {
        return true;
    }
    // YAML 1.1 (Kubebuilder's reader) has base-60 numbers: `1:30`, `+1:20.5`.
    if (first.is_ascii_digit() || first == b'+') && memchr::memchr(b':', b).is_some() {
        return true;
    }
    // Words that read as null, bools or floats start with one of these letters (or a digit
    // or `+`, below); most values, such as `v1` or `example.com`, stop here.
    if first.is_ascii_alphabetic() && !b"nNtTfFyYoOiI".contains(&first) {
        return false;
    }
    let reserved = b.len() <= 5
        && ["null", "true", "false", "yes", "no", "on", "off", "y", "n"]
            .iter()
            .any(|r| s.eq_ignore_ascii_case(r));
    // Only these first characters can start something `f64::from_str` accepts
    // (digits, a sign, `inf`, `infinity`, `nan`).
    let maybe_float = first.is_ascii_digit() || matches!(first, b'+' | b'i' | b'I' | b'n' | b'N');
    let numeric = (maybe_float && s.parse::<f64>().is_ok())
        || s.starts_with("0x")
        || s.starts_with("0o")
        || (first.is_ascii_digit()
            && b.iter()
                .all(|&c| c.is_ascii_digit() || c == b'_' || c == b':'));
    reserved || numeric
}

/// A string as a YAML scalar: plain where that reads back as the same string, else double-quoted.
fn scalar_str(s: &str) -> Cow<'_, str> {
    if !needs_quotes(s) {
        return Cow::Borrowed(s);
    }
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
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
    Cow::Owned(q)
}

/// A fast reader for PROJECT files in the shape opbuilder and Kubebuilder write (block style,
/// two-space mappings, unindented sequences, plain or double-quoted one-line scalars). It returns
/// `None` for anything else, and the caller reads the file with serde_yaml instead; a unit test
/// checks that whenever it returns a value, serde_yaml reads the same.
mod fast {
    use super::{needs_quotes, Api, Controller, Project, Resource, Webhooks, PLAIN};
    use serde_yaml::{Mapping, Value};

    /// A one-line scalar read as a string: plain (only where our writer would leave it plain,
    /// so it reads back as that string) or double-quoted with the escapes our writer uses.
    fn string(s: &str) -> Option<String> {
        let Some(inner) = s.strip_prefix('"') else {
            return (!needs_quotes(s)).then(|| s.to_string());
        };
        let inner = inner.strip_suffix('"')?;
        if !inner.contains(['\\', '"']) && !inner.bytes().any(|c| c < 0x20) {
            return Some(inner.to_string());
        }
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return None,
                '\\' => match chars.next()? {
                    '"' => out.push('"'),
                    '\\' => out.push('\\'),
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    _ => return None,
                },
                c if (c as u32) < 0x20 => return None,
                c => out.push(c),
            }
        }
        Some(out)
    }

    fn boolean(s: &str) -> Option<bool> {
        match s {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    /// `key:` or `key: value` with a plain key.
    fn key_value(text: &str) -> Option<(&str, Option<&str>)> {
        // The key is plain and holds no `:`, so the first `:` or byte outside the plain set
        // must be its `:`.
        let colon = text.bytes().position(|c| c == b':' || !PLAIN[c as usize])?;
        let key = &text[..colon];
        let rest = match &text[colon..] {
            ":" => None,
            r => Some(r.strip_prefix(": ")?),
        };
        (!key.is_empty() && !key.starts_with('-')).then_some((key, rest))
    }

    /// The text of a line indented by exactly `n` spaces.
    fn at_indent(line: &str, n: usize) -> Option<&str> {
        let rest = line.get(n..)?;
        (line.as_bytes()[..n].iter().all(|&c| c == b' ') && !rest.starts_with(' ')).then_some(rest)
    }

    /// A cursor over the lines of the text after its header comments, each found when the
    /// cursor reaches it (no vector of lines: at 200 kinds PROJECT has 1,800 of them).
    struct Lines<'a> {
        text: &'a str,
        /// Where the current line starts.
        pos: usize,
        /// The current line, without its newline; `None` at the end or at a bad line.
        cur: Option<&'a str>,
        /// Where the line after the current one starts.
        next: usize,
        /// A line this reader does not take (blank, a comment, trailing spaces) was reached.
        bad: bool,
    }

    impl<'a> Lines<'a> {
        fn new(text: &'a str) -> Lines<'a> {
            let b = text.as_bytes();
            let mut pos = 0;
            while b.get(pos) == Some(&b'#') {
                pos = memchr::memchr(b'\n', &b[pos..]).map_or(b.len(), |i| pos + i + 1);
            }
            let mut lines = Lines {
                text,
                pos,
                cur: None,
                next: pos,
                bad: false,
            };
            lines.advance();
            lines
        }

        /// Move to the next line.
        fn advance(&mut self) {
            let (b, pos) = (self.text.as_bytes(), self.next);
            self.pos = pos;
            self.cur = None;
            if pos >= b.len() {
                return;
            }
            let end = memchr::memchr(b'\n', &b[pos..]).map_or(b.len(), |i| pos + i);
            self.next = end + 1;
            let line = &self.text[pos..end];
            let body = line.trim_start_matches(' ');
            if body.is_empty() || body.starts_with('#') || line.ends_with(' ') {
                self.bad = true;
            } else {
                self.cur = Some(line);
            }
        }

        fn peek(&self) -> Option<&'a str> {
            self.cur
        }

        /// The next `key: value` line at indent `n` (keys strictly increasing after `prev`).
        fn entry(&mut self, n: usize, prev: &mut &'a str) -> Option<(&'a str, Option<&'a str>)> {
            let text = at_indent(self.peek()?, n)?;
            if text.starts_with("- ") {
                return None;
            }
            let (key, value) = key_value(text)?;
            if key <= *prev {
                return None;
            }
            *prev = key;
            self.advance();
            Some((key, value))
        }

        /// `- item` lines at indent `n`: their scalars.
        fn items(&mut self, n: usize) -> Option<Vec<String>> {
            let mut out = vec![];
            while let Some(item) = self
                .peek()
                .and_then(|l| at_indent(l, n)?.strip_prefix("- "))
            {
                out.push(string(item)?);
                self.advance();
            }
            (!out.is_empty()).then_some(out)
        }

        /// Lines after `key:` must start a block; this says whether one is there (else the
        /// value is null, which we leave to serde_yaml).
        fn block(&mut self, value: Option<&str>, n: usize) -> Option<bool> {
            match value {
                Some("{}") => Some(false),
                Some(_) => None,
                None => at_indent(self.peek()?, n).map(|_| true),
            }
        }

        fn api(&mut self, value: Option<&str>) -> Option<Api> {
            let mut a = Api::default();
            if self.block(value, 4)? {
                let mut prev = "";
                while let Some((k, v)) = self.entry(4, &mut prev) {
                    match (k, v?) {
                        ("crdVersion", v) => a.crd_version = string(v)?,
                        ("namespaced", v) => a.namespaced = boolean(v)?,
                        ("ssa", v) => a.ssa = boolean(v)?,
                        _ => return None,
                    }
                }
            }
            Some(a)
        }

        fn webhooks(&mut self, value: Option<&str>) -> Option<Webhooks> {
            let mut w = Webhooks::default();
            if self.block(value, 4)? {
                let mut prev = "";
                while let Some((k, v)) = self.entry(4, &mut prev) {
                    if k == "spoke" {
                        v.is_none().then_some(())?;
                        w.spoke = self.items(4)?;
                        continue;
                    }
                    let v = v?;
                    match k {
                        "conversion" => w.conversion = boolean(v)?,
                        "defaulting" => w.defaulting = boolean(v)?,
                        "defaultingPath" => w.defaulting_path = string(v)?,
                        "validation" => w.validation = boolean(v)?,
                        "validationPath" => w.validation_path = string(v)?,
                        "webhookVersion" => w.webhook_version = string(v)?,
                        _ => return None,
                    }
                }
            }
            Some(w)
        }

        /// One `- ...` entry of `resources:`; its first key is on the dash line.
        fn resource(&mut self) -> Option<Resource> {
            let first = self.peek()?.strip_prefix("- ")?;
            let mut r = Resource::default();
            let (mut kind, mut version) = (false, false);
            let mut prev = "";
            let mut line = Some(first);
            loop {
                let (k, v) = match line.take() {
                    Some(text) => {
                        let (k, v) = key_value(text)?;
                        prev = k;
                        self.advance();
                        (k, v)
                    }
                    None => match self.entry(2, &mut prev) {
                        Some(e) => e,
                        None => break,
                    },
                };
                match k {
                    "api" => r.api = Some(self.api(v)?),
                    "controllers" => {
                        v.is_none().then_some(())?;
                        while let Some(item) = self
                            .peek()
                            .and_then(|l| at_indent(l, 2)?.strip_prefix("- "))
                        {
                            let ("name", Some(name)) = key_value(item)? else {
                                return None;
                            };
                            r.controllers.push(Controller {
                                name: string(name)?,
                            });
                            self.advance();
                        }
                        (!r.controllers.is_empty()).then_some(())?;
                    }
                    "webhooks" => r.webhooks = Some(self.webhooks(v)?),
                    _ => {
                        let v = v?;
                        match k {
                            "controller" => r.controller = boolean(v)?,
                            "core" => r.core = boolean(v)?,
                            "domain" => r.domain = string(v)?,
                            "external" => r.external = boolean(v)?,
                            "group" => r.group = string(v)?,
                            "kind" => {
                                r.kind = string(v)?;
                                kind = true;
                            }
                            "module" => r.module = string(v)?,
                            "path" => r.path = string(v)?,
                            "plural" => r.plural = string(v)?,
                            "version" => {
                                r.version = string(v)?;
                                version = true;
                            }
                            _ => return None,
                        }
                    }
                }
            }
            (kind && version).then_some(r)
        }
    }

    pub fn parse(text: &str) -> Option<Project> {
        // Bytes, not chars: a char-set search decodes every character (a large share of the
        // read at 200 kinds).
        if memchr::memchr2(b'\r', b'\t', text.as_bytes()).is_some() {
            return None;
        }
        let mut p = Lines::new(text);
        let mut project = Project::default();
        let mut prev = "";
        let mut has_version = false;
        while p.peek().is_some() {
            let start = p.pos;
            let (key, value) = p.entry(0, &mut prev)?;
            match key {
                "layout" => {
                    project.layout = match value {
                        Some(v) => vec![string(v)?],
                        None => p.items(0)?,
                    }
                }
                "resources" => {
                    value.is_none().then_some(())?;
                    while p.peek().is_some_and(|l| l.starts_with("- ")) {
                        project.resources.push(p.resource()?);
                    }
                    (!project.resources.is_empty()).then_some(())?;
                }
                "cliVersion" => project.cli_version = string(value?)?,
                "domain" => project.domain = string(value?)?,
                "multigroup" => project.multigroup = boolean(value?)?,
                "namespaced" => project.namespaced = boolean(value?)?,
                "projectName" => project.project_name = string(value?)?,
                "repo" => project.repo = string(value?)?,
                "version" => {
                    project.version = string(value?)?;
                    has_version = true;
                }
                _ => {
                    // A key we do not model: let serde_yaml read just its lines.
                    while p.peek().is_some_and(|l| l.starts_with([' ', '-'])) {
                        p.advance();
                    }
                    if p.bad {
                        return None;
                    }
                    let end = p.pos.min(text.len());
                    let block: Mapping = serde_yaml::from_str(&text[start..end]).ok()?;
                    let (k, v) = block.into_iter().next()?;
                    if !matches!(&k, Value::String(s) if s == key) {
                        return None;
                    }
                    project.other.insert(k, v);
                }
            }
        }
        (has_version && !p.bad).then_some(project)
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
    fn an_added_resource_is_inserted_into_the_text_as_to_yaml_writes_it() {
        let top = |p: &Project| Project {
            resources: vec![],
            ..p.clone()
        };
        let before = sample();
        let text = before.to_yaml();
        let mut after = before.clone();
        let mut r = after.resources[0].clone();
        r.kind = "Gateway".into();
        r.webhooks = None;
        after.resources.push(r);
        assert_eq!(
            after.to_yaml_appended(&top(&before), 1, &text),
            after.to_yaml()
        );
        // Keys after `resources:`, another top-level change, or the list written another way:
        // the whole file.
        let mut b2 = before.clone();
        b2.other.insert("zz".into(), "kept".into());
        let mut a2 = after.clone();
        a2.other = b2.other.clone();
        let t2 = b2.to_yaml();
        assert_eq!(a2.to_yaml_appended(&top(&b2), 1, &t2), a2.to_yaml());
        let mut changed = after.clone();
        changed.domain = "example.org".into();
        assert_eq!(
            changed.to_yaml_appended(&top(&before), 1, &text),
            changed.to_yaml()
        );
        let indented = text.replace("\n- api:", "\n  - api:");
        assert_eq!(
            after.to_yaml_appended(&top(&before), 1, &indented),
            after.to_yaml()
        );
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
        // As Kubebuilder writes deploy-image's options (go-yaml): plain.
        for plain in [
            "memcached:1.6.26-alpine3.19",
            "memcached,--memory-limit=64,-o,modern,-v",
            "a=b",
        ] {
            assert_eq!(scalar(&Value::String(plain.into())), plain);
        }
        for quoted in ["a:", ":a", ",a", "=", "=a", "1:30", "+1:20.5", "11211"] {
            assert_eq!(
                scalar(&Value::String(quoted.into())),
                format!("\"{quoted}\""),
                "{quoted}"
            );
        }
    }

    /// The emitter before it wrote fields directly: serde_yaml value, then the generic emitter.
    fn generic_yaml(p: &Project) -> String {
        let mut p = p.clone();
        if p.version == "3-alpha" {
            p.version = "3".into();
        }
        let value = serde_yaml::to_value(&p).unwrap();
        let mut out = String::from(HEADER);
        emit(&value, 0, &mut out);
        out
    }

    /// The quoting rule before it was made fast.
    fn old_needs_quotes(s: &str) -> bool {
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
        !plain
    }

    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
        fn flag(&mut self) -> bool {
            self.below(2) == 0
        }
        fn text(&mut self) -> String {
            const WORDS: &[&str] = &[
                "",
                "",
                "v1",
                "App",
                "example.com",
                "3",
                "1.5",
                "true",
                "No",
                "null",
                "~",
                "a b",
                "x\"y",
                "back\\slash",
                "inf",
                "NaN",
                "-x",
                ".x",
                "@x",
                "(devel)",
                "0.1.0",
                "0x1f",
                "0o7",
                "12:30",
                "1_000",
                "+1",
                "1e5",
                "ü",
                "a:b",
                "tab\t",
                "new\nline",
                "go.kubebuilder.io/v4",
                "/validate-x",
                "k8s.io/api/core/v1",
                ",",
                "=",
                ":",
                "image:1.2",
                "1:20.5",
            ];
            WORDS[self.below(WORDS.len())].to_string()
        }
        fn texts(&mut self) -> Vec<String> {
            (0..self.below(3)).map(|_| self.text()).collect()
        }
    }

    fn random_project(r: &mut Rng) -> Project {
        let mut p = Project {
            cli_version: r.text(),
            domain: r.text(),
            layout: r.texts(),
            multigroup: r.flag(),
            namespaced: r.flag(),
            project_name: r.text(),
            repo: r.text(),
            version: ["3", "3-alpha", ""][r.below(3)].into(),
            ..Default::default()
        };
        if r.below(4) == 0 {
            p.other.insert(
                Value::String("plugins".into()),
                serde_yaml::from_str(
                    "grafana.kubebuilder.io/v1-alpha: {}\nx.io/v1:\n  resources:\n  - kind: A\n",
                )
                .unwrap(),
            );
        }
        for _ in 0..r.below(4) {
            let mut res = Resource {
                api: r.flag().then(|| Api {
                    crd_version: r.text(),
                    namespaced: r.flag(),
                    ssa: r.flag(),
                }),
                controller: r.flag(),
                controllers: (0..r.below(3))
                    .map(|_| Controller { name: r.text() })
                    .collect(),
                core: r.flag(),
                domain: r.text(),
                external: r.flag(),
                group: r.text(),
                kind: r.text(),
                module: r.text(),
                path: r.text(),
                plural: r.text(),
                version: r.text(),
                webhooks: r.flag().then(|| Webhooks {
                    conversion: r.flag(),
                    defaulting: r.flag(),
                    defaulting_path: r.text(),
                    spoke: r.texts(),
                    validation: r.flag(),
                    validation_path: r.text(),
                    webhook_version: r.text(),
                }),
                ..Default::default()
            };
            if r.below(8) == 0 {
                res.other
                    .insert(Value::String("zz".into()), Value::String(r.text()));
            }
            p.resources.push(res);
        }
        p
    }

    #[test]
    fn quoting_rule_is_unchanged() {
        // The rule before `,`, `=` and `:` were let into plain scalars, on text without them.
        let mut r = Rng(7);
        for _ in 0..5000 {
            let s: String = (0..r.below(4)).map(|_| r.text()).collect();
            if s.contains([',', '=', ':']) {
                continue;
            }
            assert_eq!(needs_quotes(&s), old_needs_quotes(&s), "{s:?}");
        }
        for s in [
            "infinity", "-inf", "+.5", "5.", "1E5", "nan", "Inf", "on", "Y", "yes", "ON",
        ] {
            assert_eq!(needs_quotes(s), old_needs_quotes(s), "{s:?}");
        }
    }

    /// Whatever is written plain reads back as the same string.
    #[test]
    fn plain_scalars_read_back() {
        let mut r = Rng(11);
        for _ in 0..20000 {
            let s: String = (0..r.below(5)).map(|_| r.text()).collect();
            if needs_quotes(&s) {
                continue;
            }
            let v: Value = serde_yaml::from_str(&format!("k: {s}\n")).unwrap();
            assert_eq!(v["k"], Value::String(s.clone()), "{s:?}");
        }
    }

    /// The field-by-field writer gives the generic emitter's bytes.
    #[test]
    fn writer_matches_generic_emitter() {
        let mut r = Rng(0x5eed);
        for _ in 0..3000 {
            let p = random_project(&mut r);
            assert_eq!(p.to_yaml(), generic_yaml(&p), "{p:?}");
        }
    }

    /// Whenever the fast reader returns a project, serde_yaml reads the same project: on what
    /// we write, and on that text mangled line by line.
    #[test]
    fn fast_reader_agrees_with_serde_yaml() {
        let mut r = Rng(0xfeed);
        let (mut fast_read, mut written) = (0, 0);
        let mut mangled_read = 0;
        for _ in 0..3000 {
            let p = random_project(&mut r);
            let text = p.to_yaml();
            let slow: Option<Project> = serde_yaml::from_str(&text).ok();
            if let Some(f) = fast::parse(&text) {
                assert_eq!(Some(&f), slow.as_ref(), "{text}");
                fast_read += 1;
            }
            written += 1;
            // Mangle: drop, repeat, swap, indent, unindent, quote or comment a line, add a blank line
            // or a trailing space.
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            for _ in 0..1 + r.below(2) {
                let i = r.below(lines.len());
                let j = (i + 1).min(lines.len() - 1);
                match r.below(11) {
                    0 => {
                        lines.remove(i);
                    }
                    1 => lines.insert(i, lines[i].clone()),
                    2 => lines.swap(i, j),
                    3 => lines[i].insert_str(0, "  "),
                    4 => lines[i] = lines[i].replacen("  ", "", 1),
                    5 => lines[i] = lines[i].replacen(": ", ": \"", 1) + "\"",
                    6 => lines.insert(i, "# note".into()),
                    7 => lines[i] = lines[i].replacen("- ", "-  ", 1),
                    8 => lines.insert(i, String::new()),
                    9 => lines[i].push(' '),
                    _ => lines[i].push_str(" #c"),
                }
                if lines.is_empty() {
                    break;
                }
            }
            let text = lines.join("\n") + "\n";
            if let Some(f) = fast::parse(&text) {
                let slow: Project = serde_yaml::from_str(&text)
                    .unwrap_or_else(|e| panic!("serde_yaml fails ({e}) where we read:\n{text}"));
                assert_eq!(f, slow, "{text}");
                mangled_read += 1;
            }
        }
        assert!(fast_read * 4 > written * 3, "{fast_read} of {written}");
        assert!(mangled_read > 300, "{mangled_read}");
    }
}
