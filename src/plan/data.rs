//! The plan as data: what a command asks for, file by file (create with an if-exists policy,
//! edits of an existing or earlier planned file, removal), each perhaps belonging to a named
//! [`Part`], and the new PROJECT.

use crate::markers::go::imports::ImportSpec;
use std::path::{Path, PathBuf};

/// What to do when a file to create already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfExists {
    /// A conflict: the plan is refused.
    Error,
    /// Keep the existing file.
    Skip,
    /// Replace it.
    Overwrite,
}

/// An in-place change to an existing (or earlier planned) file.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Insert fragments above every `+kubebuilder:scaffold:<marker>` line (idempotent).
    AboveMarker {
        marker: String,
        fragments: Vec<String>,
    },
    /// Insert one line (a Rust `mod` declaration) into the lines directly above the marker, in
    /// sorted order, as rustfmt keeps them (idempotent).
    SortedAboveMarker { marker: String, line: String },
    /// Add a Go import to the block holding `// +kubebuilder:scaffold:imports`, sorted.
    GoImport { spec: ImportSpec, module: String },
    /// Uncomment a block (given in its uncommented form). When `required` is false and the block
    /// is in neither form, the edit is reported as a warning instead of a conflict.
    Uncomment { block: String, required: bool },
    /// Uncomment every YAML list entry that starts with the line `start` and holds every line of
    /// `needs`, recognised by structure (see [`crate::markers::yaml::enable_entries`]). A missing entry is
    /// reported as a warning.
    EnableEntry { start: String, needs: Vec<String> },
    /// Insert text after the first line equal to `anchor` (idempotent).
    AfterLine { anchor: String, text: String },
    /// Insert text above the last line equal to `anchor`, with its indentation (idempotent).
    BeforeLine { anchor: String, text: String },
    /// Replace the first line equal to `line` (trimmed) by text, with its indentation
    /// (idempotent: nothing to do once the text is there).
    ReplaceLine { line: String, text: String },
    /// Append text at the end (idempotent).
    Append { text: String },
    /// Add comment tags (such as `// +genclient`) at the top of the comments above the Go
    /// declaration `type <name> struct`, each unless that comment block already holds it.
    TypeTags {
        type_name: String,
        tags: Vec<String>,
    },
    /// Insert text after the last recipe line of the Makefile rule for `target` (idempotent).
    AfterRecipe { target: String, text: String },
}

/// A named piece of a command's plan that works only whole (a kind's e2e checks, its entry in a
/// kustomization, its setup in the manager), so that it can be left out whole when the file or
/// marker it needs is missing: the project predates it, or its owner removed it. `apply` then
/// writes the rest and reports the part with the text to add by hand ([`super::report::Skipped`]).
/// An optional part is left out of its own accord; an essential one (without it the project
/// builds but does not work: the manager's setup, the scheme, the envtest suite) only when the
/// command is told to ([`super::ApplyOptions::leave_out_essential`]), else the plan is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Part {
    /// What it is, as it reads after "left out": "the webhooks' e2e checks".
    pub name: &'static str,
    pub essential: bool,
}

impl Part {
    pub const fn optional(name: &'static str) -> Self {
        Part {
            name,
            essential: false,
        }
    }

    pub const fn essential(name: &'static str) -> Self {
        Part {
            name,
            essential: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Create {
        path: PathBuf,
        content: String,
        if_exists: IfExists,
        /// The part the file belongs to, if any.
        part: Option<Part>,
    },
    Update {
        path: PathBuf,
        edits: Vec<Edit>,
        /// The part the edits belong to, if any.
        part: Option<Part>,
    },
    /// Delete a file if it exists.
    Remove { path: PathBuf },
}

impl Op {
    pub fn path(&self) -> &PathBuf {
        match self {
            Op::Create { path, .. } | Op::Update { path, .. } | Op::Remove { path } => path,
        }
    }

    pub fn part(&self) -> Option<Part> {
        match self {
            Op::Create { part, .. } | Op::Update { part, .. } => *part,
            Op::Remove { .. } => None,
        }
    }
}

/// The data a command produces: file operations in order, the new PROJECT (written last), and
/// what the user does next.
#[derive(Debug, Default, Clone)]
pub struct Plan {
    pub ops: Vec<Op>,
    /// The part that operations planned now belong to: set only through [`Plan::part`].
    pub(crate) current: Option<Part>,
    pub project: Option<String>,
    /// What comes next, in the words of the plugin that planned the files (a later plugin of the
    /// chain may replace it: deploy-image replaces go/v4's); the command prints it last. No part
    /// of the transaction.
    pub next: Option<Next>,
}

/// What the user does after a command: said by the plugin that planned the files, printed by
/// the command last, with the `cd` to the project root and the post-steps that did not run.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Next {
    /// Said before it, on its own line (what deploy-image's controller deploys).
    pub note: Option<String>,
    /// What to do, naming exact paths, as the words after "Next: " and before the commands:
    /// "fill in the Spec and Status in api/v1/app_types.go, then run".
    pub lead: String,
    /// The commands, run from the project root; a `# ...` comment may follow one.
    pub run: Vec<String>,
}

impl Next {
    pub fn new(lead: impl Into<String>, run: &[&str]) -> Next {
        Next {
            note: None,
            lead: lead.into(),
            run: run.iter().map(|c| c.to_string()).collect(),
        }
    }
}

impl Plan {
    /// Plan with `f`, every file and edit it adds belonging to `part`.
    pub fn part<T>(&mut self, part: Part, f: impl FnOnce(&mut Plan) -> T) -> T {
        let outer = self.current.replace(part);
        let out = f(self);
        self.current = outer;
        out
    }

    pub fn create(
        &mut self,
        path: impl Into<PathBuf>,
        content: impl Into<String>,
        if_exists: IfExists,
    ) {
        self.ops.push(Op::Create {
            path: path.into(),
            content: content.into(),
            if_exists,
            part: self.current,
        });
    }

    /// The content of the file `path` that this plan creates, if it does (say, `init`'s file
    /// that a plugin joining it changes before anything is written).
    pub fn created_mut(&mut self, path: &Path) -> Option<&mut String> {
        self.ops.iter_mut().find_map(|op| match op {
            Op::Create {
                path: p, content, ..
            } if p == path => Some(content),
            _ => None,
        })
    }

    pub fn update(&mut self, path: impl Into<PathBuf>, edit: Edit) {
        let path = path.into();
        // Consecutive edits of one file (and one part) are kept together.
        if let Some(Op::Update {
            path: p,
            edits,
            part,
        }) = self.ops.last_mut()
        {
            if *p == path && *part == self.current {
                edits.push(edit);
                return;
            }
        }
        self.ops.push(Op::Update {
            path,
            edits: vec![edit],
            part: self.current,
        });
    }

    /// The files the plan creates or updates whose path ends with `suffix`, in plan order, as
    /// the user sees them (the paths a hint names).
    pub fn written(&self, suffix: &str) -> Vec<String> {
        let mut out: Vec<String> = vec![];
        for op in &self.ops {
            if let Op::Create { path, .. } | Op::Update { path, .. } = op {
                let p = path.to_string_lossy();
                if p.ends_with(suffix) && !out.iter().any(|o| *o == p) {
                    out.push(p.into_owned());
                }
            }
        }
        out
    }

    pub fn remove(&mut self, path: impl Into<PathBuf>) {
        self.ops.push(Op::Remove { path: path.into() });
    }

    pub fn above_marker(&mut self, path: impl Into<PathBuf>, marker: &str, fragments: Vec<String>) {
        self.update(
            path,
            Edit::AboveMarker {
                marker: marker.into(),
                fragments,
            },
        );
    }

    pub fn go_import(
        &mut self,
        path: impl Into<PathBuf>,
        name: Option<&str>,
        import: &str,
        module: &str,
    ) {
        self.update(
            path,
            Edit::GoImport {
                spec: ImportSpec::new(name, import),
                module: module.into(),
            },
        );
    }
}
