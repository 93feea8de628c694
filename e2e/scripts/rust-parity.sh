#!/usr/bin/env bash
# The Rust layout's webhooks against go/v4's: the same commands (defaulting and validation on
# Guestbook, its v1/v2 conversion, ConfigMap defaulting) through opbuilder with each layout, then
# `make manifests` and `kubectl kustomize config/default` in both projects. Every object the
# webhooks involve must match: the webhook configurations (names, paths, services, rules,
# policies, CA injection), the webhook Service, the cert-manager Issuer and Certificate, the
# CRD's conversion, the manager's webhook arguments, port and certificate volume, and the
# network policy (the CRD's controller-gen version annotation aside). Needs python3 with PyYAML (Debian: python3-yaml).
#
# Usage: rust-webhook-parity.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
need_cmd cargo go make kubectl
need_pyyaml
OPBUILDER_BIN=${OPBUILDER_BIN:-$OPBUILDER_TARGET_DIR/debug/opbuilder}
[[ -x $OPBUILDER_BIN ]] || die "opbuilder binary $OPBUILDER_BIN missing: run 'cargo build' (or set OPBUILDER_BIN)"

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-rust-webhook-parity.XXXXXX")
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

log_info "go/v4 project: scaffold, go mod tidy, make manifests"
scaffold "$work/go" --repo example.com/guestbook --skip-post-steps
(
	cd "$work/go"
	go mod tidy
	"$scripts/seed-tools.sh" "$work/go" >/dev/null
	make manifests >/dev/null
	kubectl kustomize config/default >"$work/go.yaml"
)
log_info "Rust project: scaffold, make manifests"
scaffold "$work/rust" --plugins=rust.opbuilder.io/v1-alpha
(
	cd "$work/rust"
	use_rust_target
	make manifests >/dev/null
	kubectl kustomize config/default >"$work/rust.yaml"
)

log_info "comparing the webhook objects"
python3 - "$work/go.yaml" "$work/rust.yaml" <<'PY'
import json, sys, yaml

def load(path):
    return [d for d in yaml.safe_load_all(open(path)) if d]

def webhook_parts(objs):
    out = {}
    for o in objs:
        kind, name = o["kind"], o["metadata"]["name"]
        meta = o["metadata"]
        if kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            hooks = sorted(o.get("webhooks", []), key=lambda w: w["name"])
            out[(kind, name)] = {"annotations": meta.get("annotations"), "webhooks": hooks}
        elif kind == "Service" and name.endswith("webhook-service"):
            out[(kind, name)] = o["spec"]
        elif kind in ("Certificate", "Issuer"):
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
        elif kind == "NetworkPolicy" and "webhook" in name:
            out[(kind, name)] = o["spec"]
        elif kind == "Deployment":
            c = o["spec"]["template"]["spec"]["containers"][0]
            out[(kind, name)] = {
                "webhook args": sorted(a for a in c.get("args", []) if "webhook" in a),
                "webhook ports": [p for p in c.get("ports", []) if "webhook" in p.get("name", "")],
                "webhook mounts": [m for m in c.get("volumeMounts", []) if "webhook" in m["name"]],
                "webhook volumes": [v for v in o["spec"]["template"]["spec"].get("volumes", []) if "webhook" in v["name"]],
            }
    return out

go, rust = webhook_parts(load(sys.argv[1])), webhook_parts(load(sys.argv[2]))
failed = False
for key in sorted(set(go) | set(rust)):
    a, b = go.get(key), rust.get(key)
    if a != b:
        failed = True
        print(f"differs: {key[0]} {key[1]}")
        print("  go/v4:", json.dumps(a, sort_keys=True))
        print("  rust: ", json.dumps(b, sort_keys=True))
checked = ", ".join(f"{k} {n}" for k, n in sorted(go))
print(f"compared {len(go)} objects: {checked}")
sys.exit(1 if failed else 0)
PY
log_info "rust-webhook-parity: ok"
