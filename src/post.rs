//! Steps that run after the files are written: `go mod tidy`, `make generate`.
//! They never touch the transaction: if one fails, the scaffolded files stay as written and the
//! user is told what to run by hand.

use crate::error::Interrupted;
use crate::out::outln;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    GoModTidy,
    /// `go get <module>` (external APIs).
    GoGet(String),
    Make(&'static str),
}

impl Step {
    fn program(&self) -> &'static str {
        match self {
            Step::GoModTidy | Step::GoGet(_) => "go",
            Step::Make(_) => "make",
        }
    }

    pub fn display(&self) -> String {
        match self {
            Step::GoModTidy => "go mod tidy".into(),
            Step::GoGet(m) => format!("go get {m}"),
            Step::Make(t) => format!("make {t}"),
        }
    }

    fn explain(&self) -> &'static str {
        match self {
            Step::GoModTidy => {
                "resolving Go dependencies; the first run downloads modules and can take a minute"
            }
            Step::GoGet(_) => "adding the module that provides the external API",
            Step::Make(_) => "running controller-gen; the first run builds it into ./bin",
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
pub fn run(root: &Path, steps: &[Step]) -> Result<()> {
    if steps.is_empty() {
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
    let total = steps.len();
    for (i, step) in steps.iter().enumerate() {
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
    Ok(())
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
