//! Steps that run after the files are written: `go mod tidy`, `make generate`.
//! They never touch the transaction: if one fails, the scaffolded files stay as written and the
//! user is told what to run by hand.
//!
//! What users wait for is mostly these steps, so a command runs only the ones that can change
//! something ([`tidy_needed`], [`generate_packages`], which also narrows `make generate` to the
//! packages that changed) and `make controller-gen` (a copy from the
//! per-user tool cache of the generated Makefile, or a build) overlaps with the `go` steps.

use crate::error::Interrupted;
use crate::out::outln;
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    GoModTidy,
    /// `go get <module>` (external APIs).
    GoGet(String),
    Make(&'static str),
    /// `make generate GENERATE_PATHS=<packages>`: DeepCopy methods for the API packages a
    /// command changed, not every package of the module (controller-gen then loads and
    /// type-checks only those: 0.5 s instead of 1.7 s on a fresh project). A Makefile without
    /// GENERATE_PATHS (Kubebuilder's) ignores the variable and generates for `./...`.
    Generate(Vec<String>),
}

impl Step {
    fn program(&self) -> &'static str {
        match self {
            Step::GoModTidy | Step::GoGet(_) => "go",
            Step::Make(_) | Step::Generate(_) => "make",
        }
    }

    pub fn display(&self) -> String {
        match self {
            Step::GoModTidy => "go mod tidy".into(),
            Step::GoGet(m) => format!("go get {m}"),
            Step::Make(t) => format!("make {t}"),
            // Quoted when there are several: `;` would end the command in a shell.
            Step::Generate(paths) if paths.len() > 1 => {
                format!("make generate GENERATE_PATHS='{}'", paths.join(";"))
            }
            Step::Generate(paths) => format!("make generate GENERATE_PATHS={}", paths.join(";")),
        }
    }

    fn explain(&self) -> &'static str {
        match self {
            Step::GoModTidy => {
                "resolving Go dependencies; the first run downloads modules and can take a minute"
            }
            Step::GoGet(_) => "adding the module that provides the external API",
            Step::Make(_) | Step::Generate(_) => "running controller-gen",
        }
    }
}

/// Find an executable on PATH.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                p.metadata()
                    .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                    .unwrap_or(false)
            }
            #[cfg(not(unix))]
            {
                p.is_file()
            }
        })
}

/// Run the steps in `root`, streaming their output. Without the tools, print the steps instead.
/// With `prepare_tools`, `make controller-gen` runs in the background from the start (its output
/// discarded) and is waited for before the first `make` step, or at the end: the tool the next
/// `make generate` / `make manifests` needs is in ./bin by then.
pub fn run(root: &Path, steps: &[Step], prepare_tools: bool) -> Result<()> {
    if steps.is_empty() && !prepare_tools {
        return Ok(());
    }
    let missing: Vec<&str> = steps
        .iter()
        .map(Step::program)
        .filter(|p| which(p).is_none())
        .collect();
    if !missing.is_empty() {
        outln!(
            "\n{} not found on PATH, so these steps were not run. Run them yourself once Go is installed:",
            missing.join(" and ")
        );
        for s in steps {
            outln!("  {}", s.display());
        }
        return Ok(());
    }
    let mut prepare = if prepare_tools {
        Prepare::start(root)
    } else {
        Prepare(None)
    };
    let total = steps.len();
    for (i, step) in steps.iter().enumerate() {
        if matches!(step, Step::Make(_) | Step::Generate(_)) {
            // The Makefile installs controller-gen itself if this failed.
            let guard = sigint::Guard::install();
            prepare.finish();
            if guard.interrupted() {
                return Err(anyhow::Error::new(Interrupted(format!(
                    "interrupted while preparing controller-gen; the scaffolded files are in place, but the \
                     project is not ready until these steps have run. Run them yourself:\n  {}",
                    remaining(root, &steps[i..])
                ))));
            }
        }
        outln!(
            "\n[{}/{total}] {} ({})",
            i + 1,
            step.display(),
            step.explain()
        );
        let mut cmd = match step {
            Step::GoModTidy => {
                let mut c = Command::new("go");
                c.args(["mod", "tidy"]);
                c
            }
            Step::GoGet(m) => {
                let mut c = Command::new("go");
                c.args(["get", m]);
                c
            }
            Step::Make(target) => {
                let mut c = Command::new("make");
                c.arg(target);
                c
            }
            Step::Generate(paths) => {
                let mut c = Command::new("make");
                c.arg("generate")
                    .arg(format!("GENERATE_PATHS={}", paths.join(";")));
                c
            }
        };
        let guard = sigint::Guard::install();
        let status = cmd
            .current_dir(root)
            .status()
            .with_context(|| format!("starting `{}`", step.display()));
        let interrupted = guard.interrupted();
        drop(guard);
        let status = status?;
        if interrupted || killed_by_sigint(&status) {
            let from = if status.success() { i + 1 } else { i };
            if from == total {
                continue; // every step finished all the same
            }
            return Err(anyhow::Error::new(Interrupted(format!(
                "interrupted during `{}`; the scaffolded files are in place, but the project is not ready \
                 until these steps have run. Run them yourself:\n  {}",
                step.display(),
                remaining(root, &steps[from..])
            ))));
        }
        if !status.success() {
            bail!(
                "`{}` failed ({status}); the scaffolded files are in place. Fix the problem above, then run:\n  {}",
                step.display(),
                remaining(root, &steps[i..])
            );
        }
    }
    let guard = sigint::Guard::install();
    let prepared = prepare.finish();
    drop(guard);
    match prepared {
        Some(true) => {
            outln!("\ncontroller-gen is ready in ./bin (for make generate and make manifests)")
        }
        Some(false) => outln!(
            "\nPreparing controller-gen in ./bin did not work; `make controller-gen` shows why \
             (make generate and make manifests try again)."
        ),
        None => {}
    }
    Ok(())
}

/// The command that writes a Rust project's Cargo.lock.
pub const CARGO_LOCKFILE: &str = "cargo generate-lockfile";

/// The Rust layout's post-step: `cargo generate-lockfile`, so that every build of the commit
/// (the image's `cargo build --locked` too) uses the same crates. It never fails the command:
/// without cargo, or when the registry cannot be reached, one line says so and what to run.
pub fn cargo_lockfile(root: &Path) {
    let later = |why: &str, when: &str| {
        crate::out::errln!(
            "{} {why}, so Cargo.lock was not written; the project is in place: run `{CARGO_LOCKFILE}` in it {when}",
            crate::term::label("warning")
        )
    };
    if which("cargo").is_none() {
        later(
            "cargo is not on PATH",
            "once Rust is installed (https://rustup.rs)",
        );
        return;
    }
    outln!("\n[1/1] {CARGO_LOCKFILE} (resolving the crates for Cargo.lock; the first run reads the crates.io index)");
    let out = Command::new("cargo")
        .arg("generate-lockfile")
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match out {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let first = err
                .lines()
                .find(|l| l.starts_with("error"))
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string();
            later(
                &format!("`{CARGO_LOCKFILE}` failed ({})", first.trim()),
                "when crates.io (or your registry) can be reached",
            )
        }
        Err(e) => later(
            &format!("`{CARGO_LOCKFILE}` could not start ({e})"),
            "when cargo runs",
        ),
    }
}

/// Say that a post-step is not run because it would change nothing.
pub fn skipped(step: &Step, why: &str) {
    outln!("\nNot running `{}`: {why}.", step.display());
}

/// `make controller-gen` running in the background. Always waited for (also when a step fails
/// or is interrupted: Ctrl-C reaches it as well), so no build is left running behind the user.
struct Prepare(Option<Child>);

impl Prepare {
    fn start(root: &Path) -> Prepare {
        if which("make").is_none() || !root.join("Makefile").is_file() {
            return Prepare(None);
        }
        let child = Command::new("make")
            .arg("controller-gen")
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok();
        Prepare(child)
    }

    /// Wait for it; whether it worked, or None when it was not started or already waited for.
    fn finish(&mut self) -> Option<bool> {
        let mut child = self.0.take()?;
        Some(child.wait().map(|s| s.success()).unwrap_or(false))
    }
}

impl Drop for Prepare {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The Go files `ops` wrote, relative to the project root.
pub fn written_go_files(plan: &crate::plan::Plan) -> Vec<PathBuf> {
    use crate::plan::Op;
    plan.ops
        .iter()
        .filter_map(|op| match op {
            Op::Create { path, .. } | Op::Update { path, .. } => Some(path),
            Op::Remove { .. } => None,
        })
        .filter(|p| p.extension().is_some_and(|e| e == "go"))
        .cloned()
        .collect()
}

/// Every import path outside the standard library and outside the module itself, in the Go
/// files of the project (directories Go ignores and nested modules aside).
pub fn project_imports(root: &Path) -> BTreeSet<String> {
    let module = module_path(root);
    let mut found = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                let ignored = name.starts_with('.')
                    || name.starts_with('_')
                    || name == "testdata"
                    || name == "vendor"
                    || name == "bin";
                if !ignored && !e.path().join("go.mod").exists() {
                    stack.push(e.path());
                }
            } else if name.ends_with(".go") {
                if let Ok(text) = std::fs::read_to_string(e.path()) {
                    external_imports(&text, module.as_deref(), &mut found);
                }
            }
        }
    }
    found
}

/// Whether `go mod tidy` can change go.mod or go.sum after a command wrote `written`: when
/// go.sum is missing, or when a written file imports a package (outside the standard library
/// and the module) that no Go file of the project imported before (`before`, from
/// [`project_imports`]). Imports already present were resolved by an earlier tidy, and the
/// commands only add code, so tidy would then find nothing to do.
pub fn tidy_needed(root: &Path, before: &BTreeSet<String>, written: &[PathBuf]) -> bool {
    if !root.join("go.sum").is_file() {
        return true;
    }
    let module = module_path(root);
    let mut now = BTreeSet::new();
    for f in written {
        if let Ok(text) = std::fs::read_to_string(root.join(f)) {
            external_imports(&text, module.as_deref(), &mut now);
        }
    }
    !now.is_subset(before)
}

/// The post-steps of a `create` command whose `plan` was applied: `go get` of an external API's
/// module, then `go mod tidy` when the new code can have changed what the module needs (else it
/// says why it skips it); and, when `generate` allows it, the packages whose DeepCopy methods
/// `make generate` must refresh. `before` is what the project imported before the command.
pub fn create_steps(
    root: &Path,
    before: &BTreeSet<String>,
    plan: &crate::plan::Plan,
    external_module: Option<&str>,
    generate: bool,
) -> (Vec<Step>, Vec<String>) {
    let written = written_go_files(plan);
    let mut steps = vec![];
    if let Some(m) = external_module {
        steps.push(Step::GoGet(m.to_string()));
    }
    if !steps.is_empty() || tidy_needed(root, before, &written) {
        steps.push(Step::GoModTidy);
    } else {
        skipped(
            &Step::GoModTidy,
            "the new code imports no package the project did not import already",
        );
    }
    let packages = if generate {
        generate_packages(root, &written)
    } else {
        vec![]
    };
    (steps, packages)
}

/// The packages `make generate` (controller-gen's DeepCopy methods) has to run for, as
/// `./dir` paths relative to `root`: those with a written Go file and a Go file carrying a
/// `+kubebuilder:object:` marker. Empty when generating would change nothing.
pub fn generate_packages(root: &Path, written: &[PathBuf]) -> Vec<String> {
    let mut dirs: Vec<PathBuf> = written
        .iter()
        .map(|f| f.parent().map(Path::to_path_buf).unwrap_or_default())
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs.iter()
        .filter(|d| {
            std::fs::read_dir(root.join(d)).is_ok_and(|entries| {
                entries.flatten().any(|e| {
                    let p = e.path();
                    p.extension().is_some_and(|x| x == "go")
                        && std::fs::read_to_string(&p)
                            .is_ok_and(|t| t.contains("+kubebuilder:object:"))
                })
            })
        })
        .map(|d| {
            let rel: Vec<String> = d
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if rel.is_empty() {
                ".".to_string()
            } else {
                format!("./{}", rel.join("/"))
            }
        })
        .collect()
}

/// The module path declared in root/go.mod.
fn module_path(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("go.mod")).ok()?;
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        let m = rest.trim().trim_matches('"');
        (!m.is_empty() && rest.starts_with(char::is_whitespace)).then(|| m.to_string())
    })
}

/// Add the import paths of Go source `text` that are neither standard library (no dot in the
/// first element) nor inside `module`. Reads the import declarations at the top of the file,
/// single and grouped; stops at the first other declaration.
fn external_imports(text: &str, module: Option<&str>, out: &mut BTreeSet<String>) {
    let mut in_block = false;
    for line in text.lines() {
        let l = line.trim();
        let spec = if in_block {
            if l.starts_with(')') {
                in_block = false;
                continue;
            }
            l
        } else if let Some(rest) = l.strip_prefix("import") {
            let rest = rest.trim_start();
            if let Some(inner) = rest.strip_prefix('(') {
                in_block = true;
                inner.trim_start()
            } else {
                rest
            }
        } else if l.starts_with("func ")
            || l.starts_with("type ")
            || l.starts_with("var ")
            || l.starts_with("const ")
        {
            break;
        } else {
            continue;
        };
        let Some(start) = spec.find('"') else {
            continue;
        };
        let Some(len) = spec[start + 1..].find('"') else {
            continue;
        };
        let path = &spec[start + 1..start + 1 + len];
        let first = path.split('/').next().unwrap_or("");
        let inside = module.is_some_and(|m| path == m || path.starts_with(&format!("{m}/")));
        if first.contains('.') && !inside {
            out.insert(path.to_string());
        }
    }
}

/// The command line that runs `steps` from the directory the user is in.
fn remaining(root: &Path, steps: &[Step]) -> String {
    let cmds: Vec<String> = steps.iter().map(Step::display).collect();
    if root == Path::new(".") {
        cmds.join(" && ")
    } else {
        format!("cd {} && {}", root.display(), cmds.join(" && "))
    }
}

fn killed_by_sigint(status: &std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal() == Some(sigint::SIGINT)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        false
    }
}

/// Ctrl-C while a step runs: the terminal sends SIGINT to the step and to opbuilder. The step
/// stops; opbuilder notes it and lives on to say what is left to run.
#[cfg(unix)]
mod sigint {
    use std::sync::atomic::{AtomicBool, Ordering};

    pub const SIGINT: i32 = 2;
    const SIG_ERR: usize = usize::MAX;
    static INTERRUPTED: AtomicBool = AtomicBool::new(false);

    extern "C" {
        // From the C library std already links; `sighandler_t` is a pointer-sized value.
        fn signal(signum: i32, handler: usize) -> usize;
    }

    extern "C" fn on_sigint(_: i32) {
        INTERRUPTED.store(true, Ordering::SeqCst);
    }

    /// Catches SIGINT while it lives, then puts the previous disposition back. A caught signal
    /// is reset to its default by `exec`, so the step itself still stops on Ctrl-C.
    pub struct Guard(Option<usize>);

    impl Guard {
        pub fn install() -> Guard {
            INTERRUPTED.store(false, Ordering::SeqCst);
            let handler: extern "C" fn(i32) = on_sigint;
            // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
            let previous = unsafe { signal(SIGINT, handler as usize) };
            Guard((previous != SIG_ERR).then_some(previous))
        }

        pub fn interrupted(&self) -> bool {
            INTERRUPTED.load(Ordering::SeqCst)
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            if let Some(previous) = self.0 {
                // SAFETY: restores the disposition `signal` returned.
                unsafe { signal(SIGINT, previous) };
            }
        }
    }
}

#[cfg(not(unix))]
mod sigint {
    pub const SIGINT: i32 = 2;
    pub struct Guard;
    impl Guard {
        pub fn install() -> Guard {
            Guard
        }
        pub fn interrupted(&self) -> bool {
            false
        }
    }
}

/// `go version` → (major, minor, patch), when Go is installed.
pub fn go_version() -> Option<(u32, u32, u32)> {
    let out = Command::new("go").arg("version").output().ok()?;
    parse_go_version(&String::from_utf8_lossy(&out.stdout))
}

pub fn parse_go_version(text: &str) -> Option<(u32, u32, u32)> {
    let word = text
        .split_whitespace()
        .find(|w| w.starts_with("go1") || w.starts_with("go2"))?;
    let v = &word[2..];
    let numeric: String = v
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let mut parts = numeric.split('.').map(|p| p.parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imports(text: &str) -> Vec<String> {
        let mut out = BTreeSet::new();
        external_imports(text, Some("example.com/bench"), &mut out);
        out.into_iter().collect()
    }

    #[test]
    fn reads_external_imports_only() {
        let go = "// +build tools\n\npackage x\n\nimport \"k8s.io/api/core/v1\"\nimport (\n\t\"fmt\"\n\n\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\" // meta\n\t_ \"sigs.k8s.io/x\"\n\tshipv1 \"example.com/bench/api/v1\"\n\t\"example.com/benchmark/y\"\n)\n\nfunc f() { _ = \"not.an/import\" }\nimport \"after.func/z\"\n";
        assert_eq!(
            imports(go),
            [
                "example.com/benchmark/y",
                "k8s.io/api/core/v1",
                "k8s.io/apimachinery/pkg/apis/meta/v1",
                "sigs.k8s.io/x"
            ]
        );
    }

    #[test]
    fn tidy_only_for_new_imports_or_without_go_sum() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(d.join("go.mod"), "module example.com/bench\n\ngo 1.26.0\n").unwrap();
        std::fs::create_dir_all(d.join("cmd")).unwrap();
        std::fs::create_dir_all(d.join("vendor/v")).unwrap();
        std::fs::write(
            d.join("cmd/main.go"),
            "package main\n\nimport (\n\t\"os\"\n\n\t\"k8s.io/a\"\n)\n",
        )
        .unwrap();
        std::fs::write(
            d.join("vendor/v/v.go"),
            "package v\n\nimport \"k8s.io/vendored\"\n",
        )
        .unwrap();
        let before = project_imports(d);
        assert_eq!(before.iter().collect::<Vec<_>>(), ["k8s.io/a"]);
        let written = vec![PathBuf::from("api/v1/t.go")];
        std::fs::create_dir_all(d.join("api/v1")).unwrap();
        std::fs::write(
            d.join("api/v1/t.go"),
            "package v1\n\nimport (\n\t\"k8s.io/a\"\n\t\"example.com/bench/internal\"\n)\n",
        )
        .unwrap();
        // No go.sum yet: tidy writes it.
        assert!(tidy_needed(d, &before, &written));
        std::fs::write(d.join("go.sum"), "").unwrap();
        assert!(!tidy_needed(d, &before, &written));
        std::fs::write(
            d.join("api/v1/t.go"),
            "package v1\n\nimport \"k8s.io/vendored\"\n",
        )
        .unwrap();
        assert!(tidy_needed(d, &before, &written));
    }

    #[test]
    fn generate_only_for_packages_with_object_markers() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::create_dir_all(d.join("api/v1")).unwrap();
        std::fs::create_dir_all(d.join("internal/webhook/v1")).unwrap();
        std::fs::write(
            d.join("api/v1/groupversion_info.go"),
            "// +kubebuilder:object:generate=true\npackage v1\n",
        )
        .unwrap();
        std::fs::write(d.join("api/v1/frigate_conversion.go"), "package v1\n").unwrap();
        std::fs::write(d.join("internal/webhook/v1/w.go"), "package v1\n").unwrap();
        let hook = vec![
            PathBuf::from("internal/webhook/v1/w.go"),
            PathBuf::from("cmd/main.go"),
        ];
        assert!(generate_packages(d, &hook).is_empty());
        let conv = vec![
            PathBuf::from("api/v1/frigate_conversion.go"),
            PathBuf::from("api/v1/groupversion_info.go"),
            PathBuf::from("internal/webhook/v1/w.go"),
        ];
        assert_eq!(generate_packages(d, &conv), ["./api/v1"]);
        std::fs::create_dir_all(d.join("api/v2")).unwrap();
        std::fs::write(
            d.join("api/v2/groupversion_info.go"),
            "// +kubebuilder:object:generate=true\npackage v2\n",
        )
        .unwrap();
        let both = vec![
            PathBuf::from("api/v2/groupversion_info.go"),
            PathBuf::from("api/v1/frigate_conversion.go"),
        ];
        assert_eq!(generate_packages(d, &both), ["./api/v1", "./api/v2"]);
        assert_eq!(
            Step::Generate(generate_packages(d, &both)).display(),
            "make generate GENERATE_PATHS='./api/v1;./api/v2'"
        );
    }

    #[test]
    fn parses_go_versions() {
        assert_eq!(
            parse_go_version("go version go1.26.8 linux/amd64"),
            Some((1, 26, 8))
        );
        assert_eq!(
            parse_go_version("go version go1.23rc1 linux/amd64"),
            Some((1, 23, 0))
        );
        assert_eq!(parse_go_version("go version devel"), None);
    }
}
