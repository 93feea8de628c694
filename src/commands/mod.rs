//! The commands: each turns its request into a plan through the plugin chain, applies it
//! ([`execute`]) and reports. They parse and dispatch; the planning is in src/plugins/.

pub mod alpha;
pub mod api;
pub mod delete;
pub mod edit;
pub mod init;
pub mod man;
pub mod webhook;

use crate::journal::{self, Recovery};
use crate::out::{errln, outln};
use crate::plan::{apply, ApplyOptions, Next, Plan};
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

/// A post-step that did not run: its command line and the flag that skipped it.
pub type Skipped = (String, &'static str);

/// The lines of what comes next: the plugin's hint (`next`) with, before its commands, the
/// `cd` to the project root when the user works elsewhere and the post-steps that did not run
/// (`skipped`), each said so in a comment. A skipped `make` target that a command of the hint
/// runs anyway is left out. Empty when there is nothing to say.
pub fn next_text(root: &Path, next: Option<&Next>, skipped: &[Skipped]) -> String {
    let split = |line: &str| match line.split_once(" #") {
        Some((c, comment)) => (c.trim_end().to_string(), comment.trim().to_string()),
        None => (line.to_string(), String::new()),
    };
    let run: Vec<(String, String)> =
        next.map_or(vec![], |n| n.run.iter().map(|l| split(l)).collect());
    let makes = |target: &str| {
        run.iter().any(|(c, _)| {
            c.strip_prefix("make ")
                .is_some_and(|rest| rest.split_whitespace().any(|w| w == target))
        })
    };
    let mut lines: Vec<(String, String)> = vec![];
    if root != Path::new(".") && !(run.is_empty() && skipped.is_empty()) {
        lines.push((format!("cd {}", root.display()), "the project root".into()));
    }
    for (cmd, by) in skipped {
        let covered = cmd
            .strip_prefix("make ")
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(makes);
        if !covered {
            lines.push((cmd.clone(), format!("skipped by {by}")));
        }
    }
    lines.extend(run);
    let mut out = vec![];
    if let Some(note) = next.and_then(|n| n.note.as_deref()) {
        out.push(note.to_string());
    }
    let lead = next.map_or("", |n| n.lead.as_str());
    if !lines.is_empty() || !lead.is_empty() {
        out.push(format!(
            "Next: {}",
            if lead.is_empty() { "run" } else { lead }
        ));
    }
    let width = lines
        .iter()
        .filter(|(_, c)| !c.is_empty())
        .map(|(cmd, _)| cmd.len())
        .max()
        .unwrap_or(0);
    for (cmd, comment) in lines {
        if comment.is_empty() {
            out.push(format!("  {cmd}"));
        } else {
            out.push(format!("  {cmd:width$}  # {comment}"));
        }
    }
    out.join("\n")
}

/// Print [`next_text`] after a blank line, when there is something to say.
pub fn print_next(root: &Path, next: Option<&Next>, skipped: &[Skipped]) {
    let text = next_text(root, next, skipped);
    if !text.is_empty() {
        outln!("\n{text}");
    }
}

/// The Go post-steps of a `create` command that `run` kept from running (`--skip-post-steps`,
/// or `--make=false` for `make generate`), when `generate` (its `make generate`) applies.
pub fn skipped_go_steps(
    run: &RunFlags,
    external_module: Option<&str>,
    generate: bool,
) -> Vec<Skipped> {
    let mut out = vec![];
    if run.skip_post_steps {
        if let Some(m) = external_module {
            out.push((format!("go get {m}"), "--skip-post-steps"));
        }
        out.push(("go mod tidy".to_string(), "--skip-post-steps"));
    }
    if generate && (run.skip_post_steps || !run.make) {
        let by = if run.skip_post_steps {
            "--skip-post-steps"
        } else {
            "--make=false"
        };
        out.push(("make generate".to_string(), by));
    }
    out
}

/// Print what comes next after a `create` command applied `plan`: the plugin's hint, with the
/// Go post-steps `run` kept from running when the plan writes Go (`generate`: whether its
/// `make generate` applies).
pub fn print_create_next(
    root: &Path,
    plan: &Plan,
    run: &RunFlags,
    res: &ResourceFlags,
    generate: impl FnOnce() -> bool,
) {
    let skipped = if writes_go(plan) {
        skipped_go_steps(run, res.external_api_module.as_deref(), generate())
    } else {
        vec![]
    };
    print_next(root, plan.next.as_ref(), &skipped);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run_flags(skip_post_steps: bool, make: bool) -> RunFlags {
        RunFlags {
            make,
            skip_post_steps,
            dry_run: false,
            allow_missing_markers: false,
            plugins: None,
            plugin_args: vec![],
        }
    }

    #[test]
    fn next_names_the_root_and_what_did_not_run() {
        let next = Next::new(
            "fill in api/v1/app_types.go, then run",
            &["make generate manifests"],
        );
        // At the root, nothing skipped: the hint as the plugin said it.
        assert_eq!(
            next_text(Path::new("."), Some(&next), &[]),
            "Next: fill in api/v1/app_types.go, then run\n  make generate manifests"
        );
        // From a subdirectory, with the post-steps skipped: the cd and the skipped steps first;
        // `make generate`, which the hint runs anyway, once.
        let skipped = skipped_go_steps(&run_flags(true, true), None, true);
        assert_eq!(
            next_text(Path::new("../.."), Some(&next), &skipped),
            "Next: fill in api/v1/app_types.go, then run\n  \
             cd ../..     # the project root\n  \
             go mod tidy  # skipped by --skip-post-steps\n  \
             make generate manifests"
        );
        // --make=false skips make generate only; a hint that does not run it lists it.
        let skipped = skipped_go_steps(&run_flags(false, false), Some("example.com/m@v1"), true);
        assert_eq!(skipped, [("make generate".to_string(), "--make=false")]);
        let hook = Next::new("fill in the webhook, then run", &["make manifests"]);
        assert_eq!(
            next_text(Path::new("."), Some(&hook), &skipped),
            "Next: fill in the webhook, then run\n  \
             make generate  # skipped by --make=false\n  \
             make manifests"
        );
        let skipped = skipped_go_steps(&run_flags(true, true), Some("example.com/m@v1"), false);
        assert_eq!(skipped[0].0, "go get example.com/m@v1");
        // A note alone (an external plugin's init) is said as it is; nothing at all is silence.
        let note = Next {
            note: Some("Later commands run the plugins of PROJECT's layout (x/v1).".into()),
            ..Default::default()
        };
        assert_eq!(
            next_text(Path::new(".."), Some(&note), &[]),
            "Later commands run the plugins of PROJECT's layout (x/v1)."
        );
        assert_eq!(next_text(Path::new("."), None, &[]), "");
        // Only skipped steps: they are what comes next.
        assert_eq!(
            next_text(
                Path::new("."),
                None,
                &[("go mod tidy".into(), "--skip-post-steps")]
            ),
            "Next: run\n  go mod tidy  # skipped by --skip-post-steps"
        );
    }
}
