//! The transaction that writes a staged plan: the journal first, then the directories and
//! files (temporary names, originals linked aside, renames), the commit, and the undo from the
//! journal when anything fails before the commit point.

use crate::fsx;
use crate::journal::{self, Entry, Journal};
use crate::out::errln;
use anyhow::{anyhow, bail, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// A file the transaction writes (or removes).
pub(super) struct Change {
    /// Relative to the root; when the plan's path is a symbolic link (to a file inside the
    /// project, as `Paths::check` ensures), the path of its target, so the link is kept.
    pub(super) rel: PathBuf,
    /// None: remove the file.
    pub(super) content: Option<Vec<u8>>,
    pub(super) original: Option<Vec<u8>>,
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

/// The writing half of [`super::apply`]: journal first, then the files, then commit. See
/// docs/architecture.md ("Transactions") and src/journal.rs for the on-disk protocol.
pub(super) struct Transaction<'a> {
    root: &'a Path,
    changes: &'a [Change],
    /// One entry per change, in the same order.
    journal: Journal,
}

impl<'a> Transaction<'a> {
    /// Write `changes` under `root` as one transaction: all of them, or (on any failure) none.
    pub(super) fn run(
        root: &'a Path,
        changes: &'a [Change],
        fail_after: Option<usize>,
    ) -> Result<()> {
        let t = Transaction {
            root,
            changes,
            journal: journal_for(root, changes),
        };
        t.journal.write(root)?;
        if let Err(e) = t.forward(fail_after) {
            return Err(t.undo(e));
        }
        t.clean_up();
        Ok(())
    }

    /// Every step up to the commit point, in order.
    fn forward(&self, fail_after: Option<usize>) -> Result<()> {
        self.create_dirs()?;
        self.stage()?;
        self.link_aside()?;
        self.switch(fail_after)?;
        self.commit()
    }

    /// The pairs of a change and its journal entry.
    fn entries(&self) -> impl Iterator<Item = (&Change, &Entry)> {
        self.changes.iter().zip(&self.journal.entries)
    }

    fn create_dirs(&self) -> Result<()> {
        for d in &self.journal.dirs {
            let full = fsx::join(self.root, d);
            fsx::create_dir(&full).map_err(|e| anyhow!("creating {}: {e}", full.display()))?;
        }
        Ok(())
    }

    /// 1. Every new content under its temporary name; copies of in-place files aside.
    fn stage(&self) -> Result<()> {
        for (c, e) in self.entries() {
            stage_entry(self.root, c, e).map_err(|err| {
                anyhow!("writing {}: {err}", fsx::join(self.root, &c.rel).display())
            })?;
        }
        Ok(())
    }

    /// 2. Originals that get replaced keep a second name, durably, before any is replaced.
    fn link_aside(&self) -> Result<()> {
        let mut aside = vec![];
        for (c, e) in self.entries() {
            if let Entry::Replace { bak, .. } = e {
                let full = fsx::join(self.root, &c.rel);
                let dir = fsx::parent(&full).expect("a file path has a parent");
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
        Ok(())
    }

    /// 3. Switch: rename the new contents over the originals, remove, rewrite in place.
    fn switch(&self, fail_after: Option<usize>) -> Result<()> {
        for (i, (c, e)) in self.entries().enumerate() {
            if fail_after.is_some_and(|n| i >= n) {
                bail!("injected failure before writing {}", c.rel.display());
            }
            switch_entry(self.root, c, e).map_err(|err| {
                anyhow!("writing {}: {err}", fsx::join(self.root, &c.rel).display())
            })?;
        }
        Ok(())
    }

    /// 4. Commit: make the new files and names durable, then flip the journal to "done".
    fn commit(&self) -> Result<()> {
        let (root, journal) = (self.root, &self.journal);
        let files: Vec<PathBuf> = journal
            .entries
            .iter()
            .filter(|e| !matches!(e, Entry::Remove { .. }))
            .map(|e| fsx::join(root, e.path()))
            .collect();
        fsx::sync_all(root, &files, &touched_dirs(root, journal))
            .map_err(|e| anyhow!("syncing the written files: {e}"))?;
        fsx::rename(&root.join(journal::JOURNAL), &root.join(journal::DONE))
            .map_err(|e| anyhow!("committing ({}): {e}", journal::JOURNAL))?;
        Ok(())
    }

    /// After a failure before the commit point: roll back from the journal, and say how it went.
    fn undo(&self, e: anyhow::Error) -> anyhow::Error {
        let root = self.root;
        match self.journal.roll_back(root) {
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
        }
    }

    /// Committed. What is left is cleanup; if it fails, the next command finishes it.
    fn clean_up(&self) {
        let root = self.root;
        let cleanup = fsx::sync_dir(root)
            .map_err(anyhow::Error::from)
            .and_then(|()| self.journal.roll_forward(root))
            .and_then(|()| Ok(fsx::remove_file(&root.join(journal::DONE))?));
        if let Err(e) = cleanup {
            errln!(
                "warning: the files were written, but removing the backups failed ({e:#}); the next opbuilder command in this project removes them"
            );
        }
    }
}

/// The journal of a transaction, before any of it happens: the directories it creates and, for
/// each change, how it is written (created, replaced, removed, rewritten in place) with the
/// temporary and backup names it uses.
fn journal_for(root: &Path, changes: &[Change]) -> Journal {
    let euid = effective_uid();
    let mut journal = Journal {
        pid: std::process::id(),
        ..Default::default()
    };
    // Directories seen to exist, so each is looked at once however many files it gets.
    let mut present: Vec<PathBuf> = vec![];
    for c in changes {
        let full = fsx::join(root, &c.rel);
        if c.content.is_some() {
            for m in missing_dirs(root, &full, &mut present, &journal.dirs) {
                if !journal.dirs.iter().any(|d| d.as_os_str() == m.as_os_str()) {
                    journal.dirs.push(m);
                }
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
    journal
}

/// The directories (relative to `root`) that must be created for the file `full`, outermost
/// first; `present` remembers the directories found to exist, `planned` those already to be
/// created.
fn missing_dirs(
    root: &Path,
    full: &Path,
    present: &mut Vec<PathBuf>,
    planned: &[PathBuf],
) -> Vec<PathBuf> {
    let mut missing = vec![];
    let mut d = fsx::parent(full).expect("a file path has a parent");
    loop {
        let rel = d.strip_prefix(root).unwrap_or(d);
        if rel.as_os_str().is_empty()
            || present.iter().any(|p| p.as_os_str() == d.as_os_str())
            || planned.iter().any(|j| j.as_os_str() == rel.as_os_str())
        {
            break;
        }
        if d.exists() {
            present.push(d.to_path_buf());
            break;
        }
        missing.push(rel.to_path_buf());
        d = fsx::parent(d).expect("root exists");
    }
    missing.reverse();
    missing
}

fn stage_entry(root: &Path, c: &Change, e: &Entry) -> std::io::Result<()> {
    let full = fsx::join(root, &c.rel);
    let dir = fsx::parent(&full).expect("a file path has a parent");
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
    let dir = fsx::parent(&full).expect("a file path has a parent");
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
        .filter_map(|p| fsx::parent(&p).map(Path::to_path_buf));
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
