#!/usr/bin/env bash
# Set an image of a kustomization file as `kustomize edit set image NAME=IMAGE` does, for
# `make deploy` and `make build-installer` when kustomize is not installed (`kubectl kustomize`
# builds, but has no `edit`). The file comes out as kustomize writes it: its fields in their
# order, `images` replaced where it is (its entries sorted by name, NAME's set to IMAGE),
# apiVersion and kind added when missing, then `images` when it was missing. A field this script
# cannot rewrite as kustomize would (an unknown or deprecated one, an image entry with other
# keys) is an error: install kustomize for such a file.
#
# Usage: bash hack/set-image.sh FILE NAME=IMAGE
#   IMAGE is [host[:port]/]path[:tag][@digest], e.g. registry.example.com:5000/app:v1
set -euo pipefail

if [[ $# -ne 2 || $2 != ?*=?* ]]; then
	echo "usage: $0 FILE NAME=IMAGE (e.g. config/manager/kustomization.yaml controller=registry.example.com/app:v1)" >&2
	exit 2
fi
file=$1
name=${2%%=*}
image=${2#*=}

# Split IMAGE as kustomize does: a tag is looked for after the first '/' only (a registry's port
# is no tag), a digest after '@'.
prefix="" search=$image
if [[ $image == ?*/* ]]; then
	prefix=${image%%/*}
	search=/${image#*/}
fi
new_name=$image new_tag="" digest=""
before_at=${search%%@*} before_colon=${search%%:*}
if [[ $search == *@* && (${#before_at} -lt ${#before_colon} || $search != *:*) ]]; then
	new_name=$prefix$before_at
	digest=${search#*@}
elif [[ $search == *:*@* ]]; then
	new_name=$prefix$before_colon
	rest=${search#*:}
	new_tag=${rest%%@*}
	digest=${rest#*@}
elif [[ $search == *:* ]]; then
	new_name=$prefix$before_colon
	new_tag=${search#*:}
fi

[[ -f $file ]] || {
	echo "$file: no such file" >&2
	exit 1
}
tmp=$(mktemp "$file.XXXXXX")
trap 'rm -f "$tmp"' EXIT
awk -v name="$name" -v new_name="$new_name" -v new_tag="$new_tag" -v digest="$digest" -v file="$file" '
# The top-level fields kustomize keeps (in the order it appends missing ones); the deprecated
# ones it rewrites are refused.
BEGIN {
	n = split("apiversion kind metadata sortoptions resources namePrefix nameSuffix namespace crds " \
		"commonLabels labels commonAnnotations patches configMapGenerator secretGenerator helmCharts " \
		"helmChartInflationGenerator helmGlobals generatorOptions vars images replacements replicas " \
		"configurations generators transformers validators components openapi buildMetadata", f, " ")
	for (i = 1; i <= n; i++) known[tolower(f[i])] = 1
	nf = 0; pending = ""; cur = 0
}
function fail(msg) { printf "%s: %s; install kustomize to set the image of this file\n", file, msg > "/dev/stderr"; bad = 1; exit 1 }
# A value as the YAML encoder kustomize uses writes it: quoted when it would read back as
# another type (a number, a bool, null, a sexagesimal number).
function yq(s,   p) {
	if (s == "") return "\"\""
	if (s ~ /^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~)$/) return "\"" s "\""
	if (s ~ /^([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$/) return "\"" s "\""
	if (s ~ /^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/) return "\"" s "\""
	p = s; gsub(/_/, "", p)
	if (p ~ /^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+)$/) return "\"" s "\""
	if (p ~ /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/) return "\"" s "\""
	return s
}
function unq(s) {
	if (s ~ /^".*"$/ || s ~ /^'\''.*'\''$/) return substr(s, 2, length(s) - 2)
	return s
}
# Comment and blank lines go with the next field; those inside a field (followed by more of
# it) go before that field, as kustomize moves them.
/^[ \t]*(#.*)?$/ { pending = pending $0 "\n"; next }
/^[A-Za-z][A-Za-z0-9]*:/ {
	key = $0; sub(/:.*/, "", key)
	if (!(tolower(key) in known)) fail("its field \"" key "\" is unknown or deprecated")
	cur = ++nf; fkey[cur] = tolower(key); comment[cur] = pending; pending = ""
	body[cur] = $0 "\n"
	if (fkey[cur] == "images" && $0 !~ /^images:[ \t]*$/) fail("its images are not a block list")
	next
}
{
	if (cur == 0) fail("it does not start with a field")
	comment[cur] = comment[cur] pending; pending = ""
	body[cur] = body[cur] $0 "\n"
	if (fkey[cur] != "images") next
	if ($0 ~ /^- /) { ni++; line = substr($0, 3) } else if ($0 ~ /^  [^ ]/) { line = substr($0, 3) } else fail("an image entry is not as kustomize writes it")
	if (ni == 0) fail("an image entry is not as kustomize writes it")
	k = line; sub(/:.*/, "", k); v = line; sub(/^[^:]*:[ \t]*/, "", v)
	if (k !~ /^(name|newName|newTag|digest)$/) fail("an image entry has \"" k "\"")
	img[ni, k] = unq(v)
}
function images_yaml(   i, j, t, out, order, m) {
	m = 0
	for (i = 1; i <= ni; i++) if (img[i, "name"] != name) order[++m] = i
	img[0, "name"] = name; img[0, "newName"] = new_name; img[0, "newTag"] = new_tag; img[0, "digest"] = digest
	order[++m] = 0
	for (i = 2; i <= m; i++) for (j = i; j > 1 && img[order[j - 1], "name"] > img[order[j], "name"]; j--) {
		t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
	}
	out = "images:\n"
	for (i = 1; i <= m; i++) {
		t = order[i]; first = "- "
		if (img[t, "digest"] != "") { out = out first "digest: " yq(img[t, "digest"]) "\n"; first = "  " }
		out = out first "name: " yq(img[t, "name"]) "\n"
		if (img[t, "newName"] != "") out = out "  newName: " yq(img[t, "newName"]) "\n"
		if (img[t, "newTag"] != "") out = out "  newTag: " yq(img[t, "newTag"]) "\n"
	}
	return out
}
END {
	if (bad) exit 1
	for (i = 1; i <= nf; i++) {
		have[fkey[i]] = 1
		printf "%s%s", comment[i], (fkey[i] == "images" ? images_yaml() : body[i])
	}
	if (!("apiversion" in have)) print "apiVersion: kustomize.config.k8s.io/v1beta1"
	if (!("kind" in have)) print "kind: Kustomization"
	if (!("images" in have)) printf "%s", images_yaml()
}
' "$file" >"$tmp"
mv "$tmp" "$file"
trap - EXIT
