package search

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/vault"
)

func TestStateRoundTrip(t *testing.T) {
	meta := map[string]*NoteMeta{
		"a.md": {Path: "a.md", Title: "A", Aliases: []string{"x", "y"}, Tags: []string{"t/u"}, MTime: time.Unix(1, 5),
			Date: time.UnixMilli(1700000000000), Size: 42, Hash: "abc", hasLens: true, inHash: 7, outHash: 9,
			keys: packLinkKeys([]vault.LinkContext{{Target: "b"}, {Target: "c"}})},
		"gone.md": {Path: "gone.md", MTime: time.Unix(2, 0)},
	}
	meta["a.md"].lens[4] = 300
	pending := map[string]*NoteMeta{"gone.md": nil, "new.md": {Path: "new.md", Title: "New", MTime: time.Unix(3, 0)}}
	got, err := decodeState(encodeState(meta, pending))
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*NoteMeta{}
	for _, m := range got {
		byPath[m.Path] = m
	}
	if len(got) != 2 || byPath["gone.md"] != nil || byPath["new.md"] == nil {
		t.Fatalf("decoded %d notes: %v", len(got), byPath)
	}
	a := byPath["a.md"]
	want := meta["a.md"]
	if a.lens != want.lens || !a.hasLens || a.keys != want.keys || a.keys.count() != 2 || a.inHash != 7 || a.outHash != 9 ||
		!a.MTime.Equal(want.MTime) || !a.Date.Equal(want.Date) || a.Size != 42 || a.Hash != "abc" ||
		!reflect.DeepEqual(a.Aliases, want.Aliases) || !reflect.DeepEqual(a.Tags, want.Tags) || a.Title != "A" {
		t.Errorf("a.md = %+v, want %+v", a, want)
	}
	// A damaged record is an error, never a panic.
	b := encodeState(meta, nil)
	for i := range b {
		if _, err := decodeState(b[:i]); err == nil && i < len(b) {
			t.Errorf("truncated at %d of %d: no error", i, len(b))
		}
	}
	if _, err := decodeState([]byte(`[{"p":"x.md"}]`)); err == nil {
		t.Error("an old JSON state decoded")
	}
}

// TestStateSizedOnce checks that the state record is allocated at its
// final size (the bound is never short, so it never grows by doubling) and
// with little slack, for notes with extreme numbers and long strings.
func TestStateSizedOnce(t *testing.T) {
	meta := map[string]*NoteMeta{}
	for i := 0; i < 200; i++ {
		p := strings.Repeat("folder/", i%7) + "note " + itoa(i) + ".md"
		m := &NoteMeta{Path: p, Title: strings.Repeat("T", i), MTime: time.Unix(1<<40, -1), Date: time.UnixMilli(-1 << 50),
			Size: -1 << 62, Hash: strings.Repeat("f", 64), hasLens: true, inHash: ^uint64(0), outHash: 1}
		for j := range m.lens {
			m.lens[j] = 1<<31 - 1
		}
		var links []vault.LinkContext
		for j := 0; j < i%5; j++ {
			m.Aliases = append(m.Aliases, strings.Repeat("a", 200*j))
			m.Tags = append(m.Tags, "tag/"+itoa(j))
			links = append(links, vault.LinkContext{Target: "key " + itoa(j)})
		}
		m.keys = packLinkKeys(links)
		meta[p] = m
	}
	b := encodeState(meta, nil)
	bound := 16
	for _, m := range meta {
		bound += stateSizeBound(m)
	}
	if cap(b) != bound {
		t.Errorf("the record grew past its bound: cap %d, bound %d, len %d", cap(b), bound, len(b))
	}
	if slack := cap(b) - len(b); slack > 3*binary.MaxVarintLen64*len(meta) {
		t.Errorf("slack %d bytes for %d notes", slack, len(meta))
	}
}
