package search

import (
	"cmp"
	"hash/maphash"
	"slices"

	"github.com/vault-agent/vault-agent/vault"
)

// keyIndex maps vault.NoteKey to the notes with that key: the notes a
// link of that name may point to. It keeps a 64-bit hash of each key
// instead of the key, in an array of (hash, note) sorted by hash, sized
// exactly: the keys' strings and a map keyed by them were about 4 MB more
// at 100,000 notes, and maps of hashes kept room for a quarter more
// entries than they held. The notes of the hashes changed since the array
// was made are kept in a small map beside it, and the array made again
// when that map grows past an eighth of it, so that a save costs no copy
// of the array. The notes under a hash are checked against the key when
// read, so a collision costs a check, never a wrong note.
type keyIndex struct {
	seed maphash.Seed
	base []keyEntry          // sorted by hash; a hash's notes in the order added
	over map[uint64][]string // the notes of a hash changed since base was made (none: empty), instead of base's
}

// keyEntry is a key's hash and a note having the key.
type keyEntry struct {
	h    uint64
	path string
}

// newKeyIndex indexes paths by key, the notes of a key in the order of
// paths.
func newKeyIndex(paths []string) *keyIndex {
	k := &keyIndex{seed: maphash.MakeSeed(), base: make([]keyEntry, len(paths)), over: map[uint64][]string{}}
	for i, p := range paths {
		k.base[i] = keyEntry{maphash.String(k.seed, vault.NoteKey(p)), p}
	}
	slices.SortStableFunc(k.base, func(a, b keyEntry) int { return cmp.Compare(a.h, b.h) })
	return k
}

// atHash appends the notes filed under h, of any key, to buf: the list of
// over itself (not to be modified) when the hash changed since base was
// made.
func (k *keyIndex) atHash(h uint64, buf []string) []string {
	if ps, ok := k.over[h]; ok {
		return ps
	}
	i, _ := slices.BinarySearchFunc(k.base, h, func(e keyEntry, h uint64) int { return cmp.Compare(e.h, h) })
	for ; i < len(k.base) && k.base[i].h == h; i++ {
		buf = append(buf, k.base[i].path)
	}
	return buf
}

// get returns the notes of key: shared, not to be modified.
func (k *keyIndex) get(key string) []string {
	return ofKey(k.atHash(maphash.String(k.seed, key), nil), key)
}

// ofKey returns the notes of ps whose key is key: ps itself when all are
// (no collision), else a new slice.
func ofKey(ps []string, key string) []string {
	for i, p := range ps {
		if vault.NoteKey(p) != key {
			out := append([]string(nil), ps[:i]...)
			for _, q := range ps[i+1:] {
				if vault.NoteKey(q) == key {
					out = append(out, q)
				}
			}
			return out
		}
	}
	return ps
}

// set makes ps the notes of key. Lists are replaced, never changed in
// place, so a list handed out earlier stays as it was.
func (k *keyIndex) set(key string, ps []string) {
	h := maphash.String(k.seed, key)
	var others []string // notes of other keys of the same hash
	for _, p := range k.atHash(h, nil) {
		if vault.NoteKey(p) != key {
			others = append(others, p)
		}
	}
	if len(others) > 0 {
		ps = append(others, ps...)
	}
	k.over[h] = ps
	if len(k.over) > 64+len(k.base)/8 {
		k.compact()
	}
}

// compact makes base again with the notes of over, and empties over.
func (k *keyIndex) compact() {
	n := 0
	for _, ps := range k.over {
		n += len(ps)
	}
	for _, e := range k.base {
		if _, ok := k.over[e.h]; !ok {
			n++
		}
	}
	base := make([]keyEntry, 0, n)
	for _, e := range k.base {
		if _, ok := k.over[e.h]; !ok {
			base = append(base, e)
		}
	}
	for h, ps := range k.over {
		for _, p := range ps {
			base = append(base, keyEntry{h, p})
		}
	}
	// Stable: a hash's notes all come from base or all from one list.
	slices.SortStableFunc(base, func(a, b keyEntry) int { return cmp.Compare(a.h, b.h) })
	k.base, k.over = base, map[uint64][]string{}
}

// resolve returns the note lc (found in src) points to.
func (k *keyIndex) resolve(lc vault.LinkContext, src string) (string, bool) {
	key := vault.LinkKey(lc.Target)
	var buf [1]string
	return vault.ResolveLink(lc, src, ofKey(k.atHash(maphash.String(k.seed, key), buf[:0]), key))
}
