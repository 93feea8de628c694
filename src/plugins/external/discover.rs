//! Finding an external plugin by its key, where Kubebuilder v4.16 looks:
//!
//! - the plugins root is `$EXTERNAL_PLUGINS_PATH` when set, else
//!   `$XDG_CONFIG_HOME/kubebuilder/plugins`, else `~/.config/kubebuilder/plugins` (Linux) or
//!   `~/Library/Application Support/kubebuilder/plugins` (macOS);
//! - a plugin is `<root>/<name>/<version>/<file>`, where `<name>` is a DNS-1123 subdomain,
//!   `<version>` reads as a plugin version (`v1`, `1`, `v2-alpha`) and `<file>` is named `<name>`,
//!   or `<name>.<ext>` when `<name>` holds no dot (the part before the file's first dot must be
//!   the name).
//!
//! A key resolves as the built-in keys do: the name in full or cut after one of its labels, and
//! the version optional when only one is installed. Only the plugin asked for is checked: a
//! broken neighbour in the plugins root does not stop other plugins (Kubebuilder then drops
//! every external plugin).

use crate::error::usage;
use anyhow::{bail, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// Where external plugins are looked for, and which setting chose it.
pub struct Root {
    pub dir: PathBuf,
    /// How the user names it: `$EXTERNAL_PLUGINS_PATH`, `$XDG_CONFIG_HOME/kubebuilder/plugins`, ...
    pub from: &'static str,
}

/// An installed external plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The directory name, such as `foo.acme.io`.
    pub name: String,
    /// The version as Kubebuilder writes it (`v1`, `v2-alpha`), whatever the directory's spelling.
    pub version: String,
    pub path: PathBuf,
}

impl Installed {
    /// The key PROJECT records: `<name>/<version>`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.name, self.version)
    }
}

/// The plugins root, from the environment.
pub fn root() -> Result<Root> {
    if let Some(p) = std::env::var_os("EXTERNAL_PLUGINS_PATH").filter(|p| !p.is_empty()) {
        let dir = PathBuf::from(p);
        if !dir.exists() {
            bail!(
                "EXTERNAL_PLUGINS_PATH is {}, which does not exist: create that directory and install the plugin \
                 below it as <name>/<version>/<name>, or unset EXTERNAL_PLUGINS_PATH to use ~/.config/kubebuilder/plugins",
                dir.display()
            );
        }
        return Ok(Root {
            dir,
            from: "$EXTERNAL_PLUGINS_PATH",
        });
    }
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|p| !p.is_empty()) {
        return Ok(Root {
            dir: Path::new(&x).join("kubebuilder").join("plugins"),
            from: "$XDG_CONFIG_HOME/kubebuilder/plugins",
        });
    }
    let Some(home) = std::env::var_os("HOME").filter(|p| !p.is_empty()) else {
        bail!(
            "cannot tell where external plugins are installed: HOME is not set; set EXTERNAL_PLUGINS_PATH to the \
             directory that holds them"
        );
    };
    let (rel, from) = if cfg!(target_os = "macos") {
        (
            "Library/Application Support/kubebuilder/plugins",
            "~/Library/Application Support/kubebuilder/plugins",
        )
    } else {
        (
            ".config/kubebuilder/plugins",
            "~/.config/kubebuilder/plugins",
        )
    };
    Ok(Root {
        dir: Path::new(&home).join(rel),
        from,
    })
}

/// A plugin version as Kubebuilder writes it: `(v)?N(-alpha|-beta)?` becomes `vN[-stage]`.
pub fn normalize_version(v: &str) -> Option<String> {
    let v = v.strip_prefix('v').unwrap_or(v);
    let (number, stage) = match v.split_once('-') {
        Some((n, s)) => (n, Some(s)),
        None => (v, None),
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number: u64 = number.parse().ok()?;
    match stage {
        None => Some(format!("v{number}")),
        Some(s @ ("alpha" | "beta")) => Some(format!("v{number}-{s}")),
        Some(_) => None,
    }
}

/// Whether the plugin `name` answers to `wanted`: the full name, or the name cut after one of
/// its labels (`foo` and `foo.acme` for `foo.acme.io`).
fn name_matches(name: &str, wanted: &str) -> bool {
    name == wanted
        || name
            .strip_prefix(wanted)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Sorted entry names of a directory that are directories (symbolic links followed).
fn subdirs(dir: &Path) -> Vec<String> {
    let Ok(rd) = fs::read_dir(dir) else {
        return vec![];
    };
    let mut out: Vec<String> = rd
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    out.sort();
    out
}

/// The executable of the plugin `name` in its version directory `dir`: a file named `name`, or
/// `name.<ext>` when the name holds no dot.
fn executable(name: &str, dir: &Path) -> Result<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        bail!("cannot read {}", dir.display());
    };
    let mut files: Vec<String> = rd
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    files.sort();
    let matching: Vec<&String> = files
        .iter()
        .filter(|f| *f == name || f.split('.').next() == Some(name))
        .filter(|f| dir.join(f).is_file())
        .collect();
    let wanted = dir.join(name);
    match matching.as_slice() {
        [] => {
            // A file named <name>.<ext> for a dotted name is not found by Kubebuilder either:
            // say so rather than only "not found".
            let near: Vec<&String> = files
                .iter()
                .filter(|f| f.starts_with(&format!("{name}.")))
                .collect();
            if let Some(f) = near.first() {
                bail!(
                    "{} holds {f}, but a plugin whose name has dots must be a file named exactly {name} (the part of the \
                     file name before its first dot must be the plugin's name, as Kubebuilder reads it): rename it to {}",
                    dir.display(),
                    wanted.display()
                );
            }
            bail!(
                "{} holds no executable named {name} (or {name}.<ext> for a name without dots)",
                dir.display()
            );
        }
        [one] => {
            let path = dir.join(one);
            check_executable(&path)?;
            Ok(path)
        }
        many => bail!(
            "{} holds several executables for the plugin {name} ({}); keep one",
            dir.display(),
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn check_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(path)?.permissions().mode();
    if mode & 0o111 == 0 {
        bail!(
            "the external plugin {} is not executable (mode {:o}); make it executable: chmod +x {}",
            path.display(),
            mode & 0o7777,
            path.display()
        );
    }
    Ok(())
}

/// Find the external plugin `key` (`NAME[/VERSION]`). `Ok(None)` when no installed plugin has
/// that key (see [`not_found`] for what to tell the user); errors for a plugin that is there but
/// cannot run, or a key several plugins answer to.
pub fn find(key: &str) -> Result<Option<Installed>> {
    find_in(&root()?, key)
}

/// [`find`] below the plugins root `root`.
fn find_in(root: &Root, key: &str) -> Result<Option<Installed>> {
    let (wanted, version) = match key.split_once('/') {
        Some((n, v)) => (n, Some(v)),
        None => (key, None),
    };
    let version = match version {
        Some(v) => Some(normalize_version(v).ok_or_else(|| {
            usage(format!(
                "--plugins {key:?}: {v:?} is not a plugin version; a version is v<N>, optionally -alpha or -beta, \
                 for example --plugins=foo.acme.io/v1"
            ))
        })?),
        None => None,
    };
    if wanted.is_empty() || crate::validate::dns1123_subdomain(wanted).is_err() {
        return Ok(None);
    }
    let mut found: Vec<(String, String, PathBuf)> = vec![];
    for name in subdirs(&root.dir) {
        if !name_matches(&name, wanted) || crate::validate::dns1123_subdomain(&name).is_err() {
            continue;
        }
        let dir = root.dir.join(&name);
        for vdir in subdirs(&dir) {
            let Some(v) = normalize_version(&vdir) else {
                continue;
            };
            if version.as_ref().is_some_and(|w| *w != v) {
                continue;
            }
            found.push((name.clone(), v, dir.join(&vdir)));
        }
    }
    match found.as_slice() {
        [] => Ok(None),
        [(name, version, dir)] => Ok(Some(Installed {
            path: executable(name, dir)?,
            name: name.clone(),
            version: version.clone(),
        })),
        many => Err(usage(format!(
            "--plugins {key:?} names several installed external plugins ({}); give the full key, for example \
             --plugins={}/{}",
            many.iter()
                .map(|(n, v, _)| format!("{n}/{v}"))
                .collect::<Vec<_>>()
                .join(", "),
            many[0].0,
            many[0].1
        ))),
    }
}

/// Where the plugin `key` was looked for, for an error that says it is not installed: a
/// clause (`no external plugin is installed as ...`) and, on a second line, where plugins go.
pub fn not_found(key: &str) -> String {
    let (name, version) = match key.split_once('/') {
        Some((n, v)) => (n, normalize_version(v).unwrap_or_else(|| v.to_string())),
        None => (key, "<version>".to_string()),
    };
    match root() {
        Ok(root) => format!(
            "no external plugin is installed as {}\n  external plugins are looked for in $EXTERNAL_PLUGINS_PATH, else \
             $XDG_CONFIG_HOME/kubebuilder/plugins, else ~/.config/kubebuilder/plugins (here {}: {}{}), as \
             <name>/<version>/<name>",
            root.dir.join(name).join(&version).join(name).display(),
            root.from,
            root.dir.display(),
            if root.dir.is_dir() {
                ""
            } else {
                ", which does not exist"
            }
        ),
        Err(e) => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_kubebuilder_reads_them() {
        for (given, want) in [
            ("v1", Some("v1")),
            ("1", Some("v1")),
            ("v2-alpha", Some("v2-alpha")),
            ("3-beta", Some("v3-beta")),
            ("v01", Some("v1")),
            ("v1-gamma", None),
            ("vx", None),
            ("", None),
            ("v", None),
        ] {
            assert_eq!(normalize_version(given).as_deref(), want, "{given}");
        }
    }

    #[test]
    fn names_match_in_full_or_cut_after_a_label() {
        assert!(name_matches("foo.acme.io", "foo"));
        assert!(name_matches("foo.acme.io", "foo.acme"));
        assert!(name_matches("foo.acme.io", "foo.acme.io"));
        assert!(!name_matches("foo.acme.io", "fo"));
        assert!(!name_matches("foobar.io", "foo"));
    }
}
