package archtest

import (
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"
)

// mdRef names a project document (PROTOCOL.md, docs/ARCHITECTURE.md): an
// upper-case markdown file name, unlike the note paths of tests and examples.
var mdRef = regexp.MustCompile(`(?:^|[^-\w])([A-Z][A-Z0-9_]{2,}\.md)\b`)

// TestDocsCiteOnlyTheRepository: the documentation and the code comments
// stand on their own: every markdown file they name is in the repository
// (a reader cannot follow a section of a design note kept elsewhere).
func TestDocsCiteOnlyTheRepository(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	have := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, ".md") {
			have[path.Base(f)] = true
		}
	}
	for _, f := range files {
		if strings.HasPrefix(f, "testdata/") || strings.Contains(f, "/testdata/") || strings.Contains(f, "node_modules/") {
			continue // notes of fixture vaults are data, not documentation
		}
		if !strings.HasSuffix(f, ".md") && !strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, ".mjs") {
			continue
		}
		b, err := os.ReadFile("../../" + f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdRef.FindAllStringSubmatch(string(b), -1) {
			ref := m[1]
			if !have[path.Base(ref)] {
				t.Errorf("%s cites %s, which is not in the repository", f, ref)
			}
		}
	}
}
