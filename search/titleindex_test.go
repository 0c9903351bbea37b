package search

import (
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"sort"
	"testing"
)

func TestTitleIndexAddRemove(t *testing.T) {
	x := newTitleIndex(0)
	check := func(key string, want ...string) {
		t.Helper()
		got := x.candidates(key)
		sort.Strings(got)
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s: %v, want %v", key, got, want)
		}
	}
	x.add([]string{"sync", "sync setup"}, "a/Sync.md")
	x.add([]string{"sync"}, "b/Sync.md")
	x.add([]string{"sync"}, "b/Sync.md") // again: held once
	x.add([]string{"page preview"}, "Page preview.md")
	check("sync", "a/Sync.md", "b/Sync.md")
	check("sync setup", "a/Sync.md")
	check("page preview", "Page preview.md")
	check("nothing")
	if len(x.one) != 2 || len(x.many) != 1 {
		t.Fatalf("one %v, many %v: want the keys of one note alone in one", x.one, x.many)
	}

	held := x.candidates("sync")
	x.remove([]string{"sync", "sync setup"}, "a/Sync.md")
	check("sync", "b/Sync.md")
	check("sync setup")
	if slices.Contains(held, "") || len(held) != 2 {
		t.Errorf("a list handed out before the removal changed: %v", held)
	}
	x.remove([]string{"sync"}, "c/Other.md") // not held: nothing happens
	check("sync", "b/Sync.md")
	x.remove([]string{"sync"}, "b/Sync.md")
	x.remove([]string{"page preview"}, "Page preview.md")
	if x.len() != 0 {
		t.Errorf("one %v, many %v after removing every note: want none", x.one, x.many)
	}
}

// TestTitleIndexSize bounds what the title index keeps a note: a hash and
// a path it shares with the notes' metadata. Keeping the keys themselves,
// or a list for each key, costs more than twice the bound.
func TestTitleIndexSize(t *testing.T) {
	const n = 50000
	keys := make([]string, n)
	paths := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("note number %d of the test vault", i)
		paths[i] = fmt.Sprintf("folder/Note number %d.md", i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := newTitleIndex(n)
	for i := range keys {
		x.add(keys[i:i+1], paths[i])
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perNote := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n
	runtime.KeepAlive(x)
	runtime.KeepAlive(keys) // counted in before: must not be freed by after
	t.Logf("%.1f bytes a note", perNote)
	if perNote > 48 {
		t.Errorf("the title index keeps %.1f bytes a note, want at most 48", perNote)
	}
	if x.len() != n {
		t.Errorf("%d keys held, want %d", x.len(), n)
	}
}

// TestExactTitlesCheckKeys checks that a note whose key only hashes as the
// query's does is not taken for an exact title.
func TestExactTitlesCheckKeys(t *testing.T) {
	dir := writeVault(t, map[string]string{
		"Kafka outbox.md": "# Kafka outbox\n\nThe worker.\n",
		"Other.md":        "---\naliases: [Something else]\n---\n# Other\n\nText.\n",
	})
	ix := openIndex(t, dir, "")
	key := titleKey(ix.textAn, "kafka outbox")
	if got := ix.exactTitles(key); !slices.Equal(got, []string{"Kafka outbox.md"}) {
		t.Fatalf("exact titles of %q: %v, want Kafka outbox.md", key, got)
	}
	if got := ix.exactTitles(titleKey(ix.textAn, "something else")); !slices.Equal(got, []string{"Other.md"}) {
		t.Errorf("exact titles of the alias: %v, want Other.md", got)
	}
	// A collision: Other.md filed under the hash of the query's key.
	ix.mu.Lock()
	h := maphash.String(ix.titleIdx.seed, key)
	ix.titleIdx.many[h] = []string{"Kafka outbox.md", "Other.md"}
	delete(ix.titleIdx.one, h)
	ix.mu.Unlock()
	if got := ix.exactTitles(key); !slices.Equal(got, []string{"Kafka outbox.md"}) {
		t.Errorf("exact titles of %q with Other.md hashing alike: %v, want Kafka outbox.md alone", key, got)
	}
}
