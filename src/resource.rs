//! A resource (group, version, kind) and every name derived from it, following Kubebuilder's
//! conventions (reference §10, §11), plus the rendering context for api/controller/webhook templates.

use crate::context::ProjectCtx;
use crate::error::{bad_flag, check_flag, usage};
use crate::project::Project;
use crate::validate;
use anyhow::{bail, Result};
use serde::Serialize;

/// Core API groups and the domain Kubebuilder records for them.
pub const CORE_GROUPS: &[(&str, &str)] = &[
    ("admission", "k8s.io"),
    ("admissionregistration", "k8s.io"),
    ("apiextensions", "k8s.io"),
    ("authentication", "k8s.io"),
    ("authorization", "k8s.io"),
    ("auditregistration", "k8s.io"),
    ("certificates", "k8s.io"),
    ("coordination", "k8s.io"),
    ("events", "k8s.io"),
    ("imagepolicy", "k8s.io"),
    ("metrics", "k8s.io"),
    ("networking", "k8s.io"),
    ("node", "k8s.io"),
    ("rbac.authorization", "k8s.io"),
    ("scheduling", "k8s.io"),
    ("setting", "k8s.io"),
    ("storage", "k8s.io"),
    ("apps", ""),
    ("autoscaling", ""),
    ("batch", ""),
    ("core", ""),
    ("extensions", ""),
    ("policy", ""),
];

pub fn core_domain(group: &str) -> Option<&'static str> {
    CORE_GROUPS
        .iter()
        .find(|(g, _)| *g == group)
        .map(|(_, d)| *d)
}

/// Identifiers the api package declares itself: a kind (or its List/Spec/Status types) cannot use them.
const API_PACKAGE_IDENTS: &[&str] = &[
    "GroupVersion",
    "SchemeBuilder",
    "AddToScheme",
    "SchemeGroupVersion",
];

/// Local identifiers our Go templates declare next to the kind's variable; the variable
/// named after the kind must not shadow or clash with them.
const TEMPLATE_IDENTS: &[&str] = &[
    "ctx",
    "err",
    "req",
    "r",
    "c",
    "obj",
    "old",
    "new",
    "resource",
    "found",
    "cfg",
    "k8sClient",
    "testEnv",
    "scheme",
    "mgr",
    "cancel",
    "controllerReconciler",
    "typeNamespacedName",
    "log",
    "logf",
    "ctrl",
    "client",
    "metav1",
    "errors",
    "types",
    "reconcile",
    "admission",
    "defaulter",
    "validator",
    "warnings",
    "webhookInstallOptions",
    "conn",
    "dialer",
    "addrPort",
    "apimachineryruntime",
    "runtime",
    "context",
    "fmt",
    "path",
    "filepath",
    "os",
    "time",
    "tls",
    "net",
    "ginkgo",
    "gomega",
    "envtest",
    "webhook",
];

/// Lower camel case of an exported identifier: `App` → `app`, `MyCronJob` → `myCronJob`, `URLMap` → `urlMap`.
pub fn lower_camel(kind: &str) -> String {
    let chars: Vec<char> = kind.chars().collect();
    let mut upper_run = chars.iter().take_while(|c| c.is_ascii_uppercase()).count();
    if upper_run > 1 && upper_run < chars.len() && chars[upper_run].is_ascii_lowercase() {
        upper_run -= 1; // keep the capital that starts the next word
    }
    let upper_run = upper_run.max(1);
    chars
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i < upper_run {
                c.to_ascii_lowercase()
            } else {
                *c
            }
        })
        .collect()
}

/// A Go variable name for an object of `kind` that is never a keyword, a predeclared
/// identifier or a name our templates use: `type` → `typeObj`.
pub fn kind_var(kind: &str) -> String {
    let v = lower_camel(kind);
    if validate::GO_KEYWORDS.contains(&v.as_str())
        || validate::GO_PREDECLARED.contains(&v.as_str())
        || TEMPLATE_IDENTS.contains(&v.as_str())
    {
        format!("{v}Obj")
    } else {
        v
    }
}

/// Strip `-` and `.` (import aliases, package names).
pub fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '-' && *c != '.')
        .collect::<String>()
        .to_ascii_lowercase()
}

/// PascalCase of a dash/underscore-separated name: `captain-backup` → `CaptainBackup`.
pub fn pascal(name: &str) -> String {
    name.split(['-', '_'])
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The validated identity of a resource plus how it is sourced.
#[derive(Debug, Clone)]
pub struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// The domain recorded for the resource (project domain, a core domain, or external).
    pub domain: String,
}

impl Gvk {
    /// group.domain, group alone when the domain is empty, domain alone when the group is.
    pub fn qgroup(&self) -> String {
        match (self.group.is_empty(), self.domain.is_empty()) {
            (true, _) => self.domain.clone(),
            (false, true) => self.group.clone(),
            (false, false) => format!("{}.{}", self.group, self.domain),
        }
    }

    pub fn import_alias(&self) -> String {
        if self.group.is_empty() {
            format!("{}{}", squash(&self.domain), self.version)
        } else {
            format!("{}{}", squash(&self.group), self.version)
        }
    }
}

/// Validate --group/--version/--kind (flag-level rules; exit code 2 on failure).
pub fn validate_gvk(group: &str, version: &str, kind: &str, domain: &str) -> Result<()> {
    if group.starts_with('-') {
        return Err(usage(format!(
            "--group got {group:?}, which looks like another flag; give --group a value"
        )));
    }
    if !group.is_empty() {
        check_flag(
            "--group",
            group,
            validate::dns1123_subdomain,
            validate::meant::group,
            "ingress",
        )?;
    }
    let q =
        match (group.is_empty(), domain.is_empty()) {
            (true, true) => return Err(usage(
                "--group is required when the project has no domain; for example --group ingress",
            )),
            (true, false) => domain.to_string(),
            (false, true) => group.to_string(),
            (false, false) => format!("{group}.{domain}"),
        };
    validate::dns1123_subdomain(&q).map_err(|r| {
        bad_flag(
            "--group",
            group,
            &format!("together with the domain the API group {q:?} {}", r),
            "ingress",
        )
    })?;
    check_flag(
        "--version",
        version,
        validate::api_version,
        validate::meant::api_version,
        "v1beta1",
    )?;
    check_flag("--kind", kind, validate::kind, validate::meant::kind, "App")?;
    if API_PACKAGE_IDENTS.contains(&kind) {
        return Err(bad_flag(
            "--kind",
            kind,
            "this name is declared by every API package (groupversion_info.go declares GroupVersion, SchemeBuilder and AddToScheme), so a type of that name cannot compile",
            &format!("{kind}Config"),
        ));
    }
    Ok(())
}

/// `--group` names the group without the domain, which the project adds: refuse a group that
/// already ends with the domain (`ingress.example.com` in a project of `example.com` would
/// become `ingress.example.com.example.com`), unless PROJECT has that group already (a
/// project made that way keeps working). External and core types name their own domain.
pub fn check_group_without_domain(group: &str, domain: &str, in_project: bool) -> Result<()> {
    if domain.is_empty() || in_project {
        return Ok(());
    }
    let short = if group == domain {
        Some("")
    } else {
        group.strip_suffix(&format!(".{domain}"))
    };
    match short {
        None => Ok(()),
        Some("") => Err(usage(format!(
            "invalid value {group:?} for --group: --group takes the group without the project's domain \
             ({domain}), which opbuilder adds; {group:?} would make the API group {group}.{domain}\n  \
             for the API group {domain} itself, leave --group out"
        ))),
        Some(short) => Err(usage(format!(
            "invalid value {group:?} for --group: --group takes the group without the project's domain \
             ({domain}), which opbuilder adds; {group:?} would make the API group {group}.{domain}\n  \
             did you mean --group {short}? (the API group is then {group})"
        ))),
    }
}

/// Validate a plural (flag value or computed).
pub fn validate_plural(plural: &str, from_flag: bool) -> Result<()> {
    validate::dns1035_label(plural).map_err(|r| {
        if from_flag {
            bad_flag("--plural", plural, &r, "redisclusters")
        } else {
            usage(format!(
                "the default plural {plural:?} (computed as Kubebuilder does) is not valid: it {}; \
                 pass one explicitly, for example --plural {}s",
                r.trim_start_matches("must "),
                plural.chars().take_while(|c| c.is_ascii_lowercase()).collect::<String>()
            ))
        }
    })
}

/// Where a resource lives in this project.
#[derive(Debug, Clone)]
pub struct Layout {
    pub api_dir: String,
    pub api_path: String,
    pub controller_dir: String,
    pub controller_pkg: String,
    pub webhook_dir: String,
}

/// The package of a group's controllers in a multi-group project: the group squashed, as
/// Kubebuilder names it, but `<group>controller` for a group that is a Go keyword (`import`,
/// `type`), which cannot name a package (Kubebuilder's does not compile).
fn controller_pkg(group: &str) -> String {
    let pkg = squash(group);
    if validate::GO_KEYWORDS.contains(&pkg.as_str()) {
        controller_alias(group)
    } else {
        pkg
    }
}

/// The name cmd/main.go imports a group's controller package by: `<group>controller`, as
/// Kubebuilder does (for a Go keyword group, the package's own name).
pub fn controller_alias(group: &str) -> String {
    format!("{}controller", squash(group))
}

pub fn layout(p: &Project, group: &str, version: &str) -> Layout {
    let grouped = p.multigroup && !group.is_empty();
    let api_dir = if grouped {
        format!("api/{group}/{version}")
    } else {
        format!("api/{version}")
    };
    Layout {
        api_path: format!("{}/{api_dir}", p.repo),
        api_dir,
        controller_dir: if grouped {
            format!("internal/controller/{group}")
        } else {
            "internal/controller".into()
        },
        controller_pkg: if grouped {
            controller_pkg(group)
        } else {
            "controller".into()
        },
        webhook_dir: if grouped {
            format!("internal/webhook/{group}/{version}")
        } else {
            format!("internal/webhook/{version}")
        },
    }
}

/// The domain and Go package of a resource PROJECT records, where PROJECT leaves them out (as
/// projects of project version 3-alpha and hand-written entries do): a type of this project
/// (neither core nor external) is in the project's domain, and its package is where this
/// layout puts it. Kubebuilder then writes an empty import path and an API group without
/// the domain.
pub fn recorded_domain_and_path(p: &Project, r: &crate::project::Resource) -> (String, String) {
    let own = !r.core && !r.external && (r.api.is_some() || core_domain(&r.group).is_none());
    let domain = if r.domain.is_empty() && own {
        p.domain.clone()
    } else {
        r.domain.to_string()
    };
    let path = if r.path.is_empty() && own && p.rust_layout().is_none() {
        layout(p, &r.group, &r.version).api_path
    } else {
        r.path.to_string()
    };
    (domain, path)
}

/// The directory of the Go package `path` in this project's module, when it is in it.
pub fn dir_in_module(p: &Project, path: &str) -> Option<String> {
    let rest = path.strip_prefix(p.repo.as_str())?.strip_prefix('/')?;
    (!p.repo.is_empty() && !rest.is_empty()).then(|| rest.to_string())
}

/// Go string-literal path elements that climb from `dir` to the project root and then into `to`.
pub fn path_elems(dir: &str, to: &[&str]) -> String {
    let depth = dir.split('/').filter(|s| !s.is_empty()).count();
    std::iter::repeat_n("..", depth)
        .chain(to.iter().copied())
        .map(|e| format!("{e:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Everything the api, controller and webhook templates see.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceCtx {
    #[serde(flatten)]
    pub project: ProjectCtx,
    pub group: String,
    pub version: String,
    pub kind: String,
    pub kind_lower: String,
    pub kind_var: String,
    pub plural: String,
    /// The plural is not the one Kubebuilder computes from the kind (`--plural`, or a fallback):
    /// the type then needs `+kubebuilder:resource:path=<plural>`.
    pub custom_plural: bool,
    pub qgroup: String,
    pub import_alias: String,
    pub api_path: String,
    pub api_dir: String,
    pub cluster_scoped: bool,
    pub core: bool,
    pub external: bool,
    // controller
    pub controller_dir: String,
    pub controller_pkg: String,
    pub controller_file: String,
    pub reconciler: String,
    pub controller_name: String,
    pub has_api: bool,
    pub has_types: bool,
    /// Server-side apply (`create api --ssa`): the types carry the apply-configuration markers.
    pub ssa: bool,
    /// Another kind of this group/version uses server-side apply, so this kind opts out of the
    /// package's apply-configuration generation.
    pub ac_opt_out: bool,
    pub crd_path_elems: String,
    pub bin_path_elems: String,
    pub rbac_group: String,
    // samples and helper roles
    pub sample_file: String,
    pub role_file_prefix: String,
    pub role_name_prefix: String,
    pub role_kind: String,
    // webhook
    pub webhook_dir: String,
    pub webhook_pkg: String,
    /// What cmd/main.go imports the webhook package as: `webhook<version>`, or in a multi-group
    /// project `webhook<importAlias>` (a kind without group is not in a group's directory).
    pub webhook_alias: String,
    pub defaulting: bool,
    pub validation: bool,
    pub conversion: bool,
    pub mutating_path: String,
    pub validating_path: String,
    pub custom_defaulting_path: String,
    pub custom_validation_path: String,
    pub webhook_groups: String,
    pub webhook_crd_path_elems: String,
    pub webhook_bin_path_elems: String,
    pub webhook_config_path_elems: String,
    pub hub_import_alias: String,
    pub hub_api_path: String,
    pub spoke_version: String,
    pub spoke_dir: String,
}

/// Inputs to [`ResourceCtx::new`].
pub struct CtxInput<'a> {
    pub project: &'a Project,
    pub pctx: ProjectCtx,
    pub gvk: &'a Gvk,
    pub plural: &'a str,
    pub api_path: &'a str,
    pub cluster_scoped: bool,
    pub core: bool,
    pub external: bool,
    pub controller_name: Option<&'a str>,
    pub has_api: bool,
}

impl ResourceCtx {
    pub fn new(i: CtxInput<'_>) -> ResourceCtx {
        let g = i.gvk;
        let p = i.project;
        let lay = layout(p, &g.group, &g.version);
        let kind_lower = g.kind.to_ascii_lowercase();
        let (controller_file, reconciler, base_name) = match i.controller_name {
            Some(n) if n != kind_lower => (
                format!("{}_controller.go", n.replace('-', "_")),
                format!("{}Reconciler", pascal(n)),
                n.to_string(),
            ),
            _ => (
                format!("{kind_lower}_controller.go"),
                format!("{}Reconciler", g.kind),
                kind_lower.clone(),
            ),
        };
        let grouped = p.multigroup && !g.group.is_empty();
        let controller_name = if grouped {
            format!("{}-{base_name}", g.group.to_ascii_lowercase())
        } else {
            base_name
        };
        let qgroup = g.qgroup();
        let hook_group = if g.group == "core" && i.core {
            String::new()
        } else {
            qgroup.clone()
        };
        let hook_suffix = format!(
            "{}-{}-{kind_lower}",
            hook_group.replace('.', "-"),
            g.version
        );
        let sample_file = if g.group.is_empty() {
            format!("{}_{kind_lower}.yaml", g.version)
        } else {
            format!("{}_{}_{kind_lower}.yaml", g.group, g.version)
        };
        ResourceCtx {
            group: g.group.clone(),
            version: g.version.clone(),
            kind: g.kind.clone(),
            kind_var: {
                let v = kind_var(&g.kind);
                if v == g.import_alias() {
                    format!("{v}Obj")
                } else {
                    v
                }
            },
            plural: i.plural.to_string(),
            custom_plural: i.plural != crate::flect::pluralize(&kind_lower),
            import_alias: g.import_alias(),
            api_path: i.api_path.to_string(),
            // Where the types are: the directory their import path names in this module (PROJECT's
            // path, which may not be this layout's), else this layout's.
            api_dir: if i.core || i.external {
                lay.api_dir.clone()
            } else {
                dir_in_module(p, i.api_path).unwrap_or_else(|| lay.api_dir.clone())
            },
            cluster_scoped: i.cluster_scoped,
            core: i.core,
            external: i.external,
            controller_dir: lay.controller_dir.clone(),
            controller_pkg: lay.controller_pkg.clone(),
            controller_file,
            reconciler,
            controller_name,
            has_api: i.has_api,
            has_types: !i.api_path.is_empty(),
            ssa: false,
            ac_opt_out: false,
            crd_path_elems: path_elems(&lay.controller_dir, &["config", "crd", "bases"]),
            bin_path_elems: path_elems(&lay.controller_dir, &["bin", "k8s"]),
            rbac_group: qgroup.clone(),
            sample_file,
            role_file_prefix: if grouped {
                format!("{}_", g.group)
            } else {
                String::new()
            },
            role_name_prefix: if grouped {
                format!("{}-", g.group.to_ascii_lowercase())
            } else {
                String::new()
            },
            role_kind: if p.namespaced {
                "Role".into()
            } else {
                "ClusterRole".into()
            },
            webhook_dir: lay.webhook_dir.clone(),
            webhook_pkg: g.version.clone(),
            webhook_alias: if grouped {
                format!("webhook{}", g.import_alias())
            } else {
                format!("webhook{}", g.version)
            },
            defaulting: false,
            validation: false,
            conversion: false,
            mutating_path: format!("/mutate-{hook_suffix}"),
            validating_path: format!("/validate-{hook_suffix}"),
            custom_defaulting_path: String::new(),
            custom_validation_path: String::new(),
            webhook_groups: if hook_group.is_empty() {
                "\"\"".into()
            } else {
                hook_group
            },
            webhook_crd_path_elems: path_elems(&lay.webhook_dir, &["config", "crd", "bases"]),
            webhook_bin_path_elems: path_elems(&lay.webhook_dir, &["bin", "k8s"]),
            webhook_config_path_elems: path_elems(&lay.webhook_dir, &["config", "webhook"]),
            hub_import_alias: String::new(),
            hub_api_path: String::new(),
            spoke_version: String::new(),
            spoke_dir: String::new(),
            kind_lower,
            qgroup,
            project: i.pctx,
        }
    }
}

/// Refuse kinds whose generated types would collide with another kind's in the same package.
pub fn check_type_collisions(
    p: &Project,
    api_dir_of: impl Fn(&str, &str) -> String,
    g: &Gvk,
) -> Result<()> {
    const SUFFIXES: [&str; 4] = ["", "List", "Spec", "Status"];
    // The first Go type name the two kinds share, compared without building the names.
    let shared = |theirs: &str| {
        // Two names that differ in their first byte share nothing: most pairs stop here
        // (a project of 200 kinds compared every pair in full, issue 50).
        if theirs
            .as_bytes()
            .first()
            .is_some_and(|&c| Some(&c) != g.kind.as_bytes().first())
        {
            return None;
        }
        SUFFIXES.iter().find_map(|mine| {
            let name_len = g.kind.len() + mine.len();
            SUFFIXES
                .iter()
                .any(|their| {
                    theirs.len() + their.len() == name_len
                        && g.kind
                            .bytes()
                            .chain(mine.bytes())
                            .eq(theirs.bytes().chain(their.bytes()))
                })
                .then(|| format!("{}{mine}", g.kind))
        })
    };
    let mut mine = None;
    for r in &p.resources {
        if r.api.is_none() || r.kind == g.kind {
            continue;
        }
        let Some(clash) = shared(&r.kind) else {
            continue;
        };
        let mine = mine.get_or_insert_with(|| api_dir_of(&g.group, &g.version));
        if api_dir_of(&r.group, &r.version) == *mine {
            bail!(
                "--kind {}: the API package {mine} already has kind {}, and both would declare the Go type {clash}; \
                 choose another kind name",
                g.kind,
                r.kind
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(lower_camel("App"), "app");
        assert_eq!(lower_camel("MyCronJob"), "myCronJob");
        assert_eq!(lower_camel("URLMap"), "urlMap");
        assert_eq!(lower_camel("DNS"), "dns");
        assert_eq!(kind_var("Type"), "typeObj");
        assert_eq!(kind_var("Func"), "funcObj");
        assert_eq!(kind_var("Map"), "mapObj");
        assert_eq!(kind_var("Range"), "rangeObj");
        assert_eq!(kind_var("Error"), "errorObj");
        assert_eq!(kind_var("Resource"), "resourceObj");
        assert_eq!(kind_var("App"), "app");
        assert_eq!(squash("sea-creatures"), "seacreatures");
        assert_eq!(squash("foo.policy"), "foopolicy");
        assert_eq!(pascal("captain-backup"), "CaptainBackup");
        assert_eq!(
            path_elems("internal/controller", &["bin", "k8s"]),
            r#""..", "..", "bin", "k8s""#
        );
    }

    #[test]
    fn qualified_groups_and_aliases() {
        let g = Gvk {
            group: "crew".into(),
            version: "v1".into(),
            kind: "Captain".into(),
            domain: "testproject.org".into(),
        };
        assert_eq!(g.qgroup(), "crew.testproject.org");
        assert_eq!(g.import_alias(), "crewv1");
        let g = Gvk {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            domain: "".into(),
        };
        assert_eq!(g.qgroup(), "apps");
        assert_eq!(g.import_alias(), "appsv1");
        let g = Gvk {
            group: "".into(),
            version: "v1".into(),
            kind: "Foo".into(),
            domain: "example.com".into(),
        };
        assert_eq!(g.qgroup(), "example.com");
        assert_eq!(g.import_alias(), "examplecomv1");
        assert_eq!(core_domain("networking"), Some("k8s.io"));
        assert_eq!(core_domain("apps"), Some(""));
        assert_eq!(core_domain("ingress"), None);
    }

    #[test]
    fn gvk_rules() {
        assert!(validate_gvk("ingress", "v1beta1", "App", "example.com").is_ok());
        assert!(validate_gvk("", "v1", "App", "example.com").is_ok());
        assert!(validate_gvk("Ingress", "v1", "App", "example.com").is_err());
        assert!(validate_gvk("ingress", "1", "App", "example.com").is_err());
        assert!(validate_gvk("ingress", "v1", "app", "example.com").is_err());
        assert!(validate_gvk("ingress", "v1", "GroupVersion", "example.com").is_err());
        assert!(validate_gvk("-v", "v1", "App", "example.com").is_err());
        assert!(validate_gvk("", "v1", "App", "").is_err());
    }

    /// The allocation-free check finds the same clash as comparing the derived names.
    #[test]
    fn type_collisions_match_derived_names() {
        fn derived(k: &str) -> [String; 4] {
            [
                k.to_string(),
                format!("{k}List"),
                format!("{k}Spec"),
                format!("{k}Status"),
            ]
        }
        let kinds = [
            "A",
            "AList",
            "ASpec",
            "AStatus",
            "AListSpec",
            "B",
            "List",
            "Spec",
            "ListList",
        ];
        for mine in kinds {
            for theirs in kinds {
                for same_dir in [true, false] {
                    let p = Project {
                        resources: vec![crate::project::Resource {
                            api: Some(Default::default()),
                            group: if same_dir { "g" } else { "h" }.into(),
                            kind: theirs.into(),
                            version: "v1".into(),
                            ..Default::default()
                        }],
                        ..Default::default()
                    };
                    let g = Gvk {
                        group: "g".into(),
                        version: "v1".into(),
                        kind: mine.into(),
                        domain: String::new(),
                    };
                    let got = check_type_collisions(&p, |g, v| format!("{g}/{v}"), &g)
                        .err()
                        .map(|e| e.to_string());
                    let want = (same_dir && mine != theirs)
                        .then(|| {
                            let t = derived(theirs);
                            derived(mine).into_iter().find(|n| t.contains(n))
                        })
                        .flatten();
                    match (got, want) {
                        (None, None) => {}
                        (Some(e), Some(name)) => {
                            assert!(e.contains(&format!("Go type {name};")), "{e}")
                        }
                        (g, w) => panic!("{mine} vs {theirs}: got {g:?}, want {w:?}"),
                    }
                }
            }
        }
    }
}
