//! The request of `init` and what it checks before any plugin plans: the flags, the license
//! header (shared with `edit`), the directory, and the new PROJECT.

use crate::error::{bad_flag, check_flag, usage};
use crate::project::{self, Project};
use crate::validate;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

/// The command `init`'s "Next:" shows, with the values of Kubebuilder's tutorial.
pub const ADD_API: &str = "opbuilder create api --group webapp --version v1 --kind Guestbook";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum License {
    /// Apache License 2.0 header
    Apache2,
    /// A copyright line only
    Copyright,
    /// No license header (no hack/boilerplate.go.txt)
    None,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples (Go, the default layout go/v4):
  opbuilder init --domain example.com --repo example.com/guestbook
  opbuilder init --domain acme.io --repo github.com/acme/redis-operator \\
      --owner \"Acme Inc.\" --namespaced
  opbuilder init --repo example.com/guestbook --dry-run

Examples (Rust on kube-rs, the layout rust.opbuilder.io/v1-beta; no --repo):
  opbuilder init --plugins=rust.opbuilder.io/v1-beta --domain example.com \\
      --project-name guestbook
  opbuilder init --plugins=rust.opbuilder.io/v1-beta,helm/v2-alpha \\
      --domain acme.io --project-name redis-operator --namespaced")]
pub struct InitArgs {
    /// Domain for API groups: group `ingress` becomes `ingress.<domain>`
    #[arg(long, default_value = "my.domain", value_name = "DOMAIN")]
    pub domain: String,
    /// Go module path (the Go layout only) [default: the module of ./go.mod]
    #[arg(long, value_name = "MODULE")]
    pub repo: Option<String>,
    /// Project name, used to prefix Kubernetes resources (and the Rust layout's Cargo package)
    /// [default: the directory name, lower-cased]
    #[arg(long, value_name = "NAME")]
    pub project_name: Option<String>,
    /// Copyright owner written in the license header
    #[arg(long, value_name = "OWNER")]
    pub owner: Option<String>,
    /// License header for generated files
    #[arg(long, value_enum, default_value_t = License::Apache2)]
    pub license: License,
    /// Use this file (a /* */ comment) as the license header instead of --license
    #[arg(long, value_name = "FILE")]
    pub license_file: Option<PathBuf>,
    /// Lay out APIs as api/<group>/<version> so the project can hold several groups
    #[arg(long)]
    pub multigroup: bool,
    /// Make the manager namespace-scoped (Role/RoleBinding, WATCH_NAMESPACE) instead of cluster-scoped
    #[arg(long)]
    pub namespaced: bool,
    /// Do not check that the installed Go is recent enough (the Go layout only)
    #[arg(long)]
    pub skip_go_version_check: bool,
    /// Do not run `go mod tidy` (`cargo generate-lockfile` for the Rust layout) after writing the files
    #[arg(long)]
    pub skip_post_steps: bool,
    /// Show what would be written, write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// The layout and the plugins that add to it, comma-separated: go/v4 (the default, Go) or
    /// rust.opbuilder.io/v1-beta (Rust on kube-rs), with helm/v2-alpha, grafana/v1-alpha,
    /// autoupdate/v1-alpha, ... (Kubebuilder's keys)
    #[arg(long, value_name = "KEYS")]
    pub plugins: Option<String>,
    /// PROJECT file version (only "3" is available)
    #[arg(
        long,
        value_name = "VERSION",
        default_value = "3",
        hide_short_help = true
    )]
    pub project_version: String,
    /// The flags of the command line as external plugins receive them (set after parsing).
    #[arg(skip)]
    pub plugin_args: Vec<String>,
}

fn apache_header(owner: &str) -> String {
    format!(
        "/*\nCopyright YEAR{owner}.\n\nLicensed under the Apache License, Version 2.0 (the \"License\");\n\
you may not use this file except in compliance with the License.\n\
You may obtain a copy of the License at\n\n    http://www.apache.org/licenses/LICENSE-2.0\n\n\
Unless required by applicable law or agreed to in writing, software\n\
distributed under the License is distributed on an \"AS IS\" BASIS,\n\
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n\
See the License for the specific language governing permissions and\n\
limitations under the License.\n*/"
    )
}

/// The owner goes on one line inside a `/* */` comment: refuse what would break out of it.
fn check_owner(owner: &str) -> Result<String> {
    let rule = if owner.contains("*/") || owner.contains("/*") {
        Some("must not contain `*/` or `/*`: the owner is written inside a /* */ comment, which `*/` would close")
    } else if owner.chars().any(char::is_control) {
        Some("must be one line without control characters (it goes on the Copyright line)")
    } else {
        None
    };
    match rule {
        Some(r) => Err(bad_flag("--owner", owner, r, "\"Acme Inc.\"")),
        None => Ok(owner.trim().to_string()),
    }
}

/// The largest --license-file accepted: a license header is a short comment.
const MAX_LICENSE: u64 = 64 * 1024;

/// The text of hack/boilerplate.go.txt, or None for `--license none`.
pub fn boilerplate(
    license: License,
    owner: Option<&str>,
    file: Option<&Path>,
) -> Result<Option<String>> {
    if let Some(path) = file {
        let text = match crate::fsx::read_text(path, MAX_LICENSE) {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err("there is no such file".to_string()),
            Err(e) => Err(e.to_string()),
        }
        .map_err(|e| {
            bad_flag(
                "--license-file",
                &path.display().to_string(),
                &format!("must be a readable regular UTF-8 text file of at most 64 KiB ({e})"),
                "hack/license-header.txt",
            )
        })?;
        let t = text.trim();
        if !(t.is_empty() || (t.len() >= 4 && t.starts_with("/*") && t.ends_with("*/"))) {
            return Err(bad_flag(
                "--license-file",
                &path.display().to_string(),
                "the file must hold a single Go block comment: start with /* and end with */",
                "header.txt containing \"/*\\nCopyright YEAR Acme.\\n*/\"",
            ));
        }
        if t[2..t.len().saturating_sub(2)].contains("*/") {
            return Err(bad_flag(
                "--license-file",
                &path.display().to_string(),
                "the comment closes early: `*/` may appear only at the very end",
                "header.txt containing \"/*\\nCopyright YEAR Acme.\\n*/\"",
            ));
        }
        return Ok(Some(t.to_string()));
    }
    let owner = owner
        .map(check_owner)
        .transpose()?
        .filter(|o| !o.is_empty())
        .map(|o| format!(" {o}"))
        .unwrap_or_default();
    Ok(match license {
        License::Apache2 => Some(apache_header(&owner)),
        License::Copyright => Some(format!("/*\nCopyright YEAR{owner}.\n*/")),
        License::None => None,
    })
}

/// The module path from ./go.mod, if there is one.
fn module_from_go_mod(root: &Path) -> Option<String> {
    let text = crate::fsx::read_text(&root.join("go.mod"), 1 << 20).ok()??;
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        let m = rest.trim().trim_matches('"').to_string();
        (!m.is_empty()).then_some(m)
    })
}

/// Refuse to write Go into a project whose PROJECT `repo` is not the module its go.mod
/// declares (a repo copied with `.git` from a clone URL, a module renamed in go.mod alone):
/// the imports of the project's own packages are made from `repo`, so they would not build
/// (Kubebuilder writes them all the same). No go.mod: nothing to check.
pub fn check_repo_is_module(root: &Path, project: &Project) -> Result<()> {
    let Some(module) = module_from_go_mod(root) else {
        return Ok(());
    };
    if project.repo.is_empty() || module == project.repo {
        return Ok(());
    }
    bail!(
        "PROJECT's repo {:?} is not the module go.mod declares ({module:?}): the Go this command writes imports \
         the project's own packages by the repo's path, so it would not build; nothing was written.\n  Set \
         `repo: {module}` in PROJECT (the module path, without `.git` unless go.mod has it), then run the command again",
        project.repo
    )
}

/// The directory `init` works in, for messages: "this directory" for the current one.
fn place(root: &Path) -> String {
    if root == Path::new(".") || root.as_os_str().is_empty() {
        "this directory".into()
    } else {
        root.display().to_string()
    }
}

/// A directory with a PROJECT file is already a project; one with a Makefile or cmd/main.go
/// but no PROJECT holds files `init` would have to replace.
pub fn check_not_initialized(root: &Path) -> Result<Vec<String>> {
    if root.join(project::FILE).symlink_metadata().is_ok() {
        bail!(
            "{} already holds a project file ({}); run `opbuilder init` in a new directory, \
             or use `opbuilder create api` to extend this project",
            place(root),
            project::FILE
        );
    }
    let in_the_way: Vec<&str> = ["Makefile", "cmd/main.go"]
        .into_iter()
        .filter(|f| root.join(f).symlink_metadata().is_ok())
        .collect();
    if !in_the_way.is_empty() {
        let names = in_the_way.join(" and ");
        let first = in_the_way[0];
        bail!(
            "{} already holds a project file ({first}) but no {} file: it is not a project yet, \
             and `opbuilder init` will not replace {names}.\n  Move {names} out of the way (for example \
             `mv {first} {first}.old`) and run `opbuilder init` again, or run it in an empty directory",
            place(root),
            project::FILE
        );
    }
    // Anything else is only worth a warning.
    let mut others = vec![];
    for e in std::fs::read_dir(root).with_context(|| format!("reading {}", root.display()))? {
        let name = e?.file_name().to_string_lossy().to_string();
        let ignorable =
            name == "go.mod" || name == "go.sum" || (name.starts_with('.') && name != ".github");
        if !ignorable {
            others.push(name);
        }
    }
    others.sort();
    Ok(others)
}

/// What the chain of `init` scaffolds, which decides the flags it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// go/v4: a Go module, so `--repo` (or ./go.mod) names it.
    Go,
    /// The Rust layout: no Go module, so `--repo` is refused.
    Rust,
    /// External plugins alone: PROJECT records the layout and nothing else, as Kubebuilder's
    /// does (the domain, repository and name are go/v4's to record).
    None,
}

/// Check the flags of `init` (after the plugin chain, whose keys become the layout) and build
/// the new PROJECT and the license header.
pub fn new_project(
    root: &Path,
    args: &InitArgs,
    layout: Vec<String>,
    kind: Layout,
) -> Result<(Project, Option<String>)> {
    if args.project_version != "3" {
        return Err(bad_flag(
            "--project-version",
            &args.project_version,
            "only project version 3 is supported",
            "3",
        ));
    }
    if kind == Layout::None {
        let project = Project {
            cli_version: crate::versions::cli_version(),
            layout,
            version: "3".into(),
            ..Default::default()
        };
        return Ok((project, None));
    }
    let go_module = kind == Layout::Go;
    check_flag(
        "--domain",
        &args.domain,
        validate::dns1123_subdomain,
        validate::meant::domain,
        "example.com",
    )?;
    let repo = match &args.repo {
        Some(r) if !go_module => {
            return Err(usage(format!(
                "--repo {r:?}: --repo names a Go module, and the Rust layout has none (its Cargo package is named \
                 after --project-name); leave --repo out, for example: opbuilder init \
                 --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name guestbook"
            )))
        }
        None if !go_module => String::new(),
        Some(r) => r.clone(),
        None => module_from_go_mod(root).ok_or_else(|| {
            usage(format!(
                "--repo is required: there is no go.mod with a module path in {}\n  \
                 pass the Go module path of the new project, for example: --repo github.com/acme/guestbook",
                place(root)
            ))
        })?,
    };
    if go_module {
        validate::go_module_path(&repo)
            .map_err(|r| bad_flag("--repo", &repo, &r, "github.com/acme/guestbook"))?;
    }
    let project_name = match &args.project_name {
        Some(n) => n.clone(),
        None => {
            let dir = std::fs::canonicalize(root)?;
            let base = dir
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_default();
            validate::dns1123_label(&base).map_err(|r| {
                usage(format!(
                    "the directory name {base:?} cannot be the project name: it {}\n  \
                     pass one explicitly, for example: --project-name {}",
                    r.trim_start_matches("must ").replace("be a", "is not a"),
                    validate::meant::dns_label(&base).unwrap_or_else(|| "guestbook".into())
                ))
            })?;
            base
        }
    };
    check_flag(
        "--project-name",
        &project_name,
        validate::dns1123_label,
        validate::meant::dns_label,
        "guestbook",
    )?;
    let boilerplate_file = boilerplate(
        args.license,
        args.owner.as_deref(),
        args.license_file.as_deref(),
    )?;

    let project = Project {
        cli_version: crate::versions::cli_version(),
        domain: args.domain.clone(),
        layout,
        multigroup: args.multigroup,
        namespaced: args.namespaced,
        project_name,
        repo,
        version: "3".into(),
        ..Default::default()
    };
    Ok((project, boilerplate_file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_cannot_close_the_comment() {
        for bad in ["Evil */ package main", "a /* b", "two\nlines"] {
            let e = boilerplate(License::Copyright, Some(bad), None).unwrap_err();
            assert!(e.is::<crate::error::UsageError>(), "{e}");
            assert!(e.to_string().contains("--owner"), "{e}");
        }
        let b = boilerplate(License::Copyright, Some(" Acme * Co / x "), None)
            .unwrap()
            .unwrap();
        assert_eq!(b, "/*\nCopyright YEAR Acme * Co / x.\n*/");
    }

    #[test]
    fn license_files_that_barely_open_and_close_are_refused_not_a_panic() {
        let t = tempfile::tempdir().unwrap();
        for text in ["/*/", "/**/ */", "/*/\n"] {
            let p = t.path().join("h.txt");
            std::fs::write(&p, text).unwrap();
            let e = boilerplate(License::Apache2, None, Some(&p)).unwrap_err();
            assert!(e.to_string().contains("--license-file"), "{text:?}: {e}");
        }
        let p = t.path().join("ok.txt");
        std::fs::write(&p, "/**/").unwrap();
        assert_eq!(
            boilerplate(License::Apache2, None, Some(&p)).unwrap(),
            Some("/**/".into())
        );
    }

    #[test]
    fn license_none_has_no_file() {
        assert_eq!(boilerplate(License::None, Some("x"), None).unwrap(), None);
        let a = boilerplate(License::Apache2, None, None).unwrap().unwrap();
        assert!(a.starts_with("/*\nCopyright YEAR.\n"));
    }
}
