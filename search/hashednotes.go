package search

import (
	"cmp"
	"hash/maphash"
	"slices"
	"unsafe"
)

// hashedNotes files notes under 32-bit hashes (of title keys, of note
// names) in an array of (hash, note) sorted by hash, sized exactly: Go
// maps of hashes kept room for a quarter more entries than they held,
// and a list for each hash several notes share. Each note read is
// checked against the key by the caller, so a collision costs a check,
// never a wrong note: at 100,000 keys a key shares its hash with another
// about once in 40,000, and 32 bits of hash and of a path's length beside
// the path's pointer make an entry 16 bytes instead of 24. The notes of the hashes
// changed since the array was made are kept in a small map beside it,
// and the array made again when that map grows past an eighth of it, so
// that a save copies nothing. Lists are replaced, never changed in place,
// so a list handed out earlier stays as it was.
type hashedNotes struct {
	base []hashEntry         // sorted by hash; a hash's notes in the order filed
	over map[uint32][]string // the notes of a hash changed since base was made (none: empty), instead of base's
}

// hashEntry is a hash and a note filed under it: the note's path as the
// pointer to its bytes and its length.
type hashEntry struct {
	p *byte
	n uint32
	h uint32
}

// entryOf returns the entry of the note at path under h.
func entryOf(h uint32, path string) hashEntry {
	return hashEntry{p: unsafe.StringData(path), n: uint32(len(path)), h: h}
}

// path returns the note of the entry.
func (e hashEntry) path() string { return unsafe.String(e.p, e.n) }

// hash32 is the hash of s that hashedNotes files it under.
func hash32(seed maphash.Seed, s string) uint32 { return uint32(maphash.String(seed, s)) }

// sortedNotes returns the notes of entries, which it sorts (the notes of
// a hash kept in their order) and keeps as the array.
func sortedNotes(entries []hashEntry) hashedNotes {
	slices.SortStableFunc(entries, func(a, b hashEntry) int { return cmp.Compare(a.h, b.h) })
	return hashedNotes{base: entries, over: map[uint32][]string{}}
}

// at appends the notes filed under h to buf, or returns the list of over
// itself (not to be modified) when the hash changed since base was made.
func (t *hashedNotes) at(h uint32, buf []string) []string {
	if ps, ok := t.over[h]; ok {
		return ps
	}
	i, _ := slices.BinarySearchFunc(t.base, h, func(e hashEntry, h uint32) int { return cmp.Compare(e.h, h) })
	for ; i < len(t.base) && t.base[i].h == h; i++ {
		buf = append(buf, t.base[i].path())
	}
	return buf
}

// put makes ps the notes filed under h; ps is kept, not to be modified.
func (t *hashedNotes) put(h uint32, ps []string) {
	if t.over == nil {
		t.over = map[uint32][]string{}
	}
	t.over[h] = ps
	if len(t.over) > 64+len(t.base)/8 {
		t.compact()
	}
}

// compact makes the array again with the notes of over, and empties over.
func (t *hashedNotes) compact() {
	n := 0
	for _, ps := range t.over {
		n += len(ps)
	}
	for _, e := range t.base {
		if _, ok := t.over[e.h]; !ok {
			n++
		}
	}
	base := make([]hashEntry, 0, n)
	for _, e := range t.base {
		if _, ok := t.over[e.h]; !ok {
			base = append(base, e)
		}
	}
	for h, ps := range t.over {
		for _, p := range ps {
			base = append(base, entryOf(h, p))
		}
	}
	// Stable: a hash's notes all come from the array or all from a list.
	*t = sortedNotes(base)
}
