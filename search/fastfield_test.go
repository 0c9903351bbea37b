package search

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/vault-agent/vault-agent/vault"
)

// TestFastFieldsAnalyseAsBleve checks that the slab-allocated analysis
// gives exactly what bleve's TextField.Analyze gives, field by field, for
// every note of the fixture vaults (and of the vaults named by
// $VAULT_AGENT_FASTFIELD_VAULTS, colon-separated, when set): the same
// lengths, terms, frequencies and locations in the same order.
func TestFastFieldsAnalyseAsBleve(t *testing.T) {
	dirs := []string{filepath.Join("..", "testdata", "vault")}
	if v := os.Getenv("VAULT_AGENT_FASTFIELD_VAULTS"); v != "" {
		dirs = append(dirs, strings.Split(v, ":")...)
	}
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	var notes, fields int
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			info, err := d.Info()
			if err != nil {
				return err
			}
			n := vault.ParseForIndex(filepath.ToSlash(rel), raw, info.ModTime())
			in := &inbound{anchors: []string{"Some Anchor's text"}, texts: []string{"A sentence linking here, with café and 東京."}}
			want := document.NewDocument(n.Path)
			got := document.NewDocument(n.Path)
			for _, d := range []*document.Document{want, got} {
				if err := m.MapDocument(d, noteDocument(n, in)); err != nil {
					t.Fatal(err)
				}
			}
			fastFields(got, fusedChainFor(m.AnalyzerNamed(textAnalyzer)), true)
			if len(got.Fields) != len(want.Fields) {
				t.Fatalf("%s: %d fields, want %d", p, len(got.Fields), len(want.Fields))
			}
			// The mapping walks a map: fields come in any order.
			byKey := map[string]index.Field{}
			for _, gf := range got.Fields {
				byKey[gf.Name()+fmt.Sprint(gf.ArrayPositions())] = gf
			}
			for _, wf := range want.Fields {
				gf := byKey[wf.Name()+fmt.Sprint(wf.ArrayPositions())]
				if !wf.Options().IsIndexed() {
					continue
				}
				if gf == nil {
					t.Fatalf("%s: field %s missing", p, wf.Name())
				}
				wf.Analyze()
				gf.Analyze()
			}
			// Compared once every field is analysed: what one field's
			// analysis gave must survive the next (pooled tokens).
			for _, wf := range want.Fields {
				if !wf.Options().IsIndexed() {
					continue
				}
				gf := byKey[wf.Name()+fmt.Sprint(wf.ArrayPositions())]
				fields++
				if gf.AnalyzedLength() != wf.AnalyzedLength() {
					t.Fatalf("%s field %s: length %d, want %d", p, wf.Name(), gf.AnalyzedLength(), wf.AnalyzedLength())
				}
				if d := diffFreqs(gf.AnalyzedTokenFrequencies(), wf.AnalyzedTokenFrequencies()); d != "" {
					t.Fatalf("%s field %s: %s", p, wf.Name(), d)
				}
			}
			notes++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if notes == 0 || fields == 0 {
		t.Fatal("no notes analysed")
	}
	t.Logf("%d notes, %d fields identical", notes, fields)
}

// TestFastFieldMergeKeepsNeighbours checks that merging the frequencies of
// two fields of one name (as the segment builder does for array values)
// does not write into another term's locations.
func TestFastFieldMergeKeepsNeighbours(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	doc := document.NewDocument("a.md")
	if err := m.MapDocument(doc, map[string]interface{}{fHeadings: []string{"alpha beta alpha", "gamma delta epsilon alpha"}}); err != nil {
		t.Fatal(err)
	}
	fastFields(doc, fusedChainFor(m.AnalyzerNamed(textAnalyzer)), true)
	var tfs []index.TokenFrequencies
	for _, f := range doc.Fields {
		if f.Name() == fHeadings {
			f.Analyze()
			tfs = append(tfs, f.AnalyzedTokenFrequencies())
		}
	}
	if len(tfs) != 2 {
		t.Fatalf("%d heading fields", len(tfs))
	}
	tfs[0].MergeAll(fHeadings, tfs[1])
	alpha, beta := tfs[0]["alpha"].Locations, tfs[0]["beta"].Locations
	if len(alpha) != 3 || alpha[0].Position != 1 || alpha[1].Position != 3 {
		t.Fatalf("alpha's locations after the merge: %+v", alpha)
	}
	if len(beta) != 1 || beta[0].Position != 2 {
		t.Fatalf("beta's location was overwritten by the merge: %+v", beta[0])
	}
}

func diffFreqs(got, want index.TokenFrequencies) string {
	if len(got) != len(want) {
		return "different number of terms: " + itoa(len(got)) + " vs " + itoa(len(want)) + " " + strings.Join(keysOf(got), ",") + " / " + strings.Join(keysOf(want), ",")
	}
	for k, w := range want {
		g := got[k]
		if g == nil {
			return "missing term " + k
		}
		if string(g.Term) != string(w.Term) || g.Frequency() != w.Frequency() || len(g.Locations) != len(w.Locations) {
			return "term " + k + " differs"
		}
		for i := range w.Locations {
			if !reflect.DeepEqual(*g.Locations[i], *w.Locations[i]) {
				return "term " + k + " location differs"
			}
		}
	}
	return ""
}

func keysOf(tfs index.TokenFrequencies) []string {
	var ks []string
	for k := range tfs {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// BenchmarkTokenFrequencies compares the slab-allocated frequencies with
// bleve's analysis.TokenFrequency on the analysed body of a long note.
func BenchmarkTokenFrequencies(b *testing.B) {
	m, err := newMapping()
	if err != nil {
		b.Fatal(err)
	}
	var body strings.Builder
	for body.Len() < 8000 {
		body.WriteString("Sync between devices keeps the vault's notes in step; a note edited on the phone reaches the laptop within seconds. ")
	}
	toks := m.AnalyzerNamed(textAnalyzer).Analyze([]byte(body.String()))
	opts := index.IndexField | index.IncludeTermVectors
	b.Run("slab", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			tokenFrequencies(toks, nil, opts, true)
		}
	})
	b.Run("bleve", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			analysis.TokenFrequency(toks, nil, opts)
		}
	})
}

// TestFusedChainAsFilters checks that the text analyzer's filters run
// fused give what they give one after the other, on tokens that take each
// branch: possessives with each apostrophe, capitals, stop words in
// capitals, words over the length limit (ASCII and not), non-ASCII words
// (a final sigma, a ligature, letters that lower-case wider), numbers, and
// a bare "'s".
func TestFusedChainAsFilters(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	a, ok := m.AnalyzerNamed(textAnalyzer).(*analysis.DefaultAnalyzer)
	if !ok {
		t.Fatal("the text analyzer is not a DefaultAnalyzer")
	}
	fc := newFusedChain(a.TokenFilters)
	if fc == nil {
		t.Fatal("the text analyzer's filters are not recognised: the fused chain is never used")
	}
	text := "The Cat's cats' CAT'S ZEBRA Zig Dog’s Bird＇s THE And aNd running Runs 42 3.14 x's " +
		strings.Repeat("Long", 16) + " " + strings.Repeat("Longer", 11) + " " + strings.Repeat("é", 65) + " " +
		"ΣΑΣ Café MÜLLER straße ﬁsh Ⱥpple İstanbul naïve's o'clock don't I'm 東京 'S"
	run := func(fused bool) []string {
		v := []byte(text)
		var tw tokenWriter
		tw.pos = 1
		tw.tokenize(v)
		tokens := tw.out
		if fused {
			tokens = fc.filter(tokens)
		} else {
			for _, f := range a.TokenFilters {
				tokens = f.Filter(tokens)
			}
		}
		var out []string
		for _, tok := range tokens {
			out = append(out, fmt.Sprintf("%q@%d[%d:%d]", tok.Term, tok.Position, tok.Start, tok.End))
		}
		return out
	}
	want, got := run(false), run(true)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fused:\n%v\nfilters one after the other:\n%v", got, want)
	}
	if len(want) < 20 {
		t.Errorf("only %d tokens: %v", len(want), want)
	}
	// A chain that differs (no stemming) is not fused.
	if newFusedChain(a.TokenFilters[:5]) != nil {
		t.Error("a chain without the stemmer was taken for the text analyzer's")
	}
}

// TestFastFieldsWithoutOffsets checks that fields analysed for the index
// (without offsets) have the same terms, frequencies, positions and array
// positions as with them, and no byte offsets.
func TestFastFieldsWithoutOffsets(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	n := vault.ParseForIndex("a.md", []byte("# Café notes\n## One heading\n## Two headings\nThe body's words, and more words: café, Müller.\n"), time.Unix(1, 0))
	fused := fusedChainFor(m.AnalyzerNamed(textAnalyzer))
	freqs := map[bool]map[string]index.TokenFrequencies{}
	for _, offsets := range []bool{true, false} {
		doc := document.NewDocument(n.Path)
		if err := m.MapDocument(doc, noteDocument(n, nil)); err != nil {
			t.Fatal(err)
		}
		fastFields(doc, fused, offsets)
		freqs[offsets] = map[string]index.TokenFrequencies{}
		for _, f := range doc.Fields {
			if f.Options().IsIndexed() {
				f.Analyze()
				freqs[offsets][f.Name()+fmt.Sprint(f.ArrayPositions())] = f.AnalyzedTokenFrequencies()
			}
		}
	}
	locations := 0
	for k, with := range freqs[true] {
		without := freqs[false][k]
		for term, tf := range with {
			tf2 := without[term]
			if tf2 == nil || tf2.Frequency() != tf.Frequency() || len(tf2.Locations) != len(tf.Locations) {
				t.Fatalf("%s %q: %+v, with offsets %+v", k, term, tf2, tf)
			}
			for i, l := range tf.Locations {
				l2 := tf2.Locations[i]
				if l2.Position != l.Position || !slices.Equal(l2.ArrayPositions, l.ArrayPositions) || l2.Start != 0 || l2.End != 0 {
					t.Errorf("%s %q: location %+v, with offsets %+v", k, term, *l2, *l)
				}
				if l.End > l.Start {
					locations++
				}
			}
		}
		if len(without) != len(with) {
			t.Errorf("%s: %d terms, with offsets %d", k, len(without), len(with))
		}
	}
	if locations < 10 {
		t.Errorf("only %d locations with offsets", locations)
	}
}
