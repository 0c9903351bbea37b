package rpc_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
)

// fuzzMethods are the methods FuzzHandlers calls: every request but the
// lifecycle ones, which would end the session.
var fuzzMethods = []string{"vault/search", "vault/readNote", "vault/status", "vault/reindex", "agent/run", "agent/stop", "agent/input", "no/such"}

// FuzzHandlers sends arbitrary params to every method of an initialized
// server: each request gets exactly one reply, and no handler panics (a
// recovered panic is a bug, counted by Server.Panics).
func FuzzHandlers(f *testing.F) {
	var srv *rpc.Server
	s := rpctest.StartInProcessWith(f, rpc.Config{InMemoryIndex: true}, func(s *rpc.Server) { srv = s })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Call(ctx, "initialize", map[string]any{"vault": fixtureVault, "settings": map[string]any{"provider": "offline", "maxIterations": 2}}, nil); err != nil {
		f.Fatal(err)
	}
	for i, p := range []string{
		`{"query":"sourdough starter","limit":3}`, `{"query":"tag:#x OR","timeRange":{"startTime":5,"endTime":1}}`,
		`{"path":"Home"}`, `{"path":"../../etc/passwd","chunkIndex":-1}`, `{"path":"[[Meeting Notes]]"}`,
		`null`, `{"full":false}`, `{"message":"what is a starter?","settings":{"mode":"roa"}}`,
		`{"runId":"x"}`, `{"runId":"x","content":"y"}`, `[1,2]`, `{"query":{"a":1}}`, `"str"`,
	} {
		f.Add(uint8(i), []byte(p))
	}
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		method := fuzzMethods[int(which)%len(fuzzMethods)]
		var p any // no params at all when the input is not JSON
		if json.Valid(params) {
			p = json.RawMessage(params)
		}
		call, err := s.Start(method, p)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		resp, err := call.Wait(ctx)
		if err != nil {
			t.Fatalf("%s %s: %v", method, params, err)
		}
		if resp.Error != nil && resp.Error.Code == -32603 {
			t.Logf("%s %s: %s", method, params, resp.Error.Message)
		}
		if n := srv.Panics(); n > 0 {
			t.Fatalf("%s %s: a handler panicked (%d panics)", method, params, n)
		}
	})
}
