//! Where a plan may write: relative paths inside the project, through symbolic links only to
//! files inside it, under directories that are directories.

use crate::fsx;
use anyhow::{anyhow, Result};
use std::fs;
use std::path::{Component, Path, PathBuf};

/// What [`Paths::check`] found at a plan path.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Found {
    /// Nothing there, and nothing to read: the file or one of its directories does not exist.
    Missing,
    /// Something is there (a regular file, or a symbolic link to one inside the project).
    Present { link: bool },
}

/// Checks plan paths against the tree, remembering each directory it has looked at, so a plan
/// of many files in few directories stats each directory once (the project lock keeps the tree
/// still while a command runs).
pub(super) struct Paths<'a> {
    root: &'a Path,
    root_canon: &'a Path,
    /// Directory (relative) -> whether it exists; only directories that passed the checks.
    dirs: crate::fsx::PathMap<bool>,
}

impl<'a> Paths<'a> {
    pub(super) fn new(root: &'a Path, root_canon: &'a Path) -> Self {
        Paths {
            root,
            root_canon,
            dirs: crate::fsx::PathMap::default(),
        }
    }

    /// Reject absolute paths, `..`, and anything that resolves outside `root` through a
    /// symbolic link; say whether something is at `rel`.
    pub(super) fn check(&mut self, rel: &Path) -> Result<Found, String> {
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

/// The file a plan path names, following a final symbolic link.
pub(super) fn resolve_final_link(root: &Path, root_canon: &Path, rel: &Path) -> Result<PathBuf> {
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
