package mcp_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/mcp"
	"github.com/vault-agent/vault-agent/service"
)

// TestServesWithDamagedVectors damages the vectors file beside the index
// between two starts (64 KiB of random bytes at offset 8192): the server
// starts, and its search works.
func TestServesWithDamagedVectors(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(256, map[string]string{"leaven": "sourdough"}))
	emb, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	dir := fixture.Copy(t)
	index := filepath.Join(t.TempDir(), "index")
	first, err := service.Start(context.Background(), service.Options{Vault: dir, Index: index, Env: &service.Env{}, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Wait(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	first.Close()
	fixture.Damage(t, index+"-vectors.db", 8192, 64<<10)

	opening := startVault(t, service.Options{Vault: dir, Index: index, Embedder: emb})
	_, cs := connectInMemory(t, mcp.New(mcp.Config{Vault: opening, VaultName: "vault", Version: "test", Semantic: true}))
	res, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "search_notes", Arguments: map[string]any{"query": "leaven", "mode": "semantic", "limit": 2}})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "Sourdough") {
		t.Fatalf("search_notes after the damage: %+v, %v", res, err)
	}
}
