package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/llm/llmtest"
)

// A server whose list starts with embedding models (Ollama with
// nomic-embed-text pulled before llama3.1, LM Studio with its default
// embedding model) is asked for its first chat model; one that lists only
// embedding models gets an error saying so.
func TestFirstModelSkipsEmbeddingModels(t *testing.T) {
	tests := []struct {
		name    string
		models  []string
		want    string
		wantErr string
	}{
		{"embedding first", []string{"nomic-embed-text:latest", "text-embedding-3-small", "llama3.1:8b"}, "llama3.1:8b", ""},
		{"families", []string{"bge-m3", "BAAI/bge-reranker-base", "intfloat/multilingual-e5-large", "all-minilm", "gte-base", "qwen3:8b"}, "qwen3:8b", ""},
		{"chat first", []string{"gpt-4o-mini", "text-embedding-3-small"}, "gpt-4o-mini", ""},
		{"only embeddings", []string{"nomic-embed-text", "mxbai-embed-large"}, "", "only embedding models (nomic-embed-text, mxbai-embed-large)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Repeat(llmtest.Text("ok")))
			srv.SetModels(tt.models...)
			got, err := FirstModel(context.Background(), OpenAIConfig{BaseURL: srv.URL})
			if tt.wantErr != "" {
				if !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("FirstModel = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	for _, chat := range []string{"llama3.1", "gpt-4o-mini", "qwen2.5-7b-instruct", "mistral-nemo", "deepseek-r1:14b", "gemma3"} {
		if EmbeddingModel(chat) {
			t.Errorf("EmbeddingModel(%q) = true", chat)
		}
	}
}
