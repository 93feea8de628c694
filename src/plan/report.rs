//! What applying a plan did (or, on a dry run, would do) to each path, and why a plan was
//! refused.

use crate::out::{errln, outln};
use std::fmt;
#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;

/// What happened (or would happen) to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Create,
    Update,
    Remove,
    Skip,
    Unchanged,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Remove => "remove",
            Action::Skip => "skip",
            Action::Unchanged => "unchanged",
        })
    }
}

impl Action {
    fn style(self) -> crate::term::Style {
        use crate::term::Style;
        match self {
            Action::Create => Style::Green,
            Action::Update => Style::Cyan,
            Action::Remove => Style::Red,
            Action::Skip => Style::Yellow,
            Action::Unchanged => Style::Dim,
        }
    }
}

/// The outcome of applying (or dry-running) a plan.
#[derive(Debug, Default)]
pub struct Report {
    /// Each path once, in plan order, PROJECT last.
    pub entries: Vec<(PathBuf, Action)>,
    pub warnings: Vec<String>,
    /// Things done differently from the usual way, worth knowing (not problems).
    pub notes: Vec<String>,
    /// With [`super::ApplyOptions::contents`] on a dry run: each path's content after the plan
    /// (None: absent), in the order of `entries`.
    pub contents: Vec<(PathBuf, Option<Vec<u8>>)>,
}

impl Report {
    /// Print one status line per path (coloured on a terminal, see [`crate::term`]), then
    /// the warnings on standard error.
    pub fn print(&self, dry_run: bool) {
        let color = crate::term::color_stdout();
        for (path, action) in &self.entries {
            // "would unchanged" is not English: a dry run says the file is kept as it is.
            let name = match action {
                Action::Unchanged if dry_run => "keep".to_string(),
                a => a.to_string(),
            };
            let pad = " ".repeat(9usize.saturating_sub(name.len()));
            let word = format!("{}{pad}", crate::term::paint(&name, action.style(), color));
            if dry_run {
                outln!("  would {word} {}", path.display());
            } else if !matches!(action, Action::Unchanged) {
                outln!("  {word} {}", path.display());
            }
        }
        for w in &self.warnings {
            errln!("{} {w}", crate::term::label("warning"));
        }
        for n in &self.notes {
            errln!("note: {n}");
        }
    }

    #[cfg(test)]
    pub fn action(&self, path: &str) -> Option<Action> {
        self.entries
            .iter()
            .find(|(p, _)| p == Path::new(path))
            .map(|(_, a)| *a)
    }
}

/// Every reason a plan cannot be applied; nothing has been written.
#[derive(Debug)]
pub struct Conflicts(pub Vec<String>);

impl fmt::Display for Conflicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "nothing was written; the plan has {} conflict(s):",
            self.0.len()
        )?;
        for c in &self.0 {
            writeln!(f, "  - {c}")?;
        }
        // Each conflict says its own way out (--force where a file may be replaced).
        write!(f, "fix these and run the command again")
    }
}

impl std::error::Error for Conflicts {}
