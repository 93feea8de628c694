//! The merge base of `alpha update` for a project Kubebuilder made: the project scaffolded
//! again from its PROJECT by the Kubebuilder release that made it.
//!
//! opbuilder holds no Kubebuilder template: the release's own binary writes the base at run
//! time, as Kubebuilder's `alpha update` runs its old release. That binary is
//!
//! 1. a `kubebuilder` on PATH whose `kubebuilder version` reports that release, else
//! 2. the one built before, kept in `$XDG_CACHE_HOME/opbuilder/kubebuilder/<version>/` (or
//!    `~/.cache/opbuilder/...`), else
//! 3. built there with the Go toolchain from the Go module proxy: `go build` of its main package
//!    in a throwaway module that requires `sigs.k8s.io/kubebuilder/v4` at that version (`go
//!    install pkg@version` needs the proxy's version list, which some proxies refuse).
//!
//! This is the only place where opbuilder builds anything or reaches the network on its own;
//! only `alpha update` and `alpha check` of a Kubebuilder-made project come here, and they say
//! so. Every scaffolding command stays offline.
//!
//! Kubebuilder's `alpha update` runs the old release's `alpha generate`, which also fetches the
//! modules (`go mod tidy`), runs `make generate` for every API and `make fmt vet lint-fix`, and
//! before v4.7 mishandles some records. Here the release's own commands are replayed instead
//! (`init`, `create api`, `create webhook`, `edit`, from PROJECT, as `alpha generate` replays
//! them), in a scratch directory, with do-nothing `go` and `make` first on their PATH: the base
//! is the release's templates alone, without its post-steps (which would download and build
//! for minutes, and which the update does not need: the files `make` generates are no template
//! and the update leaves them alone). Nothing of this touches the user's tree: the update
//! writes it afterwards in one transaction, as for a project opbuilder made.

use super::generate::{order_like_main, plan_step, replay, Replayer, EDITED_AFTER_INIT};
use crate::out::errln;
use crate::project::{self, Project};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Kubebuilder's Go module, the one its releases are tagged in.
pub const MODULE: &str = "sigs.k8s.io/kubebuilder/v4";

/// The Kubebuilder v4 release `v` names (`4.16.0`, as Kubebuilder's releases record
/// `cliVersion`, or `v4.16.0`, as the Go module proxy and a build from source write it), as
/// the proxy tags it (`v4.16.0`); `None` for anything else.
pub fn release(v: &str) -> Option<String> {
    let bare = v.strip_prefix('v').unwrap_or(v);
    let (core, pre) = match bare.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (bare, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    let numeric = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if parts.len() != 3 || parts[0] != "4" || !parts.iter().all(numeric) {
        return None;
    }
    if let Some(p) = pre {
        if p.is_empty()
            || !p
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        {
            return None;
        }
    }
    Some(format!("v{bare}"))
}

/// The release a `kubebuilder version` output reports: `KubeBuilder:  v4.16.0` (v4.9 on), or
/// `Version: main.version{KubeBuilderVersion:"4.8.0", ...}` (before); `None` when it reports
/// none (a build without version stamps says `unknown`).
fn reported_release(output: &str) -> Option<String> {
    if let Some((_, rest)) = output.split_once("KubeBuilderVersion:\"") {
        return release(rest.split('"').next()?);
    }
    output.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("KubeBuilder:")?;
        release(rest.split_whitespace().next()?)
    })
}

/// Where the releases opbuilder built are kept: `$XDG_CACHE_HOME/opbuilder/kubebuilder`, or
/// `$HOME/.cache/opbuilder/kubebuilder` (the generated Makefile's tool cache sits beside it).
pub fn cache_root() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".cache"))
    })?;
    Some(base.join("opbuilder").join("kubebuilder"))
}

/// Every file named `name` in a directory of PATH that is executable, in PATH's order.
fn on_path(name: &str) -> Vec<PathBuf> {
    let Some(path) = std::env::var_os("PATH") else {
        return vec![];
    };
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .filter(|p| is_executable(p))
        .collect()
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// The last `n` lines of a command's output (stderr, then stdout), indented, for an error.
fn tail(out: &Output, n: usize) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("\n    {l}"))
        .collect()
}

/// What to do when Kubebuilder `version` cannot be had, for the errors below.
fn install_advice(version: &str) -> String {
    format!(
        "Either put Kubebuilder {version} on PATH as `kubebuilder` (its release binaries: \
         https://github.com/kubernetes-sigs/kubebuilder/releases/tag/{version}), or install Go \
         (https://go.dev/dl/) with access to the Go module proxy, and opbuilder builds it once \
         (kept in {})",
        cache_root()
            .map(|r| r.join(version).display().to_string())
            .unwrap_or_else(|| "$XDG_CACHE_HOME/opbuilder/kubebuilder".into())
    )
}

/// Kubebuilder `version` (as [`release`] writes it): found on PATH or in the cache, or built;
/// the path, and where it came from, for the report.
pub fn binary(version: &str) -> Result<(PathBuf, String)> {
    for candidate in on_path("kubebuilder") {
        let said = Command::new(&candidate)
            .arg("version")
            .stdin(Stdio::null())
            .output();
        if let Ok(out) = said {
            if reported_release(&String::from_utf8_lossy(&out.stdout)).as_deref() == Some(version) {
                let shown = candidate.display().to_string();
                return Ok((candidate, format!("{shown}, on PATH")));
            }
        }
    }
    let Some(root) = cache_root() else {
        bail!(
            "neither XDG_CACHE_HOME nor HOME is set, so opbuilder has nowhere to keep Kubebuilder {version}; \
             nothing was written.\n  {}",
            install_advice(version)
        );
    };
    let dir = root.join(version);
    let bin = dir.join("kubebuilder");
    if is_executable(&bin) {
        let shown = bin.display().to_string();
        return Ok((bin, format!("{shown}, built before")));
    }
    build(version, &dir)?;
    let shown = bin.display().to_string();
    Ok((bin, format!("{shown}, built now")))
}

/// A `go` command run in `dir` for the build: the caller's Go settings, plus `-mod=mod` (the
/// throwaway module has no go.sum) and no workspace.
fn go(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("go");
    let flags = std::env::var("GOFLAGS").unwrap_or_default();
    c.args(args)
        .current_dir(dir)
        .env("GOFLAGS", format!("{flags} -mod=mod").trim_start())
        .env("GOWORK", "off")
        .stdin(Stdio::null());
    c
}

fn run_go(dir: &Path, args: &[&str], version: &str) -> Result<Output> {
    let out = go(dir, args)
        .output()
        .with_context(|| format!("running go {}", args.join(" ")))?;
    if !out.status.success() {
        bail!(
            "building Kubebuilder {version} failed at `go {}`; nothing was written:{}\n  {}",
            args.join(" "),
            tail(&out, 15),
            install_advice(version)
        );
    }
    Ok(out)
}

/// `"Dir": "..."` of `go mod download -json` (JSON, indented with tabs, which YAML refuses).
fn json_dir(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l.trim().strip_prefix("\"Dir\": \"")?;
        let v = v.strip_suffix(',').unwrap_or(v).strip_suffix('"')?;
        Some(v.replace("\\\\", "\\"))
    })
}

/// Build Kubebuilder `version` into `dir/kubebuilder` (see the module documentation).
fn build(version: &str, dir: &Path) -> Result<()> {
    if on_path("go").is_empty() {
        bail!(
            "this project was made by Kubebuilder {version}, and `alpha update` scaffolds it again with that \
             release as the base of its merge, but no `kubebuilder` on PATH reports {version} and Go is not \
             installed to build it; nothing was written.\n  {}",
            install_advice(version)
        );
    }
    errln!(
        "note: building Kubebuilder {version} ({MODULE}@{version}, from the Go module proxy) to scaffold the \
         project's merge base; once: it is kept in {}",
        dir.display()
    );
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let work = super::Scratch::new_in(dir, "build")?;
    let w = &work.0;
    let x_tools = &crate::versions::pins().kubebuilder.x_tools;
    let mut requires = format!("\t{MODULE} {version}\n");
    if !x_tools.is_empty() {
        requires.push_str(&format!("\tgolang.org/x/tools {x_tools}\n"));
    }
    std::fs::write(
        w.join("go.mod"),
        format!("module opbuilder.invalid/kubebuilder\n\ngo 1.22\n\nrequire (\n{requires})\n"),
    )?;
    let at = format!("{MODULE}@{version}");
    let listed = run_go(w, &["mod", "download", "-json", &at], version)?;
    let src = json_dir(&String::from_utf8_lossy(&listed.stdout))
        .map(PathBuf::from)
        .with_context(|| format!("`go mod download -json {at}` did not say where the module is"))?;
    // The main package: the module's root from v4.6 on, cmd/ before.
    let package = if src.join("main.go").is_file() {
        MODULE.to_string()
    } else if src.join("cmd").join("main.go").is_file() {
        format!("{MODULE}/cmd")
    } else {
        bail!(
            "{at} has no main package where Kubebuilder keeps it (main.go or cmd/main.go in {}); nothing was written",
            src.display()
        );
    };
    std::fs::write(
        w.join("tools.go"),
        format!("//go:build tools\n\npackage tools\n\nimport _ \"{package}\"\n"),
    )?;
    run_go(w, &["mod", "tidy"], version)?;
    let tmp = w.join("kubebuilder");
    let out = tmp.to_string_lossy().to_string();
    let built = go(w, &["build", "-trimpath", "-o", &out, &package])
        .env("CGO_ENABLED", "0")
        .output()
        .context("running go build")?;
    if !built.status.success() {
        bail!(
            "building Kubebuilder {version} failed at `go build {package}`; nothing was written:{}\n  {}",
            tail(&built, 15),
            install_advice(version)
        );
    }
    std::fs::rename(&tmp, dir.join("kubebuilder"))
        .with_context(|| format!("moving the built Kubebuilder into {}", dir.display()))?;
    Ok(())
}

/// Write `go` and `make` into `dir`, to go first on Kubebuilder's PATH: `make` does nothing, and
/// `go` runs only what Kubebuilder reads while it scaffolds (`go env` and `go list`, which
/// goimports asks while it formats a Go file, `go mod edit -json`, `go version`) with the real
/// Go at `real_go`, and does nothing for the post-steps (`go mod tidy`, `go get`, ...).
fn stubs(dir: &Path, real_go: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let quoted = format!("'{}'", real_go.to_string_lossy().replace('\'', "'\\''"));
    let go = format!(
        "#!/bin/sh\n# opbuilder: Kubebuilder's post-steps are not run for the merge base; what it reads\n\
         # while scaffolding is.\ncase \"$1\" in\nenv | version | list) exec {quoted} \"$@\" ;;\n\
         mod) [ \"$2\" = edit ] && exec {quoted} \"$@\" ;;\nesac\nexit 0\n"
    );
    let make =
        "#!/bin/sh\n# opbuilder: Kubebuilder's post-steps are not run for the merge base\nexit 0\n";
    for (name, text) in [("go", go.as_str()), ("make", make)] {
        let p = dir.join(name);
        std::fs::write(&p, text)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

/// The flags a release's `init --help` lists that the replay depends on.
struct InitFlags {
    license_file: bool,
    multigroup: bool,
}

/// Whether a command's `--help` defines `flag` (a line of its flag list starts with it; an
/// example that names it does not count).
fn has_flag(help: &str, flag: &str) -> bool {
    help.lines().any(|l| {
        l.trim_start()
            .strip_prefix(flag)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
    })
}

/// The plugin a replayed command runs beside the layout's (`--plugins=KEY` of an `edit` or a
/// `create api`), if any.
fn plugin_of(words: &[String]) -> Option<&str> {
    if words.first().map(String::as_str) == Some("init") {
        return None;
    }
    words.iter().find_map(|w| w.strip_prefix("--plugins="))
}

/// The plugin keys in the table of `kubebuilder --help`: full (`grafana.kubebuilder.io/v1-alpha`,
/// before v4.9) or short (`grafana/v1-alpha`).
fn offered_plugins(help: &str) -> Vec<String> {
    help.split(|c: char| c.is_whitespace() || c == '|')
        .filter(|w| {
            w.contains(".kubebuilder.io/")
                || w.split_once('/').is_some_and(|(name, v)| {
                    !name.is_empty()
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                        && v.starts_with('v')
                        && v[1..].starts_with(|c: char| c.is_ascii_digit())
                })
        })
        .map(str::to_string)
        .collect()
}

/// Whether `offered` ([`offered_plugins`]) holds `key`, in full or short.
fn offers(offered: &[String], key: &str) -> bool {
    let short = match key.split_once('/') {
        Some((name, v)) => format!("{}/{v}", name.split('.').next().unwrap_or(name)),
        None => key.to_string(),
    };
    offered.iter().any(|o| o == key || *o == short)
}

/// Scaffold the project of `input` again into `out` (absent or empty) with the Kubebuilder
/// binary `kb` of release `version`; `scratch` holds the stubs. A plugin PROJECT records that
/// the release does not have (added later, by a newer Kubebuilder or by opbuilder) is left
/// out: the notes returned say so.
pub fn scaffold(
    kb: &Path,
    version: &str,
    input: &Path,
    out: &Path,
    scratch: &Path,
) -> Result<Vec<String>> {
    // Kubebuilder runs in `out`: the paths it is given (--license-file) must not be relative.
    let input =
        &std::fs::canonicalize(input).with_context(|| format!("resolving {}", input.display()))?;
    let project = Project::load(input)?;
    let boilerplate = input.join(crate::context::boilerplate_file(input, &project));
    let license = boilerplate.is_file().then_some(boilerplate.as_path());
    let mut steps = replay(&project, license, &[], Replayer::Kubebuilder)?;
    if let Some(main_go) = crate::fsx::read_text(&input.join(crate::context::MAIN_GO), 1 << 24)
        .ok()
        .flatten()
    {
        steps = order_like_main(steps, &main_go);
    }
    let Some(real_go) = on_path("go").into_iter().next() else {
        bail!(
            "Kubebuilder {version} formats the Go files it scaffolds with the Go toolchain, which is not on PATH; \
             nothing was written.\n  Install Go (https://go.dev/dl/), as Kubebuilder needs it"
        );
    };
    let bin_dir = scratch.join("stubs");
    stubs(&bin_dir, &real_go)?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin_dir];
    dirs.extend(std::env::split_paths(&path));
    let path = std::env::join_paths(dirs).context("building Kubebuilder's PATH")?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let run = |words: &[String]| -> Result<Output> {
        Command::new(kb)
            .args(words)
            .current_dir(out)
            .env("PATH", &path)
            // Nothing is downloaded: no module, no toolchain.
            .env("GOPROXY", "off")
            .env("GOTOOLCHAIN", "local")
            .env("GOWORK", "off")
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {}", kb.display()))
    };
    let top = run(&["--help".into()])?;
    let offered = offered_plugins(&String::from_utf8_lossy(&top.stdout));
    let help = run(&["init".into(), "--help".into()])?;
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    let init_flags = InitFlags {
        license_file: has_flag(&help, "--license-file"),
        multigroup: has_flag(&help, "--multigroup"),
    };
    let header = license
        .map(|p| std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display())))
        .transpose()?;
    let mut notes = vec![];
    for step in &steps {
        if let Some(key) = plugin_of(&step.words).filter(|k| !offers(&offered, k)) {
            let note = format!(
                "Kubebuilder {version} has no plugin {key} (PROJECT records it, added later): the files it writes \
                 have no base, so where the new templates' differ from yours, yours are kept"
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
            continue;
        }
        if let Some(f) = &step.copy_first {
            let from = input.join(f);
            if from.is_file() {
                if let Some(dir) = out.join(f).parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::copy(&from, out.join(f))
                    .with_context(|| format!("copying {}", from.display()))?;
            }
        }
        let (words, after) = translate(&step.words, &init_flags, header.as_deref());
        for words in std::iter::once(&words).chain(&after.edit) {
            let o = run(words)?;
            let said = String::from_utf8_lossy(&o.stderr);
            if !o.status.success() && words[0] != "init" && said.contains("unknown flag") {
                // A record this release cannot have written (a later Kubebuilder's, or
                // opbuilder's): Kubebuilder stops at its flags, before it writes anything.
                notes.push(format!(
                    "Kubebuilder {version} cannot replay `kubebuilder {}` ({}), which PROJECT records (added \
                     later): the files it writes have no base, so where the new templates' differ from yours, \
                     yours are kept",
                    words.join(" "),
                    said.lines()
                        .find(|l| l.contains("unknown flag"))
                        .unwrap_or_default()
                        .trim()
                ));
                continue;
            }
            if !o.status.success() {
                bail!(
                    "Kubebuilder {version} ({}) failed to replay `kubebuilder {}` from PROJECT, for the base of the \
                     merge; nothing was written:{}\n  Is {version} the release that made this project? (PROJECT's \
                     cliVersion, or --from-version)",
                    kb.display(),
                    words.join(" "),
                    tail(&o, 15)
                );
            }
            if let (true, Some(user)) = (after.adopt_header && words[0] == "init", &header) {
                adopt_header(out, user)?;
            }
        }
    }
    if !out.join(project::FILE).is_file() {
        bail!(
            "Kubebuilder {version} ({}) wrote no PROJECT when replaying this project; nothing was written",
            kb.display()
        );
    }
    // opbuilder's own plugins (certs, telemetry), which only opbuilder turns on: the base gets
    // each as the project did, by `edit` after what Kubebuilder made, so that the merge moves
    // their lines (cmd/main.go, kustomizations) to where the new templates put them instead of
    // adding them twice.
    for key in EDITED_AFTER_INIT {
        if !project.plugin_keys().iter().any(|k| k == key) {
            continue;
        }
        let words = vec!["edit".to_string(), format!("--plugins={key}")];
        let plan = plan_step(out, &words)
            .with_context(|| format!("replaying `opbuilder {}` for the base", words.join(" ")))?;
        crate::plan::apply(out, &plan, &crate::plan::ApplyOptions::default())
            .with_context(|| format!("writing `opbuilder {}` for the base", words.join(" ")))?;
    }
    Ok(notes)
}

/// What to do after a translated `init` for a release that lacks one of its flags.
#[derive(Default, Debug, PartialEq)]
struct After {
    /// `edit` commands to run right after (`edit --multigroup=true`).
    edit: Vec<Vec<String>>,
    /// Make the project's license header the user's ([`adopt_header`]): a release without
    /// --license-file wrote its own.
    adopt_header: bool,
}

/// The line of a license header that names the year (and the owner): `Copyright 2024 Jane.`
fn copyright_line(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with("Copyright "))
}

/// `init`'s license flags that write `header` (the project's hack/boilerplate.go.txt) again, for
/// a release without --license-file: none for an empty one, else Kubebuilder's Apache header
/// with the owner of its Copyright line (its year is the year it runs: see [`adopt_header`]).
fn license_flags(header: &str) -> Vec<String> {
    if header.trim().is_empty() {
        return vec!["--license=none".into()];
    }
    let mut flags = vec!["--license=apache2".to_string()];
    let owner = copyright_line(header)
        .and_then(|l| l.strip_prefix("Copyright "))
        .and_then(|rest| rest.split_once(' '))
        .map(|(_, owner)| owner.trim().trim_end_matches('.').trim())
        .filter(|o| !o.is_empty());
    if let Some(o) = owner {
        flags.push(format!("--owner={o}"));
    }
    flags
}

/// After `init` of a release without --license-file: where its header differs from the user's
/// `header` only by the Copyright line (the year it ran), that line becomes the user's in every
/// file `init` wrote (the Go files' headers, the README's license); and hack/boilerplate.go.txt
/// becomes the user's, for the commands that follow.
fn adopt_header(out: &Path, header: &str) -> Result<()> {
    let file = out.join(crate::context::BOILERPLATE_FILE);
    let written = std::fs::read_to_string(&file).unwrap_or_default();
    if let (Some(theirs), Some(user)) = (copyright_line(&written), copyright_line(header)) {
        if theirs != user && written.replace(theirs, user) == *header {
            for (path, text) in crate::fsx::read_tree(out)? {
                if text.contains(theirs) {
                    let fixed: String = text
                        .split_inclusive('\n')
                        .map(|l| {
                            if l.trim() == theirs {
                                l.replacen(theirs, user, 1)
                            } else {
                                l.to_string()
                            }
                        })
                        .collect();
                    std::fs::write(out.join(&path), fixed)?;
                }
            }
        }
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&file, header).with_context(|| format!("writing {}", file.display()))
}

/// A replayed command as the release takes it: `init` skips the Go version check (the stubbed
/// `go` reports none) and takes the flags this release lacks afterwards instead; `header` is
/// the text of the file --license-file names.
fn translate(words: &[String], flags: &InitFlags, header: Option<&str>) -> (Vec<String>, After) {
    let mut after = After::default();
    if words.first().map(String::as_str) != Some("init") {
        return (words.to_vec(), after);
    }
    let mut out = vec![];
    for w in words {
        if w.starts_with("--license-file=") && !flags.license_file {
            out.extend(license_flags(header.unwrap_or_default()));
            after.adopt_header = true;
            continue;
        }
        if w == "--multigroup" && !flags.multigroup {
            after
                .edit
                .push(vec!["edit".into(), "--multigroup=true".into()]);
            continue;
        }
        out.push(w.clone());
    }
    out.push("--skip-go-version-check".into());
    (out, after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubebuilder_releases_are_v4_versions_with_or_without_v() {
        assert_eq!(release("4.16.0").as_deref(), Some("v4.16.0"));
        assert_eq!(release("v4.0.0").as_deref(), Some("v4.0.0"));
        assert_eq!(release("v4.13.1").as_deref(), Some("v4.13.1"));
        assert_eq!(release("4.17.0-rc.1").as_deref(), Some("v4.17.0-rc.1"));
        for no in [
            "0.2.0", "3.15.0", "v5.0.0", "4.16", "4.16.0.1", "v4.x.0", "4.16.0-", "(devel)", "",
        ] {
            assert_eq!(release(no), None, "{no}");
        }
    }

    #[test]
    fn the_release_a_kubebuilder_reports_is_read_from_both_version_formats() {
        let new = "KubeBuilder:          v4.16.0\nKubernetes:           1.37.0\nGit Commit:           unknown\n";
        assert_eq!(reported_release(new).as_deref(), Some("v4.16.0"));
        let old = "Version: main.version{KubeBuilderVersion:\"4.8.0\", KubernetesVendor:\"1.33.0\", GitCommit:\"x\"}\n";
        assert_eq!(reported_release(old).as_deref(), Some("v4.8.0"));
        let unstamped =
            "Version: main.version{KubeBuilderVersion:\"unknown\", KubernetesVendor:\"unknown\"}\n";
        assert_eq!(reported_release(unstamped), None);
        assert_eq!(reported_release("kubebuilder: command not found"), None);
    }

    #[test]
    fn init_flags_a_release_lacks_are_done_another_way() {
        let words: Vec<String> = [
            "init",
            "--domain=example.com",
            "--multigroup",
            "--license-file=/p/hack/boilerplate.go.txt",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let new = InitFlags {
            license_file: true,
            multigroup: true,
        };
        let header = "/*\nCopyright 2024 The Shop Authors.\n\nLicensed under the Apache License, Version 2.0\n*/";
        let (w, after) = translate(&words, &new, Some(header));
        assert_eq!(w[1..4], words[1..4]);
        assert_eq!(w.last().unwrap(), "--skip-go-version-check");
        assert_eq!(after, After::default());
        let old = InitFlags {
            license_file: false,
            multigroup: false,
        };
        let (w, after) = translate(&words, &old, Some(header));
        assert_eq!(
            w,
            [
                "init",
                "--domain=example.com",
                "--license=apache2",
                "--owner=The Shop Authors",
                "--skip-go-version-check"
            ]
        );
        assert_eq!(after.edit, [["edit", "--multigroup=true"]]);
        assert!(after.adopt_header);
        // No owner, and an empty header.
        assert_eq!(
            license_flags("/*\nCopyright 2024.\n\nLicensed under the Apache License\n*/\n"),
            ["--license=apache2"]
        );
        assert_eq!(license_flags("\n"), ["--license=none"]);
        // Other commands are passed as they are.
        let api: Vec<String> = vec!["create".into(), "api".into(), "--kind=App".into()];
        assert_eq!(
            translate(&api, &old, Some(header)),
            (api.clone(), After::default())
        );
    }

    #[test]
    fn the_header_init_wrote_takes_the_year_of_the_users() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        let kb = "/*\nCopyright 2026 Jane.\n\nLicensed under the Apache License.\n*/";
        let user = "/*\nCopyright 2023 Jane.\n\nLicensed under the Apache License.\n*/";
        std::fs::create_dir_all(out.join("hack")).unwrap();
        std::fs::create_dir_all(out.join("cmd")).unwrap();
        std::fs::write(out.join("hack/boilerplate.go.txt"), kb).unwrap();
        std::fs::write(out.join("cmd/main.go"), format!("{kb}\n\npackage main\n")).unwrap();
        std::fs::write(
            out.join("README.md"),
            "## License\n\nCopyright 2026 Jane.\n\nLicensed\n",
        )
        .unwrap();
        adopt_header(out, user).unwrap();
        let read = |p: &str| std::fs::read_to_string(out.join(p)).unwrap();
        assert_eq!(read("hack/boilerplate.go.txt"), user);
        assert_eq!(read("cmd/main.go"), format!("{user}\n\npackage main\n"));
        assert_eq!(
            read("README.md"),
            "## License\n\nCopyright 2023 Jane.\n\nLicensed\n"
        );
        // A header of the user's own (not Kubebuilder's but for the year) leaves the files alone.
        std::fs::write(out.join("hack/boilerplate.go.txt"), kb).unwrap();
        std::fs::write(out.join("cmd/main.go"), format!("{kb}\n")).unwrap();
        adopt_header(out, "// Copyright 2023 Jane. All rights reserved.\n").unwrap();
        assert_eq!(read("cmd/main.go"), format!("{kb}\n"));
        assert_eq!(
            read("hack/boilerplate.go.txt"),
            "// Copyright 2023 Jane. All rights reserved.\n"
        );
    }

    #[test]
    fn the_flags_a_release_has_are_read_from_its_flag_list() {
        let help = "Examples:\n  kubebuilder init --domain example.org --multigroup\n\nFlags:\n\
                    \x20     --license-file string      Path to custom license file\n\
                    \x20     --owner string             Owner name\n";
        assert!(has_flag(help, "--license-file"));
        assert!(!has_flag(help, "--multigroup"), "named by an example only");
        assert!(!has_flag(help, "--license"), "only a longer flag starts so");
    }

    #[test]
    fn the_plugins_a_release_has_are_read_from_its_help() {
        let old = "Plugin keys | Supported project versions\n\
                   -----------------------------------------+----------------------------\n\
                   \x20 deploy-image.go.kubebuilder.io/v1-alpha |                          3\n\
                   \x20                  go.kubebuilder.io/v4 |                          3\n\
                   \x20       grafana.kubebuilder.io/v1-alpha |                          3\n";
        let new = "Available plugins:\n\n  KEY                    DESCRIPTION\n\
                   \x20 autoupdate/v1-alpha    Proposes Kubebuilder scaffold updates via GitHub Actions\n\
                   \x20 deploy-image/v1-alpha  Scaffolds a CRD+controller\n\
                   \x20 go/v4                  Default scaffold (go/v4 + kustomize/v2)\n\
                   \x20 helm/v2-alpha          Generates a Helm chart\n\
                   \x20   kubebuilder <init|edit|create> --help\n";
        let (old, new) = (offered_plugins(old), offered_plugins(new));
        for key in [
            "deploy-image.go.kubebuilder.io/v1-alpha",
            "grafana.kubebuilder.io/v1-alpha",
        ] {
            assert!(offers(&old, key), "{key} in {old:?}");
        }
        for key in [
            "deploy-image.go.kubebuilder.io/v1-alpha",
            "autoupdate.kubebuilder.io/v1-alpha",
            "helm.kubebuilder.io/v2-alpha",
        ] {
            assert!(offers(&new, key), "{key} in {new:?}");
        }
        assert!(!offers(&old, "autoupdate.kubebuilder.io/v1-alpha"));
        assert!(!offers(&old, "helm.kubebuilder.io/v1-alpha"));
        assert!(!offers(&new, "grafana.kubebuilder.io/v1-alpha"));
        assert!(!offers(&new, "helm.kubebuilder.io/v1-alpha"));
    }

    #[test]
    fn the_module_directory_is_read_from_go_mod_download_json() {
        let out = "{\n\t\"Path\": \"sigs.k8s.io/kubebuilder/v4\",\n\t\"Version\": \"v4.0.0\",\n\t\"Dir\": \"/home/u/go/pkg/mod/sigs.k8s.io/kubebuilder/v4@v4.0.0\",\n\t\"Sum\": \"h1:x\"\n}\n";
        assert_eq!(
            json_dir(out).as_deref(),
            Some("/home/u/go/pkg/mod/sigs.k8s.io/kubebuilder/v4@v4.0.0")
        );
        assert_eq!(json_dir("{\n\t\"Error\": \"unknown revision\"\n}\n"), None);
    }
}
