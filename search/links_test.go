package search

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/vault"
)

// linkVault has notes that describe others through their links.
var linkVault = map[string]string{
	"plugins/Page preview.md": "# Page preview\nShows a popover of the linked note.\n",
	"Plugin list.md": joinLines("# Core plugins",
		"- [[Page preview]] - hover over a link to glimpse the note",
		"- [[Sync|keep devices in step]] costs money"),
	"core/Sync.md":        "# Sync\nEnd-to-end encrypted.\n",
	"other/Sync.md":       "# Sync\nAnother note named Sync.\n",
	"daily/2026-01-01.md": "Tried [[Page preview#Settings|the quicklook thing]] today. Unrelated sentence about gardening.\n",
	"docs/Guide.md":       "Read [the setup walkthrough](../core/Sync.md) first.\n```\n[[Page preview]] in code: ignored codeword\n```\n",
	"Embedder.md":         "Look: ![[Page preview]] embedded with zebrafish.\n",
}

// linkFields are the fields the link context fills.
var linkFields = []string{fAnchor, fLinkText}

// fieldPostings returns, for each term of field, the documents holding it
// with their term frequency: the field's whole inverted index.
func fieldPostings(t *testing.T, ix *Index, field string) map[string]map[string]uint64 {
	t.Helper()
	ix.idxMu.RLock()
	defer ix.idxMu.RUnlock()
	r := indexReader(t, ix)
	defer r.Close()
	dict, err := r.FieldDict(field)
	if err != nil {
		t.Fatal(err)
	}
	defer dict.Close()
	out := map[string]map[string]uint64{}
	for {
		de, err := dict.Next()
		if err != nil {
			t.Fatal(err)
		}
		if de == nil {
			break
		}
		tfr, err := r.TermFieldReader(context.Background(), []byte(de.Term), field, true, false, false)
		if err != nil {
			t.Fatal(err)
		}
		for {
			d, err := tfr.Next(nil)
			if err != nil {
				t.Fatal(err)
			}
			if d == nil {
				break
			}
			id, err := r.ExternalID(d.ID)
			if err != nil {
				t.Fatal(err)
			}
			if out[de.Term] == nil {
				out[de.Term] = map[string]uint64{}
			}
			out[de.Term][id] = d.Freq
		}
		tfr.Close()
	}
	return out
}

// assertLinksAsFresh checks that the link fields of ix hold exactly what a
// fresh index over dir holds, posting by posting, and that the notes carry
// the same inbound hashes; then runs the usual fresh-index comparison.
func assertLinksAsFresh(t *testing.T, ix *Index, dir string, extra ...string) {
	t.Helper()
	fresh := openIndex(t, dir, "")
	for _, f := range linkFields {
		got, want := fieldPostings(t, ix, f), fieldPostings(t, fresh, f)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("field %s differs from a fresh index:\n got %v\nwant %v", f, got, want)
		}
	}
	for _, p := range fresh.Paths() {
		a, b := ix.metaOf(p), fresh.metaOf(p)
		if keys := noteLinkKeys(ix, p); a == nil || a.inHash != b.inHash || keys != fresh.memKeys[p] {
			t.Errorf("link data of %s: got %+v with keys %q, fresh %+v", p, a, keys, b)
		}
	}
	assertSameAsFresh(t, ix, dir, extra...)
}

// linkedBy returns the notes recorded as linking to p's name.
func linkedBy(t *testing.T, ix *Index, p string) []string {
	t.Helper()
	k := vault.NoteKey(p)
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	return ix.linkersOf(map[string]bool{k: true})[k]
}

// noteLinkKeys returns the link keys of the note at p, where the index
// keeps them.
func noteLinkKeys(ix *Index, p string) linkKeys {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	return ix.linkKeysOf([]string{p})[p]
}

// finds reports whether a search for q lists p.
func finds(t *testing.T, ix *Index, q, p string) bool {
	t.Helper()
	for _, r := range search(t, ix, Request{Query: q, Limit: 100}).Results {
		if r.Path == p {
			return true
		}
	}
	return false
}

func TestLinkContextIndexed(t *testing.T) {
	ix := openIndex(t, writeVault(t, linkVault), "")
	tests := []struct {
		query string
		note  string
		found bool
		why   string
	}{
		{"glimpse", "plugins/Page preview.md", true, "the list item around a link describes the note in words it never uses"},
		{"quicklook", "plugins/Page preview.md", true, "the alias of a link to a heading of the note"},
		{"walkthrough", "core/Sync.md", true, "the text of a relative markdown link"},
		{"devices", "core/Sync.md", true, "[[Sync]] from the vault root resolves to the Sync nearest the root, then the first by path"},
		{"devices", "other/Sync.md", false, "a link resolves to one note only"},
		{"zebrafish", "plugins/Page preview.md", true, "the sentence around an embed"},
		{"codeword", "plugins/Page preview.md", false, "a link in a code block is no link"},
		{"gardening", "plugins/Page preview.md", false, "another sentence of the linking paragraph is not the link's context"},
	}
	for _, tt := range tests {
		if got := finds(t, ix, tt.query, tt.note); got != tt.found {
			t.Errorf("%q finds %s = %v, want %v: %s", tt.query, tt.note, got, tt.found, tt.why)
		}
	}
	if got, want := linkedBy(t, ix, "plugins/Page preview.md"), []string{"Embedder.md", "Plugin list.md", "daily/2026-01-01.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("linked by %v, want %v", got, want)
	}
}

// Editing, renaming and deleting linking notes, and creating, renaming
// and deleting linked ones, keep the link context exact: after each step
// the index equals a fresh scan, field by field.
func TestLinkContextIncremental(t *testing.T) {
	for _, disk := range []bool{false, true} {
		t.Run(fmt.Sprintf("disk=%v", disk), func(t *testing.T) {
			dir := writeVault(t, linkVault)
			path := ""
			if disk {
				path = filepath.Join(t.TempDir(), "idx")
			}
			ix, _ := openDisk(t, dir, path)
			apply := func(changes ...vault.Change) {
				t.Helper()
				if err := ix.Apply(context.Background(), vault.Batch{Changes: changes}); err != nil {
					t.Fatal(err)
				}
			}
			// found checks whether q finds p, which holds none of q's
			// words itself: only a link's context can make it match.
			found := func(q, p string, want bool) {
				t.Helper()
				if got := finds(t, ix, q, p); got != want {
					t.Errorf("%q finds %s = %v, want %v", q, p, got, want)
				}
			}
			rm := func(p string) {
				t.Helper()
				if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
					t.Fatal(err)
				}
			}
			mv := func(from, to string) {
				t.Helper()
				abs := filepath.Join(dir, filepath.FromSlash(to))
				if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(filepath.Join(dir, filepath.FromSlash(from)), abs); err != nil {
					t.Fatal(err)
				}
			}
			assertLinksAsFresh(t, ix, dir)

			// Edit a linking note: its old words leave the target, new ones arrive.
			writeFile(t, dir, "Plugin list.md", "- [[Page preview]] - a floating card over links\n- [[Sync|keep devices in step]]\n")
			apply(vault.Change{Path: "Plugin list.md"})
			found("floating", "plugins/Page preview.md", true)
			found("glimpse", "plugins/Page preview.md", false)
			assertLinksAsFresh(t, ix, dir, "floating", "glimpse")

			// Edit a linked note without touching links: it keeps the
			// context others give it.
			writeFile(t, dir, "plugins/Page preview.md", "# Page preview\nShows a popover of the linked note. Edited.\n")
			apply(vault.Change{Path: "plugins/Page preview.md"})
			found("floating", "plugins/Page preview.md", true)
			found("quicklook", "plugins/Page preview.md", true)
			// Edit a linking note away from its links: nothing changes
			// for the note it links to.
			writeFile(t, dir, "daily/2026-01-01.md", "Tried [[Page preview#Settings|the quicklook thing]] today. Unrelated sentence about roses.\n")
			apply(vault.Change{Path: "daily/2026-01-01.md"})
			found("quicklook", "plugins/Page preview.md", true)
			assertLinksAsFresh(t, ix, dir, "floating", "quicklook", "roses")

			// Edit a linking note so it no longer links to the target at all.
			writeFile(t, dir, "daily/2026-01-01.md", "Tried nothing today.\n")
			apply(vault.Change{Path: "daily/2026-01-01.md"})
			found("quicklook", "plugins/Page preview.md", false)
			assertLinksAsFresh(t, ix, dir, "quicklook")

			// Rename a linking note (delete + create).
			mv("Plugin list.md", "lists/Plugin list.md")
			apply(vault.Change{Path: "Plugin list.md", Removed: true}, vault.Change{Path: "lists/Plugin list.md"})
			found("floating", "plugins/Page preview.md", true)
			assertLinksAsFresh(t, ix, dir, "floating")

			// A new note with a shared name takes over links by that name
			// from notes in its folder.
			writeFile(t, dir, "lists/Sync.md", "# Sync\nThe list's own sync note.\n")
			apply(vault.Change{Path: "lists/Sync.md"})
			found("devices", "lists/Sync.md", true)
			found("devices", "core/Sync.md", false)
			assertLinksAsFresh(t, ix, dir, "devices")

			// ...and gives them back when it is deleted.
			rm("lists/Sync.md")
			apply(vault.Change{Path: "lists/Sync.md", Removed: true})
			found("devices", "core/Sync.md", true)
			assertLinksAsFresh(t, ix, dir, "devices")

			// Rename a linked note: links by the old name dangle, the new
			// name has no inbound context until a linker is updated.
			mv("plugins/Page preview.md", "plugins/Hover card.md")
			apply(vault.Change{Path: "plugins/Page preview.md", Removed: true}, vault.Change{Path: "plugins/Hover card.md"})
			found("floating", "plugins/Hover card.md", false)
			assertLinksAsFresh(t, ix, dir, "floating")
			writeFile(t, dir, "lists/Plugin list.md", "- [[Hover card]] - a floating card over links\n")
			apply(vault.Change{Path: "lists/Plugin list.md"})
			found("floating", "plugins/Hover card.md", true)
			assertLinksAsFresh(t, ix, dir, "floating")

			// Recreate a note under the old name: dangling links resolve again.
			writeFile(t, dir, "plugins/Page preview.md", "# Page preview\nBack again.\n")
			apply(vault.Change{Path: "plugins/Page preview.md"})
			found("zebrafish", "plugins/Page preview.md", true)
			assertLinksAsFresh(t, ix, dir, "zebrafish")

			// Delete a linking note, then a linked one.
			rm("lists/Plugin list.md")
			apply(vault.Change{Path: "lists/Plugin list.md", Removed: true})
			found("floating", "plugins/Hover card.md", false)
			rm("core/Sync.md")
			apply(vault.Change{Path: "core/Sync.md", Removed: true})
			found("walkthrough", "core/Sync.md", false)
			assertLinksAsFresh(t, ix, dir, "floating", "walkthrough")

			// The same after a sync of changes made while nothing watched.
			writeFile(t, dir, "docs/Guide.md", "See [[Page preview|the peek window]].\n")
			writeFile(t, dir, "Sync.md", "# Sync\nroot sync\n")
			rm("Embedder.md")
			if _, err := ix.Sync(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			found("peek", "plugins/Page preview.md", true)
			found("zebrafish", "plugins/Page preview.md", false)
			assertLinksAsFresh(t, ix, dir, "peek", "zebrafish")
		})
	}
}

// The same through the live watcher: after the disk goes quiet, the link
// fields equal a fresh scan.
func TestLinkContextWatcher(t *testing.T) {
	dir := writeVault(t, linkVault)
	ix, err := Open(context.Background(), Options{Vault: openVault(t, dir), Logger: testLogger(t), Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, unsub := ix.Subscribe()
	defer unsub()
	if err := ix.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
	later := func(p string) {
		t.Helper()
		ts := time.Now().Add(time.Minute)
		if err := os.Chtimes(abs(p), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name  string
		do    func()
		query string
		note  string
		found bool
	}{
		{"edit a linking note", func() {
			writeFile(t, dir, "Plugin list.md", "- [[Page preview]] - a floating card over links\n")
			later("Plugin list.md")
		}, "floating", "plugins/Page preview.md", true},
		{"edit the linked note, links unchanged", func() {
			writeFile(t, dir, "plugins/Page preview.md", "# Page preview\nEdited while watched.\n")
			later("plugins/Page preview.md")
		}, "floating", "plugins/Page preview.md", true},
		{"create a linking note", func() {
			writeFile(t, dir, "new/Links.md", "Compare [[Sync|the paid backup]] with git.\n")
		}, "backup", "core/Sync.md", true},
		{"rename a linking note", func() {
			if err := os.Rename(abs("new/Links.md"), abs("new/Renamed links.md")); err != nil {
				t.Fatal(err)
			}
		}, "backup", "core/Sync.md", true},
		{"create a note sharing a linked name", func() {
			writeFile(t, dir, "new/Sync.md", "# Sync\nnew folder's own\n")
		}, "backup", "new/Sync.md", true},
		{"rename the linked note", func() {
			if err := os.Rename(abs("plugins/Page preview.md"), abs("plugins/Preview.md")); err != nil {
				t.Fatal(err)
			}
		}, "floating", "plugins/Preview.md", false},
		{"delete a linking note", func() {
			if err := os.Remove(abs("new/Renamed links.md")); err != nil {
				t.Fatal(err)
			}
		}, "backup", "new/Sync.md", false},
		{"delete a linked note", func() {
			if err := os.Remove(abs("core/Sync.md")); err != nil {
				t.Fatal(err)
			}
		}, "walkthrough", "core/Sync.md", false},
	}
	for _, st := range steps {
		st.do()
		waitFor(t, ix, ch, 10*time.Second, st.name, func() bool { return diskMatches(t, ix) })
		if got := finds(t, ix, st.query, st.note); got != st.found {
			t.Errorf("%s: %q finds %s = %v, want %v", st.name, st.query, st.note, got, st.found)
		}
		assertLinksAsFresh(t, ix, dir, st.query)
		if t.Failed() {
			t.Fatalf("after %s", st.name)
		}
	}
}

// TestLinkKeysPacked checks the packed link keys of a note: unique,
// sorted, each key as vault.LinkKey gives it (long keys and bytes the
// packing uses included), and the same after the note's record.
func TestLinkKeysPacked(t *testing.T) {
	long := strings.Repeat("λ", 200) // a length that takes two bytes
	src := "[[Target]] and [[Other]] and [[target]] and [[" + long + "]] and [[a\x00b]] and [[\x05]]"
	lcs := vault.LinkContexts("a.md", []byte(src))
	var want []string
	for _, lc := range lcs {
		if k := vault.LinkKey(lc.Target); k != "" && !slices.Contains(want, k) {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	keys := packLinkKeys(lcs)
	if got := slices.Collect(keys.all()); !reflect.DeepEqual(got, want) || keys.count() != len(want) || len(want) != 5 {
		t.Fatalf("keys %q (count %d), want %q", got, keys.count(), want)
	}
	// The record keeps the layout of a list of strings.
	if got, old := string(binary.AppendUvarint(nil, uint64(len(want))))+string(keys), string(appendStrs(nil, want)); got != old {
		t.Errorf("record layout of the keys %q, want %q", got, old)
	}
	m := &NoteMeta{Path: "a.md", MTime: time.Unix(1, 0), keys: keys}
	got, err := decodeNoteRecord("a.md", appendNoteRecord(nil, m))
	if err != nil || got.keys != keys {
		t.Fatalf("after the record: %v %+v", err, got)
	}
	if packLinkKeys(nil) != "" || slices.Collect(linkKeys("\xff").all()) != nil {
		t.Error("no links, or a damaged list, must have no keys")
	}
}

// TestLinkKeysLeftInStore checks that an index on disk keeps the link keys
// of its notes in the note store only, not with their metadata in memory,
// after a first index, a change and a reopen, and that the store holds
// each note's keys as a fresh index computes them.
func TestLinkKeysLeftInStore(t *testing.T) {
	dir := writeVault(t, linkVault)
	idxPath := filepath.Join(t.TempDir(), "idx")
	check := func(ix *Index, when string) {
		t.Helper()
		fresh := openIndex(t, dir, "")
		withKeys := 0
		for _, p := range fresh.Paths() {
			want := fresh.memKeys[p]
			if want != "" {
				withKeys++
			}
			if m, keys := ix.metaOf(p), ix.memKeys[p]; m == nil || keys != "" {
				t.Errorf("%s: %s kept in memory as %+v with link keys %q, want none", when, p, m, keys)
			}
			if got := noteLinkKeys(ix, p); got != want {
				t.Errorf("%s: link keys of %s %q, want %q", when, p, got, want)
			}
		}
		if withKeys == 0 {
			t.Fatal("no note of the vault links anywhere")
		}
	}
	ix, _ := openDisk(t, dir, idxPath)
	check(ix, "first index")
	writeFile(t, dir, "Plugin list.md", "- [[Sync]] and [[Page preview]]\n")
	if err := ix.Apply(context.Background(), vault.Batch{Changes: []vault.Change{{Path: "Plugin list.md"}}}); err != nil {
		t.Fatal(err)
	}
	check(ix, "after a change")
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, _ = openDisk(t, dir, idxPath)
	check(ix, "reopened")
}

// TestKeyIndexChanges checks the notes by name as notes come and go: a
// name several notes share kept in their order, and the same answers once
// the changes are folded into the sorted array (compact) as before.
func TestKeyIndexChanges(t *testing.T) {
	k := newKeyIndex([]string{"a/Sync.md", "b/Sync.md", "Page preview.md"})
	if len(k.base) != 3 || len(k.over) != 0 {
		t.Fatalf("base %v, over %v: want all three in base", k.base, k.over)
	}
	check := func(key string, want ...string) {
		t.Helper()
		if got := k.get(key); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", key, got, want)
		}
	}
	check("sync", "a/Sync.md", "b/Sync.md")
	check("page preview", "Page preview.md")
	check("nothing")
	if p, ok := k.resolve(vault.LinkContext{Target: "Page preview"}, "x.md"); !ok || p != "Page preview.md" {
		t.Errorf("[[Page preview]] resolves to %q, %v", p, ok)
	}
	if p, ok := k.resolve(vault.LinkContext{Target: "Sync"}, "b/x.md"); !ok || p != "b/Sync.md" {
		t.Errorf("[[Sync]] from b/ resolves to %q, %v", p, ok)
	}

	keysChanged(k, &noteRec{Path: "a/Sync.md"}, nil)
	check("sync", "b/Sync.md")
	keysChanged(k, nil, &noteRec{Path: "c/Page preview.md"})
	check("page preview", "Page preview.md", "c/Page preview.md")
	keysChanged(k, nil, &noteRec{Path: "New.md"})
	check("new", "New.md")
	keysChanged(k, &noteRec{Path: "b/Sync.md"}, nil)
	check("sync")
	for _, compacted := range []bool{false, true} {
		if compacted {
			k.compact()
			if len(k.over) != 0 || len(k.base) != 3 || cap(k.base) != 3 {
				t.Errorf("after compact: base %v (cap %d), over %v", k.base, cap(k.base), k.over)
			}
		}
		check("sync")
		check("page preview", "Page preview.md", "c/Page preview.md")
		check("new", "New.md")
	}
}

// TestKeyIndexCompacts checks that the changes are folded into the sorted
// array as they grow, every name answered as before.
func TestKeyIndexCompacts(t *testing.T) {
	ps := benchPaths(1000)
	k := newKeyIndex(ps[:500])
	for _, p := range ps[500:] {
		keysChanged(k, nil, &noteRec{Path: p})
	}
	for _, p := range ps[:100] {
		keysChanged(k, &noteRec{Path: p}, nil)
	}
	if len(k.over) > 64+len(k.base)/8 || len(k.base) < 500 {
		t.Errorf("base %d, over %d: want the changes folded in", len(k.base), len(k.over))
	}
	want := newKeyIndex(ps[100:])
	for _, p := range ps {
		key := vault.NoteKey(p)
		if got, w := k.get(key), want.get(key); !slices.Equal(got, w) {
			t.Errorf("%s: %v, want %v", key, got, w)
		}
	}
}

// TestKeyIndexCollision checks that notes filed under the hash of another
// key (a collision) are not taken for that key's notes, and stay filed
// when that key's notes change.
func TestKeyIndexCollision(t *testing.T) {
	k := newKeyIndex([]string{"a/Sync.md", "Page preview.md"})
	collide := func(key, p string) {
		h := hash32(k.seed, key)
		k.over[h] = append(slices.Clone(k.at(h, nil)), p)
	}
	collide("sync", "z/Other.md")
	collide("nothing", "z/Stray.md")
	for _, compacted := range []bool{false, true} {
		if compacted {
			k.compact()
		}
		if got := k.get("sync"); !slices.Equal(got, []string{"a/Sync.md"}) {
			t.Errorf("sync: %v, want a/Sync.md alone", got)
		}
		if got := k.get("nothing"); len(got) != 0 {
			t.Errorf("nothing: %v, want none", got)
		}
		if p, ok := k.resolve(vault.LinkContext{Target: "nothing"}, "x.md"); ok {
			t.Errorf("[[nothing]] resolves to %q", p)
		}
		if p, ok := k.resolve(vault.LinkContext{Target: "Sync"}, "x.md"); !ok || p != "a/Sync.md" {
			t.Errorf("[[Sync]] resolves to %q, %v", p, ok)
		}
	}
	keysChanged(k, nil, &noteRec{Path: "b/Sync.md"})
	if got := k.get("sync"); !slices.Equal(got, []string{"a/Sync.md", "b/Sync.md"}) {
		t.Errorf("sync after b/Sync.md came: %v", got)
	}
	keysChanged(k, &noteRec{Path: "a/Sync.md"}, nil)
	keysChanged(k, &noteRec{Path: "b/Sync.md"}, nil)
	if got := k.get("sync"); len(got) != 0 {
		t.Errorf("sync after both went: %v", got)
	}
	if got := k.at(hash32(k.seed, "sync"), nil); !slices.Equal(got, []string{"z/Other.md"}) {
		t.Errorf("the notes under sync's hash: %q, want z/Other.md kept", got)
	}
}

// TestKeyIndexSize bounds what the notes by name keep a note: a hash and a
// path shared with the notes' metadata. Keeping each note's key as a
// string costs about twice the bound.
func TestKeyIndexSize(t *testing.T) {
	const n = 50000
	ps := benchPaths(n)
	var k *keyIndex
	checkHeapPerItem(t, "the notes by name", n, 18, ps, func() any { k = newKeyIndex(ps); return k })
	if got := k.get("some note name 7"); !slices.Equal(got, []string{"Folder 7/Some Note Name 7.md"}) {
		t.Errorf("some note name 7: %v", got)
	}
}
