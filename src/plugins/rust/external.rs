//! The Rust layout's `create api` for another project's kind (`--external-api-path`): the
//! CustomResourceDefinition read from a file, the Go module cache or cargo's crate cache, checked
//! to hold the group, version and kind asked for; the copy the project keeps of it
//! (`external-crds/<group>_<plural>.yaml`), the types kopium generates from it
//! (`src/external/<group>/<version>/<kind>.rs`), the Makefile's `external-types` target that
//! generates them again, and the object the controller's integration test creates.

use crate::error::usage;
use crate::planning::api::ResolvedResource;
use anyhow::{anyhow, Result};
use serde_yaml::{Mapping, Value};
use std::path::{Path, PathBuf};

/// Where the project keeps the CRDs of other projects' kinds.
pub const CRD_DIR: &str = "external-crds";

/// The largest CRD file read (Gateway API's largest is under 1 MiB).
const MAX_CRD: u64 = 16 << 20;

/// The CRD of another project's kind, as found, checked and read.
#[derive(Debug, Clone)]
pub struct ExternalCrd {
    /// The YAML document of the CRD, as the project keeps it (`external-crds/...`).
    pub text: String,
    /// The CRD's plural (`spec.names.plural`).
    pub plural: String,
    /// `spec.scope` is Namespaced.
    pub namespaced: bool,
    /// The project's copy: `external-crds/<group>_<plural>.yaml`.
    pub copy: String,
    /// The object the integration test creates: the required fields of the version's schema,
    /// with values it accepts (YAML).
    pub sample: String,
}

/// The flags' example, with the values of what a file holds when it is known.
fn example(group: &str, version: &str, kind: &str, path: &str) -> String {
    let (g, d) = group.split_once('.').unwrap_or((group, ""));
    let domain = if d.is_empty() {
        String::new()
    } else {
        format!(" --external-api-domain {d}")
    };
    format!(
        "opbuilder create api --group {g}{domain} --version {version} --kind {kind} --resource=false \
         --controller --external-api-path {path}"
    )
}

/// The Go module cache: `GOMODCACHE`, else `GOPATH`'s first entry's `pkg/mod`, else
/// `~/go/pkg/mod` (as `go env GOMODCACHE` says without a go.env of its own).
fn go_mod_cache() -> Option<PathBuf> {
    if let Some(c) = std::env::var_os("GOMODCACHE").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(c));
    }
    if let Some(p) = std::env::var_os("GOPATH").filter(|v| !v.is_empty()) {
        return std::env::split_paths(&p).next().map(|p| p.join("pkg/mod"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join("go/pkg/mod"))
}

/// A module path as the Go module cache spells it: every upper-case letter as `!` and the
/// lower-case letter.
fn go_cache_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            out.push('!');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// cargo's crate cache: the unpacked crates of every registry under `$CARGO_HOME/registry/src`
/// (`~/.cargo` without CARGO_HOME).
fn crate_dirs(name: &str, version: &str) -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry/src")) else {
        return vec![];
    };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&src)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path().join(format!("{name}-{version}")))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// The file `--external-api-path` names (with `--external-api-module`, inside that module or
/// crate), and how the copy's header names where it came from.
fn locate(root: &Path, path: &str, module: Option<&str>) -> Result<(PathBuf, String)> {
    let Some(module) = module else {
        let p = Path::new(path);
        let file = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::path::absolute(root.join(p)).unwrap_or_else(|_| root.join(p))
        };
        return Ok((file, path.to_string()));
    };
    if Path::new(path).is_absolute() || path.split('/').any(|c| c == "..") {
        return Err(crate::error::bad_flag(
            "--external-api-path",
            path,
            "with --external-api-module it is a path inside that module: relative, without `..`",
            "deploy/crds/cert-manager.io_certificates.yaml",
        ));
    }
    let (what, version) = module.rsplit_once('@').unwrap_or((module, ""));
    if let Some(name) = what.strip_prefix("crate:") {
        let dirs = crate_dirs(name, version);
        let Some(dir) = dirs.first() else {
            return Err(usage(format!(
                "--external-api-module {module}: the crate {name} {version} is not in cargo's crate cache \
                 ($CARGO_HOME/registry/src/*/{name}-{version}); fetch it first, e.g. by adding it to a \
                 Cargo.toml and running `cargo fetch`, or give the CRD file itself: --external-api-path FILE"
            )));
        };
        return Ok((dir.join(path), format!("{module}/{path}")));
    }
    if version.is_empty() {
        return Err(crate::error::bad_flag(
            "--external-api-module",
            module,
            "the Rust layout reads the CRD from the Go module cache, which keeps modules by version: \
             MODULE@VERSION",
            "github.com/cert-manager/cert-manager@v1.21.1",
        ));
    }
    let cache = go_mod_cache()
        .ok_or_else(|| usage("no Go module cache: neither GOMODCACHE, GOPATH nor HOME is set"))?;
    let dir = cache.join(format!("{}@{version}", go_cache_escape(what)));
    if !dir.is_dir() {
        return Err(usage(format!(
            "--external-api-module {module}: not in the Go module cache ({} is missing); download it \
             first: go mod download {module}",
            dir.display()
        )));
    }
    Ok((dir.join(path), format!("{module}/{path}")))
}

/// The YAML documents of a file, as text (split at `---` lines).
fn documents(text: &str) -> Vec<String> {
    let mut docs = vec![String::new()];
    for line in text.split_inclusive('\n') {
        let t = line.trim_end();
        if t == "---" || t.starts_with("--- ") {
            docs.push(String::new());
        } else {
            docs.last_mut().expect("one at least").push_str(line);
        }
    }
    docs.into_iter()
        .filter(|d| {
            d.lines()
                .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        })
        .collect()
}

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

fn get_str<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    get(v, path).and_then(Value::as_str).unwrap_or("")
}

/// One CRD of a file: group, kind, plural, scope, versions, and its document.
struct Found {
    group: String,
    kind: String,
    plural: String,
    namespaced: bool,
    versions: Vec<(String, Value)>,
    text: String,
}

fn crds(text: &str) -> Vec<Found> {
    documents(text)
        .into_iter()
        .filter_map(|doc| {
            let v: Value = serde_yaml::from_str(&doc).ok()?;
            if get_str(&v, &["kind"]) != "CustomResourceDefinition"
                || !get_str(&v, &["apiVersion"]).starts_with("apiextensions.k8s.io/")
            {
                return None;
            }
            let versions = get(&v, &["spec", "versions"])
                .and_then(Value::as_sequence)
                .map(|s| {
                    s.iter()
                        .map(|ver| {
                            let schema = get(ver, &["schema", "openAPIV3Schema"])
                                .cloned()
                                .unwrap_or(Value::Null);
                            (get_str(ver, &["name"]).to_string(), schema)
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(Found {
                group: get_str(&v, &["spec", "group"]).to_string(),
                kind: get_str(&v, &["spec", "names", "kind"]).to_string(),
                plural: get_str(&v, &["spec", "names", "plural"]).to_string(),
                namespaced: get_str(&v, &["spec", "scope"]) != "Cluster",
                versions,
                text: doc,
            })
        })
        .collect()
}

/// Read and check the CRD of `res` (an external kind of the Rust layout): the file must hold a
/// CustomResourceDefinition of its group and kind with its version. Usage errors name the flag,
/// the value, what the file holds and a command line that fits it.
pub fn read(root: &Path, res: &ResolvedResource) -> Result<ExternalCrd> {
    let g = &res.gvk;
    let module = res.external_module.as_deref();
    let path = res.api_path.as_str();
    let (file, source) = locate(root, path, module)?;
    let shown = file.display().to_string();
    let text = match crate::fsx::read_text(&file, MAX_CRD) {
        Ok(Some(t)) => t,
        Ok(None) => {
            return Err(usage(format!(
                "--external-api-path {path}: no such file ({shown}); it names the CustomResourceDefinition \
                 (YAML) of the kind, a file (relative to the project's root) or, with --external-api-module, \
                 a path inside that module.\n  Example: {}",
                example(
                    "cert-manager.io",
                    "v1",
                    "Certificate",
                    "deploy/crds/cert-manager.io_certificates.yaml \
                     --external-api-module github.com/cert-manager/cert-manager@v1.21.1"
                )
            )))
        }
        Err(e) => return Err(usage(format!("--external-api-path {path}: cannot read {shown}: {e}"))),
    };
    let qgroup = g.qgroup();
    let found = crds(&text);
    let Some(first) = found.first() else {
        return Err(usage(format!(
            "--external-api-path {path}: {shown} holds no CustomResourceDefinition (apiextensions.k8s.io/v1 \
             YAML); give the file of the CRD of {qgroup} {}",
            g.kind
        )));
    };
    let Some(crd) = found.iter().find(|c| c.group == qgroup && c.kind == g.kind) else {
        let held: Vec<String> = found
            .iter()
            .map(|c| format!("{} {}", c.group, c.kind))
            .collect();
        return Err(usage(format!(
            "--external-api-path {path}: the file holds no CRD of group {qgroup} (--group {} with \
             --external-api-domain {}) and kind {}; it holds {}.\n  Example: {}",
            g.group,
            if g.domain.is_empty() {
                "\"\""
            } else {
                &g.domain
            },
            g.kind,
            held.join(", "),
            example(
                &first.group,
                first.versions.first().map_or("v1", |v| v.0.as_str()),
                &first.kind,
                path
            )
        )));
    };
    let Some((_, schema)) = crd.versions.iter().find(|v| v.0 == g.version) else {
        let names: Vec<&str> = crd.versions.iter().map(|v| v.0.as_str()).collect();
        return Err(usage(format!(
            "--version {}: the CRD of {qgroup} {} in {path} has no version {}; it has {}.\n  Example: {}",
            g.version,
            g.kind,
            g.version,
            names.join(", "),
            example(&crd.group, names.first().unwrap_or(&"v1"), &crd.kind, path)
        )));
    };
    if schema.is_null() {
        return Err(usage(format!(
            "--version {}: the CRD of {qgroup} {} in {path} has no schema for that version \
             (schema.openAPIV3Schema), from which kopium makes the Rust types",
            g.version, g.kind
        )));
    }
    // A plural given (or recorded) must be the CRD's.
    if res.plural != res.default_plural && res.plural != crd.plural {
        return Err(crate::error::bad_flag(
            "--plural",
            &res.plural,
            &format!(
                "the CRD of {qgroup} {} names its plural {}",
                g.kind, crd.plural
            ),
            &crd.plural,
        ));
    }
    let copy = format!("{CRD_DIR}/{qgroup}_{}.yaml", crd.plural);
    let same_file = std::fs::canonicalize(&file)
        .ok()
        .zip(std::fs::canonicalize(root.join(&copy)).ok())
        .is_some_and(|(a, b)| a == b);
    let text = if same_file {
        text.clone()
    } else {
        format!(
            "# The CustomResourceDefinition of {} ({qgroup}), another project's API: `opbuilder create api`\n\
             # copied it from {source}. `make external-types` generates its Rust types in src/external\n\
             # from it, and the integration tests' control plane installs it.\n---\n{}",
            crd.kind,
            crd.text.trim_start_matches('\n')
        )
    };
    Ok(ExternalCrd {
        text,
        plural: crd.plural.clone(),
        namespaced: crd.namespaced,
        copy,
        sample: sample_yaml(&qgroup, &g.version, &g.kind, crd.namespaced, schema),
    })
}

/// A value of `schema` that it accepts, with only what it requires.
fn sample_value(schema: &Value, depth: usize) -> Value {
    if let Some(d) = schema.get("default") {
        return d.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_sequence)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return Value::from(1);
    }
    let minimum = schema.get("minimum").and_then(Value::as_i64);
    match get_str(schema, &["type"]) {
        "object" => {
            let mut m = Mapping::new();
            if depth > 16 {
                return Value::Mapping(m);
            }
            let props = schema.get("properties");
            for name in schema
                .get("required")
                .and_then(Value::as_sequence)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let sub = props.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
                m.insert(Value::from(name), sample_value(sub, depth + 1));
            }
            Value::Mapping(m)
        }
        "array" => {
            let n = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let item = schema.get("items").unwrap_or(&Value::Null);
            Value::Sequence(
                (0..n.min(4))
                    .map(|_| sample_value(item, depth + 1))
                    .collect(),
            )
        }
        "integer" | "number" => Value::from(minimum.unwrap_or(1).max(1)),
        "boolean" => Value::from(false),
        _ => {
            let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            if get_str(schema, &["format"]) == "date-time" {
                return Value::from("2026-01-01T00:00:00Z");
            }
            let mut s = "example".to_string();
            while s.len() < min {
                s.push('x');
            }
            Value::from(s)
        }
    }
}

/// The object the integration test creates: `sample`, with the spec the schema requires.
fn sample_yaml(group: &str, version: &str, kind: &str, namespaced: bool, schema: &Value) -> String {
    let mut obj = Mapping::new();
    obj.insert("apiVersion".into(), format!("{group}/{version}").into());
    obj.insert("kind".into(), kind.into());
    let mut meta = Mapping::new();
    meta.insert("name".into(), "sample".into());
    if namespaced {
        meta.insert("namespace".into(), "default".into());
    }
    obj.insert("metadata".into(), Value::Mapping(meta));
    if let Some(spec) = get(schema, &["properties", "spec"]) {
        obj.insert("spec".into(), sample_value(spec, 1));
    }
    serde_yaml::to_string(&Value::Mapping(obj)).unwrap_or_default()
}

/// The name kopium gives the kind's Rust type: the kind in upper camel case, its words split
/// where the case changes (`HTTPRoute` → `HttpRoute`), as the heck crate kopium uses splits them.
pub fn rust_type(kind: &str) -> String {
    let chars: Vec<char> = kind.chars().collect();
    let mut words: Vec<String> = vec![];
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        let split = c.is_ascii_uppercase()
            && !word.is_empty()
            && (prev.is_some_and(|p| p.is_ascii_lowercase())
                || (prev.is_some_and(|p| p.is_ascii_uppercase())
                    && next.is_some_and(|n| n.is_ascii_lowercase())));
        if split {
            words.push(std::mem::take(&mut word));
        }
        word.push(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
        .iter()
        .map(|w| {
            let mut cs = w.chars();
            let first = cs.next().map(|c| c.to_ascii_uppercase());
            first
                .into_iter()
                .chain(cs.map(|c| c.to_ascii_lowercase()))
                .collect::<String>()
        })
        .collect()
}

/// Check that kopium's output derives the kind's type under the name `name` (the kind, or its
/// `root` when kopium renames it), so that a naming of kopium's that [`rust_type`] does not
/// follow fails here rather than in the build.
pub fn check_types(types: &str, name: &str, kind: &str) -> Result<()> {
    let attr = |key: &str| {
        let start = format!("{key} = \"");
        types
            .find(&start)
            .map(|at| &types[at + start.len()..])
            .and_then(|rest| rest.split('"').next())
    };
    let root = attr("root").or(attr("kind"));
    if attr("kind") == Some(kind) && root == Some(name) {
        Ok(())
    } else {
        Err(anyhow!(
            "kopium's types for {kind} derive the kind's type as {}, where opbuilder expected {name}",
            root.unwrap_or("nothing")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_type_splits_words_as_heck_does() {
        for (kind, want) in [
            ("Certificate", "Certificate"),
            ("HTTPRoute", "HttpRoute"),
            ("GRPCRoute", "GrpcRoute"),
            ("ServiceMonitor", "ServiceMonitor"),
            ("ACMEIssuer", "AcmeIssuer"),
            ("TLSRoute", "TlsRoute"),
            ("Foo", "Foo"),
        ] {
            assert_eq!(rust_type(kind), want, "{kind}");
        }
    }

    #[test]
    fn documents_are_split_at_their_separators_and_comments_alone_are_none() {
        let docs = documents("# header\n---\na: 1\n---\n# only a comment\n--- # x\nb: 2\n");
        assert_eq!(docs, vec!["a: 1\n".to_string(), "b: 2\n".to_string()]);
    }

    #[test]
    fn the_sample_holds_what_the_schema_requires() {
        let schema: Value = serde_yaml::from_str(
            "type: object\nproperties:\n  spec:\n    type: object\n    required: [issuerRef, secretName, port, hosts]\n    \
             properties:\n      issuerRef:\n        type: object\n        required: [name]\n        properties:\n          \
             name: {type: string}\n          kind: {type: string}\n      secretName: {type: string, minLength: 9}\n      \
             port: {type: integer, minimum: 80}\n      hosts: {type: array, minItems: 1, items: {type: string, enum: [a, b]}}\n",
        )
        .unwrap();
        assert_eq!(
            sample_yaml("cert-manager.io", "v1", "Certificate", true, &schema),
            "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: sample\n  namespace: default\n\
             spec:\n  issuerRef:\n    name: example\n  secretName: examplexx\n  port: 80\n  hosts:\n  - a\n"
        );
    }

    #[test]
    fn the_type_kopium_derives_is_checked() {
        let renamed = "#[kube(\n    group = \"g.io\",\n    kind = \"HTTPRoute\",\n    root = \"HttpRoute\",\n)]";
        assert!(check_types(renamed, "HttpRoute", "HTTPRoute").is_ok());
        assert!(check_types(renamed, "HTTPRoute", "HTTPRoute").is_err());
        let plain = "#[kube(group = \"g.io\", version = \"v1\", kind = \"Certificate\")]";
        assert!(check_types(plain, "Certificate", "Certificate").is_ok());
        assert!(check_types(plain, "Issuer", "Issuer").is_err());
    }

    #[test]
    fn module_paths_in_the_go_cache_escape_capitals() {
        assert_eq!(
            go_cache_escape("github.com/Azure/azure-sdk"),
            "github.com/!azure/azure-sdk"
        );
    }
}
