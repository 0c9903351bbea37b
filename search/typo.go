package search

import (
	"sort"
	"unicode/utf8"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/vault-agent/vault-agent/vault"
)

// Typos. A query word is corrected when the index does not hold it, or
// holds it in so few notes that a spelling one edit away, in many more
// notes, is far likelier what was meant (a typo that made it into a note
// or two). Corrections are looked up in the terms of the title, headings
// and body, never in URLs: a URL's words ("gh", "utm", hashes) are not
// words anyone means. As in most search engines the first letter must be
// right: typos there are rare, and it keeps the dictionary walk short.
// Distances are optimal string alignment distances, so a transposition
// ("zettlekasten", "tempalter") is one edit. Words of 4 to 7 letters (as
// stemmed) get one edit, longer ones two: two edits turn a short word into
// too many others ("magazin" into a name, "myazin"). Only the closest spellings are kept, the most
// frequent first, and only those in at least a quarter as many notes as the
// best: a rare word one edit away must not hijack the query.

const (
	// maxCorrections is how many spellings a word may be corrected to.
	maxCorrections = 2
	// rareDF is the most notes a word may be in and still be corrected
	// to a spelling in correctionRatio times as many notes.
	rareDF          = 3
	correctionRatio = 20
)

type correction struct {
	token string
	df    uint64
	dist  int
}

// corrections returns the likely intended spellings of an analyzed token
// held by df notes (see above); all forces a search for corrections of any
// word of 4+ letters, whatever its df (the fuzzy fallback when nothing
// matched).
func corrections(r index.IndexReader, token string, df uint64, all bool) []correction {
	n := utf8.RuneCountInString(token)
	if n < 4 || (!all && df > rareDF) {
		return nil
	}
	fr, ok := r.(index.IndexReaderFuzzy)
	if !ok {
		return nil
	}
	limit := 1
	if n >= 8 && (df == 0 || all) {
		limit = 2
	}
	first, _ := utf8.DecodeRuneInString(token)
	found := map[string]uint64{}
	for _, f := range rankFields {
		if !f.fuzzy {
			continue
		}
		// Levenshtein distance 2 covers a transposition (OSA distance 1).
		fd, err := fr.FieldDictFuzzy(f.name, token, min(2, limit+1), string(first))
		if err != nil {
			continue
		}
		for {
			de, err := fd.Next()
			if err != nil || de == nil {
				break
			}
			if de.Term != token {
				found[de.Term] = max(found[de.Term], de.Count)
			}
		}
		fd.Close()
	}
	var cands []correction
	for t, c := range found {
		d := vault.OSADistance(token, t, limit+1)
		if d > limit {
			continue
		}
		if df > 0 && (d > 1 || c < correctionRatio*df) {
			continue
		}
		cands = append(cands, correction{t, c, d})
	}
	if len(cands) == 0 {
		return nil
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		if cands[i].df != cands[j].df {
			return cands[i].df > cands[j].df
		}
		return cands[i].token < cands[j].token
	})
	out := cands[:1]
	for _, c := range cands[1:] {
		if len(out) == maxCorrections || c.dist != out[0].dist || c.df*4 < out[0].df {
			break
		}
		out = append(out, c)
	}
	return out
}
