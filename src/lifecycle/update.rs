//! `opbuilder alpha update` and `alpha check`: carry a project to newer templates by a
//! three-way merge, offline.
//!
//! The ancestor is the project scaffolded again (from its own PROJECT, see
//! [`super::generate::generate`]) with the templates of the release that made it (PROJECT
//! `cliVersion`, or `--from-version`), or, for a project a Kubebuilder release made, by that
//! release of Kubebuilder ([`super::kubebuilder`]); "theirs" is the same with the templates of
//! `--to-version` (default: this binary's); "ours" is the user's tree. Each file is merged
//! line by line ([`crate::merge`]); the results go to disk as one [`Plan`], so the update
//! writes everything or nothing.

use crate::error::{bad_flag, usage};
use crate::merge;
use crate::out::{errln, outln};
use crate::plan::{apply, ApplyOptions, IfExists, Plan};
use crate::project::{self, Project};
use crate::releases;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The release that made the project: an opbuilder release, or a Kubebuilder v4 release
    /// such as v4.16.0 (built from the Go module proxy when not on PATH) [default: PROJECT's
    /// cliVersion]
    #[arg(long, value_name = "VERSION")]
    pub from_version: Option<String>,
    /// The release to update to [default: this opbuilder's version]
    #[arg(long, value_name = "VERSION")]
    pub to_version: Option<String>,
    /// Print the change to every file, write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Update even though the git work tree has uncommitted changes
    #[arg(long)]
    pub force: bool,
    /// Do not run `cargo generate-lockfile` afterwards (Rust projects whose Cargo.toml the
    /// update changed, or without Cargo.lock)
    #[arg(long)]
    pub skip_post_steps: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The release that made the project: an opbuilder release, or a Kubebuilder v4 release
    /// such as v4.16.0 [default: PROJECT's cliVersion]
    #[arg(long, value_name = "VERSION")]
    pub from_version: Option<String>,
}

/// What the update does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    /// Merged (or added) cleanly.
    Write(String),
    /// Merged with conflict markers (the count of conflicting regions).
    Conflict(String, usize),
    /// The template dropped the file and the user had not changed it.
    Remove,
}

/// What made the project: the templates the update merges from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    /// An opbuilder release (its templates are embedded).
    Opbuilder(String),
    /// A Kubebuilder release, `v4.x.y` (its binary scaffolds the base, see
    /// [`super::kubebuilder`]).
    Kubebuilder(String),
}

impl Origin {
    /// As the report names it: `0.2.0`, `Kubebuilder v4.16.0`.
    fn shown(&self) -> String {
        match self {
            Origin::Opbuilder(v) => v.clone(),
            Origin::Kubebuilder(v) => format!("Kubebuilder {v}"),
        }
    }
}

/// Notes on files left alone (deleted by the user, changed by the user and dropped by the
/// templates), for the report.
struct Outcome {
    changes: BTreeMap<PathBuf, Change>,
    /// The user's current contents of the changed files (None: absent).
    before: BTreeMap<PathBuf, Option<String>>,
    kept: Vec<String>,
    project: Project,
    from: String,
    to: String,
    /// PROJECT's layout as the `to` templates record it (the Rust layout's key moves with them).
    layout: Vec<String>,
}

/// A tree's files by path, with their text.
type Files = BTreeMap<PathBuf, String>;
use crate::fsx::read_tree;

/// The project `root` scaffolded again with the templates of `version`, and the external
/// plugins of its layout that could not run (not installed), with where they were looked for.
fn regenerate(
    root: &Path,
    version: &str,
    scratch: &Path,
) -> Result<(Files, Vec<(String, String)>)> {
    let out = scratch.join(version);
    let generated =
        crate::fsx::scratch(|| releases::with(version, || super::generate::generate(root, &out)))
            .with_context(|| {
            format!("scaffolding the project again with the templates of {version}")
        })?;
    let mut files = read_tree(&out)?;
    files.remove(Path::new(project::FILE));
    Ok((files, generated.not_run))
}

fn check_version(flag: &str, v: &str) -> Result<()> {
    if releases::is_known(v) {
        return Ok(());
    }
    let known = releases::known();
    Err(bad_flag(
        flag,
        v,
        &format!(
            "this opbuilder holds the templates of these releases only: {}",
            known.join(", ")
        ),
        &known[0],
    ))
}

/// What `--from-version` names: an opbuilder release this binary holds, or a Kubebuilder v4
/// release.
fn origin_flag(v: &str) -> Result<Origin> {
    if releases::is_known(v) {
        return Ok(Origin::Opbuilder(v.to_string()));
    }
    if let Some(kb) = super::kubebuilder::release(v) {
        return Ok(Origin::Kubebuilder(kb));
    }
    Err(bad_flag(
        "--from-version",
        v,
        &format!(
            "name the release that made the project: an opbuilder release this binary holds ({}), or a Kubebuilder \
             v4 release (4.x.y, with or without a leading v)",
            releases::known().join(", ")
        ),
        "v4.16.0",
    ))
}

/// The project's PROJECT with the releases to go from and to, checked.
fn versions(
    root: &Path,
    from: Option<&str>,
    to: Option<&str>,
) -> Result<(Project, Origin, String)> {
    if !root.join(project::FILE).is_file() {
        bail!(
            "no PROJECT file in {}: alpha update and alpha check work on a project made by `opbuilder init` or \
             Kubebuilder; run them inside one (any subdirectory works)",
            root.display()
        );
    }
    let project = Project::load(root)?;
    let from = from.map(origin_flag).transpose()?;
    if let Some(v) = to {
        check_version("--to-version", v)?;
    }
    let from = match from {
        Some(o) => o,
        None if project.cli_version.is_empty() => bail!(
            "PROJECT has no cliVersion, so nothing records which release made this project: there is no ancestor \
             to update from or check against; nothing was written.\n  Name that release with --from-version: a \
             Kubebuilder release (Kubebuilder records none before v4.6), for example\n    opbuilder alpha update \
             --from-version v4.5.0\n  or an opbuilder release ({})",
            releases::known().join(", ")
        ),
        None if releases::is_known(&project.cli_version) => {
            Origin::Opbuilder(project.cli_version.clone())
        }
        None => match super::kubebuilder::release(&project.cli_version) {
            Some(kb) => Origin::Kubebuilder(kb),
            None => bail!(
                "PROJECT records cliVersion {}, which is neither an opbuilder release this binary holds templates \
                 for ({}) nor a Kubebuilder v4 release (4.x.y); nothing was written.\n  Name the release that made \
                 the project with --from-version, or scaffold it again with opbuilder's templates from its PROJECT \
                 and copy your code over:\n    opbuilder alpha generate --output-dir ../{}-opbuilder",
                project.cli_version,
                releases::known().join(", "),
                if project.project_name.is_empty() { "project" } else { &project.project_name }
            ),
        },
    };
    let to = to
        .map(str::to_string)
        .unwrap_or_else(releases::current_version);
    if let Origin::Opbuilder(from) = &from {
        let known = releases::known();
        let rank = |v: &str| known.iter().position(|k| k == v);
        if rank(&to) < rank(from) {
            return Err(usage(format!(
                "--to-version {to} is older than the project's templates ({from}); alpha update only moves forward\n  \
                 example: opbuilder alpha update --to-version {}",
                releases::current_version()
            )));
        }
    }
    Ok((project, from, to))
}

/// The project `root` scaffolded again by Kubebuilder `version` (see [`super::kubebuilder`]):
/// the base of the merge for a project Kubebuilder made.
fn regenerate_kubebuilder(
    root: &Path,
    version: &str,
    scratch: &Path,
    kept: &mut Vec<String>,
) -> Result<Files> {
    let (kb, whence) = super::kubebuilder::binary(version)?;
    errln!(
        "note: the base of the merge is this project scaffolded again from PROJECT by Kubebuilder {version} ({whence})"
    );
    let out = scratch.join(format!("kubebuilder-{version}"));
    kept.extend(super::kubebuilder::scaffold(
        &kb, version, root, &out, scratch,
    )?);
    let mut files = read_tree(&out)?;
    files.remove(Path::new(project::FILE));
    Ok(files)
}

/// Compute the merge of every file; writes nothing (only the scratch trees).
fn compute(root: &Path, origin: &Origin, to: &str, project: Project) -> Result<Outcome> {
    let layout = releases::with(to, || {
        super::generate::layout_for_templates(&project.layout)
    });
    let from = origin.shown();
    if *origin == Origin::Opbuilder(to.to_string()) {
        return Ok(Outcome {
            changes: BTreeMap::new(),
            before: BTreeMap::new(),
            kept: vec![],
            project,
            from,
            to: to.to_string(),
            layout,
        });
    }
    let scratch = super::Scratch::new("update")?;
    let mut kept = vec![];
    let base = match origin {
        Origin::Opbuilder(v) => regenerate(root, v, &scratch.0)?.0,
        Origin::Kubebuilder(v) => regenerate_kubebuilder(root, v, &scratch.0, &mut kept)?,
    };
    let (theirs, not_run) = regenerate(root, to, &scratch.0)?;
    let helm_v1 = crate::plugins::helm::DEPRECATED_KEY;
    if project.layout.iter().any(|k| k == helm_v1)
        || project.plugin_keys().iter().any(|k| k == helm_v1)
    {
        kept.push(format!(
            "{helm_v1} (deprecated) is not run by opbuilder, so the {to} templates have no chart of it: the chart \
             files it wrote that you did not change are removed; \
             `opbuilder edit --plugins=helm/v2-alpha` makes a chart from the kustomize output"
        ));
    }
    // Files the new templates add: where one has the name of a file they no longer write, they
    // moved it (Kubebuilder v4.3 moved the webhooks from api/ to internal/webhook/).
    let added: Vec<&PathBuf> = theirs.keys().filter(|p| !base.contains_key(*p)).collect();
    let paths: BTreeSet<&PathBuf> = base.keys().chain(theirs.keys()).collect();
    let label = format!("opbuilder {to} templates");
    let mut changes = BTreeMap::new();
    let mut before = BTreeMap::new();
    kept.extend(not_run.iter().map(|(key, why)| {
            format!(
                "the external plugin {key} of PROJECT's layout did not run, so its files were left as they are: \
                 {why}\n  Install it and update again to have its changes too"
            )
    }));
    for path in paths {
        let (b, t) = (base.get(path), theirs.get(path));
        if b == t {
            continue; // the templates did not change this file
        }
        let file = root.join(path);
        let ours = match crate::fsx::read_text(&file, 64 << 20) {
            Ok(o) => o,
            Err(e) => bail!(
                "{}: cannot read it ({e}); nothing was written",
                path.display()
            ),
        };
        let moved_to = match (b, t) {
            (Some(_), None) => added
                .iter()
                .find(|a| a.file_name() == path.file_name())
                .map(|a| a.as_path()),
            _ => None,
        };
        let change = merge_file(path, b, t, ours.as_ref(), moved_to, to, &label, &mut kept);
        if let Some(c) = change {
            before.insert(path.clone(), ours);
            changes.insert(path.clone(), c);
        }
    }
    Ok(Outcome {
        changes,
        before,
        kept,
        project,
        from,
        to: to.to_string(),
        layout,
    })
}

/// What the update does to one file the templates changed: `b` and `t` are the file as the old
/// and the new templates write it, `ours` the project's; `moved_to`, a file of the same name
/// that the new templates add where they no longer write this one.
#[allow(clippy::too_many_arguments)]
fn merge_file(
    path: &Path,
    b: Option<&String>,
    t: Option<&String>,
    ours: Option<&String>,
    moved_to: Option<&Path>,
    to: &str,
    label: &str,
    kept: &mut Vec<String>,
) -> Option<Change> {
    let show = path.display();
    match (b, t, ours) {
        (Some(_), Some(_), None) => {
            kept.push(format!("{show}: you deleted it; it stays deleted"));
            None
        }
        (Some(b), None, Some(o)) if o == b => Some(Change::Remove),
        (Some(_), None, Some(_)) => {
            kept.push(match moved_to {
                Some(new) => format!(
                    "{show}: the {to} templates no longer write it but {} instead, and you changed it; it is kept: \
                     move your code into {}, then delete this file",
                    new.display(),
                    new.display()
                ),
                None => format!(
                    "{show}: the {to} templates no longer write it, but you changed it; it is kept"
                ),
            });
            None
        }
        (_, None, _) => None,
        (None, Some(t), None) => Some(Change::Write(t.clone())),
        (None, Some(t), Some(o)) if o == t => None,
        (None, Some(_), Some(_)) => {
            // New in the templates, but the project has its own (often generated, such as
            // config/webhook/manifests.yaml from `make manifests`): no common ancestor to
            // merge from, and the user's is the one that works with their code.
            kept.push(format!(
                "{show}: the {to} templates add this file, and you have one already; yours is kept \
                 (`opbuilder alpha generate --output-dir DIR` shows the template's)"
            ));
            None
        }
        (Some(b), Some(t), Some(o)) if path.as_os_str() == "go.mod" => {
            // Line merges of go.mod conflict on every moved pin (see crate::gomod).
            let (text, notes) = crate::gomod::update(b, o, t);
            if !notes.is_empty() {
                kept.push(format!(
                    "go.mod: {}; run `go mod tidy` (and `make generate manifests`) after the update",
                    notes.join(", ")
                ));
            }
            (text != *o).then_some(Change::Write(text))
        }
        (b, Some(t), Some(o)) => {
            let m = merge::merge3(b.map_or("", String::as_str), o, t, "yours", label);
            if m.conflicts > 0 && MADE_BY_MAKE.contains(&show.to_string().as_str()) {
                kept.push(format!(
                    "{show}: `make manifests` writes it from your code's markers, and the {to} templates changed \
                     what it is before that; yours is kept (run `make manifests` after the update)"
                ));
                return None;
            }
            if let Some(note) = markers_left_out(&show.to_string(), t, &m.text, m.conflicts, to) {
                kept.push(note);
            }
            match m.conflicts {
                0 if m.text == *o => None,
                0 => Some(Change::Write(m.text)),
                n => Some(Change::Conflict(m.text, n)),
            }
        }
    }
}

/// Files the templates write once that `make manifests` then writes from the code's markers
/// (the manager's ClusterRole): one whose merge conflicts is the project's own, kept.
const MADE_BY_MAKE: &[&str] = &["config/rbac/role.yaml"];

/// The `+kubebuilder:scaffold:<name>` marker lines of `text`, by name.
fn scaffold_markers(text: &str) -> BTreeSet<&str> {
    text.lines()
        .filter_map(|l| l.split_once("+kubebuilder:scaffold:"))
        .map(|(_, rest)| {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// The note for a merged file that lacks marker lines the new templates have (the user's code
/// replaced the lines around them, or a conflict holds them): later `create` commands add their
/// code above those lines, and refuse without them. `merged` is the merge's text, with `conflicts`
/// regions; the markers counted are those outside the templates' side of each conflict.
fn markers_left_out(
    show: &str,
    theirs: &str,
    merged: &str,
    conflicts: usize,
    to: &str,
) -> Option<String> {
    let mut yours = String::new();
    let mut side = 0; // 0 outside a conflict, 1 on the user's side, 2 on the templates'
    for line in merged.lines() {
        match (side, line) {
            (0, "<<<<<<< yours") => side = 1,
            (1, "=======") => side = 2,
            (2, l) if l.starts_with(">>>>>>> ") => side = 0,
            (2, _) => {}
            _ => {
                yours.push_str(line);
                yours.push('\n');
            }
        }
    }
    let have = scaffold_markers(&yours);
    let missing: Vec<String> = scaffold_markers(theirs)
        .into_iter()
        .filter(|m| !have.contains(m))
        .map(|m| format!("`+kubebuilder:scaffold:{m}`"))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let what = if conflicts > 0 {
        "keep them (the templates' side of the conflicts) as you resolve the conflicts"
    } else {
        "your version has none: put them back where the templates have them"
    };
    Some(format!(
        "{show}: the {to} templates have the marker line(s) {}, above which `opbuilder create` adds code later \
         (it refuses a file without them); {what} (`opbuilder alpha generate --output-dir DIR` shows the \
         templates' file)",
        missing.join(", ")
    ))
}

/// The plan of an outcome: every merged file, and PROJECT's cliVersion moved to the target.
fn plan(o: &Outcome) -> Plan {
    let mut plan = Plan::default();
    for (path, c) in &o.changes {
        match c {
            Change::Write(t) | Change::Conflict(t, _) => plan.create(path, t, IfExists::Overwrite),
            Change::Remove => plan.remove(path),
        }
    }
    if o.project.cli_version != o.to || o.project.layout != o.layout {
        let mut p = o.project.clone();
        p.cli_version = o.to.clone();
        p.layout = o.layout.clone();
        plan.project = Some(p.to_yaml());
    }
    plan
}

/// The Rust project's Cargo.toml, whose crates Cargo.lock must match.
const CARGO_TOML: &str = "Cargo.toml";

/// Why a Rust project needs `cargo generate-lockfile` after the update: the update changed
/// Cargo.toml (a moved kube or k8s-openapi pin leaves Cargo.lock stale, and the image's `cargo
/// build --locked` fails), or the project has no Cargo.lock (made before opbuilder wrote one).
/// `None`: not a Rust project, or Cargo.lock stays right.
fn lockfile_reason(o: &Outcome, root: &Path) -> Option<&'static str> {
    if o.from == o.to || !o.layout.iter().any(|k| project::is_rust_layout(k)) {
        return None;
    }
    if o.changes.contains_key(Path::new(CARGO_TOML)) {
        Some("the update changed Cargo.toml")
    } else if !root.join("Cargo.lock").exists() {
        Some("the project has no Cargo.lock")
    } else {
        None
    }
}

/// After the update of a Rust project: `cargo generate-lockfile` when [`lockfile_reason`] says
/// so, unless `skip` (--skip-post-steps), this is a dry run, or Cargo.toml holds conflicts;
/// each of those says what to run instead.
fn lockfile_post_step(o: &Outcome, root: &Path, skip: bool, dry_run: bool) {
    let Some(why) = lockfile_reason(o, root) else {
        return;
    };
    let cmd = crate::planning::post::CARGO_LOCKFILE;
    let conflict = matches!(
        o.changes.get(Path::new(CARGO_TOML)),
        Some(Change::Conflict(..))
    );
    if skip {
        outln!(
            "\nNot running `{cmd}` ({why}; --skip-post-steps): run it before building with --locked (the image's \
             build does)."
        );
    } else if dry_run {
        outln!("\nThen `{cmd}` would run ({why}).");
    } else if conflict {
        errln!(
            "note: {why}, and it has conflicts: once they are resolved, run `{cmd}` (builds with --locked, such \
             as the image's, need a Cargo.lock that matches it)"
        );
    } else {
        outln!("\nCargo.lock ({why}):");
        crate::planning::post::cargo_lockfile(root);
    }
}

fn conflicts(o: &Outcome) -> Vec<(&PathBuf, usize)> {
    o.changes
        .iter()
        .filter_map(|(p, c)| match c {
            Change::Conflict(_, n) => Some((p, *n)),
            _ => None,
        })
        .collect()
}

/// Uncommitted changes in the git work tree around `root` (None when it is not one, or git is
/// not installed).
fn git_dirty(root: &Path) -> Option<Vec<String>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["status", "--porcelain", "--", "."])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

pub fn run_update(root: &Path, args: &UpdateArgs) -> Result<()> {
    let (project, from, to) = versions(
        root,
        args.from_version.as_deref(),
        args.to_version.as_deref(),
    )?;
    if !args.force && !args.dry_run {
        if let Some(dirty) = git_dirty(root).filter(|d| !d.is_empty()) {
            let shown: Vec<&str> = dirty.iter().take(10).map(String::as_str).collect();
            bail!(
                "the git work tree has uncommitted changes, and alpha update would mix its changes into them; \
                 nothing was written:\n  {}{}\n  Commit or stash them first (`git stash`), or pass --force to update anyway",
                shown.join("\n  "),
                if dirty.len() > 10 { "\n  ..." } else { "" }
            );
        }
    }
    let o = compute(root, &from, &to, project)?;
    let plan = plan(&o);
    if args.dry_run {
        outln!(
            "opbuilder alpha update --dry-run ({} -> {}): nothing was written.",
            o.from,
            o.to
        );
        for (path, c) in &o.changes {
            let show = path.to_string_lossy();
            let old = o.before.get(path).cloned().flatten();
            let new = match c {
                Change::Write(t) | Change::Conflict(t, _) => Some(t.as_str()),
                Change::Remove => None,
            };
            outln!("{}", merge::unified(&show, old.as_deref(), new).trim_end());
        }
        if let Some(p) = &plan.project {
            outln!(
                "{}",
                merge::unified(project::FILE, Some(&o.project.to_yaml()), Some(p)).trim_end()
            );
        }
        summary(&o, true);
        lockfile_post_step(&o, root, args.skip_post_steps, true);
        crate::lock::release();
        return match conflicts(&o).len() {
            0 => Ok(()),
            n => bail!("{n} file(s) would have conflicts; nothing was written"),
        };
    }
    let report = apply(root, &plan, &ApplyOptions::default());
    crate::lock::release();
    report?;
    summary(&o, false);
    lockfile_post_step(&o, root, args.skip_post_steps, false);
    let c = conflicts(&o);
    if !c.is_empty() {
        let make = if o.layout.iter().any(|k| project::is_rust_layout(k)) {
            "make manifests"
        } else {
            "make generate manifests"
        };
        bail!(
            "{} file(s) have conflicts (marked <<<<<<< yours / ======= / >>>>>>> {}): resolve them, then run \
             `{make}` and your tests",
            c.len(),
            format_args!("opbuilder {} templates", o.to)
        );
    }
    Ok(())
}

fn summary(o: &Outcome, dry_run: bool) {
    let would = if dry_run { "would be " } else { "" };
    if o.changes.is_empty() {
        outln!(
            "The project's files {would}unchanged: they already match the {} templates.",
            o.to
        );
    } else {
        outln!(
            "Files {would}updated from the {} templates to the {} templates:",
            o.from,
            o.to
        );
    }
    for (path, c) in &o.changes {
        let what = match c {
            Change::Write(_) if o.before.get(path).is_some_and(Option::is_none) => {
                "added".to_string()
            }
            Change::Write(_) => "merged".to_string(),
            Change::Conflict(_, n) => format!("CONFLICT ({n} region(s))"),
            Change::Remove => "removed".to_string(),
        };
        outln!("  {what:<26} {}", path.display());
    }
    if o.project.layout != o.layout {
        outln!(
            "  {:<26} {} (cliVersion: {}; layout: {})",
            "updated",
            project::FILE,
            o.to,
            o.layout.join(", ")
        );
    } else if o.project.cli_version != o.to {
        outln!(
            "  {:<26} {} (cliVersion: {})",
            "updated",
            project::FILE,
            o.to
        );
    }
    for k in &o.kept {
        errln!("note: {k}");
    }
}

pub fn run_check(root: &Path, args: &CheckArgs) -> Result<()> {
    let (project, from, to) = versions(root, args.from_version.as_deref(), None)?;
    let o = compute(root, &from, &to, project)?;
    if o.changes.is_empty() && o.project.cli_version == o.to && o.project.layout == o.layout {
        outln!("The project is on the current templates ({}).", o.to);
        return Ok(());
    }
    summary(&o, true);
    bail!(
        "the project is not on the current templates ({}); run `opbuilder alpha update` to update it",
        o.to
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rust_project_needs_cargo_lock_again_when_cargo_toml_moved_or_it_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let outcome = |layout: &str, from: &str, changed: &[&str]| Outcome {
            changes: changed
                .iter()
                .map(|p| (PathBuf::from(p), Change::Write(String::new())))
                .collect(),
            before: BTreeMap::new(),
            kept: vec![],
            project: Project::default(),
            from: from.to_string(),
            to: "9.9.9".to_string(),
            layout: vec![layout.to_string()],
        };
        let rust = project::RUST_LAYOUT;
        // No Cargo.lock: the update writes one.
        let o = outcome(rust, "0.4.0", &["Makefile"]);
        assert_eq!(
            lockfile_reason(&o, dir.path()),
            Some("the project has no Cargo.lock")
        );
        std::fs::write(dir.path().join("Cargo.lock"), "").unwrap();
        assert_eq!(lockfile_reason(&o, dir.path()), None);
        // A moved crate pin changes Cargo.toml: Cargo.lock is stale.
        let o = outcome(rust, "0.4.0", &["Cargo.toml", "Makefile"]);
        assert_eq!(
            lockfile_reason(&o, dir.path()),
            Some("the update changed Cargo.toml")
        );
        // Nothing to update, or a go/v4 project: no cargo.
        assert_eq!(
            lockfile_reason(&outcome(rust, "9.9.9", &[]), dir.path()),
            None
        );
        let go = outcome("go.kubebuilder.io/v4", "0.4.0", &["Cargo.toml"]);
        assert_eq!(lockfile_reason(&go, dir.path()), None);
    }

    #[test]
    fn marker_lines_the_merge_left_out_are_named() {
        let theirs = "fn a() {}\n// +kubebuilder:scaffold:webhook-handlers\n\nmod tests {\n    // +kubebuilder:scaffold:webhook-tests\n}\n";
        // Both markers kept, one outside a conflict and one on the user's side: nothing said.
        let kept = "fn a() {}\n// +kubebuilder:scaffold:webhook-handlers\n<<<<<<< yours\n    // +kubebuilder:scaffold:webhook-tests\n=======\n>>>>>>> opbuilder 9.9.9 templates\n";
        assert_eq!(markers_left_out("f.rs", theirs, kept, 1, "9.9.9"), None);
        // A marker only on the templates' side of a conflict: keep it while resolving.
        let conflict = "fn a() {}\n// +kubebuilder:scaffold:webhook-handlers\n<<<<<<< yours\nmod tests {}\n=======\nmod tests {\n    // +kubebuilder:scaffold:webhook-tests\n}\n>>>>>>> opbuilder 9.9.9 templates\n";
        let note = markers_left_out("f.rs", theirs, conflict, 1, "9.9.9").expect("a note");
        assert!(
            note.starts_with("f.rs: the 9.9.9 templates have the marker line(s) `+kubebuilder:scaffold:webhook-tests`,")
                && note.contains("keep them (the templates' side of the conflicts)")
                && !note.contains("webhook-handlers"),
            "{note}"
        );
        // A clean merge without them: put them back. Text that names the marker prefix is no marker.
        let clean = "fn a() {}\n// markers: `+kubebuilder:scaffold:`\n";
        let note = markers_left_out("f.rs", theirs, clean, 0, "9.9.9").expect("a note");
        assert!(
            note.contains(
                "`+kubebuilder:scaffold:webhook-handlers`, `+kubebuilder:scaffold:webhook-tests`"
            ) && note.contains("put them back"),
            "{note}"
        );
    }

    #[test]
    fn go_mod_takes_the_new_pins_where_a_line_merge_would_conflict() {
        let s = |t: &str| t.to_string();
        let base = s("module example.com/app\n\ngo 1.26.0\n\nrequire sigs.k8s.io/controller-runtime v0.24.1\n");
        let theirs = base.replace("v0.24.1", "v0.25.0");
        let ours = s("module example.com/app\n\ngo 1.26.0\n\nrequire (\n\tk8s.io/apimachinery v0.36.0\n\tsigs.k8s.io/controller-runtime v0.24.1\n)\n");
        let mut kept = vec![];
        let label = "opbuilder 9.9.9 templates";
        // A line merge of the same three texts conflicts ...
        assert!(matches!(
            merge_file(
                Path::new("other.mod"),
                Some(&base),
                Some(&theirs),
                Some(&ours),
                None,
                "9.9.9",
                label,
                &mut kept
            ),
            Some(Change::Conflict(..))
        ));
        // ... go.mod gets the new version and a note.
        let Some(Change::Write(text)) = merge_file(
            Path::new("go.mod"),
            Some(&base),
            Some(&theirs),
            Some(&ours),
            None,
            "9.9.9",
            label,
            &mut kept,
        ) else {
            panic!("go.mod not written");
        };
        assert_eq!(text, ours.replace("v0.24.1", "v0.25.0"));
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(
            kept[0].contains("sigs.k8s.io/controller-runtime v0.24.1 -> v0.25.0")
                && kept[0].contains("go mod tidy"),
            "{kept:?}"
        );
        // A project already past the new pin: nothing to write, nothing said.
        let newer = ours.replace("v0.24.1", "v0.26.0");
        let mut kept = vec![];
        assert!(merge_file(
            Path::new("go.mod"),
            Some(&base),
            Some(&theirs),
            Some(&newer),
            None,
            "9.9.9",
            label,
            &mut kept
        )
        .is_none());
        assert!(kept.is_empty());
    }
}
