//! `opbuilder edit`: change project-wide settings after init.

use crate::out::outln;
use crate::planning::edit::EditArgs;
use crate::plugins;
use anyhow::Result;
use std::path::Path;

pub fn run(root: &Path, args: &EditArgs) -> Result<()> {
    let (plan, notes) = plugins::plan_edit(root, args)?;
    if !super::execute(
        root,
        &plan,
        args.dry_run,
        false,
        "edit",
        "Edited the project:",
    )? {
        return Ok(());
    }
    for n in notes {
        outln!("\n{n}");
    }
    Ok(())
}
