package search

import (
	"cmp"
	"hash/maphash"
	"slices"
)

// titleIndex maps the keys of titles and aliases (titleKey) to the notes
// having them. It keeps a 64-bit hash of each key instead of the key, and
// the one note of a key as a string rather than a list of one (nearly
// every key is one note's): at 100,000 notes the keys and lists were about
// 9 MB of the live heap, the hashes are a map of fixed-size entries. A
// lookup gives the notes whose keys hash alike; the caller checks each
// against the key (exactTitles), so a collision costs a check, never a
// wrong answer.
type titleIndex struct {
	seed maphash.Seed
	one  map[uint64]string
	many map[uint64][]string
}

func newTitleIndex(notes int) *titleIndex {
	return &titleIndex{seed: maphash.MakeSeed(), one: make(map[uint64]string, notes), many: map[uint64][]string{}}
}

// hashes returns the distinct hashes of keys.
func (t *titleIndex) hashes(keys []string) []uint64 {
	hs := make([]uint64, 0, len(keys))
	for _, k := range keys {
		if h := maphash.String(t.seed, k); !slices.Contains(hs, h) {
			hs = append(hs, h)
		}
	}
	return hs
}

// titleEntry is a key's hash and a note having the key.
type titleEntry struct {
	h    uint64
	path string
}

// fill puts entries, the keys of every note (hashed by hashes, each note's
// once), into an empty index: the maps sized for them and the lists of the
// hashes several notes share cut from one array (each with its capacity
// its length, so an add copies it).
func (t *titleIndex) fill(entries []titleEntry) {
	slices.SortFunc(entries, func(a, b titleEntry) int { return cmp.Compare(a.h, b.h) })
	ones, shared := 0, 0
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].h == entries[i].h {
			j++
		}
		if j-i == 1 {
			ones++
		} else {
			shared += j - i
		}
		i = j
	}
	t.one = make(map[uint64]string, ones)
	t.many = make(map[uint64][]string)
	all := make([]string, 0, shared)
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].h == entries[i].h {
			j++
		}
		if j-i == 1 {
			t.one[entries[i].h] = entries[i].path
		} else {
			start := len(all)
			for _, e := range entries[i:j] {
				all = append(all, e.path)
			}
			t.many[entries[i].h] = all[start:len(all):len(all)]
		}
		i = j
	}
}

// add records that the note at path has the keys.
func (t *titleIndex) add(keys []string, path string) {
	for _, h := range t.hashes(keys) {
		if ps, ok := t.many[h]; ok {
			if !slices.Contains(ps, path) {
				t.many[h] = append(ps, path)
			}
		} else if q, ok := t.one[h]; ok {
			if q != path {
				t.many[h] = []string{q, path}
				delete(t.one, h)
			}
		} else {
			t.one[h] = path
		}
	}
}

// remove forgets the keys of the note at path.
func (t *titleIndex) remove(keys []string, path string) {
	for _, h := range t.hashes(keys) {
		if q, ok := t.one[h]; ok {
			if q == path {
				delete(t.one, h)
			}
			continue
		}
		ps := t.many[h]
		i := slices.Index(ps, path)
		if i < 0 {
			continue
		}
		// A new list: one handed out by candidates stays as it was.
		ps = append(ps[:i:i], ps[i+1:]...)
		switch len(ps) {
		case 0:
			delete(t.many, h)
		case 1:
			delete(t.many, h)
			t.one[h] = ps[0]
		default:
			t.many[h] = ps
		}
	}
}

// candidates returns the notes with a key hashing as key does, in a new
// slice.
func (t *titleIndex) candidates(key string) []string {
	h := maphash.String(t.seed, key)
	if p, ok := t.one[h]; ok {
		return []string{p}
	}
	return slices.Clone(t.many[h])
}

// len returns the number of distinct key hashes held.
func (t *titleIndex) len() int { return len(t.one) + len(t.many) }
