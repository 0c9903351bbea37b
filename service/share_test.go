package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// sharedEnv is an environment whose processes share indexes: a cache dir
// and a runtime dir of the test's own (short: socket paths are short).
func sharedEnv(t *testing.T) *Env {
	t.Helper()
	run, err := os.MkdirTemp("", "va")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	return &Env{CacheDir: t.TempDir(), RuntimeDir: filepath.Join(run, "vault-agent")}
}

// Two services on one vault, as two front-ends would be: the second
// reaches the first's index, runs its own agent (with the plan review
// store both open), and an edit it applies is searchable at the holder
// before its run goes on, watcher or not.
func TestServicesShareTheIndex(t *testing.T) {
	env := sharedEnv(t)
	dir := fixture.Copy(t)
	ctx := context.Background()
	holder, err := Open(ctx, Options{Vault: dir, Env: env, Agent: true, Sessions: true, FrontEnd: "first"})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	model := scriptedEdit("create_note", map[string]any{"path": "Ideas/Heron.md", "content": "# Heron\n\nThe grey heron fishes at dawn.\n"})
	follower, err := Open(ctx, Options{Vault: dir, Env: env, Agent: true, Sessions: true, Model: model, FrontEnd: "second"})
	if err != nil {
		t.Fatalf("a second service on the vault: %v", err)
	}
	defer follower.Close()
	if !holder.Index().Holding() || follower.Index().Holding() {
		t.Fatalf("holding: first %v, second %v", holder.Index().Holding(), follower.Index().Holding())
	}
	if follower.IndexPath() != holder.IndexPath() || follower.Index().Count() != holder.Index().Count() {
		t.Errorf("the follower's index %s (%d notes), the holder's %s (%d)", follower.IndexPath(), follower.Index().Count(), holder.IndexPath(), holder.Index().Count())
	}

	msg := editRun(t, follower, model, Settings{}, Approved)
	if !strings.Contains(msg, "applied") {
		t.Fatalf("the edit: %s", msg)
	}
	res, err := holder.Search(ctx, search.Request{Query: "heron"})
	if err != nil || len(res.Results) == 0 || res.Results[0].Path != "Ideas/Heron.md" {
		t.Fatalf("the note the follower wrote, at the holder: %+v %v", res, err)
	}
	entries, err := vault.OpenJournal(follower.JournalPath(), vault.JournalOptions{}).Entries()
	if err != nil || len(entries) != 1 || follower.JournalPath() != holder.JournalPath() {
		t.Errorf("journal %s: %+v %v", follower.JournalPath(), entries, err)
	}

	st, err := Status(ctx, Options{Vault: dir, Env: env})
	if err != nil || st.Holder == nil {
		t.Fatalf("status: %+v %v", st, err)
	}
	if h := st.Holder; h.PID != os.Getpid() || h.FrontEnd != "first" || h.Clients != 1 || h.Notes != holder.Index().Count() || h.IndexBytes == 0 {
		t.Errorf("holder = %+v", h)
	}

	// The holder goes: the follower holds the index now, and status says so.
	holder.Close()
	if res, err := follower.Search(ctx, search.Request{Query: "heron"}); err != nil || len(res.Results) == 0 {
		t.Fatalf("search after the holder closed: %+v %v", res, err)
	}
	st, err = Status(ctx, Options{Vault: dir, Env: env})
	if err != nil || st.Holder == nil || st.Holder.FrontEnd != "second" || st.Holder.Clients != 0 {
		t.Fatalf("status after the takeover: %+v %v", st.Holder, err)
	}
	follower.Close()
	st, err = Status(ctx, Options{Vault: dir, Env: env})
	if err != nil || st.Holder != nil || st.Locked || st.OnDisk == 0 {
		t.Fatalf("status of an index nobody holds: %+v %v", st, err)
	}
}
