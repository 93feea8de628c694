#!/usr/bin/env python3
"""What the user of a Rust project made by opbuilder 0.4.0 does to their own code after `alpha
update` (CHANGELOG.md, "Upgrading from 0.4.0"), as alpha-update.sh's user: the update merges the
templates' changes into the files the user rewrote, and three of them need the user's hand.

- A controller that keeps its finalizer (`pub const FINALIZER: &str`): the merged `RBAC` asks
  `FINALIZER.is_some()`, which a `&str` has not; the user writes the verbs out, with the patch
  the finalizer needs.
- A controller that still requeues after a delay: the merge took the templates' removal of
  `use std::time::Duration;` (they no longer requeue); the user puts the import back.
- Webhook handlers: `default` and `validate` are `async fn`s with a `&Cluster` now (the routes
  the update merged call them so); the user makes theirs so, and awaits them in their tests.

Usage: rust-user-upgrade.py FILE...   (each file rewritten in place; a file needing nothing is
left alone). Prints what it changed.
"""
import re
import sys


def call_args_end(text, start):
    """The index of the parenthesis that closes the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced parentheses from {start}")


def add_cluster_to_calls(text, name, cluster):
    """`name(ARGS)` -> `name(ARGS, CLUSTER).await` for each call of `name` (not its definition)."""
    out, i = [], 0
    pattern = re.compile(r"(?<![\w:.])" + name + r"\(")
    while True:
        m = pattern.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        open_at = m.end() - 1
        close_at = call_args_end(text, open_at)
        before = text[max(0, m.start() - 7):m.start()]
        out.append(text[i:m.start()])
        if before.endswith("fn "):
            out.append(text[m.start():close_at + 1])
        else:
            out.append(f"{name}({text[open_at + 1:close_at]}, {cluster}).await")
        i = close_at + 1


def controller(text):
    changed = []
    if re.search(r"pub const FINALIZER: &str", text) and "FINALIZER.is_some()" in text:
        text, n = re.subn(
            r"verbs: if FINALIZER\.is_some\(\) \{\s*(&\[[^\]]*\])\s*\} else \{\s*&\[[^\]]*\]\s*\},",
            r"verbs: \1,",
            text,
        )
        if n:
            changed.append("the verbs of its finalizer written out")
    if "Duration::" in text and not re.search(r"use std::time::(Duration|\{[^}]*Duration)", text):
        text = text.replace("use std::sync::Arc;\n", "use std::sync::Arc;\nuse std::time::Duration;\n", 1)
        changed.append("use std::time::Duration put back")
    return text, changed


def webhooks(text):
    changed = []
    sync_default = re.search(r"pub fn default\((\w+): &mut (\w+)\)", text)
    sync_validate = re.search(r"pub fn validate\(([^)]*)\) -> Validation", text)
    if not (sync_default or sync_validate):
        return text, changed
    if sync_default:
        text = text.replace(
            sync_default.group(0),
            f"pub async fn default({sync_default.group(1)}: &mut {sync_default.group(2)}, _cluster: &Cluster)",
        )
        text = add_cluster_to_calls(text, "default", "&Cluster::offline()")
        changed.append("default async, with a &Cluster")
    if sync_validate:
        text = text.replace(
            sync_validate.group(0),
            f"pub async fn validate({sync_validate.group(1)}, _cluster: &Cluster) -> Validation",
        )
        text = add_cluster_to_calls(text, "validate", "&Cluster::offline()")
        changed.append("validate async, with a &Cluster")
    # Tests that now await: tokio's.
    text = re.sub(
        r"#\[test\]\n(\s*)fn (\w+)\(\) \{((?:(?!\n\s*#\[).)*?\.await)",
        r"#[tokio::test]\n\1async fn \2() {\3",
        text,
        flags=re.S,
    )
    # The names the module takes from the webhook server, Cluster among them.
    if not re.search(r"use crate::webhook::\{[^}]*\bCluster\b", text):
        text = re.sub(r"use crate::webhook::\{self, ", "use crate::webhook::{self, Cluster, ", text, count=1)
    return text, changed


for path in sys.argv[1:]:
    with open(path) as f:
        text = f.read()
    new, changed = text, []
    for step in (controller, webhooks):
        new, did = step(new)
        changed += did
    if new != text:
        with open(path, "w") as f:
            f.write(new)
        print(f"{path}: {'; '.join(changed)}")
