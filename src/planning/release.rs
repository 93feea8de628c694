//! Which templates extend an existing project.
//!
//! Code that `create` and `edit` add must compile against the libraries the project pins. A
//! project made by an earlier opbuilder release still requires that release's controller-runtime
//! (and k8s.io libraries) until `alpha update` raises them, and the current templates may use
//! API that version lacks. So the project's go.mod decides: when it requires an older minor
//! version of controller-runtime than the current templates are written for, and an earlier
//! release embedded in this binary (for `alpha update`) was written for that minor version, the
//! command scaffolds with that release's templates and pins, and says so. A project pinned older
//! than every embedded release gets the current templates with a warning saying how to raise
//! the pin. Kubebuilder writes its own release's templates into any project (see
//! docs/commands.md, "Extending a project made by an earlier release").

use crate::gomod;

/// The module whose version decides.
pub const CONTROLLER_RUNTIME: &str = "sigs.k8s.io/controller-runtime";

/// The templates to extend a project with.
#[derive(Debug, PartialEq, Eq)]
pub enum Templates {
    /// This binary's own.
    Current,
    /// Those of the earlier release with this version; the note says why.
    Release { version: String, note: String },
    /// This binary's own, though the project pins an older controller-runtime than they are
    /// written for and no embedded release matches it; the warning says what to do.
    CurrentNewerThanPins { warning: String },
}

/// What the choice is made from.
pub struct Facts<'a> {
    /// The controller-runtime version the project's go.mod requires, if any.
    pub project: Option<&'a str>,
    /// The one the current templates are written for, and this binary's version.
    pub current: &'a str,
    pub current_version: &'a str,
    /// Each embedded earlier release (version, its controller-runtime), oldest first.
    pub releases: &'a [(String, String)],
    /// PROJECT's `cliVersion`.
    pub cli_version: &'a str,
}

/// Choose the templates (see the module documentation).
pub fn choose(f: &Facts) -> Templates {
    let Some(project) = f.project else {
        return Templates::Current;
    };
    let have = gomod::minor(project);
    if have >= gomod::minor(f.current) {
        return Templates::Current;
    }
    let made_by_release = f.releases.iter().any(|(v, _)| v == f.cli_version);
    match f
        .releases
        .iter()
        .rev()
        .find(|(_, cr)| gomod::minor(cr) == have)
    {
        Some((version, _)) => {
            let next = if made_by_release {
                format!(
                    "`opbuilder alpha update` carries the project to opbuilder {}'s templates and pins, keeping your code",
                    f.current_version
                )
            } else {
                format!(
                    "raise {CONTROLLER_RUNTIME} to {} (and the k8s.io libraries with it) to get opbuilder {}'s templates",
                    f.current, f.current_version
                )
            };
            Templates::Release {
                version: version.clone(),
                note: format!(
                    "this project requires {CONTROLLER_RUNTIME} {project}, older than the {} that opbuilder {}'s \
                     templates are written for: the new files come from the templates of opbuilder {version}, which \
                     match it, so that the project keeps building. Then {next}.",
                    f.current, f.current_version
                ),
            }
        }
        None => Templates::CurrentNewerThanPins {
            warning: format!(
                "this project requires {CONTROLLER_RUNTIME} {project}, older than the {} that opbuilder {}'s \
                 templates are written for, and this opbuilder holds no templates for it: the new files may not \
                 compile until you raise it (`go get {CONTROLLER_RUNTIME}@{}`, then `go mod tidy`)",
                f.current, f.current_version, f.current
            ),
        },
    }
}

/// The choice for a project of the Rust layout whose PROJECT records `layout` (and
/// `cli_version`): one still on the layout's v1-alpha key (made by opbuilder 0.4.0, not
/// updated since) gets 0.4.0's templates, as a go/v4 project pinned to an earlier release's
/// controller-runtime gets that release's; `None` for any other project.
pub fn for_rust_layout(layout: &[String], current_version: &str) -> Option<Templates> {
    use crate::project::{RUST_LAYOUT, RUST_LAYOUT_V1_ALPHA, RUST_LAYOUT_V1_ALPHA_RELEASE};
    if !layout.iter().any(|k| k == RUST_LAYOUT_V1_ALPHA)
        || current_version == RUST_LAYOUT_V1_ALPHA_RELEASE
    {
        return None;
    }
    Some(Templates::Release {
        version: RUST_LAYOUT_V1_ALPHA_RELEASE.to_string(),
        note: format!(
            "this project's layout is {RUST_LAYOUT_V1_ALPHA}, which opbuilder {RUST_LAYOUT_V1_ALPHA_RELEASE} made: \
             the new files come from the templates of opbuilder {RUST_LAYOUT_V1_ALPHA_RELEASE}, so that they fit \
             the project's other files. Then `opbuilder alpha update` carries the project to opbuilder \
             {current_version}'s templates ({RUST_LAYOUT}), keeping your code."
        ),
    })
}

/// The choice for the project at `root`, from its go.mod and PROJECT's `cliVersion` (read only
/// when the go.mod pins an older controller-runtime), or for a Rust project from its layout.
pub fn for_project(root: &std::path::Path) -> Templates {
    let current_version = crate::releases::current_version();
    // PROJECT is parsed only when its text names the old key (a go/v4 project never does).
    let names_v1_alpha = crate::fsx::read_text(&root.join(crate::project::FILE), 1 << 24)
        .ok()
        .flatten()
        .is_some_and(|t| t.contains(crate::project::RUST_LAYOUT_V1_ALPHA));
    if names_v1_alpha && crate::releases::is_known(crate::project::RUST_LAYOUT_V1_ALPHA_RELEASE) {
        if let Ok(p) = crate::project::Project::load(root) {
            if let Some(t) = for_rust_layout(&p.layout, &current_version) {
                return t;
            }
        }
    }
    let go_mod = crate::fsx::read_text(&root.join("go.mod"), 1 << 20)
        .ok()
        .flatten();
    let project = go_mod
        .as_deref()
        .and_then(|t| gomod::required(t, CONTROLLER_RUNTIME));
    let current = &crate::versions::pins().scaffold.controller_runtime;
    if project
        .as_deref()
        .is_none_or(|p| gomod::minor(p) >= gomod::minor(current))
    {
        return Templates::Current;
    }
    let cli_version = crate::project::Project::load(root)
        .map(|p| p.cli_version)
        .unwrap_or_default();
    let releases: Vec<(String, String)> = crate::releases::RELEASES
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (
                r.version.to_string(),
                crate::versions::release_pins(i)
                    .scaffold
                    .controller_runtime
                    .clone(),
            )
        })
        .collect();
    choose(&Facts {
        project: project.as_deref(),
        current,
        current_version: &current_version,
        releases: &releases,
        cli_version: &cli_version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(project: Option<&'a str>, releases: &'a [(String, String)]) -> Facts<'a> {
        Facts {
            project,
            current: "v0.25.0",
            current_version: "0.3.0",
            releases,
            cli_version: "0.2.0",
        }
    }

    fn releases() -> Vec<(String, String)> {
        [
            ("0.1.0", "v0.24.1"),
            ("0.2.0", "v0.24.1"),
            ("0.2.5", "v0.24.3"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
    }

    #[test]
    fn a_rust_project_on_the_v1_alpha_key_gets_release_0_4_0s_templates() {
        let l = |k: &str| vec![k.to_string()];
        match for_rust_layout(&l("rust.opbuilder.io/v1-alpha"), "0.5.0") {
            Some(Templates::Release { version, note }) => {
                assert_eq!(version, "0.4.0");
                assert!(
                    note.contains("opbuilder alpha update")
                        && note.contains("rust.opbuilder.io/v1-beta"),
                    "{note}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            for_rust_layout(&l("rust.opbuilder.io/v1-beta"), "0.5.0"),
            None
        );
        assert_eq!(for_rust_layout(&l("go.kubebuilder.io/v4"), "0.5.0"), None);
        // 0.4.0 itself writes v1-alpha with its current templates.
        assert_eq!(
            for_rust_layout(&l("rust.opbuilder.io/v1-alpha"), "0.4.0"),
            None
        );
    }

    #[test]
    fn current_templates_for_current_or_newer_pins_or_no_go_mod() {
        let r = releases();
        for p in [
            None,
            Some("v0.25.0"),
            Some("v0.25.3"),
            Some("v0.26.0-rc.1"),
            Some("v1.0.0"),
        ] {
            assert_eq!(choose(&facts(p, &r)), Templates::Current, "{p:?}");
        }
    }

    #[test]
    fn an_older_pin_gets_the_newest_release_written_for_its_minor_version() {
        let r = releases();
        for p in ["v0.24.1", "v0.24.0", "v0.24.9"] {
            match choose(&facts(Some(p), &r)) {
                Templates::Release { version, note } => {
                    assert_eq!(version, "0.2.5", "{p}");
                    assert!(note.contains(p) && note.contains("v0.25.0"), "{note}");
                    assert!(note.contains("opbuilder alpha update"), "{note}");
                }
                other => panic!("{p}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_project_kubebuilder_made_is_told_to_raise_the_pin_not_to_alpha_update() {
        let r = releases();
        let mut f = facts(Some("v0.24.1"), &r);
        f.cli_version = "4.15.0";
        match choose(&f) {
            Templates::Release { note, .. } => {
                assert!(!note.contains("alpha update"), "{note}");
                assert!(
                    note.contains("raise sigs.k8s.io/controller-runtime to v0.25.0"),
                    "{note}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_pin_older_than_every_release_keeps_the_current_templates_with_a_warning() {
        let r = releases();
        match choose(&facts(Some("v0.20.4"), &r)) {
            Templates::CurrentNewerThanPins { warning } => {
                assert!(
                    warning.contains("go get sigs.k8s.io/controller-runtime@v0.25.0"),
                    "{warning}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn go_mod_requirements_are_read_in_both_forms() {
        let block = "module x\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/a/b v1.0.0\n\tsigs.k8s.io/controller-runtime v0.24.1 // indirect\n)\n";
        assert_eq!(
            gomod::required(block, CONTROLLER_RUNTIME).as_deref(),
            Some("v0.24.1")
        );
        let single = "module x\nrequire sigs.k8s.io/controller-runtime v0.23.0\n";
        assert_eq!(
            gomod::required(single, CONTROLLER_RUNTIME).as_deref(),
            Some("v0.23.0")
        );
        assert_eq!(gomod::required("module x\n", CONTROLLER_RUNTIME), None);
    }
}
