package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm/llmtest"
)

const embedKey = "sk-embed-cli-SECRET-0123456789"

// The command line's semantic search: --embed-model and --embed-base-url,
// the key from the environment and never printed, vectors kept across
// runs (the second run embeds only the query).
func TestSemanticSearchCLI(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(128, map[string]string{"leaven": "sourdough"}))
	// The first request is refused with the key in the message.
	srv.FailNext(llmtest.Reply{Status: 500, Message: "boom " + embedKey})
	idx := filepath.Join(t.TempDir(), "idx")
	run := func(args ...string) result {
		t.Helper()
		return execCLI(t, "", []string{"VAULT_AGENT_EMBED_API_KEY=" + embedKey, "XDG_CACHE_HOME=" + t.TempDir()}, append([]string{"--log-level", "debug"}, args...)...)
	}
	flags := []string{"search", "--vault", fixture, "--index", idx, "--embed-model", "m", "--embed-base-url", srv.URL, "--limit", "1"}
	r := run(append(flags, "--mode", "semantic", "leaven")...)
	if r.code != 0 || !strings.Contains(r.stdout, "Sourdough") {
		t.Fatalf("semantic: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	texts := srv.Texts()
	r = run(append(flags, "leaven")...) // hybrid by default
	if r.code != 0 || !strings.Contains(r.stdout, "Sourdough") {
		t.Fatalf("hybrid: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if srv.Texts() != texts+1 {
		t.Errorf("the second run embedded %d texts, want 1 (the query)", srv.Texts()-texts)
	}
	r = run("search", "--vault", fixture, "--index", idx, "--mode", "semantic", "leaven")
	if r.code != 2 || !strings.Contains(r.stderr, "embed-model") {
		t.Errorf("semantic without a model: exit %d\n%s", r.code, r.stderr)
	}
	r = run("related", "--vault", fixture, "--index", idx, "--embed-model", "m", "--embed-base-url", srv.URL, "--limit", "2", "Sourdough Starter")
	if r.code != 0 || strings.Count(r.stdout, "\n") < 2 || strings.Contains(r.stdout, "(recipes/Sourdough Starter.md)") {
		t.Errorf("related: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// A process killed (SIGKILL) while embedding loses at most the batch in
// flight: the next start embeds only what was not committed.
func TestKilledWhileEmbeddingResumes(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(64, nil))
	held, release := srv.HoldFrom(3) // two batches go through, the third hangs
	defer release()
	idx := filepath.Join(t.TempDir(), "idx")
	args := []string{"index", "--vault", fixture, "--index", idx, "--embed-model", "m", "--embed-base-url", srv.URL}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "XDG_CACHE_HOME="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the third batch never arrived")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	cmd.Wait()
	committed := srv.Texts()
	if committed != 2*64 {
		t.Fatalf("%d chunks embedded before the kill, want 128 (two batches)", committed)
	}
	// The held request of the dead process is never released: it ends
	// when the server sees the connection closed, and counts nothing.
	srv.HoldFrom(1 << 30)
	r := runCLI(t, append(args, "--json")...)
	if r.code != 0 {
		t.Fatalf("restart: exit %d\n%s", r.code, r.stderr)
	}
	resumed := srv.Texts() - committed
	// The restart embeds the rest, the batch lost with the kill included,
	// and nothing committed before it.
	r = runCLI(t, append(args, "--json")...)
	if r.code != 0 || srv.Texts() != committed+resumed {
		t.Fatalf("a third run embedded %d chunks, want 0", srv.Texts()-committed-resumed)
	}
	total := vectorCount(t, srv)
	if resumed != total-committed {
		t.Errorf("the restart embedded %d chunks, want %d (all %d but the %d committed)", resumed, total-committed, total, committed)
	}
}

// vectorCount is how many distinct chunks the fixture vault has: what a
// fresh index embeds.
func vectorCount(t *testing.T, srv *llmtest.EmbedServer) int {
	t.Helper()
	before := srv.Texts()
	r := runCLI(t, "index", "--vault", fixture, "--index", filepath.Join(t.TempDir(), "fresh"), "--embed-model", "m", "--embed-base-url", srv.URL)
	if r.code != 0 {
		t.Fatalf("fresh index: %s", r.stderr)
	}
	return srv.Texts() - before
}
