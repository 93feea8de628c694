//! External plugins, Kubebuilder's "plugins phase 2": an executable in any language, installed
//! under a name and a version ([`discover`]), that takes part in `init`, `create api`,
//! `create webhook` and `edit` by the JSON protocol of [`protocol`]: it is shown the project's
//! files ([`universe`]) with the plan so far, and answers with files that join the command's
//! plan. It never writes itself: its files go through the same transaction as every other
//! plugin's (dry run, conflicts, journal, lock).

pub mod discover;
mod exec;
pub mod protocol;
mod universe;

use crate::planning::api::ResolvedResource;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::planning::webhook::ResolvedWebhook;
use anyhow::{anyhow, Result};
use discover::Installed;
use protocol::{Flag, Metadata, Problem, Request, API_VERSION};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;

/// The subcommands an external plugin takes part in, as the protocol names them: the
/// `command` of a request, and the argument of its `flags` and `metadata` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subcommand {
    Init,
    CreateApi,
    CreateWebhook,
    Edit,
}

impl Subcommand {
    pub fn command(self) -> &'static str {
        match self {
            Subcommand::Init => "init",
            Subcommand::CreateApi => "create api",
            Subcommand::CreateWebhook => "create webhook",
            Subcommand::Edit => "edit",
        }
    }
    /// The argument of the `flags` and `metadata` requests: `--init`, `--api`, ...
    fn flag(self) -> &'static str {
        match self {
            Subcommand::Init => "--init",
            Subcommand::CreateApi => "--api",
            Subcommand::CreateWebhook => "--webhook",
            Subcommand::Edit => "--edit",
        }
    }
}

/// An installed external plugin in a chain.
pub struct External {
    key: &'static str,
    installed: Installed,
    /// Its answers to `flags`, per subcommand (asked once per process: the command line is
    /// parsed with them, then the chain checks them).
    flags: Mutex<HashMap<Subcommand, Result<Vec<Flag>, String>>>,
}

impl External {
    /// A plugin found by [`discover::find`]; the key is kept for the life of the process, as
    /// the built-in plugins' keys are.
    pub fn new(installed: Installed) -> External {
        External {
            key: Box::leak(installed.key().into_boxed_str()),
            installed,
            flags: Mutex::new(HashMap::new()),
        }
    }

    pub fn installed(&self) -> &Installed {
        &self.installed
    }

    fn who(&self) -> String {
        format!(
            "the external plugin {} ({})",
            self.key,
            self.installed.path.display()
        )
    }

    /// Send one request and read the answer, failures told with the plugin's name.
    fn ask(&self, dir: &Path, request: &Request, what: &str) -> Result<protocol::Response> {
        let who = format!("{} answering `{what}`", self.who());
        let out = exec::call(&self.installed.path, dir, request.to_json(), &who)?;
        protocol::parse(&out).map_err(|p| match p {
            Problem::Invalid(why) => anyhow!(
                "{who}: {why}. Nothing was written. A plugin must print exactly one JSON PluginResponse on stdout \
                 (its logs go to stderr)"
            ),
            Problem::Failed(msgs) if msgs.is_empty() => anyhow!(
                "{who} reported an error (`error: true`) without a message. Nothing was written"
            ),
            Problem::Failed(msgs) => anyhow!(
                "{who} reported an error:\n    {}\n  Nothing was written",
                msgs.join("\n    ")
            ),
        })
    }

    /// The flags the plugin declares for `sub` (its answer to a `flags` request), or why it
    /// gave none: then, as in Kubebuilder, every flag given on the command line is passed on.
    pub fn flags(&self, sub: Subcommand) -> Result<Vec<Flag>, String> {
        let mut cache = self.flags.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(sub)
            .or_insert_with(|| {
                let args = [sub.flag().to_string()];
                let request = Request {
                    api_version: API_VERSION,
                    args: &args,
                    command: "flags",
                    universe: &BTreeMap::new(),
                    plugin_chain: &[],
                    config: None,
                };
                self.ask(Path::new("."), &request, "flags")
                    .map(|r| r.flags)
                    .map_err(|e| format!("{e:#}"))
            })
            .clone()
    }

    /// The plugin's help for `sub` (its answer to a `metadata` request).
    pub fn metadata(&self, sub: Subcommand) -> Result<Metadata> {
        let args = [sub.flag().to_string()];
        let request = Request {
            api_version: API_VERSION,
            args: &args,
            command: "metadata",
            universe: &BTreeMap::new(),
            plugin_chain: &[],
            config: None,
        };
        Ok(self.ask(Path::new("."), &request, "metadata")?.metadata)
    }

    /// Run the plugin for `sub` in the command's context: its answer joins the plan.
    pub fn scaffold(&self, cx: &mut Cx, sub: Subcommand) -> Result<()> {
        let universe = universe::current(cx.root, cx.plan)?;
        // Kubebuilder shows each plugin the chain with its own key first.
        let chain = key_first(&cx.project.layout, self.key);
        let mut config: serde_json::Value = serde_yaml::from_str(&cx.project.to_yaml())
            .map_err(|e| anyhow!("PROJECT as the plugin would see it: {e}"))?;
        if let Some(obj) = config.as_object_mut() {
            obj.insert("layout".into(), serde_json::json!(chain));
        }
        let request = Request {
            api_version: API_VERSION,
            args: cx.plugin_args,
            command: sub.command(),
            universe: &universe,
            plugin_chain: &chain,
            config: Some(&config),
        };
        let answer = self.ask(cx.root, &request, sub.command())?;
        universe::answer_into_plan(&universe, answer.universe, cx.plan, cx.notes, &self.who())
    }
}

/// `chain` with `key` moved (or added) to the front.
fn key_first(chain: &[String], key: &str) -> Vec<String> {
    std::iter::once(key.to_string())
        .chain(chain.iter().filter(|k| *k != key).cloned())
        .collect()
}

impl Plugin for External {
    fn key(&self) -> &'static str {
        self.key
    }
    fn is_external(&self) -> bool {
        true
    }
    fn init(&self, cx: &mut Cx, _boilerplate: Option<&str>) -> Result<()> {
        self.scaffold(cx, Subcommand::Init)?;
        // Unless a plugin of the layout (go/v4) says what comes next.
        if cx.plan.next.is_none() {
            cx.plan.next = Some(crate::plan::Next {
                note: Some(format!(
                    "Later commands run the plugins of PROJECT's layout ({}).",
                    cx.project.layout.join(", ")
                )),
                ..Default::default()
            });
        }
        Ok(())
    }
    fn create_api(&self, cx: &mut Cx, _res: &ResolvedResource) -> Result<()> {
        self.scaffold(cx, Subcommand::CreateApi)
    }
    fn create_webhook(&self, cx: &mut Cx, _hook: &ResolvedWebhook) -> Result<()> {
        self.scaffold(cx, Subcommand::CreateWebhook)
    }
    fn edit(&self, cx: &mut Cx, _args: &EditArgs) -> Result<()> {
        self.scaffold(cx, Subcommand::Edit)
    }
}

/// The `args` of a request, from a command line as Kubebuilder picks them: every word that
/// starts with `--` (but `--plugins`), each followed by the next word when that does not start
/// with `--`. Positional words (`create`, `api`) and short flags stay out.
pub fn request_args(words: &[String]) -> Vec<String> {
    let is_plugins = |w: &str| w == "--plugins" || w.starts_with("--plugins=");
    let mut out = vec![];
    for (i, w) in words.iter().enumerate() {
        if w.starts_with("--") && !is_plugins(w) {
            out.push(w.clone());
            if let Some(next) = words.get(i + 1).filter(|n| !n.starts_with("--")) {
                out.push(next.clone());
            }
        }
    }
    out
}

/// The names of the flags given in request `args` (`--team x` and `--team=x` both give `team`).
pub fn given_flags(args: &[String]) -> Vec<&str> {
    args.iter()
        .filter_map(|a| a.strip_prefix("--"))
        .map(|a| a.split_once('=').map_or(a, |(n, _)| n))
        .collect()
}

/// Check that `name` can be a long flag on our command line.
pub fn valid_flag_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

/// The flag names Kubebuilder keeps from every external plugin: the resource's and `--help`.
pub const RESERVED_FLAGS: &[&str] = &["group", "version", "kind", "help", "plugins"];

/// A short explanation of why a subcommand has no flags from `plugin`, for `--help`.
pub fn flags_failed(plugin: &str, why: &str) -> String {
    format!(
        "{plugin} did not list its flags, so every flag given is passed on to it unchecked ({})",
        why.lines().next().unwrap_or(why)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn request_args_are_picked_as_kubebuilder_picks_them() {
        let argv = words(
            "opbuilder init --plugins go/v4,foo/v1 --domain example.com --loud --fetch-deps=false --team web -x --plugins=a",
        );
        assert_eq!(
            request_args(&argv),
            words("--domain example.com --loud --fetch-deps=false --team web")
        );
        assert_eq!(
            given_flags(&words("--domain example.com --loud --make=false")),
            ["domain", "loud", "make"]
        );
    }

    #[test]
    fn the_plugin_sees_its_key_first() {
        let chain = words("go.kubebuilder.io/v4 foo.acme.io/v1");
        assert_eq!(
            key_first(&chain, "foo.acme.io/v1"),
            words("foo.acme.io/v1 go.kubebuilder.io/v4")
        );
        assert_eq!(
            key_first(&words("go.kubebuilder.io/v4"), "foo.acme.io/v1"),
            words("foo.acme.io/v1 go.kubebuilder.io/v4")
        );
        assert_eq!(key_first(&[], "foo.acme.io/v1"), words("foo.acme.io/v1"));
    }

    #[test]
    fn flag_names_are_checked() {
        assert!(valid_flag_name("team"));
        assert!(valid_flag_name("with-docs_2"));
        assert!(!valid_flag_name(""));
        assert!(!valid_flag_name("-x"));
        assert!(!valid_flag_name("a b"));
    }
}
