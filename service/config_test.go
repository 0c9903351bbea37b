package service

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/agent/agenttest"
	"github.com/vault-agent/vault-agent/internal/fixture"
)

// writeConfig writes a config file and returns an Env that reads it.
func writeConfig(t *testing.T, text string, env Env) Env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env.ConfigPath = path
	env.Config = LoadConfig(path, "/home/me")
	return env
}

// Settings come from flags, then the environment, then the config file's
// vault section, then its top level; each says where it came from.
func TestSettingsPrecedence(t *testing.T) {
	vaultDir := t.TempDir()
	env := writeConfig(t, `
model = "from-file"
base-url = "http://file:1/v1"
mode = "roa"
planner = true
exclude = ["Archive/**"]
embed-model = "nomic-embed-text"

[vault."`+vaultDir+`"]
model = "from-section"
exclude = ["Private/**", "Archive/**"]
`, Env{})
	tests := []struct {
		name      string
		env       Env
		flags     Settings
		root      string
		field     string
		want      string
		wantFrom  string
		wantModel string
	}{
		{name: "file", root: "", field: "Model", want: "from-file", wantFrom: "model in config file " + env.ConfigPath},
		{name: "section", root: vaultDir, field: "Model", want: "from-section", wantFrom: "model in config file " + env.ConfigPath + ` [vault."` + vaultDir + `"]`},
		{name: "top level under a section", root: vaultDir, field: "Mode", want: "roa", wantFrom: "mode in config file " + env.ConfigPath},
		{name: "OPENAI_MODEL over the file", env: Env{Model: "openai-env"}, root: vaultDir, field: "Model", want: "openai-env", wantFrom: "OPENAI_MODEL"},
		{name: "VAULT_AGENT_MODEL over OPENAI_MODEL", env: Env{Model: "openai-env", Vars: map[string]string{"VAULT_AGENT_MODEL": "va-env"}}, field: "Model", want: "va-env", wantFrom: "VAULT_AGENT_MODEL"},
		{name: "flag over all", env: Env{Vars: map[string]string{"VAULT_AGENT_MODEL": "va-env"}}, flags: Settings{Model: "flag"}.Named(FlagName), field: "Model", want: "flag", wantFrom: "--model"},
		{name: "base URL from OPENAI_BASE_URL", env: Env{BaseURL: "http://env:2/v1"}, field: "BaseURL", want: "http://env:2/v1", wantFrom: "OPENAI_BASE_URL"},
		{name: "mode from the environment", env: Env{Vars: map[string]string{"VAULT_AGENT_MODE": "par"}}, field: "Mode", want: "par", wantFrom: "VAULT_AGENT_MODE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.env
			e.Config, e.ConfigPath = env.Config, env.ConfigPath
			s := e.Layered(tt.root, tt.flags, nil)
			var got string
			switch tt.field {
			case "Model":
				got = s.Model
			case "Mode":
				got = s.Mode
			case "BaseURL":
				got = s.BaseURL
			}
			if got != tt.want || s.Source(tt.field) != tt.wantFrom {
				t.Errorf("%s = %q from %q, want %q from %q", tt.field, got, s.Source(tt.field), tt.want, tt.wantFrom)
			}
		})
	}
	s := env.Settings(vaultDir)
	if strings.Join(s.Excludes, ",") != "Private/**,Archive/**" || s.Planner == nil || !*s.Planner || s.EmbedModel != "nomic-embed-text" {
		t.Errorf("section settings = %+v", s)
	}
	if e := (Env{Vars: map[string]string{"VAULT_AGENT_EXCLUDE": "a/**, b/**", "VAULT_AGENT_PLANNER": "false"}}).Settings(""); strings.Join(e.Excludes, "|") != "a/**|b/**" || e.Planner == nil || *e.Planner {
		t.Errorf("excludes and planner from the environment: %+v", e)
	}
}

// A config file or variable that cannot be used is reported and ignored:
// it never keeps anything from starting.
func TestConfigProblems(t *testing.T) {
	tests := []struct {
		name, text string
		vars       map[string]string
		want       string
	}{
		{"syntax", "model = \"unterminated\n", nil, "line 1"},
		{"unknown key", "modle = \"x\"\n", nil, `unknown key "modle"`},
		{"bad mode", "mode = \"fastest\"\n", nil, "mode in config file"},
		{"relative vault", "[vault.\"Notes\"]\nmodel = \"x\"\n", nil, "absolute folder"},
		{"bad variable", "", map[string]string{"VAULT_AGENT_PLANNER": "maybe"}, "VAULT_AGENT_PLANNER must be true or false"},
		{"bad provider variable", "", map[string]string{"VAULT_AGENT_PROVIDER": "claude"}, "VAULT_AGENT_PROVIDER must be one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := writeConfig(t, tt.text, Env{Vars: tt.vars})
			problems := env.Problems("")
			if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), tt.want) {
				t.Fatalf("problems = %q, want %q", problems, tt.want)
			}
			s := env.Settings("")
			if s.Mode != "" || s.Provider != "" || s.Planner != nil {
				t.Errorf("a bad value was kept: %+v", s)
			}
			env.CacheDir = t.TempDir()
			svc, err := Open(context.Background(), Options{Vault: fixture.Copy(t), InMemoryIndex: true, Env: &env, Agent: true})
			if err != nil {
				t.Fatalf("a bad config kept the vault from opening: %v", err)
			}
			svc.Close()
		})
	}
	if c := LoadConfig(filepath.Join(t.TempDir(), "none.toml"), ""); c != nil {
		t.Errorf("a missing file: %+v", c)
	}
	if p := ConfigPath(func(string) (string, bool) { return "", false }, "/home/me/.config"); p != "/home/me/.config/vault-agent/config.toml" {
		t.Errorf("config path = %q", p)
	}
	if p := ConfigPath(func(k string) (string, bool) { return "/x.toml", k == ConfigVar }, "/home/me/.config"); p != "/x.toml" {
		t.Errorf("config path from %s = %q", ConfigVar, p)
	}
}

// The rule: offline unless a model or a provider is named; a key or a base
// URL alone chooses nothing and is reported.
func TestChooseModel(t *testing.T) {
	tests := []struct {
		name       string
		env        Env
		flags      Settings
		provider   string
		by, notice string
	}{
		{name: "nothing", provider: "offline"},
		{name: "key only", env: Env{APIKey: testKey}, provider: "offline", notice: "answering offline; set --model to use your OpenAI key"},
		{name: "base URL only", env: Env{BaseURL: "http://127.0.0.1:1/v1"}, provider: "offline", notice: "set --model to use the model server at http://127.0.0.1:1/v1 (OPENAI_BASE_URL)"},
		{name: "OPENAI_MODEL", env: Env{APIKey: testKey, Model: "gpt-4o-mini"}, provider: "openai", by: "OPENAI_MODEL"},
		{name: "model flag", env: Env{APIKey: testKey}, flags: Settings{Model: "m"}.Named(FlagName), provider: "openai", by: "--model"},
		{name: "provider from the environment", env: Env{Vars: map[string]string{"VAULT_AGENT_PROVIDER": "openai"}}, provider: "openai", by: "VAULT_AGENT_PROVIDER"},
		{name: "offline flag over a model", env: Env{APIKey: testKey, Model: "gpt-4o-mini"}, flags: Settings{Provider: "offline"}.Named(FlagName), provider: "offline", by: "--provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ChooseModel(tt.env.Layered("", tt.flags, nil), tt.env)
			if c.Provider != tt.provider || c.By != tt.by || !strings.Contains(c.Notice, tt.notice) || (tt.notice == "") != (c.Notice == "") {
				t.Errorf("choice = %+v, want provider %s by %q notice %q", c, tt.provider, tt.by, tt.notice)
			}
			if strings.Contains(c.Notice+c.Why(), testKey) {
				t.Error("the key was shown")
			}
		})
	}
}

// A vault opens whatever the model settings; a run whose model server is
// not listening fails alone with an error that names the variables that
// chose the model and says how to change them; the offline default answers.
func TestModelNeverBlocksOpen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	tests := []struct {
		name    string
		env     Env
		offline bool
		want    []string
	}{
		{name: "key without model", env: Env{APIKey: testKey}, offline: true},
		{name: "base URL at a closed port", env: Env{BaseURL: closed}, offline: true},
		{name: "model at a closed port", env: Env{BaseURL: closed, Model: "llama3.1"},
			want: []string{"openai/llama3.1 cannot be used", "chosen by OPENAI_MODEL, the base URL from OPENAI_BASE_URL", "change or unset OPENAI_BASE_URL", "--provider offline"}},
		{name: "model listed by a closed port", env: Env{BaseURL: closed, Vars: map[string]string{"VAULT_AGENT_PROVIDER": "openai"}},
			want: []string{"chosen by VAULT_AGENT_PROVIDER", "asking http://" + ln.Addr().String() + "/v1 for its models failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			s, err := Open(context.Background(), Options{Vault: fixture.Copy(t), InMemoryIndex: true, Env: &env, Agent: true})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			if s.Index().Count() == 0 {
				t.Fatal("nothing indexed")
			}
			res, err := s.Run(context.Background(), RunRequest{Message: agenttest.Goal}, nil)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if tt.offline {
				if res.StopReason != agent.StopFinalAnswer || !strings.Contains(res.Answer, "[[") {
					t.Errorf("offline run = %+v", res)
				}
				return
			}
			if res.StopReason != agent.StopError {
				t.Fatalf("run = %+v, want a failed run", res)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Error, w) {
					t.Errorf("error %q does not say %q", res.Error, w)
				}
			}
		})
	}
}

// An embedding model the environment names that cannot be used keeps
// nothing from opening: search stays lexical, with a warning. One a
// front-end names is its error.
func TestEmbedModelFromTheEnvironment(t *testing.T) {
	env := Env{Vars: map[string]string{"VAULT_AGENT_EMBED_MODEL": "nomic-embed-text"}}
	s, err := Open(context.Background(), Options{Vault: fixture.Copy(t), InMemoryIndex: true, Env: &env, Agent: true})
	if err != nil {
		t.Fatalf("an embedding model from the environment kept the vault from opening: %v", err)
	}
	if s.Semantic() != nil {
		t.Error("semantic search is on without an endpoint")
	}
	s.Close()
	_, err = Open(context.Background(), Options{Vault: fixture.Copy(t), InMemoryIndex: true, Env: &Env{},
		Settings: Settings{EmbedModel: "nomic-embed-text"}.Named(FlagName)})
	var se *SettingError
	if !errors.As(err, &se) || se.Key != "embedModel" {
		t.Errorf("a flag's embedding model without an endpoint: %v", err)
	}
}
