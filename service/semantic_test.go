package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/search"
)

func toolNames(a *agent.Agent) []string {
	var out []string
	for _, d := range a.Tools() {
		out = append(out, d.Name)
	}
	return out
}

// With an embedding model the agent's localSearch is hybrid by default and
// relatedNotes is offered; without one neither changes.
func TestSemanticThroughTheService(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(128, map[string]string{"leaven": "sourdough"}))
	const key = "sk-embed-service-SECRET-0123"
	s, _ := openFixture(t, Options{Agent: true, Env: &Env{EmbedAPIKey: key, CacheDir: t.TempDir()},
		Settings: Settings{EmbedModel: "m", EmbedBaseURL: srv.URL}})
	if !slices.Contains(toolNames(s.Agent()), agent.ToolRelated) {
		t.Errorf("no %s tool: %v", agent.ToolRelated, toolNames(s.Agent()))
	}
	res, err := s.Search(context.Background(), search.Request{Query: "leaven", Limit: 1})
	if err != nil || len(res.Results) != 1 || !strings.Contains(res.Results[0].Path, "Sourdough") {
		t.Fatalf("default search: %v %+v", err, res)
	}
	if srv.Authorization() != "Bearer "+key {
		t.Error("the embedding key was not sent")
	}
	for _, s := range []string{fmt.Sprint(Env{EmbedAPIKey: key}), fmt.Sprintf("%#v", Env{EmbedAPIKey: key})} {
		if strings.Contains(s, key) {
			t.Errorf("Env prints the key: %s", s)
		}
	}

	plain, _ := openFixture(t, Options{Agent: true})
	if slices.Contains(toolNames(plain.Agent()), agent.ToolRelated) {
		t.Errorf("%s offered without an embedding model", agent.ToolRelated)
	}
	if _, err := plain.Search(context.Background(), search.Request{Query: "leaven", Mode: search.ModeHybrid}); !errors.Is(err, ErrNoEmbedder) {
		t.Errorf("hybrid without a model: %v", err)
	}
	if _, err := plain.Related(context.Background(), "Sourdough Starter", 3); !errors.Is(err, ErrNoEmbedder) {
		t.Errorf("related without a model: %v", err)
	}
}

// The embedding endpoint's key: its own variable, else the chat's key for
// the chat's endpoint only.
func TestEmbedderKeyChoice(t *testing.T) {
	cases := []struct {
		s       Settings
		env     Env
		wantErr bool
	}{
		{Settings{}, Env{APIKey: "k"}, false},                                                // off
		{Settings{EmbedModel: "m"}, Env{APIKey: "chat-key-0123456789"}, false},               // OpenAI with OPENAI_API_KEY
		{Settings{EmbedModel: "m"}, Env{}, true},                                             // nowhere to send it
		{Settings{EmbedModel: "m", EmbedBaseURL: "http://localhost:11434/v1"}, Env{}, false}, // Ollama, no key
		{Settings{EmbedModel: "m", EmbedBaseURL: "ftp://x"}, Env{}, true},                    // not http
		{Settings{EmbedModel: "m", EmbedBaseURL: "http://h/v1"}, Env{EmbedAPIKey: "e-key-012345678"}, false},
	}
	for i, c := range cases {
		e, err := newEmbedder(c.s, c.env, nil)
		if (err != nil) != c.wantErr {
			t.Errorf("case %d: err %v", i, err)
		}
		if c.s.EmbedModel == "" && e != nil {
			t.Errorf("case %d: an embedder without a model", i)
		}
		var se *SettingError
		if err != nil && !errors.As(err, &se) {
			t.Errorf("case %d: not a SettingError: %v", i, err)
		}
	}
}

// The chat's key (OPENAI_API_KEY) never goes to an embedding endpoint of
// its own.
func TestChatKeyStaysWithTheChatEndpoint(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(8, nil))
	const chatKey = "sk-chat-SECRET-0123456789"
	e, err := newEmbedder(Settings{EmbedModel: "m", EmbedBaseURL: srv.URL}, Env{APIKey: chatKey}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(srv.Authorization(), chatKey) {
		t.Errorf("the chat key was sent to the embedding endpoint")
	}
}
