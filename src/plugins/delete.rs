//! The entry points of `delete api` and `delete webhook`: resolve what goes, let the chain plan
//! again what its `create` commands wrote for it (and, to know what must stay, for everything
//! else PROJECT records), take that out of the files as they are now (`crate::plan::undo`),
//! and refuse while other code still uses what goes.

use super::chain::{Chain, Command};
use super::deployimage;
use super::registry::{lookup, parse_flag};
use crate::error::usage;
use crate::plan::undo::{self as engine, ByHand};
use crate::plan::{Op, Plan};
use crate::planning::delete::{
    self as request, creates_of, Create, DeleteApiArgs, DeleteWebhookArgs, Generated, Undo,
};
use crate::planning::plugin::{Cx, Plugin as _};
use crate::planning::uses::{self, Use};
use crate::project::Project;
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A planned deletion: the plan, and what the command says about it.
#[derive(Debug, Default)]
pub struct Deletion {
    pub plan: Plan,
    /// Files `create` wrote that changed since: kept.
    pub kept: Vec<PathBuf>,
    /// Such files removed all the same (--force).
    pub forced: Vec<PathBuf>,
    /// What to take out by hand.
    pub by_hand: Vec<ByHand>,
    /// Generated files that still name what goes, and the command that writes them again.
    pub generated: Vec<Generated>,
    /// Code that still uses what goes (with --force, which deletes all the same).
    pub uses: Vec<Use>,
    pub notes: Vec<String>,
    /// What to run next.
    pub next: Vec<String>,
}

/// The chain of a `delete` command: `--plugins`, else PROJECT's, as `create api` runs it (the
/// plugins that join every `create api` of the project included).
fn chain_for(project: &Project, plugins: Option<&str>, command: &str) -> Result<Chain> {
    let mut flag = parse_flag(plugins)?;
    // deploy-image without a layout (as `create api --plugins=deploy-image/v1-alpha` is given
    // it): deploy-image plans the APIs it made, the project's layout the others that stay.
    if let Some(f) = flag
        .as_mut()
        .filter(|f| f.iter().any(|k| k.name == deployimage::NAME))
    {
        for key in project.layout.iter().rev() {
            if let Ok(Some(k)) = lookup(key) {
                if !f.iter().any(|x| std::ptr::eq(*x, k)) {
                    f.insert(0, k);
                }
            }
        }
    }
    super::check_layout_key(project, flag.as_deref(), command, &[])?;
    let chain = Chain::for_command(Some(project), flag, Command::CreateApi)?;
    if !chain.has_layout() {
        return Err(usage(format!(
            "--plugins: `{command}` takes away what a layout's `create` wrote, so the chain needs the project's \
             layout ({}); external plugins have no part in a deletion (for example --plugins={})",
            project.layout.join(", "),
            project.layout.first().map_or("go/v4", String::as_str)
        )));
    }
    Ok(chain.for_deletion(project))
}

/// deploy-image's options for the API of `c`, when PROJECT records them.
fn with_options(project: &Project, mut c: Create) -> Create {
    if let Create::Api(res) = &mut c {
        if res.do_resource {
            res.deploy_image = deployimage::recorded(project)
                .ok()
                .and_then(|list| {
                    list.into_iter().find(|d| {
                        d.group == res.gvk.group
                            && d.version == res.gvk.version
                            && d.kind == res.gvk.kind
                    })
                })
                .map(|d| d.options);
        }
    }
    c
}

/// PROJECT as `create api` of `c` found it: `before` without the entries PROJECT (`now`) lists
/// after `c`'s (the commands that made them came later). A webhook's command finds them all.
/// In either, `multigroup` as it was when the command ran: a go/v4 project made multigroup by
/// `edit` after the resource was created keeps its files where that layout put them, as
/// PROJECT's path of its types says.
fn at_create(before: &Project, now: &Project, c: &Create) -> Project {
    let (g, path) = match c {
        Create::Api(res) => (&res.gvk, &res.api_path),
        Create::Webhook(hook) => (&hook.gvk, &hook.api_path),
    };
    let mut p = before.clone();
    if let (Create::Api(_), Some(at)) = (
        c,
        now.resources
            .iter()
            .position(|r| r.is_gvk(&g.group, &g.version, &g.kind)),
    ) {
        let earlier = |r: &crate::project::Resource| {
            now.resources[..at]
                .iter()
                .any(|e| e.is_gvk(&r.group, &r.version, &r.kind))
        };
        p.resources.retain(|r| earlier(r));
    }
    if p.rust_layout().is_none() && !g.group.is_empty() {
        let layout_path = |multigroup: bool| {
            let q = Project {
                repo: p.repo.clone(),
                multigroup,
                ..Default::default()
            };
            crate::resource::layout(&q, &g.group, &g.version).api_path
        };
        if *path != layout_path(p.multigroup) && *path == layout_path(!p.multigroup) {
            p.multigroup = !p.multigroup;
        }
    }
    p
}

/// Let the chain plan again what `c` wrote into `project`, into `plan`.
fn replay(
    chain: &Chain,
    root: &Path,
    project: &Project,
    c: &Create,
    plan: &mut Plan,
    undo: &mut Undo,
) -> Result<()> {
    let mut project = project.clone();
    let mut notes = vec![];
    let mut cx = Cx {
        root,
        plan,
        project: &mut project,
        notes: &mut notes,
        plugin_args: &[],
    };
    match c {
        Create::Api(res) => chain.delete_api(&mut cx, res, undo),
        Create::Webhook(hook) => chain.delete_webhook(&mut cx, hook, undo),
    }
}

/// The text of each source file as it is, and as `ops` leave it (a file they remove is gone).
fn sources(root: &Path, ops: &[Op]) -> (BTreeMap<PathBuf, String>, BTreeMap<PathBuf, String>) {
    let mut now = BTreeMap::new();
    for rel in uses::source_files(root) {
        if let Ok(t) = std::fs::read_to_string(root.join(&rel)) {
            now.insert(rel, t);
        }
    }
    let mut after = now.clone();
    for op in ops {
        match op {
            Op::Remove { path } => {
                after.remove(path);
            }
            Op::Create { path, content, .. } if after.contains_key(path) => {
                after.insert(path.clone(), content.clone());
            }
            _ => {}
        }
    }
    (now, after)
}

/// Why a deletion is refused while code uses what goes: each line of other code, and each
/// changed file `create` wrote (kept) with the lines that use it.
fn uses_refusal(uses: &[Use], kept: &[PathBuf]) -> String {
    let mut text = String::new();
    for u in uses.iter().filter(|u| !kept.contains(&u.path)) {
        if text.is_empty() {
            text.push_str("other code still uses what this would delete:");
        }
        text.push_str(&format!("\n  {}:{}: {}", u.path.display(), u.line, u.text));
    }
    let mut files: Vec<(&PathBuf, Vec<String>)> = vec![];
    for u in uses.iter().filter(|u| kept.contains(&u.path)) {
        match files.iter_mut().find(|(p, _)| *p == &u.path) {
            Some((_, lines)) => lines.push(u.line.to_string()),
            None => files.push((&u.path, vec![u.line.to_string()])),
        }
    }
    if !files.is_empty() {
        text.push_str(if text.is_empty() {
            "these files `create` wrote changed since, so they are kept, and they use what this would delete:"
        } else {
            "\nand these files `create` wrote, which changed since and so are kept, use it too:"
        });
        for (p, lines) in files {
            let which = if lines.len() == 1 { "line" } else { "lines" };
            text.push_str(&format!(
                "\n  {} ({which} {})",
                p.display(),
                lines.join(", ")
            ));
        }
    }
    text.push_str(
        "\nChange that code first (and remove a changed file you no longer need), or pass --force: it removes the \
         files `create` wrote even when changed, and deletes although other code uses what goes (that code then \
         stops the build until you change it)",
    );
    text
}

/// What the chain's external plugins wrote stays: they have no deletion in Kubebuilder's
/// protocol. Said as a note.
fn externals_note(chain: &Chain) -> Option<String> {
    let keys: Vec<&str> = chain.externals().iter().map(|e| e.key()).collect();
    (!keys.is_empty()).then(|| {
        let one = keys.len() == 1;
        format!(
            "the external {} {} {} no part in a deletion (Kubebuilder's plugin protocol has none): what {} wrote \
             for this kind stays; take that out by hand",
            if one { "plugin" } else { "plugins" },
            keys.join(" and "),
            if one { "has" } else { "have" },
            if one { "it" } else { "they" },
        )
    })
}

/// Plan the deletion of what `gone` made: PROJECT becomes `before`.
fn plan_deletion(
    root: &Path,
    project: &Project,
    chain: &Chain,
    before: Project,
    gone: Vec<Create>,
    force: bool,
) -> Result<Deletion> {
    let gone: Vec<Create> = gone.into_iter().map(|c| with_options(project, c)).collect();
    let mut undo = Undo {
        force,
        after: before.clone(),
        notes: externals_note(chain).into_iter().collect(),
        ..Default::default()
    };
    let mut created = Plan::default();
    for c in &gone {
        replay(
            chain,
            root,
            &at_create(&before, project, c),
            c,
            &mut created,
            &mut undo,
        )?;
    }
    // The same into PROJECT as it is (for files that later commands changed too, such as the
    // opt-out of server-side apply), and with the templates of the release that PROJECT's
    // cliVersion names.
    let mut variants = std::mem::take(&mut undo.variants);
    let mut scratch = Undo::default();
    let mut all = Plan::default();
    if gone
        .iter()
        .try_for_each(|c| replay(chain, root, &before, c, &mut all, &mut scratch))
        .is_ok()
    {
        variants.push(all);
    }
    let v = project.cli_version.as_str();
    if crate::releases::is_known(v) && v != crate::releases::current_version() {
        let mut other = Plan::default();
        let planned = crate::releases::with(v, || {
            gone.iter().try_for_each(|c| {
                replay(
                    chain,
                    root,
                    &at_create(&before, project, c),
                    c,
                    &mut other,
                    &mut scratch,
                )
            })
        });
        if planned.is_ok() {
            variants.push(other);
        }
    }
    // What everything that stays needs, each planned into PROJECT as its `create` found it,
    // what goes included: names chosen then stay (a Rust controller module named
    // `<group>_<kind>` beside another group's kind of that name keeps that name when the other
    // goes).
    let mut keep = Plan::default();
    for c in creates_of(&before) {
        let c = with_options(&before, c);
        let at = at_create(project, project, &c);
        replay(chain, root, &at, &c, &mut keep, &mut scratch).map_err(|e| {
            let what = match &c {
                Create::Api(r) => format!("{}/{} {}", r.gvk.group, r.gvk.version, r.gvk.kind),
                Create::Webhook(h) => {
                    format!(
                        "the webhooks of {}/{} {}",
                        h.gvk.group, h.gvk.version, h.gvk.kind
                    )
                }
            };
            e.context(format!(
                "planning what {what} needs (to keep it), from PROJECT's entry"
            ))
        })?;
    }
    // Taken out as `create` planned it, or as a variant did (a project whose templates changed
    // since: the variant that finds more of what `create` wrote as it wrote it wins).
    // A variant that plans some files only (another order of a kind's webhook sections, a
    // later command's edit of one file) takes `create`'s plan for the others: each undo then
    // covers every file, and one is not preferred for leaving files out.
    let variants: Vec<Plan> = variants
        .iter()
        .filter(|v| !v.ops.is_empty())
        .map(|v| whole(&created, v))
        .collect();
    let mut plans: Vec<&Plan> = vec![&created];
    plans.extend(variants.iter());
    let undone = (0..plans.len())
        .map(|i| {
            let others: Vec<Plan> = plans
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, p)| (*p).clone())
                .collect();
            engine::undo(
                root,
                &engine::Undo {
                    created: plans[i],
                    keep: &keep,
                    variants: &others,
                    base: &undo.base,
                    force,
                },
            )
        })
        .min_by_key(|u| u.kept.len() + u.forced.len() + u.by_hand.len())
        .expect("the plan itself is one");
    let mut ops = undone.ops;
    for op in std::mem::take(&mut undo.ops) {
        ops.retain(|o| o.path() != op.path());
        ops.push(op);
    }
    let mut kept = undone.kept;
    for g in undo.generated.iter().filter(|g| g.remove) {
        // A generated file `create` wrote as a template goes whatever `make` wrote into it.
        let p = PathBuf::from(&g.path);
        kept.retain(|k| *k != p);
        if !ops.iter().any(|o| *o.path() == p) {
            ops.push(Op::Remove { path: p });
        }
    }
    kept.extend(undo.kept);
    let mut forced = undone.forced;
    forced.extend(undo.forced);
    let mut by_hand = undone.by_hand;
    by_hand.extend(undo.by_hand);
    // Generated files name what goes until their tool writes them again: listed, not uses.
    let (now, mut after) = sources(root, &ops);
    after.retain(|p, _| {
        !p.ends_with("zz_generated.deepcopy.go")
            && !undo.generated.iter().any(|g| p.starts_with(&g.path))
    });
    let found = uses::find_uses(&after, &now, &undo.uses);
    if !found.is_empty() && !force {
        bail!("{}", uses_refusal(&found, &kept));
    }
    let mut before = before;
    drop_deploy_image_records(&mut before, &gone)?;
    let mut next = undo.next;
    for g in undo.generated.iter().filter(|g| !g.remove) {
        let cmd = g.by.to_string();
        if !next
            .iter()
            .any(|n| n.contains(g.by.trim_start_matches("make ")))
        {
            next.push(cmd);
        }
    }
    Ok(Deletion {
        plan: Plan {
            ops,
            project: Some(before.to_yaml()),
            ..Default::default()
        },
        kept,
        forced,
        by_hand,
        generated: undo.generated.into_iter().filter(|g| !g.remove).collect(),
        uses: found,
        notes: undo.notes,
        next,
    })
}

/// `variant` with `created`'s ops on the files it does not plan.
fn whole(created: &Plan, variant: &Plan) -> Plan {
    let mine: Vec<&PathBuf> = variant.ops.iter().map(Op::path).collect();
    let mut ops: Vec<Op> = created
        .ops
        .iter()
        .filter(|o| !mine.contains(&o.path()))
        .cloned()
        .collect();
    ops.extend(variant.ops.iter().cloned());
    Plan {
        ops,
        ..Default::default()
    }
}

/// Drop deploy-image's record of each API that goes from PROJECT's section of the plugin (the
/// section goes when it is left empty).
fn drop_deploy_image_records(project: &mut Project, gone: &[Create]) -> Result<()> {
    let apis: Vec<_> = gone
        .iter()
        .filter_map(|c| match c {
            Create::Api(r) if r.deploy_image.is_some() => Some(&r.gvk),
            _ => None,
        })
        .collect();
    if apis.is_empty() {
        return Ok(());
    }
    let mut section: deployimage::Section =
        project.plugin_config(deployimage::KEY)?.unwrap_or_default();
    section.resources.retain(|d| {
        !apis
            .iter()
            .any(|g| d.group == g.group && d.version == g.version && d.kind == g.kind)
    });
    if section.resources.is_empty() {
        project.remove_plugin_config(deployimage::KEY);
    } else {
        project.set_plugin_config(deployimage::KEY, &section)?;
    }
    Ok(())
}

/// Plan `delete api`.
pub fn plan_delete_api(root: &Path, args: &DeleteApiArgs) -> Result<Deletion> {
    let project = Project::load(root)?;
    let chain = chain_for(&project, args.run.plugins.as_deref(), "delete api")?;
    // `create api`'s flags first (usage errors); resolve_api says why a kind not found is not.
    let (g, v, k) = (
        args.res.group.trim(),
        args.res.version.trim(),
        args.res.kind.trim(),
    );
    if let Some(entry) = project.find(g, v, k) {
        let image = deployimage::recorded(&project)
            .unwrap_or_default()
            .into_iter()
            .find(|d| d.group == entry.group && d.version == entry.version && d.kind == entry.kind)
            .map(|d| d.options);
        crate::planning::delete_flags::check_api(entry, &args.create_api, image.as_ref())?;
    }
    let target = request::resolve_api(root, &project, args)?;
    let mut gone: Vec<Create> = target
        .creates
        .into_iter()
        .map(|c| Create::Api(Box::new(c)))
        .collect();
    if let Some(hook) = target.spoke_of {
        gone.push(Create::Webhook(Box::new(hook)));
    }
    plan_deletion(root, &project, &chain, target.before, gone, args.run.force)
}

/// Plan `delete webhook`.
pub fn plan_delete_webhook(root: &Path, args: &DeleteWebhookArgs) -> Result<Deletion> {
    let project = Project::load(root)?;
    let chain = chain_for(&project, args.run.plugins.as_deref(), "delete webhook")?;
    let target = request::resolve_webhook(&project, args)?;
    plan_deletion(
        root,
        &project,
        &chain,
        target.before,
        vec![Create::Webhook(Box::new(target.hook))],
        args.run.force,
    )
}
