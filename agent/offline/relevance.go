package offline

import (
	"math"
	"path"
	"strings"

	"github.com/vault-agent/vault-agent/search"
)

// Relevance: how much of the question a piece of text holds, each word of
// the question weighted by how rare it is among the notes the search
// found. A word every candidate note has ("plugin" in a vault of plugin
// pages) cannot tell them apart; the word only one of them has usually
// names what the question is about. A word most notes of the whole vault
// have weighs less still: the search reports each word's rarity in the
// vault with its results.

// relevance weighs the goal's terms (goalGroups) for one run.
type relevance struct {
	groups  [][]string
	weights []float64
	total   float64
}

// relevanceOf weighs the goal's terms by their document frequency among
// the notes of the search results and the chunks read: what is known of
// each note (title, path, heading, snippet, text read), damped for a
// word common in the vault (commonIDF).
func (st *convState) relevanceOf(srcs []source) relevance {
	r := relevance{groups: st.goalGroups()}
	known := map[string]*strings.Builder{}
	var order []string
	add := func(p, text string) {
		b, ok := known[p]
		if !ok {
			b = &strings.Builder{}
			known[p] = b
			order = append(order, p)
		}
		b.WriteString(text)
		b.WriteString("\n")
	}
	for _, h := range st.hits() {
		add(h.Path, h.Title+" "+h.Path+" "+h.Heading+" "+reHighlight.ReplaceAllString(h.Snippet, ""))
	}
	if len(order) == 0 {
		for _, s := range srcs {
			add(s.path, s.title+" "+s.path+" "+s.heading+" "+s.content)
		}
	}
	sets := make([]map[string]bool, len(order))
	for i, p := range order {
		sets[i] = stemSet(known[p].String())
	}
	n := float64(len(order))
	vault := st.vaultWeights()
	for _, g := range r.groups {
		df := 0.0
		for _, set := range sets {
			df += groupShare(set, g)
		}
		// A smoothed inverse document frequency: 0.06 for a word in all
		// of 8 notes, 1.8 for one in a single note, 2.9 for one in none.
		w := math.Log((n + 1) / (df + 0.5))
		if df == 0 {
			w = 0 // no note found has it: it cannot tell them apart
		}
		// A word most notes of the vault have ("note", "file" in a vault
		// about an app), or a filler word of questions ("needs"), says
		// little about which note answers, however few of the notes
		// found hold it: it weighs less, in proportion to its rarity in
		// the vault, below that of a word about a fifth of the notes
		// have.
		if vw, ok := groupWeight(vault, g); ok {
			w *= min(1, vw/commonIDF)
		}
		r.weights = append(r.weights, w)
		r.total += w
	}
	return r
}

// commonIDF is the inverse document frequency (BM25's) below which a
// word of the question counts as common in the vault: that of a word
// about a fifth of the notes hold. 1 measures alike on the eval's
// question sets; 2 (a seventh of the notes) drops an expected note from
// two answers.
const commonIDF = 1.5

// vaultWeights are the weights the search gave the words of the goal,
// by stem: the latest search's that has them.
func (st *convState) vaultWeights() map[string]search.TermWeight {
	for i := len(st.searches) - 1; i >= 0; i-- {
		if ts := st.searches[i].terms; len(ts) > 0 {
			m := make(map[string]search.TermWeight, len(ts))
			for _, t := range ts {
				for _, w := range tokenize(t.Word) {
					for _, u := range stems(w) {
						if _, ok := m[u]; !ok {
							m[u] = t
						}
					}
				}
			}
			return m
		}
	}
	return nil
}

// groupWeight is the vault weight of a term of the goal: that of its
// rarest unit the search weighed (a filler word a quarter of it), and
// whether the search weighed any.
func groupWeight(vault map[string]search.TermWeight, g []string) (float64, bool) {
	w, ok := 0.0, false
	for _, u := range g {
		u, _, _ = strings.Cut(u, "|")
		t, found := vault[u]
		if !found {
			continue
		}
		x := t.IDF
		if t.Filler {
			x *= 0.25
		}
		if t.Missing {
			x = 0
		}
		w, ok = max(w, x), true
	}
	return w, ok
}

// groupShare is the share of a term's match units that set holds (a word
// has one unit; a phrase or CJK word several).
func groupShare(set map[string]bool, g []string) float64 {
	hit := 0
	for _, u := range g {
		if hasUnit(set, u) {
			hit++
		}
	}
	return float64(hit) / float64(len(g))
}

// cover is the weighted share of the goal's terms that set holds, 0 to 1.
func (r relevance) cover(set map[string]bool) float64 {
	if r.total <= 0 {
		return 0
	}
	s := 0.0
	for i, g := range r.groups {
		s += r.weights[i] * groupShare(set, g)
	}
	return s / r.total
}

// count is the number of the goal's terms set holds (a phrase counts by
// the share of its units).
func (r relevance) count(set map[string]bool) float64 {
	s := 0.0
	for _, g := range r.groups {
		s += groupShare(set, g)
	}
	return s
}

// titleSet is what a note is named: its title, file name and folders.
func titleSet(s source) map[string]bool {
	return stemSet(s.title + " " + noteName(s.path) + " " + strings.ReplaceAll(path.Dir(s.path), "/", " "))
}

// held reports whether set holds the question: heldCover of its weighted
// terms, or half of its terms counted alike (a term no note found has
// weighs nothing, yet a question whose main word is missing everywhere
// is not answered).
func (r relevance) held(set map[string]bool) bool {
	if len(r.groups) == 0 {
		return true
	}
	return r.cover(set) >= heldCover && r.count(set) >= 0.34*float64(len(r.groups)) || r.count(set) >= 0.5*float64(len(r.groups))
}

// adds is the weighted share of the question that set holds and covered
// does not.
func (r relevance) adds(covered, set map[string]bool) float64 {
	if r.total <= 0 {
		return 0
	}
	s := 0.0
	for i, g := range r.groups {
		if d := groupShare(set, g) - groupShare(covered, g); d > 0 {
			s += r.weights[i] * d
		}
	}
	return s / r.total
}

// score ranks passages of one note: the number of the question's terms a
// passage holds, then their weight. Within a note the count comes first:
// the weights say which words tell the notes found apart, not which part
// of a note answers.
func (r relevance) score(set map[string]bool) float64 {
	return r.count(set) + 0.5*r.cover(set)
}
