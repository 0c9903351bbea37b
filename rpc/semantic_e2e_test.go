package rpc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
)

// The embedder maps "leaven" onto "sourdough": a word no note uses finds
// the sourdough notes by meaning.
func TestSemanticSearchAndRelated(t *testing.T) {
	noLeaks(t)
	emb := llmtest.NewEmbedServer(t, llmtest.WordVectors(256, map[string]string{"leaven": "sourdough"}))
	// The first request fails with the key in the message: it is retried,
	// and the key shows nowhere.
	emb.FailNext(llmtest.Reply{Status: 503, Message: "overloaded, key " + testKey})
	s := start(t, rpc.Config{Env: &service.Env{EmbedAPIKey: testKey}})
	initialize(t, s, map[string]any{"settings": map[string]any{"embedModel": "test-embed", "embedBaseUrl": emb.URL}})
	ctx := ctxT(t)
	if emb.Authorization() != "Bearer "+testKey {
		t.Errorf("the embedding key was not sent")
	}
	var embedDone bool
	for _, n := range s.Notifications(protocol.NotifyIndexProgress) {
		var p protocol.IndexProgressParams
		json.Unmarshal(n.Params, &p)
		if p.Phase == "embed" && p.Done == p.Total && p.Total > 0 {
			embedDone = true
		}
	}
	if !embedDone {
		t.Errorf("no vault/indexProgress with phase embed reached its total")
	}

	var responses []string
	do := func(mode string) search.Results {
		t.Helper()
		var res search.Results
		if err := s.Call(ctx, "vault/search", map[string]any{"query": "leaven", "limit": 3, "mode": mode}, &res); err != nil {
			t.Fatalf("mode %q: %v", mode, err)
		}
		b, _ := json.Marshal(res)
		responses = append(responses, string(b))
		return res
	}
	for mode, want := range map[string]bool{"lexical": false, "semantic": true, "hybrid": true, "": true} {
		res := do(mode)
		found := len(res.Results) > 0 && strings.Contains(strings.ToLower(res.Results[0].Path), "sourdough")
		if found != want {
			t.Errorf("mode %q: top result %+v, want a sourdough note: %v", mode, res.Results, want)
		}
	}

	var rel search.Results
	if err := s.Call(ctx, "vault/related", map[string]any{"path": "Sourdough Starter", "limit": 3}, &rel); err != nil {
		t.Fatal(err)
	}
	if len(rel.Results) != 3 || rel.Results[0].Path == "recipes/Sourdough Starter.md" {
		t.Errorf("related: %+v", rel.Results)
	}
	b, _ := json.Marshal(rel)
	responses = append(responses, string(b))
	wantCode(t, s.Call(ctx, "vault/related", map[string]any{"path": ""}, nil), -32602, "path")
	wantCode(t, s.Call(ctx, "vault/search", map[string]any{"query": "x", "mode": "vector"}, nil), -32602, "mode")
	noKeyLeak(t, s, responses...)
}

// Without an embedding model nothing changes: search is lexical, semantic
// and related are refused, and no request reaches any server.
func TestNoEmbedderNoNetwork(t *testing.T) {
	noLeaks(t)
	emb := llmtest.NewEmbedServer(t, llmtest.WordVectors(16, nil))
	s := start(t, rpc.Config{Env: &service.Env{APIKey: testKey, EmbedAPIKey: testKey, BaseURL: emb.URL}})
	initialize(t, s, map[string]any{"settings": map[string]any{"provider": "offline"}})
	ctx := ctxT(t)
	var res search.Results
	if err := s.Call(ctx, "vault/search", map[string]any{"query": "sourdough"}, &res); err != nil || len(res.Results) == 0 {
		t.Fatalf("%v %+v", err, res)
	}
	wantCode(t, s.Call(ctx, "vault/search", map[string]any{"query": "sourdough", "mode": "semantic"}, nil), -32602, "embedModel")
	wantCode(t, s.Call(ctx, "vault/related", map[string]any{"path": "Sourdough Starter"}, nil), -32602, "embedModel")
	for _, n := range s.Notifications(protocol.NotifyIndexProgress) {
		if strings.Contains(string(n.Params), "embed") {
			t.Errorf("embedding progress without an embedder: %s", n.Params)
		}
	}
	if emb.Requests() != 0 {
		t.Errorf("%d requests reached the server", emb.Requests())
	}
}
