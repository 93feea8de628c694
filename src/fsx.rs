//! File-system primitives for the transaction: bounded reads of regular files only, files
//! created with `O_CREAT|O_EXCL|O_NOFOLLOW` under unpredictable names, fsync of exactly the files
//! and directories a transaction wrote, and the failure-injection seam the fault tests drive.
//!
//! The seam: in debug builds (what `cargo test` and the e2e scripts run), every transaction
//! step (open, write, sync, link, rename, remove, mkdir) first calls [`step`], which reads
//! - `OPBUILDER_FAILPOINT=N`: the N-th forward step fails with an injected error;
//! - `OPBUILDER_FAIL_ROLLBACK=1`: every rollback step fails (a rollback that cannot finish);
//! - `OPBUILDER_CRASHPOINT=N`: the process exits at once at the N-th step, like `kill -9`;
//! - `OPBUILDER_STEP_DELAY_MS=N`: sleep before each step, so a real `kill -9` can land anywhere.
//!
//! Release builds compile the seam out.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[cfg(all(target_os = "linux", any(target_arch = "aarch64", target_arch = "arm")))]
pub const O_NOFOLLOW: i32 = 0o100000;
#[cfg(all(
    target_os = "linux",
    not(any(target_arch = "aarch64", target_arch = "arm"))
))]
pub const O_NOFOLLOW: i32 = 0o400000;
#[cfg(target_os = "macos")]
pub const O_NOFOLLOW: i32 = 0x0100;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub const O_NOFOLLOW: i32 = 0;

#[cfg(target_os = "linux")]
const O_NONBLOCK: i32 = 0o4000;
#[cfg(target_os = "macos")]
const O_NONBLOCK: i32 = 0x0004;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
const O_NONBLOCK: i32 = 0;

/// Read `path` if it is a regular file of at most `cap` bytes. `Ok(None)` when it does not
/// exist. FIFOs, devices and sockets are refused without blocking on them (the file is opened
/// non-blocking and checked with fstat before any read).
pub fn read_regular(path: &Path, cap: u64) -> io::Result<Option<Vec<u8>>> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(O_NONBLOCK);
    }
    let f = match opts.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device, socket or directory)",
        ));
    }
    if meta.len() > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("larger than {} KiB ({} bytes)", cap / 1024, meta.len()),
        ));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    f.take(cap.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("larger than {} KiB", cap / 1024),
        ));
    }
    Ok(Some(buf))
}

/// Read a regular UTF-8 text file of at most `cap` bytes; `Ok(None)` when it does not exist.
pub fn read_text(path: &Path, cap: u64) -> io::Result<Option<String>> {
    match read_regular(path, cap)? {
        None => Ok(None),
        Some(b) => String::from_utf8(b)
            .map(Some)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text")),
    }
}

/// Create a new file: `O_CREAT|O_EXCL|O_NOFOLLOW`, write-only, with `mode`.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    step("open", path)?;
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(mode).custom_flags(O_NOFOLLOW);
    }
    #[cfg(not(unix))]
    let _ = mode;
    opts.open(path)
}

/// 16 hex digits from the kernel's random source (falling back to time, pid and address
/// entropy where there is none), for temporary and backup names nobody can predict.
pub fn random_token() -> String {
    use std::sync::Mutex;
    // One read of the random source serves 64 names (a transaction makes about two per file).
    static POOL: Mutex<(Vec<u8>, usize)> = Mutex::new((Vec::new(), 0));
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if pool.1 + 8 > pool.0.len() {
        let mut buf = vec![0u8; 512];
        if File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut buf))
            .is_err()
        {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let local = 0u8;
            let mut x = (t as u64)
                ^ (u64::from(std::process::id()) << 32)
                ^ (&local as *const u8 as u64).rotate_left(17);
            for chunk in buf.chunks_mut(8) {
                // splitmix64 steps, so the fallback names differ from one another
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                chunk.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
            }
        }
        *pool = (buf, 0);
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let at = pool.1;
    pool.1 += 8;
    let mut out = String::with_capacity(16);
    for &b in &pool.0[at..at + 8] {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

/// `root.join(rel)` in one allocation of the right size (the transaction joins a lot).
pub fn join(root: &Path, rel: &Path) -> std::path::PathBuf {
    let mut p =
        std::path::PathBuf::with_capacity(root.as_os_str().len() + rel.as_os_str().len() + 1);
    p.push(root);
    p.push(rel);
    p
}

/// `p.parent()`, found as the text before the last `/` when `p` is plain (no trailing `/`, no
/// doubled `/` and no `.` at its end, as every path of a plan and every path joined from one):
/// std's component parser costs a transaction about a tenth of its instructions (issue 50).
/// Anything else goes to std.
pub fn parent(p: &Path) -> Option<&Path> {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    let plain = |d: &[u8]| !d.ends_with(b"/") && !d.ends_with(b"/.") && d != b".";
    match memchr::memrchr(b'/', b) {
        Some(0) if b.len() > 1 && plain(b) => Some(Path::new("/")),
        Some(i) if i > 0 && plain(b) && plain(&b[..i]) && i + 1 < b.len() => {
            Some(Path::new(std::ffi::OsStr::from_bytes(&b[..i])))
        }
        None if !b.is_empty() && plain(b) => Some(Path::new("")),
        _ => p.parent(),
    }
}

/// FNV-1a, the hasher of [`PathMap`]: std's SipHash costs a plan's path maps several hundred
/// instructions a lookup (issue 50); the keys are a command's own few dozen paths, so there is
/// no flooding to defend against.
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// A map keyed by path, hashed with [`Fnv`].
pub type PathMap<V> =
    std::collections::HashMap<std::path::PathBuf, V, std::hash::BuildHasherDefault<Fnv>>;

/// fsync a directory, so the names created, renamed or removed in it are durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    step("sync", dir)?;
    if !fsync_enabled() {
        return Ok(());
    }
    File::open(dir)?.sync_all()
}

/// How many fsyncs [`sync_all`] keeps in flight at once.
const SYNC_PARALLEL: usize = 8;

/// Make `files` (their content, size and mode) and the entries of `dirs` durable: an fsync of
/// each, and nothing else, so a command waits for its own bytes only, however much unwritten
/// data other processes have on the same file system (a `syncfs` would wait for all of it).
///
/// Batched: the fsyncs run on up to [`SYNC_PARALLEL`] threads, so the file system and the disk
/// receive them together and can serve several with one journal commit and one cache flush
/// (ext4 and the block layer merge concurrent ones); one after the other, each waits for its
/// own, which took twice as long here (docs/testing.md, "Benchmark"). `root` only names the
/// step for the failure seam, which counts the whole call as one step.
pub fn sync_all(
    root: &Path,
    files: &[std::path::PathBuf],
    dirs: &[std::path::PathBuf],
) -> io::Result<()> {
    step("sync", root)?;
    if !fsync_enabled() {
        return Ok(());
    }
    let all: Vec<&Path> = files.iter().chain(dirs).map(|p| p.as_path()).collect();
    let threads = all.len().min(SYNC_PARALLEL);
    if threads <= 1 {
        return all.iter().try_for_each(|p| File::open(p)?.sync_all());
    }
    // Thread k syncs paths k, k + threads, k + 2 * threads, ...
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|k| {
                let all = &all;
                s.spawn(move || {
                    all.iter()
                        .skip(k)
                        .step_by(threads)
                        .try_for_each(|p| File::open(p)?.sync_all())
                })
            })
            .collect();
        // Every worker is waited for; the first error is the answer.
        let mut result = Ok(());
        for w in workers {
            let r = w.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            result = result.and(r);
        }
        result
    })
}

/// fsync a file's data and metadata.
pub fn sync_file(f: &File, path: &Path) -> io::Result<()> {
    step("sync", path)?;
    if !fsync_enabled() {
        return Ok(());
    }
    f.sync_all()
}

/// `OPBUILDER_FSYNC=0` turns fsync off (the steps still count for the failure seam). It exists
/// to measure what fsync costs (e2e/bench.sh) and to keep the fault loops fast.
fn fsync_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("OPBUILDER_FSYNC").map_or(true, |v| v != "0"))
}

static STEPS: AtomicUsize = AtomicUsize::new(0);
static IN_ROLLBACK: AtomicBool = AtomicBool::new(false);

/// Mark the steps that follow as rollback steps (or forward steps again).
pub fn set_rollback(on: bool) {
    IN_ROLLBACK.store(on, Ordering::SeqCst);
}

/// Set while `alpha update` scaffolds its scratch trees (outside the project): their steps are
/// not counted, so the failpoints land in the transaction on the user's tree.
static SCRATCH: AtomicBool = AtomicBool::new(false);

/// Run `f`, whose writes go to a scratch directory, outside the failure-injection seam.
pub fn scratch<T>(f: impl FnOnce() -> T) -> T {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            SCRATCH.store(false, Ordering::SeqCst);
        }
    }
    SCRATCH.store(true, Ordering::SeqCst);
    let _reset = Reset;
    f()
}

/// Every regular file below `dir`, by path relative to it, with its text.
pub fn read_tree(
    dir: &Path,
) -> anyhow::Result<std::collections::BTreeMap<std::path::PathBuf, String>> {
    use anyhow::Context;
    fn walk(
        root: &Path,
        dir: &Path,
        out: &mut std::collections::BTreeMap<std::path::PathBuf, String>,
    ) -> anyhow::Result<()> {
        for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let p = e?.path();
            let m = std::fs::symlink_metadata(&p)?;
            if m.is_dir() {
                walk(root, &p, out)?;
            } else if m.is_file() {
                let text = std::fs::read_to_string(&p)
                    .with_context(|| format!("reading {}", p.display()))?;
                out.insert(
                    p.strip_prefix(root).expect("below root").to_path_buf(),
                    text,
                );
            }
        }
        Ok(())
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out)?;
    Ok(out)
}

/// One transaction step is about to happen: the failure-injection seam (debug builds only).
#[cfg(debug_assertions)]
pub fn step(what: &str, path: &Path) -> io::Result<()> {
    fn env_num(name: &str) -> Option<u64> {
        std::env::var(name).ok()?.trim().parse().ok()
    }
    if let Some(ms) = env_num("OPBUILDER_STEP_DELAY_MS") {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    if SCRATCH.load(Ordering::SeqCst) {
        return Ok(());
    }
    if IN_ROLLBACK.load(Ordering::SeqCst) {
        if std::env::var_os("OPBUILDER_FAIL_ROLLBACK").is_some() {
            return Err(io::Error::other(format!(
                "injected failure in rollback at {what} {}",
                path.display()
            )));
        }
        return Ok(());
    }
    let n = STEPS.fetch_add(1, Ordering::SeqCst) as u64 + 1;
    if env_num("OPBUILDER_CRASHPOINT") == Some(n) {
        std::process::exit(86);
    }
    if env_num("OPBUILDER_FAILPOINT") == Some(n) {
        return Err(io::Error::other(format!(
            "injected failure at step {n} ({what} {})",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn step(_what: &str, _path: &Path) -> io::Result<()> {
    let _ = (&STEPS, &IN_ROLLBACK);
    Ok(())
}

/// `fs::rename` behind the seam.
pub fn rename(from: &Path, to: &Path) -> io::Result<()> {
    step("rename", to)?;
    fs::rename(from, to)
}

/// `fs::hard_link` behind the seam.
pub fn hard_link(from: &Path, to: &Path) -> io::Result<()> {
    step("link", to)?;
    fs::hard_link(from, to)
}

/// `fs::remove_file` behind the seam.
pub fn remove_file(path: &Path) -> io::Result<()> {
    step("remove", path)?;
    fs::remove_file(path)
}

/// `fs::create_dir` behind the seam.
pub fn create_dir(path: &Path) -> io::Result<()> {
    step("mkdir", path)?;
    fs::create_dir(path)
}

/// `write_all` behind the seam.
pub fn write_all(f: &mut File, path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    step("write", path)?;
    f.write_all(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parent_is_std_parent() {
        for p in [
            "",
            "/",
            "a",
            "a/b",
            "/a",
            "/a/b",
            "a//b",
            "a/b/",
            "a/.",
            "./a",
            "a/..",
            ".",
            "..",
            "//a",
            "a/b/c.go",
            "/tmp/x/config/rbac/role.yaml",
            "a/./b",
            "../a",
        ] {
            let p = std::path::Path::new(p);
            assert_eq!(super::parent(p), p.parent(), "{}", p.display());
        }
    }

    use super::*;

    #[cfg(unix)]
    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        assert!(read_regular(&fifo, 1024).is_err());
        assert!(read_regular(Path::new("/dev/zero"), 1024).is_err());
        assert_eq!(read_regular(&t.path().join("none"), 1).unwrap(), None);
        fs::write(t.path().join("big"), vec![b'x'; 2048]).unwrap();
        assert!(read_regular(&t.path().join("big"), 1024).is_err());
    }

    #[test]
    fn sync_all_reports_a_path_it_cannot_sync_whichever_worker_has_it() {
        let t = tempfile::tempdir().unwrap();
        let files: Vec<std::path::PathBuf> = (0..20)
            .map(|i| {
                let p = t.path().join(format!("f{i}"));
                fs::write(&p, "x").unwrap();
                p
            })
            .collect();
        let dirs = vec![t.path().to_path_buf()];
        sync_all(t.path(), &files, &dirs).unwrap();
        sync_all(t.path(), &files[..1], &[]).unwrap();
        for gone in [0, 7, 19] {
            let mut f = files.clone();
            f[gone] = t.path().join("missing");
            let e = sync_all(t.path(), &f, &dirs).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::NotFound, "file {gone}");
        }
        let e = sync_all(t.path(), &files, &[t.path().join("no-dir")]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = sync_all(t.path(), &[t.path().join("missing")], &[]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[cfg(unix)]
    #[test]
    fn create_new_refuses_existing_names_and_symlinks() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("target");
        std::os::unix::fs::symlink(&target, t.path().join("link")).unwrap();
        assert!(create_new(&t.path().join("link"), 0o644).is_err());
        assert!(!target.exists());
        create_new(&t.path().join("f"), 0o644).unwrap();
        assert!(create_new(&t.path().join("f"), 0o644).is_err());
        assert_ne!(random_token(), random_token());
    }
}
