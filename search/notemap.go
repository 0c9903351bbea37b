package search

import (
	"hash/maphash"
	"iter"
	"math/bits"
)

// noteMap files the notes' records by path: an open-addressed table of
// pointers to the records, each found by the path it holds (linear
// probing, removal by shifting back the records after it, so no slot is
// left marked). A Go map keyed by the path held the path's string header
// again beside the pointer, 25 bytes a slot with its control byte and room
// for an eighth more, about 3.7 MB at 100,000 notes; this is 8 bytes a
// slot, filled up to four fifths: 1 MB. A slot's path is read through its
// record, so a lookup reads a record for each slot it probes; the table
// keeps a fifth of its slots empty so that a probe ends soon.
type noteMap struct {
	seed  maphash.Seed
	slots []*noteRec // len a power of two (or 0); nil: empty
	n     int
}

// newNoteMap returns a table with room for n notes before it grows.
func newNoteMap(n int) *noteMap {
	t := &noteMap{seed: maphash.MakeSeed()}
	t.slots = make([]*noteRec, slotsFor(n))
	return t
}

// slotsFor returns the slots of a table of n notes: a power of two at
// least n*5/4 (and 8).
func slotsFor(n int) int {
	want := max(8, n+n/4+1)
	return 1 << bits.Len(uint(want-1))
}

// len returns the number of notes.
func (t *noteMap) len() int { return t.n }

// home returns the slot where p's probe starts.
func (t *noteMap) home(p string) int {
	return int(maphash.String(t.seed, p) & uint64(len(t.slots)-1))
}

// find returns the slot holding the record of p, or the empty slot where
// its probe ends and false.
func (t *noteMap) find(p string) (int, bool) {
	mask := len(t.slots) - 1
	for i := t.home(p); ; i = (i + 1) & mask {
		r := t.slots[i]
		if r == nil {
			return i, false
		}
		if r.Path == p {
			return i, true
		}
	}
}

// get returns the record of the note at p, nil when there is none.
func (t *noteMap) get(p string) *noteRec {
	if t.n == 0 {
		return nil
	}
	if i, ok := t.find(p); ok {
		return t.slots[i]
	}
	return nil
}

// put makes r the record of the note at r.Path.
func (t *noteMap) put(r *noteRec) {
	if (t.n+1)*5 > len(t.slots)*4 {
		t.grow()
	}
	i, ok := t.find(r.Path)
	if !ok {
		t.n++
	}
	t.slots[i] = r
}

// grow doubles the slots.
func (t *noteMap) grow() {
	old := t.slots
	t.slots = make([]*noteRec, max(8, 2*len(old)))
	for _, r := range old {
		if r != nil {
			i, _ := t.find(r.Path)
			t.slots[i] = r
		}
	}
}

// del removes the note at p, if held. The records after it in its run of
// full slots that it stood between their home and their slot move back
// into the hole, so a probe still finds each before an empty slot.
func (t *noteMap) del(p string) {
	if t.n == 0 {
		return
	}
	i, ok := t.find(p)
	if !ok {
		return
	}
	mask := len(t.slots) - 1
	t.slots[i] = nil
	t.n--
	for j := (i + 1) & mask; t.slots[j] != nil; j = (j + 1) & mask {
		// The record at j may fill the hole at i when its home is not in
		// the cyclic interval (i, j].
		h := t.home(t.slots[j].Path)
		if (j-h)&mask >= (j-i)&mask {
			t.slots[i], t.slots[j] = t.slots[j], nil
			i = j
		}
	}
}

// all yields every record, in no particular order. The table must not be
// changed meanwhile.
func (t *noteMap) all() iter.Seq[*noteRec] {
	return func(yield func(*noteRec) bool) {
		for _, r := range t.slots {
			if r != nil && !yield(r) {
				return
			}
		}
	}
}

// paths returns the paths of the notes, in no particular order.
func (t *noteMap) paths() []string {
	ps := make([]string, 0, t.n)
	for r := range t.all() {
		ps = append(ps, r.Path)
	}
	return ps
}

// clone returns a copy of the table (the records shared).
func (t *noteMap) clone() *noteMap {
	c := *t
	c.slots = append([]*noteRec(nil), t.slots...)
	return &c
}
