package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

var errModelRequired = fmt.Errorf("openai provider: %w: set --model (or the model setting, or OPENAI_MODEL), e.g. gpt-4o-mini, or qwen3:8b for Ollama", ErrNoModel)

// FirstModel returns the first model the server at cfg.BaseURL lists, for
// a configuration without a model: a local server (llama.cpp, LM Studio,
// vLLM) usually serves one.
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

// firstModel returns the first model the server lists.
func (o *OpenAI) firstModel(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelListTimeout)
	defer cancel()
	list, err := o.client.ListModels(ctx)
	if err != nil {
		return "", errors.New(o.redact(err.Error()))
	}
	for _, m := range list.Models {
		if id := strings.TrimSpace(m.ID); id != "" {
			o.log.Info("no model configured; using the first model the server lists", "model", id, "listed", len(list.Models))
			return id, nil
		}
	}
	return "", errors.New("the server lists no models")
}
