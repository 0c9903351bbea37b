//go:build linux

package memtrim

import (
	"os"
	"testing"
)

// TestReleaseCode releases the test binary's read-only pages and checks
// that fewer stay resident and that the code still runs.
func TestReleaseCode(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	resident := func() int64 {
		maps, err := readOnlyMappings(exe)
		if err != nil {
			t.Fatal(err)
		}
		if len(maps) == 0 {
			t.Fatalf("no read-only mapping of %s", exe)
		}
		var n int64
		for _, m := range maps {
			n += m.rss
		}
		return n
	}
	before := resident()
	r, err := ReleaseCode()
	if err != nil {
		t.Fatal(err)
	}
	after := resident()
	if r.Mappings == 0 || r.Bytes < before/2 {
		t.Errorf("released %d mappings, %d bytes; %d were resident", r.Mappings, r.Bytes, before)
	}
	if after >= before/2 {
		t.Errorf("resident read-only pages %d bytes after the release, %d before", after, before)
	}
	t.Logf("resident read-only pages: %d kB before, %d kB after", before>>10, after>>10)
}
