package search

import (
	"hash/maphash"
	"slices"
)

// titleIndex maps the keys of titles and aliases (titleKey) to the notes
// having them. It keeps a 32-bit hash of each key instead of the key
// (hashedNotes): at 100,000 notes the keys and a list for each were about
// 9 MB of the live heap. A lookup gives the notes whose keys hash alike;
// the caller checks each against the key (exactTitles), so a collision
// costs a check, never a wrong answer.
type titleIndex struct {
	seed maphash.Seed
	hashedNotes
}

func newTitleIndex() *titleIndex {
	return &titleIndex{seed: maphash.MakeSeed()}
}

// hashes returns the distinct hashes of keys.
func (t *titleIndex) hashes(keys []string) []uint32 {
	hs := make([]uint32, 0, len(keys))
	for _, k := range keys {
		if h := hash32(t.seed, k); !slices.Contains(hs, h) {
			hs = append(hs, h)
		}
	}
	return hs
}

// fill puts entries, the keys of every note (hashed by hashes, each note's
// once), into an empty index, in an array of their exact size.
func (t *titleIndex) fill(entries []hashEntry) {
	t.hashedNotes = sortedNotes(slices.Clone(entries))
}

// add records that the note at path has the keys.
func (t *titleIndex) add(keys []string, path string) {
	for _, h := range t.hashes(keys) {
		if ps := t.at(h, nil); !slices.Contains(ps, path) {
			t.put(h, append(ps[:len(ps):len(ps)], path))
		}
	}
}

// remove forgets the keys of the note at path.
func (t *titleIndex) remove(keys []string, path string) {
	for _, h := range t.hashes(keys) {
		ps := t.at(h, nil)
		if i := slices.Index(ps, path); i >= 0 {
			t.put(h, append(ps[:i:i], ps[i+1:]...))
		}
	}
}

// candidates returns the notes with a key hashing as key does, in a new
// slice.
func (t *titleIndex) candidates(key string) []string {
	return slices.Clone(t.at(hash32(t.seed, key), nil))
}
