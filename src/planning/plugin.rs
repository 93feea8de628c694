//! The plugin API: what a plugin implements and what it works on. The registry of plugins and
//! the chain a command runs are in `crate::plugins`, above every plugin.

use super::api::ResolvedResource;
use super::delete::Undo;
use super::edit::EditArgs;
use super::webhook::ResolvedWebhook;
use crate::plan::Plan;
use crate::project::Project;
use anyhow::Result;
use std::path::Path;

/// What a plugin works on during one command.
pub struct Cx<'a> {
    pub root: &'a Path,
    pub plan: &'a mut Plan,
    pub project: &'a mut Project,
    /// Messages printed after the plan is applied.
    pub notes: &'a mut Vec<String>,
    /// The command line's flags as an external plugin receives them (its request's `args`).
    pub plugin_args: &'a [String],
}

/// One plugin: its key and the hooks it takes part in. A hook adds operations to the plan and
/// may change PROJECT; the default hooks do nothing, as a plugin without that subcommand.
pub trait Plugin: Sync {
    /// The canonical key, as Kubebuilder records it in PROJECT.
    fn key(&self) -> &'static str;
    /// Whether the plugin, once recorded under PROJECT's `plugins:`, joins every later
    /// `create api` and `create webhook` (opbuilder's own plugins, which stay out of `layout`).
    fn follows_project(&self) -> bool {
        false
    }
    /// Whether the plugin, once recorded in PROJECT (`layout` or `plugins:`), joins every
    /// `delete api` and `delete webhook` to plan the undoing of what it added beside the
    /// layout's files (which no `create` of the deletion's chain runs).
    fn joins_deletion(&self) -> bool {
        false
    }
    /// Whether this is an external plugin (an executable found by its key, see
    /// `crate::plugins::external`), which may also stand alone in a chain.
    fn is_external(&self) -> bool {
        false
    }
    fn init(&self, _cx: &mut Cx, _boilerplate: Option<&str>) -> Result<()> {
        Ok(())
    }
    fn create_api(&self, _cx: &mut Cx, _res: &ResolvedResource) -> Result<()> {
        Ok(())
    }
    fn create_webhook(&self, _cx: &mut Cx, _hook: &ResolvedWebhook) -> Result<()> {
        Ok(())
    }
    fn edit(&self, _cx: &mut Cx, _args: &EditArgs) -> Result<()> {
        Ok(())
    }
    /// `delete api`: plan into `cx.plan` what this plugin's `create api` wrote for `res` (the
    /// create planning itself, run on `cx.project`, PROJECT without `res`), so that taking it
    /// out again cannot drift from what `create` writes; and into `undo` what else goes or is
    /// listed. The default: the plugin's `create api` wrote nothing.
    fn delete_api(&self, _cx: &mut Cx, _res: &ResolvedResource, _undo: &mut Undo) -> Result<()> {
        Ok(())
    }
    /// `delete webhook`: as [`Plugin::delete_api`], for the webhooks `hook` asks for (after
    /// those of the kind that stay, `hook.had`).
    fn delete_webhook(
        &self,
        _cx: &mut Cx,
        _hook: &ResolvedWebhook,
        _undo: &mut Undo,
    ) -> Result<()> {
        Ok(())
    }
}
