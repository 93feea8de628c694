//! The commands: each turns its request into a plan through the plugin chain, applies it
//! ([`execute`]) and reports. They parse and dispatch; the planning is in src/plugins/.

pub mod alpha;
pub mod api;
pub mod edit;
pub mod init;
pub mod man;
pub mod webhook;

use crate::journal::{self, Recovery};
use crate::out::{errln, outln};
use crate::plan::{apply, ApplyOptions, Plan};
use crate::planning::flags::{ResourceFlags, RunFlags};
use crate::planning::release::{self, Templates};
use anyhow::Result;
use std::collections::BTreeSet;
use std::path::Path;

/// Apply `plan`; on a dry run print the plan and return false, else print `heading` and what
/// was written and return true. `leave_out_essential`: `--allow-missing-markers`.
pub fn execute(
    root: &Path,
    plan: &Plan,
    dry_run: bool,
    leave_out_essential: bool,
    command: &str,
    heading: &str,
) -> Result<bool> {
    let report = apply(
        root,
        plan,
        &ApplyOptions {
            dry_run,
            leave_out_essential,
            ..Default::default()
        },
    );
    // The transaction is over (committed, rolled back, or never started): let the next
    // opbuilder in. Post-steps (go mod tidy, make) run unlocked.
    crate::lock::release();
    let report = report?;
    if dry_run {
        outln!("opbuilder {command} --dry-run: nothing was written. The plan:");
        report.print(true);
        return Ok(false);
    }
    outln!("{heading}");
    report.print(false);
    Ok(true)
}

/// Apply the plan of a `create` command, heading its report with `verb` and the resource.
/// `None` after a dry run; else what the project imported before the command, when the
/// post-steps are to run (to tell whether `go mod tidy` can change anything).
pub fn execute_create(
    root: &Path,
    plan: &Plan,
    run: &RunFlags,
    command: &str,
    res: &ResourceFlags,
    verb: &str,
) -> Result<Option<Option<BTreeSet<String>>>> {
    let post_steps = !run.skip_post_steps && !run.dry_run;
    let imports_before = post_steps.then(|| crate::planning::post::project_imports(root));
    let heading = format!("{verb} {}/{} {}:", res.group, res.version, res.kind);
    let leave_out = run.allow_missing_markers;
    Ok(execute(root, plan, run.dry_run, leave_out, command, &heading)?.then_some(imports_before))
}

/// Whether `plan` writes Go code. Without it (a chain of external plugins alone), the Go
/// post-steps and hints have nothing to work on.
pub fn writes_go(plan: &Plan) -> bool {
    plan.ops.iter().any(|op| match op {
        crate::plan::Op::Create { path, .. }
        | crate::plan::Op::Update { path, .. }
        | crate::plan::Op::Remove { path } => path.extension().is_some_and(|e| e == "go"),
    })
}

/// Run `f`, a command that extends the project at `root`, with the templates the project's
/// pins need ([`crate::planning::release`]): the current ones, or an earlier release's, which
/// a note names.
pub fn with_project_templates(root: &Path, f: impl FnOnce() -> Result<()>) -> Result<()> {
    match release::for_project(root) {
        Templates::Current => f(),
        Templates::CurrentNewerThanPins { warning } => {
            errln!("{} {warning}", crate::term::label("warning"));
            f()
        }
        Templates::Release { version, note } => {
            errln!("{} {note}", crate::term::label("note"));
            crate::releases::with(&version, f).map_err(|e| {
                if e.chain().any(|c| c.is::<crate::templates::MissingTemplate>()) {
                    e.context(format!(
                        "this needs newer templates than opbuilder {version}'s, which this project's pins call                          for: run `opbuilder alpha update` first"
                    ))
                } else {
                    e
                }
            })
        }
    }
}

/// Start a writing command: take the project lock (held until the end of [`execute`]'s apply),
/// then roll back a transaction that an earlier opbuilder left unfinished. A dry run only
/// reports such a transaction, and goes on without the lock where it cannot open the directory.
pub fn begin(root: &Path, dry_run: bool) -> Result<()> {
    if let Err(e) = crate::lock::acquire(root) {
        if !(dry_run && crate::lock::is_open_error(&e)) {
            return Err(e);
        }
    }
    let list = |files: &[std::path::PathBuf]| {
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match journal::recover(root, dry_run)? {
        Recovery::Nothing => {}
        Recovery::RolledBack { pid, files } if dry_run => errln!(
            "note: an opbuilder (pid {pid}) was interrupted in this project; the next command that writes will roll its changes back first ({}). The plan below is computed from the files as they are now.",
            list(&files)
        ),
        Recovery::RolledBack { pid, files } => errln!(
            "note: rolled back a transaction that an interrupted opbuilder (pid {pid}) left unfinished; these files are as they were before it: {}",
            list(&files)
        ),
        Recovery::Finished { pid } if dry_run => errln!(
            "note: an opbuilder (pid {pid}) finished its changes but not its cleanup; the next command that writes will remove its backup files"
        ),
        Recovery::Finished { pid } => errln!(
            "note: removed the backup files of a finished transaction (pid {pid}) that was interrupted during cleanup"
        ),
    }
    Ok(())
}
