package search

import "iter"

// wordCounts counts the notes whose titles and aliases hold each word.
// A word is a map key only from the time it is first counted until no note
// holds it: the counts are kept beside the map, not in it, because storing
// a value under a string key already present also stores the key given,
// and the word a later note gave (a string of its own, made while
// analysing its title) would replace the copy kept in a shared block,
// each pinning a page among the garbage of the analysis (5.5 MB of pages
// for 6,600 words at 100,000 notes).
type wordCounts struct {
	ids  map[string]int32 // a word's place in n
	n    []int32          // the notes holding each word; 0 for a free place
	free []int32          // places in n of words no note holds anymore
}

func newWordCounts() *wordCounts { return &wordCounts{ids: map[string]int32{}} }

// count returns the number of notes holding w (0 for a nil table).
func (v *wordCounts) count(w string) int {
	if v == nil {
		return 0
	}
	if i, ok := v.ids[w]; ok {
		return int(v.n[i])
	}
	return 0
}

// add counts (d = 1) or uncounts (d = -1) a note holding w; a word new to
// the table is copied into words (its own allocation when words is nil).
func (v *wordCounts) add(w string, d int, words *strArena) {
	i, ok := v.ids[w]
	if !ok {
		if d <= 0 {
			return
		}
		if k := len(v.free); k > 0 {
			i, v.free = v.free[k-1], v.free[:k-1]
		} else {
			i = int32(len(v.n))
			v.n = append(v.n, 0)
		}
		v.ids[arenaCopy(words, w)] = i
	}
	if v.n[i] += int32(d); v.n[i] <= 0 {
		v.n[i] = 0
		delete(v.ids, w)
		v.free = append(v.free, i)
	}
}

// all yields each word held by a note with the number of notes holding it
// (nothing for a nil table).
func (v *wordCounts) all() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		if v == nil {
			return
		}
		for w, i := range v.ids {
			if !yield(w, int(v.n[i])) {
				return
			}
		}
	}
}
