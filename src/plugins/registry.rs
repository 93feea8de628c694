//! The registry: every plugin key Kubebuilder v4.15 ships, and opbuilder's own, with what
//! opbuilder does with each (runs it, or refuses it saying what to do instead); the external
//! plugins installed on this machine, found by key when asked for; resolving a key as
//! Kubebuilder does and reading `--plugins`.

use super::external::{self, External};
use super::{
    autoupdate, certs, deployimage, golang, grafana, helm, rust, telemetry, typed_clients,
};
use crate::error::usage;
use crate::planning::plugin::Plugin;
use crate::project::Project;
use anyhow::Result;
use std::sync::Mutex;

/// What opbuilder can do with a known key.
#[derive(Clone, Copy)]
pub enum Support {
    /// A plugin opbuilder runs.
    Runs(&'static dyn Plugin),
    /// A layout of earlier Kubebuilder releases: `alpha generate` scaffolds the project again
    /// as go/v4 (as Kubebuilder's does); other commands refuse it, saying so.
    Legacy(&'static str),
    /// A plugin that PROJECT may record and opbuilder keeps there without running it (the
    /// chain leaves it out and warns once); the text says what to do instead.
    Kept(&'static str),
    /// Another tool's layout, for operators opbuilder does not scaffold: every command
    /// refuses it (usage error) before anything is written; the text says what instead.
    Foreign(&'static str),
}

/// What a legacy layout's key is carried to by `alpha generate`, as Kubebuilder v4.16 reads
/// go/v2, go/v3, go/v3-alpha and go/v4-alpha as go/v4 there (and the go/v3 halves as go/v4's).
pub fn successor(key: &str) -> Option<&'static str> {
    match key {
        "go.kubebuilder.io/v2"
        | "go.kubebuilder.io/v3"
        | "go.kubebuilder.io/v3-alpha"
        | "go.kubebuilder.io/v4-alpha" => Some("go.kubebuilder.io/v4"),
        "base.go.kubebuilder.io/v3" => Some("base.go.kubebuilder.io/v4"),
        "kustomize.common.kubebuilder.io/v1" => Some("kustomize.common.kubebuilder.io/v2"),
        _ => None,
    }
}

const LEGACY_GO: &str = "it is a layout of earlier Kubebuilder releases (main.go at the root, controllers/ and \
     apis/ where go/v4 has cmd/main.go, internal/controller/ and api/), and opbuilder extends go/v4 projects only. \
     `opbuilder alpha generate --output-dir <new dir>` scaffolds this project again as go/v4 (as `kubebuilder alpha \
     generate` does) and says where your code goes";

const HELM_V1: &str = "it is deprecated (Kubebuilder replaced it with helm.kubebuilder.io/v2-alpha) and opbuilder \
     does not run it, so its chart stays as it is; `opbuilder edit --plugins=helm/v2-alpha` replaces it (the chart \
     is then made from the kustomize output, and PROJECT no longer records v1-alpha)";

const SDK_BUNDLE: &str = "the Operator SDK's plugins for the OLM bundle (config/manifests, config/scorecard, \
     `make bundle`), which opbuilder does not run: their files stay as they are; bring the bundle up to date with \
     the Operator SDK (`make bundle`) when you need to";

const SDK_HELM: &str = "it is the Operator SDK's layout for operators made of a Helm chart. opbuilder scaffolds \
     operators written in Go (go/v4, Kubebuilder's layout) or Rust (rust.opbuilder.io/v1-beta), not Helm- or \
     Ansible-based ones: keep using operator-sdk for this project, or start a Go operator in a new directory with \
     `opbuilder init --domain example.com --repo example.com/guestbook`";

const SDK_ANSIBLE: &str = "it is the Operator SDK's layout for operators made of Ansible roles. opbuilder scaffolds \
     operators written in Go (go/v4, Kubebuilder's layout) or Rust (rust.opbuilder.io/v1-beta), not Helm- or \
     Ansible-based ones: keep using operator-sdk for this project, or start a Go operator in a new directory with \
     `opbuilder init --domain example.com --repo example.com/guestbook`";

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
    // Earlier layouts, which `alpha generate` carries to go/v4.
    Known {
        name: "go.kubebuilder.io",
        version: "v4-alpha",
        support: Support::Legacy(LEGACY_GO),
    },
    Known {
        name: "go.kubebuilder.io",
        version: "v3",
        support: Support::Legacy(LEGACY_GO),
    },
    Known {
        name: "go.kubebuilder.io",
        version: "v3-alpha",
        support: Support::Legacy(LEGACY_GO),
    },
    Known {
        name: "go.kubebuilder.io",
        version: "v2",
        support: Support::Legacy(LEGACY_GO),
    },
    Known {
        name: "base.go.kubebuilder.io",
        version: "v3",
        support: Support::Legacy(LEGACY_GO),
    },
    Known {
        name: "kustomize.common.kubebuilder.io",
        version: "v1",
        support: Support::Legacy(LEGACY_GO),
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
    // opbuilder's own plugin: webhooks without cert-manager.
    Known {
        name: certs::NAME,
        version: "v1-alpha",
        support: Support::Runs(&certs::Certs),
    },
    // opbuilder's own plugin: OpenTelemetry traces and a run-time log level.
    Known {
        name: telemetry::NAME,
        version: "v1-alpha",
        support: Support::Runs(&telemetry::Telemetry),
    },
    // opbuilder's own layout for operators written in Rust on kube-rs, and its key in projects
    // made by opbuilder 0.4.0.
    Known {
        name: "rust.opbuilder.io",
        version: "v1-beta",
        support: Support::Runs(&rust::V1_BETA),
    },
    Known {
        name: "rust.opbuilder.io",
        version: "v1-alpha",
        support: Support::Runs(&rust::V1_ALPHA),
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
        support: Support::Kept(HELM_V1),
    },
    // The Operator SDK's: its bundle plugins, kept in PROJECT; its Helm and Ansible layouts.
    Known {
        name: "manifests.sdk.operatorframework.io",
        version: "v2",
        support: Support::Kept(SDK_BUNDLE),
    },
    Known {
        name: "scorecard.sdk.operatorframework.io",
        version: "v2",
        support: Support::Kept(SDK_BUNDLE),
    },
    Known {
        name: "helm.sdk.operatorframework.io",
        version: "v1",
        support: Support::Foreign(SDK_HELM),
    },
    Known {
        name: "ansible.sdk.operatorframework.io",
        version: "v1",
        support: Support::Foreign(SDK_ANSIBLE),
    },
];

/// The external plugins found so far in this process, each once (by key).
static EXTERNALS: Mutex<Vec<(&'static Known, &'static External)>> = Mutex::new(vec![]);

/// The external plugin behind a chain entry, if it is one.
pub fn external(known: &Known) -> Option<&'static External> {
    let found = EXTERNALS.lock().unwrap_or_else(|e| e.into_inner());
    found
        .iter()
        .find(|(k, _)| std::ptr::eq(*k, known))
        .map(|(_, e)| *e)
}

/// The installed external plugin `key`, as a registry entry (found once per process).
fn lookup_external(key: &str) -> Result<Option<&'static Known>> {
    let Some(installed) = external::discover::find(key)? else {
        return Ok(None);
    };
    let mut found = EXTERNALS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((k, _)) = found.iter().find(|(_, e)| *e.installed() == installed) {
        return Ok(Some(k));
    }
    // Kept for the life of the process, as the built-in entries are.
    let plugin: &'static External = Box::leak(Box::new(External::new(installed.clone())));
    let known: &'static Known = Box::leak(Box::new(Known {
        name: Box::leak(installed.name.into_boxed_str()),
        version: Box::leak(installed.version.into_boxed_str()),
        support: Support::Runs(plugin),
    }));
    found.push((known, plugin));
    Ok(Some(known))
}

/// Resolve a key as Kubebuilder does: `NAME[/VERSION]`, where NAME is the full name or its
/// first labels (`grafana`, `deploy-image`, `kustomize`, `go`). A key no built-in plugin has
/// is looked for among the installed external plugins. `None`: no plugin has that key; `Err`:
/// several do (a version is missing), or an external plugin is there but cannot run.
pub fn lookup(key: &str) -> Result<Option<&'static Known>> {
    match lookup_builtin(key)? {
        Some(k) => Ok(Some(k)),
        None => lookup_external(key),
    }
}

/// [`lookup`] among the plugins opbuilder ships.
fn lookup_builtin(key: &str) -> Result<Option<&'static Known>> {
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
            // The earlier layouts are known only to explain what became of them: a key without
            // version means go/v4 (or kustomize/v2); likewise the Rust layout's v1-alpha
            // (projects of 0.4.0): `rust` means v1-beta.
            let removed = matches!(k.support, Support::Legacy(_))
                || (k.name == rust::NAME && k.version == "v1-alpha");
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

/// The number of single-character edits that turn `a` into `b` (Levenshtein).
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The short key users type for a plugin: its first label and version (`go/v4`,
/// `deploy-image/v1-alpha`); base.go.kubebuilder.io keeps its full name (`base` alone is no
/// key Kubebuilder accepts).
pub fn short_key(k: &Known) -> String {
    if k.name.starts_with("base.") {
        return k.key();
    }
    let first = k.name.split('.').next().unwrap_or(k.name);
    format!("{first}/{}", k.version)
}

/// The built-in plugin a key no plugin has most likely meant: one of the same name with
/// another version (`go/v5` → go/v4), else the name a typo away (`grafna` → grafana). Only
/// plugins a new command can run are offered.
pub fn closest(key: &str) -> Option<&'static Known> {
    let (name, version) = key.split_once('/').unwrap_or((key, ""));
    let offered = KNOWN.iter().filter(|k| {
        matches!(k.support, Support::Runs(_)) && !(k.name == rust::NAME && k.version == "v1-alpha")
    });
    let name_distance = |k: &Known| {
        let first = k.name.split('.').next().unwrap_or(k.name);
        edits(name, first).min(edits(name, k.name))
    };
    let best = offered
        .map(|k| (name_distance(k), edits(version, k.version), k))
        .min_by_key(|(n, v, _)| (*n, *v))?;
    let (n, _, k) = best;
    // A typo, not another word: at most two edits, and fewer than half the name.
    (n <= 2 && n * 2 < name.chars().count().max(1)).then_some(k)
}

/// The plugins of a `--plugins` value, resolved (usage errors exit 2). `None` when not given.
pub fn parse_flag(value: Option<&str>) -> Result<Option<Vec<&'static Known>>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let mut out: Vec<&'static Known> = vec![];
    for key in value.split(',').map(str::trim).filter(|k| !k.is_empty()) {
        let known = lookup(key)?.ok_or_else(|| {
            let last = match closest(key) {
                Some(k) => {
                    let fixed: Vec<String> = value
                        .split(',')
                        .map(|w| {
                            if w.trim() == key {
                                short_key(k)
                            } else {
                                w.trim().to_string()
                            }
                        })
                        .filter(|w| !w.is_empty())
                        .collect();
                    format!(
                        "did you mean --plugins={}? ({} is {})",
                        fixed.join(","),
                        short_key(k),
                        k.key()
                    )
                }
                None => "example of a valid value: --plugins=go/v4".to_string(),
            };
            usage(format!(
                "invalid value {key:?} for --plugins: no plugin has this key. It is none of Kubebuilder's plugins \
                 (go/v4, kustomize/v2, grafana/v1-alpha, autoupdate/v1-alpha, deploy-image/v1-alpha, helm/v2-alpha), nor \
                 opbuilder's own (typed-clients/v1-alpha, certs/v1-alpha, telemetry/v1-alpha, rust/v1-beta), and {}\n  {last}",
                external::discover::not_found(key)
            ))
        })?;
        match known.support {
            Support::Runs(_) => {}
            Support::Legacy(what) | Support::Kept(what) | Support::Foreign(what) => {
                return Err(usage(format!(
                    "--plugins {key:?} ({}): {what}",
                    known.key()
                )))
            }
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

/// Refuse a layout that names another tool's layout (usage error, exit 2), naming it and what
/// opbuilder scaffolds instead.
pub fn refuse_foreign(layout: &[String]) -> Result<()> {
    for key in layout {
        if let Ok(Some(
            k @ Known {
                support: Support::Foreign(what),
                ..
            },
        )) = lookup(key)
        {
            return Err(usage(format!(
                "PROJECT's layout names {}, which opbuilder does not scaffold: {what}",
                k.key()
            )));
        }
    }
    Ok(())
}

/// Warnings for what PROJECT records that opbuilder keeps but does not act on (its layout's
/// and its `plugins:` section's keys, each once; keys that share a reason in one warning): the
/// files those plugins made are left as they are, so the user must know to update them
/// elsewhere.
pub fn warnings(project: &Project) -> Vec<String> {
    let mut keys: Vec<String> = vec![];
    for key in project.layout.iter().cloned().chain(project.plugin_keys()) {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let in_layout = |key: &str| project.layout.iter().any(|k| k == key);
    // Kept plugins, grouped by reason, in the order first met.
    let mut kept: Vec<(&'static str, Vec<String>)> = vec![];
    let mut out = vec![];
    for key in keys {
        match lookup(&key).ok().flatten() {
            Some(Known {
                support: Support::Kept(why),
                ..
            }) => match kept.iter_mut().find(|(w, _)| std::ptr::eq(*w, *why)) {
                Some((_, ks)) => ks.push(key),
                None => kept.push((why, vec![key])),
            },
            // The layout's other keys are the chain's to refuse or run.
            _ if in_layout(&key) => {}
            Some(Known {
                support: Support::Legacy(what) | Support::Foreign(what),
                ..
            }) => out.push(format!(
                "PROJECT records settings of the plugin {key}, which opbuilder does not run; they are kept as they \
                 are, and its files are not updated by this command: {what}"
            )),
            Some(_) => {}
            None => out.push(format!(
                "PROJECT records settings of the plugin {key:?}, which is neither one of opbuilder's plugins nor an \
                 installed external plugin; they are kept as they are, but the plugin is not run: run it with the \
                 tool that made them when its files need updating"
            )),
        }
    }
    for (why, ks) in kept.into_iter().rev() {
        let names = match ks.as_slice() {
            [one] => format!("the plugin {one}"),
            [init @ .., last] => format!("the plugins {} and {last}", init.join(", ")),
            [] => continue,
        };
        out.insert(
            0,
            format!("PROJECT records {names}, which opbuilder keeps there: {why}"),
        );
    }
    out
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
            ("rust/v1-beta", "rust.opbuilder.io/v1-beta"),
            ("rust", "rust.opbuilder.io/v1-beta"),
            ("rust.opbuilder.io", "rust.opbuilder.io/v1-beta"),
            ("rust/v1-alpha", "rust.opbuilder.io/v1-alpha"),
            ("rust.opbuilder.io/v1-alpha", "rust.opbuilder.io/v1-alpha"),
            (
                "helm.kubebuilder.io/v1-alpha",
                "helm.kubebuilder.io/v1-alpha",
            ),
        ] {
            assert_eq!(lookup(given).unwrap().unwrap().key(), want, "{given}");
        }
        assert!(lookup_builtin("example.com/v1").unwrap().is_none());
        assert!(
            lookup("gra/v1-alpha").unwrap().is_none(),
            "a prefix must end at a dot"
        );
        assert!(lookup("helm").is_err(), "two helm versions: ambiguous");
        // The layouts of earlier releases need their version; without one, go means go/v4.
        for (given, want) in [
            ("go/v3", "go.kubebuilder.io/v3"),
            ("go.kubebuilder.io/v4-alpha", "go.kubebuilder.io/v4-alpha"),
            ("kustomize", "kustomize.common.kubebuilder.io/v2"),
            ("base.go.kubebuilder.io", "base.go.kubebuilder.io/v4"),
        ] {
            assert_eq!(lookup(given).unwrap().unwrap().key(), want, "{given}");
        }
        for k in KNOWN {
            assert_eq!(
                successor(&k.key()).is_some(),
                matches!(k.support, Support::Legacy(_)),
                "{k:?}"
            );
        }
    }

    #[test]
    fn kept_plugins_are_warned_about_once_per_reason() {
        let p = Project::parse(
            "layout:\n- go.kubebuilder.io/v4\n- helm.kubebuilder.io/v1-alpha\nplugins:\n  \
             helm.kubebuilder.io/v1-alpha: {}\n  manifests.sdk.operatorframework.io/v2: {}\n  \
             scorecard.sdk.operatorframework.io/v2: {}\nversion: \"3\"\n",
        )
        .unwrap();
        let w = warnings(&p);
        assert_eq!(w.len(), 2, "{w:#?}");
        assert!(
            w[0].contains("the plugin helm.kubebuilder.io/v1-alpha,")
                && w[0].contains("edit --plugins=helm/v2-alpha"),
            "{}",
            w[0]
        );
        assert!(
            w[1].contains(
                "the plugins manifests.sdk.operatorframework.io/v2 and scorecard.sdk.operatorframework.io/v2,"
            ),
            "{}",
            w[1]
        );
    }

    #[test]
    fn a_key_no_plugin_has_suggests_the_one_meant() {
        let meant = |key: &str| closest(key).map(short_key);
        assert_eq!(meant("go/v5").as_deref(), Some("go/v4"));
        assert_eq!(meant("go/v3").as_deref(), Some("go/v4"));
        assert_eq!(meant("rust/v2").as_deref(), Some("rust/v1-beta"));
        assert_eq!(meant("helm/v3").as_deref(), Some("helm/v2-alpha"));
        assert_eq!(
            meant("grafna/v1-alpha").as_deref(),
            Some("grafana/v1-alpha")
        );
        assert_eq!(
            meant("deployimage/v1-alpha").as_deref(),
            Some("deploy-image/v1-alpha")
        );
        assert_eq!(
            meant("base.go.kubebuilder.io/v5").as_deref(),
            Some("base.go.kubebuilder.io/v4")
        );
        assert_eq!(meant("example.com/v1"), None, "no plugin is close");
        assert_eq!(meant("ab/v1"), None, "a short name is no typo of another");
        let e = parse_flag(Some("go/v4,grafna/v1-alpha")).unwrap_err();
        assert!(
            e.to_string()
                .contains("did you mean --plugins=go/v4,grafana/v1-alpha?"),
            "{e}"
        );
    }

    #[test]
    fn flag_refuses_what_cannot_run_naming_it() {
        for (v, needle) in [
            ("helm/v1-alpha", "deprecated"),
            ("go/v3", "alpha generate"),
            ("helm.sdk.operatorframework.io/v1", "Helm chart"),
            ("manifests.sdk.operatorframework.io/v2", "Operator SDK"),
            ("example.com/v1", "example.com/v1"),
            ("go/v4,go.kubebuilder.io/v4", "twice"),
            (",", "empty"),
        ] {
            let e = parse_flag(Some(v)).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{v}");
            assert!(e.to_string().contains(needle), "{v}: {e}");
        }
    }
}
