package search

import (
	"path"
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
		"Alpha.md": "a", "Sub/Beta Note.md": "b", "Été/Gamma.MD.md": "c",
	}), "")
	ps, keys, lower := ix.pathTables()
	if len(ps) != 3 {
		t.Fatalf("paths %v", ps)
	}
	for i, p := range ps {
		if keys[i] != fileKey(p) || lower[i] != strings.ToLower(p) {
			t.Errorf("%s: file key %q, lower %q", p, keys[i], lower[i])
		}
		start := uintptr(unsafe.Pointer(unsafe.StringData(lower[i])))
		k := uintptr(unsafe.Pointer(unsafe.StringData(keys[i])))
		if k < start || k+uintptr(len(keys[i])) > start+uintptr(len(lower[i])) {
			t.Errorf("%s: file key %q is a copy, not a part of the lower-cased path", p, keys[i])
		}
	}
}
