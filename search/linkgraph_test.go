package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vault-agent/vault-agent/vault"
)

var graphVault = map[string]string{
	"Home.md":               "# Home\n[[Alpha]] and [[Alpha|again]], [[projects/beta]], [[Nowhere]], [[Home]].\n",
	"Alpha.md":              "# Alpha\nSee [beta](projects/Beta.md) and [[Gamma#Setup]].\n",
	"projects/Beta.md":      "# Beta\nBack to [[alpha]]. ![[diagram.png]]\n",
	"projects/Gamma.md":     "# Gamma in projects\n[[Beta]]\n",
	"archive/2020/Gamma.md": "# Gamma archived\n",
	"archive/2020/Old.md":   "# Old\n[[Gamma]] here means the archive's Gamma.\n",
	"notes/Unrelated.md":    "# Unrelated\nNo links at all.\n",
	"notes/Alphabet.md":     "# Alphabet\n[[Alphabet soup]]\n",
	"Deep/Nested/Note.md":   "# Nested\n[Home](../../Home.md)\n",
}

func backlinkPaths(t *testing.T, ix *Index, target string) map[string]int {
	t.Helper()
	bl, err := ix.Backlinks(context.Background(), target)
	if err != nil {
		t.Fatalf("Backlinks(%s): %v", target, err)
	}
	out := map[string]int{}
	var order []string
	for _, b := range bl {
		out[b.Path] = b.Count
		order = append(order, b.Path)
		if m, ok := ix.Note(b.Path); !ok || b.Title != m.Title {
			t.Errorf("backlink %s: title %q", b.Path, b.Title)
		}
	}
	if !slices.IsSorted(order) {
		t.Errorf("backlinks of %s not sorted: %v", target, order)
	}
	return out
}

// openLinkIndex opens and syncs an index over dir (in memory when path is "").
func openLinkIndex(t *testing.T, dir, path string) *Index {
	t.Helper()
	ix, err := Open(context.Background(), Options{Path: path, Vault: openVault(t, dir), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestBacklinksAndResolveLink(t *testing.T) {
	dir := writeVault(t, graphVault)
	ix := openLinkIndex(t, dir, "")
	// Backlinks answer from the index, not from the vault: a linking note
	// gone from the disk behind the index's back still counts.
	if err := os.Remove(filepath.Join(dir, "Home.md")); err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]map[string]int{
		"Alpha.md":              {"Home.md": 2, "projects/Beta.md": 1},
		"projects/Beta.md":      {"Alpha.md": 1, "Home.md": 1, "projects/Gamma.md": 1},
		"projects/Gamma.md":     {"Alpha.md": 1},            // Alpha is in the vault root: the shortest path wins
		"archive/2020/Gamma.md": {"archive/2020/Old.md": 1}, // a same-folder note wins
		"Home.md":               {"Deep/Nested/Note.md": 1},
		"notes/Unrelated.md":    {},
		"Deep/Nested/Note.md":   {},
	} {
		if got := backlinkPaths(t, ix, target); !mapsEqual(got, want) {
			t.Errorf("Backlinks(%s) = %v, want %v", target, got, want)
		}
	}

	for _, c := range []struct {
		l    vault.Link
		from string
		want string
	}{
		{vault.Link{Target: "Alpha", Kind: "wikilink"}, "Home.md", "Alpha.md"},
		{vault.Link{Target: "projects/beta", Kind: "wikilink"}, "Home.md", "projects/Beta.md"},
		{vault.Link{Target: "Nowhere", Kind: "wikilink"}, "Home.md", ""},
		{vault.Link{Target: "diagram.png", Kind: "wikilink", Embed: true}, "projects/Beta.md", ""},
		{vault.Link{Target: "Gamma", Kind: "wikilink"}, "archive/2020/Old.md", "archive/2020/Gamma.md"},
		{vault.Link{Target: "projects/Beta.md", Kind: "markdown"}, "Alpha.md", "projects/Beta.md"},
		// A markdown link names a path: a file name alone is no match.
		{vault.Link{Target: "Beta.md", Kind: "markdown"}, "Alpha.md", ""},
	} {
		if got := ix.ResolveLink(c.l, c.from); got != c.want {
			t.Errorf("ResolveLink(%+v from %s) = %q, want %q", c.l, c.from, got, c.want)
		}
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Backlinks follow every write: edits, new notes, deletes, and a rebuild.
func TestBacklinksFollowChanges(t *testing.T) {
	dir := writeVault(t, graphVault)
	ix := openIndex(t, dir, "")
	ctx := context.Background()
	if got := backlinkPaths(t, ix, "Alpha.md"); !mapsEqual(got, map[string]int{"Home.md": 2, "projects/Beta.md": 1}) {
		t.Errorf("Backlinks(Alpha.md) = %v", got)
	}
	writeFile(t, dir, "Home.md", "# Home\nOnly [[projects/Beta]] now.\n")
	writeFile(t, dir, "notes/New.md", "# New\n[[Alpha]] [[Alpha]] [[Alpha]]\n")
	if err := os.Remove(filepath.Join(dir, "projects", "Beta.md")); err != nil {
		t.Fatal(err)
	}
	batch := vault.Batch{Changes: []vault.Change{{Path: "Home.md"}, {Path: "notes/New.md"}, {Path: "projects/Beta.md", Removed: true}}}
	if err := ix.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if got, want := backlinkPaths(t, ix, "Alpha.md"), map[string]int{"notes/New.md": 3}; !mapsEqual(got, want) {
		t.Errorf("after the batch: Backlinks(Alpha.md) = %v, want %v", got, want)
	}
	if got := backlinkPaths(t, ix, "Alpha.md"); got["projects/Beta.md"] != 0 {
		t.Error("a removed note still links")
	}
	if _, err := ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := backlinkPaths(t, ix, "Alpha.md"); !mapsEqual(got, map[string]int{"notes/New.md": 3}) {
		t.Errorf("after a rebuild: Backlinks(Alpha.md) = %v", got)
	}
}

// An index reopened on disk answers from what it stored.
func TestBacklinksOfReopenedIndex(t *testing.T) {
	dir := writeVault(t, graphVault)
	path := filepath.Join(t.TempDir(), "idx")
	ix := openLinkIndex(t, dir, path)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = openLinkIndex(t, dir, path)
	if got, want := backlinkPaths(t, ix, "Alpha.md"), map[string]int{"Home.md": 2, "projects/Beta.md": 1}; !mapsEqual(got, want) {
		t.Errorf("Backlinks(Alpha.md) = %v, want %v", got, want)
	}
}

func TestReadNote(t *testing.T) {
	ix := openIndex(t, writeVault(t, graphVault), "")
	n, err := ix.ReadNote("[[projects/beta]]")
	if err != nil || n.Path != "projects/Beta.md" || n.Title != "Beta" || len(n.Links) != 2 {
		t.Fatalf("ReadNote = %+v, %v", n, err)
	}
	if _, err := ix.ReadNote("Gamma"); err == nil {
		t.Error("an ambiguous name was read")
	}
	if _, err := ix.ReadNote("../outside.md"); err == nil {
		t.Error("a path leaving the vault was read")
	}
	if _, err := ix.ReadNote("Nowhere"); err == nil {
		t.Error("an unknown note was read")
	}
}

// TestLinksOf: a note's links both ways, each target and heading once, in
// order, resolved or not, cut at the limit with the totals kept.
func TestLinksOf(t *testing.T) {
	ix := openLinkIndex(t, writeVault(t, map[string]string{
		"Transport.md": "# Transport\n\n[[TCP]], [[TCP]] again, [[TCP#Handshake]], [[QUIC]], ![[stack.png]]\n",
		"TCP notes.md": "More on [[TCP]].\n",
		"net/Tcp.md":   "# TCP\n\nBack to [[Transport]].\n",
	}), "")
	n, err := ix.ReadNote("Transport")
	if err != nil {
		t.Fatal(err)
	}
	l, err := LinksOf(context.Background(), ix, n, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []LinkOut{{Target: "TCP", Path: "net/Tcp.md"}, {Target: "TCP", Heading: "Handshake", Path: "net/Tcp.md"}, {Target: "QUIC"}, {Target: "stack.png", Embed: true}}
	if l.Path != "Transport.md" || l.OutgoingTotal != 4 || !slices.Equal(l.Outgoing, want) {
		t.Errorf("outgoing %+v (total %d), want %+v", l.Outgoing, l.OutgoingTotal, want)
	}
	if l.BacklinkTotal != 1 || len(l.Backlinks) != 1 || l.Backlinks[0].Path != "net/Tcp.md" {
		t.Errorf("backlinks %+v (total %d)", l.Backlinks, l.BacklinkTotal)
	}
	tcp, err := ix.ReadNote("TCP")
	if err != nil {
		t.Fatal(err)
	}
	if l, err := LinksOf(context.Background(), ix, tcp, 1); err != nil || l.BacklinkTotal != 2 || len(l.Backlinks) != 1 {
		t.Errorf("cut at 1: %+v, %v", l, err)
	}
}
