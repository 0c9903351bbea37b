package rpc_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
)

// TestInitializeWithDamagedVectors damages the vectors file beside the
// index between two sidecars (64 KiB of random bytes at offset 8192): the
// second one initializes, searches at once, and makes the vectors again.
func TestInitializeWithDamagedVectors(t *testing.T) {
	noLeaks(t)
	emb := llmtest.NewEmbedServer(t, llmtest.WordVectors(256, map[string]string{"leaven": "sourdough"}))
	dir := fixture.Copy(t)
	index := filepath.Join(t.TempDir(), "index")
	params := map[string]any{"vault": dir, "settings": map[string]any{"embedModel": "test-embed", "embedBaseUrl": emb.URL}}
	sidecar := func() *rpctest.Session {
		return rpctest.StartInProcessWith(t, rpc.Config{Index: index, Env: &service.Env{}})
	}
	first := sidecar()
	initialize(t, first, params)
	if err := first.Call(ctxT(t), "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	first.Notify("exit", nil)
	if err := first.Wait(ctxT(t)); err != nil {
		t.Fatal(err)
	}

	vectors := index + "-vectors.db"
	fixture.Damage(t, vectors, 8192, 64<<10)

	second := sidecar()
	initialize(t, second, params)
	var res search.Results
	if err := second.Call(ctxT(t), "vault/search", map[string]any{"query": "leaven", "limit": 3, "mode": "semantic"}, &res); err != nil || len(res.Results) == 0 {
		t.Fatalf("semantic search after the rebuild: %+v, %v", res, err)
	}
	if _, err := os.Stat(vectors + ".damaged"); err != nil {
		t.Errorf("the damaged file was not moved aside: %v", err)
	}
}
