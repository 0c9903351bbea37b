package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

var errModelRequired = fmt.Errorf("openai provider: %w: set --model (or the model setting, or OPENAI_MODEL), e.g. gpt-4o-mini, or qwen3:8b for Ollama", ErrNoModel)

// FirstModel returns the first chat model the server at cfg.BaseURL lists,
// for a configuration without a model: a local server (llama.cpp, LM
// Studio, vLLM) usually serves one. Embedding models (EmbeddingModel) are
// passed over: a server that serves an embedding model beside a chat
// model often lists it first.
func FirstModel(ctx context.Context, cfg OpenAIConfig) (string, error) {
	if cfg.BaseURL == "" {
		return "", errModelRequired
	}
	cfg.Model = "(listing models)"
	o, err := NewOpenAI(cfg)
	if err != nil {
		return "", err
	}
	m, err := o.firstModel(ctx)
	if err != nil {
		return "", fmt.Errorf("openai provider: %w: set --model (or the model setting, or OPENAI_MODEL); asking %s for its models failed: %v", ErrNoModel, o.red.String(o.baseURL), err)
	}
	return m, nil
}

// modelListTimeout bounds the model list request made when no model is
// configured.
const modelListTimeout = 10 * time.Second

// firstModel returns the first chat model the server lists.
func (o *OpenAI) firstModel(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelListTimeout)
	defer cancel()
	list, err := o.client.ListModels(ctx)
	if err != nil {
		return "", errors.New(o.redact(err.Error()))
	}
	var skipped []string
	for _, m := range list.Models {
		id := strings.TrimSpace(m.ID)
		switch {
		case id == "":
		case EmbeddingModel(id):
			skipped = append(skipped, id)
		default:
			o.log.Info("no model configured; using the first chat model the server lists", "model", id, "listed", len(list.Models), "embeddingModelsSkipped", skipped)
			return id, nil
		}
	}
	if len(skipped) > 0 {
		return "", fmt.Errorf("the server lists only embedding models (%s), which cannot chat", strings.Join(skipped, ", "))
	}
	return "", errors.New("the server lists no models")
}

// Parts of model names that mark an embedding or reranking model
// (text-embedding-3-small, nomic-embed-text, mxbai-embed-large,
// snowflake-arctic-embed, all-minilm, bge-reranker), and the families
// whose names start so (bge-m3, e5-large, multilingual-e5-base, gte-base).
var (
	embeddingWords    = []string{"embed", "minilm", "rerank"}
	embeddingFamilies = []string{"bge-", "bge_", "e5-", "multilingual-e5", "gte-"}
)

// EmbeddingModel reports whether the model named id is, by its name, an
// embedding (or reranking) model rather than a chat model. Servers do not
// say which is which in their model list, but the names do.
func EmbeddingModel(id string) bool {
	name := strings.ToLower(id)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	for _, w := range embeddingWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	for _, f := range embeddingFamilies {
		if strings.HasPrefix(name, f) {
			return true
		}
	}
	return false
}
