package search

import (
	"sort"
	"strings"
)

// pathTable is the sorted paths of the indexed notes with their
// lower-cased forms, which path: and file: filters and the daily notes
// compare with. The lower-cased paths are held one after another in one
// string, each found by where it ends, and the file keys are cut from them
// when asked for: a string and a slice entry a note for each form was
// about 5 MB at 100,000 notes, this is the bytes and 4 a note.
type pathTable struct {
	paths []string // sorted; shared, not modified
	lower string   // each of paths lower-cased, one after another
	ends  []uint32 // where each path's lower-cased form ends in lower
}

// newPathTable makes the table of paths (sorted in place).
func newPathTable(paths []string) *pathTable {
	sort.Strings(paths)
	n := 0
	for _, p := range paths {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n + n/16) // lower-casing may lengthen a few
	ends := make([]uint32, len(paths))
	for i, p := range paths {
		b.WriteString(strings.ToLower(p))
		ends[i] = uint32(b.Len())
	}
	return &pathTable{paths: paths, lower: b.String(), ends: ends}
}

// lowerOf returns the i-th path lower-cased (a part of lower, not a copy).
func (t *pathTable) lowerOf(i int) string {
	start := uint32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.lower[start:t.ends[i]]
}

// fileKey returns the file key of the i-th path (fileKey; a part of lower).
func (t *pathTable) fileKey(i int) string { return lowerFileKey(t.lowerOf(i)) }
