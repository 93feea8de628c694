//! The docs check (issue 47): README.md and docs/*.md cannot drift from the binary.
//!
//! - Every `opbuilder` command in a code block runs, in the page's order, against a scratch
//!   project of the right layout, and must succeed. A command that writes runs with
//!   `--dry-run`; `init`, `create api`, `create webhook` and `delete` are then applied (`create`
//!   with `--skip-post-steps`) so that the next command of the page finds what its reader has.
//! - Every flag such a command names exists in that command's `--help` (run where the command
//!   runs, so a Rust project's help, which leaves out the Go layout's flags, is the one read);
//!   so does every flag of an `opbuilder ...` in inline code, and every flag in the first
//!   column of a table in a command's section (`## \`opbuilder create api\``); a flag that
//!   section's prose names in backquotes exists in some command's help.
//! - docs/commands.md's table of the Rust layout's files names every file `init` writes
//!   outside config/.
//!
//! The layout of a block is the one of the page's last `init` (go/v4 before any). A block
//! before the page's first `init` runs in a project of its own, so that independent examples
//! do not meet. Markers (HTML comments, not shown on the page) on the line before a block:
//!
//!     <!-- docs-check: skip: REASON -->   the block is not run (a placeholder value, ...);
//!                                          its flags are still checked
//!     <!-- docs-check: rust -->            the block runs in a project of the Rust layout
//!     <!-- docs-check: go -->              ... of the Go layout
//!
//! and anywhere in a page, `<!-- docs-check: hidden --FLAG: REASON -->` for a flag the page
//! documents though `--help` does not show it.

use crate::support::{copy_tree, opbuilder, split_words};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Layout {
    Go,
    Rust,
}

/// A code block: where it starts (1-based line of its first line), its language, its lines
/// with their numbers, and the markers above it.
#[derive(Debug)]
struct Block {
    lang: String,
    lines: Vec<(usize, String)>,
    skip: Option<String>,
    layout: Option<Layout>,
}

/// One `opbuilder` command of a page: its line, environment and words (without `opbuilder`).
#[derive(Debug, Clone)]
struct Cmd {
    line: usize,
    env: Vec<(String, String)>,
    words: Vec<String>,
}

/// A page split into its code blocks and the rest (prose, tables, headings), with the page's
/// markers. Problems with the markers themselves are reported too.
struct Page {
    blocks: Vec<Block>,
    prose: Vec<(usize, String)>,
    hidden: BTreeSet<String>,
    problems: Vec<String>,
}

const MARK: &str = "<!-- docs-check:";

fn parse_page(name: &str, text: &str) -> Page {
    let lines: Vec<&str> = text.lines().collect();
    let mut page = Page {
        blocks: vec![],
        prose: vec![],
        hidden: BTreeSet::new(),
        problems: vec![],
    };
    // Markers waiting for their block: (line, skip reason, layout).
    let mut pending: Option<(usize, Option<String>, Option<Layout>)> = None;
    let mut i = 0;
    let mut prev_blank = true;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(MARK) {
            let body = rest.trim_end().trim_end_matches("-->").trim();
            if let Some(h) = body.strip_prefix("hidden ") {
                let flag = h.split(':').next().unwrap_or("").trim();
                if !flag.starts_with("--") || !h.contains(':') {
                    page.problems.push(format!(
                        "{name}:{}: write `{MARK} hidden --FLAG: REASON -->`",
                        i + 1
                    ));
                }
                page.hidden.insert(flag.trim_start_matches('-').to_string());
            } else if let Some(reason) = body.strip_prefix("skip:") {
                if reason.trim().is_empty() {
                    page.problems.push(format!(
                        "{name}:{}: a skipped block needs its reason beside it",
                        i + 1
                    ));
                }
                pending = Some((i + 1, Some(reason.trim().to_string()), None));
            } else if body == "rust" || body == "go" {
                let layout = if body == "rust" {
                    Layout::Rust
                } else {
                    Layout::Go
                };
                pending = Some((i + 1, None, Some(layout)));
            } else {
                page.problems.push(format!(
                    "{name}:{}: unknown marker {body:?} (skip: REASON, rust, go, hidden --FLAG: REASON)",
                    i + 1
                ));
            }
            i += 1;
            continue;
        }
        let fenced = trimmed.starts_with("```") || trimmed.starts_with("~~~");
        let indented = prev_blank && line.starts_with("    ") && !trimmed.is_empty();
        if fenced || indented {
            let mut block = Block {
                lang: String::new(),
                lines: vec![],
                skip: None,
                layout: None,
            };
            if let Some((_, skip, layout)) = pending.take() {
                block.skip = skip;
                block.layout = layout;
            }
            if fenced {
                let fence = &trimmed[..3];
                block.lang = trimmed[3..].trim().to_string();
                let indent = line.len() - trimmed.len();
                i += 1;
                while i < lines.len() && !lines[i].trim_start().starts_with(fence) {
                    let l = lines[i];
                    let cut = l.len() - l.trim_start().len();
                    block.lines.push((i + 1, l[cut.min(indent)..].to_string()));
                    i += 1;
                }
                i += 1;
            } else {
                while i < lines.len()
                    && (lines[i].starts_with("    ") || lines[i].trim().is_empty())
                {
                    block
                        .lines
                        .push((i + 1, lines[i].get(4..).unwrap_or("").to_string()));
                    i += 1;
                }
            }
            page.blocks.push(block);
            prev_blank = true;
            continue;
        }
        if !trimmed.is_empty() {
            if let Some((at, _, _)) = pending.take() {
                page.problems.push(format!(
                    "{name}:{at}: the marker is not followed by a code block"
                ));
            }
            page.prose.push((i + 1, line.to_string()));
        }
        prev_blank = trimmed.is_empty();
        i += 1;
    }
    if let Some((at, _, _)) = pending {
        page.problems.push(format!(
            "{name}:{at}: the marker is not followed by a code block"
        ));
    }
    page
}

/// The `opbuilder` commands of one shell line (`line` is its number), and the directory a
/// `cd NAME` of the line moves to (for the `init` that follows).
fn commands_of(line: usize, text: &str, cd: &mut Option<String>) -> Vec<Cmd> {
    let mut out = vec![];
    let words = split_words(text.trim_start().trim_start_matches("$ "));
    for segment in words.split(|w| matches!(w.as_str(), "&&" | "||" | "|" | ";")) {
        let mut env = vec![];
        let mut rest: Vec<String> = vec![];
        let mut iter = segment.iter();
        while let Some(w) = iter.next() {
            if rest.is_empty() {
                if let Some((k, v)) = w.split_once('=') {
                    if !k.is_empty() && k.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
                        env.push((k.to_string(), v.to_string()));
                        continue;
                    }
                }
            }
            // Redirections and their target.
            if matches!(w.as_str(), ">" | ">>" | "<" | "2>") {
                iter.next();
                continue;
            }
            if w.starts_with('>') || w.starts_with("2>") {
                continue;
            }
            rest.push(w.clone());
        }
        match rest.first().map(String::as_str) {
            Some("opbuilder") => out.push(Cmd {
                line,
                env,
                words: rest[1..].to_vec(),
            }),
            Some("cd") if rest.len() == 2 => *cd = Some(rest[1].clone()),
            _ => {}
        }
    }
    out
}

/// The logical lines of a block: `\`-continued lines joined, with the first line's number.
fn logical_lines(block: &Block) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = vec![];
    let mut open = false;
    for (n, l) in &block.lines {
        let (text, cont) = match l.trim_end().strip_suffix('\\') {
            Some(t) => (t.to_string(), true),
            None => (l.trim_end().to_string(), false),
        };
        if open {
            let last = out.last_mut().expect("a continued line");
            last.1.push(' ');
            last.1.push_str(text.trim());
        } else {
            out.push((*n, text));
        }
        open = cont;
    }
    out
}

/// The subcommand path of a command's words (`["create", "api"]`, `["version"]`).
fn path_of(words: &[String]) -> Vec<String> {
    let first = words.first().map(String::as_str).unwrap_or("");
    let n = if matches!(first, "create" | "delete" | "alpha") {
        2
    } else {
        1
    };
    words
        .iter()
        .take(n)
        .take_while(|w| !w.starts_with('-'))
        .cloned()
        .collect()
}

/// The flag names a command's words give (`--group x`, `--dry-run`, `--plugins=go/v4`).
fn flags_of(words: &[String]) -> Vec<String> {
    words
        .iter()
        .filter_map(|w| w.strip_prefix("--"))
        .map(|w| w.split_once('=').map_or(w, |(n, _)| n).to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// Whether a command writes files (and so runs with --dry-run).
fn writes(path: &[String]) -> bool {
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    matches!(
        p.as_slice(),
        ["init"]
            | ["edit"]
            | ["create", "api"]
            | ["create", "webhook"]
            | ["delete", "api"]
            | ["delete", "webhook"]
            | ["alpha", "generate"]
            | ["alpha", "update"]
    )
}

/// Where the check runs: scratch directories, projects by layout, and cached help.
struct Ctx {
    scratch: tempfile::TempDir,
    /// The default project of each layout (a block before the page's first `init` gets a copy).
    defaults: HashMap<Layout, PathBuf>,
    help: HashMap<(PathBuf, Vec<String>), Result<BTreeSet<String>, String>>,
    made: usize,
    /// The commands run, as `file:line: opbuilder ...`.
    ran: Vec<String>,
}

impl Ctx {
    fn new() -> Ctx {
        let scratch = tempfile::tempdir().unwrap();
        fs::create_dir_all(scratch.path().join("home")).unwrap();
        Ctx {
            scratch,
            defaults: HashMap::new(),
            help: HashMap::new(),
            made: 0,
            ran: vec![],
        }
    }

    fn home(&self) -> PathBuf {
        self.scratch.path().join("home")
    }

    /// A new empty directory named `name`, in a parent of its own.
    fn fresh(&mut self, name: &str) -> PathBuf {
        self.made += 1;
        let d = self
            .scratch
            .path()
            .join(format!("p{}", self.made))
            .join(name);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// An opbuilder command in `dir`, as a reader runs it: HOME in the scratch directory, the
    /// example external plugin installed.
    fn run(&self, dir: &Path, env: &[(String, String)], args: &[String]) -> std::process::Output {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        opbuilder(dir)
            .env("HOME", self.home())
            .env(
                "EXTERNAL_PLUGINS_PATH",
                repo.join("docs/examples/external-plugins"),
            )
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .args(args)
            .output()
            .unwrap()
    }

    /// Run `args` in `dir`; whether it succeeded, else a problem at `at` with its stderr.
    fn succeeds(
        &self,
        dir: &Path,
        env: &[(String, String)],
        args: &[String],
        at: &str,
        problems: &mut Vec<String>,
    ) -> bool {
        let o = self.run(dir, env, args);
        if !o.status.success() {
            problems.push(format!(
                "{at}: `opbuilder {}` failed ({}):\n{}",
                args.join(" "),
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        o.status.success()
    }

    /// A copy of the default project of `layout` (made once), with the kustomize output the
    /// helm plugin reads.
    fn project(&mut self, layout: Layout) -> PathBuf {
        if !self.defaults.contains_key(&layout) {
            let d = self.fresh("guestbook");
            let mut args: Vec<String> = [
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "guestbook",
                "--skip-post-steps",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            match layout {
                Layout::Go => args.extend(["--repo".into(), "example.com/guestbook".into()]),
                Layout::Rust => args.push("--plugins=rust.opbuilder.io/v1-beta".into()),
            }
            let o = self.run(&d, &[], &args);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            with_manifests(&d);
            self.defaults.insert(layout, d);
        }
        let d = self.fresh("guestbook");
        copy_tree(&self.defaults[&layout], &d);
        d
    }

    /// The flags `opbuilder <args> --help` shows in `dir`.
    fn help(&mut self, dir: &Path, args: Vec<String>) -> Result<BTreeSet<String>, String> {
        let key = (dir.to_path_buf(), args.clone());
        if let Some(h) = self.help.get(&key) {
            return h.clone();
        }
        let mut full = args.clone();
        full.push("--help".into());
        let o = self.run(dir, &[], &full);
        let h = if o.status.success() {
            let text = String::from_utf8_lossy(&o.stdout).to_string();
            Ok(help_flags(&text))
        } else {
            Err(String::from_utf8_lossy(&o.stderr).trim().to_string())
        };
        self.help.insert(key, h.clone());
        h
    }
}

/// The kustomize output the helm plugin reads (as `make build-installer` writes it).
fn with_manifests(project: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e/fixtures/helm/install.yaml");
    fs::create_dir_all(project.join("dist")).unwrap();
    fs::copy(fixture, project.join("dist/install.yaml")).unwrap();
}

/// The long flags a help text lists.
fn help_flags(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("--") {
        let name: String = text[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            out.insert(name);
        }
    }
    out
}

/// Check that `flags` (a `*` at the end: any flag with that prefix) are in the help of `path`
/// in `dir`; a problem for each that is not.
fn check_flags(
    ctx: &mut Ctx,
    dir: &Path,
    mut help_args: Vec<String>,
    flags: &[String],
    hidden: &BTreeSet<String>,
    at: &str,
    problems: &mut Vec<String>,
) {
    let path = help_args.clone();
    // An external plugin's flags show in the help of a command line naming it.
    let help = match ctx.help(dir, help_args.clone()) {
        Ok(h) => h,
        Err(e) => {
            help_args.retain(|w| !w.starts_with("--plugins"));
            match ctx.help(dir, help_args) {
                Ok(h) => h,
                Err(_) => {
                    problems.push(format!(
                        "{at}: `opbuilder {} --help` fails: {e}",
                        path.join(" ")
                    ));
                    return;
                }
            }
        }
    };
    for f in flags {
        let known = match f.strip_suffix('*') {
            Some(prefix) => help.iter().any(|h| h.starts_with(prefix)),
            None => help.contains(f) || f == "help",
        };
        if !known && !hidden.contains(f) {
            problems.push(format!(
                "{at}: --{f} is not in `opbuilder {} --help`",
                path.iter()
                    .filter(|w| !w.starts_with("--"))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
    }
}

/// The help arguments of a command: its path, and its `--plugins` (whose external plugins add
/// flags).
fn help_args(words: &[String]) -> Vec<String> {
    let mut args = path_of(words);
    let mut iter = words.iter();
    while let Some(w) = iter.next() {
        if w.starts_with("--plugins=") {
            args.push(w.clone());
        } else if w == "--plugins" {
            if let Some(v) = iter.next() {
                args.push(format!("--plugins={v}"));
            }
        }
    }
    args
}

/// The value of `--name` in `words`, if given.
fn value_of(words: &[String], name: &str) -> Option<String> {
    let long = format!("--{name}");
    let eq = format!("--{name}=");
    words.iter().enumerate().find_map(|(i, w)| {
        if let Some(v) = w.strip_prefix(&eq) {
            Some(v.to_string())
        } else if *w == long {
            words.get(i + 1).cloned()
        } else {
            None
        }
    })
}

fn layout_of_init(words: &[String]) -> Layout {
    if value_of(words, "plugins").is_some_and(|p| p.contains("rust")) {
        Layout::Rust
    } else {
        Layout::Go
    }
}

/// Run one page's code-block commands and check their flags; problems as `file:line: ...`.
fn check_blocks(name: &str, page: &Page, ctx: &mut Ctx) -> Vec<String> {
    let mut problems = vec![];
    // The page's projects once it has run an `init`: by layout, and the current one.
    let mut story: HashMap<Layout, PathBuf> = HashMap::new();
    let mut current = Layout::Go;
    for block in &page.blocks {
        if !matches!(
            block.lang.as_str(),
            "" | "sh" | "bash" | "shell" | "console"
        ) {
            continue;
        }
        let mut cd = None;
        let mut cmds = vec![];
        for (n, text) in logical_lines(block) {
            for c in commands_of(n, &text, &mut cd) {
                cmds.push((c, cd.clone()));
            }
        }
        if cmds.is_empty() {
            continue;
        }
        let mut layout = block.layout.unwrap_or(current);
        // A block before the page's first init runs in a project of its own.
        let mut own: Option<PathBuf> = None;
        for (c, cd) in cmds {
            let at = format!("{name}:{}", c.line);
            let path = path_of(&c.words);
            let words: Vec<String> = c
                .words
                .iter()
                .map(|w| match w.strip_prefix("~/") {
                    Some(rest) => ctx.home().join(rest).display().to_string(),
                    None => w.clone(),
                })
                .collect();
            let init = path == ["init"];
            let dir = if init {
                let dir_name = cd
                    .or_else(|| value_of(&words, "project-name"))
                    .unwrap_or_else(|| "guestbook".into());
                ctx.fresh(&dir_name)
            } else if let Some(d) = story.get(&layout) {
                d.clone()
            } else {
                own.get_or_insert_with(|| ctx.project(layout)).clone()
            };
            check_flags(
                ctx,
                &dir,
                help_args(&words),
                &flags_of(&words),
                &page.hidden,
                &at,
                &mut problems,
            );
            // A skipped block (its reason is beside it on the page) is not run.
            if block.skip.is_some() {
                continue;
            }
            if let Some(p) = words.iter().find(|w| w.contains('<') && w.contains('>')) {
                problems.push(format!(
                    "{at}: {p:?} is a placeholder: mark the block `{MARK} skip: REASON -->`"
                ));
                continue;
            }
            let given_dry = words.iter().any(|w| w == "--dry-run");
            let mut args = words.clone();
            if writes(&path) && !given_dry {
                args.push("--dry-run".into());
            }
            ctx.ran.push(format!("{at}: opbuilder {}", args.join(" ")));
            if !ctx.succeeds(&dir, &c.env, &args, &at, &mut problems) {
                continue;
            }
            // What the reader has after it: the project, its API, its webhook.
            let applies = matches!(
                path.iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .as_slice(),
                ["init"]
                    | ["create", "api"]
                    | ["create", "webhook"]
                    | ["delete", "api"]
                    | ["delete", "webhook"]
            );
            if applies && !given_dry {
                let mut args = words.clone();
                if path[0] != "delete" && !args.iter().any(|w| w == "--skip-post-steps") {
                    args.push("--skip-post-steps".into());
                }
                if !ctx.succeeds(&dir, &c.env, &args, &at, &mut problems) {
                    continue;
                }
                if init {
                    with_manifests(&dir);
                    current = layout_of_init(&words);
                    layout = current;
                    story.insert(current, dir);
                }
            }
        }
    }
    problems
}

/// The inline `opbuilder ...` of a page's prose: their flags exist in the command's help
/// (outside a project).
fn check_inline(name: &str, page: &Page, ctx: &mut Ctx, empty: &Path) -> Vec<String> {
    let mut problems = vec![];
    for (n, line) in &page.prose {
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 0 || !span.starts_with("opbuilder ") {
                continue;
            }
            let mut cd = None;
            for c in commands_of(*n, span, &mut cd) {
                let at = format!("{name}:{n}");
                check_flags(
                    ctx,
                    empty,
                    help_args(&c.words),
                    &flags_of(&c.words),
                    &page.hidden,
                    &at,
                    &mut problems,
                );
            }
        }
    }
    problems
}

/// The flags in the first column of the tables of a command's section (a heading naming
/// `opbuilder <command>` or `<command> --...`, and its subsections) exist in its help; those
/// its prose names (in backquotes) exist in some command's help.
fn check_tables(name: &str, page: &Page, ctx: &mut Ctx, empty: &Path) -> Vec<String> {
    let mut problems = vec![];
    let mut section: Option<(usize, Vec<String>)> = None;
    for (n, line) in &page.prose {
        if line.starts_with('#') {
            let level = line.chars().take_while(|c| *c == '#').count();
            let named = line.split('`').nth(1).and_then(|span| {
                let words: Vec<String> = split_words(span.trim_start_matches("opbuilder "));
                let path = path_of(&words);
                let known = matches!(
                    path.first().map(String::as_str),
                    Some("init" | "create" | "delete" | "edit" | "alpha")
                );
                (known
                    && (span.starts_with("opbuilder ")
                        || words.iter().any(|w| w.starts_with("--"))))
                .then_some(path)
            });
            match (named, &section) {
                (Some(p), _) => section = Some((level, p)),
                (None, Some((l, _))) if level <= *l => section = None,
                _ => {}
            }
            continue;
        }
        let Some((_, path)) = &section else { continue };
        // A table's first column names the section's flags; prose may name another command's.
        let (first, table) = match line.strip_prefix('|') {
            Some(row) => (row.split('|').next().unwrap_or(""), true),
            None => (line.as_str(), false),
        };
        let flags: Vec<String> = first
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .flat_map(|(_, span)| span.split([' ', ',']))
            .filter_map(|w| w.strip_prefix("--"))
            .map(|w| {
                let name: String = w
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '*')
                    .collect();
                name
            })
            .filter(|w| !w.is_empty())
            .collect();
        let at = format!("{name}:{n}");
        if table {
            check_flags(
                ctx,
                empty,
                path.clone(),
                &flags,
                &page.hidden,
                &at,
                &mut problems,
            );
            continue;
        }
        let every = every_flag(ctx, empty);
        for f in flags {
            let known = match f.strip_suffix('*') {
                Some(prefix) => every.iter().any(|h| h.starts_with(prefix)),
                None => every.contains(&f),
            };
            if !known && !page.hidden.contains(&f) {
                problems.push(format!("{at}: --{f} is in no opbuilder command's --help"));
            }
        }
    }
    problems
}

/// Every flag of every command's help (outside a project).
fn every_flag(ctx: &mut Ctx, empty: &Path) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for path in [
        "init",
        "create api",
        "create webhook",
        "edit",
        "alpha generate",
        "alpha update",
        "alpha check",
        "version",
        "completion",
        "man",
    ] {
        let args = path.split(' ').map(String::from).collect();
        all.extend(ctx.help(empty, args).unwrap_or_default());
    }
    all
}

/// docs/commands.md's table of the Rust layout's files names every file its `init` writes
/// outside config/ (PROJECT aside).
fn check_rust_files(page: &Page, ctx: &mut Ctx) -> Vec<String> {
    let mut named = BTreeSet::new();
    let mut in_section = false;
    for (_, line) in &page.prose {
        if line.starts_with("## ") {
            in_section = line.contains("The Rust layout");
            continue;
        }
        if in_section && line.starts_with("| `") {
            let first = line[1..].split('|').next().unwrap_or("");
            for (i, span) in first.split('`').enumerate() {
                if i % 2 == 1 {
                    named.insert(span.to_string());
                }
            }
        }
    }
    let dir = ctx.fresh("guestbook");
    let args: Vec<String> = [
        "init",
        "--plugins=rust.opbuilder.io/v1-beta",
        "--domain",
        "example.com",
        "--project-name",
        "guestbook",
        "--dry-run",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = ctx.run(&dir, &[], &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut problems = vec![];
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let Some(f) = line.trim().strip_prefix("would create") else {
            continue;
        };
        let f = f.trim();
        if f.starts_with("config/") || f == "PROJECT" || named.contains(f) {
            continue;
        }
        problems.push(format!(
            "docs/commands.md: the Rust layout's file table does not name {f}, which `init` writes"
        ));
    }
    problems
}

/// Every problem of one page.
fn check_page(name: &str, text: &str, ctx: &mut Ctx) -> Vec<String> {
    let page = parse_page(name, text);
    let empty = ctx.fresh("outside");
    let mut problems = page.problems.clone();
    problems.extend(check_blocks(name, &page, ctx));
    problems.extend(check_inline(name, &page, ctx, &empty));
    problems.extend(check_tables(name, &page, ctx, &empty));
    if name == "docs/commands.md" {
        problems.extend(check_rust_files(&page, ctx));
    }
    problems
}

#[test]
fn docs_run_against_the_binary() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages: BTreeMap<String, String> = BTreeMap::new();
    pages.insert(
        "README.md".into(),
        fs::read_to_string(repo.join("README.md")).unwrap(),
    );
    for e in fs::read_dir(repo.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            let name = format!("docs/{}", p.file_name().unwrap().to_string_lossy());
            pages.insert(name, fs::read_to_string(&p).unwrap());
        }
    }
    assert!(pages.len() > 5, "no docs found");
    let mut ctx = Ctx::new();
    let mut problems = vec![];
    for (name, text) in &pages {
        problems.extend(check_page(name, text, &mut ctx));
    }
    // A parser that finds nothing would pass: every page with commands is read.
    for page in [
        "README.md",
        "docs/getting-started.md",
        "docs/tutorial.md",
        "docs/rust-tutorial.md",
        "docs/commands.md",
        "docs/typed-clients.md",
    ] {
        assert!(
            ctx.ran.iter().any(|r| r.starts_with(&format!("{page}:"))),
            "no command of {page} ran:\n{}",
            ctx.ran.join("\n")
        );
    }
    if std::env::var_os("OPBUILDER_DOCS_VERBOSE").is_some() {
        eprintln!("{}", ctx.ran.join("\n"));
    }
    assert!(
        problems.is_empty(),
        "the docs drifted from the binary ({} problems):\n{}\n\nFix the page (or the binary), or mark a block \
         that cannot run: `<!-- docs-check: skip: REASON -->` on the line before it (see e2e/docs.rs)",
        problems.len(),
        problems.join("\n")
    );
}

/// The check fails on a page that drifted: an unknown flag, a command that fails, a placeholder
/// left unmarked, a table row naming a flag the command lacks, a marker without its block.
#[test]
fn a_page_that_drifted_fails_the_check() {
    let page = "\
# A page

    opbuilder init --domain example.com --repo example.com/x --no-such-flag
    opbuilder create api --group ship --version 1 --kind Frigate

Inline: `opbuilder edit --multigroup --frobnicate`.

    opbuilder create api --group <group> --version v1 --kind <Kind>

<!-- docs-check: skip: a placeholder value -->
    opbuilder create webhook --group <group> --version v1 --kind <Kind> --defaulting

## `opbuilder create api`

| flag | meaning |
|---|---|
| `--group`, `--nope` | x |

It needs `--resource` and `--gone-flag`.

<!-- docs-check: rust -->
Not a block.
";
    let mut ctx = Ctx::new();
    let problems = check_page("page.md", page, &mut ctx);
    let expect = [
        "page.md:3: --no-such-flag is not in `opbuilder init --help`",
        "page.md:3: `opbuilder init --domain example.com --repo example.com/x --no-such-flag --dry-run` failed",
        "page.md:4: `opbuilder create api --group ship --version 1 --kind Frigate --dry-run` failed",
        "page.md:6: --frobnicate is not in `opbuilder edit --help`",
        "page.md:8: \"<group>\" is a placeholder",
        "page.md:17: --nope is not in `opbuilder create api --help`",
        "page.md:19: --gone-flag is in no opbuilder command's --help",
        "page.md:21: the marker is not followed by a code block",
    ];
    for e in expect {
        assert!(
            problems.iter().any(|p| p.starts_with(e)),
            "no problem starting {e:?} in:\n{}",
            problems.join("\n")
        );
    }
    assert_eq!(problems.len(), expect.len(), "{}", problems.join("\n"));
}
