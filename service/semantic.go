package service

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/semantic"
	"github.com/vault-agent/vault-agent/search/shared"
)

// ErrNoEmbedder is the error of a semantic or hybrid search, or of
// Related, on a vault opened without an embedding model (embedModel) by
// the process holding its index.
var ErrNoEmbedder = shared.ErrNoEmbedder

// newEmbedder builds the embedder the settings name, nil when they name no
// embedding model. The endpoint is EmbedBaseURL, else OPENAI_BASE_URL,
// else the OpenAI API; the key is VAULT_AGENT_EMBED_API_KEY, else, for an
// endpoint not set apart from the chat model's (no EmbedBaseURL),
// OPENAI_API_KEY: a key meant for one server is never sent to another.
func newEmbedder(s Settings, env Env, log *slog.Logger) (*llm.Embedder, error) {
	model := strings.TrimSpace(s.EmbedModel)
	if model == "" {
		return nil, nil
	}
	base := strings.TrimSpace(s.EmbedBaseURL)
	key := env.EmbedAPIKey
	if base == "" {
		base = env.BaseURL
		if key == "" {
			key = env.APIKey
		}
	}
	if key == "" && base == "" {
		return nil, &SettingError{Key: "embedModel", Msg: fmt.Sprintf("%q needs an endpoint: set embedBaseUrl (--embed-base-url), e.g. http://localhost:11434/v1 for Ollama, or OPENAI_API_KEY for OpenAI", model), Err: llm.ErrNoAPIKey}
	}
	e, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: base, Model: model, APIKey: key, Logger: log})
	if err != nil {
		return nil, &SettingError{Key: "embedBaseUrl", Msg: err.Error(), Err: err}
	}
	return e, nil
}

// vectorsPath is the vector store of the index at indexPath: beside it,
// outside the vault ("" for an index in memory).
func vectorsPath(indexPath string) string {
	if indexPath == "" {
		return ""
	}
	return filepath.Clean(indexPath) + "-vectors.db"
}

// Semantic returns the vault's vectors, nil when no embedding model is
// configured or another process holds the index (and the vectors).
func (s *Service) Semantic() *semantic.Engine { return s.index.Semantic() }

// Search runs a search in its mode (search.Request.Mode): with an
// embedding model configured the default is hybrid; without one it is
// lexical, and asking for semantic or hybrid is ErrNoEmbedder. Another
// process holding the index answers with its own embedding model.
func (s *Service) Search(ctx context.Context, req search.Request) (*search.Results, error) {
	return s.index.Search(ctx, req)
}

// Related returns the notes closest in meaning to the note name designates.
func (s *Service) Related(ctx context.Context, name string, limit int) (*search.Results, error) {
	return s.index.Related(ctx, name, limit)
}
