//! typed-clients.opbuilder.io/v1-alpha: typed Go clients for the project's own APIs, made by
//! k8s.io/code-generator (a clientset, listers, informers and apply configurations in
//! pkg/generated), next to controller-runtime's client. Kubebuilder has no such plugin.
//!
//! The plugin adds what code-generator needs to each API package (`+genclient` on every kind,
//! `+genclient:nonNamespaced` on cluster-scoped ones; doc.go with `+groupName`, and
//! `+groupGoName` where the group is not a Go identifier, since code-generator reads package
//! tags from doc.go only; the `Resource`/`Kind` helpers in client_helpers.go), the scripts
//! hack/update-codegen.sh and hack/verify-codegen.sh (`scaffolds/typed-clients/`), and the
//! Makefile targets `generate-client` and `verify-client`; `make generate` runs the first.
//!
//! It is recorded under PROJECT's `plugins:` only (not in `layout`, which Kubebuilder would
//! refuse), and runs on every later `create api` of a project that records it.

use crate::context::ProjectCtx;
use crate::plan::{Edit, IfExists};
use crate::planning::api::ResolvedResource;
use crate::planning::delete::Undo;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::templates;
use anyhow::Result;
use serde::Serialize;

pub const KEY: &str = "typed-clients.opbuilder.io/v1-alpha";

pub struct TypedClients;

/// The plugin's PROJECT section: empty (`{}`); its presence keeps the plugin on.
#[derive(Serialize)]
struct Section {}

/// What client_helpers.go is rendered with.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HelperCtx {
    pub boilerplate: String,
    pub version: String,
    pub api_dir: String,
    pub qgroup: String,
    /// The package has no `SchemeGroupVersion` (API packages scaffolded by old tools).
    pub define_scheme: bool,
    /// `+groupGoName`, when the group needs one (see [`group_go_name`]); or "".
    pub group_go_name: String,
}

const MAKE_GENERATE: &str = "\t\"$(MAKE)\" --no-print-directory generate-client";

const MAKE_TARGETS: &str = "
##@ Typed clients

.PHONY: generate-client
generate-client: ## Regenerate the typed clientset, listers, informers and apply configurations in pkg/generated.
\tbash hack/update-codegen.sh

.PHONY: verify-client
verify-client: ## Fail when pkg/generated is out of date with the API types.
\tbash hack/verify-codegen.sh
";

/// One API (a kind of this project) that gets a typed client.
pub struct Api<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub domain: &'a str,
    pub api_dir: &'a str,
    pub cluster_scoped: bool,
}

impl Api<'_> {
    fn qgroup(&self) -> String {
        match (self.group.is_empty(), self.domain.is_empty()) {
            (true, _) => self.domain.to_string(),
            (false, true) => self.group.to_string(),
            (false, false) => format!("{}.{}", self.group, self.domain),
        }
    }
}

/// The `+groupGoName` a group needs: code-generator names a group's Go identifiers after the
/// first label of its qualified name, which is not an identifier when it holds a hyphen, and is
/// shared by `foo` and `foo.bar`. `None` when that default is right.
pub fn group_go_name(group: &str, qgroup: &str) -> Option<String> {
    let first = qgroup.split('.').next().unwrap_or_default();
    if !group.contains('.') && !first.contains('-') {
        return None;
    }
    let source = if group.is_empty() { first } else { group };
    Some(
        source
            .split(['.', '-'])
            .filter(|p| !p.is_empty())
            .map(|p| {
                let mut c = p.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect(),
    )
}

/// The scripts and Makefile targets, and the PROJECT section.
fn enable(cx: &mut Cx) -> Result<()> {
    cx.project.set_plugin_config(KEY, &Section {})?;
    for f in templates::render_tree("typed-clients", &(), |t| t.starts_with("hack/"))? {
        cx.plan.create(f.path, f.content, IfExists::Overwrite);
    }
    cx.plan.update(
        "Makefile",
        Edit::AfterRecipe {
            target: "generate".into(),
            text: MAKE_GENERATE.into(),
        },
    );
    cx.plan.update(
        "Makefile",
        Edit::Append {
            text: MAKE_TARGETS.into(),
        },
    );
    Ok(())
}

/// Plan the markers and helpers one kind needs.
pub fn plan_api(cx: &mut Cx, api: &Api) -> Result<()> {
    let mut tags = vec!["// +genclient".to_string()];
    if api.cluster_scoped {
        tags.push("// +genclient:nonNamespaced".into());
    }
    cx.plan.update(
        format!("{}/{}_types.go", api.api_dir, api.kind.to_ascii_lowercase()),
        Edit::TypeTags {
            type_name: api.kind.to_string(),
            tags,
        },
    );
    let qgroup = api.qgroup();
    let gv_file = format!("{}/groupversion_info.go", api.api_dir);
    // A groupversion_info.go planned by this command is opbuilder's, which defines it.
    let define_scheme = std::fs::read_to_string(cx.root.join(&gv_file))
        .is_ok_and(|t| !t.contains("SchemeGroupVersion"));
    let ctx = HelperCtx {
        boilerplate: ProjectCtx::load(cx.root, cx.project)?.boilerplate,
        version: api.version.to_string(),
        api_dir: api.api_dir.to_string(),
        group_go_name: group_go_name(api.group, &qgroup).unwrap_or_default(),
        qgroup,
        define_scheme,
    };
    for f in templates::render_tree("typed-clients", &ctx, |t| !t.starts_with("hack/"))? {
        cx.plan.create(f.path, f.content, IfExists::Skip);
    }
    Ok(())
}

impl Plugin for TypedClients {
    fn key(&self) -> &'static str {
        KEY
    }

    fn follows_project(&self) -> bool {
        true
    }

    fn init(&self, cx: &mut Cx, _boilerplate: Option<&str>) -> Result<()> {
        enable(cx)?;
        cx.notes.push(
            "Typed clients are on: every API created from now on gets a clientset, lister and informer in \
             pkg/generated (make generate-client; make verify-client checks them)."
                .into(),
        );
        Ok(())
    }

    fn create_api(&self, cx: &mut Cx, res: &ResolvedResource) -> Result<()> {
        if !res.do_resource || res.core || res.external {
            return Ok(());
        }
        if cx
            .project
            .plugin_config::<serde_yaml::Value>(KEY)?
            .is_none()
        {
            enable(cx)?;
        }
        let layout = crate::resource::layout(cx.project, &res.gvk.group, &res.gvk.version);
        plan_api(
            cx,
            &Api {
                group: &res.gvk.group,
                version: &res.gvk.version,
                kind: &res.gvk.kind,
                domain: &res.gvk.domain,
                api_dir: &layout.api_dir,
                cluster_scoped: !res.namespaced,
            },
        )?;
        Ok(())
    }

    fn delete_api(&self, cx: &mut Cx, res: &ResolvedResource, undo: &mut Undo) -> Result<()> {
        if !res.do_resource || res.core || res.external {
            return Ok(());
        }
        let layout = crate::resource::layout(cx.project, &res.gvk.group, &res.gvk.version);
        plan_api(
            cx,
            &Api {
                group: &res.gvk.group,
                version: &res.gvk.version,
                kind: &res.gvk.kind,
                domain: &res.gvk.domain,
                api_dir: &layout.api_dir,
                cluster_scoped: !res.namespaced,
            },
        )?;
        // The clientset, listers and informers code-generator wrote for the kind.
        let generated = std::path::Path::new("pkg/generated");
        if cx.root.join(generated).is_dir() {
            undo.generated("pkg/generated", false, "make generate");
        }
        Ok(())
    }

    fn edit(&self, cx: &mut Cx, _args: &EditArgs) -> Result<()> {
        enable(cx)?;
        let prefix = format!("{}/", cx.project.repo);
        let apis: Vec<(String, String, String, String, String, bool)> = cx
            .project
            .resources
            .iter()
            .filter(|r| r.api.is_some() && !r.core && !r.external)
            .filter_map(|r| {
                let dir = r.path.strip_prefix(&prefix)?.to_string();
                Some((
                    r.group.to_string(),
                    r.version.to_string(),
                    r.kind.clone(),
                    r.domain.to_string(),
                    dir,
                    !r.api.as_ref().is_some_and(|a| a.namespaced),
                ))
            })
            .collect();
        for (group, version, kind, domain, api_dir, cluster_scoped) in &apis {
            let types = format!("{api_dir}/{}_types.go", kind.to_ascii_lowercase());
            if !cx.root.join(&types).is_file() {
                cx.notes.push(format!(
                    "warning: {types} is missing, so {kind} ({group}/{version}) gets no typed client; add `// +genclient` \
                     above its type by hand"
                ));
                continue;
            }
            plan_api(
                cx,
                &Api {
                    group,
                    version,
                    kind,
                    domain,
                    api_dir,
                    cluster_scoped: *cluster_scoped,
                },
            )?;
        }
        cx.notes.push(format!(
            "Typed clients are on for {} API kind(s). Next: make generate-client (writes pkg/generated), then commit it; \
             make verify-client checks it is current. New APIs get clients too.",
            apis.len()
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_go_names_only_where_code_generator_needs_them() {
        assert_eq!(group_go_name("ship", "ship.example.com"), None);
        assert_eq!(group_go_name("", "example.com"), None);
        assert_eq!(
            group_go_name("my-group", "my-group.example.com").as_deref(),
            Some("MyGroup")
        );
        assert_eq!(
            group_go_name("foo.policy", "foo.policy.example.com").as_deref(),
            Some("FooPolicy")
        );
        assert_eq!(
            group_go_name("", "my-domain.io").as_deref(),
            Some("MyDomain")
        );
    }

    #[test]
    fn helpers_render_with_and_without_scheme_group_version() {
        for define in [false, true] {
            let ctx = HelperCtx {
                boilerplate: String::new(),
                version: "v1".into(),
                api_dir: "api/ship/v1".into(),
                qgroup: "ship.example.com".into(),
                define_scheme: define,
                group_go_name: if define {
                    "ShipFleet".into()
                } else {
                    String::new()
                },
            };
            let f =
                templates::render_tree("typed-clients", &ctx, |t| !t.starts_with("hack/")).unwrap();
            assert_eq!(f.len(), 2);
            assert_eq!(f[0].path.to_str(), Some("api/ship/v1/client_helpers.go"));
            assert!(f[0].content.starts_with("package v1\n"));
            assert_eq!(
                f[0].content
                    .contains("var SchemeGroupVersion = GroupVersion"),
                define
            );
            assert!(f[0]
                .content
                .contains("func Resource(resource string) schema.GroupResource {"));
            assert_eq!(f[1].path.to_str(), Some("api/ship/v1/doc.go"));
            assert!(f[1].content.contains("// +groupName=ship.example.com\n"));
            assert_eq!(
                f[1].content
                    .contains("// +groupGoName=ShipFleet\n\npackage v1\n"),
                define
            );
        }
    }
}
