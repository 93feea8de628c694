//! autoupdate.kubebuilder.io/v1-alpha: a scheduled GitHub workflow
//! (`scaffolds/autoupdate/`) that keeps the project on current templates by running
//! `opbuilder alpha update`, where Kubebuilder's runs `kubebuilder alpha update`. It joins the
//! Rust layout too (`edit --plugins=autoupdate/v1-alpha` in a Rust project), whose workflow sets
//! up no Go.

use crate::plan::IfExists;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::templates;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

pub const NAME: &str = "autoupdate.kubebuilder.io";
pub const KEY: &str = "autoupdate.kubebuilder.io/v1-alpha";

pub struct AutoUpdate;

/// Whether the templates in use offer `--use-gh-models`: those of releases 0.1.0 and 0.2.0
/// (Kubebuilder v4.15's workflow) do, and `alpha update` scaffolds their projects again with
/// them; Kubebuilder v4.16 removed the GitHub Models summary, and opbuilder 0.3.0 with it.
pub fn gh_models_offered() -> bool {
    matches!(crate::releases::active_version(), Some("0.1.0" | "0.2.0"))
}

/// Refuse `--use-gh-models` where the templates in use no longer offer it (exit 2).
pub fn check_gh_models(use_gh_models: bool) -> Result<()> {
    if use_gh_models && !gh_models_offered() {
        return Err(crate::error::usage(
            "--use-gh-models was removed in opbuilder 0.3.0, as in Kubebuilder v4.16: the update workflow opens its \
             issue without a GitHub Models summary. Leave the flag out, for example: opbuilder edit --plugins=autoupdate/v1-alpha",
        ));
    }
    Ok(())
}

/// The plugin's PROJECT section, with Kubebuilder's key.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct Section {
    #[serde(
        default,
        rename = "useGHModels",
        skip_serializing_if = "std::ops::Not::not"
    )]
    use_gh_models: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Ctx {
    use_gh_models: bool,
    /// A project of the Rust layout: the workflow needs no Go.
    rust: bool,
}

impl Plugin for AutoUpdate {
    fn key(&self) -> &'static str {
        KEY
    }

    fn edit(&self, cx: &mut Cx, args: &EditArgs) -> Result<()> {
        if cx.project.cli_version.is_empty() {
            bail!(
                "PROJECT has no cliVersion, and the update workflow needs it to know which templates the project \
                 was made with.\n  Add `cliVersion: <version>` to PROJECT (the version of the tool that scaffolded \
                 the project, for example cliVersion: 4.15.0 for Kubebuilder v4.15.0), then run this again"
            );
        }
        let recorded: Section = cx.project.plugin_config(KEY)?.unwrap_or_default();
        let use_gh_models = if gh_models_offered() {
            // As in Kubebuilder v4.15, a setting already recorded stays on; the workflow follows
            // the flag.
            args.use_gh_models
        } else {
            if recorded.use_gh_models {
                cx.notes.push(
                    "PROJECT's `useGHModels: true` is dropped: the update workflow no longer summarises with \
                     GitHub Models (removed in opbuilder 0.3.0, as in Kubebuilder v4.16)"
                        .into(),
                );
            }
            false
        };
        let section = Section {
            use_gh_models: gh_models_offered() && (recorded.use_gh_models || use_gh_models),
        };
        cx.project.set_plugin_config(KEY, &section)?;
        let ctx = Ctx {
            use_gh_models,
            rust: cx.project.rust_layout().is_some(),
        };
        for f in templates::render_tree("autoupdate", &ctx, |_| true)? {
            cx.plan.create(f.path, f.content, IfExists::Overwrite);
        }
        if gh_models_offered() && !use_gh_models {
            cx.notes.push(
                "To add a GitHub Models summary to the update issue (your organisation must allow GitHub Models): \
                 opbuilder edit --plugins=autoupdate/v1-alpha --use-gh-models"
                    .into(),
            );
        }
        Ok(())
    }
}
