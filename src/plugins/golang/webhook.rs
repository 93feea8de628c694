//! go/v4's `create webhook`: the webhook and its test (or new sections merged into them), the
//! suite, cmd/main.go, the e2e checks, kustomize and conversion.

use crate::context::{ProjectCtx, MAIN_GO};
use crate::plan::{Edit, IfExists, Next, Plan};
use crate::planning::parts;
use crate::planning::webhook::ResolvedWebhook;
use crate::project::Project;
use crate::resource::{self, CtxInput, ResourceCtx};
use crate::templates;
use anyhow::Result;
use std::path::Path;

const DEFAULT_KUSTOMIZATION: &str = "config/default/kustomization.yaml";

/// The lines that identify a replacement entry copying `field` of the webhook Service into the
/// serving Certificate's DNS names.
fn service_entry(field: &str) -> Vec<String> {
    vec![
        "kind: Service".into(),
        "name: webhook-service".into(),
        format!("fieldPath: {field}"),
        "kind: Certificate".into(),
    ]
}

/// The lines that identify a replacement entry copying `field` of the serving Certificate into
/// the `cert-manager.io/inject-ca-from` annotation of objects of kind `target`.
fn certificate_entry(field: &str, target: &str) -> Vec<String> {
    vec![
        "kind: Certificate".into(),
        format!("fieldPath: {field}"),
        "- .metadata.annotations.[cert-manager.io/inject-ca-from]".into(),
        format!("kind: {target}"),
    ]
}

/// go/v4's files for resolved webhooks: the webhook and its test (or the new sections merged into
/// them), the suite, cmd/main.go, the e2e checks, kustomize and conversion. Adds to `plan`;
/// PROJECT is not touched.
pub fn plan_files(
    root: &Path,
    project: &Project,
    hook: &ResolvedWebhook,
    plan: &mut Plan,
    notes: &mut Vec<String>,
) -> Result<()> {
    let ResolvedWebhook {
        gvk,
        api_path,
        existing,
        ..
    } = hook;
    let (core, external) = (hook.core, hook.external);
    let (version, kind) = (&gvk.version, &gvk.kind);
    let ctx = context(root, project, hook)?;
    let repo = project.repo.clone();
    let hook_file = format!("{}/{}_webhook.go", ctx.webhook_dir, ctx.kind_lower);
    let test_file = format!("{}/{}_webhook_test.go", ctx.webhook_dir, ctx.kind_lower);
    let merge = !hook.force && root.join(&hook_file).exists();
    // Webhook and test files are rendered with every type the kind has after this run; when
    // they already exist (and no --force), the new types are merged into them instead.
    for f in templates::render_tree("webhook", &ctx, |_| true)? {
        let t = f.template.as_str();
        let is_code = t.ends_with("_webhook.go") || t.ends_with("_webhook_test.go");
        if is_code && merge {
            continue;
        }
        if t == NETWORK_POLICY_FILE {
            network_policy(plan, f.content);
            continue;
        }
        let policy = match t {
            _ if is_code => {
                if hook.force {
                    IfExists::Overwrite
                } else {
                    IfExists::Error
                }
            }
            "config/webhook/kustomization.yaml" if hook.force => IfExists::Overwrite,
            _ => IfExists::Skip,
        };
        plan.create(f.path, f.content, policy);
    }
    if merge {
        merge_sections(plan, &ctx, &hook_file, &test_file, hook, &repo)?;
    }

    // Webhook suite: the API scheme and the setup call.
    let suite = format!("{}/webhook_suite_test.go", ctx.webhook_dir);
    let suite_scheme = templates::render("fragments/suite_scheme.go", &ctx)?;
    let suite_setup = templates::render("fragments/webhook_suite_setup.go", &ctx)?;
    plan.part(parts::ENVTEST_SUITE, |plan| {
        if !core {
            plan.go_import(&suite, Some(&ctx.import_alias), api_path, &repo);
            plan.above_marker(&suite, "scheme", vec![suite_scheme]);
        }
        plan.above_marker(&suite, "webhook", vec![suite_setup]);
    });

    // cmd/main.go.
    let hook_alias = ctx.webhook_alias.clone();
    if external && existing.is_none() {
        super::api::plan_main_scheme(plan, &ctx, api_path, &repo)?;
    }
    // The readiness check comes with the first webhook (a fragment already present is not
    // inserted again), above every webhook's setup.
    let setup = vec![
        templates::render("fragments/main_webhook_readiness.go", &ctx)?,
        templates::render("fragments/main_setup_webhook.go", &ctx)?,
    ];
    plan.part(parts::MANAGER_SETUP, |plan| {
        plan.go_import(
            MAIN_GO,
            Some(&hook_alias),
            &format!("{repo}/{}", ctx.webhook_dir),
            &repo,
        );
        plan.above_marker(MAIN_GO, "builder", setup);
    });

    // test/e2e checks: left out, and said, when the project has no such file or markers.
    let e2e = "test/e2e/e2e_test.go";
    {
        let fragment = |name: &str| templates::render(&format!("fragments/{name}.go"), &ctx);
        let mut checks = vec![fragment("e2e_webhooks_checks_cert")?];
        let mut ready = vec![];
        if hook.defaulting || hook.programmatic_validation {
            ready.push(fragment("e2e_readiness_webhook_endpoints")?);
        }
        // Each webhook type asked for: its check, and what the metrics test waits for first.
        for (asked, check, readiness) in [
            (
                hook.defaulting,
                "e2e_webhooks_checks_mutating",
                Some("e2e_readiness_mutating_ca"),
            ),
            (
                hook.programmatic_validation,
                "e2e_webhooks_checks_validating",
                Some("e2e_readiness_validating_ca"),
            ),
            (hook.conversion, "e2e_webhooks_checks_conversion", None),
        ] {
            if asked {
                checks.push(fragment(check)?);
                if let Some(r) = readiness {
                    ready.push(fragment(r)?);
                }
            }
        }
        plan.part(parts::E2E_TESTS, |plan| {
            plan.above_marker(e2e, "e2e-webhooks-checks", checks);
            if !ready.is_empty() {
                plan.above_marker(e2e, "e2e-metrics-webhooks-readiness", ready);
            }
        });
    }

    // Kustomize: switch webhooks and cert-manager on in config/default.
    if crate::releases::active_version() == Some("0.1.0") {
        // Scaffolding again as release 0.1.0 did (the ancestor of `alpha update`).
        release_0_1_0::enable_default_kustomize(plan, &ctx, hook.conversion)?;
    } else {
        enable_default_kustomize(plan, &ctx)?;
    }
    network_policy_entry(plan);

    if hook.conversion {
        plan_crd_conversion_patch(plan, &ctx)?;
        conversion_files(plan, project, &ctx, &hook.spoke, hook.force)?;
        notes.push(format!(
            "Conversion: {kind} {version} is now the hub (storage version). Fill in ConvertTo and ConvertFrom \
             in each spoke's {}_conversion.go.",
            ctx.kind_lower
        ));
    }
    if core {
        notes.push(
            "warning: a webhook on a core type intercepts every such object in the cluster, including the \
             manager's own Pods; scope it (namespaceSelector/objectSelector) so the manager can still start."
                .into(),
        );
    }

    Ok(())
}

/// The template context of resolved webhooks: what the kind's webhook files hold once the
/// command is done (the types asked for and those before).
pub fn context(root: &Path, project: &Project, hook: &ResolvedWebhook) -> Result<ResourceCtx> {
    let (existing, had) = (&hook.existing, &hook.had);
    let pctx = ProjectCtx::load(root, project)?;
    let mut ctx = ResourceCtx::new(CtxInput {
        project,
        pctx,
        gvk: &hook.gvk,
        plural: &hook.plural,
        api_path: &hook.api_path,
        cluster_scoped: existing
            .as_ref()
            .and_then(|r| r.api.as_ref())
            .is_some_and(|a| !a.namespaced),
        core: hook.core,
        external: hook.external,
        controller_name: None,
        has_api: existing.as_ref().is_some_and(|r| r.api.is_some()),
    });
    ctx.defaulting = hook.defaulting || had.defaulting;
    ctx.validation = hook.programmatic_validation || had.validation;
    ctx.conversion = hook.conversion || had.conversion;
    let dpath = hook
        .defaulting_path
        .clone()
        .unwrap_or(had.defaulting_path.clone());
    let vpath = hook
        .validation_path
        .clone()
        .unwrap_or(had.validation_path.clone());
    if !dpath.is_empty() {
        ctx.mutating_path = dpath.clone();
        ctx.custom_defaulting_path = dpath;
    }
    if !vpath.is_empty() {
        ctx.validating_path = vpath.clone();
        ctx.custom_validation_path = vpath;
    }
    Ok(ctx)
}

/// The kind's webhook file and its test: the files `create webhook` writes whole the first
/// time and merges later types into.
pub fn code_files(ctx: &ResourceCtx) -> [String; 2] {
    [
        format!("{}/{}_webhook.go", ctx.webhook_dir, ctx.kind_lower),
        format!("{}/{}_webhook_test.go", ctx.webhook_dir, ctx.kind_lower),
    ]
}

/// The kind's webhook and test files as a series of `create webhook` commands leaves them, one
/// command per set of types in `steps`: the first writes them, each later one merges its types
/// in (as `plan_files` does when the files exist). `hook` gives the kind; its types are
/// replaced by each step's.
pub fn code_after(
    root: &Path,
    project: &Project,
    hook: &ResolvedWebhook,
    steps: &[crate::project::Webhooks],
) -> Result<std::collections::BTreeMap<String, String>> {
    let mut files = std::collections::BTreeMap::new();
    let mut had = crate::project::Webhooks::default();
    for (i, step) in steps.iter().enumerate() {
        let mut h = hook.clone();
        h.defaulting = step.defaulting;
        h.programmatic_validation = step.validation;
        h.conversion = step.conversion;
        h.spoke = step.spoke.clone();
        h.defaulting_path =
            Some(step.defaulting_path.clone()).filter(|p| step.defaulting && !p.is_empty());
        h.validation_path =
            Some(step.validation_path.clone()).filter(|p| step.validation && !p.is_empty());
        h.had = had.clone();
        let ctx = context(root, project, &h)?;
        let [hook_file, test_file] = code_files(&ctx);
        if i == 0 {
            for f in templates::render_tree("webhook", &ctx, |t| {
                t.ends_with("_webhook.go") || t.ends_with("_webhook_test.go")
            })? {
                files.insert(f.path.to_string_lossy().into_owned(), f.content);
            }
        } else {
            let mut plan = Plan::default();
            merge_sections(&mut plan, &ctx, &hook_file, &test_file, &h, &project.repo)?;
            for (path, text) in files.iter_mut() {
                if let Some(t) = crate::plan::undo::simulate_from(
                    &plan,
                    Path::new(path),
                    Some(std::mem::take(text)),
                ) {
                    *text = t;
                }
            }
        }
        had.defaulting |= step.defaulting;
        had.validation |= step.validation;
        had.conversion |= step.conversion;
        if step.defaulting {
            had.defaulting_path = step.defaulting_path.clone();
        }
        if step.validation {
            had.validation_path = step.validation_path.clone();
        }
        if step.conversion {
            had.spoke = step.spoke.clone();
        }
    }
    Ok(files)
}

/// The webhook tree's network policy, as a template file.
pub const NETWORK_POLICY_FILE: &str = "config/network-policy/allow-webhook-traffic.yaml";

/// The network policy that lets webhook traffic in (shared with the Rust layout); with its
/// entry ([`network_policy_entry`]), left out whole in a project without config/network-policy.
pub fn network_policy(plan: &mut Plan, content: String) {
    plan.part(parts::NETWORK_POLICY, |plan| {
        plan.create(NETWORK_POLICY_FILE, content, IfExists::Skip)
    });
}

/// The network policy's entry in config/network-policy/kustomization.yaml.
pub fn network_policy_entry(plan: &mut Plan) {
    plan.part(parts::NETWORK_POLICY, |plan| {
        plan.update(
            "config/network-policy/kustomization.yaml",
            Edit::AfterLine {
                anchor: "resources:".into(),
                text: "- allow-webhook-traffic.yaml".into(),
            },
        )
    });
}

/// The conversion webhook's patch of the CRD in config/crd/kustomization.yaml (shared with the
/// Rust layout).
pub fn plan_crd_conversion_patch(plan: &mut Plan, ctx: &ResourceCtx) -> Result<()> {
    let crd_patch = templates::render("fragments/kustomize_crd_webhook_patch.yaml", ctx)?;
    plan.part(parts::CRD_CONVERSION, |plan| {
        plan.above_marker(
            "config/crd/kustomization.yaml",
            "crdkustomizewebhookpatch",
            vec![crd_patch],
        );
        plan.update(
            "config/crd/kustomization.yaml",
            Edit::Uncomment {
                block: "configurations:\n- kustomizeconfig.yaml".into(),
                required: false,
            },
        );
    });
    Ok(())
}

/// Switch on, in config/default/kustomization.yaml, what webhooks need: the webhook and
/// cert-manager trees, the manager patch and the CA-injection replacements (shared with the Rust
/// layout, whose kustomize tree is go/v4's). The blocks are found by their YAML, whether the file
/// is opbuilder's or Kubebuilder's.
pub fn enable_default_kustomize(plan: &mut Plan, ctx: &ResourceCtx) -> Result<()> {
    plan.part(parts::DEFAULT_WEBHOOKS, |plan| {
        enable_default_webhooks(plan, ctx)
    })
}

fn enable_default_webhooks(plan: &mut Plan, ctx: &ResourceCtx) -> Result<()> {
    for block in [
        "- ../webhook",
        "- ../certmanager",
        "patches:",
        "- path: manager_webhook_patch.yaml\n  target:\n    kind: Deployment",
        "replacements:",
    ] {
        plan.update(
            DEFAULT_KUSTOMIZATION,
            Edit::Uncomment {
                block: block.into(),
                required: false,
            },
        );
    }
    let mut entries = vec![
        service_entry(".metadata.name"),
        service_entry(".metadata.namespace"),
    ];
    let mut targets = vec![];
    if ctx.defaulting {
        targets.push("MutatingWebhookConfiguration");
    }
    if ctx.validation {
        targets.push("ValidatingWebhookConfiguration");
    }
    if ctx.conversion {
        // The CRD becomes a target of both Certificate entries (inserted commented, in the form
        // Kubebuilder writes), then those entries are enabled with everything they hold.
        for (marker, fragment) in [
            ("crdkustomizecainjectionns", "ns"),
            ("crdkustomizecainjectionname", "name"),
        ] {
            let select = templates::render(
                &format!("fragments/kustomize_default_cainjection_{fragment}.yaml"),
                ctx,
            )?;
            plan.part(parts::DEFAULT_CONVERSION, |plan| {
                plan.above_marker(DEFAULT_KUSTOMIZATION, marker, vec![select])
            });
        }
        targets.push("CustomResourceDefinition");
    }
    for target in targets {
        entries.push(certificate_entry(".metadata.namespace", target));
        entries.push(certificate_entry(".metadata.name", target));
    }
    for needs in entries {
        let crd = needs.iter().any(|l| l == "kind: CustomResourceDefinition");
        let enable = |plan: &mut Plan| {
            plan.update(
                DEFAULT_KUSTOMIZATION,
                Edit::EnableEntry {
                    start: "- source:".into(),
                    needs,
                },
            )
        };
        if crd {
            // The CRD's entries come with its selects, above.
            plan.part(parts::DEFAULT_CONVERSION, enable);
        } else {
            enable(plan);
        }
    }
    Ok(())
}

/// The infix of the webhook types' names: releases 0.1.0 and 0.2.0 (Kubebuilder v4.15's
/// layout) named them `<Kind>CustomDefaulter` and `<Kind>CustomValidator`, Kubebuilder v4.16
/// and opbuilder 0.3.0 `<Kind>Defaulter` and `<Kind>Validator`. A section merged into an
/// existing webhook file must name the types that file's templates declared.
pub fn type_infix() -> &'static str {
    match crate::releases::active_version() {
        Some("0.1.0" | "0.2.0") => "Custom",
        _ => "",
    }
}

/// Planning of release 0.1.0 where it differs from today's, so that `alpha update` can scaffold
/// a project again exactly as 0.1.0 wrote it (its conversion CA injection stayed commented out,
/// a bug fixed since). e2e/scripts/alpha-update.sh compares the result with the real 0.1.0
/// binary's output.
mod release_0_1_0 {
    use crate::plan::{Edit, Plan};
    use crate::plugins::golang::webhook::DEFAULT_KUSTOMIZATION;
    use crate::resource::ResourceCtx;
    use crate::templates;
    use anyhow::Result;

    fn is_commented_yaml(line: &str) -> bool {
        let t = line.trim_start();
        match t.strip_prefix('#') {
            Some(r) => {
                !t.contains("+kubebuilder:scaffold:")
                    && (r.starts_with("  ") || r.starts_with(|c: char| !c.is_whitespace()))
            }
            None => false,
        }
    }

    /// The commented block of `template` starting at the line that holds `header`, uncommented.
    fn commented_block(template: &str, header: &str) -> Option<String> {
        let lines: Vec<&str> = template.lines().collect();
        let start = lines
            .iter()
            .position(|l| is_commented_yaml(l) && l.contains(header))?;
        let out: Vec<String> = lines[start..]
            .iter()
            .take_while(|l| is_commented_yaml(l))
            .map(|l| {
                let t = l.trim_start();
                format!("{}{}", &l[..l.len() - t.len()], &t[1..])
            })
            .collect();
        Some(out.join("\n"))
    }

    pub fn enable_default_kustomize(
        plan: &mut Plan,
        ctx: &ResourceCtx,
        conversion_now: bool,
    ) -> Result<()> {
        let default_template =
            templates::render_tree("init", &ctx.project, |t| t == DEFAULT_KUSTOMIZATION)?
                .pop()
                .map(|f| f.content)
                .unwrap_or_default();
        let mut blocks: Vec<&str> = vec![
            "- ../webhook",
            "- ../certmanager",
            "- path: manager_webhook_patch.yaml",
            "replacements:",
            "Webhook certificate DNS names",
        ];
        if ctx.defaulting {
            blocks.push("Mutating webhook CA injection");
        }
        if ctx.validation {
            blocks.push("Validating webhook CA injection");
        }
        if ctx.conversion {
            blocks.push("Conversion webhook CA injection: Certificate namespace");
            blocks.push("Conversion webhook CA injection: Certificate name");
        }
        for header in blocks {
            let block = commented_block(&default_template, header)
                .filter(|b| !b.trim().is_empty())
                .unwrap_or_else(|| header.to_string());
            plan.update(
                DEFAULT_KUSTOMIZATION,
                Edit::Uncomment {
                    block,
                    required: false,
                },
            );
        }
        if conversion_now {
            for (marker, fragment) in [
                ("crdkustomizecainjectionns", "ns"),
                ("crdkustomizecainjectionname", "name"),
            ] {
                let select = templates::render(
                    &format!("fragments/kustomize_default_cainjection_{fragment}.yaml"),
                    ctx,
                )?;
                plan.above_marker(DEFAULT_KUSTOMIZATION, marker, vec![select]);
            }
        }
        Ok(())
    }
}

/// What comes next after go/v4's `create webhook` planned `plan`: the webhook file to fill in,
/// and each spoke's conversion file (the hub's is done).
pub fn next_step(plan: &Plan, hook: &ResolvedWebhook) -> Next {
    let mut todo = vec![];
    if let Some(f) = plan.written("_webhook.go").first() {
        todo.push(format!("the webhook logic in {f}"));
    }
    let hub = format!("/{}/", hook.gvk.version);
    let spokes: Vec<String> = plan
        .written("_conversion.go")
        .into_iter()
        .filter(|f| !f.contains(&hub))
        .collect();
    if !spokes.is_empty() {
        todo.push(format!(
            "ConvertTo and ConvertFrom in {}",
            spokes.join(" and ")
        ));
    }
    if todo.is_empty() {
        todo.push("the webhook logic".into());
    }
    Next::new(
        format!("fill in {}, then run", todo.join(", and ")),
        &[if hook.conversion {
            "make generate manifests"
        } else {
            "make manifests"
        }],
    )
}

/// Hub file, storage-version marker, and one conversion file per spoke.
fn conversion_files(
    plan: &mut Plan,
    project: &Project,
    ctx: &ResourceCtx,
    spokes: &[String],
    force: bool,
) -> Result<()> {
    let policy = if force {
        IfExists::Overwrite
    } else {
        IfExists::Skip
    };
    for f in templates::render_tree("webhook-conversion", ctx, |_| true)? {
        plan.create(f.path, f.content, policy);
    }
    let types = format!("{}/{}_types.go", ctx.api_dir, ctx.kind_lower);
    plan.update(
        types,
        Edit::AfterLine {
            anchor: "// +kubebuilder:object:root=true".into(),
            text: "// +kubebuilder:storageversion".into(),
        },
    );
    for s in spokes {
        let mut sc = ctx.clone();
        sc.hub_import_alias = ctx.import_alias.clone();
        sc.hub_api_path = ctx.api_path.clone();
        sc.spoke_version = s.clone();
        // The spoke's types are where PROJECT says they are.
        sc.spoke_dir = project
            .find(&ctx.group, s, &ctx.kind)
            .and_then(|r| {
                let (_, path) = resource::recorded_domain_and_path(project, r);
                resource::dir_in_module(project, &path)
            })
            .unwrap_or_else(|| resource::layout(project, &ctx.group, s).api_dir);
        for f in templates::render_tree("webhook-spoke", &sc, |_| true)? {
            plan.create(f.path, f.content, policy);
        }
    }
    Ok(())
}

/// Add newly requested webhook types to existing webhook and test files.
fn merge_sections(
    plan: &mut Plan,
    ctx: &ResourceCtx,
    hook_file: &str,
    test: &str,
    hook: &ResolvedWebhook,
    repo: &str,
) -> Result<()> {
    let mut add = |kind: &str, builder: String| -> Result<()> {
        let section = templates::render(&format!("fragments/webhook/{kind}.go"), ctx)?;
        plan.update(
            hook_file,
            Edit::Append {
                text: format!("\n{}", section.trim_start_matches('\n')),
            },
        );
        plan.update(
            hook_file,
            Edit::BeforeLine {
                anchor: "Complete()".into(),
                text: builder,
            },
        );
        let tests = templates::render(&format!("fragments/webhook/{kind}_test.go"), ctx)?;
        plan.update(
            test,
            Edit::Append {
                text: format!("\n{}", tests.trim_start_matches('\n')),
            },
        );
        Ok(())
    };
    if hook.defaulting {
        let mut b = format!("WithDefaulter(&{}{}Defaulter{{}}).", ctx.kind, type_infix());
        if !ctx.custom_defaulting_path.is_empty() {
            b.push_str(&format!(
                "\nWithDefaulterCustomPath(\"{}\").",
                ctx.custom_defaulting_path
            ));
        }
        add("defaulter", b)?;
    }
    if hook.programmatic_validation {
        let mut b = format!("WithValidator(&{}{}Validator{{}}).", ctx.kind, type_infix());
        if !ctx.custom_validation_path.is_empty() {
            b.push_str(&format!(
                "\nWithValidatorCustomPath(\"{}\").",
                ctx.custom_validation_path
            ));
        }
        add("validator", b)?;
    }
    if hook.defaulting || hook.programmatic_validation {
        for import in [
            "context",
            "sigs.k8s.io/controller-runtime/pkg/webhook/admission",
        ] {
            plan.go_import(hook_file, None, import, repo);
        }
    }
    if hook.conversion {
        let tests = templates::render("fragments/webhook/conversion_test.go", ctx)?;
        plan.update(
            test,
            Edit::Append {
                text: format!("\n{}", tests.trim_start_matches('\n')),
            },
        );
        for import in [
            "k8s.io/apimachinery/pkg/runtime",
            "sigs.k8s.io/controller-runtime/pkg/conversion",
        ] {
            plan.go_import(test, None, import, repo);
        }
    }
    Ok(())
}
