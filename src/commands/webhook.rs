//! `opbuilder create webhook`: defaulting, validating and conversion webhooks for a kind.

use super::api::MAIN_GO;
use crate::context::ProjectCtx;
use crate::error::{bad_flag, usage};
use crate::flect;
use crate::out::outln;
use crate::plan::{Edit, IfExists, Plan};
use crate::plugins;
use crate::post::{self, Step};
use crate::project::{Project, Resource};
use crate::resource::{self, CtxInput, Gvk, ResourceCtx};
use crate::templates;
use crate::validate;
use anyhow::{bail, Result};
use clap::Args;
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

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  opbuilder create webhook --group ingress --version v1beta1 --kind App \\
      --defaulting --programmatic-validation
  opbuilder create webhook --group ingress --version v1beta1 --kind App \\
      --programmatic-validation --validation-path /validate-app
  opbuilder create webhook --group batch --version v1 --kind MyCronJob \\
      --conversion --spoke v2
  opbuilder create webhook --group core --version v1 --kind Pod \\
      --defaulting")]
pub struct WebhookArgs {
    #[command(flatten)]
    pub res: super::ResourceFlags,
    /// A mutating webhook that sets defaults
    #[arg(long)]
    pub defaulting: bool,
    /// A validating webhook that accepts or rejects objects
    #[arg(long)]
    pub programmatic_validation: bool,
    /// A conversion webhook; this version becomes the hub (storage) version
    #[arg(long)]
    pub conversion: bool,
    /// With --conversion: versions converted to and from the hub (comma-separated, each already in PROJECT)
    #[arg(long, value_delimiter = ',', value_name = "VERSIONS")]
    pub spoke: Vec<String>,
    /// Custom path of the defaulting webhook (with --defaulting)
    #[arg(long, value_name = "PATH")]
    pub defaulting_path: Option<String>,
    /// Custom path of the validating webhook (with --programmatic-validation)
    #[arg(long, value_name = "PATH")]
    pub validation_path: Option<String>,
    /// Scaffold a webhook type again (replaces the webhook and test files)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub run: super::RunFlags,
}

fn check_path_flag(flag: &str, value: &str) -> Result<()> {
    let ok = value.starts_with('/')
        && value.len() > 1
        && value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-/._".contains(c));
    if ok {
        Ok(())
    } else {
        Err(bad_flag(
            flag,
            value,
            "must be a URL path: '/' followed by lower-case letters, digits, '-', '.', '_' and '/'",
            "/validate-app",
        ))
    }
}

pub fn plan(root: &Path, args: &WebhookArgs) -> Result<(Plan, Vec<String>)> {
    let flag = plugins::parse_flag(args.run.plugins.as_deref())?;
    let mut project = Project::load(root)?;
    let chain = plugins::Chain::for_command(Some(&project), flag, plugins::Command::CreateWebhook)?;
    let group = args.res.group.trim().to_string();
    let version = args.res.version.trim().to_string();
    let kind = args.res.kind.trim().to_string();
    resource::validate_gvk(&group, &version, &kind, &project.domain)?;
    if !(args.defaulting || args.programmatic_validation || args.conversion) {
        return Err(usage(
            "choose at least one webhook type: --defaulting, --programmatic-validation or --conversion; \
             for example: --defaulting --programmatic-validation",
        ));
    }
    if let Some(p) = &args.defaulting_path {
        if !args.defaulting {
            return Err(usage(
                "--defaulting-path sets the path of the defaulting webhook: add --defaulting",
            ));
        }
        check_path_flag("--defaulting-path", p)?;
    }
    if let Some(p) = &args.validation_path {
        if !args.programmatic_validation {
            return Err(usage("--validation-path sets the path of the validating webhook: add --programmatic-validation"));
        }
        check_path_flag("--validation-path", p)?;
    }
    if !args.spoke.is_empty() && !args.conversion {
        return Err(usage(
            "--spoke lists the versions a conversion webhook converts: add --conversion",
        ));
    }
    if let Some(p) = &args.res.plural {
        resource::validate_plural(p, true)?;
    }
    for s in &args.spoke {
        validate::api_version(s).map_err(|r| bad_flag("--spoke", s, &r, "v2"))?;
        if *s == version {
            return Err(bad_flag(
                "--spoke",
                s,
                "a spoke must differ from the hub version given in --version",
                "v2",
            ));
        }
    }
    if args.res.external_api_module.is_some() && args.res.external_api_path.is_none() {
        return Err(usage("--external-api-module needs --external-api-path (the package to import from that module)"));
    }

    let existing = project.find(&group, &version, &kind).cloned();
    for s in &args.spoke {
        if project
            .find(&group, s, &kind)
            .is_none_or(|r| r.api.is_none())
        {
            bail!(
                "--spoke {s}: PROJECT has no API {group}/{s} {kind}; create it first with \
                 `opbuilder create api --group {group} --version {s} --kind {kind}`"
            );
        }
    }
    let (core, external, domain, api_path) = match (&existing, &args.res.external_api_path) {
        (Some(r), _) => (r.core, r.external, r.domain.clone(), r.path.clone()),
        (None, Some(p)) => (
            false,
            true,
            args.res.external_api_domain.clone().unwrap_or_default(),
            p.clone(),
        ),
        (None, None) => match resource::core_domain(&group) {
            Some(d) => (
                true,
                false,
                d.to_string(),
                format!("k8s.io/api/{group}/{version}"),
            ),
            None => {
                let q = Gvk {
                    group: group.clone(),
                    version: version.clone(),
                    kind: kind.clone(),
                    domain: project.domain.clone(),
                }
                .qgroup();
                bail!(
                    "no API {q}/{version} {kind} in this project: run `opbuilder create api --group {group} --version {version} --kind {kind}` first, \
                     or pass --external-api-path for a type from another module"
                );
            }
        },
    };
    if args.conversion && (core || external || existing.as_ref().is_none_or(|r| r.api.is_none())) {
        bail!("--conversion needs an API whose types live in this project; {group}/{version} {kind} is not one");
    }
    let default_plural = flect::pluralize(&kind.to_ascii_lowercase());
    let recorded = existing.as_ref().map(|r| {
        if r.plural.is_empty() {
            default_plural.clone()
        } else {
            r.plural.clone()
        }
    });
    let plural = match (&args.res.plural, &recorded) {
        (Some(p), Some(r)) if p != r => {
            bail!("--plural {p:?} differs from the plural {r:?} recorded for {kind} in PROJECT; drop --plural or use {r:?}")
        }
        (Some(p), _) => p.clone(),
        (None, Some(r)) => r.clone(),
        (None, None) => default_plural.clone(),
    };
    let had = existing
        .as_ref()
        .and_then(|r| r.webhooks.clone())
        .unwrap_or_default();
    for (asked, present, name) in [
        (args.defaulting, had.defaulting, "defaulting"),
        (args.programmatic_validation, had.validation, "validation"),
        (args.conversion, had.conversion, "conversion"),
    ] {
        if asked && present && !args.force {
            bail!("{group}/{version} {kind} already has a {name} webhook; pass --force to scaffold it again (its webhook and test files are replaced)");
        }
    }

    let gvk = Gvk {
        group: group.clone(),
        version: version.clone(),
        kind: kind.clone(),
        domain,
    };
    let pctx = ProjectCtx::load(root, &project)?;
    let mut ctx = ResourceCtx::new(CtxInput {
        project: &project,
        pctx,
        gvk: &gvk,
        plural: &plural,
        api_path: &api_path,
        cluster_scoped: existing
            .as_ref()
            .and_then(|r| r.api.as_ref())
            .is_some_and(|a| !a.namespaced),
        core,
        external,
        controller_name: None,
        has_api: existing.as_ref().is_some_and(|r| r.api.is_some()),
    });
    // What the files should hold once this command is done.
    ctx.defaulting = args.defaulting || had.defaulting;
    ctx.validation = args.programmatic_validation || had.validation;
    ctx.conversion = args.conversion || had.conversion;
    let dpath = args
        .defaulting_path
        .clone()
        .unwrap_or(had.defaulting_path.clone());
    let vpath = args
        .validation_path
        .clone()
        .unwrap_or(had.validation_path.clone());
    if !dpath.is_empty() {
        ctx.mutating_path = dpath.clone();
        ctx.custom_defaulting_path = dpath.clone();
    }
    if !vpath.is_empty() {
        ctx.validating_path = vpath.clone();
        ctx.custom_validation_path = vpath.clone();
    }

    let mut plan = Plan::default();
    let mut notes = vec![];
    let repo = project.repo.clone();
    let hook_file = format!("{}/{}_webhook.go", ctx.webhook_dir, ctx.kind_lower);
    let test_file = format!("{}/{}_webhook_test.go", ctx.webhook_dir, ctx.kind_lower);
    let merge = !args.force && root.join(&hook_file).exists();
    // Webhook and test files are rendered with every type the kind has after this run; when
    // they already exist (and no --force), the new types are merged into them instead.
    for f in templates::render_tree("webhook", &ctx, |_| true)? {
        let t = f.template.as_str();
        let is_code = t.ends_with("_webhook.go") || t.ends_with("_webhook_test.go");
        if is_code && merge {
            continue;
        }
        let policy = match t {
            _ if is_code => {
                if args.force {
                    IfExists::Overwrite
                } else {
                    IfExists::Error
                }
            }
            "config/webhook/kustomization.yaml" if args.force => IfExists::Overwrite,
            _ => IfExists::Skip,
        };
        plan.create(f.path, f.content, policy);
    }
    if merge {
        merge_sections(&mut plan, &ctx, &hook_file, &test_file, args, &repo)?;
    }

    // Webhook suite: the API scheme and the setup call.
    let suite = format!("{}/webhook_suite_test.go", ctx.webhook_dir);
    if !core {
        plan.go_import(&suite, Some(&ctx.import_alias), &api_path, &repo);
        plan.above_marker(
            &suite,
            "scheme",
            vec![templates::render("fragments/suite_scheme.go", &ctx)?],
        );
    }
    plan.above_marker(
        &suite,
        "webhook",
        vec![templates::render("fragments/webhook_suite_setup.go", &ctx)?],
    );

    // cmd/main.go.
    let hook_alias = format!(
        "webhook{}",
        if project.multigroup && !group.is_empty() {
            &ctx.import_alias
        } else {
            &ctx.webhook_pkg
        }
    );
    if external && existing.is_none() {
        plan.go_import(MAIN_GO, Some(&ctx.import_alias), &api_path, &repo);
        plan.above_marker(
            MAIN_GO,
            "scheme",
            vec![templates::render("fragments/main_scheme.go", &ctx)?],
        );
    }
    plan.go_import(
        MAIN_GO,
        Some(&hook_alias),
        &format!("{repo}/{}", ctx.webhook_dir),
        &repo,
    );
    plan.above_marker(
        MAIN_GO,
        "builder",
        vec![templates::render("fragments/main_setup_webhook.go", &ctx)?],
    );

    // test/e2e checks (the file may have been removed by the user: then only warn).
    let e2e = "test/e2e/e2e_test.go";
    if root.join(e2e).exists() {
        let mut checks = vec![templates::render(
            "fragments/e2e_webhooks_checks_cert.go",
            &ctx,
        )?];
        let mut ready = vec![];
        if args.defaulting || args.programmatic_validation {
            ready.push(templates::render(
                "fragments/e2e_readiness_webhook_endpoints.go",
                &ctx,
            )?);
        }
        if args.defaulting {
            checks.push(templates::render(
                "fragments/e2e_webhooks_checks_mutating.go",
                &ctx,
            )?);
            ready.push(templates::render(
                "fragments/e2e_readiness_mutating_ca.go",
                &ctx,
            )?);
        }
        if args.programmatic_validation {
            checks.push(templates::render(
                "fragments/e2e_webhooks_checks_validating.go",
                &ctx,
            )?);
            ready.push(templates::render(
                "fragments/e2e_readiness_validating_ca.go",
                &ctx,
            )?);
        }
        if args.conversion {
            checks.push(templates::render(
                "fragments/e2e_webhooks_checks_conversion.go",
                &ctx,
            )?);
        }
        plan.above_marker(e2e, "e2e-webhooks-checks", checks);
        if !ready.is_empty() {
            plan.above_marker(e2e, "e2e-metrics-webhooks-readiness", ready);
        }
    }

    // Kustomize: switch webhooks and cert-manager on in config/default. The blocks are found by
    // their YAML, whether the file is opbuilder's or Kubebuilder's.
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
                &ctx,
            )?;
            plan.above_marker(DEFAULT_KUSTOMIZATION, marker, vec![select]);
        }
        targets.push("CustomResourceDefinition");
    }
    for target in targets {
        entries.push(certificate_entry(".metadata.namespace", target));
        entries.push(certificate_entry(".metadata.name", target));
    }
    for needs in entries {
        plan.update(
            DEFAULT_KUSTOMIZATION,
            Edit::EnableEntry {
                start: "- source:".into(),
                needs,
            },
        );
    }
    plan.update(
        "config/network-policy/kustomization.yaml",
        Edit::AfterLine {
            anchor: "resources:".into(),
            text: "- allow-webhook-traffic.yaml".into(),
        },
    );

    if args.conversion {
        let crd_patch = templates::render("fragments/kustomize_crd_webhook_patch.yaml", &ctx)?;
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
        conversion_files(&mut plan, &project, &ctx, &args.spoke, args.force)?;
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

    // PROJECT.
    let entry = match project.find_mut(&group, &version, &kind) {
        Some(r) => r,
        None => {
            project.resources.push(Resource {
                group: group.clone(),
                version: version.clone(),
                kind: kind.clone(),
                domain: gvk.domain.clone(),
                path: api_path.clone(),
                core,
                external,
                module: args.res.external_api_module.clone().unwrap_or_default(),
                ..Default::default()
            });
            project.resources.last_mut().expect("just pushed")
        }
    };
    let mut w = entry.webhooks.clone().unwrap_or_default();
    w.defaulting |= args.defaulting;
    w.validation |= args.programmatic_validation;
    w.conversion |= args.conversion;
    if let Some(p) = &args.defaulting_path {
        w.defaulting_path = p.clone();
    }
    if let Some(p) = &args.validation_path {
        w.validation_path = p.clone();
    }
    for s in &args.spoke {
        if !w.spoke.contains(s) {
            w.spoke.push(s.clone());
        }
    }
    w.webhook_version = "v1".into();
    entry.webhooks = Some(w);
    chain.create_webhook(&mut plugins::Cx {
        root,
        plan: &mut plan,
        project: &mut project,
        notes: &mut notes,
    })?;
    plan.project = Some(project.to_yaml());
    Ok((plan, notes))
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
        sc.spoke_dir = resource::layout(project, &ctx.group, s).api_dir;
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
    hook: &str,
    test: &str,
    args: &WebhookArgs,
    repo: &str,
) -> Result<()> {
    let mut add = |kind: &str, builder: String| -> Result<()> {
        let section = templates::render(&format!("fragments/webhook/{kind}.go"), ctx)?;
        plan.update(
            hook,
            Edit::Append {
                text: format!("\n{}", section.trim_start_matches('\n')),
            },
        );
        plan.update(
            hook,
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
    if args.defaulting {
        let mut b = format!("WithDefaulter(&{}CustomDefaulter{{}}).", ctx.kind);
        if !ctx.custom_defaulting_path.is_empty() {
            b.push_str(&format!(
                "\nWithDefaulterCustomPath(\"{}\").",
                ctx.custom_defaulting_path
            ));
        }
        add("defaulter", b)?;
    }
    if args.programmatic_validation {
        let mut b = format!("WithValidator(&{}CustomValidator{{}}).", ctx.kind);
        if !ctx.custom_validation_path.is_empty() {
            b.push_str(&format!(
                "\nWithValidatorCustomPath(\"{}\").",
                ctx.custom_validation_path
            ));
        }
        add("validator", b)?;
    }
    if args.defaulting || args.programmatic_validation {
        for import in [
            "context",
            "sigs.k8s.io/controller-runtime/pkg/webhook/admission",
        ] {
            plan.go_import(hook, None, import, repo);
        }
    }
    if args.conversion {
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

pub fn run(root: &Path, args: &WebhookArgs) -> Result<()> {
    let (plan, notes) = plan(root, args)?;
    let post_steps = !args.run.skip_post_steps && !args.run.dry_run;
    // What the project imported before, to tell whether `go mod tidy` can change anything.
    let imports_before = post_steps.then(|| post::project_imports(root));
    if !super::execute(
        root,
        &plan,
        args.run.dry_run,
        "create webhook",
        &format!(
            "Scaffolded webhooks for {}/{} {}:",
            args.res.group, args.res.version, args.res.kind
        ),
    )? {
        return Ok(());
    }
    for n in &notes {
        outln!("\n{n}");
    }
    if let Some(before) = imports_before {
        let written = post::written_go_files(&plan);
        let mut steps = vec![];
        if let Some(m) = &args.res.external_api_module {
            steps.push(Step::GoGet(m.clone()));
        }
        if !steps.is_empty() || post::tidy_needed(root, &before, &written) {
            steps.push(Step::GoModTidy);
        } else {
            post::skipped(
                &Step::GoModTidy,
                "the new code imports no package the project did not import already",
            );
        }
        // Webhooks live in their own packages; only a change to an API package (conversion's
        // hub and spokes) can change the DeepCopy methods.
        let generate = args.run.make && post::generate_needed(root, &written);
        if generate {
            steps.push(Step::Make("generate"));
        } else if args.run.make {
            post::skipped(
                &Step::Make("generate"),
                "no API package changed, so the DeepCopy methods stay as they are",
            );
        }
        post::run(root, &steps, generate)?;
    }
    outln!("\nNext: fill in the webhook logic, then run\n  make manifests");
    Ok(())
}
