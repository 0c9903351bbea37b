package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/semantic"
)

// ErrNoEmbedder is the error of a semantic or hybrid search, or of
// Related, on a vault opened without an embedding model (embedModel).
var ErrNoEmbedder = errors.New("semantic search is off: no embedding model is configured (set embedModel, --embed-model)")

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
// configured.
func (s *Service) Semantic() *semantic.Engine { return s.sem }

// Search runs a search in its mode (search.Request.Mode): with an
// embedding model configured the default is hybrid; without one it is
// lexical, and asking for semantic or hybrid is ErrNoEmbedder.
func (s *Service) Search(ctx context.Context, req search.Request) (*search.Results, error) {
	if s.sem != nil {
		return s.sem.Search(ctx, req)
	}
	switch req.Mode {
	case "", search.ModeLexical:
		return s.index.Search(ctx, req)
	case search.ModeSemantic, search.ModeHybrid:
		return nil, ErrNoEmbedder
	}
	return nil, fmt.Errorf("%w, got %q", semantic.ErrMode, req.Mode)
}

// Related returns the notes closest in meaning to the note name designates.
func (s *Service) Related(ctx context.Context, name string, limit int) (*search.Results, error) {
	if s.sem == nil {
		return nil, ErrNoEmbedder
	}
	return s.sem.Related(ctx, name, limit)
}

// searcher is the index as the agent sees it: its searches go through
// the service, so they are hybrid when an embedding model is configured.
type searcher struct {
	*search.Index
	s *Service
}

func (x searcher) Search(ctx context.Context, req search.Request) (*search.Results, error) {
	return x.s.Search(ctx, req)
}
