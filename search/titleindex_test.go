package search

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"testing"
	"unsafe"
)

func TestTitleIndexAddRemove(t *testing.T) {
	x := newTitleIndex()
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
	if x.len() != 3 {
		t.Fatalf("%d keys held, want 3", x.len())
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
		t.Errorf("base %v, over %v after removing every note: want none", x.base, x.over)
	}
}

// TestTitleIndexSize bounds what the title index keeps a note: a hash and
// a path it shares with the notes' metadata, in an array of their exact
// size when filled in one go (as the tables are built), with room for the
// changes not yet folded into it when notes come one by one. Keeping the
// keys themselves, or a list for each key, costs more than twice the
// bound.
func TestTitleIndexSize(t *testing.T) {
	const n = 50000
	keys := make([]string, n)
	paths := benchPaths(n)
	for i := range keys {
		keys[i] = fmt.Sprintf("note number %d of the test vault", i)
	}
	for _, tc := range []struct {
		name   string
		most   float64
		filled bool
	}{{"filled", 18, true}, {"added", 28, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var x *titleIndex
			checkHeapPerItem(t, "the title index", n, tc.most, [][]string{keys, paths}, func() any {
				x = newTitleIndex()
				if tc.filled {
					entries := make([]hashEntry, 0, n)
					for i := range keys {
						entries = append(entries, entryOf(x.hashes(keys[i : i+1])[0], paths[i]))
					}
					x.fill(entries)
					return x
				}
				for i := range keys {
					x.add(keys[i:i+1], paths[i])
				}
				return x
			})
			// Two keys of 50,000 may share a 32-bit hash: each key's
			// note must be among its candidates, and few others.
			others := 0
			for i, key := range keys {
				c := x.candidates(key)
				if !slices.Contains(c, paths[i]) {
					t.Fatalf("%s: candidates %v, want %s among them", key, c, paths[i])
				}
				others += len(c) - 1
			}
			if others > 10 {
				t.Errorf("%d candidates of other keys for %d keys", others, n)
			}
		})
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
	h := hash32(ix.titleIdx.seed, key)
	ix.titleIdx.put(h, []string{"Kafka outbox.md", "Other.md"})
	ix.mu.Unlock()
	if got := ix.exactTitles(key); !slices.Equal(got, []string{"Kafka outbox.md"}) {
		t.Errorf("exact titles of %q with Other.md hashing alike: %v, want Kafka outbox.md alone", key, got)
	}
}

// TestTitleIndexFill checks that an index filled in one go holds what one
// filled note by note does, in an array of its exact size, and that a list
// handed out is not changed by an add.
func TestTitleIndexFill(t *testing.T) {
	notes := map[string][]string{
		"a.md": {"alpha", "mutex"},
		"b.md": {"beta", "mutex"},
		"c.md": {"gamma", "mutex"},
		"d.md": {"delta", "shared name"},
		"e.md": {"shared name"},
	}
	one, filled := newTitleIndex(), newTitleIndex()
	filled.seed = one.seed
	var entries []hashEntry
	for p, keys := range notes {
		one.add(keys, p)
		for _, h := range filled.hashes(keys) {
			entries = append(entries, entryOf(h, p))
		}
	}
	filled.fill(entries)
	for _, key := range []string{"alpha", "beta", "gamma", "delta", "mutex", "shared name", "nothing"} {
		a, b := one.candidates(key), filled.candidates(key)
		sort.Strings(a)
		sort.Strings(b)
		if !slices.Equal(a, b) {
			t.Errorf("%s: filled %v, added one by one %v", key, b, a)
		}
	}
	if filled.len() != 6 || len(filled.base) != 9 || cap(filled.base) != 9 || len(filled.over) != 0 {
		t.Errorf("base %v (cap %d), over %v: want 6 keys of 9 notes in the array", filled.base, cap(filled.base), filled.over)
	}
	mutex := filled.candidates("mutex")
	filled.add([]string{"mutex"}, "f.md")
	if got := filled.candidates("shared name"); len(got) != 2 {
		t.Errorf("adding to mutex changed shared name: %v", got)
	}
	if got := filled.candidates("mutex"); len(got) != 4 || len(mutex) != 3 {
		t.Errorf("mutex after an add: %v (before: %v)", got, mutex)
	}
}

// TestTitleWordsShareBlocks checks that the words of a title table built
// in one go are copied into shared blocks, not allocated one by one, and
// stay there when other notes count them again ("beta", "delta").
func TestTitleWordsShareBlocks(t *testing.T) {
	ix := openIndex(t, writeVault(t, map[string]string{
		"Alpha beta.md": "x", "Gamma delta.md": "y", "Epsilon.md": "z", "Beta delta.md": "w",
	}), "")
	ix.buildTitles()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var lo, hi uintptr
	n := 0
	for w := range ix.titleVocab.all() {
		p := uintptr(unsafe.Pointer(unsafe.StringData(w)))
		if n == 0 || p < lo {
			lo = p
		}
		if n == 0 || p+uintptr(len(w)) > hi {
			hi = p + uintptr(len(w))
		}
		n++
	}
	if n != 5 || hi-lo > 64 {
		t.Errorf("%d words spread over %d bytes, want 5 side by side", n, hi-lo)
	}
}

// TestWordCounts checks the counts of title words through adds and
// removes: a word no note holds is gone, and its place is used again.
func TestWordCounts(t *testing.T) {
	type step struct {
		w string
		d int
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  map[string]int
	}{
		{"counted", []step{{"go", 1}, {"go", 1}, {"rust", 1}}, map[string]int{"go": 2, "rust": 1}},
		{"uncounted", []step{{"go", 1}, {"go", 1}, {"go", -1}}, map[string]int{"go": 1}},
		{"gone", []step{{"go", 1}, {"go", -1}}, map[string]int{}},
		{"unknown uncounted", []step{{"go", -1}, {"rust", 1}}, map[string]int{"rust": 1}},
		{"place reused", []step{{"go", 1}, {"go", -1}, {"rust", 1}, {"zig", 1}, {"rust", 1}}, map[string]int{"rust": 2, "zig": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newWordCounts()
			words := &strArena{}
			for _, s := range tc.steps {
				v.add(s.w, s.d, words)
			}
			got := maps.Collect(v.all())
			if !maps.Equal(got, tc.want) {
				t.Errorf("all: %v, want %v", got, tc.want)
			}
			for w, n := range tc.want {
				if c := v.count(w); c != n {
					t.Errorf("count(%q) = %d, want %d", w, c, n)
				}
			}
			if c := v.count("absent"); c != 0 {
				t.Errorf("count(absent) = %d", c)
			}
			if len(v.n) > 2 {
				t.Errorf("%d places for at most 2 words", len(v.n))
			}
		})
	}
	var none *wordCounts
	if none.count("go") != 0 || len(maps.Collect(none.all())) != 0 {
		t.Error("a nil table holds words")
	}
}

// len returns the number of hashes notes are filed under (for tests:
// the index itself never needs it).
func (t *hashedNotes) len() int {
	n := 0
	for i, e := range t.base {
		if _, ok := t.over[e.h]; !ok && (i == 0 || t.base[i-1].h != e.h) {
			n++
		}
	}
	for _, ps := range t.over {
		if len(ps) > 0 {
			n++
		}
	}
	return n
}

// TestLiteralTitleFirst checks that of the notes whose title is the query
// once stemmed, the one whose title is the query as typed comes first,
// though the other says the word more often.
func TestLiteralTitleFirst(t *testing.T) {
	dir := writeVault(t, map[string]string{
		"css/Modal.md":   "# Modal\n\nThe modal's variables: modal width, modal height, modal background, modal border.\n",
		"ui/Modals.md":   "# Modals\n\nA modal asks the user for input.\n",
		"ui/Dialogs.md":  "---\naliases: [Pop-up windows]\n---\n# Dialogs\n\nA window asks the user for input, a pop-up window.\n",
		"css/Windows.md": "# Windows\n\nThe window's variables: pop-up window width, pop-up window height, window border.\n",
	})
	ix := openIndex(t, dir, "")
	for _, tt := range []struct{ query, first string }{
		{"modals", "ui/Modals.md"},
		{"Modals?", "ui/Modals.md"},
		{"modal", "css/Modal.md"},
		{"pop-up windows", "ui/Dialogs.md"},
	} {
		got := paths(search(t, ix, Request{Query: tt.query, Limit: 5}))
		if len(got) == 0 || got[0] != tt.first {
			t.Errorf("%q: %v, want %s first", tt.query, got, tt.first)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"  Status   Bar ", "status bar"},
		{"Modals?", "modals"},
		{"(constructor)", "constructor"},
		{"pop-up windows", "pop-up windows"},
		{"?!", ""},
	} {
		if got := literalKey(tt.in); got != tt.want {
			t.Errorf("literalKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
