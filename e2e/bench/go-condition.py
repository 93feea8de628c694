#!/usr/bin/env python3
"""The scale benchmark's patch of a go/v4 project (e2e/scripts/scale.sh): the scaffolded Reconcile
of KIND (internal/controller/<kind>_controller.go) gets the few lines a Kubebuilder user writes
to report an Available condition, as the Rust layout's scaffolded controller does: the condition
set with meta.SetStatusCondition (which keeps lastTransitionTime while the status holds and says
whether anything changed) and the status written only when it changed, with Status().Update.

Usage: go-condition.py PROJECT_DIR KIND    Fails, naming what it missed, when the scaffold no
longer has the lines it replaces.
"""
import pathlib
import sys

project, kind = sys.argv[1], sys.argv[2]
var = kind[0].lower() + kind[1:]
path = pathlib.Path(project, "internal", "controller", f"{kind.lower()}_controller.go")
src = path.read_text()

todo_start = f"\t// TODO(user): compare {var} with what exists in the cluster"
body = f"""\t// The benchmark's status (e2e/bench/go-condition.py): an Available condition, written
\t// only when it changed.
\tif meta.SetStatusCondition(&{var}.Status.Conditions, metav1.Condition{{
\t\tType:               "Available",
\t\tStatus:             metav1.ConditionTrue,
\t\tReason:             "Reconciled",
\t\tMessage:            "the {kind} is reconciled",
\t\tObservedGeneration: {var}.Generation,
\t}}) {{
\t\tif err := r.Status().Update(ctx, &{var}); err != nil {{
\t\t\treturn ctrl.Result{{}}, err
\t\t}}
\t}}
"""
start = src.find(todo_start)
end = src.find("\n\n", start)
if start < 0 or end < 0:
    sys.exit(f"go-condition.py: {path} has no '{todo_start.strip()}' comment to replace")
src = src[:start] + body + src[end + 1:]

imports = '\t"k8s.io/apimachinery/pkg/runtime"\n'
if imports not in src:
    sys.exit(f"go-condition.py: {path} does not import k8s.io/apimachinery/pkg/runtime")
src = src.replace(imports, '\t"k8s.io/apimachinery/pkg/api/meta"\n\tmetav1 "k8s.io/apimachinery/pkg/apis/meta/v1"\n' + imports, 1)
path.write_text(src)
