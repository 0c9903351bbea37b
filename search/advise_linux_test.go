package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// zapMapping is what /proc/self/smaps says of the process's mappings of
// one segment file.
type zapMapping struct {
	random bool // advised as read at random (VmFlags "rr")
	rssKB  int  // resident kilobytes
}

// zapMappings reads /proc/self/smaps and returns, for each segment file of
// the index at dir mapped by the process, its mappings' advice and
// resident size.
func zapMappings(t *testing.T, dir string) map[string]zapMapping {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	out := map[string]zapMapping{}
	file := ""
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 5 && !strings.HasSuffix(f[0], ":"): // a mapping's first line
			file = ""
			if len(f) >= 6 && strings.HasPrefix(f[5], dir+string(filepath.Separator)) && strings.HasSuffix(f[5], ".zap") {
				file = filepath.Base(f[5])
				out[file] = out[file]
			}
		case len(f) == 3 && f[0] == "Rss:" && file != "":
			kb, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("smaps: %q: %v", l, err)
			}
			m := out[file]
			m.rssKB += kb
			out[file] = m
		case len(f) > 0 && f[0] == "VmFlags:" && file != "" && slices.Contains(f[1:], "rr"):
			m := out[file]
			m.random = true
			out[file] = m
		}
	}
	return out
}

// zapAdvice returns, for each segment file of the index at dir mapped by
// the process, whether its mapping is advised as read at random.
func zapAdvice(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for f, m := range zapMappings(t, dir) {
		out[f] = m.random
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
	idxDir := resolvedIndexDir(t)
	// check settles the index (no merge or persisting left to introduce
	// a segment), searches, and checks the segments of the snapshot the
	// search read: a segment is advised when a search first reads it.
	check := func(ix *Index, when string) {
		t.Helper()
		ix.writeMu.Lock()
		ix.waitSettled(context.Background())
		ix.writeMu.Unlock()
		search(t, ix, Request{Query: "kestrel"})
		adv := zapAdvice(t, idxDir)
		current := snapshotSegments(t, ix)
		if len(current) == 0 {
			t.Fatalf("%s: no segment of %s in the index", when, idxDir)
		}
		for _, f := range current {
			rr, mapped := adv[f]
			if !mapped {
				t.Fatalf("%s: segment %s of the index not mapped (mapped: %v)", when, f, adv)
			}
			if !rr {
				t.Errorf("%s: segment %s mapped with read-ahead (no rr in VmFlags)", when, f)
			}
		}
	}
	ix := openIndex(t, dir, idxDir)
	check(ix, "after the first search")
	before := snapshotSegments(t, ix)

	writeFile(t, dir, "c.md", "# Gamma\nkestrel again, and a hobby\n")
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if res := search(t, ix, Request{Query: "hobby"}); len(res.Results) != 1 {
		t.Fatalf("hobby: %v", paths(res))
	}
	check(ix, "after a change")
	if after := snapshotSegments(t, ix); slices.Equal(after, before) {
		t.Fatalf("the change wrote no segment: %v", after)
	}
}

// snapshotSegments returns the file names of the segments of ix's current
// snapshot, sorted.
func snapshotSegments(t *testing.T, ix *Index) []string {
	t.Helper()
	r := indexReader(t, ix)
	defer r.Close()
	var out []string
	for _, ss := range r.(*scorch.IndexSnapshot).Segments() {
		if p, ok := ss.Segment().(interface{ Path() string }); ok {
			out = append(out, filepath.Base(p.Path()))
		}
	}
	slices.Sort(out)
	return out
}

// resolvedIndexDir is a folder for an index, its symbolic links resolved:
// /proc/self/smaps names the files mapped by their resolved paths.
func resolvedIndexDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "index")
}
