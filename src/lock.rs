//! The project lock: one opbuilder at a time per project, from reading PROJECT to the end of
//! the transaction.
//!
//! It is an advisory `flock` on `.opbuilder.lock` in the project root, so the kernel releases it
//! when the holder dies, however it dies. The holder writes its pid into the file so a waiting
//! command can say whom it waits for. The file is removed on release; a waiter that locked a
//! file which has meanwhile been removed (its inode is no longer at the path) starts over.

use crate::out::errln;
use anyhow::{anyhow, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const LOCK_FILE: &str = ".opbuilder.lock";
/// How long to wait for another opbuilder, in seconds; `OPBUILDER_LOCK_TIMEOUT` overrides it.
const DEFAULT_TIMEOUT_SECS: f64 = 60.0;

pub struct ProjectLock {
    file: File,
    path: PathBuf,
}

/// The lock file could not be created (a read-only directory, for instance).
#[derive(Debug)]
pub struct OpenError(String);

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OpenError {}

/// Whether `e` is an [`OpenError`].
pub fn is_open_error(e: &anyhow::Error) -> bool {
    e.is::<OpenError>()
}

static HELD: Mutex<Option<ProjectLock>> = Mutex::new(None);

fn timeout() -> Duration {
    let secs = std::env::var("OPBUILDER_LOCK_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(DEFAULT_TIMEOUT_SECS);
    Duration::from_secs_f64(secs)
}

fn same_file(f: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (f.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (f, path);
        true
    }
}

fn holder_pid(f: &mut File) -> Option<u32> {
    let mut s = String::new();
    f.rewind().ok()?;
    f.take(32).read_to_string(&mut s).ok()?;
    s.trim().parse().ok()
}

/// Take the lock on the project in `root`, waiting for another holder up to the timeout. The
/// lock is held until [`release`] (or the process ends).
pub fn acquire(root: &Path) -> Result<()> {
    let path = root.join(LOCK_FILE);
    let start = Instant::now();
    let limit = timeout();
    let mut announced = false;
    loop {
        let mut opts = OpenOptions::new();
        opts.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o644).custom_flags(crate::fsx::O_NOFOLLOW);
        }
        let mut file = opts.open(&path).map_err(|e| {
            anyhow::Error::new(OpenError(format!(
                "cannot open the project lock {}: {e}\n  opbuilder needs to create this file to keep two commands from writing the project at once",
                path.display()
            )))
        })?;
        match file.try_lock() {
            Ok(()) => {
                if !same_file(&file, &path) {
                    continue; // released and removed while we waited: lock the new one
                }
                let _ = file.set_len(0);
                let _ = file.rewind();
                let _ = writeln!(file, "{}", std::process::id());
                *HELD.lock().unwrap_or_else(|e| e.into_inner()) = Some(ProjectLock { file, path });
                return Ok(());
            }
            Err(TryLockError::WouldBlock) => {
                let pid = holder_pid(&mut file)
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "unknown".into());
                if start.elapsed() >= limit {
                    return Err(anyhow!(
                        "another opbuilder (pid {pid}) is still working in this project after {:.0}s; nothing was written.\n  \
                         run the command again when it has finished (set OPBUILDER_LOCK_TIMEOUT=<seconds> to wait longer)",
                        limit.as_secs_f64()
                    ));
                }
                if !announced {
                    errln!("waiting for another opbuilder in this project, pid {pid}");
                    announced = true;
                }
                drop(file);
                std::thread::sleep(Duration::from_millis(25));
            }
            Err(TryLockError::Error(e)) => {
                return Err(anyhow!("locking {}: {e}", path.display()));
            }
        }
    }
}

/// Release the project lock if held: remove the lock file, then unlock.
pub fn release() {
    let held = HELD.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(l) = held {
        let _ = std::fs::remove_file(&l.path);
        let _ = l.file.unlock();
    }
}
