package search

import (
	"path"
	"sort"
	"strings"
)

// pathTable is the sorted paths of the indexed notes, with what path: and
// file: filters and the daily notes compare with: each path lower-cased
// and its file key (fileKey). A path of ASCII characters alone (nearly
// all) is compared with as it is, folded as it is read; only the others
// keep a lower-cased form, one after another in one string, each found by
// where it ends. A string and a slice entry a note for each form were
// about 5 MB at 100,000 notes, a copy of each lower-cased path in one
// string 5 MB more; this is 4 bytes a note and the lower-cased bytes of
// the few paths beyond ASCII.
type pathTable struct {
	paths []string // sorted; shared, not modified
	lower string   // the lower-cased form of each path beyond ASCII, one after another
	ends  []uint32 // where each path's lower-cased form ends in lower (an ASCII path's: where the last ends)
}

// newPathTable makes the table of paths (sorted in place).
func newPathTable(paths []string) *pathTable {
	sort.Strings(paths)
	var b strings.Builder
	ends := make([]uint32, len(paths))
	for i, p := range paths {
		if !isASCII(p) {
			b.WriteString(strings.ToLower(p))
		}
		ends[i] = uint32(b.Len())
	}
	return &pathTable{paths: paths, lower: b.String(), ends: ends}
}

// folded returns the i-th path lower-cased, when it is beyond ASCII (else
// false: the path is its own, folded as it is read).
func (t *pathTable) folded(i int) (string, bool) {
	start := uint32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	if start == t.ends[i] {
		return "", false
	}
	return t.lower[start:t.ends[i]], true
}

// lowerOf returns the i-th path lower-cased: a part of the table, or a new
// string for an ASCII path with capitals.
func (t *pathTable) lowerOf(i int) string {
	if l, ok := t.folded(i); ok {
		return l
	}
	return strings.ToLower(t.paths[i])
}

// hasPrefix reports whether the i-th path lower-cased starts with prefix.
func (t *pathTable) hasPrefix(i int, prefix string) bool {
	if l, ok := t.folded(i); ok {
		return strings.HasPrefix(l, prefix)
	}
	p := t.paths[i]
	return len(p) >= len(prefix) && asciiLowerIs(p[:len(prefix)], prefix)
}

// lowerIs reports whether the i-th path lower-cased is s.
func (t *pathTable) lowerIs(i int, s string) bool {
	if l, ok := t.folded(i); ok {
		return l == s
	}
	return asciiLowerIs(t.paths[i], s)
}

// fileKeyOf returns the file key of the i-th path when it is a part of the
// table, or the span of the path whose ASCII characters lower-cased are
// the key.
func (t *pathTable) fileKeyOf(i int) (key string, span string, folded bool) {
	if l, ok := t.folded(i); ok {
		return lowerFileKey(l), "", true
	}
	// lowerFileKey of an ASCII path lower-cased, cut from the path itself:
	// lower-casing ASCII keeps every byte where it was.
	return "", baseTitle(path.Base(t.paths[i])), false
}

// fileKeyIs reports whether the file key of the i-th path is name.
func (t *pathTable) fileKeyIs(i int, name string) bool {
	key, span, folded := t.fileKeyOf(i)
	if folded {
		return key == name
	}
	return asciiLowerIs(span, name)
}

// fileKeyHas reports whether the file key of the i-th path contains name.
func (t *pathTable) fileKeyHas(i int, name string) bool {
	key, span, folded := t.fileKeyOf(i)
	if folded {
		return strings.Contains(key, name)
	}
	for j := 0; j+len(name) <= len(span); j++ {
		if asciiLowerIs(span[j:j+len(name)], name) {
			return true
		}
	}
	return false
}

// fileKey returns the file key of the i-th path (a new string for an ASCII
// path with capitals).
func (t *pathTable) fileKey(i int) string {
	key, span, folded := t.fileKeyOf(i)
	if folded {
		return key
	}
	return strings.ToLower(span)
}

// asciiLowerIs reports whether s, of ASCII characters, lower-cased is l.
func asciiLowerIs(s, l string) bool {
	if len(s) != len(l) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != l[i] {
			return false
		}
	}
	return true
}
