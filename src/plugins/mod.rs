//! The plugin chain. Kubebuilder composes a command from plugins named by key
//! (`go.kubebuilder.io/v4`, `grafana.kubebuilder.io/v1-alpha`, ...); opbuilder does the same,
//! so that PROJECT files move freely between the two tools.
//!
//! Every plugin adds to the one [`Plan`] and the one [`Project`] of a command, through the hooks
//! of [`Plugin`]; the command applies that plan as a single transaction. A chain is all or
//! nothing: if it names a plugin opbuilder cannot run, the command refuses before planning
//! anything (unlike Kubebuilder, which may have written part of the files by then).
//!
//! The registry ([`KNOWN`]) lists every plugin Kubebuilder v4.15 ships, with the short forms it
//! accepts, so a key is either run, or refused with a message naming it and saying what to do.

pub mod autoupdate;
pub mod certs;
pub mod chain;
pub mod delete;
pub mod deployimage;
pub mod external;
pub mod golang;
pub mod grafana;
pub mod helm;
pub mod registry;
pub mod rust;
pub mod telemetry;
pub mod typed_clients;

use crate::error::usage;
use crate::plan::Plan;
use crate::planning::api::{self as api_request, ApiArgs};
use crate::planning::edit::EditArgs;
use crate::planning::init::InitArgs;
use crate::planning::plugin::{Cx, Plugin as _};
use crate::planning::webhook::{self as webhook_request, WebhookArgs};
use crate::project::Project;
use anyhow::Result;
use chain::{Chain, Command};
use external::Subcommand;
use registry::parse_flag;
use std::path::Path;

/// Run one hook of a chain on a new plan: the plan and the notes the plugins left.
fn run_hook(
    root: &Path,
    project: &mut Project,
    plugin_args: &[String],
    hook: impl FnOnce(&mut Cx) -> Result<()>,
) -> Result<(Plan, Vec<String>)> {
    let mut plan = Plan::default();
    let mut notes = vec![];
    hook(&mut Cx {
        root,
        plan: &mut plan,
        project,
        notes: &mut notes,
        plugin_args,
    })?;
    Ok((plan, notes))
}

/// In a chain of external plugins without a layout plugin, a layout's flags have no plugin to
/// read them: refuse those given that no external plugin of the chain declares (as Kubebuilder,
/// which then does not know them). `always` are the command's own flags.
fn check_flags_without_layout(
    chain: &Chain,
    sub: Subcommand,
    given: &[String],
    always: &[&str],
) -> Result<()> {
    let declared = |name: &str| {
        chain.externals().iter().any(|e| match e.flags(sub) {
            Ok(list) => list.iter().any(|f| f.name == name),
            // A plugin that does not list its flags is given every flag.
            Err(_) => true,
        })
    };
    let mut stray: Vec<String> = vec![];
    for name in external::given_flags(given) {
        let name = name.to_string();
        if !always.contains(&name.as_str()) && !declared(&name) && !stray.contains(&name) {
            stray.push(name);
        }
    }
    let Some(first) = stray.first() else {
        return Ok(());
    };
    let keys: Vec<&str> = chain.externals().iter().map(|e| e.key()).collect();
    let one = stray.len() == 1;
    Err(usage(format!(
        "--{} {} to go/v4, which this chain leaves out, and {} {} not declare {}: add go/v4 to the chain \
         (for example --plugins=go/v4,{}) or leave {} out",
        stray.join(", --"),
        if one { "belongs" } else { "belong" },
        keys.join(" and "),
        if keys.len() == 1 { "does" } else { "do" },
        if one { "it" } else { "them" },
        keys.join(","),
        if one { format!("--{first}") } else { "them".to_string() }
    )))
}

/// The two layouts opbuilder scaffolds, as a family of keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Go,
    Rust,
}

impl Family {
    fn of(name: &str) -> Option<Family> {
        match name {
            "go.kubebuilder.io" | "base.go.kubebuilder.io" | "kustomize.common.kubebuilder.io" => {
                Some(Family::Go)
            }
            rust::NAME => Some(Family::Rust),
            _ => None,
        }
    }

    fn of_project(project: &Project) -> Option<(Family, &str)> {
        project.layout.iter().find_map(|k| {
            let name = k.split_once('/').map_or(k.as_str(), |(n, _)| n);
            Family::of(name).map(|f| (f, k.as_str()))
        })
    }

    fn name(self) -> &'static str {
        match self {
            Family::Go => "Go",
            Family::Rust => "Rust",
        }
    }
}

/// A word of a command line as a shell reads it back (quoted when it holds anything else than
/// letters, digits and `-_./=:,@+`).
fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// Refuse a `--plugins` that names the other layout than the project's (the Rust layout in a
/// Go project, or the reverse): a project keeps the layout `init` gave it. The example is the
/// command line given (`command` and its flags, `given`) without that layout.
fn check_layout_key(
    project: &Project,
    flag: Option<&[&'static registry::Known]>,
    command: &str,
    given: &[String],
) -> Result<()> {
    let (Some(flag), Some((family, key))) = (flag, Family::of_project(project)) else {
        return Ok(());
    };
    let Some(other) = flag
        .iter()
        .find(|k| Family::of(k.name).is_some_and(|f| f != family))
    else {
        return Ok(());
    };
    let mut kept: Vec<String> = flag
        .iter()
        .filter(|k| Family::of(k.name).is_none())
        .map(|k| registry::short_key(k))
        .collect();
    let mut example = vec!["opbuilder".to_string(), command.to_string()];
    example.extend(given.iter().map(|w| shell_word(w)));
    if !kept.is_empty() {
        // `--plugins` replaces PROJECT's layout: a `create` command names the project's own.
        if command != "edit" {
            let own = registry::lookup(key)
                .ok()
                .flatten()
                .map_or(key.to_string(), registry::short_key);
            kept.insert(0, own);
        }
        example.push(format!("--plugins={}", kept.join(",")));
    }
    let theirs = Family::of(other.name).expect("a layout's key");
    let new_project = match theirs {
        Family::Rust => {
            "opbuilder init --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name guestbook"
        }
        Family::Go => "opbuilder init --domain example.com --repo example.com/guestbook",
    };
    // `edit` with the layout alone has nothing left to do.
    let leave_out = if command == "edit" && given.is_empty() && kept.is_empty() {
        ", and `opbuilder edit` cannot change it".to_string()
    } else {
        format!(
            ".\n  Leave {} out, for example: {}",
            registry::short_key(other),
            example.join(" ")
        )
    };
    Err(usage(format!(
        "--plugins names the {} layout ({}), but this is a {} project (PROJECT's layout: {key}): a project keeps \
         the layout `opbuilder init` gave it{leave_out}\n  A {} project starts in a new directory: {new_project}",
        theirs.name(),
        other.key(),
        family.name(),
        theirs.name(),
    )))
}

/// Plan `init`: the chain (from `--plugins`, else go/v4), the checked flags and the new PROJECT,
/// then every plugin's files.
pub fn plan_init(root: &Path, args: &InitArgs) -> Result<(Plan, Project)> {
    let chain = Chain::for_command(None, parse_flag(args.plugins.as_deref())?, Command::Init)?;
    let layout = if chain.has_rust {
        crate::planning::init::Layout::Rust
    } else if chain.has_go {
        crate::planning::init::Layout::Go
    } else {
        check_flags_without_layout(
            &chain,
            Subcommand::Init,
            &args.plugin_args,
            &["dry-run", "skip-post-steps", "project-version"],
        )?;
        crate::planning::init::Layout::None
    };
    let (mut project, boilerplate_file) =
        crate::planning::init::new_project(root, args, chain.keys(), layout)?;
    let (mut plan, notes) = run_hook(root, &mut project, &args.plugin_args, |cx| {
        chain.init(cx, boilerplate_file.as_deref())
    })?;
    for n in notes {
        crate::out::errln!("{} {n}", crate::term::label("note"));
    }
    plan.project = Some(project.to_yaml());
    Ok((plan, project))
}

/// Plan a `create` command whose chain has external plugins and no layout plugin: the
/// resource is checked as Kubebuilder checks it, and only the external plugins run (no plugin
/// records anything in PROJECT).
fn plan_create_without_layout(
    root: &Path,
    project: &mut Project,
    chain: &Chain,
    sub: Subcommand,
    res: &crate::planning::flags::ResourceFlags,
    given: &[String],
) -> Result<(Plan, Vec<String>)> {
    check_flags_without_layout(
        chain,
        sub,
        given,
        &["group", "version", "kind", "dry-run", "skip-post-steps"],
    )?;
    crate::resource::validate_gvk(
        res.group.trim(),
        res.version.trim(),
        res.kind.trim(),
        &project.domain,
    )?;
    run_hook(root, project, given, |cx| chain.run_externals(cx, sub))
}

/// What planning `create api` gives the command: the plan, whether it scaffolds the types and
/// whether they are external, and the notes to print after it is applied.
pub type ApiPlan = (Plan, bool, bool, Vec<String>);

/// Plan `create api`: decide what the resource is, then let the plugin chain plan its files and
/// record it in PROJECT.
pub fn plan_create_api(root: &Path, args: &ApiArgs) -> Result<ApiPlan> {
    Ok(plan_create_api_keeping_project(root, args)?.0)
}

/// [`plan_create_api`], also handing back the project read (so that the command can skip
/// freeing it).
pub fn plan_create_api_keeping_project(root: &Path, args: &ApiArgs) -> Result<(ApiPlan, Project)> {
    let flag = parse_flag(args.run.plugins.as_deref())?;
    let (mut project, text) = Project::load_with_text(root)?;
    // The top-level keys as read (cheap: without the resources), to tell whether PROJECT can be
    // written by appending the new resource to its text.
    let resources = std::mem::take(&mut project.resources);
    let before = project.clone();
    project.resources = resources;
    let existing = project.resources.len();
    check_layout_key(
        &project,
        flag.as_deref(),
        "create api",
        &args.run.plugin_args,
    )?;
    let chain = Chain::for_command(Some(&project), flag, Command::CreateApi)?;
    if !chain.has_layout() {
        let (plan, notes) = plan_create_without_layout(
            root,
            &mut project,
            &chain,
            Subcommand::CreateApi,
            &args.res,
            &args.run.plugin_args,
        )?;
        return Ok(((plan, false, false, notes), project));
    }
    if chain.has_go {
        crate::planning::init::check_repo_is_module(root, &project)?;
    }
    let image = deployimage::check_flags(chain.has(deployimage::NAME), args)?;
    let mut res = api_request::resolve(&project, args)?;
    res.deploy_image = image;
    // `record` appends a new group/version/kind and changes no other entry; an existing one is
    // updated in place, and then the whole file is written.
    let appended = project
        .find(&res.gvk.group, &res.gvk.version, &res.gvk.kind)
        .is_none();
    let (mut plan, notes) = run_hook(root, &mut project, &args.run.plugin_args, |cx| {
        chain.create_api(cx, &res)
    })?;
    plan.project = Some(if appended {
        project.to_yaml_appended(&before, existing, &text)
    } else {
        project.to_yaml()
    });
    Ok(((plan, res.do_resource, res.external, notes), project))
}

/// Plan `create webhook`: decide what the webhooks are, then let the plugin chain plan their
/// files and record them in PROJECT.
pub fn plan_create_webhook(root: &Path, args: &WebhookArgs) -> Result<(Plan, Vec<String>)> {
    let flag = parse_flag(args.run.plugins.as_deref())?;
    let mut project = Project::load(root)?;
    check_layout_key(
        &project,
        flag.as_deref(),
        "create webhook",
        &args.run.plugin_args,
    )?;
    let chain = Chain::for_command(Some(&project), flag, Command::CreateWebhook)?;
    if !chain.has_layout() {
        return plan_create_without_layout(
            root,
            &mut project,
            &chain,
            Subcommand::CreateWebhook,
            &args.res,
            &args.run.plugin_args,
        );
    }
    if chain.has_go {
        crate::planning::init::check_repo_is_module(root, &project)?;
    }
    let hook = webhook_request::resolve(&project, args)?;
    let (mut plan, notes) = run_hook(root, &mut project, &args.run.plugin_args, |cx| {
        chain.create_webhook(cx, &hook)
    })?;
    plan.project = Some(project.to_yaml());
    Ok((plan, notes))
}

/// Plan `edit`: check which plugin each flag belongs to, then let the chain plan.
pub fn plan_edit(root: &Path, args: &EditArgs) -> Result<(Plan, Vec<String>)> {
    let flag = parse_flag(args.plugins.as_deref())?;
    let explicit = flag.is_some();
    let mut project = Project::load(root)?;
    let rust_key = project
        .layout
        .iter()
        .find(|k| crate::project::is_rust_layout(k))
        .cloned();
    check_layout_key(&project, flag.as_deref(), "edit", &args.plugin_args)?;
    let chain = Chain::for_command(Some(&project), flag, Command::Edit)?;
    // autoupdate's flag, in both layouts.
    autoupdate::check_gh_models(args.use_gh_models)?;
    if args.use_gh_models && !chain.has(autoupdate::NAME) {
        return Err(usage(
            "--use-gh-models belongs to the autoupdate plugin; for example: opbuilder edit --plugins=autoupdate/v1-alpha --use-gh-models",
        ));
    }
    if let Some(key) = rust_key {
        // helm/v2-alpha, grafana/v1-alpha, autoupdate/v1-alpha and telemetry/v1-alpha join the
        // layout; every flag is checked before any plugin runs (helm's runs `make build-installer`).
        chain.check_rust_project()?;
        rust::edit::check_flags(
            &project,
            args,
            &key,
            rust::edit::Joined {
                layout: chain.has_rust,
                helm: chain.has(helm::NAME),
                plugins: explicit
                    && [
                        helm::NAME,
                        grafana::NAME,
                        autoupdate::NAME,
                        certs::NAME,
                        telemetry::NAME,
                    ]
                    .iter()
                    .any(|n| chain.has(n)),
            },
        )?;
        let (mut plan, notes) = run_hook(root, &mut project, &args.plugin_args, |cx| {
            chain.edit(cx, args)
        })?;
        plan.project = Some(project.to_yaml());
        return Ok((plan, notes));
    }
    if args.go_flags() && !chain.has_go {
        return Err(usage(
            "--multigroup, --namespaced, --license, --license-file and --owner belong to go/v4, which --plugins leaves out; \
             add it (for example --plugins=go/v4,grafana/v1-alpha) or run the two edits one after the other",
        ));
    }
    if (args.manifests.is_some() || args.output_dir.is_some() || args.skip_build_installer)
        && !chain.has(helm::NAME)
    {
        return Err(usage(
            "--manifests, --output-dir and --skip-build-installer belong to the helm plugin; for example: opbuilder edit --plugins=helm/v2-alpha --output-dir=dist",
        ));
    }
    // An external plugin's edit takes its own flags, or none.
    if !args.go_flags() && !chain.has_external && (!explicit || chain.only_go()) {
        return Err(usage(
            "nothing to edit: pass --multigroup, --namespaced, --license, --license-file, --owner or --plugins; for example: opbuilder edit --multigroup",
        ));
    }
    let (mut plan, notes) = run_hook(root, &mut project, &args.plugin_args, |cx| {
        chain.edit(cx, args)
    })?;
    plan.project = Some(project.to_yaml());
    Ok((plan, notes))
}

/// What the external plugins of a command line add to it, found before the command line is
/// parsed: the flags they declare (which must then parse), and for `--help` their own help.
#[derive(Default)]
pub struct ExternalCli {
    /// The subcommand: `["init"]`, `["create", "api"]`, ...
    pub path: Vec<&'static str>,
    /// Each plugin's key with the flags it declares for the subcommand.
    pub flags: Vec<(&'static str, Vec<external::protocol::Flag>)>,
    /// Plugins that did not list their flags: every flag given is passed on to them.
    pub unlisted: Vec<(&'static str, String)>,
    /// Help sections: each plugin's key, executable and metadata (with `--help` only).
    pub help: Vec<String>,
    /// A plugin of the chain that cannot be found, to report if the command line does not parse.
    pub problem: Option<anyhow::Error>,
}

/// The subcommand of a command line and the `--plugins` value it gives, if any.
fn subcommand_of(argv: &[String]) -> Option<(Vec<&'static str>, Subcommand, Command)> {
    let words: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
    match words.as_slice() {
        ["init", ..] => Some((vec!["init"], Subcommand::Init, Command::Init)),
        ["edit", ..] => Some((vec!["edit"], Subcommand::Edit, Command::Edit)),
        ["create", "api", ..] => Some((
            vec!["create", "api"],
            Subcommand::CreateApi,
            Command::CreateApi,
        )),
        ["create", "webhook", ..] => Some((
            vec!["create", "webhook"],
            Subcommand::CreateWebhook,
            Command::CreateWebhook,
        )),
        _ => None,
    }
}

/// The external plugins a command line's chain names (from `--plugins`, else PROJECT's layout
/// around the current directory), with their flags and, when `help`, their help.
pub fn external_cli(argv: &[String], help: bool) -> ExternalCli {
    let Some((path, sub, command)) = subcommand_of(argv) else {
        return ExternalCli::default();
    };
    let mut out = ExternalCli {
        path,
        ..Default::default()
    };
    let flag = argv.iter().enumerate().rev().find_map(|(i, a)| {
        a.strip_prefix("--plugins=")
            .map(str::to_string)
            .or_else(|| {
                (a == "--plugins")
                    .then(|| argv.get(i + 1).cloned())
                    .flatten()
            })
    });
    let keys: Vec<String> = match flag {
        Some(v) => v
            .split(',')
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(String::from)
            .collect(),
        None if command != Command::Init => std::env::current_dir()
            .ok()
            .and_then(|cwd| crate::project::find_root(&cwd).ok())
            .and_then(|root| Project::load(&root).ok())
            .map(|p| p.layout)
            .unwrap_or_default(),
        None => vec![],
    };
    for key in keys {
        let known = match registry::lookup(&key) {
            Ok(Some(k)) => k,
            Ok(None) => {
                out.problem.get_or_insert_with(|| {
                    usage(format!(
                        "the chain names the plugin {key:?}, which is neither one of Kubebuilder's or opbuilder's \
                         plugins nor an installed external plugin: {}",
                        external::discover::not_found(&key)
                    ))
                });
                continue;
            }
            Err(e) => {
                out.problem.get_or_insert(e);
                continue;
            }
        };
        let Some(ext) = registry::external(known) else {
            continue;
        };
        let key = ext.key();
        match ext.flags(sub) {
            Ok(list) => out.flags.push((key, list)),
            Err(why) => out.unlisted.push((key, why)),
        }
        if help {
            let mut section = format!(
                "External plugin {key} ({}):",
                ext.installed().path.display()
            );
            match ext.metadata(sub) {
                Ok(m) => {
                    if !m.description.trim().is_empty() {
                        section.push_str(&format!("\n{}", m.description.trim_end()));
                    }
                    if !m.examples.trim().is_empty() {
                        section.push_str(&format!("\n\nExamples:\n{}", m.examples.trim_end()));
                    }
                }
                Err(e) => section.push_str(&format!("\n(no help from the plugin: {e:#})")),
            }
            out.help.push(section);
        }
    }
    out
}
