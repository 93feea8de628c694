//! The project lock: one opbuilder at a time per project, from reading PROJECT to the end of
//! the transaction.
//!
//! It is an advisory `flock` on the project directory itself, so the kernel releases it when
//! the holder dies, however it dies, and no lock file is ever left behind (not even after a
//! kill -9 or a Ctrl-C at a question). A waiting command finds the holder's pid in
//! /proc/locks (Linux) to say whom it waits for.

use crate::out::errln;
use anyhow::{anyhow, Result};
use std::fs::{File, TryLockError};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long to wait for another opbuilder, in seconds; `OPBUILDER_LOCK_TIMEOUT` overrides it.
const DEFAULT_TIMEOUT_SECS: f64 = 60.0;

static HELD: Mutex<Option<File>> = Mutex::new(None);

/// The project directory could not be opened (it does not exist, or is not readable).
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

fn timeout() -> Duration {
    let secs = std::env::var("OPBUILDER_LOCK_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(DEFAULT_TIMEOUT_SECS);
    Duration::from_secs_f64(secs)
}

/// The pid holding a `flock` on `f`, from /proc/locks (`N: FLOCK ADVISORY WRITE <pid>
/// <major>:<minor>:<inode> 0 EOF`), matched by inode and device.
fn holder_pid(f: &File) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata().ok()?;
        let dev = m.dev();
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
        let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
        let want = format!("{major:02x}:{minor:02x}:{}", m.ino());
        let locks = std::fs::read_to_string("/proc/locks").ok()?;
        locks.lines().find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.get(1) == Some(&"FLOCK") && w.get(5) == Some(&want.as_str()))
                .then(|| w.get(4)?.parse().ok())
                .flatten()
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = f;
        None
    }
}

/// Take the lock on the project in `root`, waiting for another holder up to the timeout. The
/// lock is held until [`release`] (or the process ends).
pub fn acquire(root: &Path) -> Result<()> {
    let dir = File::open(root).map_err(|e| {
        anyhow::Error::new(OpenError(format!(
            "cannot open the project directory {} to lock it: {e}",
            root.display()
        )))
    })?;
    let start = Instant::now();
    let limit = timeout();
    let mut announced = false;
    loop {
        match dir.try_lock() {
            Ok(()) => {
                *HELD.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir);
                return Ok(());
            }
            Err(TryLockError::WouldBlock) => {
                let pid = holder_pid(&dir)
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
                std::thread::sleep(Duration::from_millis(25));
            }
            Err(TryLockError::Error(e)) => {
                return Err(anyhow!(
                    "locking the project directory {}: {e}",
                    root.display()
                ));
            }
        }
    }
}

/// Release the project lock if held.
pub fn release() {
    if let Some(dir) = HELD.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = dir.unlock();
    }
}
