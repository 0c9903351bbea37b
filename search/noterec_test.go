package search

import (
	"math"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/vault-agent/vault-agent/vault"
)

func TestNoteRecRoundTrip(t *testing.T) {
	hexHash := vault.Hash([]byte("some note"))
	base := NoteMeta{
		Path: "a/Note.md", Title: "Note", Aliases: []string{"N"}, Tags: []string{"x", "y/z"},
		MTime: time.Unix(1700000000, 123456789), Size: 42, Hash: hexHash,
		lens: [numLenFields]int32{1, 2, 3, 4, 5, 6, 7, 8}, hasLens: true, inHash: 7, outHash: 9,
	}
	for _, tt := range []struct {
		name   string
		change func(m *NoteMeta)
		packed bool // the hash is held as its bytes
		named  bool // the title is cut from the path
	}{
		{"hex hash", func(*NoteMeta) {}, true, true},
		{"upper-case hex", func(m *NoteMeta) { m.Hash = "AB" + hexHash[2:] }, false, true},
		{"short hash", func(m *NoteMeta) { m.Hash = "abc" }, false, true},
		{"64 non-hex", func(m *NoteMeta) { m.Hash = "zz" + hexHash[2:] }, false, true},
		{"no hash", func(m *NoteMeta) { m.Hash = "" }, false, true},
		{"local date", func(m *NoteMeta) { m.Date = time.Date(2024, 3, 5, 0, 0, 0, 0, time.Local) }, true, true},
		{"UTC date", func(m *NoteMeta) { m.Date = time.Date(2024, 3, 5, 10, 30, 0, 0, time.UTC) }, true, true},
		{"no lens", func(m *NoteMeta) { m.lens, m.hasLens = [numLenFields]int32{}, false }, true, true},
		{"no lists", func(m *NoteMeta) { m.Aliases, m.Tags = nil, nil }, true, true},
		{"no lists, another hash", func(m *NoteMeta) { m.Aliases, m.Tags, m.Hash = nil, nil, "h1" }, false, true},
		{"tags alone", func(m *NoteMeta) { m.Aliases = nil }, true, true},
		{"title of the file name", func(m *NoteMeta) { m.Title = "Note" }, true, true},
		{"file name in another case", func(m *NoteMeta) { m.Title = "note" }, true, false},
		{"title of a .MD file", func(m *NoteMeta) { m.Path, m.Title = "x/Y z.MD", "Y z" }, true, true},
		{"title of a path without .md", func(m *NoteMeta) { m.Path, m.Title = "x/Y z.txt", "Y z" }, true, false},
		{"no title", func(m *NoteMeta) { m.Title = "" }, true, false},
		{"no title, no name", func(m *NoteMeta) { m.Path, m.Title = "x/.md", "" }, true, true},
		{"size past 32 bits", func(m *NoteMeta) { m.Size = 1<<32 + 5 }, true, true},
		{"size at 32 bits", func(m *NoteMeta) { m.Size = 1<<32 - 1 }, true, true},
		{"length past 16 bits", func(m *NoteMeta) { m.lens[4] = 1 << 16 }, true, true},
		{"length at 16 bits", func(m *NoteMeta) { m.lens[7] = 1<<16 - 1 }, true, true},
		{"wide without lists", func(m *NoteMeta) { m.Aliases, m.Tags, m.lens[0] = nil, nil, 70000 }, true, true},
		{"wide, another hash", func(m *NoteMeta) { m.Hash, m.Size = "h1", 1<<40 }, false, true},
		{"wide without lens", func(m *NoteMeta) { m.lens, m.hasLens, m.Size = [numLenFields]int32{}, false, 1<<33 }, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := base
			tt.change(&m)
			r := recOf(&m)
			if r.is(hashHex) != tt.packed {
				t.Errorf("hash %q held packed %v, want %v", m.Hash, r.is(hashHex), tt.packed)
			}
			if r.is(named) != tt.named || (r.is(named) && r.title != "") {
				t.Errorf("title %q of %s held as %q, named %v; want named %v", m.Title, m.Path, r.title, r.is(named), tt.named)
			}
			narrow := m.Size <= math.MaxUint32
			for _, l := range m.lens {
				narrow = narrow && l <= math.MaxUint16
			}
			if r.is(wide) == narrow || narrow && r.lists != nil && r.lists.ext != nil && r.lists.ext.oddHash == "" {
				t.Errorf("size %d, lens %v held wide %v", m.Size, m.lens, r.is(wide))
			}
			if tt.packed && r.oddHash() != "" || !tt.packed && r.oddHash() != m.Hash {
				t.Errorf("hash %q held apart as %q", m.Hash, r.oddHash())
			}
			if (r.lists == nil) != (m.Aliases == nil && m.Tags == nil && r.oddHash() == "" && narrow) {
				t.Errorf("lists %+v for aliases %q, tags %q, hash %q", r.lists, m.Aliases, m.Tags, m.Hash)
			}
			got := r.meta()
			if !reflect.DeepEqual(got, m) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, m)
			}
			if !r.hashIs(m.Hash) {
				t.Errorf("hashIs(%q) false for its own hash", m.Hash)
			}
			for i := range len(m.Hash) { // each digit changed in turn
				h := []byte(m.Hash)
				h[i] ^= 1
				if r.hashIs(string(h)) {
					t.Errorf("hashIs(%q) true for %q", m.Hash, h)
				}
			}
			other := m
			other.Hash = vault.Hash([]byte("another note"))
			if r.hashIs(other.Hash) || r.sameFile(recOf(&other)) {
				t.Errorf("%q taken for %q", m.Hash, other.Hash)
			}
			if !r.sameFile(recOf(&m)) {
				t.Error("a record is not the same file as itself")
			}
			touched := m
			touched.MTime = m.MTime.Add(time.Nanosecond)
			if r.sameFile(recOf(&touched)) {
				t.Error("a touched note is taken for the same file")
			}
			for _, size := range []int64{m.Size + 1, m.Size + 1<<32, m.Size ^ 1<<40} {
				resized := m
				resized.Size = size
				if r.sameFile(recOf(&resized)) {
					t.Errorf("size %d taken for %d", size, m.Size)
				}
			}
			decoded, err := decodeNoteRec(m.Path, appendNoteRecord(nil, &m), newTagInterner(), &strArena{})
			if err != nil {
				t.Fatal(err)
			}
			// The store keeps dates as instants, not their zone.
			if got := decoded.meta(); !sameMeta(got, m) || decoded.flags&^dateUTC != r.flags&^dateUTC {
				t.Errorf("decoded from the store:\n got %+v (flags %b)\nwant %+v (flags %b)", got, decoded.flags, m, r.flags)
			}
		})
	}
}

// TestNoteRecSize keeps the record of a note in the size class it was made
// for: 8 bytes more take it to the next (144 bytes); a NoteMeta is 224 and
// a hash string of 64 more. The lists stay in theirs (64 bytes).
func TestNoteRecSize(t *testing.T) {
	if n := unsafe.Sizeof(noteRec{}); n > 128 {
		t.Errorf("noteRec is %d bytes, want at most 128", n)
	}
	if n := unsafe.Sizeof(noteLists{}); n > 64 {
		t.Errorf("noteLists is %d bytes, want at most 64", n)
	}
}

// TestDecodeNoteRecAllocations checks that the load of a record allocates
// only what is kept: the record itself (the arena's blocks are shared by
// thousands of records), not a title that is the file's name, the hex
// digits of the hash or a NoteMeta.
func TestDecodeNoteRecAllocations(t *testing.T) {
	m := &NoteMeta{Path: "folder/Some note.md", Title: "Some note", Tags: []string{"a", "b/c"},
		MTime: time.Unix(1700000000, 5), Size: 1234, Hash: vault.Hash([]byte("x")), hasLens: true, inHash: 3, outHash: 4}
	b := appendNoteRecord(nil, m)
	in, arena := newTagInterner(), &strArena{}
	var got *noteRec
	allocs := testing.AllocsPerRun(1000, func() {
		var err error
		if got, err = decodeNoteRec(m.Path, b, in, arena); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1.05 {
		t.Errorf("%.2f allocations a record, want 1 (the record)", allocs)
	}
	if !sameMeta(got.meta(), *m) {
		t.Errorf("decoded %+v, want %+v", got.meta(), *m)
	}
}
