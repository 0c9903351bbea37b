package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/vault-agent/vault-agent/"

// layers places every package of the program on a floor: a package may
// import only packages on lower floors. Floor 0 holds leaves that import
// nothing of the module. A new package fails TestImportRules until it is
// placed here. The front-ends (rpc, acp, mcp) share floor 7, above service:
// no lower package imports one, and none imports another.
var layers = map[string]int{
	"internal/truncate": 0,
	"internal/redact":   0,
	"internal/memtrim":  0,
	"reasoning/marker":  0,
	"rpc/protocol":      0,
	"vault":             1,
	"llm":               1,
	"planner":           1,
	"search":            2,
	"search/semantic":   3,
	"search/shared":     4,
	"agent":             3,
	"agent/offline":     4,
	"agent/replay":      4,
	"reasoning":         5,
	"service":           6,
	"rpc":               7,
	"acp":               7,
	"mcp":               7,
	"cmd/vault-agent":   8,
}

// helpers are imported by tests only; each may import packages up to its
// floor, and other helpers. No package of layers may import one.
var helpers = map[string]int{
	"agent/agenttest":                2, // it doubles the agent's index, so it must not import agent
	"llm/llmtest":                    0,
	"internal/fixture":               0,
	"internal/nodetest":              0,
	"internal/vaultgen":              0,
	"internal/benchvault":            0,
	"internal/vaultgen/cmd/vaultgen": 0,
	"rpc/rpctest":                    7,
	"scripts/benchmedian":            0,
	"scripts/sharemem":               0,
	"scripts/benchserve":             0, // drives vault-agent serve for make bench
	"internal/archtest":              0,
	"eval":                           4, // the relevance harness: search, its vectors and vault, and the offline agent for its answer check
	"scripts/eval":                   4,
	"scripts/embedserver":            0, // starts the Node embeddings server for tests and make eval
}

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// listPackages runs go list on the module.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// importViolations returns what breaks the layering among pkgs.
func importViolations(pkgs []pkg) []string {
	var bad []string
	for _, p := range pkgs {
		floor, layered := layers[p.ImportPath]
		hfloor, helper := helpers[p.ImportPath]
		if !layered && !helper {
			bad = append(bad, fmt.Sprintf("%s is on no floor: place it in layers (or helpers)", p.ImportPath))
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			to, toLayered := layers[imp]
			_, toHelper := helpers[imp]
			switch {
			case layered && toHelper:
				bad = append(bad, fmt.Sprintf("%s imports the test helper %s", p.ImportPath, imp))
			case layered && toLayered && to >= floor:
				bad = append(bad, fmt.Sprintf("%s (floor %d) imports %s (floor %d): imports must point down", p.ImportPath, floor, imp, to))
			case helper && toLayered && to > hfloor:
				bad = append(bad, fmt.Sprintf("the test helper %s imports %s, above its floor %d", p.ImportPath, imp, hfloor))
			}
		}
	}
	return bad
}

// TestImportRules fails on an import that points up or sideways: llm,
// search, vault and planner import no higher package, the agent imports no
// front-end and no view of its events, rpc/protocol imports nothing of the
// module, and no program code imports a test helper.
func TestImportRules(t *testing.T) {
	for _, v := range importViolations(listPackages(t)) {
		t.Error(v)
	}
}

// The checker itself catches what it must.
func TestImportRulesCatchViolations(t *testing.T) {
	pkgs := []pkg{
		{ImportPath: "agent", Imports: []string{module + "rpc", module + "llm", "fmt"}},
		{ImportPath: "search", Imports: []string{module + "agent"}},
		{ImportPath: "llm", Imports: []string{module + "planner"}},
		{ImportPath: "service", Imports: []string{module + "agent/agenttest"}},
		{ImportPath: "agent/agenttest", Imports: []string{module + "agent"}},
		{ImportPath: "acp", Imports: []string{module + "service", module + "rpc/protocol"}},
		{ImportPath: "mcp", Imports: []string{module + "acp", module + "search"}},
		{ImportPath: "rpc", Imports: []string{module + "mcp"}},
		{ImportPath: "service", Imports: []string{module + "acp"}},
		{ImportPath: "frontend", Imports: []string{module + "service"}},
	}
	got := importViolations(pkgs)
	for _, want := range []string{
		"agent (floor 3) imports rpc (floor 7)",
		"search (floor 2) imports agent (floor 3)",
		"llm (floor 1) imports planner (floor 1)",
		"service imports the test helper agent/agenttest",
		"the test helper agent/agenttest imports agent",
		"mcp (floor 7) imports acp (floor 7)",
		"rpc (floor 7) imports mcp (floor 7)",
		"service (floor 6) imports acp (floor 7)",
		"frontend is on no floor",
	} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("no violation %q in %q", want, got)
		}
	}
	if len(got) != 9 {
		t.Errorf("violations = %q", got)
	}
}

// envReaders read the environment; only service may call them.
var envReaders = []string{"os.Getenv", "os.LookupEnv", "os.Environ", "os.ExpandEnv", "os.UserCacheDir", "os.UserConfigDir", "os.UserHomeDir"}

// modelMakers build models; only service may call them.
var modelMakers = []string{"llm.NewOpenAI", "llm.FirstModel", "llm.LoadScript", "llm.NewScripted", "offline.New"}

// TestOnlyServiceReadsEnvironment fails when program code outside service
// reads the environment (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL, the
// cache dir...) or builds a model: every front-end and command gets them
// from the composition root. Test helpers are not program code.
func TestOnlyServiceReadsEnvironment(t *testing.T) {
	for _, p := range listPackages(t) {
		if _, helper := helpers[p.ImportPath]; helper || p.ImportPath == "service" {
			continue
		}
		for _, f := range p.GoFiles {
			path := filepath.Join(p.Dir, f)
			for _, call := range selectorCalls(t, path) {
				switch {
				case slices.Contains(envReaders, call.name):
					t.Errorf("%s:%d: %s: only service reads the environment", path, call.line, call.name)
				case slices.Contains(modelMakers, call.name):
					t.Errorf("%s:%d: %s: only service builds models (service.NewModel)", path, call.line, call.name)
				}
			}
		}
	}
}

type call struct {
	name string // package.Func
	line int
}

// selectorCalls lists the pkg.Func(...) calls of a file.
func selectorCalls(t *testing.T, path string) []call {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var calls []call
	ast.Inspect(f, func(n ast.Node) bool {
		ce, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := ce.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		calls = append(calls, call{name: id.Name + "." + sel.Sel.Name, line: fset.Position(ce.Pos()).Line})
		return true
	})
	return calls
}
