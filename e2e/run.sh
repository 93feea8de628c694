#!/usr/bin/env bash
# The end-to-end suite: everything that needs Go, kustomize or a Kubernetes control plane.
#
#   bash e2e/run.sh              # all of it
#   bash e2e/run.sh smoke        # only the control-plane smoke test
#   bash e2e/run.sh golden       # only the golden-tree checks (with make test)
#   bash e2e/run.sh scenarios    # only the scenarios on a live control plane
#   bash e2e/run.sh rust         # the Rust layout's manager on a live control plane (its golden
#                                # tree's make test runs in `golden`) and its webhook objects
#                                # against go/v4's
#   bash e2e/run.sh parity [SCENARIO...]  # only the differential suite against Kubebuilder ([e2e] kubebuilder)
#                                         # (and generate-parity below, for Kubebuilder's scripts)
#   bash e2e/run.sh generate-parity [SCENARIO...]  # only `alpha generate` of Kubebuilder's scripts
#   bash e2e/run.sh faults       # only kill -9 at random points and ENOSPC on a tmpfs (root)
#   bash e2e/run.sh envtest-offline  # make envtest-from-source + make test of a golden project, no helpers
#   bash e2e/run.sh tutorial     # docs/tutorial.md, executed against a live control plane
#   bash e2e/run.sh rust-tutorial  # docs/rust-tutorial.md, likewise
#   bash e2e/run.sh helm         # the helm plugin's chart: helm lint/template/install (live plane)
#   bash e2e/run.sh alpha-update # release 0.1.0 reproduced; 0.1.0 projects with user code updated
#   bash e2e/run.sh install      # the crate as published: package, publish --dry-run, cargo install, use
#
# Needs: cargo (crates.io reachable), go (module proxy reachable), make, kubectl, curl. Builds the control-plane binaries
# from source on first use and caches them in ~/.cache/opbuilder-e2e (see docs/testing.md).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=scripts/lib.sh
source "$here/scripts/lib.sh"

what=${1:-all}
shift || true
if [[ $what == faults ]]; then
	# Needs neither Go nor a control plane.
	"$here/scripts/faults.sh"
	exit 0
fi
if [[ $what == install ]]; then
	# Needs cargo, crates.io and man; neither Go nor a control plane.
	"$here/scripts/install.sh"
	exit 0
fi
need_cmd cargo go make kubectl
start=$SECONDS

log_info "building opbuilder"
cargo build --quiet --manifest-path "$OPBUILDER_ROOT/Cargo.toml"
export OPBUILDER_BIN="$OPBUILDER_TARGET_DIR/debug/opbuilder"

if [[ $what != parity && $what != generate-parity ]]; then
	log_info "control-plane binaries (cached by version)"
	"$here/scripts/build-control-plane.sh"
fi

if [[ $what == all || $what == smoke ]]; then
	"$here/scripts/smoke-control-plane.sh"
fi
if [[ $what == all || $what == golden ]]; then
	"$here/scripts/check-golden.sh"
fi
if [[ $what == all || $what == scenarios ]]; then
	"$here/scripts/scenarios.sh"
fi
if [[ $what == all || $what == rust ]]; then
	"$here/scripts/rust-live.sh"
	"$here/scripts/rust-webhook-parity.sh"
fi
if [[ $what == all || $what == envtest-offline ]]; then
	"$here/scripts/envtest-offline.sh"
fi
if [[ $what == all || $what == tutorial ]]; then
	"$here/scripts/tutorial.sh"
fi
if [[ $what == all || $what == rust-tutorial ]]; then
	"$here/scripts/tutorial.sh" --rust
fi
if [[ $what == all || $what == helm ]]; then
	"$here/scripts/helm-chart.sh"
fi
if [[ $what == all || $what == parity || $what == generate-parity ]]; then
	"$here/scripts/generate-parity.sh" "$@"
fi
if [[ $what == all || $what == alpha-update ]]; then
	"$here/scripts/alpha-update.sh"
fi
if [[ $what == all || $what == parity ]]; then
	"$here/scripts/parity.sh" "$@"
fi
if [[ $what == all ]]; then
	"$here/scripts/faults.sh"
	"$here/scripts/install.sh"
fi
log_info "e2e finished in $(fmt_duration $((SECONDS - start)))"
