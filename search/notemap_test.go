package search

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestNoteMapAsMap runs random puts, replacements and removals on a
// noteMap and a Go map side by side, and checks after each step that
// both hold the same records: every removal shifts the records after it
// back, and one shifted wrongly is a record a lookup no longer finds.
func TestNoteMapAsMap(t *testing.T) {
	for _, tt := range []struct {
		name        string
		hint, paths int
		ops         int
		removeShare float64
	}{
		{"empty start", 0, 40, 2000, 0.3},
		{"sized", 300, 300, 3000, 0.5},
		{"mostly removals", 64, 200, 3000, 0.7},
		{"crowded", 1000, 2000, 20000, 0.4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tt.paths)))
			nm := newNoteMap(tt.hint)
			want := map[string]*noteRec{}
			for op := range tt.ops {
				p := fmt.Sprintf("folder %d/note %d.md", rng.IntN(7), rng.IntN(tt.paths))
				if rng.Float64() < tt.removeShare {
					nm.del(p)
					delete(want, p)
				} else {
					r := &noteRec{Path: p, mtime: int64(op)}
					nm.put(r)
					want[p] = r
				}
				if op%97 == 0 || op == tt.ops-1 {
					checkNoteMap(t, nm, want)
				}
			}
			c := nm.clone()
			for p := range want {
				nm.del(p)
			}
			checkNoteMap(t, nm, map[string]*noteRec{})
			checkNoteMap(t, c, want)
			if len(nm.slots) > slotsFor(tt.hint)*2 && len(nm.slots) > slotsFor(len(want))*4 {
				t.Errorf("%d slots for at most %d notes", len(nm.slots), tt.paths)
			}
		})
	}
}

// checkNoteMap checks that nm holds the records of want, and no other.
func checkNoteMap(t *testing.T, nm *noteMap, want map[string]*noteRec) {
	t.Helper()
	if nm.len() != len(want) {
		t.Fatalf("%d notes, want %d", nm.len(), len(want))
	}
	for p, r := range want {
		if got := nm.get(p); got != r {
			t.Fatalf("get(%q) = %v, want %v", p, got, r)
		}
	}
	seen := map[string]bool{}
	for r := range nm.all() {
		if want[r.Path] != r || seen[r.Path] {
			t.Fatalf("all yields %q (%p) once more or not held", r.Path, r)
		}
		seen[r.Path] = true
	}
	if len(seen) != len(want) {
		t.Fatalf("all yields %d notes, want %d", len(seen), len(want))
	}
	if nm.get("not held.md") != nil {
		t.Fatal("a note not held is found")
	}
	if (nm.len()+1)*5 > len(nm.slots)*4+5 {
		t.Fatalf("%d notes in %d slots: past four fifths", nm.len(), len(nm.slots))
	}
}

// TestNoteMapSize keeps the table at 8 bytes a slot and under 12 a note
// for 100,000 notes (a Go map of path to record took about 37).
func TestNoteMapSize(t *testing.T) {
	if n := unsafe.Sizeof((*noteRec)(nil)); n != 8 {
		t.Fatalf("a slot is %d bytes", n)
	}
	nm := newNoteMap(100_000)
	for i := range 100_000 {
		nm.put(&noteRec{Path: fmt.Sprintf("n%d.md", i)})
	}
	if per := float64(len(nm.slots)*8) / 100_000; per > 12 {
		t.Errorf("%.1f bytes a note for 100,000 notes, want at most 12", per)
	}
}
