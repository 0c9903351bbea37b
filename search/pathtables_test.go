package search

import (
	"fmt"
	"path"
	"runtime"
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
		key, lower := tb.fileKey(i), tb.lowerOf(i)
		if key != fileKey(p) || lower != strings.ToLower(p) {
			t.Errorf("%s: file key %q, lower %q", p, key, lower)
		}
		if !within(lower) || !within(key) {
			t.Errorf("%s: the lower-cased path %q or file key %q is a copy, not a part of the table's string", p, lower, key)
		}
	}
}

// TestPathTableSize bounds what the path table keeps beyond the paths
// themselves: each path's lower-cased bytes and 4 bytes, besides the
// slice of paths. A string of each form, or a slice of file keys, costs
// 16 bytes a note more at least.
func TestPathTableSize(t *testing.T) {
	const n = 20000
	ps := make([]string, n)
	bytes := 0
	for i := range ps {
		ps[i] = fmt.Sprintf("Folder %d/Some Note Name %d.md", i%50, i)
		bytes += len(ps[i])
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tb := newPathTable(ps)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ps)
	extra := (float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(bytes)) / n
	t.Logf("%.1f bytes a note besides the lower-cased path", extra)
	if extra > 8 {
		t.Errorf("the path table keeps %.1f bytes a note besides the lower-cased path, want at most 8", extra)
	}
	if tb.lowerOf(n-1) != strings.ToLower(tb.paths[n-1]) {
		t.Errorf("last path %q lower-cased as %q", tb.paths[n-1], tb.lowerOf(n-1))
	}
}
