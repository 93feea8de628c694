//! Template sets of opbuilder releases, for `alpha update` and `alpha check`.
//!
//! The current templates are `scaffolds/` (see [`crate::templates`]). Each earlier release keeps
//! its whole template tree and its `versions.toml` under `releases/<version>/`, embedded in the
//! binary, so a project made by that release can be scaffolded again exactly as it was, without
//! git or network. The commands' planning code is shared: while a release is active (see
//! [`with`]) the template lookups, the pins and the recorded `cliVersion` come from that release.
//! e2e/scripts/alpha-update.sh proves that this reproduces what the real release binary wrote.

use include_dir::{include_dir, Dir};
use std::cell::Cell;

/// An earlier release: its version, templates and pins.
pub struct Release {
    pub version: &'static str,
    pub scaffolds: &'static Dir<'static>,
    pub versions_toml: &'static str,
}

static R0_1_0: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/releases/0.1.0/scaffolds");
static R0_2_0: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/releases/0.2.0/scaffolds");
static R0_3_0: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/releases/0.3.0/scaffolds");
static R0_4_0: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/releases/0.4.0/scaffolds");

/// Earlier releases, oldest first. Adding one: copy `scaffolds/` and `versions.toml` of the
/// release commit to `releases/<version>/` and list it here.
pub static RELEASES: &[Release] = &[
    Release {
        version: "0.1.0",
        scaffolds: &R0_1_0,
        versions_toml: include_str!("../releases/0.1.0/versions.toml"),
    },
    Release {
        version: "0.2.0",
        scaffolds: &R0_2_0,
        versions_toml: include_str!("../releases/0.2.0/versions.toml"),
    },
    Release {
        version: "0.3.0",
        scaffolds: &R0_3_0,
        versions_toml: include_str!("../releases/0.3.0/versions.toml"),
    },
    Release {
        version: "0.4.0",
        scaffolds: &R0_4_0,
        versions_toml: include_str!("../releases/0.4.0/versions.toml"),
    },
];

thread_local! {
    static ACTIVE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The index in [`RELEASES`] of the active earlier release; `None` for the current templates.
pub fn active() -> Option<usize> {
    ACTIVE.with(Cell::get)
}

/// The version of the active earlier release, if one is active (for release-specific planning).
pub fn active_version() -> Option<&'static str> {
    active().map(|i| RELEASES[i].version)
}

/// The version of the current templates (this binary's, or `OPBUILDER_TEST_VERSION`).
pub fn current_version() -> String {
    std::env::var("OPBUILDER_TEST_VERSION")
        .unwrap_or_else(|_| env!("CARGO_PKG_VERSION").to_string())
}

/// Every version whose templates this binary holds, oldest first; the current one last.
pub fn known() -> Vec<String> {
    let mut v: Vec<String> = RELEASES.iter().map(|r| r.version.to_string()).collect();
    let cur = current_version();
    if !v.contains(&cur) {
        v.push(cur);
    }
    v
}

/// Whether `version` names a template set this binary holds.
pub fn is_known(version: &str) -> bool {
    known().iter().any(|k| k == version)
}

/// Run `f` with the templates, pins and `cliVersion` of `version` (which must be known; the
/// current version runs with the current templates).
pub fn with<T>(version: &str, f: impl FnOnce() -> T) -> T {
    let idx = if version == current_version() {
        None
    } else {
        Some(
            RELEASES
                .iter()
                .position(|r| r.version == version)
                .unwrap_or_else(|| panic!("release {version} is not embedded")),
        )
    };
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ACTIVE.with(|a| a.set(self.0));
        }
    }
    let _restore = Restore(ACTIVE.with(|a| a.replace(idx)));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_and_switch() {
        for r in RELEASES {
            assert!(r.scaffolds.get_dir("init").is_some(), "{}", r.version);
            let pins: crate::versions::Pins = toml::from_str(r.versions_toml).unwrap();
            assert!(pins.scaffold.controller_runtime.starts_with('v'));
        }
        assert!(is_known("0.1.0"));
        assert!(!is_known("0.0.9"));
        assert_eq!(active(), None);
        let v = with("0.1.0", || {
            assert_eq!(active(), Some(0));
            crate::versions::cli_version()
        });
        assert_eq!(v, "0.1.0");
        assert_eq!(active(), None);
    }
}
