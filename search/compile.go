package search

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/search/query"
)

// How the AST becomes bleve queries.
//
// The free words of one AND group (and words joined by OR) become one
// rankQuery (rank.go): a note needs any one of them, and notes holding more
// of them, and rarer ones, rank first. Requiring a share of the words drops
// the note a paraphrased question is about when it shares only one
// distinctive word with it, so nothing is required. Stop words are dropped
// by the analyzer; a group of nothing else matches nothing, and a query of
// nothing else is ErrEmptyQuery.
//
// Phrases and sub-groups must match and add to the score (free words then
// only rank); tag:, path: and file: (and the structured filters of a
// Request) are non-scoring filters; negations are must-nots, compiled as
// plain bleve queries over the note's own fields: -(a b c) excludes notes
// holding all of a, b and c, as in Obsidian. A group with only filters
// scores every note alike, so such searches are sorted by mtime, newest
// first.
//
// Obsidian's operators: content: and ignore-case: require their value
// (every word of it, as Obsidian does) and score like a phrase, content:
// over the note's text only; [property] and [property:word] are terms of
// the facts field; the operators that look at parts of notes (line:,
// block:, section:, the task operators, match-case:, /regex/, a property
// value its terms cannot decide) are resolved into the set of notes they
// match first (resolve.go), and are filters of that set.
//
// Fuzzy fallback: misspelt words are corrected inside the ranked search
// (typo.go). When a query still matches nothing, Search compiles it again
// correcting every word of 4+ letters, and sets Results.Fuzzy.

// compiled is the result of compiling one node.
type compiled struct {
	q       query.Query
	scoring bool // false: a pure filter, scores nothing
	none    bool // matches nothing (e.g. only stop words)
}

var matchNothing = compiled{none: true}

// snipTerm is an analyzed query term the snippet builder looks for.
type snipTerm struct {
	term  string
	fuzzy int
}

type compiler struct {
	text, cjk analysis.Analyzer
	fuzzy     bool
	// rank builds the ranked query of a group's free terms; nil falls back
	// to plain bleve queries (as for negated groups).
	rank func(texts []string) *rankQuery
	// files returns the paths whose file key matches a file: value; nil
	// falls back to a wildcard query on the file field.
	files func(name string) []string
	// prefix returns the paths starting with a lower-cased prefix; nil
	// falls back to a prefix query on the path keyword.
	paths func(prefix string) []string
	// notes returns the metadata of every note (path:/re/, tag:/re/).
	notes func() []NoteMeta
	// factCount returns how many notes have a fact term (properties.go);
	// nil: unknown, as if none.
	factCount func(term string) int
	terms     []snipTerm
	fuzzed    bool         // at least one term got fuzziness
	ranked    []*rankQuery // the ranked groups
	// onlyStop is set when a group held nothing but stop words and
	// punctuation.
	onlyStop bool
	// nothingElse is set when the whole query matches nothing as
	// compiled (only stop words, or filters no note passes).
	nothingElse bool
	// ops resolves the operators that look at parts of notes; sets are
	// the results of those not negated (their matches go with the
	// results); err is the first error resolving one.
	ops  *opResolver
	sets []*opResult
	err  error
}

func (c *compiler) compile(n Node, negated bool) compiled {
	switch n := n.(type) {
	case Term:
		if !negated && c.rank != nil && !hasCJK(n.Text) {
			return c.and([]Node{n}, false)
		}
		return c.term(n.Text, negated)
	case Phrase:
		return c.phrase(n.Text, negated)
	case Tag:
		if n.Name == "" {
			return compiled{q: query.NewMatchAllQuery()}
		}
		return compiled{q: termQ(fTag, n.Name)}
	case PathPrefix:
		if n.Prefix == "" {
			return compiled{q: query.NewMatchAllQuery()}
		}
		return c.prefix(n.Prefix)
	case File:
		// Like Obsidian's file:, a plain name matches any basename
		// containing it; with * or ? it is a pattern for the whole name.
		// Matching the in-memory path list is much faster than a
		// wildcard query over the term dictionary.
		if c.files != nil {
			ids := c.files(n.Name)
			if len(ids) == 0 {
				return matchNothing
			}
			return compiled{q: query.NewDocIDQuery(ids)}
		}
		pattern := n.Name
		if !strings.ContainsAny(pattern, "*?") {
			pattern = "*" + pattern + "*"
		}
		wq := query.NewWildcardQuery(pattern)
		wq.SetField(fFile)
		return compiled{q: wq}
	case *Content:
		return c.boolean(n.X, negated, contentFields)
	case *Case:
		if !n.Sensitive {
			return c.boolean(n.X, negated, fieldBoosts)
		}
		return c.resolved(n, negated)
	case *Scope:
		return c.resolved(n, negated)
	case *Prop:
		if q, exact := c.compileProp(n); exact {
			return compiled{q: q}
		}
		return c.resolved(n, negated)
	case *Regex:
		if n.Field != "" {
			return c.fieldRegex(n)
		}
		return c.resolved(n, negated)
	case Not:
		x := c.compile(n.X, !negated)
		if x.none {
			return compiled{q: query.NewMatchAllQuery()}
		}
		b := query.NewBooleanQuery(nil, nil, nil)
		b.AddMustNot(x.q)
		return compiled{q: b}
	case And:
		return c.and(n.Items, negated)
	case Or:
		var qs []query.Query
		scoring := false
		items := n.Items
		if !negated && c.rank != nil {
			// Words joined by OR are free terms: any of them matches,
			// and notes with more of them rank first, as in a group.
			var words []Node
			var rest []Node
			for _, it := range items {
				if t, ok := it.(Term); ok && !hasCJK(t.Text) {
					words = append(words, t)
				} else {
					rest = append(rest, it)
				}
			}
			if len(words) > 1 {
				if x := c.and(words, false); !x.none {
					qs = append(qs, x.q)
					scoring = true
				}
				items = rest
			}
		}
		for _, it := range items {
			x := c.compile(it, negated)
			if x.none {
				continue
			}
			qs = append(qs, x.q)
			scoring = scoring || x.scoring
		}
		if len(qs) == 0 {
			return matchNothing
		}
		if len(qs) == 1 {
			return compiled{q: qs[0], scoring: scoring}
		}
		d := query.NewDisjunctionQuery(qs)
		d.SetMin(1)
		return compiled{q: d, scoring: scoring}
	}
	return matchNothing
}

func (c *compiler) and(items []Node, negated bool) compiled {
	var shoulds, musts, filters, nots []query.Query
	var free []string
	positive := 0
	for _, it := range items {
		if nt, ok := it.(Not); ok {
			x := c.compile(nt.X, !negated)
			if !x.none {
				nots = append(nots, x.q)
			}
			continue
		}
		positive++
		if t, ok := it.(Term); ok && !negated && c.rank != nil && !hasCJK(t.Text) {
			free = append(free, t.Text)
			continue
		}
		x := c.compile(it, negated)
		if x.none {
			if _, isTerm := it.(Term); isTerm {
				continue // a stop word: ignore it
			}
			return matchNothing
		}
		switch _, isTerm := it.(Term); {
		case isTerm:
			shoulds = append(shoulds, x.q)
		case x.scoring:
			musts = append(musts, x.q)
		default:
			filters = append(filters, x.q)
		}
	}
	if len(free) > 0 {
		if rq := c.rank(free); rq != nil {
			shoulds = append(shoulds, rq)
			c.ranked = append(c.ranked, rq) // its words join c.terms once searched
			c.fuzzed = c.fuzzed || c.fuzzy
		}
	}
	if positive > 0 && len(shoulds)+len(musts)+len(filters) == 0 {
		c.onlyStop = true
		return matchNothing // only stop words
	}
	b := query.NewBooleanQuery(nil, nil, nil)
	if len(musts) > 0 {
		b.AddMust(musts...)
	}
	if len(shoulds) > 0 {
		b.AddShould(shoulds...)
		switch {
		case negated:
			// -(a b c) excludes notes holding all of a, b and c.
			b.SetMinShould(float64(len(shoulds)))
		case len(musts) > 0:
			// With a phrase or group to match, free terms only rank.
		default:
			// Free terms are ranked, and a note needs one of them;
			// none is required (see rank.go).
			b.SetMinShould(1)
		}
	}
	if len(nots) > 0 {
		b.AddMustNot(nots...)
	}
	var q query.Query = b
	if len(filters) == 1 {
		q = &filteredQuery{q: b, filter: filters[0]}
	} else if len(filters) > 1 {
		q = &filteredQuery{q: b, filter: query.NewConjunctionQuery(filters)}
	}
	return compiled{q: q, scoring: len(shoulds)+len(musts) > 0}
}

// minShould is how many of n free terms a ranked group's best note must
// hold for the results not to be partial.
func minShould(n int) int {
	if n <= 2 {
		return n
	}
	return (n + 1) / 2
}

// prefix matches notes whose lower-cased path starts with p. A prefix query
// expands to one term per matching path (each path is its own keyword), so
// the in-memory path list is used when available.
func (c *compiler) prefix(p string) compiled {
	if c.paths != nil {
		ids := c.paths(p)
		if len(ids) == 0 {
			return matchNothing
		}
		return compiled{q: query.NewDocIDQuery(ids)}
	}
	pq := query.NewPrefixQuery(p)
	pq.SetField(fPath)
	return compiled{q: pq}
}

func termQ(field, term string) query.Query {
	tq := query.NewTermQuery(term)
	tq.SetField(field)
	return tq
}

// term compiles one free term into a disjunction over the weighted fields.
func (c *compiler) term(text string, negated bool) compiled {
	if hasCJK(text) {
		toks := c.cjk.Analyze([]byte(text))
		if len(toks) == 0 {
			return matchNothing
		}
		if !negated {
			for _, t := range toks {
				c.terms = append(c.terms, snipTerm{term: string(t.Term)})
			}
			if longCJKRun(text) {
				return compiled{q: cjkRanked(cjkPairs(toks)), scoring: true}
			}
		}
		return compiled{q: fieldsQuery(text, []fieldBoost{{fTitleCJK, 5}, {fBodyCJK, 1}}, 0), scoring: true}
	}
	toks := c.text.Analyze([]byte(text))
	if len(toks) == 0 {
		return matchNothing
	}
	fuzz := 0
	if c.fuzzy && !negated {
		switch n := utf8.RuneCountInString(text); {
		case n >= 7:
			fuzz = 2
		case n >= 4:
			fuzz = 1
		}
		if fuzz > 0 {
			c.fuzzed = true
		}
	}
	if !negated {
		for _, t := range toks {
			c.terms = append(c.terms, snipTerm{term: string(t.Term), fuzzy: fuzz})
		}
	}
	return compiled{q: fieldsQuery(text, fieldBoosts, fuzz), scoring: true}
}

type fieldBoost = struct {
	field string
	boost float64
}

// A run of Chinese, Japanese or Korean characters is written without
// spaces between its words, and is searched for as its pairs of
// neighbouring characters. A word of two or three characters ("磁盘",
// "解压缩") is found where all its pairs are. A longer run is most often
// several words, a phrase or a whole question ("怎么查看磁盘使用情况",
// how to see disk usage), whose pairs across word boundaries ("看磁") no
// note holds: like the words of a question in other scripts, its pairs
// are ranked, notes holding more of them first, and a note needs a third
// of them (two at least). A "quoted" run is matched as written.
const cjkRankedRunes = 4

// longCJKRun reports whether text holds a run of cjkRankedRunes or more
// CJK characters.
func longCJKRun(text string) bool {
	n := 0
	for _, r := range text {
		if isCJKRune(r) {
			if n++; n >= cjkRankedRunes {
				return true
			}
		} else {
			n = 0
		}
	}
	return false
}

// cjkPairs returns the distinct tokens of an analyzed CJK run.
func cjkPairs(toks analysis.TokenStream) []string {
	var out []string
	for _, t := range toks {
		if s := string(t.Term); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// cjkRanked matches notes holding at least a third (two at least) of pairs in the CJK
// title or text, scored by the pairs they hold.
func cjkRanked(pairs []string) query.Query {
	qs := make([]query.Query, 0, len(pairs))
	for _, p := range pairs {
		t := termQ(fTitleCJK, p)
		t.(*query.TermQuery).SetBoost(5)
		d := query.NewDisjunctionQuery([]query.Query{t, termQ(fBodyCJK, p)})
		d.SetMin(1)
		qs = append(qs, d)
	}
	d := query.NewDisjunctionQuery(qs)
	d.SetMin(float64(min(len(pairs), max(2, (len(pairs)+2)/3))))
	return d
}

func fieldsQuery(text string, fields []fieldBoost, fuzz int) query.Query {
	qs := make([]query.Query, 0, len(fields))
	for _, f := range fields {
		mq := query.NewMatchQuery(text)
		mq.SetField(f.field)
		mq.SetBoost(f.boost)
		mq.SetOperator(query.MatchQueryOperatorAnd)
		if fuzz > 0 {
			mq.SetFuzziness(fuzz)
			mq.SetPrefix(1)
		}
		qs = append(qs, mq)
	}
	d := query.NewDisjunctionQuery(qs)
	d.SetMin(1)
	return d
}

// phrase compiles an exact phrase over title, headings and body.
func (c *compiler) phrase(text string, negated bool) compiled {
	return c.phraseIn(text, negated, []fieldBoost{{fTitle, 5}, {fHeadings, 3}, {fBody, 1}})
}

// phraseIn compiles an exact phrase over fields (with term vectors).
func (c *compiler) phraseIn(text string, negated bool, fields []fieldBoost) compiled {
	var toks analysis.TokenStream
	if hasCJK(text) {
		if len(fields) == 1 && fields[0].field == fBody { // content:
			fields = []fieldBoost{{fBodyCJK, 1}}
		} else {
			fields = []fieldBoost{{fTitleCJK, 5}, {fBodyCJK, 1}}
		}
		toks = c.cjk.Analyze([]byte(text))
	} else {
		toks = c.text.Analyze([]byte(text))
	}
	if len(toks) == 0 {
		return matchNothing
	}
	if !negated {
		for _, t := range toks {
			c.terms = append(c.terms, snipTerm{term: string(t.Term)})
		}
	}
	if len(toks) == 1 {
		// A one-word phrase is a term without fuzziness.
		return compiled{q: fieldsQuery(text, fields, 0), scoring: true}
	}
	qs := make([]query.Query, 0, len(fields))
	for _, f := range fields {
		qs = append(qs, &phraseQuery{text: text, field: f.field, boost: f.boost})
	}
	d := query.NewDisjunctionQuery(qs)
	d.SetMin(1)
	return compiled{q: d, scoring: true}
}

// contentFields are the fields of content:, a note's text: its body (with
// its headings) and the words of its URLs.
var contentFields = []fieldBoost{{fBody, 1}, {fURL, 0.3}}

// boolean compiles the value of content: or ignore-case: as Obsidian
// evaluates it: every word and phrase required (in fields), OR and -
// inside; the words score.
func (c *compiler) boolean(n Node, negated bool, fields []fieldBoost) compiled {
	switch x := n.(type) {
	case Term:
		if hasCJK(x.Text) {
			return c.term(x.Text, negated)
		}
		toks := c.text.Analyze([]byte(x.Text))
		if len(toks) == 0 {
			return compiled{q: query.NewMatchAllQuery()} // a stop word: ignored
		}
		if !negated {
			for _, t := range toks {
				c.terms = append(c.terms, snipTerm{term: string(t.Term)})
			}
		}
		return compiled{q: fieldsQuery(x.Text, fields, 0), scoring: true}
	case Phrase:
		var pf []fieldBoost
		for _, f := range fields {
			if f.field == fTitle || f.field == fHeadings || f.field == fBody {
				pf = append(pf, f)
			}
		}
		return c.phraseIn(x.Text, negated, pf)
	case *Regex:
		return c.resolved(x, negated)
	case Not:
		in := c.boolean(x.X, !negated, fields)
		if in.none {
			return compiled{q: query.NewMatchAllQuery()}
		}
		b := query.NewBooleanQuery(nil, nil, nil)
		b.AddMustNot(in.q)
		return compiled{q: b}
	case And:
		b := query.NewBooleanQuery(nil, nil, nil)
		scoring := false
		for _, it := range x.Items {
			if nt, ok := it.(Not); ok {
				if in := c.boolean(nt.X, !negated, fields); !in.none {
					b.AddMustNot(in.q)
				}
				continue
			}
			in := c.boolean(it, negated, fields)
			if in.none {
				return matchNothing
			}
			b.AddMust(in.q)
			scoring = scoring || in.scoring
		}
		return compiled{q: b, scoring: scoring}
	case Or:
		var qs []query.Query
		scoring := false
		for _, it := range x.Items {
			if in := c.boolean(it, negated, fields); !in.none {
				qs = append(qs, in.q)
				scoring = scoring || in.scoring
			}
		}
		if len(qs) == 0 {
			return matchNothing
		}
		d := query.NewDisjunctionQuery(qs)
		d.SetMin(1)
		return compiled{q: d, scoring: scoring}
	}
	return matchNothing
}

// resolved compiles an operator that looks at parts of notes into the set
// of notes it matches (resolve.go).
func (c *compiler) resolved(n Node, negated bool) compiled {
	if c.ops == nil {
		c.fail(fmt.Errorf("search: %s needs the index", n))
		return matchNothing
	}
	res, err := c.ops.resolve(c, n)
	if err != nil {
		c.fail(err)
		return matchNothing
	}
	if !negated {
		c.sets = append(c.sets, res)
		// The words of a line:, section: or task value are what the
		// snippet shows.
		var value Node
		switch x := n.(type) {
		case *Scope:
			value = x.X
		case *Case:
			value = x.X
		}
		walkNodes(value, func(v Node) {
			switch v := v.(type) {
			case Term:
				c.addSnipTerms(v.Text)
			case Phrase:
				c.addSnipTerms(v.Text)
			}
		})
	}
	if len(res.paths) == 0 {
		return matchNothing
	}
	return compiled{q: query.NewDocIDQuery(res.paths)}
}

func (c *compiler) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// fieldRegex compiles path:/re/, file:/re/ and tag:/re/ over the notes'
// paths, file names and tags, which the index keeps in memory.
func (c *compiler) fieldRegex(r *Regex) compiled {
	if c.notes == nil {
		c.fail(fmt.Errorf("search: %s needs the index", r))
		return matchNothing
	}
	var ids []string
	for _, m := range c.notes() {
		ok := false
		switch r.Field {
		case "path":
			ok = r.re.MatchString(m.Path)
		case "file":
			ok = r.re.MatchString(fileKey(m.Path))
		case "tag":
			for _, t := range tagAncestors(m.Tags) {
				if r.re.MatchString(t) {
					ok = true
					break
				}
			}
		}
		if ok {
			ids = append(ids, m.Path)
		}
	}
	if len(ids) == 0 {
		return matchNothing
	}
	return compiled{q: query.NewDocIDQuery(ids)}
}

// addSnipTerms adds the words of text to those snippets highlight.
func (c *compiler) addSnipTerms(text string) {
	for _, t := range c.text.Analyze([]byte(text)) {
		c.terms = append(c.terms, snipTerm{term: string(t.Term)})
	}
}
