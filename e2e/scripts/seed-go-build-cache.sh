#!/usr/bin/env bash
# Test infrastructure, not part of any generated project: fill BuildKit's cache mounts of a go/v4
# project's Dockerfile (Go's module cache at /go/pkg/mod, its build cache at /root/.cache/go-build)
# from this host's caches, so that the project's own `make docker-build` compiles only what the
# host has not built already. The generated Dockerfile is used as it is; this only puts files
# into the caches it mounts.
#
# What is copied is what the project's image build needs and nothing more:
#   - the modules of `go mod download -json` (zip, .info, .mod, .ziphash and the extracted tree);
#   - the build cache entries of `go build -trimpath -o /dev/null cmd/main.go` with the
#     Dockerfile's settings (CGO_ENABLED=0, GOOS=linux, the host's GOARCH), named by the action IDs
#     that GODEBUG=gocachehash=1 prints. Those IDs do not depend on where GOROOT or the module
#     cache are (-trimpath), so the entries serve the same Go in the golang image (cluster.sh
#     builds that image from this host's Go, and this script checks that the versions agree).
# Then a build of a throw-away Dockerfile (golang:<go_image>, output discarded) copies them into
# the cache mounts, which BuildKit keys by their target path.
#
# Usage: seed-go-build-cache.sh PROJECT_DIR     Needs Docker with BuildKit (cluster.sh env).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_cmd go docker python3
[[ $# -eq 1 && -f $1/go.mod ]] || die "usage: $0 PROJECT_DIR (a go/v4 project)"
proj=$(cd "$1" && pwd)
image=golang:$(pin scaffold.go_image)
host_go=$(go env GOVERSION)
image_go=$(docker image inspect -f '{{ range .Config.Env }}{{ println . }}{{ end }}' "$image" 2>/dev/null |
	sed -n 's/^GOLANG_VERSION=//p')
[[ -n $image_go ]] || die "no image $image (cluster.sh start makes it)"
[[ go$image_go == "$host_go" ]] ||
	die "the host's Go is $host_go but $image has Go $image_go: the build cache would not match"

stage=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-seed.XXXXXX")
trap 'rm -rf "$stage"' EXIT
gomodcache=$(go env GOMODCACHE)
gocache=$(go env GOCACHE)

cd "$proj"
go mod download -json >"$stage/modules.json"
GODEBUG=gocachehash=1 CGO_ENABLED=0 GOOS=linux GOARCH="$(go env GOARCH)" GOFLAGS=-trimpath \
	go build -o /dev/null cmd/main.go 2>"$stage/hashes.txt"

# Hard links (or copies, across file systems) into $stage/context/{mod,go-build}.
python3 - "$stage" "$gomodcache" "$gocache" <<'EOF'
import json, os, re, shutil, sys

stage, gomodcache, gocache = sys.argv[1:4]
ctx = os.path.join(stage, "context")

def put(src, dst):
    if os.path.lexists(dst):
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)

dec, text, i, mods, files = json.JSONDecoder(), open(os.path.join(stage, "modules.json")).read(), 0, 0, 0
while True:
    while i < len(text) and text[i].isspace():
        i += 1
    if i == len(text):
        break
    m, i = dec.raw_decode(text, i)
    if m.get("Error"):
        sys.exit(f"go mod download: {m['Path']}: {m['Error']}")
    mods += 1
    paths = [m.get(k) for k in ("Info", "GoMod", "Zip")]
    if m.get("Zip"):
        paths.append(m["Zip"][: -len(".zip")] + ".ziphash")
    for p in filter(None, paths):
        if os.path.exists(p):
            put(p, os.path.join(ctx, "mod", os.path.relpath(p, gomodcache)))
            files += 1
    if m.get("Dir"):
        for root, _, names in os.walk(m["Dir"]):
            for n in names:
                p = os.path.join(root, n)
                put(p, os.path.join(ctx, "mod", os.path.relpath(p, gomodcache)))
                files += 1

ids = set(re.findall(r"\b[0-9a-f]{64}\b", open(os.path.join(stage, "hashes.txt")).read()))
entries, size = 0, 0
for h in ids:
    a = os.path.join(gocache, h[:2], h + "-a")
    if not os.path.exists(a):
        continue
    put(a, os.path.join(ctx, "go-build", h[:2], h + "-a"))
    entries += 1
    fields = open(a).read().split()
    if len(fields) >= 3 and re.fullmatch(r"[0-9a-f]{64}", fields[2]):
        d = os.path.join(gocache, fields[2][:2], fields[2] + "-d")
        if os.path.exists(d):
            put(d, os.path.join(ctx, "go-build", fields[2][:2], fields[2] + "-d"))
            size += os.path.getsize(d)
print(f"{mods} modules ({files} files), {entries} build cache entries ({size / 1e6:.0f} MB of outputs)")
EOF

# The cache mounts are keyed by their target path: the same as in the generated Dockerfile.
cat >"$stage/context/Dockerfile" <<EOF
FROM $image
RUN --mount=type=bind,target=/seed \\
    --mount=type=cache,target=/go/pkg/mod \\
    --mount=type=cache,target=/root/.cache/go-build \\
    cp -an /seed/mod/. /go/pkg/mod/ && cp -an /seed/go-build/. /root/.cache/go-build/
EOF
printf 'Dockerfile\n' >"$stage/context/.dockerignore"
docker build -q --output type=cacheonly "$stage/context" >/dev/null
