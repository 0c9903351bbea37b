package llm

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"
)

// Provider names accepted by New.
const (
	ProviderOffline  = "offline"
	ProviderOpenAI   = "openai"
	ProviderScripted = "scripted"
)

// Providers lists the valid provider names.
var Providers = []string{ProviderOffline, ProviderOpenAI, ProviderScripted}

// Config selects and configures a model. Its String and LogValue methods
// never show the key.
type Config struct {
	// Provider is offline, openai or scripted. Empty means openai when
	// OPENAI_API_KEY, APIKey or BaseURL is set, else offline.
	Provider string
	// Model is the model name for openai (required there).
	Model string
	// BaseURL and APIKey default to OPENAI_BASE_URL and OPENAI_API_KEY.
	BaseURL string
	APIKey  string
	// ScriptPath is the fixture file of the scripted provider.
	ScriptPath string
	// Timeout and MaxRetries tune the openai provider (see OpenAIConfig).
	Timeout    time.Duration
	MaxRetries int
	Logger     *slog.Logger
}

// String describes the config without its key.
func (c Config) String() string {
	key := "unset"
	if c.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("Config{Provider:%q Model:%q BaseURL:%q APIKey:%s ScriptPath:%q}",
		c.Provider, c.Model, c.BaseURL, key, c.ScriptPath)
}

// GoString keeps %#v from printing the key.
func (c Config) GoString() string { return c.String() }

// LogValue keeps slog from printing the key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("provider", c.Provider), slog.String("model", c.Model),
		slog.String("baseUrl", c.BaseURL), slog.Bool("apiKeySet", c.APIKey != ""),
		slog.String("scriptPath", c.ScriptPath),
	)
}

// ResolveProvider returns the provider New would use for cfg.
func ResolveProvider(cfg Config) string {
	p := strings.ToLower(strings.TrimSpace(cfg.Provider))
	if p != "" {
		return p
	}
	if cfg.APIKey != "" || cfg.BaseURL != "" || os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != "" {
		return ProviderOpenAI
	}
	return ProviderOffline
}

// New builds the model cfg selects.
func New(cfg Config) (Model, error) {
	switch p := ResolveProvider(cfg); p {
	case ProviderOffline:
		return NewOffline(), nil
	case ProviderOpenAI:
		m, err := NewOpenAI(OpenAIConfig{
			APIKey: cfg.APIKey, BaseURL: cfg.BaseURL, Model: cfg.Model,
			Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries, Logger: cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
		return m, nil
	case ProviderScripted:
		if strings.TrimSpace(cfg.ScriptPath) == "" {
			return nil, fmt.Errorf("scripted provider: no script path: give a fixture file of model turns (.json or .yaml)")
		}
		return LoadScript(cfg.ScriptPath)
	default:
		return nil, fmt.Errorf("%w %q: valid providers are %s", ErrUnknownProvider, cfg.Provider, strings.Join(Providers, ", "))
	}
}
