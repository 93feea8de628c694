//! kopium, which turns another project's CustomResourceDefinition into Rust types (a struct with
//! `#[derive(CustomResource)]` and its spec and status): found where the project's
//! `hack/kopium.sh` looks for it, installed with cargo into the cache every project on the
//! machine shares when it is in none of those places, and run on a CRD with rustfmt after it,
//! so that what `create api` writes is what `make external-types` writes again.
//!
//! The places, in order: `KOPIUM` (a path or a command, used as it is), the cache
//! (`${XDG_CACHE_HOME:-~/.cache}/opbuilder/kopium/<version>/bin/kopium`), `kopium` on PATH.
//! Each must report the pinned version (`[rust] kopium` of versions.toml).

use anyhow::{anyhow, bail, Context, Result};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// kopium's options, after `-f -` and `--api-version <version>`: doc comments from the
/// CRD's descriptions, and `Default` where every field has one (so that a spec can be written
/// with `..Default::default()`). `hack/kopium.sh` passes the same, in the same order: kopium
/// writes its command line into the file.
pub const OPTIONS: &[&str] = &["--docs", "--derive", "Default", "--smart-derive-elision"];

/// The cache of kopium `version`, shared by every project on this machine.
pub fn cache_dir(version: &str) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("opbuilder").join("kopium").join(version))
}

/// The version a kopium executable reports (`kopium 0.24.1` → `0.24.1`), or why it reports none.
fn version_of(program: &Path) -> Result<String, String> {
    let out = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run it: {e}"))?;
    if !out.status.success() {
        return Err(format!("`--version` failed ({})", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    match text.trim().strip_prefix("kopium ") {
        Some(v) => Ok(v.trim().to_string()),
        None => Err(format!(
            "`--version` says {:?}, not `kopium <version>`",
            text.trim()
        )),
    }
}

/// A command on PATH, as a path.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A kopium of the pinned version, ready to run.
pub struct Kopium {
    program: PathBuf,
}

/// How to get kopium `version` by hand, for the refusals.
fn how_to_get(version: &str) -> String {
    format!(
        "install it with `cargo install --locked kopium --version {version}` (on PATH then), or point \
         KOPIUM at a kopium {version}"
    )
}

/// Find kopium `version`; install it with cargo into the cache when it is nowhere. `why` says
/// what it is needed for (in the refusal).
pub fn find_or_install(version: &str, why: &str) -> Result<Kopium> {
    if version.is_empty() {
        bail!("{why}: these templates pin no kopium version (a release before kopium was pinned)");
    }
    let refuse =
        |what: String| anyhow!("{why}, kopium {version} is needed and cannot be had: {what}");
    if let Some(k) = std::env::var_os("KOPIUM").filter(|v| !v.is_empty()) {
        let given = PathBuf::from(&k);
        let program = if given.components().count() > 1 {
            given
        } else {
            on_path(&given.to_string_lossy()).unwrap_or(given)
        };
        return match version_of(&program) {
            Ok(v) if v == version => Ok(Kopium { program }),
            Ok(v) => Err(refuse(format!(
                "KOPIUM={} is kopium {v}; the project pins {version} (versions differ in the types they write). \
                 Unset KOPIUM, or {}",
                k.to_string_lossy(),
                how_to_get(version)
            ))),
            Err(e) => Err(refuse(format!(
                "KOPIUM={}: {e}. Unset KOPIUM, or {}",
                k.to_string_lossy(),
                how_to_get(version)
            ))),
        };
    }
    let cache = cache_dir(version);
    let cached = cache.as_ref().map(|c| c.join("bin").join("kopium"));
    if let Some(p) = cached.as_ref().filter(|p| p.is_file()) {
        if version_of(p).as_deref() == Ok(version) {
            return Ok(Kopium { program: p.clone() });
        }
    }
    if let Some(p) = on_path("kopium") {
        if version_of(&p).as_deref() == Ok(version) {
            return Ok(Kopium { program: p });
        }
    }
    let (Some(cache), Some(cached)) = (cache, cached) else {
        return Err(refuse(format!(
            "neither XDG_CACHE_HOME nor HOME is set, so there is no cache to install it into; {}",
            how_to_get(version)
        )));
    };
    let Some(cargo) = on_path("cargo") else {
        return Err(refuse(format!(
            "it is not in {} nor on PATH, and cargo, which would install it there, is not on PATH; {}",
            cached.display(),
            how_to_get(version)
        )));
    };
    install(&cargo, version, &cache)
        .map_err(|e| refuse(format!("{e:#}; {}", how_to_get(version))))?;
    match version_of(&cached) {
        Ok(v) if v == version => Ok(Kopium { program: cached }),
        Ok(v) => Err(refuse(format!(
            "cargo installed kopium {v} into {}",
            cache.display()
        ))),
        Err(e) => Err(refuse(format!("{}: {e}", cached.display()))),
    }
}

/// `cargo install --locked kopium --version <version> --root <cache>`, once at a time (a lock
/// file beside the cache, as hack/kopium.sh takes it).
fn install(cargo: &Path, version: &str, cache: &Path) -> Result<()> {
    let parent = cache.parent().expect("the cache has a parent");
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let lock_path = parent.join(format!("{version}.lock"));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    lock.lock()
        .with_context(|| format!("locking {}", lock_path.display()))?;
    let bin = cache.join("bin").join("kopium");
    if bin.is_file() && version_of(&bin).as_deref() == Ok(version) {
        return Ok(());
    }
    crate::out::errln!(
        "note: installing kopium {version} with cargo into {} (once per version for every project on this \
         machine; cargo compiles it, which takes minutes)",
        cache.display()
    );
    let status = Command::new(cargo)
        .args([
            "install",
            "--locked",
            "--quiet",
            "kopium",
            "--version",
            version,
            "--root",
        ])
        .arg(cache)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .context("running cargo install")?;
    if !status.success() {
        bail!("`cargo install --locked kopium --version {version}` failed ({status}; its errors are above)");
    }
    Ok(())
}

/// Run `program` with `args`, `input` on its stdin; its stdout, or its stderr in the error.
fn pipe(program: &Path, args: &[&str], input: &str, what: &str) -> Result<String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("{what}: cannot start {}", program.display()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let text = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut out)
        .with_context(|| format!("{what}: reading its output"))?;
    let mut err = String::new();
    let _ = child.stderr.take().expect("piped").read_to_string(&mut err);
    let status = child
        .wait()
        .with_context(|| format!("{what}: waiting for it"))?;
    let _ = writer.join();
    if !status.success() {
        bail!("{what} failed ({status}): {}", err.trim());
    }
    Ok(out)
}

impl Kopium {
    /// The Rust types of `version` of the CRD `crd` (YAML), formatted by rustfmt as `cargo fmt`
    /// formats a project of edition 2024.
    pub fn generate(&self, crd: &str, version: &str) -> Result<String> {
        let mut args = vec!["-f", "-", "--api-version", version];
        args.extend_from_slice(OPTIONS);
        let types = pipe(&self.program, &args, crd, "kopium")?;
        let rustfmt = on_path("rustfmt").ok_or_else(|| {
            anyhow!("rustfmt, which formats kopium's output, is not on PATH (rustup component add rustfmt)")
        })?;
        pipe(
            &rustfmt,
            &["--edition", "2024", "--emit", "stdout", "--quiet"],
            &types,
            "rustfmt on kopium's output",
        )
    }
}
