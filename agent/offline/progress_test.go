package offline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// longPathAgent is the offline agent over a vault whose notes sit deep in
// long folders (a module cache checked into a vault), so the sentence
// naming the notes it reads is longer than the agent holds back.
func longPathAgent(t *testing.T) *agent.Agent {
	t.Helper()
	root := t.TempDir()
	// Notes that share a name are named by their paths.
	for _, module := range []string{"a-rather-long-module-name@v1.22.333", "another-long-module-name@v0.9.1", "yet-another-module@v3.0.0-beta.2", "the-last-module@v2.4.5"} {
		dir := filepath.Join(root, "go", "pkg", "mod", "github.com", "example-organisation", module, "docs")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "# Retry budget\n\nThe retry budget caps how many retries a client may send in a window of time. " +
			"It keeps a struggling server from being flooded.\n"
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := vault.Open(root, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.Open(context.Background(), search.Options{Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Deps{Model: New(), Index: ix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestProgressTextIsNotStreamedAsAnswer: the sentence of a turn that calls
// tools ("Reading the most relevant notes: ...") is a step, never answer
// text, however long the note paths make it. Only the final turn streams.
func TestProgressTextIsNotStreamedAsAnswer(t *testing.T) {
	a := longPathAgent(t)
	for _, mode := range []string{agent.ModeReact, agent.ModeROA, agent.ModePAR, agent.ModeStaged} {
		t.Run(mode, func(t *testing.T) {
			rec := &events{}
			res, err := a.Run(context.Background(), agent.RunRequest{Message: "what is the retry budget?", Config: agent.Config{Mode: mode}}, rec)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != agent.StopFinalAnswer || !strings.Contains(res.Answer, "retry budget") {
				t.Fatalf("result %s: %q", res.StopReason, res.Answer)
			}
			var streamed strings.Builder
			for _, e := range rec.ofType(agent.EventAnswerDelta) {
				streamed.WriteString(e.Payload.(agent.TextPayload).Text)
			}
			for _, progress := range []string{"Reading the most relevant notes", "Searching the vault for"} {
				if strings.Contains(streamed.String(), progress) || strings.Contains(res.Answer, progress) {
					t.Errorf("progress text %q in the answer:\nstreamed: %q\nanswer: %q", progress, streamed.String(), res.Answer)
				}
			}
			if s := streamed.String(); s != "" && !strings.HasPrefix(res.Answer, s) {
				t.Errorf("streamed text is not the answer's start:\nstreamed: %q\nanswer: %q", s, res.Answer)
			}
		})
	}
}
