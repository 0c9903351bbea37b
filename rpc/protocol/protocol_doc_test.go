package protocol

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite PROTOCOL.md from the Go types")

const protocolDoc = "../../PROTOCOL.md"

// TestProtocolDoc fails when PROTOCOL.md does not match the protocol types;
// go generate ./rpc/protocol (or this test with -update) rewrites it.
func TestProtocolDoc(t *testing.T) {
	got := generateProtocolDoc(t)
	if *update {
		if err := os.WriteFile(protocolDoc, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatalf("%v (run: go generate ./rpc/protocol)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("PROTOCOL.md is stale: run go generate ./rpc/protocol (go test ./rpc/protocol -run TestProtocolDoc -update)")
	}
}

// docIndex holds the doc comments of the package's types and fields, keyed
// by "pkg.Type" and "pkg.Type.Field".
type docIndex map[string]string

func loadDocs(t *testing.T) docIndex {
	docs := docIndex{}
	for _, dir := range []string{"."} {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			pkg := f.Name.Name
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					doc := ts.Doc
					if doc == nil && len(gd.Specs) == 1 {
						doc = gd.Doc
					}
					docs[pkg+"."+ts.Name.Name] = text(doc)
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fld := range st.Fields.List {
						d := text(fld.Doc)
						if d == "" {
							d = text(fld.Comment)
						}
						for _, n := range fld.Names {
							docs[pkg+"."+ts.Name.Name+"."+n.Name] = d
						}
					}
				}
			}
		}
	}
	return docs
}

func text(cg *ast.CommentGroup) string {
	if cg == nil {
		return ""
	}
	return strings.Join(strings.Fields(cg.Text()), " ")
}

// docGen writes the document; named struct types met in params and results
// are documented once, in the Types section.
type docGen struct {
	docs  docIndex
	b     bytes.Buffer
	types map[reflect.Type]bool
	order []reflect.Type
}

func (g *docGen) p(format string, args ...any) { fmt.Fprintf(&g.b, format, args...) }

func typeKey(t reflect.Type) string {
	pkg := t.PkgPath()
	return pkg[strings.LastIndex(pkg, "/")+1:] + "." + t.Name()
}

// jsonType names t for a host author and queues named structs.
func (g *docGen) jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return g.jsonType(t.Elem())
	case reflect.Slice, reflect.Array:
		if t.Name() == "RawMessage" {
			return "any"
		}
		return g.jsonType(t.Elem()) + "[]"
	case reflect.Map:
		return "object"
	case reflect.Interface:
		return "any"
	case reflect.Struct:
		if t.PkgPath() == "time" {
			return "string (RFC 3339)"
		}
		if !g.types[t] {
			g.types[t] = true
			g.order = append(g.order, t)
		}
		return "[" + t.Name() + "](#" + strings.ToLower(t.Name()) + ")"
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Float32, reflect.Float64:
		return "number"
	default:
		return "integer"
	}
}

// fields writes the field table of struct t.
func (g *docGen) fields(t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	g.p("| field | type | required | description |\n|---|---|---|---|\n")
	n := 0
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		req := "yes"
		if strings.Contains(opts, "omitempty") || f.Type.Kind() == reflect.Pointer {
			req = "no"
		}
		doc := g.docs[typeKey(t)+"."+f.Name]
		g.p("| `%s` | %s | %s | %s |\n", name, g.jsonType(f.Type), req, strings.ReplaceAll(doc, "|", `\|`))
		n++
	}
	if n == 0 {
		g.p("| | | | (no fields) |\n")
	}
	g.p("\n")
}

func generateProtocolDoc(t *testing.T) []byte {
	g := &docGen{docs: loadDocs(t), types: map[reflect.Type]bool{}}
	g.p("# vault-agent JSON-RPC protocol\n\n")
	g.p("<!-- Generated from package rpc/protocol by `go generate ./rpc/protocol`; do not edit. -->\n\n")
	g.p("This is the protocol between a plugin host and `vault-agent serve`. This page is the reference,\n")
	g.p("generated from the Go types of the wire, so it cannot drift. docs/ARCHITECTURE.md shows where it sits.\n\n")
	g.p("## Transport\n\n")
	g.p("- JSON-RPC 2.0 over the sidecar's stdin and stdout. Only protocol bytes go to stdout; logs go to stderr.\n")
	g.p("- Framing: `Content-Length: N\\r\\n\\r\\n` headers before each message (the default; what vscode-jsonrpc's\n")
	g.p("  `StreamMessageReader`/`StreamMessageWriter` speak), or one JSON message per line with `--codec line`.\n")
	g.p("- Messages larger than %d bytes (configurable) are skipped without being buffered and answered with\n", DefaultMaxMessageBytes)
	g.p("  -32600 (with the request's id when it appears near the start of the message).\n")
	g.p("- Invalid JSON is answered with -32700 and a malformed request with -32600 (id null when it cannot be\n")
	g.p("  read); the connection stays open. Input that cannot be framed at all (a header line over 4 KiB, a\n")
	g.p("  bad Content-Length) ends the connection with a log line on stderr.\n")
	g.p("- Batches are not supported (-32600). Every message must carry `\"jsonrpc\":\"2.0\"`; one with another\n")
	g.p("  version, or none, is refused with -32600. A message nesting objects and arrays more than %d levels\n", MaxNestingDepth)
	g.p("  deep is refused with -32600 \"too deep\".\n")
	g.p("- A request whose `id` is `null` is a request, not a notification: it is handled and answered with\n")
	g.p("  `\"id\":null` (a host cannot tell such answers apart: prefer numbers or strings). A message without an\n")
	g.p("  `id` is a notification.\n")
	g.p("- Error messages are at most %d characters: one that would echo a huge input is cut, ending in `…`.\n\n", MaxErrorMessageRunes)
	g.p("## Lifecycle\n\n")
	g.p("1. The host starts `vault-agent serve [--vault DIR] [--index DIR] [--codec header|line]`.\n")
	g.p("2. `initialize` must be the first request, and the host must wait for its response: any other request\n")
	g.p("   before it gets %d (server not initialized). A failed `initialize` may be retried; a second\n", CodeServerNotInitialized)
	g.p("   successful one is refused with -32600. It opens the vault, opens or builds the index (sending\n")
	g.p("   `vault/indexProgress`), starts the file watcher and reports unknown settings. While it builds the\n")
	g.p("   index, `vault/status` answers (`indexing` true, `progress`) and `vault/search` gets %d with a\n", CodeServerNotInitialized)
	g.p("   message that says how far it is (\"still indexing: 4210 of 14145 notes indexed (29%%); ...\").\n")
	g.p("3. Requests: control methods (`vault/status`, `agent/stop`, `agent/input`, `shutdown`) and\n")
	g.p("   notifications are handled in arrival order; work methods (`initialize`, `vault/search`,\n")
	g.p("   `vault/readNote`, `vault/reindex`, `agent/run`) run concurrently, so a control method is never\n")
	g.p("   blocked behind a run, a search or the reading of a huge note.\n")
	g.p("   Send `$/cancelRequest {id}` to cancel a request: its reply then has code %d.\n", CodeRequestCancelled)
	g.p("4. `shutdown` stops every run and answers once every request received before it has been answered;\n")
	g.p("   later requests get -32600. Then `exit` ends the process with status 0\n")
	g.p("   (1 if `shutdown` did not come first). Closing stdin (or the sidecar failing to write to stdout) also\n")
	g.p("   ends it cleanly: runs are cancelled and the index is closed.\n\n")
	g.p("## Edits with approval\n\n")
	g.p("Read-only is the default: the agent's edit tools (`create_note`, `append_to_note`, `replace_in_note`,\n")
	g.p("`set_properties`) are offered only in runs whose settings have `allowEdits: true` (in `initialize` or\n")
	g.p("the run's `settings`). Each edit the agent proposes is sent to the host as a `%s` request\n", MethodApplyEdit)
	g.p("(see Sidecar requests) while the run waits:\n\n")
	g.p("1. The sidecar works the edit out (path checked as reads are, only `.md`; the note read and hashed) and\n")
	g.p("   sends the path, the unified diff, the hash and the new text. A proposal that cannot be made (a path\n")
	g.p("   leaving the vault, a note that exists for `create_note`, text not found exactly once) is not sent: the\n")
	g.p("   model gets the error.\n")
	g.p("2. The host shows the diff and answers `{\"applied\": true}` to approve or `{\"applied\": false, \"reason\": \"...\"}`\n")
	g.p("   to refuse. An error answer is a refusal; no answer within the run's `requestInputTimeoutMs` is a\n")
	g.p("   refusal too, and the sidecar then sends `$/cancelRequest` for the request.\n")
	g.p("3. On approval the sidecar writes the note itself, atomically, only if it still has the hash it was read\n")
	g.p("   with (else the edit is refused as a conflict, never merged), journals it outside the vault for\n")
	g.p("   `vault-agent undo`, and updates the index before the run goes on.\n")
	g.p("4. The tool's result (`tool_complete`'s `output`: `{applied, path, reason?, diff}`) tells the model, and the\n")
	g.p("   host, whether the edit was applied and why not.\n\n")
	g.p("## Errors\n\n")
	g.p("| code | meaning |\n|---|---|\n")
	g.p("| -32700 | parse error: the message is not JSON |\n")
	g.p("| -32600 | invalid request: not a request object, not `\"jsonrpc\":\"2.0\"`, a batch, oversized, too deep, a duplicate in-flight id, a request after `shutdown`, a second `initialize` |\n")
	g.p("| -32601 | method not found; the message lists the valid methods |\n")
	g.p("| -32602 | invalid params: wrong types, missing or unknown fields (named), bad settings, unknown vault, paths that escape the vault (a symlink leading out is named as such, never its target) or are longer than 4096 bytes, notes not found or ambiguous (`data.candidates`), bad queries |\n")
	g.p("| -32603 | internal error (including a panic in a handler; the server keeps serving) |\n")
	g.p("| %d | server not initialized: send `initialize` first and wait for its response |\n", CodeServerNotInitialized)
	g.p("| %d | request cancelled by `$/cancelRequest`; for `agent/run`, `data` holds the run's result |\n\n", CodeRequestCancelled)

	g.p("## Requests and host notifications\n\n")
	for _, m := range Methods {
		kind := "request"
		if m.Notification {
			kind = "notification"
		}
		if m.Slow {
			kind += ", runs concurrently"
		}
		g.p("### `%s` (%s)\n\n%s\n\n", m.Name, kind, m.Doc)
		if m.Params != nil {
			g.p("Params: %s\n\n", g.jsonType(m.Params))
		} else {
			g.p("Params: none.\n\n")
		}
		switch {
		case m.Notification:
		case m.Result != nil:
			g.p("Result: %s\n\n", g.jsonType(m.Result))
		default:
			g.p("Result: `null`.\n\n")
		}
	}
	g.p("## Sidecar notifications\n\n")
	for _, n := range Notifications {
		g.p("### `%s`\n\n%s\n\nParams: %s\n\n", n.Name, n.Doc, g.jsonType(n.Params))
	}
	g.p("`agent/update` types: ")
	updates := []string{UpdateAgentStart, UpdateAgentTurnStart, UpdateAgentReason, UpdateToolStart, UpdateToolComplete,
		UpdateToolError, UpdateAgentObserve, UpdatePlanUpdated, UpdatePlanContinuation, UpdatePlanReviewPending,
		UpdateAgentRequestInput, UpdateAgentRequestInputTimeout, UpdateAgentStopped, UpdateAgentCompletion}
	for i, u := range updates {
		if i > 0 {
			g.p(", ")
		}
		g.p("`%s`", u)
	}
	g.p(". A run always ends with `agent_completion`; a stopped run sends `agent_stopped` just before it.\n\n")

	g.p("## Sidecar requests\n\n")
	for _, r := range SidecarRequests {
		g.p("### `%s` (request to the host)\n\n%s\n\nParams: %s\n\nResult: %s\n\n", r.Name, r.Doc, g.jsonType(r.Params), g.jsonType(r.Result))
	}

	g.p("## Types\n\n")
	for i := 0; i < len(g.order); i++ { // fields() may queue more types
		tp := g.order[i]
		g.p("### %s\n\n", tp.Name())
		if d := g.docs[typeKey(tp)]; d != "" {
			g.p("%s\n\n", d)
		}
		g.fields(tp)
	}
	g.p("## Settings keys\n\n")
	keys := SettingsKeys()
	sort.Strings(keys)
	g.p("Known keys: %s. Any other key is reported (a `window/logMessage` warning and `unknownSettings`)\n", "`"+strings.Join(keys, "`, `")+"`")
	g.p("and ignored.\n")
	return g.b.Bytes()
}
