package search

import "testing"

// A byte that is not UTF-8 must not hide the words next to it: the rest of
// the line indexes normally.
func TestInvalidUTF8KeepsNeighbouringWords(t *testing.T) {
	dir := writeVault(t, map[string]string{
		"broken.md": "# Notes\n\nalpha\xffbravo charlie\xc3 delta \xe2\x82echo\n",
		"other.md":  "# Other\n\nnothing to see",
	})
	ix := openIndex(t, dir, "")
	for _, q := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		res := search(t, ix, Request{Query: q})
		if len(res.Results) != 1 || res.Results[0].Path != "broken.md" {
			t.Errorf("search %q: results = %v, want broken.md", q, paths(res))
		}
	}
}
