package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/vault"
)

func TestSubscribeChanges(t *testing.T) {
	dir := writeVault(t, graphVault)
	ix := openIndex(t, dir, "")
	ctx := context.Background()
	ch := ix.SubscribeChanges()
	defer ch.Close()
	apply := func(changes ...vault.Change) {
		t.Helper()
		if err := ix.Apply(ctx, vault.Batch{Changes: changes}); err != nil {
			t.Fatal(err)
		}
	}
	ready := func() bool {
		select {
		case <-ch.Ready():
			return true
		default:
			return false
		}
	}

	// A batch that changes nothing the index keeps signals nothing.
	apply(vault.Change{Path: "Home.md"})
	if ready() || len(ch.Take()) != 0 {
		t.Fatal("an unchanged note was reported")
	}

	writeFile(t, dir, "Home.md", "# Home\nedited\n")
	writeFile(t, dir, "notes/New.md", "# New\n")
	writeFile(t, dir, "notes/Brief.md", "# Brief\n")
	if err := os.Remove(filepath.Join(dir, "Alpha.md")); err != nil {
		t.Fatal(err)
	}
	apply(vault.Change{Path: "Alpha.md", Removed: true}, vault.Change{Path: "Home.md"}, vault.Change{Path: "notes/Brief.md"}, vault.Change{Path: "notes/New.md"})
	// Touched, same content: its file metadata changed.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "archive", "2020", "Old.md"), later, later); err != nil {
		t.Fatal(err)
	}
	apply(vault.Change{Path: "archive/2020/Old.md"})
	// Added and removed between two takes: not reported.
	if err := os.Remove(filepath.Join(dir, "notes", "Brief.md")); err != nil {
		t.Fatal(err)
	}
	apply(vault.Change{Path: "notes/Brief.md", Removed: true})
	if !ready() {
		t.Fatal("Ready was not signalled")
	}
	want := []NoteChange{{"Alpha.md", NoteRemoved}, {"Home.md", NoteUpdated}, {"archive/2020/Old.md", NoteUpdated}, {"notes/New.md", NoteAdded}}
	if got := ch.Take(); !slices.Equal(got, want) {
		t.Errorf("Take = %v, want %v", got, want)
	}
	if got := ch.Take(); len(got) != 0 {
		t.Errorf("a second Take = %v", got)
	}

	// A rebuild rewrites every note: each is reported once, as updated.
	if _, err := ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got := ch.Take()
	if len(got) != ix.Count() || slices.ContainsFunc(got, func(c NoteChange) bool { return c.Kind != NoteUpdated }) {
		t.Errorf("after a rebuild: %v", got)
	}

	ch.Close()
	writeFile(t, dir, "Home.md", "# Home\nedited again\n")
	apply(vault.Change{Path: "Home.md"})
	if n := ix.feeds.n.Load(); n != 0 || len(ch.Take()) != 0 {
		t.Errorf("a closed subscription still records changes (%d subscriptions)", n)
	}
}
