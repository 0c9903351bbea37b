package search

import (
	"hash/maphash"

	"github.com/vault-agent/vault-agent/vault"
)

// keyIndex maps vault.NoteKey to the notes with that key: the notes a
// link of that name may point to. It keeps a 32-bit hash of each key
// instead of the key (hashedNotes): the keys' strings and a map keyed by
// them were about 4 MB more at 100,000 notes. The notes under a hash are
// checked against the key when read, so a collision costs a check, never a
// wrong note.
type keyIndex struct {
	seed maphash.Seed
	hashedNotes
}

// newKeyIndex indexes paths by key, the notes of a key in the order of
// paths.
func newKeyIndex(paths []string) *keyIndex {
	k := &keyIndex{seed: maphash.MakeSeed()}
	entries := make([]hashEntry, len(paths))
	for i, p := range paths {
		entries[i] = entryOf(hash32(k.seed, vault.NoteKey(p)), p)
	}
	k.hashedNotes = sortedNotes(entries)
	return k
}

// get returns the notes of key: shared, not to be modified.
func (k *keyIndex) get(key string) []string {
	return ofKey(k.at(hash32(k.seed, key), nil), key)
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
	h := hash32(k.seed, key)
	var others []string // notes of other keys of the same hash
	for _, p := range k.at(h, nil) {
		if vault.NoteKey(p) != key {
			others = append(others, p)
		}
	}
	if len(others) > 0 {
		ps = append(others, ps...)
	}
	k.put(h, ps)
}

// resolve returns the note lc (found in src) points to.
func (k *keyIndex) resolve(lc vault.LinkContext, src string) (string, bool) {
	key := vault.LinkKey(lc.Target)
	var buf [1]string
	return vault.ResolveLink(lc, src, ofKey(k.at(hash32(k.seed, key), buf[:0]), key))
}
