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
pub mod deployimage;
pub mod golang;
pub mod grafana;
pub mod helm;
pub mod typed_clients;

use crate::commands::api::ResolvedResource;
use crate::commands::edit::EditArgs;
use crate::commands::webhook::ResolvedWebhook;
use crate::error::usage;
use crate::out::errln;
use crate::plan::Plan;
use crate::project::Project;
use anyhow::{bail, Result};
use std::path::Path;

/// What a plugin works on during one command.
pub struct Cx<'a> {
    pub root: &'a Path,
    pub plan: &'a mut Plan,
    pub project: &'a mut Project,
    /// Messages printed after the plan is applied.
    pub notes: &'a mut Vec<String>,
}

/// One plugin: its key and the hooks it takes part in. A hook adds operations to the plan and
/// may change PROJECT; the default hooks do nothing, as a plugin without that subcommand.
pub trait Plugin: Sync {
    /// The canonical key, as Kubebuilder records it in PROJECT.
    fn key(&self) -> &'static str;
    /// Whether the plugin, once recorded under PROJECT's `plugins:`, joins every later
    /// `create api` (opbuilder's own plugins, which stay out of `layout`).
    fn follows_project(&self) -> bool {
        false
    }
    fn init(&self, _cx: &mut Cx, _boilerplate: Option<&str>) -> Result<()> {
        Ok(())
    }
    fn create_api(&self, _cx: &mut Cx, _res: &ResolvedResource) -> Result<()> {
        Ok(())
    }
    fn create_webhook(&self, _cx: &mut Cx, _hook: &ResolvedWebhook) -> Result<()> {
        Ok(())
    }
    fn edit(&self, _cx: &mut Cx, _args: &EditArgs) -> Result<()> {
        Ok(())
    }
}

/// What opbuilder can do with a known key.
#[derive(Clone, Copy)]
pub enum Support {
    /// A plugin opbuilder runs.
    Runs(&'static dyn Plugin),
    /// Not available yet; the text says what to do instead.
    NotYet(&'static str),
}

/// A plugin Kubebuilder v4.15 knows.
pub struct Known {
    /// Fully qualified name, such as `grafana.kubebuilder.io`.
    pub name: &'static str,
    /// Version, such as `v1-alpha`.
    pub version: &'static str,
    pub support: Support,
}

impl std::fmt::Debug for Known {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.key())
    }
}

impl Known {
    pub fn key(&self) -> String {
        format!("{}/{}", self.name, self.version)
    }
}

/// Every plugin Kubebuilder v4.15 ships.
pub static KNOWN: &[Known] = &[
    Known {
        name: "go.kubebuilder.io",
        version: "v4",
        support: Support::Runs(&golang::GoV4),
    },
    Known {
        name: "go.kubebuilder.io",
        version: "v3",
        support: Support::NotYet(
            "the go/v3 layout was removed in Kubebuilder v4 and opbuilder scaffolds go/v4 only: migrate the project \
             to go/v4 (see Kubebuilder's migration guide)",
        ),
    },
    Known {
        name: "base.go.kubebuilder.io",
        version: "v4",
        support: Support::Runs(&golang::BaseGoV4),
    },
    Known {
        name: "kustomize.common.kubebuilder.io",
        version: "v2",
        support: Support::Runs(&golang::KustomizeV2),
    },
    Known {
        name: "grafana.kubebuilder.io",
        version: "v1-alpha",
        support: Support::Runs(&grafana::Grafana),
    },
    Known {
        name: "autoupdate.kubebuilder.io",
        version: "v1-alpha",
        support: Support::Runs(&autoupdate::AutoUpdate),
    },
    // opbuilder's own plugin, not Kubebuilder's.
    Known {
        name: "typed-clients.opbuilder.io",
        version: "v1-alpha",
        support: Support::Runs(&typed_clients::TypedClients),
    },
    Known {
        name: "deploy-image.go.kubebuilder.io",
        version: "v1-alpha",
        support: Support::Runs(&deployimage::DeployImage),
    },
    Known {
        name: "helm.kubebuilder.io",
        version: "v2-alpha",
        support: Support::Runs(&helm::Helm),
    },
    Known {
        name: "helm.kubebuilder.io",
        version: "v1-alpha",
        support: Support::NotYet(
            "helm.kubebuilder.io/v1-alpha is deprecated (Kubebuilder replaced it with helm.kubebuilder.io/v2-alpha) \
             and opbuilder does not run it: move to v2-alpha with `opbuilder edit --plugins=helm.kubebuilder.io/v2-alpha`, \
             which rewrites the chart from the kustomize output and drops the v1-alpha entry from PROJECT",
        ),
    },
];

/// Resolve a key as Kubebuilder does: `NAME[/VERSION]`, where NAME is the full name or its
/// first labels (`grafana`, `deploy-image`, `kustomize`, `go`). `None`: no plugin has that key;
/// `Err`: several do (a version is missing).
pub fn lookup(key: &str) -> Result<Option<&'static Known>> {
    let (name, version) = match key.split_once('/') {
        Some((n, v)) => (n, Some(v)),
        None => (key, None),
    };
    let found: Vec<&Known> = KNOWN
        .iter()
        .filter(|k| {
            let name_ok = k.name == name
                || k.name
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('.'));
            // go/v3 is known only to explain that it was removed: a key without version means go/v4.
            let removed = k.name == "go.kubebuilder.io" && k.version == "v3";
            name_ok && version.map_or(!removed, |v| v == k.version)
        })
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => Err(usage(format!(
            "--plugins {key:?} names several plugins ({}); add the version, for example --plugins={}",
            many.iter().map(|k| k.key()).collect::<Vec<_>>().join(", "),
            many[0].key()
        ))),
    }
}

/// The plugins of a `--plugins` value, resolved (usage errors exit 2). `None` when not given.
pub fn parse_flag(value: Option<&str>) -> Result<Option<Vec<&'static Known>>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let mut out: Vec<&'static Known> = vec![];
    for key in value.split(',').map(str::trim).filter(|k| !k.is_empty()) {
        let known = lookup(key)?.ok_or_else(|| {
            usage(format!(
                "invalid value {key:?} for --plugins: no plugin has this key. opbuilder knows Kubebuilder's plugins \
                 (go/v4, kustomize/v2, grafana/v1-alpha, autoupdate/v1-alpha, deploy-image/v1-alpha, helm/v2-alpha) and its own \
                 typed-clients/v1-alpha; external plugins are not supported\n  example of a valid value: --plugins=go/v4"
            ))
        })?;
        if let Support::NotYet(what) = known.support {
            return Err(usage(format!(
                "--plugins {key:?} ({}): {what}",
                known.key()
            )));
        }
        if out.iter().any(|k| std::ptr::eq(*k, known)) {
            return Err(usage(format!(
                "--plugins names {} twice; give each plugin once, for example --plugins=go/v4",
                known.key()
            )));
        }
        out.push(known);
    }
    if out.is_empty() {
        return Err(usage(
            "--plugins is empty; name at least one plugin, for example --plugins=go/v4",
        ));
    }
    Ok(Some(out))
}

/// Warnings for PROJECT `plugins:` sections that opbuilder keeps but cannot act on: the files
/// those plugins made are left as they are, so the user must know to update them elsewhere.
pub fn warnings(project: &Project) -> Vec<String> {
    let mut out = vec![];
    for key in project.plugin_keys() {
        match lookup(&key).ok().flatten() {
            Some(Known {
                support: Support::NotYet(what),
                ..
            }) => out.push(format!(
                "PROJECT records the plugin {key}, which opbuilder cannot run yet; its settings and files are                  kept as they are and are not updated by this command: {what}"
            )),
            Some(_) => {}
            None => out.push(format!(
                "PROJECT records settings of the plugin {key:?}, which opbuilder does not know (an external plugin?);                  they are kept as they are, but the plugin is not run: run it with kubebuilder when its files need updating"
            )),
        }
    }
    out
}

/// The command a chain runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Init,
    CreateApi,
    CreateWebhook,
    Edit,
}

/// The plugins one command runs, in order.
pub struct Chain {
    plugins: Vec<&'static Known>,
    /// Whether the chain holds the go/v4 layout (go/v4, or base.go/v4 with kustomize/v2).
    pub has_go: bool,
}

/// Check a chain's go layout: go/v4 alone, or base.go/v4 together with kustomize/v2.
fn go_layout(plugins: &[&'static Known]) -> Result<bool> {
    let has = |n: &str| plugins.iter().any(|k| k.name == n);
    let (go, base, kust) = (
        has("go.kubebuilder.io"),
        has("base.go.kubebuilder.io"),
        has("kustomize.common.kubebuilder.io"),
    );
    if go && (base || kust) {
        return Err(usage(
            "--plugins: go/v4 already holds base.go/v4 and kustomize/v2; name go/v4 alone, for example --plugins=go/v4",
        ));
    }
    if base != kust {
        return Err(usage(
            "--plugins: opbuilder scaffolds base.go.kubebuilder.io/v4 and kustomize/v2 together only (that pair is go/v4); \
             for example --plugins=kustomize/v2,base.go.kubebuilder.io/v4, or --plugins=go/v4",
        ));
    }
    Ok(go || base)
}

impl Chain {
    /// The chain for `command`: the `--plugins` value when given, else PROJECT's layout (for
    /// `init`, go/v4). Keys in PROJECT that opbuilder cannot run stop the command with what to do;
    /// plugin sections it cannot update are reported as warnings on stderr.
    pub fn for_command(
        project: Option<&Project>,
        flag: Option<Vec<&'static Known>>,
        command: Command,
    ) -> Result<Chain> {
        if let Some(p) = project {
            for w in warnings(p) {
                errln!("{} {w}", crate::term::label("warning"));
            }
        }
        let plugins = match (flag, project) {
            (Some(f), _) => f,
            (None, Some(p)) if !p.layout.is_empty() => {
                let mut v = vec![];
                for key in &p.layout {
                    match lookup(key).ok().flatten() {
                        Some(k) => match k.support {
                            Support::Runs(_) => v.push(k),
                            Support::NotYet(what) => bail!(
                                "PROJECT's layout names the plugin {key}, which opbuilder cannot run: {what}.\n  \
                                 To run go/v4 alone and leave that plugin's files as they are, pass --plugins=go/v4"
                            ),
                        },
                        None => bail!(
                            "PROJECT's layout names the plugin {key:?}, which opbuilder does not know (an external \
                             plugin?); opbuilder runs Kubebuilder's own plugins only.\n  Run this command with \
                             kubebuilder, or pass --plugins=go/v4 to run go/v4 alone and leave that plugin's files as they are"
                        ),
                    }
                }
                v
            }
            _ => vec![&KNOWN[0]],
        };
        let mut plugins = plugins;
        if let (Some(p), Command::CreateApi) = (project, command) {
            for key in p.plugin_keys() {
                if let Some(
                    k @ Known {
                        support: Support::Runs(pl),
                        ..
                    },
                ) = lookup(&key).ok().flatten()
                {
                    if pl.follows_project() && !plugins.iter().any(|x| std::ptr::eq(*x, k)) {
                        plugins.push(k);
                    }
                }
            }
        }
        // They add to go/v4's files, so they run after it, whatever the order of --plugins.
        plugins.sort_by_key(|k| matches!(k.support, Support::Runs(p) if p.follows_project()));
        // deploy-image runs go/v4's create api itself (as Kubebuilder's plugin runs the go/v4
        // scaffolders), and has no other subcommand.
        let deploy_image = plugins.iter().any(|k| k.name == deployimage::NAME);
        if deploy_image && command != Command::CreateApi {
            return Err(usage(
                "--plugins: deploy-image/v1-alpha takes part in `create api` only; for example \
                 opbuilder create api --group cache --version v1alpha1 --kind Memcached \
                 --image=memcached:1.6.26-alpine3.19 --plugins=deploy-image/v1-alpha",
            ));
        }
        let has_go = go_layout(&plugins)? || deploy_image;
        if !has_go
            && matches!(
                command,
                Command::Init | Command::CreateApi | Command::CreateWebhook
            )
        {
            let what = match command {
                Command::Init => "init",
                Command::CreateApi => "create api",
                _ => "create webhook",
            };
            return Err(usage(format!(
                "--plugins: `{what}` needs the go/v4 layout in the chain (the other plugins only add to it); \
                 for example --plugins=go/v4"
            )));
        }
        Ok(Chain { plugins, has_go })
    }

    /// The canonical keys, in order: what `init` records as PROJECT's layout (without the
    /// plugins that record themselves under `plugins:` only).
    pub fn keys(&self) -> Vec<String> {
        self.plugins
            .iter()
            .filter(|k| !matches!(k.support, Support::Runs(p) if p.follows_project()))
            .map(|k| match k.support {
                Support::Runs(p) => p.key().to_string(),
                Support::NotYet(_) => k.key(),
            })
            .collect()
    }

    /// Whether the chain holds the plugin `name` (a full name such as `autoupdate.kubebuilder.io`).
    pub fn has(&self, name: &str) -> bool {
        self.plugins.iter().any(|k| k.name == name)
    }

    /// Whether the chain is the go/v4 layout and nothing more.
    pub fn only_go(&self) -> bool {
        self.plugins.iter().all(|k| {
            matches!(
                k.name,
                "go.kubebuilder.io" | "base.go.kubebuilder.io" | "kustomize.common.kubebuilder.io"
            )
        })
    }

    fn each(&self, mut f: impl FnMut(&dyn Plugin) -> Result<()>) -> Result<()> {
        for k in &self.plugins {
            if let Support::Runs(p) = k.support {
                f(p)?;
            }
        }
        Ok(())
    }

    pub fn init(&self, cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
        self.each(|p| p.init(cx, boilerplate))
    }
    pub fn create_api(&self, cx: &mut Cx, res: &ResolvedResource) -> Result<()> {
        let deploy_image = self.has(deployimage::NAME);
        self.each(|p| {
            // deploy-image plans the go/v4 files itself, before replacing some of them.
            if deploy_image
                && matches!(
                    p.key(),
                    "go.kubebuilder.io/v4" | "base.go.kubebuilder.io/v4"
                )
            {
                return Ok(());
            }
            p.create_api(cx, res)
        })
    }
    pub fn create_webhook(&self, cx: &mut Cx, hook: &ResolvedWebhook) -> Result<()> {
        self.each(|p| p.create_webhook(cx, hook))
    }
    pub fn edit(&self, cx: &mut Cx, args: &EditArgs) -> Result<()> {
        self.each(|p| p.edit(cx, args))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_keys_resolve_to_kubebuilders_canonical_keys() {
        for (given, want) in [
            ("go/v4", "go.kubebuilder.io/v4"),
            ("go.kubebuilder.io/v4", "go.kubebuilder.io/v4"),
            ("go", "go.kubebuilder.io/v4"),
            ("kustomize/v2", "kustomize.common.kubebuilder.io/v2"),
            ("base.go.kubebuilder.io/v4", "base.go.kubebuilder.io/v4"),
            ("grafana/v1-alpha", "grafana.kubebuilder.io/v1-alpha"),
            (
                "grafana.kubebuilder.io/v1-alpha",
                "grafana.kubebuilder.io/v1-alpha",
            ),
            ("autoupdate/v1-alpha", "autoupdate.kubebuilder.io/v1-alpha"),
            (
                "deploy-image/v1-alpha",
                "deploy-image.go.kubebuilder.io/v1-alpha",
            ),
            (
                "deploy-image.go.kubebuilder.io/v1-alpha",
                "deploy-image.go.kubebuilder.io/v1-alpha",
            ),
            ("helm/v2-alpha", "helm.kubebuilder.io/v2-alpha"),
            (
                "helm.kubebuilder.io/v1-alpha",
                "helm.kubebuilder.io/v1-alpha",
            ),
        ] {
            assert_eq!(lookup(given).unwrap().unwrap().key(), want, "{given}");
        }
        assert!(lookup("example.com/v1").unwrap().is_none());
        assert!(
            lookup("gra/v1-alpha").unwrap().is_none(),
            "a prefix must end at a dot"
        );
        assert!(lookup("helm").is_err(), "two helm versions: ambiguous");
    }

    #[test]
    fn flag_refuses_what_cannot_run_naming_it() {
        for (v, needle) in [
            ("helm/v1-alpha", "deprecated"),
            ("example.com/v1", "example.com/v1"),
            ("go/v4,go.kubebuilder.io/v4", "twice"),
            (",", "empty"),
        ] {
            let e = parse_flag(Some(v)).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{v}");
            assert!(e.to_string().contains(needle), "{v}: {e}");
        }
    }

    #[test]
    fn go_layout_is_go_v4_or_the_base_and_kustomize_pair() {
        let chain = |v: &str, c| Chain::for_command(None, parse_flag(Some(v)).unwrap(), c);
        assert!(chain("go/v4", Command::Init).unwrap().has_go);
        let pair = chain("kustomize/v2,base.go.kubebuilder.io/v4", Command::Init).unwrap();
        assert_eq!(
            pair.keys(),
            [
                "kustomize.common.kubebuilder.io/v2",
                "base.go.kubebuilder.io/v4"
            ]
        );
        assert!(chain("go/v4,kustomize/v2", Command::Init).is_err());
        assert!(chain("kustomize/v2", Command::Init).is_err());
        assert!(chain("grafana/v1-alpha", Command::Init).is_err());
        assert!(chain("grafana/v1-alpha", Command::CreateApi).is_err());
        let edit = chain("grafana/v1-alpha", Command::Edit).unwrap();
        assert!(!edit.has_go && edit.has("grafana.kubebuilder.io"));
        let init = chain("go/v4,grafana/v1-alpha", Command::Init).unwrap();
        assert_eq!(
            init.keys(),
            ["go.kubebuilder.io/v4", "grafana.kubebuilder.io/v1-alpha"]
        );
    }

    #[test]
    fn project_layout_with_a_plugin_opbuilder_cannot_run_stops_the_command() {
        let mut p = Project::parse(
            "layout:\n- go.kubebuilder.io/v4\n- helm.kubebuilder.io/v1-alpha\nversion: \"3\"\n",
        )
        .unwrap();
        let e = Chain::for_command(Some(&p), None, Command::CreateApi)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("helm.kubebuilder.io/v1-alpha") && e.contains("--plugins=go/v4"),
            "{e}"
        );
        p.layout = vec!["go.kubebuilder.io/v4".into(), "my.example.com/v1".into()];
        let e = Chain::for_command(Some(&p), None, Command::CreateApi)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("my.example.com/v1") && e.contains("external"),
            "{e}"
        );
        // An explicit --plugins=go/v4 runs go/v4 alone.
        let c = Chain::for_command(
            Some(&p),
            parse_flag(Some("go/v4")).unwrap(),
            Command::CreateApi,
        );
        assert!(c.is_ok());
    }
}
