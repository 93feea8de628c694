//! Running an external plugin: one JSON request on its stdin, its stdout read whole, its stderr
//! passed through to ours. It runs in its own process group in the project root; if it has not
//! exited after the timeout (`OPBUILDER_PLUGIN_TIMEOUT` seconds, 120 by default), the whole
//! group is killed, so a script's children cannot keep it alive.

use anyhow::{anyhow, bail, Context, Result};
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The timeout when `OPBUILDER_PLUGIN_TIMEOUT` is not set.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// The most a plugin may print on stdout (its response holds whole files, but not without end).
const MAX_OUTPUT: u64 = 512 << 20;

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}
const SIGKILL: i32 = 9;

/// The timeout from `OPBUILDER_PLUGIN_TIMEOUT`, checked.
pub fn timeout() -> Result<Duration> {
    match std::env::var("OPBUILDER_PLUGIN_TIMEOUT") {
        Err(_) => Ok(Duration::from_secs(DEFAULT_TIMEOUT_SECS)),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(s) if s > 0.0 && s.is_finite() && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
            _ => Err(crate::error::usage(format!(
                "OPBUILDER_PLUGIN_TIMEOUT={v:?} is not a number of seconds between 0 and 86400; for example \
                 OPBUILDER_PLUGIN_TIMEOUT=300"
            ))),
        },
    }
}

/// Run the executable `path` in `dir` with `input` on its stdin; its stdout. `what` names the
/// plugin and the request in errors.
pub fn call(path: &Path, dir: &Path, input: Vec<u8>, what: &str) -> Result<Vec<u8>> {
    let limit = timeout()?;
    let mut child = Command::new(path)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            let hint = match e.kind() {
                std::io::ErrorKind::NotFound => {
                    " (for a script: is the interpreter on its first line, such as #!/usr/bin/env python3, installed?)"
                }
                std::io::ErrorKind::PermissionDenied => " (make it executable: chmod +x)",
                _ => "",
            };
            anyhow!("{what}: cannot start {}: {e}{hint}", path.display())
        })?;
    let pid = child.id() as i32;
    let mut stdin = child.stdin.take().expect("piped");
    // Both ends at once: a plugin may answer before it has read the whole request.
    let writer = std::thread::spawn(move || {
        // A plugin that exits without reading its input closes the pipe: not our error.
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = vec![];
        let r = (&mut stdout).take(MAX_OUTPUT + 1).read_to_end(&mut out);
        let _ = tx.send(r.map(|_| out));
    });
    let start = Instant::now();
    let mut status = None;
    while status.is_none() && start.elapsed() < limit {
        status = child
            .try_wait()
            .context("waiting for the external plugin")?;
        if status.is_none() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    // Its output ends when the last writer closes it: the plugin, or a child it left running
    // (which gets the rest of the time, and at least a second to let go).
    let out = match status {
        Some(_) => rx
            .recv_timeout(
                limit
                    .saturating_sub(start.elapsed())
                    .max(Duration::from_secs(1)),
            )
            .ok(),
        None => None,
    };
    let (Some(status), Some(out)) = (status, out) else {
        // The group: a shell script's children go too, and with them our pipe's last writers.
        unsafe {
            kill(-pid, SIGKILL);
        }
        let _ = child.kill();
        let _ = child.wait();
        let _ = writer.join();
        bail!(
            "{what} did not answer within {} and was stopped. Check that it reads its request from stdin and writes one \
             JSON response to stdout; if it needs longer, set OPBUILDER_PLUGIN_TIMEOUT to more seconds \
             (for example OPBUILDER_PLUGIN_TIMEOUT=600)",
            show(limit)
        );
    };
    let _ = writer.join();
    let out = out.with_context(|| format!("{what}: reading its output"))?;
    if !status.success() {
        let how = match (status.code(), status.signal()) {
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(s)) => format!("was killed by signal {s}"),
            _ => "failed".to_string(),
        };
        bail!(
            "{what} {how}; its messages, if it printed any, are above. Nothing was written: fix the plugin or its \
             flags and run the command again"
        );
    }
    if out.len() as u64 > MAX_OUTPUT {
        bail!(
            "{what} printed more than {} MiB on stdout",
            MAX_OUTPUT >> 20
        );
    }
    Ok(out)
}

fn show(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{} s", s as u64)
    } else {
        format!("{s} s")
    }
}
