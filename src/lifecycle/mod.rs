//! The project's lifecycle after it is made: `alpha generate` scaffolds it again from PROJECT,
//! `alpha update` carries it to newer templates by a three-way merge, `alpha check` says whether
//! it is current. Generating replays PROJECT through the plugin chain, as the commands run it.

pub mod generate;
pub mod kubebuilder;
pub mod update;

use anyhow::{Context, Result};
use std::path::PathBuf;

/// A scratch directory under the system's temporary directory, removed when dropped: where
/// `alpha update` scaffolds its trees and `alpha generate --dry-run` its new project.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(what: &str) -> Result<Scratch> {
        Scratch::new_in(&std::env::temp_dir(), what)
    }

    /// One in `parent` (created if missing): where a Kubebuilder release is built, beside the
    /// cache it goes to (see [`kubebuilder`]).
    pub fn new_in(parent: &std::path::Path, what: &str) -> Result<Scratch> {
        let dir = parent.join(format!(
            "opbuilder-{what}-{}-{}",
            std::process::id(),
            crate::fsx::random_token()
        ));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
