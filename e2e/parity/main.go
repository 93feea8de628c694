// Command compare checks two generated operator projects for semantic equality: the tree made by
// Kubebuilder (the oracle) and the tree made by opbuilder from the same commands.
//
// What is compared (text, comments and formatting never are):
//   - the file sets (bin/, go.sum and build output aside);
//   - PROJECT, parsed, with cliVersion aside;
//   - every CRD under config/crd/bases, parsed, with descriptions aside;
//   - config/rbac/role.yaml and config/webhook/manifests.yaml, parsed;
//   - `kubectl kustomize` of config/default, config/crd, config/rbac and config/samples: the same
//     object set, each object equal;
//   - the Helm chart of the helm plugin (dist/chart): its file set, its values.yaml keys, and
//     `helm template` of both charts (helm from $OPBUILDER_PARITY_HELM), with the default values
//     and with every toggle on: the same object set, each object equal;
//   - the Dockerfile by its instructions (continuation lines joined, runs of blanks made one,
//     comments aside): an instruction only one of the two files has is a difference;
//   - Go files by their declarations: package name, exported identifiers with their signatures,
//     struct fields with their types and tags, and the +kubebuilder markers of the file;
//   - the files matching an -exact glob (repeatable; `*` matches any text), byte for byte: what
//     an external plugin writes is the same whichever tool ran it.
//
// Every difference is one line `SCENARIO: KEY: DETAIL`. The allowlist holds lines
// `SCENARIO-GLOB | KEY-GLOB | reason` (`*` matches any text, `#` starts a comment); a difference
// whose scenario and key match a line is reported as allowed. Exit status 1 when any difference is
// not allowed, 2 on a usage or I/O error.
//
// Usage: compare -scenario NAME -allowlist FILE [-exact GLOB]... KUBEBUILDER_DIR OPBUILDER_DIR
//
//	compare -objects [-helm] WANT.yaml GOT.yaml
//
// The second form compares two multi-document YAML streams as object sets (keyed by apiVersion,
// kind, namespace and name), each object equal; with -helm, the labels and annotations Helm
// charts add (helm.sh/*, app.kubernetes.io/managed-by, app.kubernetes.io/instance,
// app.kubernetes.io/version, meta.helm.sh/*, also on a Deployment's pods) are dropped from both
// first, and so are Namespace objects (a chart installs into the release's namespace); container
// args are compared as sets (the chart orders the flags its own way). It checks that
// `helm template` of a chart renders what `kubectl kustomize config/default` does.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

type diff struct{ key, detail string }

// globs is a repeatable flag.
type globs []string

func (g *globs) String() string     { return strings.Join(*g, ",") }
func (g *globs) Set(v string) error { *g = append(*g, v); return nil }

// exact holds the -exact globs: files compared byte for byte.
var exact globs

type differ struct{ out []diff }

func (d *differ) add(key, format string, args ...any) {
	d.out = append(d.out, diff{key, fmt.Sprintf(format, args...)})
}

func main() {
	scenario := flag.String("scenario", "", "scenario name used in the report and the allowlist")
	allowPath := flag.String("allowlist", "", "allowlist file")
	objects := flag.Bool("objects", false, "compare two YAML streams as object sets")
	helm := flag.Bool("helm", false, "with -objects: drop the labels and annotations Helm adds")
	flag.Var(&exact, "exact", "files matching this glob are compared byte for byte (repeatable)")
	flag.Parse()
	if *objects {
		os.Exit(compareObjectFiles(flag.Args(), *helm))
	}
	if flag.NArg() != 2 || *scenario == "" {
		fmt.Fprintln(os.Stderr, "usage: compare -scenario NAME [-allowlist FILE] KUBEBUILDER_DIR OPBUILDER_DIR")
		os.Exit(2)
	}
	allow, err := readAllowlist(*allowPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	kb, op := flag.Arg(0), flag.Arg(1)
	d := &differ{}
	compareTrees(d, kb, op)
	failed := 0
	for _, x := range d.out {
		if reason, ok := allow.match(*scenario, x.key); ok {
			fmt.Printf("  allowed  %s: %s (%s)\n", *scenario, x.key, reason)
			continue
		}
		failed++
		fmt.Printf("  DIFFERS  %s: %s\n           %s\n", *scenario, x.key, strings.ReplaceAll(x.detail, "\n", "\n           "))
	}
	fmt.Printf("compare %s: %d difference(s), %d not allowed\n", *scenario, len(d.out), failed)
	if failed > 0 {
		os.Exit(1)
	}
}

// ---- allowlist

type allowRule struct{ scenario, key, reason string }
type allowlist []allowRule

func readAllowlist(path string) (allowlist, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rules allowlist
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 || strings.TrimSpace(parts[2]) == "" {
			return nil, fmt.Errorf("%s:%d: want `SCENARIO-GLOB | KEY-GLOB | reason`", path, n+1)
		}
		rules = append(rules, allowRule{strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1]), strings.TrimSpace(parts[2])})
	}
	return rules, nil
}

func (a allowlist) match(scenario, key string) (string, bool) {
	for _, r := range a {
		if glob(r.scenario, scenario) && glob(r.key, key) {
			return r.reason, true
		}
	}
	return "", false
}

// glob matches `*` against any run of characters (slashes included); everything else literally.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// ---- trees

func ignored(rel string) bool {
	first := strings.SplitN(rel, "/", 2)[0]
	switch first {
	case "bin", ".git", "dist", "vendor":
		return true
	}
	base := filepath.Base(rel)
	return base == "go.sum" || base == "cover.out" || strings.HasPrefix(base, ".parity-")
}

func listFiles(root string) (map[string]bool, error) {
	files := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel != "." && ignored(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !ignored(rel) {
			files[rel] = true
		}
		return nil
	})
	return files, err
}

func compareTrees(d *differ, kb, op string) {
	kbFiles, err := listFiles(kb)
	if err != nil {
		d.add("read", "%v", err)
		return
	}
	opFiles, err := listFiles(op)
	if err != nil {
		d.add("read", "%v", err)
		return
	}
	for _, f := range sortedKeys(kbFiles) {
		if !opFiles[f] {
			d.add("file only in kubebuilder: "+f, "opbuilder does not write %s", f)
		}
	}
	for _, f := range sortedKeys(opFiles) {
		if !kbFiles[f] {
			d.add("file only in opbuilder: "+f, "kubebuilder does not write %s", f)
		}
	}
	for _, f := range sortedKeys(kbFiles) {
		if !opFiles[f] {
			continue
		}
		if matchesAny(exact, f) {
			compareBytes(d, kb, op, f)
		}
		switch {
		case f == "PROJECT":
			compareYAMLFiles(d, "PROJECT", kb, op, f, func(v any) any {
				if m, ok := v.(map[string]any); ok {
					delete(m, "cliVersion")
				}
				return v
			})
		case strings.HasPrefix(f, "config/crd/bases/"):
			compareYAMLFiles(d, "crd "+f, kb, op, f, dropDescriptions)
		case f == "config/rbac/role.yaml" || f == "config/webhook/manifests.yaml":
			compareYAMLFiles(d, f, kb, op, f, nil)
		case strings.HasSuffix(f, ".go"):
			compareGo(d, kb, op, f)
		case f == "Dockerfile":
			compareDockerfile(d, kb, op, f)
		}
	}
	for _, k := range []string{"config/default", "config/crd", "config/rbac", "config/samples"} {
		compareKustomize(d, kb, op, k)
	}
	compareCharts(d, kb, op)
}

func matchesAny(patterns []string, f string) bool {
	for _, p := range patterns {
		if glob(p, f) {
			return true
		}
	}
	return false
}

// compareBytes reports a file whose bytes differ, with the first line that does.
func compareBytes(d *differ, kb, op, rel string) {
	a, errA := os.ReadFile(filepath.Join(kb, rel))
	b, errB := os.ReadFile(filepath.Join(op, rel))
	if errA != nil || errB != nil {
		d.add("exact "+rel, "cannot read: %v %v", errA, errB)
		return
	}
	if bytes.Equal(a, b) {
		return
	}
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	i := 0
	for i < len(la) && i < len(lb) && la[i] == lb[i] {
		i++
	}
	line := func(l []string) string {
		if i < len(l) {
			return strconv.Quote(l[i])
		}
		return "(end of file)"
	}
	d.add("exact "+rel, "line %d: kubebuilder %s, opbuilder %s", i+1, line(la), line(lb))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---- Dockerfile

// dockerInstructions reads a Dockerfile as its instructions: comment lines dropped, continuation
// lines joined, each run of blanks made one space.
func dockerInstructions(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	cur := ""
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") || (t == "" && cur == "") {
			continue
		}
		if strings.HasSuffix(t, "\\") {
			cur += strings.TrimSuffix(t, "\\") + " "
			continue
		}
		if i := strings.Join(strings.Fields(cur+t), " "); i != "" {
			out = append(out, i)
		}
		cur = ""
	}
	return out, nil
}

// compareDockerfile reports each instruction that only one of the two Dockerfiles has.
func compareDockerfile(d *differ, kb, op, rel string) {
	a, errA := dockerInstructions(filepath.Join(kb, rel))
	b, errB := dockerInstructions(filepath.Join(op, rel))
	if errA != nil || errB != nil {
		d.add(rel, "cannot read: %v %v", errA, errB)
		return
	}
	count := func(l []string) map[string]int {
		m := map[string]int{}
		for _, i := range l {
			m[i]++
		}
		return m
	}
	ca, cb := count(a), count(b)
	for _, i := range a {
		if cb[i] == 0 {
			d.add(rel+": only in kubebuilder: "+i, "opbuilder's %s has no instruction %q", rel, i)
		}
	}
	for _, i := range b {
		if ca[i] == 0 {
			d.add(rel+": only in opbuilder: "+i, "kubebuilder's %s has no instruction %q", rel, i)
		}
	}
}

// ---- YAML

func parseDocs(data []byte) ([]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if v != nil {
			docs = append(docs, normalize(v))
		}
	}
}

// normalize turns yaml.v3 values into plain maps, slices and scalars.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalize(x)
		}
		return t
	case map[any]any:
		m := map[string]any{}
		for k, x := range t {
			m[fmt.Sprint(k)] = normalize(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = normalize(x)
		}
		return t
	}
	return v
}

func dropDescriptions(v any) any {
	switch t := v.(type) {
	case map[string]any:
		delete(t, "description")
		for k, x := range t {
			t[k] = dropDescriptions(x)
		}
	case []any:
		for i, x := range t {
			t[i] = dropDescriptions(x)
		}
	}
	return v
}

func compareYAMLFiles(d *differ, key, kb, op, rel string, prep func(any) any) {
	a, errA := os.ReadFile(filepath.Join(kb, rel))
	b, errB := os.ReadFile(filepath.Join(op, rel))
	if errA != nil || errB != nil {
		d.add(key, "read: %v %v", errA, errB)
		return
	}
	da, errA := parseDocs(a)
	db, errB := parseDocs(b)
	if errA != nil || errB != nil {
		d.add(key, "parse: kubebuilder: %v; opbuilder: %v", errA, errB)
		return
	}
	if prep != nil {
		for i := range da {
			da[i] = prep(da[i])
		}
		for i := range db {
			db[i] = prep(db[i])
		}
	}
	if len(da) != len(db) {
		d.add(key, "kubebuilder has %d document(s), opbuilder %d", len(da), len(db))
		return
	}
	for i := range da {
		if p, detail := firstDifference(da[i], db[i], ""); p != "" || detail != "" {
			d.add(fmt.Sprintf("%s %s", key, orRoot(p)), "%s", detail)
		}
	}
}

func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// firstDifference returns the path of the first difference between a and b, and a description.
// It compares maps key by key and lists element by element (lists of named objects by name).
func firstDifference(a, b any, path string) (string, string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return path, fmt.Sprintf("kubebuilder: %s\nopbuilder:   %s", brief(a), brief(b))
		}
		for _, k := range sortedKeys(x) {
			if _, ok := y[k]; !ok {
				return path + "." + k, fmt.Sprintf("only kubebuilder has it: %s", brief(x[k]))
			}
		}
		for _, k := range sortedKeys(y) {
			if _, ok := x[k]; !ok {
				return path + "." + k, fmt.Sprintf("only opbuilder has it: %s", brief(y[k]))
			}
		}
		for _, k := range sortedKeys(x) {
			if p, dd := firstDifference(x[k], y[k], path+"."+k); p != "" || dd != "" {
				return p, dd
			}
		}
		return "", ""
	case []any:
		y, ok := b.([]any)
		if !ok {
			return path, fmt.Sprintf("kubebuilder: %s\nopbuilder:   %s", brief(a), brief(b))
		}
		if nx, ny := named(x), named(y); nx != nil && ny != nil {
			for _, k := range sortedKeys(nx) {
				if _, ok := ny[k]; !ok {
					return path + "[" + k + "]", "only kubebuilder has it"
				}
			}
			for _, k := range sortedKeys(ny) {
				if _, ok := nx[k]; !ok {
					return path + "[" + k + "]", "only opbuilder has it"
				}
			}
			for _, k := range sortedKeys(nx) {
				if p, dd := firstDifference(nx[k], ny[k], path+"["+k+"]"); p != "" || dd != "" {
					return p, dd
				}
			}
			return "", ""
		}
		if len(x) != len(y) {
			return path, fmt.Sprintf("kubebuilder has %d item(s): %s\nopbuilder has %d: %s", len(x), brief(a), len(y), brief(b))
		}
		for i := range x {
			if p, dd := firstDifference(x[i], y[i], path+"["+strconv.Itoa(i)+"]"); p != "" || dd != "" {
				return p, dd
			}
		}
		return "", ""
	}
	if !reflect.DeepEqual(a, b) {
		return path, fmt.Sprintf("kubebuilder: %s\nopbuilder:   %s", brief(a), brief(b))
	}
	return "", ""
}

// named indexes a list of maps by their `name` (all must have a distinct one), or returns nil.
func named(list []any) map[string]any {
	m := map[string]any{}
	for _, v := range list {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		n, ok := o["name"].(string)
		if !ok {
			return nil
		}
		if _, dup := m[n]; dup {
			return nil
		}
		m[n] = v
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

func brief(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 400 {
		s = s[:400] + " ..."
	}
	return s
}

// ---- kustomize

func kustomize(dir string) ([]any, error) {
	if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err != nil {
		return nil, errNoKustomization
	}
	cmd := exec.Command("kubectl", "kustomize", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	return parseDocs(out)
}

var errNoKustomization = errors.New("no kustomization.yaml")

func objectKey(v any) string {
	m, _ := v.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	return fmt.Sprintf("%v/%v %v/%v", m["apiVersion"], m["kind"], orDash(meta["namespace"]), meta["name"])
}

func orDash(v any) any {
	if v == nil {
		return "-"
	}
	return v
}

func compareKustomize(d *differ, kb, op, rel string) {
	key := "kustomize " + rel
	a, errA := kustomize(filepath.Join(kb, rel))
	b, errB := kustomize(filepath.Join(op, rel))
	if errors.Is(errA, errNoKustomization) && errors.Is(errB, errNoKustomization) {
		return
	}
	switch {
	case errA != nil && errB != nil:
		d.add(key+": neither tree renders", "kubebuilder: %v\nopbuilder: %v", errA, errB)
		return
	case errA != nil:
		d.add(key+": only opbuilder's tree renders", "kubebuilder: %v", errA)
		return
	case errB != nil:
		d.add(key+": only kubebuilder's tree renders", "opbuilder: %v", errB)
		return
	}
	ma, mb := map[string]any{}, map[string]any{}
	// CRD descriptions come from Go doc comments, which are text, not interface.
	for _, o := range a {
		ma[objectKey(o)] = crdWithoutDescriptions(o)
	}
	for _, o := range b {
		mb[objectKey(o)] = crdWithoutDescriptions(o)
	}
	for _, k := range sortedKeys(ma) {
		if _, ok := mb[k]; !ok {
			d.add(key+": only kubebuilder renders "+k, "%s", brief(ma[k]))
		}
	}
	for _, k := range sortedKeys(mb) {
		if _, ok := ma[k]; !ok {
			d.add(key+": only opbuilder renders "+k, "%s", brief(mb[k]))
		}
	}
	for _, k := range sortedKeys(ma) {
		if o, ok := mb[k]; ok {
			if p, detail := firstDifference(ma[k], o, ""); p != "" || detail != "" {
				d.add(fmt.Sprintf("%s: %s %s", key, k, orRoot(p)), "%s", detail)
			}
		}
	}
}

func crdWithoutDescriptions(o any) any {
	if m, ok := o.(map[string]any); ok && m["kind"] == "CustomResourceDefinition" {
		return dropDescriptions(o)
	}
	return o
}

func errOK(err error) string {
	if err == nil {
		return "renders"
	}
	return err.Error()
}

// ---- Go declarations

func compareGo(d *differ, kb, op, rel string) {
	a, errA := goFacts(filepath.Join(kb, rel))
	b, errB := goFacts(filepath.Join(op, rel))
	if errA != nil || errB != nil {
		d.add("go "+rel+": parse", "kubebuilder: %v\nopbuilder: %v", errOK(errA), errOK(errB))
		return
	}
	for _, k := range sortedKeys(a) {
		if _, ok := b[k]; !ok {
			d.add("go "+rel+": only kubebuilder: "+k, "%s", a[k])
		}
	}
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			d.add("go "+rel+": only opbuilder: "+k, "%s", b[k])
		}
	}
	for _, k := range sortedKeys(a) {
		if v, ok := b[k]; ok && v != a[k] {
			d.add("go "+rel+": "+k, "kubebuilder: %s\nopbuilder:   %s", a[k], v)
		}
	}
}

// goFacts maps a stable name of each compared fact to its value.
func goFacts(path string) (map[string]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	facts := map[string]string{"package": f.Name.Name}
	show := func(n ast.Node) string {
		var buf bytes.Buffer
		_ = printer.Fprint(&buf, fset, n)
		return strings.Join(strings.Fields(buf.String()), " ")
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			name := "func " + d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				recv := show(d.Recv.List[0].Type)
				if !ast.IsExported(strings.TrimLeft(recv, "*")) {
					continue
				}
				name = "method (" + recv + ") " + d.Name.Name
			}
			facts[name] = show(d.Type)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					switch t := s.Type.(type) {
					case *ast.StructType:
						facts["type "+s.Name.Name] = "struct"
						for _, field := range t.Fields.List {
							tag := ""
							if field.Tag != nil {
								tag = " " + field.Tag.Value
							}
							names := []string{}
							for _, n := range field.Names {
								names = append(names, n.Name)
							}
							if len(names) == 0 {
								names = []string{"(embedded " + show(field.Type) + ")"}
							}
							for _, n := range names {
								facts["field "+s.Name.Name+"."+n] = show(field.Type) + tag
							}
						}
					case *ast.InterfaceType:
						facts["type "+s.Name.Name] = show(t)
					default:
						facts["type "+s.Name.Name] = show(s.Type)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							kind := "var"
							if d.Tok == token.CONST {
								kind = "const"
							}
							typ := ""
							if s.Type != nil {
								typ = show(s.Type)
							}
							facts[kind+" "+n.Name] = typ
						}
					}
				}
			}
		}
	}
	// +kubebuilder markers, counted (their order and attachment aside).
	counts := map[string]int{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			t := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			if strings.HasPrefix(t, "+kubebuilder") || strings.HasPrefix(t, "+groupName") {
				counts[t]++
			}
		}
	}
	for m, n := range counts {
		facts["marker "+m] = strconv.Itoa(n)
	}
	return facts, nil
}

// ---- object streams (-objects)

func compareObjectFiles(args []string, helm bool) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compare -objects [-helm] WANT.yaml GOT.yaml")
		return 2
	}
	var sets [2]map[string]any
	for i, f := range args {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		docs, err := parseDocs(data)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			return 2
		}
		sets[i] = map[string]any{}
		for _, o := range docs {
			if m, _ := o.(map[string]any); helm && m["apiVersion"] == "v1" && m["kind"] == "Namespace" {
				continue // `helm install --create-namespace` makes it; charts do not hold it
			}
			if helm {
				o = dropHelmMetadata(o)
			}
			sets[i][objectKey(o)] = o
		}
	}
	d := &differ{}
	want, got := sets[0], sets[1]
	for _, k := range sortedKeys(want) {
		if _, ok := got[k]; !ok {
			d.add("only in "+args[0]+": "+k, "%s", brief(want[k]))
		}
	}
	for _, k := range sortedKeys(got) {
		if _, ok := want[k]; !ok {
			d.add("only in "+args[1]+": "+k, "%s", brief(got[k]))
		}
	}
	for _, k := range sortedKeys(want) {
		if o, ok := got[k]; ok {
			if p, detail := firstDifference(want[k], o, ""); p != "" || detail != "" {
				d.add(fmt.Sprintf("%s %s", k, orRoot(p)), "%s", detail)
			}
		}
	}
	for _, x := range d.out {
		fmt.Printf("  DIFFERS  %s\n           %s\n", x.key, strings.ReplaceAll(x.detail, "\n", "\n           "))
	}
	fmt.Printf("compare -objects: %d object(s) and %d object(s), %d difference(s)\n", len(want), len(got), len(d.out))
	if len(d.out) > 0 {
		return 1
	}
	return 0
}

// dropHelmMetadata removes what a chart adds to every object's metadata (an empty map left behind
// is removed too), so that a chart's render can be compared with the kustomize output.
func dropHelmMetadata(o any) any {
	m, _ := o.(map[string]any)
	if spec, ok := m["spec"].(map[string]any); ok {
		if tmpl, ok := spec["template"].(map[string]any); ok {
			dropHelmMetadata(tmpl) // a Deployment's pod labels
			// The chart orders the manager's flags its own way (metrics, probes, values,
			// certificates), as Kubebuilder's does: compare them as a set.
			podSpec, _ := tmpl["spec"].(map[string]any)
			containers, _ := podSpec["containers"].([]any)
			for _, c := range containers {
				if cm, ok := c.(map[string]any); ok {
					if args, ok := cm["args"].([]any); ok {
						sort.Slice(args, func(i, j int) bool { return fmt.Sprint(args[i]) < fmt.Sprint(args[j]) })
					}
				}
			}
		}
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		return o
	}
	for _, field := range []string{"labels", "annotations"} {
		lm, _ := meta[field].(map[string]any)
		if lm == nil {
			continue
		}
		for k := range lm {
			if strings.HasPrefix(k, "helm.sh/") || strings.HasPrefix(k, "meta.helm.sh/") ||
				k == "app.kubernetes.io/managed-by" || k == "app.kubernetes.io/instance" ||
				k == "app.kubernetes.io/version" {
				delete(lm, k)
			}
		}
		if len(lm) == 0 {
			delete(meta, field)
		}
	}
	return o
}

// ---- Helm charts (dist/chart)

// chartValueSets are the values `helm template` renders both charts with: the defaults, and every
// optional part on.
var chartValueSets = [][]string{
	nil,
	{"--set", "rbac.helpers.enabled=true,prometheus.enabled=true,networkPolicy.enabled=true,certManager.enabled=true"},
}

func compareCharts(d *differ, kb, op string) {
	const rel = "dist/chart"
	_, errA := os.Stat(filepath.Join(kb, rel, "Chart.yaml"))
	_, errB := os.Stat(filepath.Join(op, rel, "Chart.yaml"))
	if errA != nil && errB != nil {
		return
	}
	if (errA == nil) != (errB == nil) {
		d.add("chart: only one tree has "+rel, "kubebuilder: %s; opbuilder: %s", errOK(errA), errOK(errB))
		return
	}
	fa, errA := listChart(filepath.Join(kb, rel))
	fb, errB := listChart(filepath.Join(op, rel))
	if errA != nil || errB != nil {
		d.add("chart: read", "%v %v", errA, errB)
		return
	}
	for _, f := range sortedKeys(fa) {
		if !fb[f] {
			d.add("chart file only in kubebuilder: "+f, "opbuilder does not write %s/%s", rel, f)
		}
	}
	for _, f := range sortedKeys(fb) {
		if !fa[f] {
			d.add("chart file only in opbuilder: "+f, "kubebuilder does not write %s/%s", rel, f)
		}
	}
	va, errA := valueKeys(filepath.Join(kb, rel, "values.yaml"))
	vb, errB := valueKeys(filepath.Join(op, rel, "values.yaml"))
	if errA != nil || errB != nil {
		d.add("chart: values.yaml", "kubebuilder: %s; opbuilder: %s", errOK(errA), errOK(errB))
	} else {
		for _, k := range sortedKeys(va) {
			if !vb[k] {
				d.add("chart values key only in kubebuilder: "+k, "opbuilder's values.yaml lacks %s", k)
			}
		}
		for _, k := range sortedKeys(vb) {
			if !va[k] {
				d.add("chart values key only in opbuilder: "+k, "kubebuilder's values.yaml lacks %s", k)
			}
		}
	}
	helm := os.Getenv("OPBUILDER_PARITY_HELM")
	if helm == "" {
		d.add("chart: no helm", "set OPBUILDER_PARITY_HELM to a helm v3 binary to compare the renders")
		return
	}
	release := projectName(kb)
	for _, set := range chartValueSets {
		key := "chart render"
		if set != nil {
			key += " (" + set[1] + ")"
		}
		a, errA := helmTemplate(helm, filepath.Join(kb, rel), release, set)
		b, errB := helmTemplate(helm, filepath.Join(op, rel), release, set)
		if errA != nil || errB != nil {
			d.add(key+": helm template", "kubebuilder: %s\nopbuilder: %s", errOK(errA), errOK(errB))
			continue
		}
		ma, mb := map[string]any{}, map[string]any{}
		for _, o := range a {
			ma[objectKey(o)] = crdWithoutDescriptions(o)
		}
		for _, o := range b {
			mb[objectKey(o)] = crdWithoutDescriptions(o)
		}
		for _, k := range sortedKeys(ma) {
			if _, ok := mb[k]; !ok {
				d.add(key+": only kubebuilder renders "+k, "%s", brief(ma[k]))
			}
		}
		for _, k := range sortedKeys(mb) {
			if _, ok := ma[k]; !ok {
				d.add(key+": only opbuilder renders "+k, "%s", brief(mb[k]))
			}
		}
		for _, k := range sortedKeys(ma) {
			if o, ok := mb[k]; ok {
				if p, detail := firstDifference(ma[k], o, ""); p != "" || detail != "" {
					d.add(fmt.Sprintf("%s: %s %s", key, k, orRoot(p)), "%s", detail)
				}
			}
		}
	}
}

func listChart(root string) (map[string]bool, error) {
	files := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = true
		return nil
	})
	return files, err
}

// valueKeys lists the dotted paths of the mappings in values.yaml (list contents aside).
func valueKeys(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs, err := parseDocs(data)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	var walk func(v any, prefix string)
	walk = func(v any, prefix string) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, x := range m {
			keys[prefix+k] = true
			walk(x, prefix+k+".")
		}
	}
	for _, doc := range docs {
		walk(doc, "")
	}
	return keys, nil
}

func projectName(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "PROJECT"))
	if err == nil {
		if docs, err := parseDocs(data); err == nil && len(docs) == 1 {
			if m, ok := docs[0].(map[string]any); ok {
				if n, ok := m["projectName"].(string); ok && n != "" {
					return n
				}
			}
		}
	}
	return filepath.Base(dir)
}

func helmTemplate(helm, chart, release string, set []string) ([]any, error) {
	args := append([]string{"template", release, chart, "--namespace", release + "-system"}, set...)
	cmd := exec.Command(helm, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return parseDocs(out)
}
