//! deploy-image.go.kubebuilder.io/v1-alpha: `create api` for an API whose controller deploys one
//! container image (the "operand") as a Deployment. The go/v4 files are planned first, as for any
//! API; this plugin then replaces the types, sample, controller and controller test with its own
//! (`scaffolds/deploy-image/`), adds the shared condition reasons, gives the controller an event
//! recorder in cmd/main.go, passes the image to the manager as `<KIND>_IMAGE` in
//! config/manager/manager.yaml, and records its options in PROJECT's `plugins:` section with
//! Kubebuilder's keys, so either tool can replay it. In a project of the Rust layout the chain
//! runs `plugins::rust::deployimage` instead, which shares the image variable and the record.

use super::golang;
use crate::context::{ProjectCtx, MAIN_GO, MANAGER_FILE as MANAGER};
use crate::error::{bad_flag, usage};
use crate::plan::{Edit, IfExists, Op, Plan};
use crate::planning::api::{ApiArgs, ResolvedResource};
use crate::planning::delete::Undo;
use crate::planning::flags::Options;
use crate::planning::plugin::{Cx, Plugin};
use crate::resource::{CtxInput, ResourceCtx};
use crate::templates;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

pub const NAME: &str = "deploy-image.go.kubebuilder.io";
pub const KEY: &str = "deploy-image.go.kubebuilder.io/v1-alpha";
pub struct DeployImage;

/// One entry of the plugin's `resources` list in PROJECT.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceData {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default, skip_serializing_if = "options_empty")]
    pub options: Options,
}

fn options_empty(o: &Options) -> bool {
    *o == Options::default()
}

/// The plugin's PROJECT section.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ResourceData>,
}

/// The resources PROJECT records for this plugin (empty when it has no section).
pub fn recorded(project: &crate::project::Project) -> Result<Vec<ResourceData>> {
    Ok(project
        .plugin_config::<Section>(KEY)?
        .unwrap_or_default()
        .resources)
}

/// An image reference: registry/path:tag or @digest, without spaces or quotes.
fn check_image(v: &str) -> Result<()> {
    let rule = if v.trim().is_empty() {
        Some("must not be empty")
    } else if !v
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-/:@".contains(c))
    {
        Some("must be an image reference: letters, digits and . _ - / : @ only")
    } else if v.starts_with(['-', '.', '/', ':', '@']) || v.ends_with([':', '/', '@']) {
        Some("must be an image reference such as REPOSITORY[:TAG] or REPOSITORY@DIGEST")
    } else {
        None
    };
    match rule {
        Some(r) => Err(bad_flag("--image", v, r, "memcached:1.6.26-alpine3.19")),
        None => Ok(()),
    }
}

fn check_port(v: &str) -> Result<()> {
    let ok = !v.is_empty()
        && v.len() <= 5
        && v.bytes().all(|b| b.is_ascii_digit())
        && !v.starts_with('0')
        && v.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p));
    if ok {
        Ok(())
    } else {
        Err(bad_flag(
            "--image-container-port",
            v,
            "must be a port number from 1 to 65535 (decimal digits, no sign or leading zero)",
            "11211",
        ))
    }
}

fn check_user(v: &str) -> Result<()> {
    let ok = !v.is_empty()
        && v.bytes().all(|b| b.is_ascii_digit())
        && (v == "0" || !v.starts_with('0'))
        && v.parse::<i64>().is_ok();
    if ok {
        Ok(())
    } else {
        Err(bad_flag(
            "--run-as-user",
            v,
            "must be a user ID: a non-negative integer that fits int64 (decimal digits, no leading zero)",
            "1001",
        ))
    }
}

/// The command split at commas, as Kubebuilder does; each part trimmed, none empty.
fn command_parts(v: &str) -> Result<Vec<String>> {
    let parts: Vec<String> = v.split(',').map(|p| p.trim().to_string()).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(bad_flag(
            "--image-container-command",
            v,
            "is the command and its arguments separated by commas, none of them empty",
            "memcached,--memory-limit=64,-o,modern,-v",
        ));
    }
    if let Some(p) = parts.iter().find(|p| p.chars().any(char::is_control)) {
        return Err(bad_flag(
            "--image-container-command",
            v,
            &format!("must not hold control characters (in {p:?})"),
            "memcached,--memory-limit=64,-o,modern,-v",
        ));
    }
    Ok(parts)
}

/// Check the plugin's flags against the chain before anything is resolved: the image flags need
/// the plugin, the plugin needs --image, and the go/v4 flags the plugin does not take are refused.
/// Returns the options when the chain runs the plugin.
pub fn check_flags(chain_has_plugin: bool, args: &ApiArgs) -> Result<Option<Options>> {
    let f = &args.image;
    if !chain_has_plugin {
        if let Some(first) = f.given().first() {
            return Err(usage(format!(
                "{first} belongs to the deploy-image plugin, which this command does not run; add \
                 --plugins=deploy-image/v1-alpha, for example:\n  opbuilder create api --group cache --version v1alpha1 \
                 --kind Memcached --image=memcached:1.6.26-alpine3.19 --plugins=deploy-image/v1-alpha"
            )));
        }
        return Ok(None);
    }
    let Some(image) = &f.image else {
        return Err(usage(
            "--plugins=deploy-image/v1-alpha needs --image, the image the controller deploys; for example \
             --image=memcached:1.6.26-alpine3.19",
        ));
    };
    for (refused, flag) in [
        (args.resource == Some(false), "--resource=false"),
        (args.controller == Some(false), "--controller=false"),
        (!args.namespaced, "--namespaced=false"),
        (args.controller_name.is_some(), "--controller-name"),
        (args.res.external_api_path.is_some(), "--external-api-path"),
    ] {
        if refused {
            return Err(usage(format!(
                "{flag} cannot be used with --plugins=deploy-image/v1-alpha: that plugin always scaffolds a \
                 namespace-scoped API of the project together with its one controller. Drop {flag}"
            )));
        }
    }
    check_image(image)?;
    if let Some(c) = &f.image_container_command {
        command_parts(c)?;
    }
    if let Some(p) = &f.image_container_port {
        check_port(p)?;
    }
    if let Some(u) = &f.run_as_user {
        check_user(u)?;
    }
    Ok(Some(Options {
        image: image.clone(),
        container_command: f.image_container_command.clone().unwrap_or_default(),
        container_port: f.image_container_port.clone().unwrap_or_default(),
        run_as_user: f.run_as_user.clone().unwrap_or_default(),
    }))
}

/// A Go interpreted string literal.
fn go_quote(s: &str) -> String {
    let mut q = String::from('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Ctx<'a> {
    #[serde(flatten)]
    res: &'a ResourceCtx,
    #[serde(flatten)]
    options: OptionsCtx,
}

/// What the templates of either layout see of the plugin's options.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OptionsCtx {
    pub kind_upper: String,
    image: String,
    has_command: bool,
    /// The command in the layout's language: Go's `[]string{"a", "b"}`, Rust's `&["a", "b"]`.
    command: String,
    has_port: bool,
    port: String,
    has_run_as_user: bool,
    run_as_user: String,
}

impl OptionsCtx {
    /// The options of `kind`, its command (split at commas) written by `command`.
    pub(crate) fn new(
        kind: &str,
        opts: &Options,
        command: impl FnOnce(&[String]) -> String,
    ) -> Result<OptionsCtx> {
        let command = if opts.container_command.is_empty() {
            String::new()
        } else {
            command(&command_parts(&opts.container_command)?)
        };
        Ok(OptionsCtx {
            kind_upper: kind.to_ascii_uppercase(),
            image: opts.image.clone(),
            has_command: !command.is_empty(),
            command,
            has_port: !opts.container_port.is_empty(),
            port: opts.container_port.clone(),
            has_run_as_user: !opts.run_as_user.is_empty(),
            run_as_user: opts.run_as_user.clone(),
        })
    }
}

/// `text` with the value of the environment variable `name` (a `- name: NAME` line followed by
/// `value: ...`) set to `value`; `None` when there is no such variable.
fn set_env_value(text: &str, name: &str, value: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let at = lines
        .iter()
        .position(|l| l.trim() == format!("- name: {name}"))?;
    let next = lines.get(at + 1)?;
    if !next.trim_start().starts_with("value:") {
        return None;
    }
    let indent = &next[..next.len() - next.trim_start().len()];
    let eol = if next.ends_with('\n') { "\n" } else { "" };
    let mut out: String = lines[..=at].concat();
    out.push_str(&format!("{indent}value: {value}{eol}"));
    out.push_str(&lines[at + 2..].concat());
    Some(out)
}

/// Replace the content of the file the plan creates at `path`.
pub(crate) fn replace_created(plan: &mut Plan, path: &str, new: String) -> Result<()> {
    for op in plan.ops.iter_mut() {
        if let Op::Create {
            path: p, content, ..
        } = op
        {
            if p.as_path() == std::path::Path::new(path) {
                *content = new;
                return Ok(());
            }
        }
    }
    bail!("internal error: the layout did not plan {path} for the deploy-image API")
}

/// Replace one fragment that the plan inserts above a marker of `path`.
fn replace_fragment(plan: &mut Plan, path: &str, old: &str, new: String) -> Result<()> {
    for op in plan.ops.iter_mut() {
        let Op::Update { path: p, edits, .. } = op else {
            continue;
        };
        if p.as_path() != std::path::Path::new(path) {
            continue;
        }
        for e in edits.iter_mut() {
            if let Edit::AboveMarker { fragments, .. } = e {
                if let Some(f) = fragments.iter_mut().find(|f| f.as_str() == old) {
                    *f = new;
                    return Ok(());
                }
            }
        }
    }
    bail!("internal error: go/v4 did not plan the controller's setup in {path}")
}

/// The image reaches the controller as `<KIND>_IMAGE` in the manager's environment
/// (config/manager/manager.yaml). Again with --force, an existing variable gets the new image.
/// `undo`: as `create api` added the variable when it was not there (`delete api` takes that
/// out again).
pub(crate) fn plan_image_env(cx: &mut Cx, kind_upper: &str, image: &str, undo: bool) -> Result<()> {
    let manager = if undo {
        String::new()
    } else {
        crate::fsx::read_text(&cx.root.join(MANAGER), 1 << 20)
            .map_err(|e| anyhow::anyhow!("{MANAGER}: {e}"))?
            .unwrap_or_default()
    };
    if let Some(updated) = set_env_value(&manager, &format!("{}_IMAGE", kind_upper), image) {
        cx.plan.create(MANAGER, updated, IfExists::Overwrite);
    } else {
        cx.plan.update(
            MANAGER,
            Edit::AfterLine {
                anchor: "name: manager".into(),
                text: "        env:".into(),
            },
        );
        cx.plan.update(
            MANAGER,
            Edit::AfterLine {
                anchor: "env:".into(),
                text: format!(
                    "        - name: {}_IMAGE\n          value: {}",
                    kind_upper, image
                ),
            },
        );
    }
    Ok(())
}

/// Record the API's options in PROJECT's section of the plugin, with Kubebuilder's keys.
pub(crate) fn record(cx: &mut Cx, res: &ResolvedResource, opts: &Options) -> Result<()> {
    let mut section: Section = cx.project.plugin_config(KEY)?.unwrap_or_default();
    let entry = ResourceData {
        group: res.gvk.group.clone(),
        domain: res.gvk.domain.clone(),
        version: res.gvk.version.clone(),
        kind: res.gvk.kind.clone(),
        options: opts.clone(),
    };
    // Again with --force: the entry is updated in place (Kubebuilder appends a second one).
    match section
        .resources
        .iter_mut()
        .find(|d| d.group == entry.group && d.version == entry.version && d.kind == entry.kind)
    {
        Some(d) => *d = entry,
        None => section.resources.push(entry),
    }
    cx.project.set_plugin_config(KEY, &section)?;
    Ok(())
}

/// What the plugin changes in the layout's plan and adds to it: its own types, sample,
/// controller and test, the shared conditions, the event recorder in cmd/main.go and the image
/// in the manager's environment.
fn plan_own(cx: &mut Cx, res: &ResolvedResource, opts: &Options) -> Result<()> {
    let pctx = ProjectCtx::load(cx.root, cx.project)?;
    let rctx = ResourceCtx::new(CtxInput {
        project: cx.project,
        pctx,
        gvk: &res.gvk,
        plural: &res.plural,
        api_path: &res.api_path,
        cluster_scoped: false,
        core: false,
        external: false,
        controller_name: None,
        has_api: true,
    });
    let options = OptionsCtx::new(&res.gvk.kind, opts, |parts| {
        let quoted: Vec<String> = parts.iter().map(|p| go_quote(p)).collect();
        format!("[]string{{{}}}", quoted.join(", "))
    })?;
    let kind_upper = options.kind_upper.clone();
    let ctx = Ctx {
        res: &rctx,
        options,
    };

    for f in templates::render_tree("deploy-image", &ctx, |_| true)? {
        let path = f.path.to_string_lossy().to_string();
        if f.template.ends_with("conditions.go") {
            // Shared by every deploy-image controller of the package: written once.
            cx.plan.create(f.path, f.content, IfExists::Skip);
        } else {
            replace_created(cx.plan, &path, f.content)?;
        }
    }

    // cmd/main.go imports a group's controller package as <pkg>controller (as go/v4 does).
    let mut main_ctx = rctx.clone();
    if main_ctx.controller_pkg != "controller" {
        main_ctx.controller_pkg = crate::resource::controller_alias(&main_ctx.group);
    }
    let go_setup = templates::render("fragments/main_controller.go", &main_ctx)?;
    let setup = templates::render("fragments/deploy_image_main_controller.go", &main_ctx)?;
    replace_fragment(cx.plan, MAIN_GO, &go_setup, setup)?;

    plan_image_env(cx, &kind_upper, &opts.image, res.undo)?;
    Ok(())
}

impl Plugin for DeployImage {
    fn key(&self) -> &'static str {
        KEY
    }

    fn create_api(&self, cx: &mut Cx, res: &ResolvedResource) -> Result<()> {
        let Some(opts) = &res.deploy_image else {
            bail!("internal error: the deploy-image plugin runs without its options");
        };
        // The go/v4 files first (types, controller, kustomize entries, main.go wiring), as
        // Kubebuilder's plugin runs the go/v4 scaffolders before its own.
        golang::api::plan_files(cx.root, cx.project, res, cx.plan, cx.notes)?;
        plan_own(cx, res, opts)?;
        let kind_upper = res.gvk.kind.to_ascii_uppercase();
        let types = cx
            .plan
            .written("_types.go")
            .into_iter()
            .next()
            .unwrap_or_else(|| "the *_types.go file".into());
        cx.plan.next = Some(crate::plan::Next {
            note: Some(format!(
                "The controller deploys {} for each {} object (the image is the {}_IMAGE variable in \
                 config/manager/manager.yaml).",
                opts.image, res.gvk.kind, kind_upper
            )),
            ..crate::plan::Next::new(
                format!("after changing {types}, run"),
                &["make generate manifests"],
            )
        });
        res.record(cx.project);
        record(cx, res, opts)?;
        Ok(())
    }

    fn delete_api(&self, cx: &mut Cx, res: &ResolvedResource, undo: &mut Undo) -> Result<()> {
        let Some(opts) = &res.deploy_image else {
            bail!("internal error: the deploy-image plugin runs without its options");
        };
        golang::delete::delete_api(cx, res, undo)?;
        plan_own(cx, res, opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_with_the_rule_and_an_example() {
        for bad in [
            "",
            " ",
            "mem cached:1",
            "memcached:\"1\"",
            "-x",
            "memcached:",
        ] {
            let e = check_image(bad).unwrap_err().to_string();
            assert!(
                e.contains("--image") && e.contains("memcached:1.6.26"),
                "{bad:?}: {e}"
            );
        }
        for good in [
            "memcached:1.6.26-alpine3.19",
            "busybox",
            "quay.io/a/b@sha256:0123abcd",
            "localhost:5000/x:1",
        ] {
            check_image(good).unwrap();
        }
        for bad in ["0", "65536", "abc", "-1", "+80", "080", "", "99999999999"] {
            assert!(check_port(bad).is_err(), "{bad}");
        }
        for good in ["1", "11211", "65535"] {
            check_port(good).unwrap();
        }
        for bad in ["-1", "x", "01", "9223372036854775808", ""] {
            assert!(check_user(bad).is_err(), "{bad}");
        }
        for good in ["0", "1001", "9223372036854775807"] {
            check_user(good).unwrap();
        }
        assert!(command_parts("a,,b").is_err());
        assert_eq!(
            command_parts("memcached, --memory-limit=64 ,-v").unwrap(),
            ["memcached", "--memory-limit=64", "-v"]
        );
        assert_eq!(go_quote(r#"a"b\c"#), r#""a\"b\\c""#);
        let m = "        env:\n        - name: A_IMAGE\n          value: a:1\n        ports:\n";
        assert_eq!(
            set_env_value(m, "A_IMAGE", "a:2").unwrap(),
            "        env:\n        - name: A_IMAGE\n          value: a:2\n        ports:\n"
        );
        assert!(set_env_value(m, "B_IMAGE", "b:1").is_none());
    }

    #[test]
    fn section_round_trips_with_kubebuilders_keys() {
        let yaml = "resources:\n- domain: testproject.org\n  group: example.com\n  kind: Busybox\n  options:\n    image: busybox:1.36.1\n  version: v1alpha1\n- kind: Memcached\n  options:\n    containerCommand: memcached,-v\n    containerPort: \"11211\"\n    image: memcached:1.6\n    runAsUser: \"1001\"\n  version: v1alpha1\n";
        let s: Section = serde_yaml::from_str(yaml).unwrap();
        assert_eq!(s.resources[0].options.image, "busybox:1.36.1");
        assert_eq!(s.resources[1].options.container_port, "11211");
        assert_eq!(s.resources[1].options.run_as_user, "1001");
        let back: Section = serde_yaml::from_value(serde_yaml::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
        let v = serde_yaml::to_value(&s).unwrap();
        let text = serde_yaml::to_string(&v).unwrap();
        assert!(text.contains("containerCommand: memcached,-v"), "{text}");
        assert!(
            !text.contains("group: ''"),
            "empty fields are left out: {text}"
        );
    }
}
