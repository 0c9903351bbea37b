package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/vault-agent/vault-agent/agent/offline"
	"github.com/vault-agent/vault-agent/llm"
)

// ErrUnknownProvider means the provider is not one of Providers.
var ErrUnknownProvider = errors.New("unknown model provider")

// ProviderOf returns the provider NewModel uses for s: the one s names,
// else openai when an API key or a base URL is configured, else offline.
func ProviderOf(s Settings, env Env) string {
	if p := strings.ToLower(strings.TrimSpace(s.Provider)); p != "" {
		return p
	}
	if s.BaseURL != "" || env.APIKey != "" || env.BaseURL != "" {
		return ProviderOpenAI
	}
	return ProviderOffline
}

// NewModel builds the model s chooses, with the key, base URL and model
// name of env where s gives none. The offline model needs nothing; openai
// asks the server for its first model when no model is named anywhere;
// scripted reads its fixture file. Errors never contain the key.
func NewModel(ctx context.Context, s Settings, env Env, log *slog.Logger) (llm.Model, error) {
	switch p := ProviderOf(s, env); p {
	case ProviderOffline:
		return offline.New(), nil
	case ProviderOpenAI:
		cfg := llm.OpenAIConfig{APIKey: env.APIKey, BaseURL: s.BaseURL, Model: strings.TrimSpace(s.Model), Logger: log}
		if cfg.BaseURL == "" {
			cfg.BaseURL = env.BaseURL
		}
		if cfg.Model == "" {
			cfg.Model = env.Model
		}
		if cfg.Model == "" && cfg.BaseURL != "" {
			m, err := llm.FirstModel(ctx, cfg)
			if err != nil {
				return nil, err
			}
			cfg.Model = m
		}
		return llm.NewOpenAI(cfg)
	case ProviderScripted:
		if strings.TrimSpace(s.Script) == "" {
			return nil, errors.New("scripted provider: no script path: give a fixture file of model turns (.json or .yaml)")
		}
		return llm.LoadScript(s.Script)
	default:
		return nil, fmt.Errorf("%w %q: valid providers are %s", ErrUnknownProvider, s.Provider, strings.Join(Providers, ", "))
	}
}
