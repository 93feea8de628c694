//! The chain of plugins one command runs, picked from `--plugins` or PROJECT, in order.

use super::deployimage;
use super::external::{self, Subcommand};
use super::registry::{lookup, refuse_foreign, warnings, Known, Support, KNOWN};
use crate::error::usage;
use crate::out::errln;
use crate::planning::api::ResolvedResource;
use crate::planning::delete::Undo;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::planning::webhook::ResolvedWebhook;
use crate::project::Project;
use anyhow::{bail, Result};

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
    /// Whether the chain holds the Rust layout (rust.opbuilder.io/v1-beta), which external plugins
    /// and the built-in plugins `joins_rust` names may join.
    pub has_rust: bool,
    /// Whether the chain holds an external plugin.
    pub has_external: bool,
}

/// Whether a built-in plugin may join the Rust layout: helm/v2-alpha and grafana/v1-alpha, which
/// read what the Rust layout has as go/v4 does (the kustomize output, the manager's metrics);
/// autoupdate/v1-alpha, whose workflow runs `opbuilder alpha update`; and deploy-image/v1-alpha
/// (`create api` only), which plans a Rust controller in a Rust project; certs/v1-alpha, which
/// plans the Rust manager's own webhook certificate; and telemetry/v1-alpha, which dispatches on
/// the layout itself (src/plugins/telemetry.rs, `rust_part`).
pub fn joins_rust(k: &Known) -> bool {
    matches!(
        k.name,
        super::helm::NAME
            | super::grafana::NAME
            | super::autoupdate::NAME
            | deployimage::NAME
            | super::certs::NAME
            | super::telemetry::NAME
    )
}

/// Whether `k` is an external plugin (an executable that speaks Kubebuilder's protocol).
fn is_external(k: &Known) -> bool {
    matches!(k.support, Support::Runs(p) if p.is_external())
}

/// Refuse the built-in plugins of a chain that cannot join the Rust layout (usage error).
fn check_joins_rust(plugins: &[&'static Known]) -> Result<()> {
    let others: Vec<String> = plugins
        .iter()
        .filter(|k| k.name != super::rust::NAME && !is_external(k) && !joins_rust(k))
        .map(|k| k.key())
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    let one = others.len() == 1;
    Err(usage(format!(
        "--plugins: {} cannot join the Rust layout (rust.opbuilder.io/v1-beta): only helm/v2-alpha, \
         grafana/v1-alpha, autoupdate/v1-alpha, telemetry/v1-alpha, deploy-image/v1-alpha (create api), \
         certs/v1-alpha and external plugins do; leave {} out, for example \
         --plugins=rust.opbuilder.io/v1-beta,helm/v2-alpha",
        others.join(" and "),
        if one { "it" } else { "them" },
    )))
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
        // Another tool's layout is refused whatever the command line says: nothing opbuilder
        // plans fits such a project.
        if let Some(p) = project {
            refuse_foreign(&p.layout)?;
        }
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
                    match lookup(key).map_err(|e| {
                        e.context(format!("PROJECT's layout names the plugin {key:?}"))
                    })? {
                        Some(k) => match k.support {
                            Support::Runs(_) => v.push(k),
                            // Left out of the chain; `warnings` said so above.
                            Support::Kept(_) => {}
                            Support::Legacy(what) => bail!(
                                "PROJECT's layout names {key}, which opbuilder does not extend: {what}"
                            ),
                            Support::Foreign(_) => unreachable!("refused above"),
                        },
                        None => bail!(
                            "PROJECT's layout names the plugin {key:?}, which is neither one of Kubebuilder's or \
                             opbuilder's plugins nor an installed external plugin: {}\n  Install the plugin there, or pass \
                             --plugins=go/v4 to run go/v4 alone and leave that plugin's files as they are",
                            external::discover::not_found(key)
                        ),
                    }
                }
                v
            }
            _ => vec![&KNOWN[0]],
        };
        let mut plugins = plugins;
        if let (Some(p), Command::CreateApi | Command::CreateWebhook) = (project, command) {
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
        // In a project of the Rust layout, deploy-image plans the layout's files and its own
        // Rust controller (as it runs go/v4's scaffolders in a Go project).
        let rust_project = project.is_some_and(|p| p.rust_layout().is_some());
        let has_rust =
            plugins.iter().any(|k| k.name == super::rust::NAME) || (deploy_image && rust_project);
        let has_external = plugins.iter().any(|k| is_external(k));
        // External plugins may join the Rust layout (they are not bound to go/v4's files), and
        // so may the built-in plugins `joins_rust` names.
        if has_rust {
            check_joins_rust(&plugins)?;
        }
        let has_go = go_layout(&plugins)? || (deploy_image && !has_rust);
        // An external plugin may stand alone: it scaffolds what it likes.
        if !has_go
            && !has_rust
            && !has_external
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
                "--plugins: `{what}` needs a layout in the chain, go/v4 or rust.opbuilder.io/v1-beta (the other \
                 plugins only add to one), or an external plugin; for example --plugins=go/v4"
            )));
        }
        Ok(Chain {
            plugins,
            has_go,
            has_rust,
            has_external,
        })
    }

    /// Whether the chain holds a layout plugin (go/v4 or the Rust layout); without one, it is
    /// external plugins (and plugins that only add files) alone.
    pub fn has_layout(&self) -> bool {
        self.has_go || self.has_rust
    }

    /// The external plugins of the chain, in order.
    pub fn externals(&self) -> Vec<&'static external::External> {
        self.plugins
            .iter()
            .filter_map(|k| super::registry::external(k))
            .collect()
    }

    /// Run the chain's external plugins for `sub`, where no layout plugin takes part (the
    /// command's own request then has nothing to resolve).
    pub fn run_externals(&self, cx: &mut Cx, sub: Subcommand) -> Result<()> {
        for e in self.externals() {
            e.scaffold(cx, sub)?;
        }
        Ok(())
    }

    /// The canonical keys, in order: what `init` records as PROJECT's layout (without the
    /// plugins that record themselves under `plugins:` only).
    pub fn keys(&self) -> Vec<String> {
        self.plugins
            .iter()
            .filter(|k| !matches!(k.support, Support::Runs(p) if p.follows_project()))
            .map(|k| match k.support {
                Support::Runs(p) => p.key().to_string(),
                _ => k.key(),
            })
            .collect()
    }

    /// Refuse what cannot run in a project of the Rust layout: a built-in plugin other than the
    /// layout and those `joins_rust` names (for `edit --plugins` without the layout).
    pub fn check_rust_project(&self) -> Result<()> {
        check_joins_rust(&self.plugins)
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
            // With the Rust layout, deploy-image plans the layout's files and its kube-rs
            // controller.
            if self.has_rust && p.key() == deployimage::KEY {
                return super::rust::deployimage::create_api(cx, res);
            }
            // deploy-image plans the layout's files itself, before replacing some of them.
            if deploy_image
                && matches!(
                    p.key(),
                    "go.kubebuilder.io/v4"
                        | "base.go.kubebuilder.io/v4"
                        | crate::project::RUST_LAYOUT
                        | crate::project::RUST_LAYOUT_V1_ALPHA
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
    /// The chain of a deletion: this one with the plugins PROJECT records (in `layout` or under
    /// `plugins:`) that plan what goes with a kind beside the layout's files (the helm chart's
    /// templates), which no `create` runs.
    pub fn for_deletion(mut self, project: &Project) -> Chain {
        let recorded = project.layout.iter().cloned().chain(project.plugin_keys());
        for key in recorded {
            if let Ok(Some(k)) = lookup(&key) {
                if matches!(k.support, Support::Runs(p) if p.joins_deletion())
                    && !self.plugins.iter().any(|x| std::ptr::eq(*x, k))
                {
                    self.plugins.push(k);
                }
            }
        }
        self
    }

    /// `delete api` of `res`: each plugin plans what its `create api` wrote. An API that
    /// deploy-image made (PROJECT records its options) is planned by deploy-image, which plans
    /// the layout's files itself, whatever the chain names.
    pub fn delete_api(&self, cx: &mut Cx, res: &ResolvedResource, undo: &mut Undo) -> Result<()> {
        let deploy_image = res.deploy_image.is_some();
        if deploy_image {
            if self.has_rust {
                super::rust::deployimage::delete_api(cx, res, undo)?;
            } else {
                deployimage::DeployImage.delete_api(cx, res, undo)?;
            }
        }
        self.each(|p| {
            let layout = matches!(
                p.key(),
                "go.kubebuilder.io/v4"
                    | "base.go.kubebuilder.io/v4"
                    | crate::project::RUST_LAYOUT
                    | crate::project::RUST_LAYOUT_V1_ALPHA
            );
            if p.key() == deployimage::KEY || (deploy_image && layout) {
                return Ok(());
            }
            p.delete_api(cx, res, undo)
        })
    }
    /// `delete webhook` of `hook`: each plugin plans what its `create webhook` wrote.
    pub fn delete_webhook(
        &self,
        cx: &mut Cx,
        hook: &ResolvedWebhook,
        undo: &mut Undo,
    ) -> Result<()> {
        self.each(|p| p.delete_webhook(cx, hook, undo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::registry::parse_flag;

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
            "layout:\n- go.kubebuilder.io/v4\n- my.example.com/v1\nversion: \"3\"\n",
        )
        .unwrap();
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
        // The layouts of earlier releases (go/v4-alpha is not taken for an external plugin)
        // point to alpha generate.
        for old in [
            "go.kubebuilder.io/v3",
            "go.kubebuilder.io/v4-alpha",
            "go.kubebuilder.io/v2",
        ] {
            p.layout = vec![old.into()];
            let e = Chain::for_command(Some(&p), None, Command::CreateApi)
                .err()
                .unwrap();
            assert_eq!(crate::error::exit_code(&e), 1, "{old}");
            assert!(e.to_string().contains("alpha generate"), "{old}: {e}");
        }
    }

    #[test]
    fn helm_v1_alpha_is_left_out_and_the_sdks_layouts_are_refused() {
        let mut p = Project::parse(
            "layout:\n- go.kubebuilder.io/v4\n- helm.kubebuilder.io/v1-alpha\nversion: \"3\"\n",
        )
        .unwrap();
        for c in [Command::CreateApi, Command::CreateWebhook, Command::Edit] {
            let chain = Chain::for_command(Some(&p), None, c).unwrap();
            assert!(chain.has_go && chain.only_go(), "{c:?}");
        }
        for sdk in [
            "helm.sdk.operatorframework.io/v1",
            "ansible.sdk.operatorframework.io/v1",
        ] {
            p.layout = vec![sdk.into()];
            for flag in [None, Some("go/v4")] {
                let e = Chain::for_command(Some(&p), parse_flag(flag).unwrap(), Command::CreateApi)
                    .err()
                    .unwrap();
                assert_eq!(crate::error::exit_code(&e), 2, "{sdk}");
                assert!(
                    e.to_string().contains(sdk) && e.to_string().contains("Go (go/v4"),
                    "{e}"
                );
            }
        }
    }
}
