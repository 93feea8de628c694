//! Helpers shared by the integration tests under e2e/.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Fixed inputs that make output reproducible: the version in PROJECT and the license year.
pub const TEST_VERSION: &str = "0.0.0-test";
pub const SOURCE_DATE_EPOCH: &str = "1767225600"; // 2026-01-01T00:00:00Z

/// Bytes a command printed, as text (invalid UTF-8 replaced).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// The text of `rel` under `dir`; panics naming the file when it cannot be read.
pub fn read(dir: &Path, rel: &str) -> String {
    fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// An `opbuilder` command running in `dir` with reproducible settings and no Go post-steps.
pub fn opbuilder(dir: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("opbuilder").expect("binary built");
    c.current_dir(dir)
        .env("OPBUILDER_TEST_VERSION", TEST_VERSION)
        .env("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
        .env_remove("GOFLAGS")
        // External plugins: none but those a test installs (it sets EXTERNAL_PLUGINS_PATH).
        .env_remove("EXTERNAL_PLUGINS_PATH")
        .env("XDG_CONFIG_HOME", NO_CONFIG);
    c
}

/// The `XDG_CONFIG_HOME` of every test command: a directory that does not exist, so that no
/// external plugin of the machine's user is found.
pub const NO_CONFIG: &str = "/nonexistent/opbuilder-test-config";

/// Run opbuilder with `args` in `dir`.
pub fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    opbuilder(dir).args(args).output().unwrap()
}

/// Run opbuilder with `args` in `dir`, which must succeed; its stderr (notes, warnings).
pub fn ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?} failed:\n{err}");
    err
}

/// `args` exits `code`, names every needle on stderr and leaves `dir` as it was.
pub fn refused(dir: &Path, args: &[&str], code: i32, needles: &[&str]) {
    let before = full_snapshot(dir);
    let out = run(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}\n{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: stderr lacks {n:?}:\n{err}");
    }
    assert_eq!(before, full_snapshot(dir), "{args:?} changed files");
}

/// PROJECT in `dir`, parsed.
pub fn project_yaml(dir: &Path) -> serde_yaml::Value {
    serde_yaml::from_str(&read(dir, "PROJECT")).unwrap()
}

/// The case directories under `e2e/<under>` (those holding a `commands` script), sorted.
pub fn script_dirs(under: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("e2e")
        .join(under);
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("commands").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Copy a tree of plain files and directories into the existing directory `to`, keeping modes
/// and the hard links inside it.
pub fn copy_tree(from: &Path, to: &Path) {
    fn copy(from: &Path, to: &Path, seen: &mut BTreeMap<(u64, u64), PathBuf>) {
        use std::os::unix::fs::MetadataExt;
        for e in fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let (src, dst) = (e.path(), to.join(e.file_name()));
            let m = fs::symlink_metadata(&src).unwrap();
            if m.is_dir() {
                fs::create_dir(&dst).unwrap();
                copy(&src, &dst, seen);
                fs::set_permissions(&dst, m.permissions()).unwrap();
            } else if let Some(first) = seen.get(&(m.dev(), m.ino())) {
                fs::hard_link(first, &dst).unwrap();
            } else {
                fs::copy(&src, &dst).unwrap();
                if m.nlink() > 1 {
                    seen.insert((m.dev(), m.ino()), dst);
                }
            }
        }
    }
    copy(from, to, &mut BTreeMap::new());
}

/// Split a command line into words as a shell does: double and single quotes group (and are
/// removed), an unquoted word starting with `#` begins a comment (the rest is dropped), and
/// `&&`, `||`, `|` and `;` are words of their own.
pub fn split_words(line: &str) -> Vec<String> {
    let mut words = vec![];
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut has = false;
    let mut chars = line.chars().peekable();
    let flush = |cur: &mut String, has: &mut bool, words: &mut Vec<String>| {
        if *has || !cur.is_empty() {
            words.push(std::mem::take(cur));
            *has = false;
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                has = true;
            }
            (None, '#') if cur.is_empty() && !has => break,
            (None, ';') => {
                flush(&mut cur, &mut has, &mut words);
                words.push(";".into());
            }
            (None, '&' | '|') if chars.peek() == Some(&c) => {
                chars.next();
                flush(&mut cur, &mut has, &mut words);
                words.push(format!("{c}{c}"));
            }
            (None, '|') => {
                flush(&mut cur, &mut has, &mut words);
                words.push("|".into());
            }
            (None, c) if c.is_whitespace() => flush(&mut cur, &mut has, &mut words),
            (None, c) => cur.push(c),
        }
    }
    flush(&mut cur, &mut has, &mut words);
    words
}

/// Every file below `root` (relative path → bytes); directories are implied.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    if root.exists() {
        walk(root, root, &mut out);
    }
    out
}

/// Every path below `root` including directories, with file bytes (for "untouched" checks).
pub fn full_snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if p.is_dir() {
                out.insert(rel, None);
                walk(root, &p, out);
            } else {
                out.insert(rel, Some(fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// `opbuilder init` of the `guestbook` test project in `dir` (no post-steps), plus `extra` flags.
pub fn init_project(dir: &Path, extra: &[&str]) {
    let mut args = vec![
        "init",
        "--domain",
        "example.com",
        "--repo",
        "example.com/guestbook",
        "--project-name",
        "guestbook",
        "--skip-post-steps",
    ];
    args.extend_from_slice(extra);
    opbuilder(dir).args(&args).assert().success();
}
