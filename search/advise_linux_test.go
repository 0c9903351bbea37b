package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zapAdvice reads /proc/self/smaps and returns, for each segment file of
// the index at dir mapped by the process, whether its mapping is advised
// as read at random (VmFlags "rr").
func zapAdvice(t *testing.T, dir string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	out := map[string]bool{}
	file := ""
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			file = ""
			if strings.HasPrefix(f[5], dir+string(filepath.Separator)) && strings.HasSuffix(f[5], ".zap") {
				file = filepath.Base(f[5])
			}
		case len(f) > 0 && f[0] == "VmFlags:" && file != "":
			out[file] = out[file] || false
			for _, fl := range f[1:] {
				if fl == "rr" {
					out[file] = true
				}
			}
		}
	}
	return out
}

// TestSearchAdvisesSegmentsRandom checks that the segments a search reads
// are mapped without read-ahead, those of the index opened and those a
// later change writes.
func TestSearchAdvisesSegmentsRandom(t *testing.T) {
	dir := writeVault(t, map[string]string{
		"a.md": "# Alpha\nkestrel notes about falcons\n",
		"b.md": "# Beta\nkestrel and merlin\n",
	})
	idxDir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	idxDir = filepath.Join(idxDir, "index")
	check := func(when string) {
		t.Helper()
		adv := zapAdvice(t, idxDir)
		if len(adv) == 0 {
			t.Fatalf("%s: no segment of %s mapped", when, idxDir)
		}
		for f, rr := range adv {
			if !rr {
				t.Errorf("%s: segment %s mapped with read-ahead (no rr in VmFlags)", when, f)
			}
		}
	}
	ix := openIndex(t, dir, idxDir)
	search(t, ix, Request{Query: "kestrel"})
	check("after the first search")
	before := zapAdvice(t, idxDir)

	writeFile(t, dir, "c.md", "# Gamma\nkestrel again, and a hobby\n")
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if res := search(t, ix, Request{Query: "hobby"}); len(res.Results) != 1 {
		t.Fatalf("hobby: %v", paths(res))
	}
	added := 0
	for f := range zapAdvice(t, idxDir) {
		if _, ok := before[f]; !ok {
			added++
		}
	}
	if added == 0 {
		t.Fatal("the sync mapped no new segment")
	}
	check("after a change")
}
