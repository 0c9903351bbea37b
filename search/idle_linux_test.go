package search

import (
	"context"
	"slices"
	"testing"

	"github.com/vault-agent/vault-agent/internal/memtrim"
)

// TestIdleReleasesSegmentPages checks that the idle release unmaps the
// pages the searches mapped from the segments, that it is the one the
// process runs when it goes idle (memtrim.OnIdle), and that the next
// search reads the segments as before.
func TestIdleReleasesSegmentPages(t *testing.T) {
	ix, resident := settledSegments(t)
	want := []string{"b.md", "a.md"}
	if got := paths(search(t, ix, Request{Query: "kestrel"})); !slices.Equal(got, want) {
		t.Fatalf("kestrel: %v, want %v", got, want)
	}
	if kb := resident(); kb == 0 {
		t.Fatal("no page of the segments resident after a search")
	}

	memtrim.RunIdleHooks()
	if kb := resident(); kb != 0 {
		t.Errorf("%d kB of the segments resident after the idle release, want 0", kb)
	}
	if got := paths(search(t, ix, Request{Query: "kestrel"})); !slices.Equal(got, want) {
		t.Fatalf("kestrel after the release: %v, want %v", got, want)
	}
	if kb := resident(); kb == 0 {
		t.Error("the search after the release mapped no page of the segments")
	}
}

// settledSegments opens an index on disk of three notes (kestrel finds b.md
// then a.md, merlin b.md then c.md) with no merge or persisting left, and
// returns it with a func that reads the resident kilobytes of its
// segments' mappings (once a search has mapped them).
func settledSegments(t *testing.T) (*Index, func() int) {
	t.Helper()
	dir := writeVault(t, map[string]string{
		"a.md": "# Alpha\nkestrel notes about falcons\n",
		"b.md": "# Beta\nkestrel and merlin\n",
		"c.md": "# Gamma\nmerlin alone\n",
	})
	idxDir := resolvedIndexDir(t)
	ix := openIndex(t, dir, idxDir)
	ix.writeMu.Lock()
	ix.waitSettled(context.Background())
	ix.writeMu.Unlock()
	segs := snapshotSegments(t, ix)
	if len(segs) == 0 {
		t.Fatal("no segment in the index")
	}
	return ix, func() int {
		t.Helper()
		n := 0
		res := zapMappings(t, idxDir)
		for _, s := range segs {
			m, mapped := res[s]
			if !mapped {
				t.Fatalf("segment %s not mapped (mapped: %v)", s, res)
			}
			n += m.rssKB
		}
		return n
	}
}
