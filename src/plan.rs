//! Plans and their transactional application.
//!
//! A command never touches the disk itself: it returns a [`Plan`]. [`apply`] computes every
//! resulting file in memory, collects every conflict before writing a byte, then writes each
//! changed file atomically (temp file in the same directory + rename), PROJECT last. If any write
//! fails it restores every file it touched and removes the files and directories it created, so
//! the tree is byte-identical to before.

use crate::fsx;
use crate::journal::{self, Entry, Journal};
use crate::markers::go::imports::ImportSpec;
use crate::markers::{self, scaffold::MarkerError};
use crate::out::{errln, outln};
use anyhow::{anyhow, bail, Result};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// What to do when a file to create already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfExists {
    /// A conflict: the plan is refused.
    Error,
    /// Keep the existing file.
    Skip,
    /// Replace it.
    Overwrite,
}

/// An in-place change to an existing (or earlier planned) file.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Insert fragments above every `+kubebuilder:scaffold:<marker>` line (idempotent).
    AboveMarker {
        marker: String,
        fragments: Vec<String>,
    },
    /// Insert one line (a Rust `mod` declaration) into the lines directly above the marker, in
    /// sorted order, as rustfmt keeps them (idempotent).
    SortedAboveMarker { marker: String, line: String },
    /// Add a Go import to the block holding `// +kubebuilder:scaffold:imports`, sorted.
    GoImport { spec: ImportSpec, module: String },
    /// Uncomment a block (given in its uncommented form). When `required` is false and the block
    /// is in neither form, the edit is reported as a warning instead of a conflict.
    Uncomment { block: String, required: bool },
    /// Uncomment every YAML list entry that starts with the line `start` and holds every line of
    /// `needs`, recognised by structure (see [`markers::yaml::enable_entries`]). A missing entry is
    /// reported as a warning.
    EnableEntry { start: String, needs: Vec<String> },
    /// Insert text after the first line equal to `anchor` (idempotent).
    AfterLine { anchor: String, text: String },
    /// Insert text above the last line equal to `anchor`, with its indentation (idempotent).
    BeforeLine { anchor: String, text: String },
    /// Append text at the end (idempotent).
    Append { text: String },
    /// Add comment tags (such as `// +genclient`) at the top of the comments above the Go
    /// declaration `type <name> struct`, each unless that comment block already holds it.
    TypeTags {
        type_name: String,
        tags: Vec<String>,
    },
    /// Insert text after the last recipe line of the Makefile rule for `target` (idempotent).
    AfterRecipe { target: String, text: String },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Create {
        path: PathBuf,
        content: String,
        if_exists: IfExists,
    },
    Update {
        path: PathBuf,
        edits: Vec<Edit>,
    },
    /// Delete a file if it exists.
    Remove {
        path: PathBuf,
    },
}

/// The data a command produces: file operations in order, and the new PROJECT, written last.
#[derive(Debug, Default, Clone)]
pub struct Plan {
    pub ops: Vec<Op>,
    pub project: Option<String>,
}

impl Plan {
    pub fn create(
        &mut self,
        path: impl Into<PathBuf>,
        content: impl Into<String>,
        if_exists: IfExists,
    ) {
        self.ops.push(Op::Create {
            path: path.into(),
            content: content.into(),
            if_exists,
        });
    }

    pub fn update(&mut self, path: impl Into<PathBuf>, edit: Edit) {
        let path = path.into();
        // Consecutive edits of one file are kept together for readable dry-run output.
        if let Some(Op::Update { path: p, edits }) = self.ops.last_mut() {
            if *p == path {
                edits.push(edit);
                return;
            }
        }
        self.ops.push(Op::Update {
            path,
            edits: vec![edit],
        });
    }

    pub fn remove(&mut self, path: impl Into<PathBuf>) {
        self.ops.push(Op::Remove { path: path.into() });
    }

    pub fn above_marker(&mut self, path: impl Into<PathBuf>, marker: &str, fragments: Vec<String>) {
        self.update(
            path,
            Edit::AboveMarker {
                marker: marker.into(),
                fragments,
            },
        );
    }

    pub fn go_import(
        &mut self,
        path: impl Into<PathBuf>,
        name: Option<&str>,
        import: &str,
        module: &str,
    ) {
        self.update(
            path,
            Edit::GoImport {
                spec: ImportSpec::new(name, import),
                module: module.into(),
            },
        );
    }
}

/// What happened (or would happen) to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Create,
    Update,
    Remove,
    Skip,
    Unchanged,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Remove => "remove",
            Action::Skip => "skip",
            Action::Unchanged => "unchanged",
        })
    }
}

impl Action {
    fn style(self) -> crate::term::Style {
        use crate::term::Style;
        match self {
            Action::Create => Style::Green,
            Action::Update => Style::Cyan,
            Action::Remove => Style::Red,
            Action::Skip => Style::Yellow,
            Action::Unchanged => Style::Dim,
        }
    }
}

/// The outcome of applying (or dry-running) a plan.
#[derive(Debug, Default)]
pub struct Report {
    /// Each path once, in plan order, PROJECT last.
    pub entries: Vec<(PathBuf, Action)>,
    pub warnings: Vec<String>,
    /// Things done differently from the usual way, worth knowing (not problems).
    pub notes: Vec<String>,
    /// With [`ApplyOptions::contents`] on a dry run: each path's content after the plan (None:
    /// absent), in the order of `entries`.
    pub contents: Vec<(PathBuf, Option<Vec<u8>>)>,
}

impl Report {
    /// Print one status line per path (coloured on a terminal, see [`crate::term`]), then
    /// the warnings on standard error.
    pub fn print(&self, dry_run: bool) {
        let color = crate::term::color_stdout();
        for (path, action) in &self.entries {
            // "would unchanged" is not English: a dry run says the file is kept as it is.
            let name = match action {
                Action::Unchanged if dry_run => "keep".to_string(),
                a => a.to_string(),
            };
            let pad = " ".repeat(9usize.saturating_sub(name.len()));
            let word = format!("{}{pad}", crate::term::paint(&name, action.style(), color));
            if dry_run {
                outln!("  would {word} {}", path.display());
            } else if !matches!(action, Action::Unchanged) {
                outln!("  {word} {}", path.display());
            }
        }
        for w in &self.warnings {
            errln!("{} {w}", crate::term::label("warning"));
        }
        for n in &self.notes {
            errln!("note: {n}");
        }
    }

    #[cfg(test)]
    pub fn action(&self, path: &str) -> Option<Action> {
        self.entries
            .iter()
            .find(|(p, _)| p == Path::new(path))
            .map(|(_, a)| *a)
    }
}

/// Every reason a plan cannot be applied; nothing has been written.
#[derive(Debug)]
pub struct Conflicts(pub Vec<String>);

impl fmt::Display for Conflicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "nothing was written; the plan has {} conflict(s):",
            self.0.len()
        )?;
        for c in &self.0 {
            writeln!(f, "  - {c}")?;
        }
        write!(
            f,
            "fix these and run the command again (add --force where a file should be replaced)"
        )
    }
}

impl std::error::Error for Conflicts {}

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

/// What [`Paths::check`] found at a plan path.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Found {
    /// Nothing there, and nothing to read: the file or one of its directories does not exist.
    Missing,
    /// Something is there (a regular file, or a symbolic link to one inside the project).
    Present { link: bool },
}

/// Checks plan paths against the tree, remembering each directory it has looked at, so a plan
/// of many files in few directories stats each directory once (the project lock keeps the tree
/// still while a command runs).
struct Paths<'a> {
    root: &'a Path,
    root_canon: &'a Path,
    /// Directory (relative) -> whether it exists; only directories that passed the checks.
    dirs: HashMap<PathBuf, bool>,
}

impl<'a> Paths<'a> {
    fn new(root: &'a Path, root_canon: &'a Path) -> Self {
        Paths {
            root,
            root_canon,
            dirs: HashMap::new(),
        }
    }

    /// Reject absolute paths, `..`, and anything that resolves outside `root` through a
    /// symbolic link; say whether something is at `rel`.
    fn check(&mut self, rel: &Path) -> Result<Found, String> {
        if rel.as_os_str().is_empty()
            || rel.components().any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err(format!(
                "{}: refusing a path that is absolute or contains `..` or `.`",
                rel.display()
            ));
        }
        let mut sub = PathBuf::new();
        let n = rel.components().count();
        for (i, c) in rel.components().enumerate() {
            sub.push(c);
            let is_last = i + 1 == n;
            if !is_last {
                match self.dirs.get(&sub) {
                    Some(true) => continue,
                    Some(false) => return Ok(Found::Missing),
                    None => {}
                }
            }
            let p = fsx::join(self.root, &sub);
            let Ok(m) = fs::symlink_metadata(&p) else {
                // Does not exist yet: created inside root, and so is everything under it.
                if !is_last {
                    self.dirs.insert(sub, false);
                }
                return Ok(Found::Missing);
            };
            let link = m.file_type().is_symlink();
            let meta = if link {
                let target = fs::canonicalize(&p).map_err(|_| {
                    format!(
                        "{}: is a dangling symbolic link; remove it first",
                        rel.display()
                    )
                })?;
                if !target.starts_with(self.root_canon) {
                    return Err(format!(
                        "{}: refusing to write through a symbolic link that leads outside the project ({})",
                        rel.display(),
                        target.display()
                    ));
                }
                fs::metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?
            } else {
                m
            };
            if is_last {
                if !meta.is_file() {
                    return Err(format!(
                        "{}: exists and is not a regular file",
                        rel.display()
                    ));
                }
                return Ok(Found::Present { link });
            }
            if !meta.is_dir() {
                return Err(format!(
                    "{}: {} is not a directory",
                    rel.display(),
                    p.display()
                ));
            }
            self.dirs.insert(sub.clone(), true);
        }
        unreachable!("a checked path has a last component")
    }
}

/// Add imports to a Go file (several at once: one search for the marker, one copy).
fn go_imports<'a>(
    path: &Path,
    content: &'a str,
    specs: &[ImportSpec],
    module: &str,
    notes: &mut Vec<String>,
) -> Result<Cow<'a, str>, String> {
    let show = path.display();
    let (out, has_marker) =
        markers::go::imports::insert_go_imports(content, specs, module).map_err(|e| match e {
            MarkerError::Missing(m) => format!(
                "{show}: the marker `{m}` is missing; put it back as the last line of the import block"
            ),
            e => format!("{show}: {e}"),
        })?;
    // Only files that carry scaffold markers are expected to have an imports marker (main.go
    // and the suites); the webhook files never had one.
    if !has_marker && out != content && content.contains("+kubebuilder:scaffold:") {
        let note = format!(
            "{show}: the marker `// +kubebuilder:scaffold:imports` is missing, so new imports went into the first import block; put the marker back as the last line of that block"
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    Ok(out)
}

/// The text after `edit`; borrowed when the edit changes nothing, so that an unchanged file is
/// never copied.
fn apply_edit<'a>(
    path: &Path,
    content: &'a str,
    edit: &Edit,
    warnings: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<Cow<'a, str>, String> {
    let show = path.display();
    match edit {
        Edit::AboveMarker { marker, fragments } => {
            let token = markers::scaffold::comment_token(path)
                .ok_or_else(|| format!("{show}: no comment syntax known for this kind of file"))?;
            markers::scaffold::insert_above_for(path, content, token, marker, fragments).map_err(|e| match e {
                MarkerError::Missing(m) => format!(
                    "{show}: the marker `{m}` is missing; put it back where new code should be inserted"
                ),
                e => format!("{show}: {e}"),
            })
        }
        Edit::SortedAboveMarker { marker, line } => {
            let token = markers::scaffold::comment_token(path)
                .ok_or_else(|| format!("{show}: no comment syntax known for this kind of file"))?;
            markers::rust::insert_sorted_above(content, token, marker, line).map_err(|e| match e {
                MarkerError::Missing(m) => format!(
                    "{show}: the marker `{m}` is missing; put it back where new code should be inserted"
                ),
                e => format!("{show}: {e}"),
            })
        }
        Edit::GoImport { spec, module } => {
            go_imports(path, content, std::slice::from_ref(spec), module, notes)
        }
        Edit::Uncomment { block, required } => match markers::yaml::uncomment(content, block) {
            Some(c) => Ok(Cow::Owned(c)),
            None if *required => Err(format!(
                "{show}: expected to find this block (commented out or not) but did not:\n{}",
                indent_block(block)
            )),
            None => {
                warnings.push(format!(
                    "{show}: could not find the commented-out block below; enable it by hand:\n{}",
                    indent_block(block)
                ));
                Ok(Cow::Borrowed(content))
            }
        },
        Edit::EnableEntry { start, needs } => {
            let needs: Vec<&str> = needs.iter().map(String::as_str).collect();
            match markers::yaml::enable_entries(content, start, &needs) {
                Some(c) => Ok(Cow::Owned(c)),
                None => {
                    warnings.push(format!(
                        "{show}: could not find the `{start}` entry holding these lines, commented out or not; \
                         add or enable it by hand:\n{}",
                        indent_block(&needs.join("\n"))
                    ));
                    Ok(Cow::Borrowed(content))
                }
            }
        }
        Edit::AfterLine { anchor, text } => markers::text::insert_after_line(content, anchor, text)
            .ok_or_else(|| format!("{show}: the line `{anchor}` is missing; add it back")),
        Edit::BeforeLine { anchor, text } => {
            markers::text::insert_before_line(content, anchor, text)
                .ok_or_else(|| format!("{show}: the line `{anchor}` is missing; add it back"))
        }
        Edit::Append { text } => Ok(markers::text::append_once(content, text)),
        Edit::TypeTags { type_name, tags } => {
            markers::go::tags::tag_go_type(content, type_name, tags)
                .map(Cow::Owned)
                .ok_or_else(|| {
                    format!(
                        "{show}: the declaration `type {type_name} struct` is missing; add it back"
                    )
                })
        }
        Edit::AfterRecipe { target, text } => {
            markers::makefile::insert_after_recipe(content, target, text)
                .map(Cow::Owned)
                .ok_or_else(|| format!("{show}: the rule `{target}:` is missing; add it back"))
        }
    }
}

fn indent_block(b: &str) -> String {
    b.lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Compute, check and (unless dry-run) write the plan under `root`.
pub fn apply(root: &Path, plan: &Plan, opts: &ApplyOptions) -> Result<Report> {
    let root_canon = fs::canonicalize(root).map_err(|e| anyhow!("{}: {e}", root.display()))?;
    let mut staged: HashMap<PathBuf, Staged> = HashMap::new();
    let mut order: Vec<PathBuf> = vec![];
    let mut conflicts = vec![];
    let mut report = Report::default();
    let mut paths = Paths::new(root, &root_canon);

    // PROJECT is written whole, as a Create that overwrites; borrowed, not copied (it grows
    // with the project).
    enum Step<'a> {
        Op(&'a Op),
        Project(&'a str),
    }
    let project_path = PathBuf::from(crate::project::FILE);
    let steps = plan
        .ops
        .iter()
        .map(Step::Op)
        .chain(plan.project.as_deref().map(Step::Project));
    for step in steps {
        let path = match step {
            Step::Op(Op::Create { path, .. } | Op::Update { path, .. } | Op::Remove { path }) => {
                path.clone()
            }
            Step::Project(_) => project_path.clone(),
        };
        if !staged.contains_key(&path) {
            let found = match paths.check(&path) {
                Ok(f) => f,
                Err(e) => {
                    conflicts.push(e);
                    continue;
                }
            };
            let original = match found {
                // No need to try opening it.
                Found::Missing => None,
                Found::Present { .. } => {
                    match fsx::read_regular(&fsx::join(root, &path), MAX_FILE) {
                        Ok(b) => b,
                        Err(e) => {
                            conflicts.push(format!("{}: cannot read: {e}", path.display()));
                            continue;
                        }
                    }
                }
            };
            let present = original.is_some();
            // The text being edited starts as the file's; only what an edit changes is copied.
            let content = Content::Original;
            staged.insert(
                path.clone(),
                Staged {
                    original,
                    content,
                    present,
                    action: Action::Unchanged,
                    link: found == Found::Present { link: true },
                },
            );
            order.push(path.clone());
        }
        let st = staged.get_mut(&path).expect("staged above");
        let changed = if st.original.is_some() {
            Action::Update
        } else {
            Action::Create
        };
        let op = match step {
            Step::Op(op) => op,
            Step::Project(text) => {
                st.content = Content::Plan(text.as_bytes());
                st.present = true;
                st.action = changed;
                continue;
            }
        };
        match op {
            Op::Create {
                content, if_exists, ..
            } => {
                if !st.present {
                    st.content = Content::Plan(content.as_bytes());
                    st.present = true;
                    st.action = changed;
                    continue;
                }
                match if_exists {
                    IfExists::Error => conflicts.push(format!(
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
                    conflicts.push(format!(
                        "{}: must exist to be updated but is missing; restore it (for example from version control)",
                        path.display()
                    ));
                    continue;
                }
                let Ok(start) = std::str::from_utf8(st.bytes()) else {
                    conflicts.push(format!("{}: is not UTF-8 text", path.display()));
                    continue;
                };
                // Each edit reads the text and returns a new one; nothing is copied beforehand.
                let mut text: Option<String> = None;
                for edit in edits {
                    let current = text.as_deref().unwrap_or(start);
                    match apply_edit(
                        &path,
                        current,
                        edit,
                        &mut report.warnings,
                        &mut report.notes,
                    ) {
                        Ok(Cow::Owned(t)) => text = Some(t),
                        Ok(Cow::Borrowed(_)) => {}
                        Err(c) => conflicts.push(c),
                    }
                }
                if let Some(t) = text {
                    st.content = Content::Edited(t.into_bytes());
                }
                st.action = changed;
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(Conflicts(conflicts).into());
    }

    // PROJECT last, everything else in plan order.
    order.sort_by_key(|p| p == Path::new(crate::project::FILE));
    for path in &order {
        let st = &staged[path];
        let action = match st.action {
            Action::Update if st.original.as_deref() == Some(st.bytes()) => Action::Unchanged,
            a => a,
        };
        report.entries.push((path.clone(), action));
    }
    if opts.dry_run {
        if opts.contents {
            report.contents = order
                .iter()
                .map(|p| {
                    let st = &staged[p];
                    (p.clone(), st.present.then(|| st.bytes().to_vec()))
                })
                .collect();
        }
        return Ok(report);
    }

    let mut changes = vec![];
    for (path, action) in &report.entries {
        if !matches!(action, Action::Create | Action::Update | Action::Remove) {
            continue;
        }
        let st = staged.remove(path).expect("staged above");
        let rel = if st.link {
            resolve_final_link(root, &root_canon, path)?
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
    if !changes.is_empty() {
        Transaction::run(root, &changes, opts.fail_after_writes)?;
    }
    Ok(report)
}

/// A file the transaction writes (or removes).
struct Change {
    /// Relative to the root; when the plan's path is a symbolic link (to a file inside the
    /// project, as `Paths::check` ensures), the path of its target, so the link is kept.
    rel: PathBuf,
    /// None: remove the file.
    content: Option<Vec<u8>>,
    original: Option<Vec<u8>>,
}

/// The file a plan path names, following a final symbolic link.
fn resolve_final_link(root: &Path, root_canon: &Path, rel: &Path) -> Result<PathBuf> {
    let full = fsx::join(root, rel);
    match fs::symlink_metadata(&full) {
        Ok(m) if m.file_type().is_symlink() => {
            let target = fs::canonicalize(&full).map_err(|e| anyhow!("{}: {e}", rel.display()))?;
            target
                .strip_prefix(root_canon)
                .map(Path::to_path_buf)
                .map_err(|_| {
                    anyhow!(
                        "{}: refusing to write through a symbolic link that leads outside the project",
                        rel.display()
                    )
                })
        }
        _ => Ok(rel.to_path_buf()),
    }
}

/// The effective user id, read from the owner of /proc/self (Linux); None elsewhere.
fn effective_uid() -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fs::metadata("/proc/self").ok().map(|m| m.uid())
    }
    #[cfg(not(unix))]
    None
}

/// The writing half of [`apply`]: journal first, then the files, then commit. See
/// docs/architecture.md ("Transactions") and src/journal.rs for the on-disk protocol.
struct Transaction;

impl Transaction {
    fn run(root: &Path, changes: &[Change], fail_after: Option<usize>) -> Result<()> {
        let euid = effective_uid();
        let mut journal = Journal {
            pid: std::process::id(),
            ..Default::default()
        };
        // Directories seen to exist, so each is looked at once however many files it gets.
        let mut present: Vec<PathBuf> = vec![];
        for c in changes {
            let full = fsx::join(root, &c.rel);
            let mut missing = vec![];
            let mut d = full.parent().expect("a file path has a parent");
            while c.content.is_some() {
                let rel = d.strip_prefix(root).unwrap_or(d);
                if rel.as_os_str().is_empty()
                    || present.iter().any(|p| p.as_os_str() == d.as_os_str())
                    || journal
                        .dirs
                        .iter()
                        .any(|j| j.as_os_str() == rel.as_os_str())
                {
                    break;
                }
                if d.exists() {
                    present.push(d.to_path_buf());
                    break;
                }
                missing.push(rel.to_path_buf());
                d = d.parent().expect("root exists");
            }
            for m in missing.into_iter().rev() {
                if !journal.dirs.iter().any(|d| d.as_os_str() == m.as_os_str()) {
                    journal.dirs.push(m);
                }
            }
            let name = c
                .rel
                .file_name()
                .expect("a file path has a name")
                .to_string_lossy()
                .to_string();
            let tmp = || journal::side_name(&name, "tmp");
            let bak = || journal::side_name(&name, "bak");
            let path = c.rel.clone();
            journal.entries.push(match (&c.content, &c.original) {
                (None, _) => Entry::Remove { path, bak: bak() },
                (Some(_), None) => Entry::Create { path, tmp: tmp() },
                (Some(_), Some(_)) if keep_in_place(&full, euid) => Entry::InPlace {
                    path,
                    tmp: tmp(),
                    bak: bak(),
                },
                (Some(_), Some(_)) => Entry::Replace {
                    path,
                    tmp: tmp(),
                    bak: bak(),
                },
            });
        }
        journal.write(root)?;

        let forward = (|| -> Result<()> {
            for d in &journal.dirs {
                let full = fsx::join(root, d);
                fsx::create_dir(&full).map_err(|e| anyhow!("creating {}: {e}", full.display()))?;
            }
            // 1. Every new content under its temporary name; copies of in-place files aside.
            for (c, e) in changes.iter().zip(&journal.entries) {
                Self::stage_entry(root, c, e).map_err(|err| {
                    anyhow!("writing {}: {err}", fsx::join(root, &c.rel).display())
                })?;
            }
            // 2. Originals that get replaced keep a second name, durably, before any is replaced.
            let mut aside = vec![];
            for (c, e) in changes.iter().zip(&journal.entries) {
                if let Entry::Replace { bak, .. } = e {
                    let full = fsx::join(root, &c.rel);
                    let dir = full.parent().expect("a file path has a parent");
                    if fsx::hard_link(&full, &fsx::join(dir, Path::new(bak))).is_err() {
                        // No hard links here (or an injected failure): move it aside instead.
                        fsx::rename(&full, &fsx::join(dir, Path::new(bak)))
                            .map_err(|err| anyhow!("writing {}: {err}", full.display()))?;
                    }
                    if !aside
                        .iter()
                        .any(|d: &PathBuf| d.as_os_str() == dir.as_os_str())
                    {
                        aside.push(dir.to_path_buf());
                    }
                }
            }
            for d in &aside {
                fsx::sync_dir(d).map_err(|e| anyhow!("syncing {}: {e}", d.display()))?;
            }
            // 3. Switch: rename the new contents over the originals, remove, rewrite in place.
            for (i, (c, e)) in changes.iter().zip(&journal.entries).enumerate() {
                if fail_after.is_some_and(|n| i >= n) {
                    bail!("injected failure before writing {}", c.rel.display());
                }
                Self::switch_entry(root, c, e).map_err(|err| {
                    anyhow!("writing {}: {err}", fsx::join(root, &c.rel).display())
                })?;
            }
            // 4. Commit: make the new files and names durable, then flip the journal to "done".
            let files: Vec<PathBuf> = journal
                .entries
                .iter()
                .filter(|e| !matches!(e, Entry::Remove { .. }))
                .map(|e| fsx::join(root, e.path()))
                .collect();
            fsx::sync_all(root, &files, &touched_dirs(root, &journal))
                .map_err(|e| anyhow!("syncing the written files: {e}"))?;
            fsx::rename(&root.join(journal::JOURNAL), &root.join(journal::DONE))
                .map_err(|e| anyhow!("committing ({}): {e}", journal::JOURNAL))?;
            Ok(())
        })();
        if let Err(e) = forward {
            return Err(match journal.roll_back(root) {
                Ok(()) => {
                    fsx::set_rollback(true);
                    let _ = fsx::remove_file(&root.join(journal::JOURNAL));
                    let _ = fsx::sync_dir(root);
                    fsx::set_rollback(false);
                    e.context("writing the plan failed; every file was restored to its previous state")
                }
                Err(r) => e.context(format!(
                    "writing the plan failed AND restoring failed: {r}\n  \
                     the recovery journal {} is kept: the next opbuilder command in this project rolls the rest back \
                     (free some space or fix the permissions first)",
                    journal::JOURNAL
                )),
            });
        }
        // Committed. What is left is cleanup; if it fails, the next command finishes it.
        let cleanup = fsx::sync_dir(root)
            .map_err(anyhow::Error::from)
            .and_then(|()| journal.roll_forward(root))
            .and_then(|()| Ok(fsx::remove_file(&root.join(journal::DONE))?));
        if let Err(e) = cleanup {
            errln!(
                "warning: the files were written, but removing the backups failed ({e:#}); the next opbuilder command in this project removes them"
            );
        }
        Ok(())
    }

    fn stage_entry(root: &Path, c: &Change, e: &Entry) -> std::io::Result<()> {
        let full = fsx::join(root, &c.rel);
        let dir = full.parent().expect("a file path has a parent");
        let content = c.content.as_deref().unwrap_or_default();
        match e {
            Entry::Create { tmp, .. } => write_new(&fsx::join(dir, Path::new(tmp)), content, None),
            Entry::Replace { tmp, .. } => {
                let meta = fs::metadata(&full)?;
                write_new(&fsx::join(dir, Path::new(tmp)), content, Some(&meta))
            }
            Entry::Remove { .. } => Ok(()),
            Entry::InPlace { tmp, bak, .. } => {
                // The copy must be complete and durable before the file is overwritten.
                let meta = fs::metadata(&full)?;
                let tmp = fsx::join(dir, Path::new(tmp));
                write_new(&tmp, c.original.as_deref().unwrap_or_default(), Some(&meta))?;
                let f = fs::File::open(&tmp)?;
                fsx::sync_file(&f, &tmp)?;
                fsx::rename(&tmp, &fsx::join(dir, Path::new(bak)))?;
                fsx::sync_dir(dir)
            }
        }
    }

    fn switch_entry(root: &Path, c: &Change, e: &Entry) -> std::io::Result<()> {
        let full = fsx::join(root, &c.rel);
        let dir = full.parent().expect("a file path has a parent");
        let content = c.content.as_deref().unwrap_or_default();
        match e {
            Entry::Create { tmp, .. } | Entry::Replace { tmp, .. } => {
                fsx::rename(&fsx::join(dir, Path::new(tmp)), &full)
            }
            Entry::Remove { bak, .. } => fsx::rename(&full, &fsx::join(dir, Path::new(bak))),
            Entry::InPlace { .. } => {
                fsx::step("open", &full)?;
                let mut f = fs::OpenOptions::new().write(true).open(&full)?;
                fsx::write_all(&mut f, &full, content)?;
                f.set_len(content.len() as u64)
            }
        }
    }
}

/// Whether an existing file must be rewritten in place rather than replaced by a rename: when
/// it has other hard links, or belongs to another user (whom a new file could not be given).
fn keep_in_place(full: &Path, euid: Option<u32>) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(m) = fs::metadata(full) else {
            return false;
        };
        m.nlink() > 1 || euid.is_some_and(|u| u != 0 && u != m.uid())
    }
    #[cfg(not(unix))]
    {
        let _ = (full, euid);
        false
    }
}

/// The directories whose entries a transaction changes: each file's parent and each created
/// directory's parent.
fn touched_dirs(root: &Path, j: &Journal) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = vec![];
    let parents = j
        .entries
        .iter()
        .map(|e| fsx::join(root, e.path()))
        .chain(j.dirs.iter().map(|d| fsx::join(root, d)))
        .filter_map(|p| p.parent().map(Path::to_path_buf));
    for p in parents {
        if !out.iter().any(|o| o.as_os_str() == p.as_os_str()) {
            out.push(p);
        }
    }
    out
}

/// The mode of a file opbuilder creates (Kubebuilder's), whatever the umask.
const NEW_MODE: u32 = 0o644;

/// Whether the umask leaves [`NEW_MODE`] as it is, learnt from the first new file (the umask
/// is the process's and does not change while a command runs), so later files need no chmod.
#[cfg(unix)]
fn umask_keeps_new_mode(first: &fs::File) -> std::io::Result<bool> {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::atomic::{AtomicU8, Ordering};
    static KEEPS: AtomicU8 = AtomicU8::new(0); // 0 unknown, 1 yes, 2 no
    match KEEPS.load(Ordering::Relaxed) {
        1 => Ok(true),
        2 => Ok(false),
        _ => {
            let keeps = first.metadata()?.permissions().mode() & 0o7777 == NEW_MODE;
            KEEPS.store(if keeps { 1 } else { 2 }, Ordering::Relaxed);
            Ok(keeps)
        }
    }
}

/// Write `content` to the new file `tmp` (`O_CREAT|O_EXCL|O_NOFOLLOW`). Not synced here: until
/// the commit the journal can undo it whatever its content; the commit syncs it. Without
/// `like`, the file gets mode 0644 (Kubebuilder's); with it, that file's mode and owner.
fn write_new(tmp: &Path, content: &[u8], like: Option<&fs::Metadata>) -> std::io::Result<()> {
    let r = (|| {
        // A new file is created with its final mode; a replacement starts private, so the
        // text of a file only its owner may read is never readable by others.
        let mut f = fsx::create_new(tmp, if like.is_none() { NEW_MODE } else { 0o600 })?;
        fsx::write_all(&mut f, tmp, content)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::{MetadataExt, PermissionsExt};
            if like.is_some() || !umask_keeps_new_mode(&f)? {
                let mode = like.map_or(NEW_MODE, |m| m.permissions().mode() & 0o7777);
                f.set_permissions(fs::Permissions::from_mode(mode))?;
            }
            if let Some(m) = like {
                let mine = f.metadata()?;
                if mine.uid() != m.uid() || mine.gid() != m.gid() {
                    // Best effort: the group may not be ours to give.
                    let _ = std::os::unix::fs::fchown(&f, Some(m.uid()), Some(m.gid()));
                }
            }
        }
        #[cfg(not(unix))]
        let _ = like;
        Ok(())
    })();
    if r.is_err() {
        let _ = fs::remove_file(tmp);
    }
    r
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
