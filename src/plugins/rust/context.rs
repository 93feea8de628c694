//! The Rust layout's names and template contexts: module and crate names that always compile,
//! and the project values every Rust template sees.

use crate::context::ProjectCtx;
use crate::project::Project;
use serde::Serialize;

/// Rust keywords and the names rustc reserves: never a module or crate name as they are.
const RUST_RESERVED: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "union",
];

/// A Rust module name for a group, version or kind: snake case, `-` and `.` as `_`, and a
/// trailing `_` for a keyword (`type` → `type_`), so every name Kubernetes accepts compiles.
pub fn module_name(s: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(*c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if RUST_RESERVED.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Type names a kind cannot take as its Rust type: the prelude's, and those the generated
/// controllers, types and tests import.
const TAKEN_TYPE_NAMES: &[&str] = &[
    "Option",
    "Result",
    "String",
    "Vec",
    "Box",
    "Some",
    "None",
    "Ok",
    "Err",
    "Default",
    "Clone",
    "Copy",
    "Send",
    "Sync",
    "Sized",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "Iterator",
    "IntoIterator",
    "Extend",
    "ToString",
    "ToOwned",
    "Into",
    "From",
    "AsRef",
    "AsMut",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "Unpin",
    "TryFrom",
    "TryInto",
    "FromIterator",
    "Self",
    "Context",
    "Shutdown",
    "Rule",
    "StreamExt",
    "FutureExt",
    "Condition",
    "Time",
    "Timestamp",
    "Api",
    "Patch",
    "PatchParams",
    "PostParams",
    "DeleteParams",
    "Action",
    "Controller",
    "Event",
    "EventType",
    "Finalizer",
    "ObjectRef",
    "Resource",
    "ResourceExt",
    "Arc",
    "Duration",
    "Instant",
    "Error",
    "Metrics",
    "Request",
    "Response",
    "Body",
    "Handle",
    "CustomResource",
    "JsonSchema",
    "Deserialize",
    "Serialize",
    "Debug",
];

/// The Rust type of a kind: the kind itself, or `<Kind>Resource` when Rust or the generated
/// code already uses that name (`Event`, `Result`, ...), so that every kind compiles.
pub fn type_name(kind: &str) -> String {
    if TAKEN_TYPE_NAMES.contains(&kind) {
        format!("{kind}Resource")
    } else {
        kind.to_string()
    }
}

/// The Cargo package name for a project name, or why it cannot be one.
pub fn crate_name(project_name: &str) -> Result<String, String> {
    if project_name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err("must start with a letter to be a Cargo package name".into());
    }
    let lib = project_name.replace('-', "_");
    if RUST_RESERVED.contains(&lib.as_str())
        || [
            "std",
            "core",
            "alloc",
            "test",
            "proc_macro",
            "build",
            "deps",
            "examples",
        ]
        .contains(&lib.as_str())
    {
        return Err(format!(
            "cannot be a Cargo package name: {lib:?} is a Rust keyword or a name cargo reserves"
        ));
    }
    Ok(project_name.to_string())
}

/// What every Rust template sees besides the go/v4 project values.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RustProjectCtx {
    #[serde(flatten)]
    pub project: ProjectCtx,
    /// The Cargo package (and binary) name: the project name.
    pub crate_name: String,
    /// The library's name in Rust paths: the project name with `_` for `-`.
    pub lib_name: String,
    pub rust: crate::versions::Rust,
}

impl RustProjectCtx {
    pub fn new(project: &Project, boilerplate: Option<String>) -> RustProjectCtx {
        let mut pctx = ProjectCtx::new(project, boilerplate);
        // Kubebuilder derives the lease name from the Go module; a Rust project has none, so
        // from the project name.
        pctx.leader_election_id = format!(
            "{}.{}",
            crate::context::fnv32a_hex(&project.project_name),
            project.domain
        );
        RustProjectCtx {
            crate_name: project.project_name.clone(),
            lib_name: project.project_name.replace('-', "_"),
            rust: crate::versions::pins().rust.clone(),
            project: pctx,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_are_snake_case_and_never_keywords() {
        for (given, want) in [
            ("Guestbook", "guestbook"),
            ("MyCronJob", "my_cron_job"),
            ("APIServer", "api_server"),
            ("URLMap", "url_map"),
            ("my-group", "my_group"),
            ("rbac.authorization", "rbac_authorization"),
            ("v1beta1", "v1beta1"),
            ("type", "type_"),
            ("Self", "self_"),
            ("crate", "crate_"),
        ] {
            assert_eq!(module_name(given), want, "{given}");
        }
    }

    #[test]
    fn kinds_named_like_what_rust_or_the_templates_use_get_another_type_name() {
        assert_eq!(type_name("Guestbook"), "Guestbook");
        assert_eq!(type_name("Event"), "EventResource");
        assert_eq!(type_name("Result"), "ResultResource");
    }

    #[test]
    fn crate_names_cargo_refuses_are_refused() {
        assert_eq!(crate_name("guest-book").unwrap(), "guest-book");
        for bad in ["1app", "test", "self", "std", "async"] {
            assert!(crate_name(bad).is_err(), "{bad}");
        }
    }
}
