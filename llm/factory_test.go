package llm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	script := writeFile(t, "s.yaml", "- content: hi\n")
	tests := []struct {
		name     string
		env      map[string]string
		cfg      Config
		wantName string
		wantErr  string
	}{
		{name: "default offline", cfg: Config{}, wantName: "offline"},
		{name: "default openai from env key", env: map[string]string{"OPENAI_API_KEY": testKey}, cfg: Config{Model: "gpt-4o-mini"}, wantName: "openai/gpt-4o-mini"},
		{name: "default openai from base url", cfg: Config{BaseURL: "http://localhost:11434/v1", Model: "qwen3:8b"}, wantName: "openai/qwen3:8b"},
		{name: "explicit offline despite key", env: map[string]string{"OPENAI_API_KEY": testKey}, cfg: Config{Provider: "Offline"}, wantName: "offline"},
		{name: "openai without model", cfg: Config{Provider: "openai", APIKey: testKey}, wantErr: "no model"},
		{name: "openai without key", cfg: Config{Provider: "openai", Model: "m"}, wantErr: "OPENAI_API_KEY"},
		{name: "scripted", cfg: Config{Provider: "scripted", ScriptPath: script}, wantName: "scripted/s"},
		{name: "scripted without path", cfg: Config{Provider: "scripted"}, wantErr: "no script path"},
		{name: "unknown", cfg: Config{Provider: "claude", APIKey: testKey}, wantErr: "offline, openai, scripted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", "")
			t.Setenv("OPENAI_MODEL", "")
			t.Setenv("OPENAI_BASE_URL", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			m, err := New(tt.cfg)
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
	_, err := New(Config{Provider: "nope"})
	if !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("unknown provider error %v does not wrap ErrUnknownProvider", err)
	}
	cfg := Config{APIKey: testKey}
	if s := fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg); strings.Contains(s, testKey) {
		t.Errorf("Config printing leaks key: %s", s)
	}
}
