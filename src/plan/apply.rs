//! [`apply`]: stage every file of a plan in memory, op by op, leave out the parts whose file or
//! marker is missing (staging again without them), collect every conflict before writing a
//! byte, report, and hand what changes to the transaction.

use super::data::{IfExists, Op, Part, Plan};
use super::edit::{apply_edit, EditError};
use super::manual::pieces;
use super::paths::{resolve_final_link, Found, Paths};
use super::report::{Action, Conflicts, Missing, Report, Skipped};
use super::transaction::{Change, Transaction};
use crate::fsx;
use anyhow::{anyhow, Result};
use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};

/// The largest file opbuilder reads to edit (a Go file or manifest is far smaller).
const MAX_FILE: u64 = 64 << 20;

/// Options for [`apply`].
#[derive(Debug, Default, Clone)]
pub struct ApplyOptions {
    pub dry_run: bool,
    /// Test hook: fail after this many successful file writes, to exercise rollback.
    pub fail_after_writes: Option<usize>,
    /// On a dry run, hand back every planned file's resulting content in the report (what an
    /// external plugin is shown of the plan so far).
    pub contents: bool,
    /// Leave out an essential [`Part`] whose file or marker is missing, as an optional one is,
    /// instead of refusing the plan (`--allow-missing-markers`).
    pub leave_out_essential: bool,
    /// After the commit, remove the directories that the plan's removals left empty (`delete`).
    /// Not part of the transaction: an empty directory left by a crash just before is harmless.
    pub prune_emptied_dirs: bool,
}

struct Staged<'a> {
    original: Option<Vec<u8>>,
    content: Content<'a>,
    /// Whether the file exists in the staged view (on disk, or created earlier in the plan).
    present: bool,
    action: Action,
    /// The plan path is a symbolic link (to a file inside the project).
    link: bool,
}

/// A staged file's text, copied only when an edit changes it: PROJECT and the rendered files
/// are borrowed from the plan, and a file on disk stays in `original` until edited.
enum Content<'a> {
    Original,
    Plan(&'a [u8]),
    Edited(Vec<u8>),
}

impl Staged<'_> {
    /// What giving the file new content is: an update of a file that was there, else a create.
    fn changed(&self) -> Action {
        if self.original.is_some() {
            Action::Update
        } else {
            Action::Create
        }
    }

    fn bytes(&self) -> &[u8] {
        match &self.content {
            Content::Original => self.original.as_deref().unwrap_or_default(),
            Content::Plan(b) => b,
            Content::Edited(v) => v,
        }
    }

    /// The staged text and the original, owned.
    fn into_parts(self) -> (Vec<u8>, Option<Vec<u8>>) {
        match self.content {
            Content::Original => (self.original.clone().unwrap_or_default(), self.original),
            Content::Plan(b) => (b.to_vec(), self.original),
            Content::Edited(v) => (v, self.original),
        }
    }
}

/// A reason the plan cannot be applied as it is.
struct Problem {
    /// The conflict, in full.
    text: String,
    /// Set when a file or something in it that an op needs is missing: which.
    missing: Option<Missing>,
    /// The part of the op.
    part: Option<Part>,
}

/// What staging collects on the way: each file named by the plan, as it will be, and every
/// reason the plan cannot be applied.
struct Stage<'a> {
    root: &'a Path,
    paths: Paths<'a>,
    files: fsx::PathMap<Staged<'a>>,
    /// The paths in the order the plan first names them.
    order: Vec<PathBuf>,
    problems: Vec<Problem>,
    /// The part of the op being staged.
    part: Option<Part>,
    report: Report,
}

impl<'a> Stage<'a> {
    fn new(root: &'a Path, root_canon: &'a Path) -> Self {
        Stage {
            root,
            paths: Paths::new(root, root_canon),
            files: fsx::PathMap::default(),
            order: vec![],
            problems: vec![],
            part: None,
            report: Report::default(),
        }
    }

    fn conflict(&mut self, text: String) {
        self.problems.push(Problem {
            text,
            missing: None,
            part: self.part,
        });
    }

    fn edit_failed(&mut self, path: &Path, e: EditError) {
        self.problems.push(Problem {
            text: e.text,
            missing: e.missing.map(|what| Missing {
                file: path.to_path_buf(),
                what: Some(what),
            }),
            part: self.part,
        });
    }

    /// The text of `path` as the plan staged so far leaves it, or on disk; None when it is
    /// missing (or cannot be read: then the plan reports why).
    fn text(&mut self, path: &Path) -> Option<String> {
        if let Some(st) = self.files.get(path) {
            return st
                .present
                .then(|| String::from_utf8_lossy(st.bytes()).into_owned());
        }
        match self.paths.check(path) {
            Ok(Found::Present { .. }) => fsx::read_regular(&fsx::join(self.root, path), MAX_FILE)
                .ok()
                .flatten()
                .map(|b| String::from_utf8_lossy(&b).into_owned()),
            _ => None,
        }
    }

    /// Stage `path` the first time the plan names it: check it and read what is there. False
    /// (with a conflict) when the path is refused or cannot be read.
    fn read(&mut self, path: &Path) -> bool {
        if self.files.contains_key(path) {
            return true;
        }
        let found = match self.paths.check(path) {
            Ok(f) => f,
            Err(e) => {
                self.conflict(e);
                return false;
            }
        };
        let original = match found {
            // No need to try opening it.
            Found::Missing => None,
            Found::Present { .. } => {
                match fsx::read_regular(&fsx::join(self.root, path), MAX_FILE) {
                    Ok(b) => b,
                    Err(e) => {
                        self.conflict(format!("{}: cannot read: {e}", path.display()));
                        return false;
                    }
                }
            }
        };
        let present = original.is_some();
        // The text being edited starts as the file's; only what an edit changes is copied.
        let content = Content::Original;
        self.files.insert(
            path.to_path_buf(),
            Staged {
                original,
                content,
                present,
                action: Action::Unchanged,
                link: found == Found::Present { link: true },
            },
        );
        self.order.push(path.to_path_buf());
        true
    }

    /// The new PROJECT: written whole, as a Create that overwrites; borrowed, not copied (it
    /// grows with the project).
    fn project(&mut self, text: &'a str) {
        let path = Path::new(crate::project::FILE);
        if !self.read(path) {
            return;
        }
        let st = self.files.get_mut(path).expect("staged above");
        let changed = st.changed();
        st.content = Content::Plan(text.as_bytes());
        st.present = true;
        st.action = changed;
    }

    /// Apply one operation of the plan to the staged view.
    fn op(&mut self, op: &'a Op) {
        let path = op.path();
        self.part = op.part();
        if !self.read(path) {
            return;
        }
        let st = self.files.get_mut(path).expect("staged above");
        let changed = st.changed();
        match op {
            Op::Create {
                content, if_exists, ..
            } => {
                if !st.present {
                    st.content = Content::Plan(content.as_bytes());
                    st.present = true;
                    st.action = changed;
                    return;
                }
                match if_exists {
                    IfExists::Error => self.conflict(format!(
                        "{}: already exists (use --force to replace it, or remove it)",
                        path.display()
                    )),
                    IfExists::Skip => {
                        if st.action == Action::Unchanged {
                            st.action = Action::Skip;
                        }
                    }
                    IfExists::Overwrite => {
                        st.content = Content::Plan(content.as_bytes());
                        st.action = changed;
                    }
                }
            }
            Op::Remove { .. } => {
                if st.present {
                    st.present = false;
                    st.content = Content::Plan(&[]);
                    st.action = if st.original.is_some() {
                        Action::Remove
                    } else {
                        Action::Unchanged
                    };
                }
            }
            Op::Update { edits, .. } => {
                if !st.present {
                    self.problems.push(Problem {
                        text: format!(
                            "{}: must exist to be updated but is missing; restore it (for example from version control)",
                            path.display()
                        ),
                        missing: Some(Missing {
                            file: path.to_path_buf(),
                            what: None,
                        }),
                        part: self.part,
                    });
                    return;
                }
                let Ok(start) = std::str::from_utf8(st.bytes()) else {
                    self.conflict(format!("{}: is not UTF-8 text", path.display()));
                    return;
                };
                // Each edit reads the text and returns a new one; nothing is copied beforehand.
                let mut text: Option<String> = None;
                let mut failed = vec![];
                for edit in edits {
                    let current = text.as_deref().unwrap_or(start);
                    match apply_edit(
                        path,
                        current,
                        edit,
                        &mut self.report.warnings,
                        &mut self.report.notes,
                    ) {
                        Ok(Cow::Owned(t)) => text = Some(t),
                        Ok(Cow::Borrowed(_)) => {}
                        Err(e) => failed.push(e),
                    }
                }
                for e in failed {
                    self.edit_failed(path, e);
                }
                let st = self.files.get_mut(path).expect("staged above");
                if let Some(t) = text {
                    st.content = Content::Edited(t.into_bytes());
                }
                st.action = changed;
            }
        }
    }

    /// The parts this staging finds a file or marker missing for that are to be left out, each
    /// with what is missing (in plan order, each once).
    fn to_leave_out(&self, essential_too: bool) -> Vec<(Part, Vec<Missing>)> {
        let mut out: Vec<(Part, Vec<Missing>)> = vec![];
        for p in &self.problems {
            let (Some(part), Some(missing)) = (p.part, &p.missing) else {
                continue;
            };
            if part.essential && !essential_too {
                continue;
            }
            match out.iter_mut().find(|(q, _)| *q == part) {
                Some((_, m)) if !m.contains(missing) => m.push(missing.clone()),
                Some(_) => {}
                None => out.push((part, vec![missing.clone()])),
            }
        }
        out
    }

    /// What each of `parts` would have written, less what the files hold as the rest of the
    /// plan leaves them.
    fn skipped(&mut self, plan: &Plan, parts: Vec<(Part, Vec<Missing>)>) -> Vec<Skipped> {
        parts
            .into_iter()
            .map(|(part, missing)| {
                let mut all = vec![];
                for op in plan.ops.iter().filter(|op| op.part() == Some(part)) {
                    let current = self.text(op.path());
                    all.extend(pieces(op, current.as_deref()));
                }
                Skipped {
                    part,
                    missing,
                    pieces: all,
                }
            })
            .collect()
    }

    /// Every conflict (each once), or the staged files and the report: one entry per path, in
    /// plan order, PROJECT last. `manual`: the essential parts refused, with what they would
    /// have written.
    fn finish(mut self, manual: Vec<Skipped>) -> Result<(fsx::PathMap<Staged<'a>>, Report)> {
        self.order
            .sort_by_key(|p| p == Path::new(crate::project::FILE));
        let mut written = vec![];
        for path in &self.order {
            let st = &self.files[path];
            let action = match st.action {
                Action::Update if st.original.as_deref() == Some(st.bytes()) => Action::Unchanged,
                a => a,
            };
            if matches!(action, Action::Create | Action::Update | Action::Remove) {
                written.push((path.clone(), st.original.is_some()));
            }
            self.report.entries.push((path.clone(), action));
        }
        self.part = None;
        self.check_writable(&written);
        // The missing files and markers of the essential parts refused are said with them.
        let mut seen = std::collections::HashSet::new();
        let conflicts: Vec<String> = self
            .problems
            .iter()
            .filter(|p| p.part.is_none() || p.missing.is_none())
            .map(|p| p.text.clone())
            .filter(|c| seen.insert(c.clone()))
            .collect();
        if !conflicts.is_empty() || !manual.is_empty() {
            return Err(Conflicts(conflicts, manual).into());
        }
        Ok((self.files, self.report))
    }

    /// Refuse to write what the user write-protected (no write permission bit, which root
    /// would otherwise write through, and a rename would replace for anyone): a file the plan
    /// replaces or removes, and a directory the plan writes in (the project's own holds the
    /// journal). `written`: each path written, and whether it exists now.
    #[cfg(unix)]
    fn check_writable(&mut self, written: &[(PathBuf, bool)]) {
        use std::os::unix::fs::PermissionsExt;
        let protected = |p: &Path| {
            fs::metadata(p)
                .ok()
                .map(|m| m.permissions().mode() & 0o7777)
                .filter(|mode| mode & 0o222 == 0)
        };
        let mut dirs: Vec<PathBuf> = vec![];
        if !written.is_empty() {
            dirs.push(PathBuf::new());
        }
        for (path, exists) in written {
            let full = fsx::join(self.root, path);
            if *exists {
                if let Some(mode) = protected(&full) {
                    self.conflict(format!(
                        "{}: write-protected (mode {mode:o}), and opbuilder does not replace a file you protected; \
                         make it writable (chmod u+w {}) and run the command again",
                        path.display(),
                        path.display()
                    ));
                }
            }
            // The nearest directory that exists is the one written in (the others are created).
            let mut dir = fsx::parent(path).map(Path::to_path_buf).unwrap_or_default();
            while !dir.as_os_str().is_empty() && !fsx::join(self.root, &dir).is_dir() {
                dir = fsx::parent(&dir).map(Path::to_path_buf).unwrap_or_default();
            }
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        for dir in dirs {
            let full = if dir.as_os_str().is_empty() {
                self.root.to_path_buf()
            } else {
                fsx::join(self.root, &dir)
            };
            if let Some(mode) = protected(&full) {
                let (name, shown) = if dir.as_os_str().is_empty() {
                    let abs = fs::canonicalize(self.root).unwrap_or_else(|_| full.clone());
                    (
                        format!("the project directory {}", abs.display()),
                        abs.display().to_string(),
                    )
                } else {
                    (format!("{}/", dir.display()), dir.display().to_string())
                };
                self.conflict(format!(
                    "{name}: a write-protected directory (mode {mode:o}) that the plan writes in; \
                     make it writable (chmod u+w {shown}) and run the command again"
                ));
            }
        }
    }

    #[cfg(not(unix))]
    fn check_writable(&mut self, _written: &[(PathBuf, bool)]) {}
}

/// Stage `plan` but for the parts in `without`.
fn stage_without<'a>(
    root: &'a Path,
    root_canon: &'a Path,
    plan: &'a Plan,
    without: &[(Part, Vec<Missing>)],
) -> Stage<'a> {
    let mut stage = Stage::new(root, root_canon);
    for op in &plan.ops {
        if !op
            .part()
            .is_some_and(|p| without.iter().any(|(q, _)| *q == p))
        {
            stage.op(op);
        }
    }
    if let Some(text) = plan.project.as_deref() {
        stage.project(text);
    }
    stage
}

/// Compute, check and (unless dry-run) write the plan under `root`.
pub fn apply(root: &Path, plan: &Plan, opts: &ApplyOptions) -> Result<Report> {
    let root_canon = fs::canonicalize(root).map_err(|e| anyhow!("{}: {e}", root.display()))?;
    // Stage the plan; when a part finds its file or marker missing, stage it again without that
    // part (another part may need what it would have written), until no part is left out anew.
    let mut left_out: Vec<(Part, Vec<Missing>)> = vec![];
    let mut stage = loop {
        let stage = stage_without(root, &root_canon, plan, &left_out);
        let more = stage.to_leave_out(opts.leave_out_essential);
        if more.is_empty() {
            break stage;
        }
        left_out.extend(more);
    };
    // An essential part whose file or marker is missing refuses the plan (what it would have
    // written is said as the rest of the plan leaves the files).
    let refused = stage.to_leave_out(true);
    let manual = if refused.is_empty() {
        vec![]
    } else {
        let mut without = left_out.clone();
        without.extend(refused.iter().cloned());
        stage_without(root, &root_canon, plan, &without).skipped(plan, refused)
    };
    let skipped = stage.skipped(plan, left_out);
    let (staged, mut report) = stage.finish(manual)?;
    report.skipped = skipped;
    if opts.dry_run {
        if opts.contents {
            report.contents = report
                .entries
                .iter()
                .map(|(p, _)| {
                    let st = &staged[p];
                    (p.clone(), st.present.then(|| st.bytes().to_vec()))
                })
                .collect();
        }
        return Ok(report);
    }
    let changes = changes(root, &root_canon, staged, &report)?;
    if !changes.is_empty() {
        Transaction::run(root, &changes, opts.fail_after_writes)?;
    }
    if opts.prune_emptied_dirs {
        prune_emptied_dirs(root, &changes);
    }
    Ok(report)
}

/// Remove the directories (below `root`) that the removals among `changes` left empty, each
/// parent in turn while it is empty. `remove_dir` removes only an empty directory, so nothing
/// else can go.
fn prune_emptied_dirs(root: &Path, changes: &[Change]) {
    for c in changes.iter().filter(|c| c.content.is_none()) {
        let mut dir = c.rel.parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            if fs::remove_dir(fsx::join(root, d)).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
}

/// What the transaction writes: each staged file the report creates, updates or removes, in
/// the report's order, through a symbolic link to the file it names.
fn changes(
    root: &Path,
    root_canon: &Path,
    mut staged: fsx::PathMap<Staged>,
    report: &Report,
) -> Result<Vec<Change>> {
    let mut changes = vec![];
    for (path, action) in &report.entries {
        if !matches!(action, Action::Create | Action::Update | Action::Remove) {
            continue;
        }
        let st = staged.remove(path).expect("staged above");
        let rel = if st.link {
            resolve_final_link(root, root_canon, path)?
        } else {
            path.clone()
        };
        let (content, original) = st.into_parts();
        changes.push(Change {
            rel,
            content: (*action != Action::Remove).then_some(content),
            original,
        });
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut out = BTreeMap::new();
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
            for e in fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                let rel = p.strip_prefix(root).unwrap().to_path_buf();
                if p.is_dir() && !fs::symlink_metadata(&p).unwrap().file_type().is_symlink() {
                    out.insert(rel, None);
                    walk(root, &p, out);
                } else {
                    out.insert(rel, fs::read(&p).ok());
                }
            }
        }
        walk(root, root, &mut out);
        out
    }

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join("cmd")).unwrap();
        fs::write(
            t.path().join("cmd/main.go"),
            "package main\n\nfunc main() {\n\t// +kubebuilder:scaffold:builder\n}\n",
        )
        .unwrap();
        fs::write(t.path().join("keep.txt"), "keep\n").unwrap();
        t
    }

    #[test]
    fn creates_updates_and_writes_project_last() {
        let t = tree();
        let mut plan = Plan::default();
        plan.create("a/b/c.txt", "hello\n", IfExists::Error);
        plan.above_marker("cmd/main.go", "builder", vec!["setup()\n".into()]);
        plan.create("keep.txt", "other\n", IfExists::Skip);
        plan.project = Some("version: \"3\"\n".into());
        let r = apply(t.path(), &plan, &ApplyOptions::default()).unwrap();
        assert_eq!(r.entries.last().unwrap().0, PathBuf::from("PROJECT"));
        assert_eq!(r.action("a/b/c.txt"), Some(Action::Create));
        assert_eq!(r.action("cmd/main.go"), Some(Action::Update));
        assert_eq!(r.action("keep.txt"), Some(Action::Skip));
        assert_eq!(
            fs::read_to_string(t.path().join("keep.txt")).unwrap(),
            "keep\n"
        );
        assert!(fs::read_to_string(t.path().join("cmd/main.go"))
            .unwrap()
            .contains("\tsetup()\n\t// +kubebuilder"));
        // Re-applying changes nothing.
        let r = apply(
            t.path(),
            &plan,
            &ApplyOptions {
                dry_run: true,
                ..Default::default()
            },
        );
        assert!(r.is_err(), "a/b/c.txt exists now and the policy is Error");
    }

    #[test]
    fn dry_run_writes_nothing() {
        let t = tree();
        let before = snapshot(t.path());
        let mut plan = Plan::default();
        plan.create("new.txt", "x", IfExists::Error);
        plan.above_marker("cmd/main.go", "builder", vec!["setup()".into()]);
        plan.project = Some("version: \"3\"\n".into());
        let r = apply(
            t.path(),
            &plan,
            &ApplyOptions {
                dry_run: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(r.entries.len(), 3);
        assert_eq!(before, snapshot(t.path()));
    }

    #[test]
    fn all_conflicts_are_collected_before_any_write() {
        let t = tree();
        let before = snapshot(t.path());
        let mut plan = Plan::default();
        plan.create("fresh.txt", "x", IfExists::Error);
        plan.create("keep.txt", "x", IfExists::Error);
        plan.above_marker("cmd/main.go", "nosuchmarker", vec!["x".into()]);
        plan.above_marker("missing.go", "builder", vec!["x".into()]);
        plan.create("../outside.txt", "x", IfExists::Overwrite);
        let err = apply(t.path(), &plan, &ApplyOptions::default()).unwrap_err();
        let c = err.downcast_ref::<Conflicts>().expect("conflicts");
        assert_eq!(c.0.len(), 4, "{:?}", c.0);
        assert!(c.0.iter().any(|m| m.contains("keep.txt: already exists")));
        assert!(c.0.iter().any(|m| m.contains("nosuchmarker")));
        assert!(c.0.iter().any(|m| m.contains("missing.go: must exist")));
        assert!(c.0.iter().any(|m| m.contains("..")));
        assert_eq!(before, snapshot(t.path()));
    }

    #[test]
    fn failure_mid_write_restores_every_byte() {
        for n in 0..4 {
            let t = tree();
            let before = snapshot(t.path());
            let mut plan = Plan::default();
            plan.create("deep/er/new.go", "package x\n", IfExists::Error);
            plan.above_marker("cmd/main.go", "builder", vec!["setup()".into()]);
            plan.create("keep.txt", "replaced\n", IfExists::Overwrite);
            plan.remove("cmd/main.go");
            plan.project = Some("version: \"3\"\n".into());
            let opts = ApplyOptions {
                fail_after_writes: Some(n),
                ..Default::default()
            };
            let err = apply(t.path(), &plan, &opts).unwrap_err();
            assert!(format!("{err:#}").contains("restored"), "{err:#}");
            assert_eq!(before, snapshot(t.path()), "after failing at write {n}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn path_checks_hold_for_every_file_of_a_directory() {
        // The checker remembers directories; each file under a bad one is still refused, and
        // files under a missing one are created.
        let outside = tempfile::tempdir().unwrap();
        let t = tree();
        std::os::unix::fs::symlink(outside.path(), t.path().join("out")).unwrap();
        fs::write(t.path().join("plain"), "p").unwrap();
        let mut plan = Plan::default();
        for f in ["out/a.txt", "out/b.txt", "plain/a.txt", "plain/b.txt"] {
            plan.create(f, "x", IfExists::Error);
        }
        let err = apply(t.path(), &plan, &ApplyOptions::default()).unwrap_err();
        let c = err.downcast_ref::<Conflicts>().unwrap();
        assert_eq!(c.0.len(), 4, "{:?}", c.0);
        assert_eq!(
            c.0.iter()
                .filter(|m| m.contains("outside the project"))
                .count(),
            2
        );
        assert_eq!(
            c.0.iter()
                .filter(|m| m.contains("is not a directory"))
                .count(),
            2
        );
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
        // Two files in one new directory and one in an existing one; the existing file in a
        // known directory is still read (IfExists::Error sees it).
        fs::create_dir(t.path().join("have")).unwrap();
        fs::write(t.path().join("have/old.txt"), "old").unwrap();
        let mut plan = Plan::default();
        plan.create("new/deep/a.txt", "a", IfExists::Error);
        plan.create("new/deep/b.txt", "b", IfExists::Error);
        plan.create("have/c.txt", "c", IfExists::Error);
        plan.create("have/old.txt", "new", IfExists::Error);
        let err = apply(t.path(), &plan, &ApplyOptions::default()).unwrap_err();
        let c = err.downcast_ref::<Conflicts>().unwrap();
        assert_eq!(c.0.len(), 1, "{:?}", c.0);
        assert!(
            c.0[0].starts_with("have/old.txt: already exists"),
            "{:?}",
            c.0
        );
        plan.ops.pop();
        apply(t.path(), &plan, &ApplyOptions::default()).unwrap();
        assert_eq!(
            fs::read_to_string(t.path().join("new/deep/b.txt")).unwrap(),
            "b"
        );
        assert_eq!(
            fs::read_to_string(t.path().join("have/c.txt")).unwrap(),
            "c"
        );
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinks_leading_outside_the_root() {
        let outside = tempfile::tempdir().unwrap();
        let t = tree();
        std::os::unix::fs::symlink(outside.path(), t.path().join("config")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("x.txt"), t.path().join("link.txt"))
            .unwrap();
        fs::write(outside.path().join("x.txt"), "x").unwrap();
        let mut plan = Plan::default();
        plan.create(
            "config/default/kustomization.yaml",
            "x",
            IfExists::Overwrite,
        );
        plan.create("link.txt", "y", IfExists::Overwrite);
        let err = apply(t.path(), &plan, &ApplyOptions::default()).unwrap_err();
        let c = err.downcast_ref::<Conflicts>().unwrap();
        assert_eq!(c.0.len(), 2, "{:?}", c.0);
        assert!(c.0.iter().all(|m| m.contains("outside the project")));
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 1);
        assert_eq!(
            fs::read_to_string(outside.path().join("x.txt")).unwrap(),
            "x"
        );
        // A symlink that stays inside the root is fine.
        fs::create_dir(t.path().join("real")).unwrap();
        std::os::unix::fs::symlink(t.path().join("real"), t.path().join("alias")).unwrap();
        let mut plan = Plan::default();
        plan.create("alias/ok.txt", "ok", IfExists::Error);
        apply(t.path(), &plan, &ApplyOptions::default()).unwrap();
        assert_eq!(
            fs::read_to_string(t.path().join("real/ok.txt")).unwrap(),
            "ok"
        );
    }

    #[cfg(unix)]
    #[test]
    fn write_protected_files_and_directories_are_conflicts_each_named_once() {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |p: &Path, m: u32| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
        let t = tree();
        let before = snapshot(t.path());
        // The conflicts of `plan`, which must be refused, each checked to start as `want` says.
        let refused = |plan: &Plan, dry_run: bool, want: &[&str]| {
            let opts = ApplyOptions {
                dry_run,
                ..Default::default()
            };
            let err = apply(t.path(), plan, &opts).unwrap_err();
            let c = &err.downcast_ref::<Conflicts>().expect("conflicts").0;
            assert_eq!(c.len(), want.len(), "{c:?}");
            for (got, w) in c.iter().zip(want) {
                assert!(got.starts_with(w), "{c:?}");
            }
        };
        mode(&t.path().join("cmd/main.go"), 0o444);
        let mut plan = Plan::default();
        plan.above_marker("cmd/main.go", "builder", vec!["setup()".into()]);
        plan.create("keep.txt", "x", IfExists::Skip);
        for dry_run in [true, false] {
            refused(&plan, dry_run, &["cmd/main.go: write-protected (mode 444)"]);
        }
        mode(&t.path().join("cmd/main.go"), 0o644);
        // Two edits of a missing file, apart: one conflict.
        let mut plan = Plan::default();
        plan.above_marker("missing.go", "builder", vec!["a()".into()]);
        plan.create("keep.txt", "x", IfExists::Skip);
        plan.above_marker("missing.go", "builder", vec!["b()".into()]);
        refused(&plan, false, &["missing.go: must exist"]);
        // A directory written in: the nearest existing one of a new file's.
        mode(&t.path().join("cmd"), 0o555);
        let mut plan = Plan::default();
        plan.create("cmd/new/deep.go", "package x\n", IfExists::Error);
        refused(
            &plan,
            false,
            &["cmd/: a write-protected directory (mode 555)"],
        );
        mode(&t.path().join("cmd"), 0o755);
        // The project directory itself (where the journal goes).
        mode(t.path(), 0o555);
        let mut plan = Plan::default();
        plan.create("cmd/other.go", "package x\n", IfExists::Error);
        refused(&plan, false, &["the project directory /"]);
        mode(t.path(), 0o755);
        assert_eq!(before, snapshot(t.path()));
    }

    #[test]
    fn new_files_are_0644() {
        let t = tree();
        let mut plan = Plan::default();
        plan.create("n.txt", "x", IfExists::Error);
        apply(t.path(), &plan, &ApplyOptions::default()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(t.path().join("n.txt"))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o777,
                0o644
            );
        }
    }
}
