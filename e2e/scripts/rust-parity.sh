#!/usr/bin/env bash
# The Rust layout's kustomize objects against go/v4's: the same commands (defaulting and
# validation on Guestbook, its v1/v2 conversion, ConfigMap defaulting) through opbuilder with each
# layout, then `make manifests` and `kubectl kustomize config/default` in both projects, once as
# scaffolded and once with every optional metrics part enabled as a user enables it (the
# cert-manager metrics certificate and its replacements, the ServiceMonitor with its TLS patch,
# the network policies). Every object the webhooks and the metrics involve must match:
#   webhooks: the webhook configurations (names, paths, services, rules, policies, CA
#     injection), the webhook Service, the cert-manager Issuer and Certificates, the CRD's
#     conversion, the manager's webhook arguments, port and certificate volume, and the network
#     policy (the CRD's controller-gen version annotation aside);
#   metrics: the metrics Service, the manager's metrics arguments, ports and certificate volume,
#     the metrics-auth and metrics-reader ClusterRoles and binding, the ServiceMonitor and the
#     metrics network policy.
# The Rust layout's one recorded departure here is checked as such: a webhook on a core type has
# `timeoutSeconds: 5` and a namespaceSelector leaving kube-system and the manager's namespace out
# (docs/commands.md); otherwise it is go/v4's. Needs python3 with PyYAML (Debian: python3-yaml).
#
# Usage: rust-parity.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
need_cmd cargo go make kubectl
need_pyyaml
OPBUILDER_BIN=${OPBUILDER_BIN:-$OPBUILDER_TARGET_DIR/debug/opbuilder}
[[ -x $OPBUILDER_BIN ]] || die "opbuilder binary $OPBUILDER_BIN missing: run 'cargo build' (or set OPBUILDER_BIN)"

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-rust-parity.XXXXXX")
trap 'rm -rf "$work"' EXIT

scaffold() { # DIR INIT-FLAGS...
	local dir=$1
	shift
	mkdir -p "$dir"
	(
		cd "$dir"
		"$OPBUILDER_BIN" init --domain example.com --project-name guestbook "$@" >/dev/null
		for c in \
			"api --group webapp --version v1 --kind Guestbook --resource --controller" \
			"api --group webapp --version v2 --kind Guestbook --resource --controller=false" \
			"webhook --group webapp --version v1 --kind Guestbook --defaulting --programmatic-validation" \
			"webhook --group webapp --version v1 --kind Guestbook --conversion --spoke v2" \
			"webhook --group core --version v1 --kind ConfigMap --defaulting"; do
			# shellcheck disable=SC2086
			"$OPBUILDER_BIN" create $c --skip-post-steps >/dev/null
		done
	)
}

# render NAME: config/default as scaffolded into $work/NAME.yaml, and with every optional
# metrics part enabled into $work/NAME-all.yaml (the project is changed in a copy).
render() {
	kubectl kustomize config/default >"$work/$1.yaml"
	rm -rf "$work/$1-all"
	cp -r config "$work/$1-all"
	python3 - "$work/$1-all" <<'PY'
import re, sys
root = sys.argv[1]
def edit(path, change):
    text = open(path).read()
    new = change(text)
    if new == text:
        sys.exit(f"{path}: nothing to enable")
    open(path, "w").write(new)
def default(text):
    for line in ("#- ../prometheus", "#- ../network-policy"):
        text = text.replace(line + "\n", line[1:] + "\n")
    text = text.replace("#- path: cert_metrics_manager_patch.yaml\n#  target:\n#    kind: Deployment",
                        "- path: cert_metrics_manager_patch.yaml\n  target:\n    kind: Deployment")
    # The metrics replacements: each commented block up to the blank line after it.
    return re.sub(r"(?m)^# - source: # Metrics certificate.*?(?=^$)",
                  lambda m: re.sub(r"(?m)^#", "", m.group(0)), text, flags=re.S)
edit(f"{root}/default/kustomization.yaml", default)
edit(f"{root}/prometheus/kustomization.yaml",
     lambda t: re.sub(r"(?m)^#(patches:|  - path: monitor_tls_patch.yaml|    target:|      kind: ServiceMonitor)$", r"\1", t))
PY
	kubectl kustomize "$work/$1-all/default" >"$work/$1-all.yaml"
}

log_info "go/v4 project: scaffold, go mod tidy, make manifests"
scaffold "$work/go" --repo example.com/guestbook --skip-post-steps
(
	cd "$work/go"
	go mod tidy
	"$scripts/seed-tools.sh" "$work/go" >/dev/null
	make manifests >/dev/null
	render go
)
log_info "Rust project: scaffold, make manifests"
scaffold "$work/rust" --plugins=rust.opbuilder.io/v1-beta
(
	cd "$work/rust"
	use_rust_target
	make manifests >/dev/null
	render rust
)

log_info "comparing the webhook and metrics objects, as scaffolded and with every metrics part enabled"
python3 - "$work/go.yaml" "$work/rust.yaml" "$work/go-all.yaml" "$work/rust-all.yaml" <<'PY'
import json, sys, yaml

def load(path):
    return [d for d in yaml.safe_load_all(open(path)) if d]

# The departure of the Rust layout: a webhook on a core type leaves system namespaces alone and
# waits 5 s at most (docs/commands.md, "The Rust layout").
CORE_WEBHOOK = {
    "timeoutSeconds": 5,
    "namespaceSelector": {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]},
        {"key": "app.kubernetes.io/name", "operator": "NotIn", "values": ["guestbook"]},
    ]},
}

def rust_departures(objs):
    for o in objs:
        if o["kind"] not in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            continue
        for w in o.get("webhooks", []):
            core = all(r.get("apiGroups") == [""] for r in w.get("rules", []))
            got = {k: w.pop(k) for k in list(CORE_WEBHOOK) if k in w}
            if core and got != CORE_WEBHOOK:
                sys.exit(f"the Rust webhook {w['name']} on a core type lacks its documented defaults: {got}")
            if not core and got:
                sys.exit(f"the Rust webhook {w['name']} on a kind of the project has {got}: go/v4's has none")
    return objs

def parts(objs):
    out = {}
    for o in objs:
        kind, name = o["kind"], o["metadata"]["name"]
        meta = o["metadata"]
        if kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            hooks = sorted(o.get("webhooks", []), key=lambda w: w["name"])
            out[(kind, name)] = {"annotations": meta.get("annotations"), "webhooks": hooks}
        elif kind == "Service" and (name.endswith("webhook-service") or name.endswith("metrics-service")):
            out[(kind, name)] = o["spec"]
        elif kind in ("Certificate", "Issuer", "ServiceMonitor"):
            out[(kind, name)] = o["spec"]
        elif kind == "CustomResourceDefinition":
            # controller-gen stamps its version on the CRDs it writes; the Rust generator is not it
            annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                           if k != "controller-gen.kubebuilder.io/version"}
            out[(kind, name)] = {
                "annotations": annotations,
                "conversion": o["spec"].get("conversion"),
                "versions": sorted((v["name"], v["served"], v["storage"]) for v in o["spec"]["versions"]),
            }
        elif kind == "NetworkPolicy":
            out[(kind, name)] = o["spec"]
        elif kind == "ClusterRole" and ("metrics" in name):
            out[(kind, name)] = o.get("rules")
        elif kind == "ClusterRoleBinding" and "metrics" in name:
            out[(kind, name)] = {"roleRef": o["roleRef"], "subjects": o["subjects"]}
        elif kind == "Deployment":
            pod = o["spec"]["template"]["spec"]
            c = pod["containers"][0]
            about = lambda text: "webhook" in text or "metrics" in text
            out[(kind, name)] = {
                "args": sorted(a for a in c.get("args", []) if about(a)),
                "ports": [p for p in c.get("ports", []) if about(p.get("name", ""))],
                "mounts": [m for m in c.get("volumeMounts", []) if about(m["name"])],
                "volumes": [v for v in pod.get("volumes", []) if about(v["name"])],
            }
    return out

failed = False
for label, go_path, rust_path in (("as scaffolded", sys.argv[1], sys.argv[2]),
                                  ("every metrics part enabled", sys.argv[3], sys.argv[4])):
    go, rust = parts(load(go_path)), parts(rust_departures(load(rust_path)))
    for key in sorted(set(go) | set(rust)):
        a, b = go.get(key), rust.get(key)
        if a != b:
            failed = True
            print(f"differs ({label}): {key[0]} {key[1]}")
            print("  go/v4:", json.dumps(a, sort_keys=True))
            print("  rust: ", json.dumps(b, sort_keys=True))
    checked = ", ".join(f"{k} {n}" for k, n in sorted(go))
    print(f"{label}: compared {len(go)} objects: {checked}")
sys.exit(1 if failed else 0)
PY
log_info "rust-parity: ok"
