package search

import (
	"reflect"
	"testing"
	"time"

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
		// A damaged record is an error, never a panic.
		for i := range b {
			if _, err := decodeNoteRecord(want.Path, b[:i]); err == nil {
				t.Errorf("%s truncated at %d of %d: no error", want.Path, i, len(b))
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
