//! `opbuilder alpha`: generate, update and check (src/lifecycle/ does the work).

use crate::lifecycle::generate::{self, GenerateArgs};
use crate::lifecycle::update::{self, CheckArgs, UpdateArgs};
use anyhow::Result;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum AlphaCommand {
    /// Scaffold the project again from its PROJECT file, with the current templates
    #[command(after_help = "Examples:
  opbuilder alpha generate --output-dir ../guestbook-regenerated
  opbuilder alpha generate --output-dir ../guestbook-regenerated --dry-run
  opbuilder alpha generate --input-dir ./guestbook --output-dir /tmp/guestbook
  opbuilder alpha generate --in-place")]
    Generate(GenerateArgs),
    /// Update the project to newer templates by a three-way merge, keeping your code
    #[command(after_help = "Examples:
  opbuilder alpha update --dry-run
  opbuilder alpha update
  opbuilder alpha update --from-version 0.2.0 --to-version 0.3.0
  opbuilder alpha update --from-version v4.5.0

The ancestor is the project scaffolded again by the release that made it
(PROJECT cliVersion, or --from-version; Kubebuilder records none before v4.6):
opbuilder's own templates of that release, or for a Kubebuilder release that
Kubebuilder, a `kubebuilder` on PATH that reports it, or one built once with Go
from the module proxy and kept in ~/.cache/opbuilder/kubebuilder. Files that
merge cleanly are written; files with conflicts get <<<<<<< yours / ======= /
>>>>>>> markers and the exit code is 1.")]
    Update(UpdateArgs),
    /// Exit 0 when the project is on the current templates, 1 (with the files) when not
    #[command(after_help = "Example (a CI step):\n  opbuilder alpha check")]
    Check(CheckArgs),
}

pub fn run(cwd_root: impl FnOnce() -> Result<PathBuf>, cmd: &AlphaCommand) -> Result<()> {
    match cmd {
        AlphaCommand::Generate(args) => generate::run(cwd_root, args),
        AlphaCommand::Update(args) => {
            let root = cwd_root()?;
            super::begin(&root, args.dry_run)?;
            update::run_update(&root, args)
        }
        AlphaCommand::Check(args) => update::run_check(&cwd_root()?, args),
    }
}
