// Command kindindex is kindindex.acme.io/v1, a compiled external plugin for the parity suite:
// the same binary runs under Kubebuilder and under opbuilder, and what it writes must be the
// same under both. It reads the files the plugins before it planned (the universe) and the
// project configuration, and writes:
//   - init: internal/acme/index.go (the module, from go.mod, and --tier), config/acme/ (a
//     ConfigMap) and `- ../acme` in config/default/kustomization.yaml;
//   - create api: internal/acme/<kind>_<version>.go, listing the Go types the API's
//     *_types.go file declares (go/v4 wrote it earlier in the same command);
//   - create webhook: internal/acme/<kind>_<version>_webhooks.go, the webhook kinds asked for;
//   - edit --tier: index.go and the ConfigMap again.
//
// The protocol: one JSON request on stdin, one JSON response on stdout, logs on stderr.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

type request struct {
	APIVersion  string            `json:"apiVersion"`
	Args        []string          `json:"args"`
	Command     string            `json:"command"`
	Universe    map[string]string `json:"universe"`
	PluginChain []string          `json:"pluginChain,omitempty"`
	Config      map[string]any    `json:"config,omitempty"`
}

type flag struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Default string `json:"default"`
	Usage   string `json:"usage"`
}

type metadata struct {
	Description string `json:"description"`
	Examples    string `json:"examples"`
}

type response struct {
	APIVersion string            `json:"apiVersion"`
	Command    string            `json:"command"`
	Metadata   metadata          `json:"metadata"`
	Universe   map[string]string `json:"universe"`
	Error      bool              `json:"error,omitempty"`
	ErrorMsgs  []string          `json:"errorMsgs,omitempty"`
	Flags      []flag            `json:"flags,omitempty"`
}

// options reads --name value, --name=value and --name (true).
func options(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		a, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			continue
		}
		if name, value, found := strings.Cut(a, "="); found {
			out[name] = value
			continue
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			out[a] = args[i+1]
			i++
			continue
		}
		out[a] = "true"
	}
	return out
}

func module(goMod string) string {
	for _, l := range strings.Split(goMod, "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	return ""
}

func index(mod, tier string) string {
	return fmt.Sprintf(`// Package acme indexes the kinds of %s.
package acme

// Module is the Go module of the project.
const Module = %q

// Tier is the service tier the operator runs in.
const Tier = %q
`, mod, mod, tier)
}

func settings(tier string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: acme-settings\n  namespace: system\ndata:\n  tier: %s\n", tier)
}

// goName turns a version or kind into part of a Go identifier: v1beta1 -> V1beta1.
func goName(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

var typeDecl = regexp.MustCompile(`(?m)^type (\w+) struct`)

func run(req request) response {
	res := response{APIVersion: "v1alpha1", Command: req.Command, Universe: map[string]string{}}
	opts := options(req.Args)
	fail := func(format string, args ...any) response {
		return response{APIVersion: "v1alpha1", Command: req.Command, Error: true, ErrorMsgs: []string{fmt.Sprintf(format, args...)}}
	}
	switch req.Command {
	case "flags":
		switch strings.TrimPrefix(req.Args[0], "--") {
		case "init", "edit":
			res.Flags = []flag{{Name: "tier", Type: "string", Default: "standard", Usage: "the service tier (internal/acme, config/acme)"}}
		}
	case "metadata":
		res.Metadata = metadata{Description: "Indexes the project's kinds in internal/acme.", Examples: "kubebuilder init --plugins=go/v4,kindindex.acme.io/v1 --tier gold"}
	case "init":
		mod := module(req.Universe["go.mod"])
		if mod == "" {
			return fail("kindindex: go.mod is not in the universe: run it after go/v4")
		}
		tier := opts["tier"]
		if tier == "" {
			tier = "standard"
		}
		res.Universe["internal/acme/index.go"] = index(mod, tier)
		res.Universe["config/acme/kustomization.yaml"] = "resources:\n- settings.yaml\n"
		res.Universe["config/acme/settings.yaml"] = settings(tier)
		const kust = "config/default/kustomization.yaml"
		k, ok := req.Universe[kust]
		if !ok || !strings.Contains(k, "\n- ../manager\n") {
			return fail("kindindex: %s has no `- ../manager` resource", kust)
		}
		res.Universe[kust] = strings.Replace(k, "\n- ../manager\n", "\n- ../manager\n- ../acme\n", 1)
	case "create api", "create webhook":
		kind, version := opts["kind"], opts["version"]
		var path string
		resources, _ := req.Config["resources"].([]any)
		for _, r := range resources {
			m, _ := r.(map[string]any)
			if m["kind"] == kind && m["version"] == version && fmt.Sprint(m["group"]) == opts["group"] {
				path, _ = m["path"].(string)
			}
		}
		name := goName(kind) + goName(version)
		file := "internal/acme/" + strings.ToLower(kind) + "_" + version
		if req.Command == "create webhook" {
			var kinds []string
			for _, w := range []string{"defaulting", "programmatic-validation", "conversion"} {
				if opts[w] == "true" {
					kinds = append(kinds, w)
				}
			}
			res.Universe[file+"_webhooks.go"] = fmt.Sprintf("package acme\n\n// %sWebhooks lists the webhooks of %s.\nfunc %sWebhooks() []string {\n\treturn %#v\n}\n", name, kind, name, kinds)
			break
		}
		mod := module(req.Universe["go.mod"])
		dir, ok := strings.CutPrefix(path, mod+"/")
		if path == "" || !ok {
			return fail("kindindex: PROJECT records no API %s/%s in this module", version, kind)
		}
		types, ok := req.Universe[dir+"/"+strings.ToLower(kind)+"_types.go"]
		if !ok {
			return fail("kindindex: %s/%s_types.go is not in the universe", dir, strings.ToLower(kind))
		}
		var names []string
		for _, m := range typeDecl.FindAllStringSubmatch(types, -1) {
			names = append(names, m[1])
		}
		sort.Strings(names)
		res.Universe[file+".go"] = fmt.Sprintf("package acme\n\n// %sTypes lists the Go types of %s.\nfunc %sTypes() []string {\n\treturn %#v\n}\n", name, dir, name, names)
		fmt.Fprintf(os.Stderr, "kindindex: %d types in %s\n", len(names), dir)
	case "edit":
		if tier, ok := opts["tier"]; ok {
			res.Universe["internal/acme/index.go"] = index(module(req.Universe["go.mod"]), tier)
			res.Universe["config/acme/settings.yaml"] = settings(tier)
		}
	default:
		return fail("kindindex: unknown command %q", req.Command)
	}
	return res
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "kindindex: reading the request:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(run(req)); err != nil {
		os.Exit(1)
	}
}
