package search

import (
	"hash/maphash"

	"github.com/vault-agent/vault-agent/vault"
)

// keyIndex maps vault.NoteKey to the notes with that key: the notes a
// link of that name may point to. It keeps a 64-bit hash of each key
// instead of the key, and the one note of a key as a string rather than a
// list of one (nearly every key is one note's): the keys' strings and a
// map keyed by them were about 4 MB more at 100,000 notes. The notes under
// a hash are checked against the key when read, so a collision costs a
// check, never a wrong note.
type keyIndex struct {
	seed maphash.Seed
	one  map[uint64]string
	many map[uint64][]string // in the order the notes were added
}

// newKeyIndex indexes paths by key, the notes of a key in the order of
// paths.
func newKeyIndex(paths []string) *keyIndex {
	k := &keyIndex{seed: maphash.MakeSeed(), one: make(map[uint64]string, len(paths)), many: map[uint64][]string{}}
	for _, p := range paths {
		h := maphash.String(k.seed, vault.NoteKey(p))
		if ps, ok := k.many[h]; ok {
			k.many[h] = append(ps, p)
		} else if q, ok := k.one[h]; ok {
			k.many[h] = []string{q, p}
			delete(k.one, h)
		} else {
			k.one[h] = p
		}
	}
	return k
}

// get returns the notes of key: shared, not to be modified (a new slice
// for a key of one note).
func (k *keyIndex) get(key string) []string {
	h := maphash.String(k.seed, key)
	if p, ok := k.one[h]; ok {
		if vault.NoteKey(p) == key {
			return []string{p}
		}
		return nil
	}
	return ofKey(k.many[h], key)
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
	if p, ok := k.one[h]; ok {
		if vault.NoteKey(p) != key {
			others = []string{p}
		}
	} else {
		for _, p := range k.many[h] {
			if vault.NoteKey(p) != key {
				others = append(others, p)
			}
		}
	}
	if len(others) > 0 {
		ps = append(others, ps...)
	}
	delete(k.one, h)
	delete(k.many, h)
	switch len(ps) {
	case 0:
	case 1:
		k.one[h] = ps[0]
	default:
		k.many[h] = ps
	}
}

// resolve returns the note lc (found in src) points to.
func (k *keyIndex) resolve(lc vault.LinkContext, src string) (string, bool) {
	key := vault.LinkKey(lc.Target)
	h := maphash.String(k.seed, key)
	if p, ok := k.one[h]; ok {
		if vault.NoteKey(p) != key {
			return "", false
		}
		one := [1]string{p}
		return vault.ResolveLink(lc, src, one[:])
	}
	return vault.ResolveLink(lc, src, ofKey(k.many[h], key))
}
