package search

import (
	"path"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestPathTablesShareFileKeys checks that the file key of each path in the
// path tables is its file key, and a substring of its lower-cased path,
// not a copy of its own; and that fileKey reads paths as it always did
// (lower-cased basename, ".md" in any case cut).
func TestPathTablesShareFileKeys(t *testing.T) {
	// What fileKey was before it was cut from the lower-cased path.
	reference := func(p string) string {
		base := path.Base(p)
		if strings.HasSuffix(strings.ToLower(base), ".md") {
			base = base[:len(base)-3]
		}
		return strings.ToLower(base)
	}
	for _, p := range []string{"A/B/Note.MD", "x/ÉTÉ.md", "K\u212Aelvin.Md", "dir/.md", "", "a/b/", "İstanbul.md",
		"bad\xff.md", "notes.txt", "a.md/b", "Σίσυφος.md", "tail.mD"} {
		if got, want := fileKey(p), reference(p); got != want {
			t.Errorf("fileKey(%q) = %q, want %q", p, got, want)
		}
	}

	ix := openIndex(t, writeVault(t, map[string]string{
		"Alpha.md": "a", "Sub/Beta Note.md": "b", "Été/Gamma.MD.md": "c", "İstanbul.md": "d",
	}), "")
	tb := ix.pathTables()
	if len(tb.paths) != 4 || !slices.IsSorted(tb.paths) {
		t.Fatalf("paths %v", tb.paths)
	}
	whole := uintptr(unsafe.Pointer(unsafe.StringData(tb.lower)))
	within := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return p >= whole && p+uintptr(len(s)) <= whole+uintptr(len(tb.lower))
	}
	for i, p := range tb.paths {
		l, folded := tb.folded(i)
		if folded != !isASCII(p) {
			t.Errorf("%s: held lower-cased %v", p, folded)
		}
		if folded && (!within(l) || !within(tb.fileKey(i))) {
			t.Errorf("%s: the lower-cased path %q or file key %q is a copy, not a part of the table's string", p, l, tb.fileKey(i))
		}
	}
}

// TestPathTableAsLowerCased checks that what the path table tells of each
// path is what its lower-cased form and file key (strings.ToLower,
// fileKey) tell, for paths of ASCII characters, held as they are, and
// beyond, held lower-cased.
func TestPathTableAsLowerCased(t *testing.T) {
	ps := []string{"A/B/Note.MD", "x/ÉTÉ.md", "K\u212Aelvin.Md", "dir/.md", "a/b/", "İstanbul.md", "bad\xff.md",
		"notes.txt", "a.md/b", "Σίσυφος.md", "tail.mD", "Daily/2024-01-05.md", "daily/2024-01-05.md", "Projects/Road Map.md",
		"projects/road map.md", "Sub/Beta Note.md", "x.md", ".md", "MD", "Notes/Abc Def.md"}
	tb := newPathTable(slices.Clone(ps))
	probes := []string{"", "a", "a/b", "a/b/note", "a/b/note.md", "x/été", "kelvin", "\u212a", "dir", "daily/",
		"daily/2024-01-05.md", "projects/road", "sub/beta note.md", "notes/abc def.md", "note", "road map", "2024", "abc",
		"istanbul", "i̇stanbul", "σίσυφος", "bad", "tail", "md", ".md", "x", "zzz"}
	for i, p := range tb.paths {
		lower, key := strings.ToLower(p), fileKey(p)
		if got := tb.lowerOf(i); got != lower {
			t.Errorf("%q lower-cased: %q, want %q", p, got, lower)
		}
		if got := tb.fileKey(i); got != key {
			t.Errorf("%q file key: %q, want %q", p, got, key)
		}
		for _, q := range probes {
			if got, want := tb.hasPrefix(i, q), strings.HasPrefix(lower, q); got != want {
				t.Errorf("%q has prefix %q: %v, want %v", p, q, got, want)
			}
			if got, want := tb.lowerIs(i, q), lower == q; got != want {
				t.Errorf("%q lower-cased is %q: %v, want %v", p, q, got, want)
			}
			if got, want := tb.fileKeyIs(i, q), key == q; got != want {
				t.Errorf("%q file key is %q: %v, want %v", p, q, got, want)
			}
			if got, want := tb.fileKeyHas(i, q), strings.Contains(key, q); got != want {
				t.Errorf("%q file key has %q: %v, want %v", p, q, got, want)
			}
		}
	}
}

// TestPathTableSize bounds what the path table keeps beyond the paths
// themselves, for paths of ASCII characters: 4 bytes a note. A
// lower-cased copy of each, or a string or slice entry a note for each
// form, costs 16 bytes a note more at least.
func TestPathTableSize(t *testing.T) {
	const n = 20000
	ps := benchPaths(n)
	var tb *pathTable
	checkHeapPerItem(t, "the path table, besides the paths", n, 6, ps, func() any { tb = newPathTable(ps); return tb })
	if tb.lowerOf(n-1) != strings.ToLower(tb.paths[n-1]) {
		t.Errorf("last path %q lower-cased as %q", tb.paths[n-1], tb.lowerOf(n-1))
	}
}
