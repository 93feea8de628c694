//! Finding and loading PROJECT: the nearest one from the current directory up, read with the
//! fast reader when it has the usual shape, else with serde_yaml, then checked.

use super::fast;
use super::model::{Project, FILE};
use super::version;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The root of the project the current directory is in: the nearest directory, from `cwd`
/// upward, that holds a PROJECT file (as git and cargo find theirs). Returned relative to
/// `cwd` (`.`, `..`, `../..`, ...) so that messages stay short.
pub fn find_root(cwd: &Path) -> Result<PathBuf> {
    for (up, dir) in cwd.ancestors().enumerate() {
        if dir.join(FILE).is_file() {
            if up == 0 {
                return Ok(PathBuf::from("."));
            }
            return Ok(std::iter::repeat_n("..", up).collect());
        }
    }
    bail!(
        "no {FILE} file in {} or any directory above it, so this is not an opbuilder (or Kubebuilder) project.\n  \
         Run the command inside a project (any subdirectory works), or create one in an empty directory with:\n    \
         opbuilder init --domain example.com --repo example.com/guestbook",
        cwd.display()
    )
}

impl Project {
    /// Load and check PROJECT from `root`. A missing file means "not a project".
    pub fn load(root: &Path) -> Result<Project> {
        Ok(Self::load_with_text(root)?.0)
    }

    /// [`Self::load`], also giving the text read.
    pub fn load_with_text(root: &Path) -> Result<(Project, String)> {
        let path = root.join(FILE);
        let text = match crate::fsx::read_text(&path, 4 << 20) {
            Ok(Some(t)) => t,
            Ok(None) => bail!(
                "no PROJECT file in {}: run this command in a project made by `opbuilder init` (or `kubebuilder init`)",
                root.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let p = Self::parse(&text)?;
        Ok((p, text))
    }

    pub fn parse(text: &str) -> Result<Project> {
        let p = match fast::parse(text) {
            Some(p) => p,
            None => Self::parse_yaml(text)?,
        };
        version::check(&p)?;
        Ok(p)
    }

    /// Read with serde_yaml: any YAML the format allows.
    fn parse_yaml(text: &str) -> Result<Project> {
        serde_yaml::from_str(text).map_err(|e| {
            anyhow::anyhow!("PROJECT is not valid: {e}\n  fix the YAML by hand, or restore it from version control")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_project_file_that_is_a_fifo_is_refused_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(t.path().join(FILE))
            .status()
            .unwrap()
            .success());
        let e = Project::load(t.path()).unwrap_err();
        assert!(format!("{e:#}").contains("not a regular file"), "{e:#}");
    }
}
