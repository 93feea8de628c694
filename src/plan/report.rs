//! What applying a plan did (or, on a dry run, would do) to each path, the parts it left out
//! with what to add by hand, and why a plan was refused.

use super::data::Part;
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

/// Something to do by hand: where, and the text to put there.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// The file and the place in it: "cmd/main.go, above `// +kubebuilder:scaffold:scheme`".
    pub place: String,
    pub text: String,
}

/// A file a part needs that is missing, or something missing in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    pub file: PathBuf,
    /// What the file lacks, as it reads after "has no" (None: the file is missing).
    pub what: Option<String>,
}

/// What is missing, said shortly: "a is missing", "b has no line `x` and no line `y`".
fn say_missing(list: &[Missing]) -> String {
    let mut out: Vec<String> = vec![];
    let mut files: Vec<&PathBuf> = vec![];
    for m in list {
        if !files.contains(&&m.file) {
            files.push(&m.file);
        }
    }
    for f in files {
        let lacks: Vec<&str> = list
            .iter()
            .filter(|m| &m.file == f)
            .filter_map(|m| m.what.as_deref())
            .collect();
        if lacks.is_empty() {
            out.push(format!("{} is missing", f.display()));
        } else {
            out.push(format!("{} has no {}", f.display(), lacks.join(" and no ")));
        }
    }
    out.join(", and ")
}

/// A part of the plan left out (or, refused, that could not be written), because a file or
/// marker it needs is missing; with what to add by hand.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub part: Part,
    /// What is missing.
    pub missing: Vec<Missing>,
    /// What the part would have written, less what the files hold already.
    pub pieces: Vec<Piece>,
}

impl Skipped {
    /// "<name>, because <what is missing>"
    fn because(&self) -> String {
        format!("{}, because {}", self.part.name, say_missing(&self.missing))
    }

    /// The pieces, each place on a line and its text indented below it.
    fn pieces_text(&self) -> String {
        let mut out = String::new();
        for p in &self.pieces {
            out.push_str(&format!("  {}:\n", p.place));
            for l in p.text.trim_end_matches('\n').lines() {
                if l.trim().is_empty() {
                    out.push('\n');
                } else {
                    out.push_str(&format!("      {l}\n"));
                }
            }
        }
        out
    }
}

/// The outcome of applying (or dry-running) a plan.
#[derive(Debug, Default)]
pub struct Report {
    /// Each path once, in plan order, PROJECT last.
    pub entries: Vec<(PathBuf, Action)>,
    /// The parts left out, in plan order: optional ones whose file or marker is missing, and
    /// essential ones when the command was told to leave them out.
    pub skipped: Vec<Skipped>,
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
        let left = if dry_run {
            "would leave out"
        } else {
            "left out"
        };
        for s in &self.skipped {
            if s.part.essential {
                errln!(
                    "{} {left} {} (--allow-missing-markers). Add this by hand:\n{}",
                    crate::term::label("warning"),
                    s.because(),
                    s.pieces_text().trim_end()
                );
            } else {
                errln!(
                    "note: {left} {}. To add by hand:\n{}",
                    s.because(),
                    s.pieces_text().trim_end()
                );
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
pub struct Conflicts(
    pub Vec<String>,
    /// The essential parts that cannot be written because a file or marker they need is
    /// missing, with what they would have written.
    pub Vec<Skipped>,
);

impl fmt::Display for Conflicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len() + self.1.len();
        writeln!(f, "nothing was written; the plan has {n} conflict(s):")?;
        for c in &self.0 {
            writeln!(f, "  - {c}")?;
        }
        for s in &self.1 {
            writeln!(
                f,
                "  - {}, so {} has nowhere to go",
                say_missing(&s.missing),
                s.part.name
            )?;
        }
        if self.1.is_empty() {
            // Each conflict says its own way out (--force where a file may be replaced).
            return write!(f, "fix these and run the command again");
        }
        write!(
            f,
            "fix these and run the command again (restore a missing file; put a missing marker back where a new \
             project has it). If the project sets this up in its own way, run the command again with \
             --allow-missing-markers, which writes everything else, and add this by hand:\n{}",
            self.1
                .iter()
                .map(Skipped::pieces_text)
                .collect::<String>()
                .trim_end()
        )
    }
}

impl std::error::Error for Conflicts {}
