package search

import (
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/vault-agent/vault-agent/vault"
)

func TestNoteRecordRoundTrip(t *testing.T) {
	a := &NoteMeta{Path: "a.md", Title: "A", Aliases: []string{"x", "y"}, Tags: []string{"t/u"}, MTime: time.Unix(1, 5),
		Date: time.UnixMilli(1700000000000), Size: 42, Hash: "abc", hasLens: true, inHash: 7, outHash: 9,
		keys: packLinkKeys([]vault.LinkContext{{Target: "b"}, {Target: "c"}})}
	a.lens[4] = 300
	bare := &NoteMeta{Path: "bare.md", MTime: time.Unix(2, 0)}
	for _, want := range []*NoteMeta{a, bare} {
		b := appendNoteRecord(nil, want)
		got, err := decodeNoteRecord(want.Path, b)
		if err != nil {
			t.Fatal(err)
		}
		if !sameMeta(*got, *want) || got.keys.count() != want.keys.count() {
			t.Errorf("%s = %+v, want %+v", want.Path, got, want)
		}
		// The link keys read alone, and a record read without them.
		if keys, err := recordLinkKeys(b); err != nil || linkKeys(keys) != want.keys {
			t.Errorf("%s: link keys %q (%v), want %q", want.Path, keys, err, want.keys)
		}
		// As the store's load reads it: into the record kept in memory,
		// its strings in an arena, without link keys.
		rec, err := decodeNoteRec(want.Path, b, newTagInterner(), &strArena{})
		if err != nil {
			t.Fatal(err)
		}
		bareWant := *want
		bareWant.keys = ""
		if noKeys := rec.meta(); !sameMeta(noKeys, bareWant) {
			t.Errorf("%s without keys = %+v, want %+v", want.Path, noKeys, bareWant)
		}
		// A damaged record is an error, never a panic.
		for i := range b {
			if _, err := decodeNoteRecord(want.Path, b[:i]); err == nil {
				t.Errorf("%s truncated at %d of %d: no error", want.Path, i, len(b))
			}
			if _, err := decodeNoteRec(want.Path, b[:i], nil, nil); err == nil {
				t.Errorf("%s truncated at %d of %d, read without keys: no error", want.Path, i, len(b))
			}
			if _, err := decodeNoteRec(want.Path, b[:i], newTagInterner(), &strArena{}); err == nil {
				t.Errorf("%s truncated at %d of %d, its tags interned: no error", want.Path, i, len(b))
			}
			if _, err := recordLinkKeys(b[:i]); err == nil {
				t.Errorf("%s truncated at %d of %d, its keys read: no error", want.Path, i, len(b))
			}
		}
		if _, err := decodeNoteRecord(want.Path, append(b, 0)); err == nil {
			t.Errorf("%s with a byte more: no error", want.Path)
		}
	}
	if got, _ := decodeNoteRecord("a.md", appendNoteRecord(nil, a)); !reflect.DeepEqual(got.Aliases, a.Aliases) {
		t.Errorf("aliases %v", got.Aliases)
	}
}

// TestLoadedTagsShared checks that the notes loaded from the store share
// one copy of each tag and of each list of tags (one an append cannot
// write into), and keep their own tags and order.
func TestLoadedTagsShared(t *testing.T) {
	s, err := openNoteStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if err := s.start("id"); err != nil {
		t.Fatal(err)
	}
	recs := map[string]*NoteMeta{
		"a.md": {Path: "a.md", Tags: []string{"project/alpha", "idea"}, MTime: time.Unix(1, 0)},
		"b.md": {Path: "b.md", Tags: []string{"idea", "project/alpha"}, MTime: time.Unix(2, 0)},
		"c.md": {Path: "c.md", Tags: []string{"other"}, MTime: time.Unix(3, 0)},
		"d.md": {Path: "d.md", Tags: []string{"project/alpha", "idea"}, MTime: time.Unix(4, 0)},
		"e.md": {Path: "e.md", MTime: time.Unix(5, 0)},
	}
	if err := s.update(storeUpdate{done: []map[string]*NoteMeta{recs}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.load()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*noteRec{}
	for _, m := range st.notes {
		got[m.Path] = m
	}
	for p, want := range recs {
		if m := got[p]; m == nil || !reflect.DeepEqual(m.Tags(), want.Tags) {
			t.Fatalf("%s: tags %v, want %v", p, m, want.Tags)
		}
	}
	a, b := got["a.md"].Tags(), got["b.md"].Tags()
	if unsafe.StringData(a[0]) != unsafe.StringData(b[1]) || unsafe.StringData(a[1]) != unsafe.StringData(b[0]) {
		t.Error("the same tag of two notes is held twice")
	}
	la, lb, lc := got["a.md"].lists, got["b.md"].lists, got["c.md"].lists
	if la.tags == nil || la.nTags != 2 || lb.nTags != 2 || lc.nTags != 1 {
		t.Fatalf("tags held as %d, %d and %d numbers, want 2, 2 and 1", la.nTags, lb.nTags, lc.nTags)
	}
	ids := func(l *noteLists) []uint32 { return unsafe.Slice(l.tags, l.nTags) }
	if ia, ib := ids(la), ids(lb); ia[0] != ib[1] || ia[1] != ib[0] || ia[0] == ia[1] || ids(lc)[0] == ia[0] {
		t.Errorf("tags numbered %v, %v and %v: want the same tag under one number, others under others", ia, ib, ids(lc))
	}
	if d := got["d.md"].lists; d.tags != la.tags {
		t.Error("the same list of tags of two notes is held twice")
	}
	if a := got["a.md"].Tags(); unsafe.SliceData(a) == unsafe.SliceData(got["a.md"].Tags()) {
		t.Error("Tags hands out the same slice twice: a caller's change would reach the next")
	}
	if got["a.md"].lists != got["d.md"].lists || got["a.md"].lists == got["b.md"].lists {
		t.Error("two notes with the same tags alone do not share their lists, or two with other tags do")
	}
	if e := got["e.md"]; e.Tags() != nil || e.lists != nil {
		t.Errorf("a note without tags has %q (lists %v)", e.Tags(), e.lists)
	}
}
