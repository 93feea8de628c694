//! `opbuilder delete api` and `opbuilder delete webhook`: what `create` made for a kind, taken
//! out again in one transaction; what could not be is said, with what to run next.

use crate::out::{errln, outln};
use crate::plan::{apply, ApplyOptions};
use crate::planning::delete::{DeleteApiArgs, DeleteWebhookArgs, GvkFlags};
use crate::plugins::delete::{self as plugins, Deletion};
use anyhow::Result;
use std::path::Path;

pub fn run_api(root: &Path, args: &DeleteApiArgs) -> Result<()> {
    let d = plugins::plan_delete_api(root, args)?;
    execute(root, &d, args.run.dry_run, "delete api", &args.res)
}

pub fn run_webhook(root: &Path, args: &DeleteWebhookArgs) -> Result<()> {
    let d = plugins::plan_delete_webhook(root, args)?;
    execute(root, &d, args.run.dry_run, "delete webhook", &args.res)
}

/// Apply the deletion (or print its plan), then say what stays to do.
fn execute(root: &Path, d: &Deletion, dry_run: bool, command: &str, res: &GvkFlags) -> Result<()> {
    let report = apply(
        root,
        &d.plan,
        &ApplyOptions {
            dry_run,
            prune_emptied_dirs: true,
            ..Default::default()
        },
    );
    crate::lock::release();
    let report = report?;
    if dry_run {
        outln!("opbuilder {command} --dry-run: nothing was written. The plan:");
    } else {
        outln!("Deleted from {}/{} {}:", res.group, res.version, res.kind);
    }
    report.print(dry_run);
    let would = if dry_run { "would be " } else { "" };
    if !d.forced.is_empty() {
        outln!("\nChanged since `create` wrote them, and {would}removed all the same (--force):");
        for p in &d.forced {
            outln!("  {}", p.display());
        }
    }
    if !d.kept.is_empty() {
        outln!("\nKept, because they changed since `create` wrote them (--force removes them):");
        for p in &d.kept {
            outln!("  {}", p.display());
        }
    }
    if !d.by_hand.is_empty() {
        outln!("\nNot found as `create` wrote it, so left for you to take out:");
        for b in &d.by_hand {
            outln!("  {}: {}", b.path.display(), b.what);
        }
    }
    if !d.uses.is_empty() {
        outln!("\nStill used (--force), so the project does not build until this code changes:");
        for u in &d.uses {
            outln!("  {}:{}: {}", u.path.display(), u.line, u.text);
        }
    }
    if !d.generated.is_empty() {
        outln!("\nGenerated files that still name it, until the commands below write them again:");
        for g in &d.generated {
            outln!("  {}  ({})", g.path, g.by);
        }
    }
    for n in &d.notes {
        errln!("note: {n}");
    }
    let next = crate::plan::Next {
        lead: "run".into(),
        run: d.next.clone(),
        note: None,
    };
    if !d.next.is_empty() {
        super::print_next(root, Some(&next), &[]);
    }
    Ok(())
}
