package search

import (
	"fmt"
	"testing"
)

// The search reports each word of the query with its rarity in the
// vault, once: a word every note has weighs least, and a word no note
// holds is missing.
func TestMatchTermsWeighTheWords(t *testing.T) {
	files := map[string]string{}
	for i := range 8 {
		files[fmt.Sprintf("day %d.md", i)] = fmt.Sprintf("Weekly review of day %d: nothing to report.\n", i)
	}
	files["Ferns.md"] = "Weekly misting keeps the ferns green.\n"
	ix := openIndex(t, writeVault(t, files), "")
	res := search(t, ix, Request{Query: "weekly ferns qwzxv"})
	got := map[string]TermWeight{}
	for _, tw := range res.Match.Terms {
		if _, dup := got[tw.Word]; dup {
			t.Errorf("%q reported twice: %+v", tw.Word, res.Match.Terms)
		}
		got[tw.Word] = tw
	}
	weekly, ferns, absent := got["weekly"], got["ferns"], got["qwzxv"]
	if len(got) != 3 || weekly.Missing || ferns.Missing || !absent.Missing {
		t.Fatalf("terms %+v", res.Match.Terms)
	}
	if weekly.IDF <= 0 || ferns.IDF <= 2*weekly.IDF {
		t.Errorf("weekly (in every note) %.2f, ferns (in one) %.2f", weekly.IDF, ferns.IDF)
	}
}
