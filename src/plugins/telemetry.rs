//! TEMPORARY local wiring (telrust), replaced by telgo's skeleton at merge.
use crate::planning::api::ResolvedResource;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use anyhow::Result;
use serde::Serialize;

pub const NAME: &str = "telemetry.opbuilder.io";
pub const KEY: &str = "telemetry.opbuilder.io/v1-alpha";

pub struct Telemetry;

#[derive(Serialize)]
struct Section {}

impl Plugin for Telemetry {
    fn key(&self) -> &'static str {
        KEY
    }
    fn follows_project(&self) -> bool {
        true
    }
    fn joins_deletion(&self) -> bool {
        true
    }
    fn delete_api(
        &self,
        cx: &mut Cx,
        res: &ResolvedResource,
        _undo: &mut crate::planning::delete::Undo,
    ) -> Result<()> {
        self.create_api(cx, res)
    }
    fn init(&self, cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
        cx.project.set_plugin_config(KEY, &Section {})?;
        crate::plugins::rust::telemetry::enable(cx, boilerplate)
    }
    fn edit(&self, cx: &mut Cx, _args: &EditArgs) -> Result<()> {
        cx.project.set_plugin_config(KEY, &Section {})?;
        crate::plugins::rust::telemetry::enable(cx, None)
    }
    fn create_api(&self, cx: &mut Cx, _res: &ResolvedResource) -> Result<()> {
        crate::plugins::rust::telemetry::trace_planned_controllers(cx);
        Ok(())
    }
}
