package rpc_test

import (
	"encoding/json"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/rpc"
)

// TestWireEdges: what a sloppy or hostile client sends. A message that is
// not JSON-RPC 2.0 is refused; a null id is a request answered with a null
// id; deep nesting is called too deep; an error that echoes a huge input
// cuts it; a symlink out of the vault is named as such without its target.
func TestWireEdges(t *testing.T) {
	for _, codec := range []string{rpc.CodecHeader, rpc.CodecLine} {
		t.Run(codec, func(t *testing.T) {
			noLeaks(t)
			v := fixture.CopyWithLinks(t)
			secret := filepath.Join(t.TempDir(), "secret-place")
			os.MkdirAll(secret, 0o755)
			os.WriteFile(filepath.Join(secret, "x.md"), []byte("# x"), 0o644)
			if err := os.Symlink(secret, filepath.Join(v, "escape-dir")); err != nil {
				t.Fatal(err)
			}
			s := start(t, rpc.Config{Codec: codec, MaxMessageBytes: 32 << 20})
			initialize(t, s, map[string]any{"vault": v})
			ctx := ctxT(t)
			stray := 0
			next := func() *rpctest.Response {
				t.Helper()
				stray++
				r, err := s.AwaitStray(ctx, stray)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}

			for _, body := range []string{
				`{"jsonrpc":"1.0","id":11,"method":"vault/status"}`,
				`{"id":12,"method":"vault/status"}`,
				`{"jsonrpc":2,"id":13,"method":"vault/status"}`,
			} {
				call := s.Expect(json.RawMessage(body[strings.Index(body, `"id":`)+5 : strings.Index(body, `,"method"`)]))
				s.WriteMessage([]byte(body))
				r, err := call.Wait(ctx)
				if err != nil || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, `"jsonrpc":"2.0"`) {
					t.Errorf("%s: %+v, %v; want -32600 naming \"jsonrpc\":\"2.0\"", body, r, err)
				}
			}

			s.WriteMessage([]byte(`{"jsonrpc":"2.0","id":null,"method":"vault/status"}`))
			if r := next(); string(r.ID) != "null" || r.Error != nil || !strings.Contains(string(r.Result), `"notes"`) {
				t.Errorf("id null: %+v (result %s), want the status with id null", r, r.Result)
			}

			deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
			call := s.Expect(json.RawMessage("21"))
			s.WriteMessage([]byte(`{"jsonrpc":"2.0","id":21,"method":"vault/search","params":{"query":"x","tags":` + deep + `}}`))
			if r, err := call.Wait(ctx); err != nil || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "too deep") {
				t.Errorf("deep nesting: %+v, %v; want -32600 too deep", r, err)
			}

			huge := strings.Repeat("a/", 1<<19) + "x.md"
			var resp *rpctest.Response
			if c, err := s.Start("vault/readNote", map[string]any{"path": huge}); err != nil {
				t.Fatal(err)
			} else if resp, err = c.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if resp.Error == nil || len(resp.Error.Message) > 4096 {
				t.Errorf("readNote of a 1 MiB path: error of %d bytes, want under 4 KiB", len(resp.Error.Message))
			}

			for _, p := range []string{"escape-dir/x.md", "outside-link.md", "escape-dir/missing.md"} {
				err := s.Call(ctx, "vault/readNote", map[string]any{"path": p}, nil)
				re := wantCode(t, err, -32602, "outside the vault")
				if strings.Contains(re.Message, secret) || strings.Contains(re.Message, "/etc") || strings.Contains(re.Message, "secret-place") {
					t.Errorf("readNote %s reveals the symlink's target: %s", p, re.Message)
				}
			}
			if err := s.Call(ctx, "vault/status", nil, nil); err != nil {
				t.Fatalf("not serving after the edge cases: %v", err)
			}
		})
	}
}
