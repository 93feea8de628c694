//! The recovery journal: what a transaction is about to touch and how to undo it, made durable
//! before the first write, so that a transaction cut short (kill -9, power loss, a rollback
//! that could not finish) is rolled back by the next opbuilder command in the project.
//!
//! Format (`.opbuilder-journal` in the project root; UTF-8 lines, tab-separated fields, `%`,
//! tab, CR and LF in paths written as `%25`, `%09`, `%0D`, `%0A`):
//!
//! ```text
//! opbuilder-journal 1
//! pid     <pid of the writer>
//! dir     <dir>                          a directory the transaction creates
//! create  <path>  <tmp>                  a new file, written as <tmp> then renamed to <path>
//! replace <path>  <tmp>  <bak>           the original is hard-linked to <bak>, <tmp> renamed over it
//! remove  <path>  <bak>                  the original is renamed to <bak>
//! inplace <path>  <tmp>  <bak>           hard-linked or foreign-owned file rewritten in place;
//!                                        <bak> is a copy, written as <tmp> then renamed
//! ```
//!
//! Paths are relative to the project root; `<tmp>` and `<bak>` are names in the same directory
//! as `<path>`, chosen at random before the journal is written. The journal is written to a
//! temporary name, fsynced and renamed into place, so it is either complete or absent.
//!
//! Commit renames it to `.opbuilder-journal.done`; then the backups are deleted and the `.done`
//! file removed. Recovery rolls a `.opbuilder-journal` back (every step is a rename or a delete,
//! so it needs no free space, except `inplace`, which copies the backup into the file's own
//! blocks) and rolls a `.done` forward (deletes what is left of the backups). Both are
//! idempotent, so a recovery that is itself interrupted is simply run again.

use crate::fsx;
use anyhow::{anyhow, bail, Context, Result};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub const JOURNAL: &str = ".opbuilder-journal";
pub const DONE: &str = ".opbuilder-journal.done";
const JOURNAL_TMP_PREFIX: &str = ".opbuilder-journal.";
const HEADER: &str = "opbuilder-journal 1";
/// A journal is small (a line per file); anything bigger is not ours.
const MAX_JOURNAL: u64 = 4 << 20;

#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Create {
        path: PathBuf,
        tmp: String,
    },
    Replace {
        path: PathBuf,
        tmp: String,
        bak: String,
    },
    Remove {
        path: PathBuf,
        bak: String,
    },
    InPlace {
        path: PathBuf,
        tmp: String,
        bak: String,
    },
}

impl Entry {
    pub fn path(&self) -> &Path {
        match self {
            Entry::Create { path, .. }
            | Entry::Replace { path, .. }
            | Entry::Remove { path, .. }
            | Entry::InPlace { path, .. } => path,
        }
    }

    fn tmp(&self) -> Option<&str> {
        match self {
            Entry::Create { tmp, .. } | Entry::Replace { tmp, .. } | Entry::InPlace { tmp, .. } => {
                Some(tmp)
            }
            Entry::Remove { .. } => None,
        }
    }

    fn bak(&self) -> Option<&str> {
        match self {
            Entry::Replace { bak, .. } | Entry::Remove { bak, .. } | Entry::InPlace { bak, .. } => {
                Some(bak)
            }
            Entry::Create { .. } => None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Journal {
    pub pid: u32,
    pub dirs: Vec<PathBuf>,
    pub entries: Vec<Entry>,
}

/// A name for a temporary or backup file next to `name`: hidden, unpredictable.
pub fn side_name(name: &str, what: &str) -> String {
    format!(".{name}.opbuilder-{}.{what}", fsx::random_token())
}

/// Append `p` to `out` with `%`, tab, CR and LF escaped (a journal line is tab-separated).
fn esc_into(out: &mut String, p: &Path) -> Result<()> {
    let s = p
        .to_str()
        .ok_or_else(|| anyhow!("{}: opbuilder writes only UTF-8 paths", p.display()))?;
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\t' => out.push_str("%09"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
    Ok(())
}

fn unesc(s: &str) -> String {
    s.replace("%0A", "\n")
        .replace("%0D", "\r")
        .replace("%09", "\t")
        .replace("%25", "%")
}

impl Journal {
    pub fn to_text(&self) -> Result<String> {
        // One string, written in place: a line per entry through format! cost the journal
        // twice its length in allocations (issue 50).
        let mut out = String::with_capacity(64 + 96 * (self.dirs.len() + self.entries.len()));
        out.push_str(HEADER);
        out.push_str("\npid\t");
        out.push_str(&self.pid.to_string());
        out.push('\n');
        for d in &self.dirs {
            out.push_str("dir\t");
            esc_into(&mut out, d)?;
            out.push('\n');
        }
        for e in &self.entries {
            let (word, path, names): (&str, &Path, [&str; 2]) = match e {
                Entry::Create { path, tmp } => ("create", path, [tmp, ""]),
                Entry::Replace { path, tmp, bak } => ("replace", path, [tmp, bak]),
                Entry::Remove { path, bak } => ("remove", path, [bak, ""]),
                Entry::InPlace { path, tmp, bak } => ("inplace", path, [tmp, bak]),
            };
            out.push_str(word);
            out.push('\t');
            esc_into(&mut out, path)?;
            for name in names.iter().filter(|n| !n.is_empty()) {
                out.push('\t');
                out.push_str(name);
            }
            out.push('\n');
        }
        Ok(out)
    }

    pub fn parse(text: &str) -> Result<Journal> {
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            bail!("not an opbuilder journal (the first line is not `{HEADER}`)");
        }
        let mut j = Journal::default();
        for (n, line) in lines.enumerate() {
            let f: Vec<&str> = line.split('\t').collect();
            let bad = || anyhow!("line {}: cannot parse {line:?}", n + 2);
            let name_ok = |s: &str| !s.is_empty() && !s.contains('/') && s.starts_with('.');
            let p = |i: usize| -> Result<PathBuf> {
                let s = unesc(f.get(i).ok_or_else(bad)?);
                let p = PathBuf::from(&s);
                if s.is_empty()
                    || p.components()
                        .any(|c| !matches!(c, std::path::Component::Normal(_)))
                {
                    return Err(bad());
                }
                Ok(p)
            };
            let name = |i: usize| -> Result<String> {
                let s = f.get(i).ok_or_else(bad)?;
                if name_ok(s) {
                    Ok(s.to_string())
                } else {
                    Err(bad())
                }
            };
            match (f[0], f.len()) {
                ("pid", 2) => j.pid = f[1].parse().map_err(|_| bad())?,
                ("dir", 2) => j.dirs.push(p(1)?),
                ("create", 3) => j.entries.push(Entry::Create {
                    path: p(1)?,
                    tmp: name(2)?,
                }),
                ("replace", 4) => j.entries.push(Entry::Replace {
                    path: p(1)?,
                    tmp: name(2)?,
                    bak: name(3)?,
                }),
                ("remove", 3) => j.entries.push(Entry::Remove {
                    path: p(1)?,
                    bak: name(2)?,
                }),
                ("inplace", 4) => j.entries.push(Entry::InPlace {
                    path: p(1)?,
                    tmp: name(2)?,
                    bak: name(3)?,
                }),
                _ => return Err(bad()),
            }
        }
        Ok(j)
    }

    /// Write the journal durably: temporary name, fsync, rename, fsync the root.
    pub fn write(&self, root: &Path) -> Result<()> {
        let text = self.to_text()?;
        let tmp = root.join(format!("{JOURNAL_TMP_PREFIX}{}.tmp", fsx::random_token()));
        let r = (|| -> io::Result<()> {
            let mut f = fsx::create_new(&tmp, 0o644)?;
            fsx::write_all(&mut f, &tmp, text.as_bytes())?;
            fsx::sync_file(&f, &tmp)?;
            drop(f);
            fsx::rename(&tmp, &root.join(JOURNAL))?;
            fsx::sync_dir(root)
        })();
        if let Err(e) = r {
            let _ = fs::remove_file(&tmp);
            let _ = fs::remove_file(root.join(JOURNAL));
            // The directory is what the user can act on; the journal is ours.
            let dir = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            return Err(anyhow!(
                "cannot write in the project directory {}: {e} (the first file opbuilder writes there is its \
                 recovery journal, {JOURNAL}); nothing was written. Make the directory writable for you \
                 (for example `chmod u+w {}`) and run the command again",
                dir.display(),
                dir.display()
            ));
        }
        Ok(())
    }

    fn side(&self, root: &Path, e: &Entry, name: &str) -> PathBuf {
        let full = fsx::join(root, e.path());
        fsx::parent(&full)
            .expect("a file path has a parent")
            .join(name)
    }

    /// Undo everything the journal describes that has happened, newest first. Idempotent.
    pub fn roll_back(&self, root: &Path) -> Result<()> {
        fsx::set_rollback(true);
        let r = self.roll_back_inner(root);
        fsx::set_rollback(false);
        r
    }

    fn roll_back_inner(&self, root: &Path) -> Result<()> {
        let mut errors = vec![];
        let mut note = |r: io::Result<()>, what: String| {
            if let Err(e) = r {
                if e.kind() != io::ErrorKind::NotFound {
                    errors.push(format!("{what}: {e}"));
                }
            }
        };
        let mut dirs_touched: Vec<PathBuf> = vec![];
        for e in self.entries.iter().rev() {
            let full = fsx::join(root, e.path());
            if let Some(dir) = full.parent() {
                if !dirs_touched.iter().any(|d| d == dir) {
                    dirs_touched.push(dir.to_path_buf());
                }
            }
            if let Some(tmp) = e.tmp() {
                let t = self.side(root, e, tmp);
                note(remove_if_exists(&t), format!("removing {}", t.display()));
            }
            match e {
                Entry::Create { .. } => {
                    note(
                        remove_if_exists(&full),
                        format!("removing {}", full.display()),
                    );
                }
                Entry::Replace { bak, .. } | Entry::Remove { bak, .. } => {
                    let b = self.side(root, e, bak);
                    note(
                        restore_renamed(&b, &full),
                        format!("restoring {}", full.display()),
                    );
                }
                Entry::InPlace { bak, .. } => {
                    let b = self.side(root, e, bak);
                    note(
                        restore_in_place(&b, &full),
                        format!("restoring {}", full.display()),
                    );
                }
            }
        }
        for d in self.dirs.iter().rev() {
            let full = fsx::join(root, d);
            fsx::set_rollback(true);
            let r = fsx::step("rmdir", &full).and_then(|()| fs::remove_dir(&full));
            note(r, format!("removing the directory {}", full.display()));
            if let Some(p) = full.parent() {
                if !dirs_touched.iter().any(|x| x == p) {
                    dirs_touched.push(p.to_path_buf());
                }
            }
        }
        for d in &dirs_touched {
            if d.exists() {
                note(fsx::sync_dir(d), format!("syncing {}", d.display()));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(anyhow!(errors.join("; ")))
        }
    }

    /// Finish a committed transaction: delete what is left of its temporary and backup files.
    pub fn roll_forward(&self, root: &Path) -> Result<()> {
        let mut errors = vec![];
        for e in &self.entries {
            for name in [e.tmp(), e.bak()].into_iter().flatten() {
                let p = self.side(root, e, name);
                if let Err(err) = remove_if_exists(&p) {
                    errors.push(format!("removing {}: {err}", p.display()));
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(anyhow!(errors.join("; ")))
        }
    }
}

fn remove_if_exists(p: &Path) -> io::Result<()> {
    match fs::symlink_metadata(p) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(_) => fsx::remove_file(p),
    }
}

/// Put a renamed or linked-aside original back: a rename, so no new space is needed.
fn restore_renamed(bak: &Path, full: &Path) -> io::Result<()> {
    let Ok(b) = fs::symlink_metadata(bak) else {
        return Ok(()); // never moved aside: the original is where it was
    };
    #[cfg(unix)]
    if let Ok(f) = fs::symlink_metadata(full) {
        use std::os::unix::fs::MetadataExt;
        if f.ino() == b.ino() && f.dev() == b.dev() {
            // Linked aside but not replaced yet: the original is still in place.
            return fsx::remove_file(bak);
        }
    }
    let _ = b;
    fsx::rename(bak, full)
}

/// Copy a backup back into a file rewritten in place (keeps its inode, links and owner).
fn restore_in_place(bak: &Path, full: &Path) -> io::Result<()> {
    let Some(bytes) = fsx::read_regular(bak, 1 << 30)? else {
        return Ok(()); // the backup was never completed: the file was not touched
    };
    fsx::step("open", full)?;
    let mut f = fs::OpenOptions::new().write(true).open(full)?;
    fsx::write_all(&mut f, full, &bytes)?;
    f.set_len(bytes.len() as u64)?;
    fsx::sync_file(&f, full)?;
    drop(f);
    fsx::remove_file(bak)
}

/// What [`recover`] found and did.
#[derive(Debug, PartialEq)]
pub enum Recovery {
    Nothing,
    /// An interrupted transaction was rolled back (or, on a dry run, would be).
    RolledBack {
        pid: u32,
        files: Vec<PathBuf>,
    },
    /// A committed transaction's leftovers were cleaned up.
    Finished {
        pid: u32,
    },
}

/// Look for a journal in `root`; roll an interrupted transaction back (or, when `dry_run`, only
/// report it). Call with the project lock held.
pub fn recover(root: &Path, dry_run: bool) -> Result<Recovery> {
    let read = |name: &str| -> Result<Option<Journal>> {
        let p = root.join(name);
        match fsx::read_text(&p, MAX_JOURNAL) {
            Ok(None) => Ok(None),
            Ok(Some(t)) => Journal::parse(&t)
                .map(Some)
                .with_context(|| format!("reading the recovery journal {}", p.display())),
            Err(e) => Err(anyhow!("reading the recovery journal {}: {e}", p.display())),
        }
    };
    let result = if let Some(j) = read(JOURNAL)? {
        let files = j.entries.iter().map(|e| e.path().to_path_buf()).collect();
        if !dry_run {
            j.roll_back(root).map_err(|e| {
                anyhow!(
                    "an interrupted opbuilder transaction (pid {}) could not be rolled back: {e}\n  \
                     the journal {JOURNAL} is kept; fix the cause (free space, permissions) and run the command again",
                    j.pid
                )
            })?;
            fsx::remove_file(&root.join(JOURNAL)).with_context(|| format!("removing {JOURNAL}"))?;
            fsx::sync_dir(root)?;
        }
        Recovery::RolledBack { pid: j.pid, files }
    } else if let Some(j) = read(DONE)? {
        if !dry_run {
            j.roll_forward(root)?;
            fsx::remove_file(&root.join(DONE)).with_context(|| format!("removing {DONE}"))?;
        }
        Recovery::Finished { pid: j.pid }
    } else {
        Recovery::Nothing
    };
    if !dry_run {
        // A journal that never got renamed into place: nothing was written after it.
        if let Ok(rd) = fs::read_dir(root) {
            for e in rd.flatten() {
                let n = e.file_name();
                let n = n.to_string_lossy();
                if n.starts_with(JOURNAL_TMP_PREFIX) && n.ends_with(".tmp") {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_that_cannot_be_written_names_the_directory() {
        // A project "directory" that is a file: writing in it fails for root too.
        let t = tempfile::tempdir().unwrap();
        let not_a_dir = t.path().join("guestbook");
        fs::write(&not_a_dir, "").unwrap();
        let j = Journal {
            pid: 1,
            dirs: vec![],
            entries: vec![],
        };
        let e = j.write(&not_a_dir).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "cannot write in the project directory {}:",
                not_a_dir.display()
            )) && e.contains("nothing was written")
                && e.contains("chmod u+w"),
            "{e}"
        );
    }

    #[test]
    fn journal_text_round_trips() {
        let j = Journal {
            pid: 42,
            dirs: vec!["api/v1".into()],
            entries: vec![
                Entry::Create {
                    path: "api/v1/a\tb%c.go".into(),
                    tmp: ".a.opbuilder-1.tmp".into(),
                },
                Entry::Replace {
                    path: "cmd/main.go".into(),
                    tmp: ".main.go.opbuilder-2.tmp".into(),
                    bak: ".main.go.opbuilder-3.bak".into(),
                },
                Entry::Remove {
                    path: "x".into(),
                    bak: ".x.opbuilder-4.bak".into(),
                },
                Entry::InPlace {
                    path: "y\nz".into(),
                    tmp: ".y.opbuilder-5.tmp".into(),
                    bak: ".y.opbuilder-6.bak".into(),
                },
            ],
        };
        assert_eq!(Journal::parse(&j.to_text().unwrap()).unwrap(), j);
        assert!(Journal::parse("opbuilder-journal 1\ncreate\t../x\t.t\n").is_err());
        assert!(Journal::parse("opbuilder-journal 1\ncreate\tx\t../t\n").is_err());
        assert!(Journal::parse("something else\n").is_err());
    }
}
