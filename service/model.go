package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/vault-agent/vault-agent/agent/offline"
	"github.com/vault-agent/vault-agent/internal/redact"
	"github.com/vault-agent/vault-agent/llm"
)

// The rule, the same in every front-end: the offline model answers unless
// a language model is chosen, by naming a model (--model, the model
// setting, VAULT_AGENT_MODEL, OPENAI_MODEL, model in the config file) or a
// provider other than offline. A key (OPENAI_API_KEY) or a base URL only
// says how to reach the model chosen: on their own they choose nothing,
// and are reported once ("answering offline; set --model ..."). Nothing
// but a run needs the model: opening a vault never builds one that talks
// to a server, and a run whose model cannot be used fails alone, saying
// what chose that model and how to change it (ModelError).

// ErrUnknownProvider means the provider is not one of Providers.
var ErrUnknownProvider = errors.New("unknown model provider")

// ModelChoice is the chat model settings choose, and what chose it.
type ModelChoice struct {
	// Provider is offline, openai or scripted (or what a setting named,
	// when that is none of them).
	Provider string
	// Model is the model name ("" with openai: the first chat model the
	// server lists). BaseURL is the endpoint ("": OpenAI's); Script the
	// scripted provider's file.
	Model, BaseURL, Script string
	// By names what chose a language model: a flag, a setting, a variable
	// or a config file entry ("" for the offline default). ModelFrom and
	// BaseURLFrom name where Model and BaseURL came from.
	By, ModelFrom, BaseURLFrom string
	// Notice, for the offline default, says what was configured but chose
	// nothing (an API key, a base URL) and how to use it; "" otherwise.
	Notice string
	// shownURL is BaseURL as messages show it: without the key or a
	// password.
	shownURL string
}

// ChooseModel applies the rule to s (settings already over the
// environment's, see Env.Layered) and the key of env.
func ChooseModel(s Settings, env Env) ModelChoice {
	c := ModelChoice{
		Model: strings.TrimSpace(s.Model), BaseURL: strings.TrimSpace(s.BaseURL), Script: strings.TrimSpace(s.Script),
		ModelFrom: s.Source("Model"), BaseURLFrom: s.Source("BaseURL"),
	}
	c.shownURL = shownURL(c.BaseURL, env.APIKey)
	switch p := strings.ToLower(strings.TrimSpace(s.Provider)); {
	case p != "":
		c.Provider, c.By = p, s.Source("Provider")
	case c.Model != "":
		c.Provider, c.By = ProviderOpenAI, c.ModelFrom
	default:
		c.Provider = ProviderOffline
	}
	if c.Provider == ProviderOffline && c.By == "" {
		switch {
		case env.APIKey != "" && c.BaseURL != "":
			c.Notice = fmt.Sprintf("answering offline; set --model to use your OpenAI key with the server at %s (%s)", c.shownURL, c.BaseURLFrom)
		case env.APIKey != "":
			c.Notice = "answering offline; set --model to use your OpenAI key (OPENAI_API_KEY is set, but no model is chosen: --model, VAULT_AGENT_MODEL, OPENAI_MODEL or model in the config file)"
		case c.BaseURL != "":
			c.Notice = fmt.Sprintf("answering offline; set --model to use the model server at %s (%s)", c.shownURL, c.BaseURLFrom)
		}
	}
	return c
}

// Offline reports whether the choice is the offline model.
func (c ModelChoice) Offline() bool { return c.Provider == ProviderOffline }

// Name names the model as the model itself will once built:
// "offline", "openai/gpt-4o-mini", "scripted/<file>"; an openai model to
// be asked of the server is "openai/(first chat model at URL)".
func (c ModelChoice) Name() string {
	switch c.Provider {
	case ProviderOffline:
		return "offline"
	case ProviderOpenAI:
		if c.Model != "" {
			return "openai/" + c.Model
		}
		return "openai/(the first chat model " + c.endpoint() + " lists)"
	case ProviderScripted:
		return "scripted/" + strings.TrimSuffix(filepath.Base(c.Script), filepath.Ext(c.Script))
	}
	return c.Provider
}

func (c ModelChoice) endpoint() string {
	if c.BaseURL == "" {
		return "the OpenAI API"
	}
	return c.shownURL
}

// shownURL is u without key (wherever it appears) and without the
// password of its user info.
func shownURL(u, key string) string {
	if p, err := url.Parse(u); err == nil && p.User != nil {
		if _, has := p.User.Password(); has {
			p.User = url.UserPassword(p.User.Username(), "REDACTED")
		}
		u = p.String()
	}
	return redact.New(key).String(u)
}

// Why says what chose the model, for a person: "the offline default",
// "--model", "OPENAI_MODEL, with the base URL from OPENAI_BASE_URL".
func (c ModelChoice) Why() string {
	if c.By == "" {
		return "the default: no model is configured"
	}
	why := c.By
	if c.Offline() {
		return why
	}
	if c.ModelFrom != "" && c.ModelFrom != c.By {
		why += ", the model from " + c.ModelFrom
	}
	if c.BaseURLFrom != "" && c.Provider == ProviderOpenAI {
		why += ", the base URL from " + c.BaseURLFrom
	}
	return why
}

// build builds the model: offline needs nothing; openai asks the server
// for its first chat model when none is named; scripted reads its file.
// Its errors never contain the key.
func (c ModelChoice) build(ctx context.Context, env Env, log *slog.Logger) (llm.Model, error) {
	switch c.Provider {
	case ProviderOffline:
		return offline.New(), nil
	case ProviderOpenAI:
		cfg := llm.OpenAIConfig{APIKey: env.APIKey, BaseURL: c.BaseURL, Model: c.Model, Logger: log}
		if cfg.Model == "" && cfg.BaseURL != "" {
			m, err := llm.FirstModel(ctx, cfg)
			if err != nil {
				return nil, err
			}
			cfg.Model = m
		}
		return llm.NewOpenAI(cfg)
	case ProviderScripted:
		if c.Script == "" {
			return nil, errors.New("scripted provider: no script path: give a fixture file of model turns (.json or .yaml)")
		}
		return llm.LoadScript(c.Script)
	default:
		return nil, fmt.Errorf("%w %q: valid providers are %s", ErrUnknownProvider, c.Provider, strings.Join(Providers, ", "))
	}
}

// NewModel builds the model s chooses (over the environment and config
// file of env, see Env.Settings) at once. The front-ends do not use it:
// their runs build their models as they start (Service.Run).
func NewModel(ctx context.Context, s Settings, env Env, log *slog.Logger) (llm.Model, error) {
	return ChooseModel(env.Settings("").Merge(s), env).build(ctx, env, log)
}

// ModelError is a run's model that cannot be used: it could not be built,
// or its first call failed. Its text says what chose the model and how to
// change it.
type ModelError struct {
	Choice ModelChoice
	Err    error
}

func (e *ModelError) Error() string {
	c := e.Choice
	fix := "set the provider to offline to answer offline (--provider offline, VAULT_AGENT_PROVIDER=offline)"
	if c.By != "" {
		fix = change(c.By) + ", or " + fix
	}
	if c.BaseURLFrom != "" && c.Provider == ProviderOpenAI {
		fix = "check that the server at " + c.shownURL + " is running (" + change(c.BaseURLFrom) + " to use another); " + fix
	}
	return fmt.Sprintf("the model %s cannot be used: %v; it was chosen by %s; %s", c.Name(), e.Err, c.Why(), fix)
}

func (e *ModelError) Unwrap() error { return e.Err }

// change says how to change the setting a source names.
func change(src string) string {
	switch {
	case strings.HasPrefix(src, "--"):
		return "change or drop " + src
	case strings.Contains(src, " in config file "):
		return "edit " + src
	case strings.ToUpper(src) == src && !strings.Contains(src, " "):
		return "change or unset " + src
	}
	return "change " + src
}

// modelState is the model of a vault's runs that name none.
type modelState struct {
	// model is the model runs use when their settings name none: the
	// caller's (Options.Model) or the one the settings choose.
	model llm.Model
}

// defaultModel is the model the vault's settings choose, built by each run
// that uses it; the notice of the choice is reported once.
func (s *Service) defaultModel() llm.Model {
	c := ChooseModel(s.settings, s.env)
	if c.Notice != "" {
		reportOnce(s.log, c.Notice)
	}
	if c.Offline() {
		return offline.New()
	}
	return &chosenModel{choice: c, env: s.env, log: s.log}
}

// ModelChoice is the model a run with settings o (over the vault's) uses,
// and what chose it; for a vault given a model (Options.Model) it is that
// model's name alone.
func (s *Service) ModelChoice(o Settings) ModelChoice {
	if !o.NamesModel() {
		if c, ok := s.model.(*chosenModel); ok {
			return c.choice
		}
		if s.model != nil && s.model.Name() != "offline" {
			return ModelChoice{Provider: s.model.Name(), By: "the caller"}
		}
	}
	return ChooseModel(s.settings.Merge(o), s.env)
}

// ModelChoice is the model a run with settings o uses, for a vault being
// opened (Service.ModelChoice).
func (o *Opening) ModelChoice(run Settings) ModelChoice { return o.s.ModelChoice(run) }

// runModel is the model of one run: its own when its settings (o) say
// anything of the model, else the vault's; a model chosen by settings is
// built now, and one that cannot be is a model whose every call fails with
// the ModelError, so the run fails alone. merged are the run's settings,
// checked.
func (s *Service) runModel(ctx context.Context, o, merged Settings) llm.Model {
	m := s.model
	if o.NamesModel() {
		m = offline.New()
		if c := ChooseModel(merged, s.env); !c.Offline() {
			m = &chosenModel{choice: c, env: s.env, log: s.log}
		}
	}
	if c, ok := m.(*chosenModel); ok {
		return c.forRun(ctx)
	}
	return m
}

// chosenModel is a model settings chose, built when a run first needs it
// and kept once built.
type chosenModel struct {
	choice ModelChoice
	env    Env
	log    *slog.Logger

	mu    sync.Mutex // guards built
	built llm.Model
}

func (c *chosenModel) Name() string { return c.choice.Name() }

// Chat builds the model for this one call; runs get their model through
// forRun.
func (c *chosenModel) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	return c.forRun(ctx).Chat(ctx, req, onDelta)
}

// forRun returns the built model for one run, or a model that fails every
// call with the ModelError when it cannot be built.
func (c *chosenModel) forRun(ctx context.Context) llm.Model {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.built == nil {
		m, err := c.choice.build(ctx, c.env, c.log)
		if err != nil {
			return failedModel{name: c.choice.Name(), err: &ModelError{Choice: c.choice, Err: err}}
		}
		c.built = m
	}
	return &usedModel{Model: c.built, choice: c.choice}
}

// usedModel is a built model whose failures before its first answer say
// what chose it: a model that never answered cannot be used as configured.
type usedModel struct {
	llm.Model
	choice ModelChoice

	mu       sync.Mutex // guards answered
	answered bool
}

func (u *usedModel) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	resp, err := u.Model.Chat(ctx, req, onDelta)
	u.mu.Lock()
	defer u.mu.Unlock()
	if err == nil {
		u.answered = true
		return resp, nil
	}
	if !u.answered && ctx.Err() == nil {
		return nil, &ModelError{Choice: u.choice, Err: err}
	}
	return nil, err
}

// failedModel is a model that could not be built: every call fails.
type failedModel struct {
	name string
	err  error
}

func (f failedModel) Name() string { return f.name }

func (f failedModel) Chat(context.Context, llm.Request, func(string)) (*llm.Response, error) {
	return nil, f.err
}
