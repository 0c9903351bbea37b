package search

import (
	"path"
	"sort"
	"strings"

	"github.com/vault-agent/vault-agent/vault"
)

// The metadata cache of the notes an Index holds, and what is read from
// it: counts, paths, file names, tags.

// setMeta makes state the notes of the index. The records are those of
// the note store, so without link keys: an index in memory has none to
// keep.
func (ix *Index) setMeta(state []*noteRec) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	meta := newNoteMap(len(state))
	ix.lenSum, ix.lenNotes = [numLenFields]int64{}, 0
	ix.memKeys = nil
	for _, m := range state {
		meta.put(m)
		ix.addLens(m)
	}
	for old := range ix.meta.all() {
		ix.feeds.noteChanged(old.Path, old, meta.get(old.Path))
	}
	for m := range meta.all() {
		if ix.meta.get(m.Path) == nil {
			ix.feeds.noteChanged(m.Path, nil, m)
		}
	}
	ix.meta = meta
	ix.paths, ix.keyIdx, ix.titleIdx, ix.titleVocab = nil, nil, nil, nil
	ix.metaGen++
}

// keep makes m (nil: removed) the record of the note at p in memory, its
// link keys kept apart by an index in memory, which has no store to read
// them from (see linkKeysOf); called with mu held for writing. It returns
// the record kept.
func (ix *Index) keep(p string, m *NoteMeta) *noteRec {
	if ix.path == "" {
		if m == nil || m.keys == "" {
			delete(ix.memKeys, p)
		} else {
			if ix.memKeys == nil {
				ix.memKeys = map[string]linkKeys{}
			}
			ix.memKeys[p] = m.keys
		}
	}
	return recOf(m)
}

// addLens and forgetLens keep the field length sums; called with mu held.
func (ix *Index) addLens(m *noteRec) {
	if m == nil {
		return
	}
	lens, ok := m.fieldLens()
	if !ok {
		return
	}
	for i, l := range lens {
		ix.lenSum[i] += int64(l)
	}
	ix.lenNotes++
}

func (ix *Index) forgetLens(m *noteRec) {
	if m == nil {
		return
	}
	lens, ok := m.fieldLens()
	if !ok {
		return
	}
	for i, l := range lens {
		ix.lenSum[i] -= int64(l)
	}
	ix.lenNotes--
}

// avgLens returns the mean length of each field of lenFields over the notes
// whose lengths are known (1 where none is).
func (ix *Index) avgLens() [numLenFields]float64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out [numLenFields]float64
	for i := range out {
		out[i] = 1
		if ix.lenNotes > 0 && ix.lenSum[i] > 0 {
			out[i] = float64(ix.lenSum[i]) / float64(ix.lenNotes)
		}
	}
	return out
}

// Vault returns the vault the index was opened on.
func (ix *Index) Vault() *vault.Vault { return ix.v }

// Count returns the number of indexed notes.
func (ix *Index) Count() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.meta.len()
}

// Note returns the cached metadata of an indexed note.
func (ix *Index) Note(path string) (NoteMeta, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	m := ix.meta.get(path)
	if m == nil {
		return NoteMeta{}, false
	}
	return m.meta(), true
}

// Paths returns every indexed note path, sorted. The slice is shared: do
// not modify it.
func (ix *Index) Paths() []string { return ix.pathTables().paths }

// Notes returns the cached metadata of every indexed note, sorted by path.
// The caller may keep the slice.
func (ix *Index) Notes() []NoteMeta {
	paths := ix.Paths()
	out := make([]NoteMeta, 0, len(paths))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, p := range paths {
		if m := ix.meta.get(p); m != nil {
			out = append(out, m.meta())
		}
	}
	return out
}

// pathTables returns the table of the sorted paths, building it if stale.
func (ix *Index) pathTables() *pathTable {
	ix.mu.RLock()
	t := ix.paths
	ix.mu.RUnlock()
	if t != nil {
		return t
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.paths == nil {
		ix.paths = newPathTable(ix.meta.paths())
	}
	return ix.paths
}

// matchPrefix returns the paths starting with prefix (lower-case).
func (ix *Index) matchPrefix(prefix string) []string {
	t := ix.pathTables()
	var out []string
	for i, p := range t.paths {
		if t.hasPrefix(i, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// matchFiles returns the paths whose file key (lower-cased basename without
// ".md") contains name, or matches it as a pattern when it has * or ?.
func (ix *Index) matchFiles(name string) []string {
	t := ix.pathTables()
	glob := strings.ContainsAny(name, "*?")
	var out []string
	for i, p := range t.paths {
		var ok bool
		if glob {
			ok, _ = path.Match(name, t.fileKey(i))
		} else {
			ok = t.fileKeyHas(i, name)
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// Tags returns every tag with the number of notes carrying it, sorted by
// tag. Parents of nested tags are listed too and count the notes of all
// their descendants (each note once), matching what tag:parent finds.
func (ix *Index) Tags() []TagCount {
	ix.mu.RLock()
	counts := make(map[string]int)
	for m := range ix.meta.all() {
		for _, t := range tagAncestors(m.Tags()) {
			counts[t]++
		}
	}
	ix.mu.RUnlock()
	out := make([]TagCount, 0, len(counts))
	for t, n := range counts {
		out = append(out, TagCount{Tag: t, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out
}
