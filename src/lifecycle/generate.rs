//! `opbuilder alpha generate`: scaffold a project again from its PROJECT file with the current
//! templates, by replaying the commands PROJECT records: `init`, every resource (types,
//! controllers, named controllers, core and external types), every webhook, every plugin.
//!
//! The result goes to a new directory. Regenerating in place needs `--in-place`, and then the
//! old tree is kept whole as a backup next to the new one: nothing is ever deleted.

use crate::context::boilerplate_file;
use crate::error::usage;
use crate::out::{errln, outln};
use crate::plan::{apply, ApplyOptions, Plan};
use crate::planning::api::ApiArgs;
use crate::planning::edit::EditArgs;
use crate::planning::init::InitArgs;
use crate::planning::webhook::WebhookArgs;
use crate::plugins;
use crate::project::{self, Project, Resource};
use anyhow::{bail, Context, Result};
use clap::{Args, Parser};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The project to read (its PROJECT file and license header) [default: the project around the current directory]
    #[arg(long, value_name = "DIR")]
    pub input_dir: Option<PathBuf>,
    /// Where to write the new project: a directory that does not exist yet or is empty
    #[arg(long, value_name = "DIR", conflicts_with = "in_place")]
    pub output_dir: Option<PathBuf>,
    /// Regenerate the input directory itself; the old tree is kept as <DIR>.backup-<N> beside it
    #[arg(long)]
    pub in_place: bool,
    /// Use the templates of this opbuilder release (see `alpha update`) [default: the current ones]
    #[arg(long, value_name = "VERSION")]
    pub templates_version: Option<String>,
    /// Show what would be written, write nothing (the new project is made in a scratch
    /// directory, listed, and removed)
    #[arg(long)]
    pub dry_run: bool,
}

/// One replayed command: its words (for the report) and its plan function.
pub(super) struct Step {
    pub(super) words: Vec<String>,
    /// A file to copy from the input project before the command runs (the user's grafana config).
    pub(super) copy_first: Option<String>,
}

/// Who replays PROJECT: opbuilder, or a Kubebuilder release (the base of `alpha update` for a
/// project Kubebuilder made, see [`super::kubebuilder`]), which runs the plugins of its own
/// (`*.kubebuilder.io`) that opbuilder does not, and to which another tool's records mean nothing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Replayer {
    Opbuilder,
    Kubebuilder,
}

fn flag(name: &str, value: impl AsRef<str>) -> String {
    format!("--{name}={}", value.as_ref())
}

/// The external plugins of `layout` that are not installed here, each with where it was looked
/// for: a replay leaves them out (and says so), and the new PROJECT still records them.
fn missing_externals(layout: &[String]) -> Vec<(String, String)> {
    layout
        .iter()
        .filter_map(|key| match plugins::registry::lookup(key) {
            Ok(Some(_)) => None,
            Ok(None) => Some((key.clone(), plugins::external::discover::not_found(key))),
            Err(e) => Some((key.clone(), format!("{e:#}"))),
        })
        .collect()
}

/// Whether `key` is a layout opbuilder scaffolds itself (go/v4, its two halves, Rust).
fn is_layout_key(key: &str) -> bool {
    [
        project::LAYOUT,
        project::BASE_GO,
        "kustomize.common.kubebuilder.io/v2",
    ]
    .contains(&key)
        || project::is_rust_layout(key)
}

/// PROJECT's layout as the templates in use record it: the Rust layout's key is the one of
/// those templates (v1-alpha for release 0.4.0's, v1-beta for later ones), whichever the
/// project had, so that a v1-alpha project is carried to v1-beta and back to its own.
pub fn layout_for_templates(layout: &[String]) -> Vec<String> {
    layout
        .iter()
        .map(|k| {
            if project::is_rust_layout(k) {
                plugins::rust::key_for_templates().to_string()
            } else {
                k.clone()
            }
        })
        .collect()
}

/// opbuilder's own plugins that a replay turns on with `edit` (right after `init`; after
/// Kubebuilder's commands for the base of a Kubebuilder project's update).
pub(super) const EDITED_AFTER_INIT: [&str; 2] = [plugins::certs::KEY, plugins::telemetry::KEY];

/// The commands that rebuild `project` (input boilerplate at `license_file`, if any), in order,
/// leaving out of the chain the layout plugins in `skip` (external plugins not installed).
pub(super) fn replay(
    project: &Project,
    license_file: Option<&Path>,
    skip: &[String],
    by: Replayer,
) -> Result<Vec<Step>> {
    let mut steps = vec![];
    let mut step =
        |words: Vec<String>, copy_first: Option<String>| steps.push(Step { words, copy_first });
    let known: Vec<String> = layout_for_templates(&project.layout)
        .iter()
        .filter(|k| !skip.contains(k))
        .cloned()
        .collect();
    if !project.layout.is_empty() && !project.layout.iter().any(|k| is_layout_key(k)) {
        // External plugins alone: they take their own flags, and record nothing but the
        // layout; PROJECT records no resource for them to replay.
        if !known.is_empty() {
            step(
                vec!["init".to_string(), flag("plugins", known.join(","))],
                None,
            );
        }
        return Ok(steps);
    }
    let mut init = vec!["init".to_string(), flag("domain", &project.domain)];
    // The Rust layout has no Go module.
    if !project.repo.is_empty() {
        init.push(flag("repo", &project.repo));
    }
    init.push(flag("project-name", &project.project_name));
    if !known.is_empty() {
        init.push(flag("plugins", known.join(",")));
    }
    if project.multigroup {
        init.push("--multigroup".into());
    }
    if project.namespaced {
        init.push("--namespaced".into());
    }
    match license_file {
        Some(p) => init.push(flag("license-file", p.to_string_lossy())),
        None => init.push("--license=none".into()),
    }
    step(init, None);
    // The certs plugin changes what `create webhook` writes, the telemetry plugin what `create
    // api` writes: on before the first of them.
    for key in EDITED_AFTER_INIT {
        if by == Replayer::Opbuilder && project.plugin_keys().iter().any(|k| k == key) {
            step(vec!["edit".into(), flag("plugins", key)], None);
        }
    }
    let gvk = |r: &Resource| {
        vec![
            flag("group", &r.group),
            flag("version", &r.version),
            flag("kind", &r.kind),
        ]
    };
    let external = |r: &Resource| {
        let mut v = vec![];
        if r.external {
            v.push(flag("external-api-path", &r.path));
            if !r.domain.is_empty() {
                v.push(flag("external-api-domain", &r.domain));
            }
            if !r.module.is_empty() {
                v.push(flag("external-api-module", &r.module));
            }
        }
        v
    };
    // Types with their first controller, then the named controllers, then the webhooks: the
    // order in which those are usually added, which PROJECT does not record.
    // APIs made by deploy-image are made again by it, with the options PROJECT records.
    let deploy_image = plugins::deployimage::recorded(project)?;
    let mut named_pass = vec![];
    for r in &project.resources {
        let mut base = vec!["create".to_string(), "api".into()];
        base.extend(gvk(r));
        if !r.plural.is_empty() {
            base.push(flag("plural", &r.plural));
        }
        base.extend(external(r));
        let kind_lower = r.kind.to_ascii_lowercase();
        // The first controller is unnamed unless it was the kind's only one and was given a name
        // (PROJECT lists an unnamed controller by the kind's name once a named one joins it).
        let named: Vec<&str> = r.controllers.iter().map(|c| c.name.as_str()).collect();
        let (first_unnamed, names) = match named.as_slice() {
            [first, rest @ ..] if *first == kind_lower && !rest.is_empty() => (true, rest.to_vec()),
            _ => (r.controller, named.clone()),
        };
        let image = deploy_image
            .iter()
            .rev()
            .find(|d| d.group == r.group && d.version == r.version && d.kind == r.kind);
        if let (Some(d), Some(_)) = (image, &r.api) {
            let mut c = base.clone();
            let o = &d.options;
            for (name, v) in [
                ("image", &o.image),
                ("image-container-command", &o.container_command),
                ("image-container-port", &o.container_port),
                ("run-as-user", &o.run_as_user),
            ] {
                if !v.is_empty() {
                    c.push(flag(name, v));
                }
            }
            c.push(flag("plugins", plugins::deployimage::KEY));
            step(c, None);
        } else if let Some(api) = &r.api {
            let mut c = base.clone();
            c.push("--resource".into());
            c.push(flag("controller", first_unnamed.to_string()));
            c.push(flag("namespaced", api.namespaced.to_string()));
            if api.ssa {
                c.push("--ssa".into());
            }
            step(c, None);
        } else if first_unnamed {
            let mut c = base.clone();
            c.push("--resource=false".into());
            c.push("--controller".into());
            if r.external && project.rust_layout().is_some() {
                // The Rust layout's outside kind: PROJECT's path is the project's copy of its
                // CRD, which the command reads (relative to the root) and keeps as it is.
                step(c, Some(r.path.to_string()));
            } else {
                step(c, None);
            }
        }
        for n in names {
            let mut c = base.clone();
            c.push("--resource=false".into());
            c.push("--controller".into());
            c.push(flag("controller-name", n));
            named_pass.push(c);
        }
    }
    for c in named_pass {
        step(c, None);
    }
    for r in &project.resources {
        let Some(w) = &r.webhooks else { continue };
        if !(w.defaulting || w.validation || w.conversion) {
            continue;
        }
        let mut c = vec!["create".to_string(), "webhook".into()];
        c.extend(gvk(r));
        if !r.plural.is_empty() {
            c.push(flag("plural", &r.plural));
        }
        c.extend(external(r));
        if w.defaulting {
            c.push("--defaulting".into());
            if !w.defaulting_path.is_empty() {
                c.push(flag("defaulting-path", &w.defaulting_path));
            }
        }
        if w.validation {
            c.push("--programmatic-validation".into());
            if !w.validation_path.is_empty() {
                c.push(flag("validation-path", &w.validation_path));
            }
        }
        if w.conversion {
            c.push("--conversion".into());
            if !w.spoke.is_empty() {
                c.push(flag("spoke", w.spoke.join(",")));
            }
        }
        step(c, None);
    }
    for key in project.plugin_keys() {
        match key.as_str() {
            plugins::grafana::KEY => {
                // Once to lay the files down, and again with the user's config.yaml, which
                // decides the custom-metrics dashboard.
                for copy_first in [None, Some(plugins::grafana::CONFIG.to_string())] {
                    steps.push(Step {
                        words: vec!["edit".into(), flag("plugins", &key)],
                        copy_first,
                    });
                }
            }
            // Replayed with the resources above.
            plugins::deployimage::KEY => {}
            plugins::autoupdate::KEY => {
                #[derive(serde::Deserialize, Default)]
                struct Section {
                    #[serde(default, rename = "useGHModels")]
                    use_gh_models: bool,
                }
                let cfg: Section = project.plugin_config(&key)?.unwrap_or_default();
                let mut c = vec!["edit".into(), flag("plugins", &key)];
                // A Kubebuilder release that recorded the flag offers it.
                if cfg.use_gh_models
                    && (by == Replayer::Kubebuilder || plugins::autoupdate::gh_models_offered())
                {
                    c.push("--use-gh-models".into());
                }
                steps.push(Step {
                    words: c,
                    copy_first: None,
                });
            }
            plugins::helm::KEY => {
                // The chart is made from the input project's kustomize output, copied first, as
                // it is: running make in the new tree would need its tools and modules.
                let cfg: plugins::helm::Section = project.plugin_config(&key)?.unwrap_or_default();
                let manifests = if cfg.manifests.is_empty() {
                    plugins::helm::DEFAULT_MANIFESTS.to_string()
                } else {
                    cfg.manifests
                };
                let mut c = vec!["edit".into(), flag("plugins", &key)];
                if manifests != plugins::helm::DEFAULT_MANIFESTS {
                    c.push(flag("manifests", &manifests));
                }
                if !cfg.output.is_empty() && cfg.output != plugins::helm::DEFAULT_OUTPUT {
                    c.push(flag("output-dir", &cfg.output));
                }
                // Kubebuilder has no such flag: its edit runs `make build-installer` first
                // (see super::kubebuilder for how that is kept from running).
                if by == Replayer::Opbuilder {
                    c.push("--skip-build-installer".into());
                }
                steps.push(Step {
                    words: c,
                    copy_first: Some(manifests),
                });
            }
            // Replayed right after init, above; Kubebuilder has none of its files.
            k if EDITED_AFTER_INIT.contains(&k) => {}
            // opbuilder's own plugin: Kubebuilder has none of its files.
            plugins::typed_clients::KEY if by == Replayer::Kubebuilder => {}
            plugins::typed_clients::KEY => steps.push(Step {
                words: vec!["edit".into(), flag("plugins", &key)],
                copy_first: None,
            }),
            other if by == Replayer::Kubebuilder => {
                if other.contains(".kubebuilder.io/") {
                    steps.push(Step {
                        words: vec!["edit".into(), flag("plugins", other)],
                        copy_first: None,
                    });
                }
            }
            // Kept in PROJECT without being run (the Operator SDK's bundle plugins): `carry`
            // copied their records, and says so.
            k if is_kept(k) => {}
            other => bail!(
                "PROJECT records the plugin {other}, which opbuilder cannot replay yet; nothing was written.\n  \
                 Regenerate this project with `kubebuilder alpha generate`"
            ),
        }
    }
    Ok(steps)
}

/// The value of `--name=value` among a replayed command's words.
fn word_value<'a>(words: &'a [String], name: &str) -> Option<&'a str> {
    let prefix = format!("--{name}=");
    words.iter().find_map(|w| w.strip_prefix(prefix.as_str()))
}

/// Where `cmd/main.go` registers what a replayed command wired there (the byte offset), if
/// it can be told: a controller by its reconciler (`<Kind>Reconciler{`), a webhook by its setup
/// call (`Setup<Kind>WebhookWithManager(`, or `<Kind>{}).SetupWebhookWithManager(` as
/// Kubebuilder wrote it before v4.3), on the line naming its version where several versions of
/// the kind have one.
fn wired_at(words: &[String], main_go: &str) -> Option<usize> {
    if words.len() < 2 || words[0] != "create" {
        return None;
    }
    let kind = word_value(words, "kind")?;
    let version = word_value(words, "version").unwrap_or_default();
    let lines = || {
        main_go.split_inclusive('\n').scan(0, |at, l| {
            let start = *at;
            *at += l.len();
            Some((start, l))
        })
    };
    match words[1].as_str() {
        "api" => {
            let controller = words
                .iter()
                .any(|w| w == "--controller" || w == "--controller=true")
                || word_value(words, "plugins").is_some();
            if !controller || word_value(words, "controller-name").is_some() {
                return None;
            }
            let needle = format!("{kind}Reconciler{{");
            lines().find(|(_, l)| l.contains(&needle)).map(|(at, _)| at)
        }
        "webhook" => {
            let new = format!("Setup{kind}WebhookWithManager(");
            let old = format!("{kind}{{}}).SetupWebhookWithManager(");
            let found: Vec<(usize, &str)> = lines()
                .filter(|(_, l)| l.contains(&new) || l.contains(&old))
                .collect();
            let of_version = format!("{version}.");
            found
                .iter()
                .find(|(_, l)| l.contains(&of_version))
                .or(found.first())
                .map(|(at, _)| *at)
        }
        _ => None,
    }
}

/// The replayed commands in the order the project's `cmd/main.go` shows they were run.
/// PROJECT lists the types in the order they were created, but not when each webhook was:
/// [`replay`] creates the webhooks after every type, where a user often creates a type's
/// webhook right after the type. main.go wires both in the order they were created, so each
/// webhook found there moves to just after the last type whose controller is wired above it.
/// Scaffolding the project again in its own order matters to `alpha update`: a base or a new
/// tree that wires main.go in another order than the user's conflicts wherever the new
/// templates changed those lines.
pub(super) fn order_like_main(steps: Vec<Step>, main_go: &str) -> Vec<Step> {
    let is_webhook = |s: &Step| s.words.get(1).is_some_and(|w| w == "webhook");
    let (webhooks, mut out): (Vec<Step>, Vec<Step>) = steps.into_iter().partition(is_webhook);
    let mut last_placed: Option<usize> = None;
    let mut tail = vec![];
    for w in webhooks {
        let Some(at) = wired_at(&w.words, main_go) else {
            tail.push(w);
            continue;
        };
        // After the last type wired above it (and after the webhooks already placed there).
        let after_type = out
            .iter()
            .rposition(|s| {
                s.words.get(1).is_some_and(|c| c == "api")
                    && wired_at(&s.words, main_go).is_some_and(|a| a < at)
            })
            .map_or(0, |i| i + 1);
        let after_webhook = last_placed.filter(|&i| i >= after_type).map(|i| i + 1);
        // Never before the commands that create its own type and the spokes it converts to.
        fn group_kind(s: &Step) -> (Option<&str>, Option<&str>) {
            (word_value(&s.words, "group"), word_value(&s.words, "kind"))
        }
        let mut versions: Vec<&str> = word_value(&w.words, "spoke")
            .map(|v| v.split(',').collect())
            .unwrap_or_default();
        versions.extend(word_value(&w.words, "version"));
        let after_own = out
            .iter()
            .rposition(|s| {
                s.words.get(1).is_some_and(|c| c == "api")
                    && group_kind(s) == group_kind(&w)
                    && word_value(&s.words, "version").is_some_and(|v| versions.contains(&v))
            })
            .map_or(1, |i| i + 1);
        let i = after_webhook
            .unwrap_or(after_type)
            .max(after_own)
            .min(out.len());
        out.insert(i, w);
        last_placed = Some(i);
    }
    // Webhooks main.go does not show: after the last command that creates something, as replay
    // put them (before the plugins' edits).
    let end = out
        .iter()
        .rposition(|s| s.words.first().is_some_and(|c| c == "create"))
        .map_or(out.len(), |i| i + 1);
    out.splice(end..end, tail);
    out
}

#[derive(Parser)]
#[command(no_binary_name = true)]
struct InitCli {
    #[command(flatten)]
    a: InitArgs,
}
#[derive(Parser)]
#[command(no_binary_name = true)]
struct ApiCli {
    #[command(flatten)]
    a: ApiArgs,
}
#[derive(Parser)]
#[command(no_binary_name = true)]
struct WebhookCli {
    #[command(flatten)]
    a: WebhookArgs,
}
#[derive(Parser)]
#[command(no_binary_name = true)]
struct EditCli {
    #[command(flatten)]
    a: EditArgs,
}

/// Plan one replayed command against `root` (flags parsed exactly as on the command line).
pub(super) fn plan_step(root: &Path, words: &[String]) -> Result<Plan> {
    let mut w: Vec<String> = words.to_vec();
    let sub: Vec<String> = match w.first().map(String::as_str) {
        Some("create") => w.drain(..2).collect(),
        _ => w.drain(..1).collect(),
    };
    let post = ["--skip-post-steps".to_string()];
    // What an external plugin receives: the flags, as on a command line.
    let mut given = w.clone();
    if sub.first().map(String::as_str) != Some("edit") {
        given.extend(post.iter().cloned());
    }
    let plugin_args = plugins::external::request_args(&given);
    let parse_err =
        |e: clap::Error| anyhow::anyhow!("replaying `opbuilder {}`: {e}", words.join(" "));
    Ok(match sub.join(" ").as_str() {
        "init" => {
            let mut a = InitCli::try_parse_from(w.iter().chain(&post))
                .map_err(parse_err)?
                .a;
            a.plugin_args = plugin_args;
            plugins::plan_init(root, &a)?.0
        }
        "create api" => {
            let mut a = ApiCli::try_parse_from(w.iter().chain(&post))
                .map_err(parse_err)?
                .a;
            a.run.plugin_args = plugin_args;
            plugins::plan_create_api(root, &a)?.0
        }
        "create webhook" => {
            let mut a = WebhookCli::try_parse_from(w.iter().chain(&post))
                .map_err(parse_err)?
                .a;
            a.run.plugin_args = plugin_args;
            plugins::plan_create_webhook(root, &a)?.0
        }
        "edit" => {
            let mut a = EditCli::try_parse_from(w.iter()).map_err(parse_err)?.a;
            a.plugin_args = plugin_args;
            plugins::plan_edit(root, &a)?.0
        }
        other => bail!("cannot replay {other:?}"),
    })
}

/// A directory's entries, or none when it does not exist.
fn entries(dir: &Path) -> Result<Vec<String>> {
    match std::fs::read_dir(dir) {
        Ok(rd) => {
            let mut v = vec![];
            for e in rd {
                v.push(e?.file_name().to_string_lossy().to_string());
            }
            v.sort();
            Ok(v)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(vec![]),
        Err(e) => Err(e).with_context(|| format!("reading {}", dir.display())),
    }
}

/// What [`generate`] did.
pub struct Generated {
    /// The replayed commands.
    pub done: Vec<String>,
    /// The external plugins of PROJECT's layout that are not installed here, with where they
    /// were looked for: not run, so their files are missing from the new tree.
    pub not_run: Vec<(String, String)>,
    /// What the new project leaves to the user, beyond copying the code over: the layout it was
    /// carried from, what PROJECT records that opbuilder keeps without running, what it drops.
    pub notes: Vec<String>,
}

/// Whether `key` is a plugin opbuilder keeps in PROJECT without running it.
fn is_kept(key: &str) -> bool {
    matches!(
        plugins::registry::lookup(key),
        Ok(Some(plugins::registry::Known {
            support: plugins::registry::Support::Kept(_),
            ..
        }))
    )
}

/// The project as it is scaffolded again, read from `input`: another tool's layout refused
/// (usage error), the layouts of earlier Kubebuilder releases read as go/v4's (as Kubebuilder
/// v4.16 does), helm.kubebuilder.io/v1-alpha left out (opbuilder does not run it), and the
/// notes that say so.
fn carry(mut project: Project, input: &Path) -> Result<(Project, Vec<String>)> {
    plugins::registry::refuse_foreign(&project.layout)?;
    for r in &project.resources {
        if let Some(hint) =
            crate::planning::api::lowercase_kind(&project, &r.group, &r.version, &r.kind)
        {
            bail!("{hint}; nothing was written");
        }
    }
    let mut notes = vec![];
    let before = project.layout.clone();
    let mut carried = vec![];
    for key in &before {
        if let Some(new) = plugins::registry::successor(key) {
            carried.push((key.clone(), new));
        }
    }
    project.layout = before
        .iter()
        .filter(|k| *k != plugins::helm::DEPRECATED_KEY)
        .map(|k| {
            plugins::registry::successor(k)
                .map(String::from)
                .unwrap_or_else(|| k.clone())
        })
        .collect();
    if !carried.is_empty() {
        let keys: Vec<String> = carried.iter().map(|(k, _)| k.clone()).collect();
        let news: Vec<&str> = carried.iter().map(|(_, n)| *n).collect();
        notes.push(format!(
            "PROJECT's layout {} is of earlier Kubebuilder releases: the project was scaffolded again as {} (as \
             `kubebuilder alpha generate` does). What moved:{}\n  Copy your code into the new places (types, Reconcile \
             bodies, webhook logic, main.go's additions) and change its imports to the new paths.",
            keys.join(", "),
            news.join(", "),
            moves(&project, input)
        ));
    }
    let helm_v1 = before.iter().any(|k| k == plugins::helm::DEPRECATED_KEY)
        || project
            .plugin_keys()
            .iter()
            .any(|k| k == plugins::helm::DEPRECATED_KEY);
    if helm_v1 {
        project.remove_plugin_config(plugins::helm::DEPRECATED_KEY);
        notes.push(format!(
            "{} (deprecated) was not replayed: opbuilder does not run it, so its chart is not in the new tree and \
             the new PROJECT no longer records it. `opbuilder edit --plugins=helm/v2-alpha` there makes a chart \
             from the kustomize output",
            plugins::helm::DEPRECATED_KEY
        ));
    }
    let kept: Vec<String> = project
        .plugin_keys()
        .into_iter()
        .filter(|k| is_kept(k))
        .collect();
    if !kept.is_empty() {
        notes.push(format!(
            "PROJECT records {}, which opbuilder keeps without running: the new PROJECT records {} too, but \
             {} files (config/manifests, config/scorecard, bundle/) are not in the new tree: copy them over from \
             the input project ({})",
            kept.join(" and "),
            if kept.len() == 1 { "it" } else { "them" },
            if kept.len() == 1 { "its" } else { "their" },
            input.display()
        ));
    }
    let dropped: Vec<String> = project
        .other
        .keys()
        .filter_map(|k| k.as_str())
        .filter(|k| *k != "plugins")
        .map(String::from)
        .collect();
    if !dropped.is_empty() {
        notes.push(format!(
            "PROJECT's {} {} not carried to the new PROJECT: opbuilder and Kubebuilder v4 scaffold nothing for {} \
             (go/v4 has no component config: the manager takes its settings as flags)",
            dropped.join(", "),
            if dropped.len() == 1 { "is" } else { "are" },
            if dropped.len() == 1 { "it" } else { "them" },
        ));
    }
    Ok((project, notes))
}

/// What moves between the input's tree and go/v4's, for the note of a project carried from an
/// earlier layout: main.go, the controllers, and each API's package (as PROJECT records it
/// against where go/v4 puts it).
fn moves(project: &Project, input: &Path) -> String {
    let mut out = String::new();
    let mut line = |from: &str, to: &str| out.push_str(&format!("\n    {from} -> {to}"));
    if input.join("main.go").is_file() && !input.join("cmd/main.go").is_file() {
        line("main.go", "cmd/main.go");
    }
    if input.join("controllers").is_dir() {
        line("controllers/", "internal/controller/");
    }
    let mut seen = vec![];
    for r in &project.resources {
        if r.api.is_none() || r.external || r.core {
            continue;
        }
        let new = crate::resource::layout(project, &r.group, &r.version).api_path;
        let old = if r.path.is_empty() {
            new.clone()
        } else {
            r.path.to_string()
        };
        let rel = |p: &str| {
            p.strip_prefix(&project.repo)
                .map(|x| x.trim_start_matches('/').to_string())
                .unwrap_or_else(|| p.to_string())
        };
        if old != new && !seen.contains(&old) {
            line(
                &format!("{}/", rel(&old)),
                &format!("{}/ ({new})", rel(&new)),
            );
            seen.push(old.clone());
        }
        let hooks = r
            .webhooks
            .as_ref()
            .is_some_and(|w| w.defaulting || w.validation);
        let file = format!("{}/{}_webhook.go", rel(&old), r.kind.to_ascii_lowercase());
        if hooks && input.join(&file).is_file() {
            let lay = crate::resource::layout(project, &r.group, &r.version);
            line(
                &file,
                &format!(
                    "{}/{}_webhook.go",
                    lay.webhook_dir,
                    r.kind.to_ascii_lowercase()
                ),
            );
        }
    }
    if out.is_empty() {
        out.push_str(" nothing of what PROJECT records");
    }
    out
}

/// Refuse an output directory that holds anything.
fn check_output_empty(output: &Path) -> Result<()> {
    let present = entries(output)?;
    if !present.is_empty() {
        bail!(
            "the output directory {} is not empty ({}); alpha generate writes only into a new or empty directory",
            output.display(),
            present.join(", ")
        );
    }
    Ok(())
}

/// Generate the project of `input` into `output` (which must be empty or absent). Whatever
/// fails, the output directory is left as it was found: removed again when this made it.
pub fn generate(input: &Path, output: &Path) -> Result<Generated> {
    let (project, notes) = carry(Project::load(input)?, input)?;
    let boilerplate = input.join(boilerplate_file(input, &project));
    let license = boilerplate.is_file().then_some(boilerplate.as_path());
    let not_run = missing_externals(&project.layout);
    let skip: Vec<String> = not_run.iter().map(|(k, _)| k.clone()).collect();
    let mut steps = replay(&project, license, &skip, Replayer::Opbuilder)?;
    if let Some(main_go) = crate::fsx::read_text(&input.join(crate::context::MAIN_GO), 1 << 24)
        .ok()
        .flatten()
    {
        steps = order_like_main(steps, &main_go);
    }
    check_output_empty(output)?;
    let made = output.symlink_metadata().is_err();
    std::fs::create_dir_all(output).with_context(|| format!("creating {}", output.display()))?;
    match write(input, output, &project, &steps) {
        Ok(done) => Ok(Generated {
            done,
            not_run,
            notes,
        }),
        Err(e) => {
            // Leave no half-made project: the directory goes if this made it, else its
            // entries (it was empty).
            if made {
                let _ = std::fs::remove_dir_all(output);
            } else if let Ok(names) = entries(output) {
                for n in names {
                    let p = output.join(n);
                    let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
                }
            }
            Err(e)
        }
    }
}

/// Replay `steps` into the empty directory `output`, then write the new PROJECT: the replayed
/// commands, as the report lists them.
fn write(input: &Path, output: &Path, project: &Project, steps: &[Step]) -> Result<Vec<String>> {
    let mut done = vec![];
    for step in steps {
        if let Some(f) = &step.copy_first {
            let from = input.join(f);
            if !from.is_file() {
                continue;
            }
            if let Some(dir) = output.join(f).parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::copy(&from, output.join(f))
                .with_context(|| format!("copying {}", from.display()))?;
            done.push(format!("cp {f} (from the input project)"));
        }
        let plan = plan_step(output, &step.words)
            .with_context(|| format!("replaying `opbuilder {}`", step.words.join(" ")))?;
        apply(output, &plan, &ApplyOptions::default())
            .with_context(|| format!("writing `opbuilder {}`", step.words.join(" ")))?;
        done.push(format!("opbuilder {}", step.words.join(" ")));
    }
    if steps.is_empty() {
        // Every plugin of the layout is an external plugin that is not installed: PROJECT alone.
        let mut p = project.clone();
        p.cli_version = crate::versions::cli_version();
        let only = Plan {
            project: Some(p.to_yaml()),
            ..Default::default()
        };
        apply(output, &only, &ApplyOptions::default())?;
        return Ok(done);
    }
    // Resources that have webhooks only join PROJECT in the webhook pass: put every entry back
    // at its place in the input's list; external plugins that could not run stay in the layout.
    // The header stays the input's (Kubebuilder's stays Kubebuilder's), and so do the records
    // of the plugins opbuilder keeps without running.
    let mut out = Project::load(output)?;
    out.layout = layout_for_templates(&project.layout);
    if project.header.as_deref().is_some_and(|h| !h.is_empty()) {
        out.header = project.header.clone();
    }
    for key in project.plugin_keys().into_iter().filter(|k| is_kept(k)) {
        if let Some(v) = project.plugin_config::<serde_yaml::Value>(&key)? {
            out.set_plugin_config(&key, &v)?;
        }
    }
    let place = |r: &Resource| {
        project
            .resources
            .iter()
            .position(|p| p.is_gvk(&r.group, &r.version, &r.kind))
            .unwrap_or(usize::MAX)
    };
    out.resources.sort_by_key(place);
    let reordered = Plan {
        project: Some(out.to_yaml()),
        ..Default::default()
    };
    apply(output, &reordered, &ApplyOptions::default())?;
    Ok(done)
}

/// `alpha generate`: with the templates of `--templates-version` when given.
pub fn run(cwd_root: impl FnOnce() -> Result<PathBuf>, args: &GenerateArgs) -> Result<()> {
    if let Some(v) = &args.templates_version {
        if !crate::releases::is_known(v) {
            let known = crate::releases::known();
            return Err(crate::error::bad_flag(
                "--templates-version",
                v,
                &format!(
                    "this opbuilder holds the templates of these releases only: {}",
                    known.join(", ")
                ),
                &known[0],
            ));
        }
        let v = v.clone();
        return crate::releases::with(&v, || generate_cmd(cwd_root, args));
    }
    generate_cmd(cwd_root, args)
}

fn generate_cmd(cwd_root: impl FnOnce() -> Result<PathBuf>, args: &GenerateArgs) -> Result<()> {
    let input = match &args.input_dir {
        Some(d) => {
            if !d.join(project::FILE).is_file() {
                return Err(usage(format!(
                    "invalid value {:?} for --input-dir: the directory holds no PROJECT file\n  \
                     example of a valid value: --input-dir ./guestbook",
                    d.display()
                )));
            }
            d.clone()
        }
        None => cwd_root()?,
    };
    if args.dry_run {
        return dry_run(&input, args);
    }
    if args.in_place {
        let input = std::fs::canonicalize(&input)?;
        let name = input
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let parent = input
            .parent()
            .context("the project has no parent directory")?;
        let staging = parent.join(format!(".{name}.opbuilder-generate-{}", std::process::id()));
        let done = match generate(&input, &staging) {
            Ok(g) => {
                report_not_run(&g.not_run);
                report_notes(&g.notes);
                g.done
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let backup = (1..)
            .map(|n| parent.join(format!("{name}.backup-{n}")))
            .find(|p| p.symlink_metadata().is_err())
            .expect("a free name");
        std::fs::rename(&input, &backup)
            .with_context(|| format!("moving {} to {}", input.display(), backup.display()))?;
        if let Err(e) = std::fs::rename(&staging, &input) {
            let _ = std::fs::rename(&backup, &input);
            return Err(e)
                .with_context(|| format!("moving the new project to {}", input.display()));
        }
        // Keep the repository's history with the new tree.
        let git = backup.join(".git");
        if git.exists() {
            std::fs::rename(&git, input.join(".git")).context("moving .git into the new tree")?;
        }
        report(&done);
        outln!(
            "\nRegenerated {} in place. The previous tree, with your code, is in {}: compare the two \
             (for example `git status` and `git diff`) and copy back what you need.",
            input.display(),
            backup.display()
        );
        return Ok(());
    }
    let Some(output) = &args.output_dir else {
        return Err(needs_output());
    };
    let generated = generate(&input, output)?;
    report(&generated.done);
    report_not_run(&generated.not_run);
    report_notes(&generated.notes);
    let rust = Project::load(output)
        .map(|p| p.layout.iter().any(|k| project::is_rust_layout(k)))
        .unwrap_or(false);
    outln!(
        "\nGenerated the project of {} in {}. Copy your code over (the types' fields, the {} \
         bodies, webhook logic), then run {} there.",
        input.display(),
        output.display(),
        if rust { "reconcile" } else { "Reconcile" },
        if rust {
            "`make manifests`"
        } else {
            "`go mod tidy` and `make generate manifests`"
        }
    );
    Ok(())
}

/// What the new project leaves to the user, each once.
fn report_notes(notes: &[String]) {
    for n in notes {
        errln!("{} {n}", crate::term::label("note"));
    }
}

/// The new project's files below `dir`, relative to it, sorted.
fn files_below(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).expect("below dir").to_path_buf());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `alpha generate --dry-run`: the new project is made in a scratch directory, listed (with
/// what would happen to the input for --in-place) and removed; nothing else is touched.
fn dry_run(input: &Path, args: &GenerateArgs) -> Result<()> {
    let target = match (&args.output_dir, args.in_place) {
        (Some(o), _) => {
            check_output_empty(o)?;
            o.display().to_string()
        }
        (None, true) => std::fs::canonicalize(input)?.display().to_string(),
        (None, false) => return Err(needs_output()),
    };
    let scratch = super::Scratch::new("generate")?;
    let out = scratch.0.join("project");
    let generated = crate::fsx::scratch(|| generate(input, &out))?;
    outln!("Would replay from PROJECT:");
    for d in &generated.done {
        outln!("  {d}");
    }
    report_not_run(&generated.not_run);
    report_notes(&generated.notes);
    outln!("\nopbuilder alpha generate --dry-run: nothing was written. The plan:");
    if args.in_place {
        outln!(
            "  would move {target} aside, with your code, to {target}.backup-<N>, and put the new project in its place:"
        );
    }
    for f in files_below(&out)? {
        outln!("  would create    {}", Path::new(&target).join(f).display());
    }
    Ok(())
}

/// The usage error for neither --output-dir nor --in-place.
fn needs_output() -> anyhow::Error {
    usage(
        "alpha generate needs --output-dir DIR (a new or empty directory), or --in-place to regenerate \
         the project itself with a backup; for example: opbuilder alpha generate --output-dir ../regenerated",
    )
}

/// Warn about the external plugins that could not run.
fn report_not_run(not_run: &[(String, String)]) {
    for (key, why) in not_run {
        errln!(
            "{} the external plugin {key} of PROJECT's layout did not run, so its files are not in the new tree \
             (PROJECT still records it): {why}\n  Install it and generate again to have them",
            crate::term::label("warning")
        );
    }
}

fn report(done: &[String]) {
    outln!("Replayed from PROJECT:");
    for d in done {
        outln!("  {d}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(words: &str) -> Step {
        Step {
            words: words.split(' ').map(String::from).collect(),
            copy_first: None,
        }
    }

    fn order(steps: &[&str], main_go: &str) -> Vec<String> {
        order_like_main(steps.iter().map(|s| step(s)).collect(), main_go)
            .into_iter()
            .map(|s| s.words.join(" "))
            .collect()
    }

    const API_A: &str = "create api --group=g --version=v1 --kind=A --resource --controller=true";
    const API_A2: &str = "create api --group=g --version=v2 --kind=A --resource --controller=false";
    const API_B: &str = "create api --group=g --version=v1 --kind=B --resource --controller=true";
    const HOOK_A: &str = "create webhook --group=g --version=v1 --kind=A --defaulting";
    const CONV_A: &str = "create webhook --group=g --version=v1 --kind=A --conversion --spoke=v2";
    const HOOK_B: &str = "create webhook --group=g --version=v1 --kind=B --defaulting";
    const EDIT: &str = "edit --plugins=grafana.kubebuilder.io/v1-alpha";

    #[test]
    fn webhooks_are_replayed_where_main_go_wires_them() {
        // A's webhook was made right after A, before B; B's after B. Old and new style calls.
        let main_go = "\tif err := (&controller.AReconciler{\n\
                       \tif err := webhookv1.SetupAWebhookWithManager(mgr); err != nil {\n\
                       \tif err = (&controller.BReconciler{\n\
                       \tif err = (&gv1.B{}).SetupWebhookWithManager(mgr); err != nil {\n\
                       \t// +kubebuilder:scaffold:builder\n";
        let steps = ["init", API_A, API_B, HOOK_A, HOOK_B, EDIT];
        assert_eq!(
            order(&steps, main_go),
            ["init", API_A, HOOK_A, API_B, HOOK_B, EDIT]
        );
        // Webhooks main.go does not show keep their place after the types, before the edits.
        assert_eq!(order(&steps, "package main\n"), steps);
    }

    #[test]
    fn a_webhook_comes_after_its_own_type_and_the_spokes_it_converts_to() {
        // main.go wires A's conversion webhook above B's controller, but the webhook needs A's
        // v2 spoke, created after B.
        let main_go =
            "(&controller.AReconciler{\nSetupAWebhookWithManager(mgr)\n(&controller.BReconciler{\n";
        assert_eq!(
            order(&["init", API_A, API_B, API_A2, CONV_A], main_go),
            ["init", API_A, API_B, API_A2, CONV_A]
        );
        // A webhook wired above every controller (a core type's, with no type of its own to
        // create) comes right after init.
        let core = "create webhook --group=core --version=v1 --kind=Pod --defaulting";
        let main_go = "SetupPodWebhookWithManager(mgr)\n(&controller.AReconciler{\n";
        assert_eq!(
            order(&["init", API_A, core], main_go),
            ["init", core, API_A]
        );
    }
}
