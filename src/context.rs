//! Values shared by every template: the project half of each rendering context.

use crate::project::Project;
use crate::versions::{self, Scaffold};
use serde::Serialize;
use std::path::Path;

pub const BOILERPLATE_FILE: &str = "hack/boilerplate.go.txt";
/// The license header of a Rust project (rust.opbuilder.io/v1-beta): not named after Go.
pub const RUST_BOILERPLATE_FILE: &str = "hack/boilerplate.rs.txt";

/// The license header file of the project `p` at `root`, relative to it: go/v4's
/// hack/boilerplate.go.txt; for the Rust layout hack/boilerplate.rs.txt, or the
/// hack/boilerplate.go.txt of a project made by 0.4.0 (v1-alpha) when it has no .rs.txt (`alpha
/// update` moves it).
pub fn boilerplate_file(root: &Path, p: &Project) -> &'static str {
    let rust = p.layout.iter().any(|k| crate::project::is_rust_layout(k));
    if rust && !root.join(RUST_BOILERPLATE_FILE).exists() && root.join(BOILERPLATE_FILE).exists() {
        BOILERPLATE_FILE
    } else if rust {
        RUST_BOILERPLATE_FILE
    } else {
        BOILERPLATE_FILE
    }
}
/// The manager's Deployment, which `edit --namespaced` and deploy-image edit.
/// The manager's entry point, where `create` wires types, controllers and webhooks.
pub const MAIN_GO: &str = "cmd/main.go";
pub const MANAGER_FILE: &str = "config/manager/manager.yaml";

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectCtx {
    pub repo: String,
    pub domain: String,
    pub project_name: String,
    pub cli_version: String,
    pub namespaced: bool,
    pub multigroup: bool,
    /// License header for Go files, year filled in, followed by a blank line; or "".
    pub boilerplate: String,
    pub has_boilerplate: bool,
    /// Text of hack/boilerplate.go.txt (with the literal `YEAR`); or "".
    pub boilerplate_file: String,
    pub leader_election_id: String,
    pub versions: Scaffold,
}

impl ProjectCtx {
    pub fn new(p: &Project, boilerplate_file: Option<String>) -> ProjectCtx {
        let boilerplate = boilerplate_file
            .as_deref()
            .filter(|b| !b.trim().is_empty())
            .map(|b| {
                format!(
                    "{}\n\n",
                    replace_year(b.trim_end(), &current_year().to_string())
                )
            })
            .unwrap_or_default();
        ProjectCtx {
            repo: p.repo.clone(),
            domain: p.domain.clone(),
            project_name: p.project_name.clone(),
            cli_version: versions::cli_version(),
            namespaced: p.namespaced,
            multigroup: p.multigroup,
            has_boilerplate: !boilerplate.is_empty(),
            boilerplate,
            boilerplate_file: boilerplate_file.unwrap_or_default(),
            leader_election_id: format!("{}.{}", fnv32a_hex(&p.repo), p.domain),
            versions: versions::pins().scaffold.clone(),
        }
    }

    /// Context for a project on disk: reads its boilerplate file when there is one. A
    /// boilerplate file that cannot be read (permissions, not UTF-8, not a regular file) is an
    /// error: new files would silently lose their license header.
    pub fn load(root: &Path, p: &Project) -> anyhow::Result<ProjectCtx> {
        let file = boilerplate_file(root, p);
        let b = crate::fsx::read_text(&root.join(file), 64 * 1024).map_err(|e| {
            anyhow::anyhow!(
                "{file}: cannot use it as the license header of new files ({e}); \
                 fix it (a UTF-8 /* */ comment), or remove it to scaffold without a header"
            )
        })?;
        Ok(ProjectCtx::new(p, b))
    }
}

/// FNV-1a, 32 bit, as lower-case hex: the leader-election ID prefix Kubebuilder derives from the repo.
pub fn fnv32a_hex(s: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// Replace the word `YEAR` (not part of a longer identifier) with `year`.
pub fn replace_year(text: &str, year: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("YEAR") {
        let prev = if i == 0 {
            out.chars().next_back()
        } else {
            rest[..i].chars().next_back()
        };
        let before_ok = !prev.is_some_and(word);
        let after_ok = !rest[i + 4..].chars().next().is_some_and(word);
        out.push_str(&rest[..i]);
        out.push_str(if before_ok && after_ok { year } else { "YEAR" });
        rest = &rest[i + 4..];
    }
    out.push_str(rest);
    out
}

/// The current year (UTC), or the year of `SOURCE_DATE_EPOCH` for reproducible output.
pub fn current_year() -> i64 {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    year_of(secs)
}

/// The UTC year of a Unix time (civil-from-days, Howard Hinnant's algorithm).
fn year_of(secs: i64) -> i64 {
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    yoe + era * 400 + i64::from(month <= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_kubebuilder_example() {
        // Reference §6: repo sigs.k8s.io/kubebuilder/testdata/project-v4 gives da1d9c86.
        assert_eq!(
            fnv32a_hex("sigs.k8s.io/kubebuilder/testdata/project-v4"),
            "da1d9c86"
        );
    }

    #[test]
    fn year_replacement_respects_word_boundaries() {
        assert_eq!(
            replace_year("Copyright YEAR X. YEARS MYYEAR YEAR_ (YEAR)", "2026"),
            "Copyright 2026 X. YEARS MYYEAR YEAR_ (2026)"
        );
    }

    #[test]
    fn year_from_source_date_epoch_math() {
        assert_eq!(year_of(1_795_305_600), 2026); // 2026-11-22T00:00:00Z
        assert_eq!(year_of(946_684_799), 1999); // 1999-12-31T23:59:59Z
        assert_eq!(year_of(946_684_800), 2000);
        assert_eq!(year_of(0), 1970);
    }
}
