package search

import (
	"slices"
	"testing"
)

// TestSearchesReleaseSegmentPagesPastBudget checks that a search that
// finds the file-backed resident memory grown past the budget unmaps the
// segments' pages, that one within the budget leaves them, and that the
// searches after a release answer as before.
func TestSearchesReleaseSegmentPagesPastBudget(t *testing.T) {
	ix, resident := settledSegments(t)
	want := map[string][]string{"kestrel": {"b.md", "a.md"}, "merlin": {"b.md", "c.md"}}
	check := func(q string) {
		t.Helper()
		if got := paths(search(t, ix, Request{Query: q})); !slices.Equal(got, want[q]) {
			t.Fatalf("%s: %v, want %v", q, got, want[q])
		}
	}

	// Within the budget, the pages stay.
	check("kestrel")
	if kb := resident(); kb == 0 {
		t.Fatal("no page of the segments resident after a search within the budget")
	}
	if n := ix.pages.releases.Load(); n != 0 {
		t.Fatalf("%d releases within the budget, want 0", n)
	}

	// Past it (any page mapped since the last release), each search
	// releases them. Released first, so that the next search maps its
	// pages anew.
	old := segmentPageBudget
	segmentPageBudget = 0
	t.Cleanup(func() { segmentPageBudget = old })
	ix.releaseSegmentPages()
	if kb := resident(); kb != 0 {
		t.Fatalf("%d kB of the segments resident after a release, want 0", kb)
	}
	for i, q := range []string{"merlin", "kestrel", "merlin"} {
		check(q)
		if kb := resident(); kb != 0 {
			t.Errorf("search %d (%s): %d kB of the segments resident past the budget, want 0", i, q, kb)
		}
		if n := ix.pages.releases.Load(); n != int64(i+1) {
			t.Errorf("search %d (%s): %d releases, want %d", i, q, n, i+1)
		}
	}
}
