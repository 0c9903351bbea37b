package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCLIEnv runs the command in dir with env over a clean environment (see
// execCLI).
func runCLIEnv(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	return execCLI(t, dir, append([]string{"XDG_CACHE_HOME=" + t.TempDir()}, env...), args...)
}

// execCLI runs the command in dir ("" for the test's) with env over the
// process environment less what would choose a model or settings: no model
// variables, no VAULT_AGENT_* settings, no config file.
func execCLI(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=", "VAULT_AGENT_MODEL=", "VAULT_AGENT_PROVIDER=",
		"VAULT_AGENT_BASE_URL=", "VAULT_AGENT_EXCLUDE=", "VAULT_AGENT_MODE=", "VAULT_AGENT_PLANNER=", "VAULT_AGENT_EMBED_MODEL=",
		"VAULT_AGENT_EMBED_BASE_URL=", "XDG_CONFIG_HOME="+t.TempDir(), "VAULT_AGENT_CONFIG=")
	cmd.Env = append(cmd.Env, env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{so.String(), se.String(), code}
}

// closedURL is a base URL at a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String() + "/v1"
}

// The README's first command, and ask in the environments people have: an
// exported key without a model, a base URL at a closed port. It answers
// offline, with citations, says so once and names the model; a model that
// is named and cannot be reached fails that run with an error naming the
// variables that chose it.
func TestAskInThePersonsEnvironment(t *testing.T) {
	abs, err := filepath.Abs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	closed := closedURL(t)
	tests := []struct {
		name      string
		env       []string
		args      []string
		code      int
		stderr    []string
		notStderr []string
	}{
		{name: "the README's first command with a key exported", env: []string{"OPENAI_API_KEY=sk-test"},
			args:   []string{"--planner", "how do I keep my sourdough starter alive?"},
			stderr: []string{"answering offline; set --model to use your OpenAI key", "model: offline (the default: no model is configured)"}, notStderr: []string{"sk-test"}},
		{name: "base URL at a closed port", env: []string{"OPENAI_BASE_URL=" + closed},
			args:   []string{"how do I keep my sourdough starter alive?"},
			stderr: []string{"answering offline; set --model to use the model server at " + closed + " (OPENAI_BASE_URL)", "model: offline"}},
		{name: "a model at a closed port", env: []string{"OPENAI_BASE_URL=" + closed, "OPENAI_MODEL=llama3.1", "OPENAI_API_KEY=sk-test"},
			args: []string{"how do I keep my sourdough starter alive?"}, code: 1,
			stderr:    []string{"the run failed: model call failed: the model openai/llama3.1 cannot be used", "chosen by OPENAI_MODEL, the base URL from OPENAI_BASE_URL", "--provider offline"},
			notStderr: []string{"sk-test"}},
		{name: "an explicit offline flag over a model", env: []string{"OPENAI_MODEL=gpt-4o-mini", "OPENAI_API_KEY=sk-test"},
			args: []string{"--provider", "offline", "how do I keep my sourdough starter alive?"}, stderr: []string{"model: offline (--provider)"}, notStderr: []string{"answering offline"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The vault is the current folder: no --vault.
			r := runCLIEnv(t, abs, tt.env, append([]string{"ask"}, tt.args...)...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
			if tt.code == 0 && !strings.Contains(r.stdout, "[[Sourdough Starter]]") {
				t.Errorf("no citation in the answer:\n%s", r.stdout)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			for _, w := range tt.notStderr {
				if strings.Contains(r.stderr+r.stdout, w) {
					t.Errorf("output holds %q:\n%s", w, r.stderr)
				}
			}
			if n := strings.Count(r.stderr, "answering offline"); n > 1 {
				t.Errorf("the notice was said %d times", n)
			}
		})
	}
	// --json names the model too.
	r := runCLIEnv(t, abs, []string{"OPENAI_API_KEY=sk-test"}, "ask", "--json", "how do I keep my sourdough starter alive?")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var last struct {
		Type  string `json:"type"`
		Model struct {
			Name     string `json:"name"`
			ChosenBy string `json:"chosenBy"`
			Offline  bool   `json:"offline"`
		} `json:"model"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "result" || last.Model.Name != "offline" || !last.Model.Offline {
		t.Errorf("--json result: %v %+v\n%s", err, last, lines[len(lines)-1])
	}
	// Outside a vault, no --vault is a clear error.
	r = runCLIEnv(t, t.TempDir(), nil, "ask", "what?")
	if r.code != 2 || !strings.Contains(r.stderr, "is not a vault (no .obsidian folder and no markdown notes); pass --vault DIR") {
		t.Errorf("ask outside a vault: exit %d\n%s", r.code, r.stderr)
	}
}

// vault-agent config shows each setting's value and source: defaults,
// the environment, the config file (its vault section) under a flag.
func TestConfigCommand(t *testing.T) {
	abs, err := filepath.Abs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte(`model = "gpt-4o-mini"
exclude = ["Archive/**"]

[vault."`+abs+`"]
mode = "roa"
planner = true
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{name: "nothing set", want: []string{"(none: the offline model answers)", "chat model:  offline (the default: no model is configured)"}},
		{name: "environment", env: []string{"OPENAI_API_KEY=sk-test", "VAULT_AGENT_MODEL=llama3.1", "OPENAI_BASE_URL=http://localhost:11434/v1"},
			want: []string{"llama3.1", "VAULT_AGENT_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY set", "chat model:  openai/llama3.1 (VAULT_AGENT_MODEL, the base URL from OPENAI_BASE_URL)"}},
		{name: "config file and a flag", env: []string{"VAULT_AGENT_CONFIG=" + cfg}, args: []string{"--model", "qwen3:8b"},
			want: []string{"config file: " + cfg, "qwen3:8b", "--model", "Archive/**", "exclude in config file " + cfg, "mode in config file " + cfg + ` [vault."` + abs + `"]`, "on"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLIEnv(t, abs, tt.env, append([]string{"config"}, tt.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			t.Logf("vault-agent config:\n%s", r.stdout)
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "sk-test") {
				t.Error("the key was shown")
			}
		})
	}
}

// The README's first command, run as written from the repository root in a
// shell where OPENAI_API_KEY is exported, answers with citations.
func TestReadmeFirstCommandWithAKey(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```sh\n")
	line, _, _ := strings.Cut(rest, "\n")
	cmdline, ok2 := strings.CutPrefix(line, "go run ./cmd/vault-agent ")
	if !ok || !ok2 {
		t.Fatalf("the README does not start with a go run ./cmd/vault-agent command: %q", line)
	}
	args := shellWords(t, cmdline)
	r := runCLIEnv(t, "../..", []string{"OPENAI_API_KEY=sk-test"}, args...)
	if r.code != 0 || !strings.Contains(r.stdout, "[[Sourdough Starter") {
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", line, r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "answering offline; set --model to use your OpenAI key") || strings.Contains(r.stderr+r.stdout, "sk-test") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// shellWords splits a command line of plain words and double-quoted
// strings, as the README writes them.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				t.Fatalf("unterminated quote in %q", s)
			}
			out = append(out, s[1:end+1])
			s = s[end+2:]
			continue
		}
		word, after, _ := strings.Cut(s, " ")
		out = append(out, word)
		s = after
	}
	return out
}
