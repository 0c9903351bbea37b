package search

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/vault-agent/vault-agent/vault"
)

// fillerWords are words of questions and requests that are not stop words
// of the analyzer but say nothing about which note is meant ("is there a
// way to", "I want to", "how can I get"), nor the words that frame a
// comparison ("the difference between X and Y", "X versus Y": the notes
// about X and Y answer it, not a note that says "difference"). They weigh
// fillerWeight of a content word and are never needed for a note to match.
var fillerWords = strings.Fields(`way ways want wants wanted need needs needed like likes get gets getting got
make makes making use uses using used know knows thing things something anything anyone someone somebody
everything everyone possible able would could might must shall also really actually please can't cannot
don't doesn't didn't isn't aren't won't i'm i've i'd let lets tell maybe still even ever whether etc
difference differences versus vs compare comparing comparison
summarize summarise summary explain describe`)

// owners and noteWords make "my notes", "our note", "your notes" filler.
var (
	owners    = map[string]bool{"my": true, "our": true, "your": true}
	noteWords = map[string]bool{"note": true, "notes": true}
)

// Questions of "how" are framed by words that name no subject. Right
// after "how", a word asking for an amount: "how far can I jump", "how long
// is a short rest". And the verb of "how does X work" (also "how do tags
// work in Obsidian", "how does concentration work for spells"): the
// question's own verb, its subject no pronoun, at the end or before a
// preposition. These are not searched for; elsewhere they are: "how do I
// find remote work", "how does remote work affect sleep", "the far realm".
// Weighed even as filler, "work" ranked first the notes saying "worked"
// in a vault where "advantage" is in every other note.
var (
	howFrames = map[string]bool{"far": true, "long": true, "often": true, "much": true, "many": true,
		"big": true, "old": true, "large": true, "soon": true, "fast": true, "tall": true, "high": true}
	howAux       = map[string]bool{"does": true, "do": true, "did": true}
	howPronouns  = map[string]bool{"i": true, "we": true, "you": true, "they": true, "it": true, "one": true}
	prepositions = map[string]bool{"for": true, "in": true, "with": true, "on": true, "at": true, "when": true,
		"if": true, "inside": true, "across": true, "between": true, "under": true, "during": true}
)

// requestVerbs open a request, when one of requestObjects follows them:
// "list the tools for fuzzing", "show me my notes about kerberos", "give
// me examples of ...". They are not searched for, as the frame of a
// question of "how" is not. Not in "list comprehension", "show hidden
// files".
var (
	requestVerbs   = map[string]bool{"list": true, "show": true, "give": true, "find": true, "fetch": true, "get": true}
	requestObjects = map[string]bool{"the": true, "all": true, "my": true, "me": true, "us": true, "some": true, "every": true,
		"any": true, "our": true, "each": true, "a": true, "an": true}
)

// articles are the stop words that a name written as one word leaves out
// when it is said in words ("add a command" for addCommand).
var articles = map[string]bool{"a": true, "an": true, "the": true}

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

// maxQueryTokens bounds the distinct words of a ranked group read at all;
// the most distinctive maxRankWords of them are searched for.
const maxQueryTokens = 256

// newRankQuery builds the ranked query of the free terms of one group:
// their analyzed tokens (stop words gone, each token once) with filler
// marked, the notes whose title or alias is exactly these words, and the
// field length means. nil when only stop words remain.
func (ix *Index) newRankQuery(texts []string, fuzzAll bool) *rankQuery {
	fill := ix.fill.of(ix.textAn)
	q := &rankQuery{fuzzAll: fuzzAll, stats: &rankStats{}, avg: ix.avgLens(), titleFixes: ix.titleFixes}
	seen := map[string]bool{}
	var content []string
	prev := ""     // the surface form of the previous word, if right before this one
	owner := false // the previous text was "my", "our" or "your"
	frames := howFraming(ix.textAn, texts)
	for ti, text := range texts {
		if frames != nil && frames[ti] {
			prev = ""
			continue
		}
		toks := ix.textAn.Analyze([]byte(text))
		mine := owner
		owner = owners[strings.ToLower(text)]
		if len(toks) == 0 && !articles[strings.ToLower(text)] {
			prev = "" // a stop word stood between; an article does not part a name ("add a command": addCommand)
		}
		for k, t := range toks {
			tok := string(t.Term)
			surface := strings.ToLower(text[t.Start:t.End])
			if k > 0 && t.Position != toks[k-1].Position+1 {
				prev = ""
			}
			if n := len(q.words); n > 0 && n < maxRankWords && prev != "" && q.words[n-1].joined == "" {
				if j := ix.textAn.Analyze([]byte(prev + surface)); len(j) == 1 {
					q.words[n-1].joined = string(j[0].Term)
				}
			}
			prev = surface
			if seen[tok] || len(q.words) >= maxQueryTokens {
				prev = ""
				continue
			}
			seen[tok] = true
			// "my notes" frames a request ("summarize my notes on
			// TCP"); "a new note" is what it is about.
			filler := fill[tok] || mine && k == 0 && noteWords[surface]
			q.words = append(q.words, rankWord{token: tok, surface: surface, filler: filler})
			if !filler {
				content = append(content, tok)
			}
		}
	}
	if len(q.words) == 0 {
		return nil
	}
	if len(q.words) <= maxRankWords {
		// Other spellings are looked for in questions, not in pasted
		// pages, and never for filler.
		for i, w := range q.words {
			if !w.filler {
				q.words[i].variants = ix.variantTokens(w.surface, w.token)
			}
		}
	}
	text := strings.Join(texts, " ")
	full := titleKey(ix.textAn, text)
	q.exact = ix.exactTitles(full)
	sort.Strings(content)
	if k := strings.Join(content, " "); k != full && k != "" {
		q.exact = append(q.exact, ix.exactTitles(k)...)
	}
	q.literal = ix.literalTitles(q.exact, text)
	if len(q.exact) == 0 && len(q.words) <= maxRankWords && len(texts) > 0 && questionWords[bareWord(texts[0])] {
		q.named = ix.namedTitles(q.words)
	}
	return q
}

// bareWord is a word of a query lower-cased, without the punctuation
// around it ("work?", "(how").
func bareWord(t string) string {
	return strings.TrimFunc(strings.ToLower(t), unicode.IsPunct)
}

// questionWords open a question.
var questionWords = map[string]bool{"what": true, "what's": true, "which": true, "who": true, "whom": true, "whose": true,
	"when": true, "where": true, "why": true, "how": true, "is": true, "are": true, "does": true, "do": true, "can": true}

// namedTitles are the notes whose title or alias is the longest run of
// two or more of a question's words, in its order, short of all of them:
// the note the question names, and asks something of ("what is the range
// of magic missile": Magic Missile, not Jim's Magic Missile). Not in a
// list of keywords, whose words all say what is looked for ("heapify
// binary heap" is not asking about the note Binary Heap), nor in a pasted
// page (more than maxRankWords words), whose runs are too many to look up.
func (ix *Index) namedTitles(words []rankWord) []string {
	for n := len(words) - 1; n >= minNamedWords; n-- {
		var found []string
		for i := 0; i+n <= len(words); i++ {
			span := words[i : i+n]
			toks := make([]string, 0, n)
			for _, w := range span {
				if w.filler {
					break
				}
				toks = append(toks, w.token)
			}
			if len(toks) < n {
				continue
			}
			sort.Strings(toks)
			found = append(found, ix.exactTitles(strings.Join(toks, " "))...)
		}
		if len(found) > 0 {
			return found
		}
	}
	return nil
}

// variantTokens are the tokens of the other spellings of a word
// (SpellingVariants), without its own token.
func (ix *Index) variantTokens(surface, tok string) []string {
	var out []string
	for _, v := range SpellingVariants(surface) {
		for _, t := range ix.textAn.Analyze([]byte(v)) {
			if s := string(t.Term); s != tok && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// howFraming marks the texts that frame a question of "how" (howFrames)
// or a request (requestVerbs): they are left out of the ranking, unless
// nothing else is left to rank (an is the text analyzer).
func howFraming(an analysis.Analyzer, texts []string) []bool {
	if len(texts) < 2 {
		return nil
	}
	lower := make([]string, len(texts))
	for i, t := range texts {
		lower[i] = bareWord(t)
	}
	frames := make([]bool, len(texts))
	any := false
	if requestVerbs[lower[0]] && requestObjects[lower[1]] {
		// A request: "list the tools for fuzzing", "show me my notes
		// about kerberos".
		frames[0], any = true, true
	} else if len(texts) < 3 || lower[0] != "how" {
		return nil
	}
	if lower[0] == "how" && howFrames[lower[1]] {
		frames[1], any = true, true
	}
	if lower[0] == "how" && len(lower) > 2 && howAux[lower[1]] && !howPronouns[lower[2]] {
		for i := 3; i < len(lower); i++ {
			if lower[i] == "work" || lower[i] == "works" {
				if i+1 == len(lower) || prepositions[lower[i+1]] {
					frames[i], any = true, true
				}
				break
			}
		}
	}
	if !any {
		return nil
	}
	for i, t := range texts {
		if !frames[i] && len(an.Analyze([]byte(t))) > 0 {
			return frames
		}
	}
	return nil
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

// exactTitles returns the notes whose title or alias has key. The index of
// title keys is built on first use and kept up to date by the writer; it
// gives the notes whose keys hash as key does, each checked here.
func (ix *Index) exactTitles(key string) []string {
	if key == "" {
		return nil
	}
	ix.buildTitles()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.titleIdx == nil { // replaced meanwhile (a reopen): none, as before it was built
		return nil
	}
	cands := ix.titleIdx.candidates(key)
	out := cands[:0]
	for _, p := range cands {
		if m := ix.meta.get(p); m != nil && slices.Contains(ix.noteTitleKeys(m), key) {
			out = append(out, p)
		}
	}
	return out
}

// literalTitles returns the notes of exact whose title or alias is text
// as typed, but for case and spacing.
func (ix *Index) literalTitles(exact []string, text string) []string {
	if len(exact) == 0 {
		return nil
	}
	want := literalKey(text)
	var out []string
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, p := range exact {
		m := ix.meta.get(p)
		if m == nil || slices.Contains(out, p) {
			continue
		}
		if slices.ContainsFunc(m.names(), func(n string) bool { return literalKey(n) == want }) {
			out = append(out, p)
		}
	}
	return out
}

// literalKey is s lower-cased, its words single-spaced, without the
// punctuation around them ("Modals?" is "modals").
func literalKey(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = bareWord(w)
	}
	return strings.Join(slices.DeleteFunc(words, func(w string) bool { return w == "" }), " ")
}

// buildTitles builds the title keys and words of the notes if needed. The
// titles are analysed without holding mu for writing, so searches and
// metadata reads go on meanwhile; a build overtaken by a change of the
// metadata is dropped and done again.
func (ix *Index) buildTitles() {
	var idx *titleIndex
	var vocab *wordCounts
	ix.buildTable(func(notes *noteMap) {
		// The keys are gathered first and the index made of them in one
		// go, and the words kept copied into blocks of their own: each
		// object kept, made one at a time among the garbage of analysing
		// 100,000 titles, left its page all but empty (a list growing for
		// each note of an alias many share, each new word), about 20 MB of
		// pages at 100,000 notes holding under 2 MB.
		idx = newTitleIndex()
		entries := make([]hashEntry, 0, notes.len()+notes.len()/4)
		// Not sized by the notes: titles share most of their words, and
		// the map would keep room for ten times the words it holds.
		vocab = newWordCounts()
		words := &strArena{}
		for m := range notes.all() {
			for _, h := range idx.hashes(ix.noteTitleKeys(m)) {
				entries = append(entries, entryOf(h, m.Path))
			}
			addTitleWords(vocab, m, 1, words)
		}
		idx.fill(entries)
	}, func(old, m *noteRec) {
		ix.titlesChanged(idx, vocab, old, m)
	}, func() bool {
		return ix.titleIdx != nil
	}, func() {
		ix.titleIdx, ix.titleVocab = idx, vocab
	})
}

// titleFixes returns the tokens of the words of note titles and aliases one
// edit from word (two for words of 8+ letters), with the same first letter, closest
// first: what a misspelt word likely meant, when the misspelling hides a
// suffix the stemmed index cannot see past ("validaton" for "validation",
// which the index holds as "valid").
func (ix *Index) titleFixes(word string) []string {
	word = strings.ToLower(word)
	if !isASCII([]byte(word)) {
		word = string(asciiFolder.Filter([]byte(word)))
	}
	n := utf8.RuneCountInString(word)
	if n < 4 {
		return nil
	}
	limit := 1
	if n >= 8 {
		limit = 2
	}
	ix.buildTitles()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.titleVocab.count(word) > 0 {
		return nil
	}
	first, _ := utf8.DecodeRuneInString(word)
	type cand struct {
		w    string
		d, c int
	}
	var cands []cand
	for w, c := range ix.titleVocab.all() {
		r, _ := utf8.DecodeRuneInString(w)
		if r != first || abs(utf8.RuneCountInString(w)-n) > limit {
			continue
		}
		if d := vault.OSADistance(word, w, limit+1); d <= limit {
			cands = append(cands, cand{w, d, c})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].d != cands[j].d {
			return cands[i].d < cands[j].d
		}
		if cands[i].c != cands[j].c {
			return cands[i].c > cands[j].c
		}
		return cands[i].w < cands[j].w
	})
	var out []string
	for _, c := range cands {
		if len(out) == maxCorrections || c.d != cands[0].d {
			break
		}
		for _, t := range ix.textAn.Analyze([]byte(c.w)) {
			if tok := string(t.Term); !slices.Contains(out, tok) {
				out = append(out, tok)
			}
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// titleChanged updates the title keys, when built, for a note replaced
// (old or m may be nil); called with mu held for writing.
func (ix *Index) titleChanged(old, m *noteRec) {
	if ix.titleIdx != nil {
		ix.titlesChanged(ix.titleIdx, ix.titleVocab, old, m)
	}
}

// titlesChanged updates idx and vocab, tables of title keys and words, for
// a note replaced (old or m may be nil).
func (ix *Index) titlesChanged(idx *titleIndex, vocab *wordCounts, old, m *noteRec) {
	if old != nil {
		idx.remove(ix.noteTitleKeys(old), old.Path)
	}
	if m != nil {
		idx.add(ix.noteTitleKeys(m), m.Path)
	}
	addTitleWords(vocab, old, -1, nil)
	addTitleWords(vocab, m, 1, nil)
}

// addTitleWords counts (d = 1) or uncounts (d = -1) the words of the title
// and aliases of m in vocab, a word new to it copied into words (when not
// nil).
func addTitleWords(vocab *wordCounts, m *noteRec, d int, words *strArena) {
	if m == nil {
		return
	}
	seen := map[string]bool{}
	for _, s := range m.names() {
		for _, w := range titleWords(s) {
			if !seen[w] {
				seen[w] = true
				vocab.add(w, d, words)
			}
		}
	}
}

func (ix *Index) noteTitleKeys(m *noteRec) []string {
	var keys []string
	for _, s := range m.names() {
		if k := titleKey(ix.textAn, s); k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// standaloneTextAnalyzer is the text analyzer of the mapping, for what
// reads queries without an index (Explain).
var standaloneTextAnalyzer = sync.OnceValue(func() analysis.Analyzer {
	m, err := newMapping()
	if err != nil {
		panic(err) // the mapping is built the same way at every start
	}
	return m.AnalyzerNamed(textAnalyzer)
})
