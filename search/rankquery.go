package search

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
)

// fillerWords are words of questions and requests that are not stop words
// of the analyzer but say nothing about which note is meant ("is there a
// way to", "I want to", "how can I get"). They weigh fillerWeight of a
// content word and are never needed for a note to match.
var fillerWords = strings.Fields(`way ways want wants wanted need needs needed like likes get gets getting got
make makes making use uses using used know knows thing things something anything anyone someone somebody
everything everyone possible able would could might must shall also really actually please can't cannot
don't doesn't didn't isn't aren't won't i'm i've i'd let lets tell maybe still even ever whether etc`)

// fillers holds the analyzed forms of fillerWords for one analyzer.
type fillers struct {
	once sync.Once
	set  map[string]bool
}

func (f *fillers) of(an analysis.Analyzer) map[string]bool {
	f.once.Do(func() {
		f.set = map[string]bool{}
		for _, w := range fillerWords {
			for _, t := range an.Analyze([]byte(w)) {
				f.set[string(t.Term)] = true
			}
		}
	})
	return f.set
}

// newRankQuery builds the ranked query of the free terms of one group:
// their analyzed tokens (stop words gone, each token once) with filler
// marked, the notes whose title or alias is exactly these words, and the
// field length means. nil when only stop words remain.
func (ix *Index) newRankQuery(texts []string, fuzzAll bool) *rankQuery {
	fill := ix.fill.of(ix.textAn)
	q := &rankQuery{fuzzAll: fuzzAll, stats: &rankStats{}, avg: ix.avgLens()}
	seen := map[string]bool{}
	var content []string
	for _, text := range texts {
		for _, t := range ix.textAn.Analyze([]byte(text)) {
			tok := string(t.Term)
			if seen[tok] {
				continue
			}
			seen[tok] = true
			q.words = append(q.words, rankWord{token: tok, filler: fill[tok]})
			if !fill[tok] {
				content = append(content, tok)
			}
		}
	}
	if len(q.words) == 0 {
		return nil
	}
	full := titleKey(ix.textAn, strings.Join(texts, " "))
	q.exact = ix.exactTitles(full)
	sort.Strings(content)
	if k := strings.Join(content, " "); k != full && k != "" {
		q.exact = append(q.exact, ix.exactTitles(k)...)
	}
	return q
}

// titleKey is the key of a title, an alias or a query for exact matching:
// its analyzed tokens, sorted, so case, diacritics, punctuation, stop words,
// plurals and word order do not matter.
func titleKey(an analysis.Analyzer, s string) string {
	toks := an.Analyze([]byte(s))
	if len(toks) == 0 {
		return ""
	}
	words := make([]string, len(toks))
	for i, t := range toks {
		words[i] = string(t.Term)
	}
	sort.Strings(words)
	return strings.Join(words, " ")
}

// exactTitles returns the notes whose title or alias has key. The map of
// title keys is built on first use and kept up to date by the writer.
func (ix *Index) exactTitles(key string) []string {
	if key == "" {
		return nil
	}
	ix.mu.RLock()
	if ix.titleIdx != nil {
		defer ix.mu.RUnlock()
		return append([]string(nil), ix.titleIdx[key]...)
	}
	ix.mu.RUnlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.titleIdx == nil {
		ix.titleIdx = make(map[string][]string, len(ix.meta))
		for _, m := range ix.meta {
			ix.titleChanged(nil, m)
		}
	}
	return append([]string(nil), ix.titleIdx[key]...)
}

// titleChanged updates the title keys for a note replaced (old or m may be
// nil); called with mu held for writing.
func (ix *Index) titleChanged(old, m *NoteMeta) {
	if ix.titleIdx == nil {
		return
	}
	if old != nil {
		for _, k := range ix.noteTitleKeys(old) {
			ps := ix.titleIdx[k]
			for i, p := range ps {
				if p == old.Path {
					ps = append(ps[:i:i], ps[i+1:]...)
					break
				}
			}
			if len(ps) == 0 {
				delete(ix.titleIdx, k)
			} else {
				ix.titleIdx[k] = ps
			}
		}
	}
	if m != nil {
		for _, k := range ix.noteTitleKeys(m) {
			ix.titleIdx[k] = append(ix.titleIdx[k], m.Path)
		}
	}
}

func (ix *Index) noteTitleKeys(m *NoteMeta) []string {
	var keys []string
	for _, s := range append([]string{m.Title}, m.Aliases...) {
		if k := titleKey(ix.textAn, s); k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}
