//! The PROJECT writer, with Kubebuilder's shape: a header comment, keys sorted alphabetically
//! at every level, empty and false values omitted, sequences not indented under their key, and
//! `version: "3"` quoted. Resources are written field by field; keys opbuilder does not model go
//! through a generic emitter of YAML values.

use super::model::{Project, Resource};
use super::scalar::scalar_str;
use super::version;
use serde_yaml::{Mapping, Value};
use std::borrow::Cow;

/// The header of a PROJECT that opbuilder starts (`init`); a project read keeps its own.
pub(super) const HEADER: &str =
    "# Written by opbuilder (https://kubebuilder.io compatible, project version 3).\n\
# It records how this project was scaffolded so later `create` commands, and Kubebuilder itself,\n\
# can extend it. Edit it only if you know what you are doing.\n";

impl Project {
    /// Serialise with the header (the one read, else opbuilder's), sorted keys, and Kubebuilder's formatting. Written field by
    /// field in one pass (a unit test checks it against the generic emitter on random projects).
    pub fn to_yaml(&self) -> String {
        enum Top<'a> {
            Str(&'a str),
            True,
            Layout,
            Resources,
            Other(&'a Value),
        }
        let version = version::written(&self.version);
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

        let header = self.header.as_deref().unwrap_or(HEADER);
        let mut out = String::with_capacity(header.len() + 256 + 320 * self.resources.len());
        out.push_str(header);
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
        ("group", r.group.as_str(), false),
        ("kind", r.kind.as_str(), true),
        ("module", r.module.as_str(), false),
        ("path", r.path.as_str(), false),
        ("plural", r.plural.as_str(), false),
        ("version", r.version.as_str(), true),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::model::*;
    use crate::project::tests::{random_project, sample, Rng};

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

    /// The field-by-field writer gives the generic emitter's bytes.
    #[test]
    fn writer_matches_generic_emitter() {
        let mut r = Rng(0x5eed);
        for _ in 0..3000 {
            let p = random_project(&mut r);
            assert_eq!(p.to_yaml(), generic_yaml(&p), "{p:?}");
        }
    }
}
