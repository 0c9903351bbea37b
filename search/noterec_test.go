package search

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
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
		{"title of its own", func(m *NoteMeta) { m.Title = "Something else entirely" }, true, false},
		{"empty lists", func(m *NoteMeta) { m.Aliases, m.Tags = []string{}, []string{} }, true, true},
		{"lists with room", func(m *NoteMeta) { m.Aliases, m.Tags = make([]string, 1, 9), append(make([]string, 0, 5), "a", "b") }, true, true},
		{"title at 16 bits", func(m *NoteMeta) { m.Title = strings.Repeat("t", math.MaxUint16) }, true, false},
		{"title past 16 bits", func(m *NoteMeta) { m.Title = strings.Repeat("é", 40000) }, true, false},
		{"long title, wide", func(m *NoteMeta) { m.Title, m.Size = strings.Repeat("w", 70000), 1<<32 }, true, false},
		{"empty path, a title", func(m *NoteMeta) { m.Path, m.Title = "", "Orphan" }, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := base
			tt.change(&m)
			r := recOf(&m)
			if r.is(hashHex) != tt.packed {
				t.Errorf("hash %q held packed %v, want %v", m.Hash, r.is(hashHex), tt.packed)
			}
			if r.is(named) != tt.named || (r.is(named) && r.tlen != 0) {
				t.Errorf("title %q of %s held with length %d, named %v; want named %v", m.Title, m.Path, r.tlen, r.is(named), tt.named)
			}
			long := !tt.named && (len(m.Title) > math.MaxUint16 || m.Path == "")
			if r.is(longTitle) != long || long && r.lists.ext.title != m.Title {
				t.Errorf("title of %d bytes held apart %v, want %v", len(m.Title), r.is(longTitle), long)
			}
			narrow := m.Size <= math.MaxUint32
			for _, l := range m.lens {
				narrow = narrow && l <= math.MaxUint16
			}
			if r.is(wide) == narrow || narrow && r.lists != nil && r.lists.ext != nil && r.lists.ext.oddHash == "" && r.lists.ext.title == "" {
				t.Errorf("size %d, lens %v held wide %v", m.Size, m.lens, r.is(wide))
			}
			if tt.packed && r.oddHash() != "" || !tt.packed && r.oddHash() != m.Hash {
				t.Errorf("hash %q held apart as %q", m.Hash, r.oddHash())
			}
			if (r.lists == nil) != (m.Aliases == nil && m.Tags == nil && r.oddHash() == "" && narrow && !long) {
				t.Errorf("lists %+v for aliases %q, tags %q, hash %q", r.lists, m.Aliases, m.Tags, m.Hash)
			}
			got := r.meta()
			if cap(got.Aliases) != len(got.Aliases) || cap(got.Tags) != len(got.Tags) {
				t.Errorf("lists with room to append in place: aliases %d of %d, tags %d of %d",
					len(got.Aliases), cap(got.Aliases), len(got.Tags), cap(got.Tags))
			}
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
			// The store keeps dates as instants, not their zone, and empty
			// lists as none.
			stored := m
			stored.Aliases, stored.Tags = slices.Clip(stored.Aliases), slices.Clip(stored.Tags)
			if len(stored.Aliases) == 0 {
				stored.Aliases = nil
			}
			if len(stored.Tags) == 0 {
				stored.Tags = nil
			}
			if got := decoded.meta(); !sameMeta(got, stored) || decoded.flags&^dateUTC != r.flags&^dateUTC {
				t.Errorf("decoded from the store:\n got %+v (flags %b)\nwant %+v (flags %b)", got, decoded.flags, stored, r.flags)
			}
		})
	}
}

// TestNoteRecSize keeps the record of a note in the size class it was made
// for: 8 bytes more take it to the next (128 bytes); a NoteMeta is 224 and
// a hash string of 64 more. The lists stay in theirs (32 bytes; 64 as
// slices).
func TestNoteRecSize(t *testing.T) {
	if n := unsafe.Sizeof(noteRec{}); n > 112 {
		t.Errorf("noteRec is %d bytes, want at most 112", n)
	}
	if n := unsafe.Sizeof(noteLists{}); n > 32 {
		t.Errorf("noteLists is %d bytes, want at most 32", n)
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

// TestTitlesBesidePaths checks that titles held right after their paths
// (in arena blocks, past a block's end, or alone for a record made from a
// NoteMeta) read back as they were, after collections, while the records
// alone hold their memory.
func TestTitlesBesidePaths(t *testing.T) {
	const n = 3000
	arena := &strArena{size: 4 << 10}
	in := newTagInterner()
	recs := make([]*noteRec, 0, 2*n)
	want := make([]NoteMeta, 0, 2*n)
	for i := range n {
		m := NoteMeta{
			Path:  fmt.Sprintf("folder %d/Note %d.md", i%13, i),
			Title: strings.Repeat(fmt.Sprintf("title %d ", i), i%7),
			MTime: time.Unix(int64(i), 0), Size: int64(i),
		}
		if i%5 == 0 {
			m.Title = baseTitle(m.Path)
		}
		if i%101 == 0 {
			m.Title = strings.Repeat("x", 600) // past an eighth of the block: not in the arena
		}
		r, err := decodeNoteRec([]byte(m.Path), appendNoteRecord(nil, &m), in, arena)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r, recOf(&m))
		want = append(want, m, m)
	}
	in, arena = nil, nil
	runtime.GC()
	junk := make([][]byte, 0, 1000)
	for i := range 1000 { // reuse of freed memory shows as changed bytes
		junk = append(junk, bytes.Repeat([]byte{byte(i)}, 64+i%200))
	}
	runtime.GC()
	for i, r := range recs {
		if r.Path != want[i].Path || r.Title() != want[i].Title {
			t.Fatalf("record %d: path %q, title %q; want %q, %q", i, r.Path, r.Title(), want[i].Path, want[i].Title)
		}
	}
	runtime.KeepAlive(junk)
}
