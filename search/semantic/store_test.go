package semantic

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/search"
)

// damage writes n bytes of seeded random data at off in the file at path
// (n 0: truncate the file to off).
func damage(t testing.TB, path string, off int64, n int, seed uint64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n == 0 {
		if err := f.Truncate(off); err != nil {
			t.Fatal(err)
		}
		return
	}
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedVectorStore damages the vectors file between two runs, as a
// disk or another program could: opening it must not crash or fail; the
// damaged file is moved aside, the vectors are made again, and search
// works meanwhile and after.
func TestDamagedVectorStore(t *testing.T) {
	tests := []struct {
		name string
		off  int64
		n    int  // 0: truncate at off
		must bool // the damage must be found (it may hit a free page otherwise)
	}{
		{"64 KiB of random bytes at 8192", 8192, 64 << 10, true},
		{"both meta pages", 0, 8192, true},
		{"truncated", 5 * 4096, 0, true},
		{"one page of random bytes", 3 * 4096, 4096, false},
		{"a few bytes in a page header", 4*4096 + 8, 8, false},
	}
	dir := manyNotes(t, 60) // 180 chunks: a file of a few dozen pages
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "vectors.db")
			f := newFixture(t, llmtest.WordVectors(dims, nil))
			ix := openIndex(t, dir)
			e := f.open(t, ix, f.embedder(t, "m1", 64), store, 64)
			if st := syncOK(t, e); st.Chunks != 180 {
				t.Fatalf("first sync: %+v", st)
			}
			e.Close()
			if st, _ := os.Stat(store); st.Size() < tt.off+int64(tt.n) {
				t.Fatalf("the store is %d bytes, too small for the damage", st.Size())
			}
			damage(t, store, tt.off, tt.n, 7)

			e = f.open(t, ix, f.embedder(t, "m1", 64), store, 64)
			// Until vectors are made again, hybrid search answers lexically.
			res, err := e.Search(context.Background(), search.Request{Query: "alpha section", Limit: 5})
			if err != nil || len(res.Results) == 0 {
				t.Fatalf("search before the rebuild: %+v, %v", res, err)
			}
			st := syncOK(t, e)
			if st.Chunks != 180 {
				t.Fatalf("after the damage: %+v", st)
			}
			if _, err := os.Stat(store + ".damaged"); tt.must && (err != nil || st.Embedded != 180) {
				t.Fatalf("the damage was not found (%v), or the vectors not made again: %+v", err, st)
			}
			res, err = e.Search(context.Background(), search.Request{Query: "alpha section of note 7", Limit: 5, Mode: search.ModeSemantic})
			if err != nil || len(res.Results) == 0 {
				t.Fatalf("semantic search after the rebuild: %+v, %v", res, err)
			}
			e.Close()
			// The rebuilt store is sound: the next open embeds nothing.
			e = f.open(t, ix, f.embedder(t, "m1", 64), store, 64)
			if st := syncOK(t, e); st.Embedded != 0 || st.Chunks != 180 {
				t.Fatalf("reopen after the rebuild: %+v", st)
			}
		})
	}
}

// baseStore is a sound store file, made once per process, for
// FuzzVectorStore to damage copies of.
var baseStore = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "vectors-fuzz-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "vectors.db")
	s, err := openStore(path, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	const d = 64
	if err := s.reset("m", d); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		var keys []key
		var vecs []vec
		for c := range 4 {
			var k key
			k[0], k[1], k[2] = byte(n), byte(c), byte(r.Uint32())
			v := vec{q: make([]int8, strideOf(d)), inv: 1}
			for i := range d {
				v.q[i] = int8(r.Uint32())
			}
			keys, vecs = append(keys, k), append(vecs, v)
		}
		note := map[string]noteRec{strings.Repeat("n", n%7+1) + string(rune('a'+n)) + ".md": {hash: "h", keys: keys}}
		if err := s.commit(keys, vecs, note, nil); err != nil {
			return nil, err
		}
	}
	if err := s.close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// FuzzVectorStore damages a sound vectors file anywhere, in any way:
// opening it never fails or crashes, and every operation of the store on
// what it opened either works or reports the damage, after which a reset
// gives a working store.
func FuzzVectorStore(f *testing.F) {
	f.Add(uint32(8192), bytes.Repeat([]byte{0xA5}, 64<<10), false)
	f.Add(uint32(0), []byte("garbage"), false)
	f.Add(uint32(4096+16), []byte{0xff, 0xff, 0xff, 0x7f}, false)
	f.Add(uint32(2*4096), []byte{1, 0, 0, 0, 0, 0, 0, 0}, false)
	f.Add(uint32(3*4096+24), []byte{0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0}, false)
	f.Add(uint32(20000), []byte{}, true)
	f.Fuzz(func(t *testing.T, off uint32, data []byte, truncate bool) {
		base, err := baseStore()
		if err != nil {
			t.Fatal(err)
		}
		file := bytes.Clone(base)
		at := int(off) % (len(file) + 1)
		if truncate {
			file = file[:at]
		} else {
			copy(file[at:], data)
		}
		path := filepath.Join(t.TempDir(), "vectors.db")
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := openStore(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer s.close()
		// Everything the engine does with a store.
		for _, r := range s.notes {
			s.get(r.keys, strideOf(s.dims))
		}
		s.view(func(tx txn) {
			for _, r := range s.notes {
				for _, k := range r.keys {
					s.has(tx, k)
				}
			}
		})
		if s.dims != 64 {
			// The engine resets a store of another dimension too.
			if err := s.reset("m", 64); err != nil {
				t.Fatalf("reset to the embedder's dimension: %v", err)
			}
		}
		k := key{0xEE}
		err = s.commit([]key{k}, []vec{{q: make([]int8, strideOf(64)), inv: 1}}, map[string]noteRec{"new.md": {hash: "x", keys: []key{k}}}, []string{"na.md"})
		if err == nil {
			_, err = s.collect()
		}
		if err != nil {
			if err := s.reset("m", 64); err != nil {
				t.Fatalf("reset after a damage: %v", err)
			}
			if err := s.commit([]key{k}, []vec{{q: make([]int8, strideOf(64)), inv: 1}}, map[string]noteRec{"new.md": {hash: "x", keys: []key{k}}}, nil); err != nil {
				t.Fatalf("commit after a reset: %v", err)
			}
		}
	})
}

// BenchmarkOpenStore opens a store of 100,000 vectors of 768 dimensions
// (78 MB), checked (checkStoreFile) and its note records read, as every
// start with an embedding model does.
func BenchmarkOpenStore(b *testing.B) {
	path := filepath.Join(b.TempDir(), "vectors.db")
	s, err := openStore(path, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	const d, notes, perNote = 768, 10000, 10
	if err := s.reset("m", d); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range notes {
		keys, vecs := make([]key, perNote), make([]vec, perNote)
		for c := range keys {
			for i := range keys[c] {
				keys[c][i] = byte(r.Uint32())
			}
			vecs[c] = vec{q: make([]int8, strideOf(d)), inv: 1}
			for i := range d {
				vecs[c].q[i] = int8(r.Uint32())
			}
		}
		if err := s.commit(keys, vecs, map[string]noteRec{"notes/" + strings.Repeat("x", n%20) + string(rune(0x4e00+n)) + ".md": {hash: "h", keys: keys}}, nil); err != nil {
			b.Fatal(err)
		}
	}
	s.close()
	st, _ := os.Stat(path)
	b.ReportMetric(float64(st.Size())/(1<<20), "file_MB")
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if err := checkStoreFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			s, err := openStore(path, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			s.close()
		}
	})
}
