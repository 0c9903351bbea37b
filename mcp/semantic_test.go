package mcp_test

import (
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/mcp"
)

func TestSemanticSearchAndRelatedNotes(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(256, map[string]string{"leaven": "sourdough"}))
	emb, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{embedder: emb})
	for _, mode := range []string{"semantic", "hybrid", ""} {
		out, _ := ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "leaven", "limit": 2, "mode": mode})
		if len(out.Hits) == 0 || !strings.Contains(out.Hits[0].Path, "Sourdough") {
			t.Errorf("mode %q: %+v", mode, out.Hits)
		}
	}
	out, _ := ok[mcp.SearchOutput](t, e, "related_notes", map[string]any{"path": "Sourdough Starter", "limit": 3})
	if len(out.Hits) != 3 || out.Hits[0].Path == "recipes/Sourdough Starter.md" {
		t.Errorf("related_notes: %+v", out.Hits)
	}
	if msg := e.toolError(t, "search_notes", map[string]any{"query": "x", "mode": "vectors"}); !strings.Contains(msg, "mode") {
		t.Errorf("bad mode: %s", msg)
	}
}

func TestNoRelatedNotesWithoutEmbedder(t *testing.T) {
	e := newEnv(t, envOptions{})
	if msg := e.toolError(t, "search_notes", map[string]any{"query": "sourdough", "mode": "semantic"}); !strings.Contains(msg, "embedModel") {
		t.Errorf("semantic without a model: %s", msg)
	}
}
