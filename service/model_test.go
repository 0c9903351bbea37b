package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/llm/llmtest"
)

const testKey = "sk-test-SECRET123"

func TestNewModel(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(script, []byte("- content: hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		env      Env
		s        Settings
		wantName string
		wantErr  string
	}{
		{name: "default offline", s: Settings{}, wantName: "offline"},
		{name: "default openai from env key", env: Env{APIKey: testKey}, s: Settings{Model: "gpt-4o-mini"}, wantName: "openai/gpt-4o-mini"},
		{name: "default openai from base url", s: Settings{BaseURL: "http://localhost:11434/v1", Model: "qwen3:8b"}, wantName: "openai/qwen3:8b"},
		{name: "base url from env", env: Env{BaseURL: "http://localhost:11434/v1"}, s: Settings{Model: "qwen3:8b"}, wantName: "openai/qwen3:8b"},
		{name: "model from env", env: Env{APIKey: testKey, Model: "from-env"}, s: Settings{Provider: "openai"}, wantName: "openai/from-env"},
		{name: "explicit offline despite key", env: Env{APIKey: testKey}, s: Settings{Provider: "Offline"}, wantName: "offline"},
		{name: "openai without model", env: Env{APIKey: testKey}, s: Settings{Provider: "openai"}, wantErr: "no model"},
		{name: "openai without key", s: Settings{Provider: "openai", Model: "m"}, wantErr: "OPENAI_API_KEY"},
		{name: "scripted", s: Settings{Provider: "scripted", Script: script}, wantName: "scripted/s"},
		{name: "scripted without path", s: Settings{Provider: "scripted"}, wantErr: "no script path"},
		{name: "unknown", env: Env{APIKey: testKey}, s: Settings{Provider: "claude"}, wantErr: "offline, openai, scripted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewModel(context.Background(), tt.s, tt.env, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error leaks key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Name() != tt.wantName {
				t.Errorf("name = %q, want %q", m.Name(), tt.wantName)
			}
		})
	}
	_, err := NewModel(context.Background(), Settings{Provider: "nope"}, Env{}, nil)
	if !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("unknown provider error %v does not wrap ErrUnknownProvider", err)
	}
	env := Env{APIKey: testKey}
	if s := fmt.Sprintf("%v %+v %#v %s", env, env, env, env); strings.Contains(s, testKey) {
		t.Errorf("Env printing leaks key: %s", s)
	}
}

// Without a model name anywhere, the first model a base URL's server lists
// is used; OPENAI_MODEL (Env.Model) comes first.
func TestNewModelAsksTheServer(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Repeat(llmtest.Text("ok")))
	srv.SetModels("qwen2.5-7b-instruct", "other")
	m, err := NewModel(context.Background(), Settings{Provider: "openai", BaseURL: srv.URL}, Env{}, nil)
	if err != nil || m.Name() != "openai/qwen2.5-7b-instruct" {
		t.Fatalf("first listed model: %v, %v", m, err)
	}
	if m, err := NewModel(context.Background(), Settings{BaseURL: srv.URL}, Env{Model: "from-env"}, nil); err != nil || m.Name() != "openai/from-env" {
		t.Errorf("OPENAI_MODEL: %v, %v", m, err)
	}
}
