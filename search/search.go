package search

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/vault-agent/vault-agent/vault"
)

const (
	defaultLimit = 10
	maxLimit     = 100
)

// Search runs a query. The structured filters of req are ANDed with the
// query: Tags match any of the tags (nested tags included), Folders any of
// the folder prefixes, From/To bound the mtime or the note's own date
// (inclusive). A request with filters and no query lists the matching
// notes, newest first. Free words are ranked (see rank.go) and none is
// required; Results.Partial says that no note holds half of them, and
// Results.Fuzzy that a misspelt word was matched by a correction (when
// nothing matches at all, the query is retried correcting every word of 4+
// letters). A query with no word to search for (only stop words or
// punctuation) and no filter is ErrEmptyQuery; one over MaxQueryBytes or
// MaxQueryTerms is a *QueryLimitError; one with more than maxFilters
// phrases and filters is a *QueryError. A search that finds the index
// damaged (bleve panics on damaged bytes) returns ErrCorrupt and the index
// is rebuilt from the vault in the background.
func (ix *Index) Search(ctx context.Context, req Request) (res *Results, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, ix.searchPanicked(r, string(debug.Stack()))
		}
	}()
	start := time.Now()
	ix.beforeSearch()
	if err = CheckQuerySize(req.Query); err != nil {
		return nil, err
	}
	var root Node
	emptyErr := ErrEmptyQuery
	if strings.TrimSpace(req.Query) != "" {
		q, err := ParseQuery(req.Query)
		if errors.Is(err, ErrEmptyQuery) {
			emptyErr = err
		} else if err != nil {
			return nil, err
		}
		if q != nil {
			root = q.Root
		}
	}
	filters, none := ix.requestFilters(req)
	excluded, err := ix.excluded(req.Excludes)
	if err != nil {
		return nil, err
	}
	if none {
		return &Results{Results: []Result{}, TookMs: float64(time.Since(start).Microseconds()) / 1000}, nil
	}
	if root == nil && len(filters) == 0 {
		return nil, emptyErr
	}
	limit := req.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	if limit > maxLimit {
		limit = maxLimit
	}

	if root != nil {
		if err := checkSize(root); err != nil {
			return nil, err
		}
	}
	ops := ix.newResolver(ctx)
	res, c, err := ix.run(ctx, root, filters, limit, compileMode{excluded: excluded, ops: ops})
	if err != nil {
		return nil, err
	}
	if res.Total == 0 && c.onlyStop && c.nothingElse && len(filters) == 0 {
		return nil, fmt.Errorf("%w: %q has no word to search for, only stop words (the, how, ...), punctuation or strings too long to be words; add a word that says what to look for", ErrEmptyQuery, truncateQuery(req.Query))
	}
	if res.Total == 0 && root != nil {
		fres, fc, err := ix.run(ctx, root, filters, limit, compileMode{fuzzy: true, excluded: excluded, ops: ops})
		if err == nil && fc.fuzzed && fres.Total > 0 {
			res, c = fres, fc
			res.Fuzzy = true
		}
	}
	if len(c.ranked) > 0 && res.Total > 0 {
		// Partial: no note holds enough of the words of any ranked group
		// (half of them, rounded up); Fuzzy: a word absent from the index
		// was matched by a correction.
		partial := true
		for _, rq := range c.ranked {
			rq.stats.mu.Lock()
			if rq.stats.best >= minShould(rq.stats.content) {
				partial = false
			}
			if rq.stats.fixed {
				res.Fuzzy = true
			}
			res.Match.Words = max(res.Match.Words, rq.stats.content)
			res.Match.Held = max(res.Match.Held, rq.stats.held)
			res.Match.Terms = append(res.Match.Terms, rq.stats.weights...)
			rq.stats.mu.Unlock()
		}
		res.Partial = partial
		for _, r := range res.Results {
			if IsExact(r.Score) {
				res.Match.Exact++
			}
		}
	}
	for _, rq := range c.ranked {
		rq.stats.mu.Lock()
		for _, t := range rq.stats.tokens {
			c.terms = append(c.terms, snipTerm{term: t})
		}
		rq.stats.mu.Unlock()
	}
	if req.NoSnippets {
		res.terms = c.terms
	} else {
		ix.addSnippets(res, c)
	}
	res.TookMs = float64(time.Since(start).Microseconds()) / 1000
	ix.afterSearch()
	return res, nil
}

// compileMode selects a fallback compile of the query; excluded are the
// notes the request leaves out; ops resolves its operators (nil: a
// resolver of its own).
type compileMode struct {
	fuzzy    bool
	excluded []string
	ops      *opResolver
}

// excluded lists the notes whose paths match the request's exclude
// patterns. A bad pattern is a *QueryError.
func (ix *Index) excluded(patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	ex, err := vault.CompileExcludes(patterns)
	if err != nil {
		return nil, &QueryError{Pos: 1, Msg: err.Error()}
	}
	var ids []string
	ix.mu.RLock()
	for m := range ix.meta.all() {
		if ex.Match(m.Path) {
			ids = append(ids, m.Path)
		}
	}
	ix.mu.RUnlock()
	sort.Strings(ids)
	return ids, nil
}

// maxFilters bounds the phrases, filters and operators of one query: each
// is a query of its own, and a pasted document must not stall the index.
// Free words need no bound: a ranked group keeps its most distinctive
// ones (see maxRankWords).
const maxFilters = 64

// checkSize refuses a query with more than maxFilters phrases and filters.
func checkSize(root Node) error {
	n := 0
	walkNodes(root, func(x Node) {
		switch x.(type) {
		case Term, Not, And, Or:
		default:
			n++
		}
	})
	if n > maxFilters {
		return &QueryError{Pos: 1, Msg: fmt.Sprintf("too many phrases and filters (%d); at most %d", n, maxFilters)}
	}
	return nil
}

// truncateQuery shortens a query for an error message.
func truncateQuery(q string) string {
	if len(q) <= 80 {
		return q
	}
	cut := 80
	for cut > 0 && !utf8.RuneStart(q[cut]) {
		cut--
	}
	return q[:cut] + "…"
}

// tieWindow is how many hits past the limit are fetched so that ties at
// the limit are ordered by path, not by where the notes sit in segments.
const tieWindow = 16

func (ix *Index) run(ctx context.Context, root Node, filters []query.Query, limit int, mode compileMode) (*Results, *compiler, error) {
	c := &compiler{text: ix.textAn, cjk: ix.cjkAn, fuzzy: mode.fuzzy, files: ix.matchFiles, paths: ix.matchPrefix, notes: ix.Notes, ops: mode.ops,
		factCount: ix.factCount}
	if c.ops == nil {
		c.ops = ix.newResolver(ctx)
	}
	c.rank = func(texts []string) *rankQuery { return ix.newRankQuery(texts, mode.fuzzy) }
	main := compiled{}
	if root != nil {
		main = c.compile(root, false)
		if c.err != nil {
			return nil, nil, c.err
		}
		c.nothingElse = main.none
		if main.none {
			return &Results{Results: []Result{}}, c, nil
		}
	}
	if mode.fuzzy && !c.fuzzed {
		return &Results{Results: []Result{}}, c, nil
	}
	b := query.NewBooleanQuery(nil, nil, nil)
	if main.q != nil && main.scoring {
		b.AddMust(main.q)
	} else if main.q != nil {
		filters = append([]query.Query{main.q}, filters...)
	}
	if len(mode.excluded) > 0 {
		b.AddMustNot(query.NewDocIDQuery(mode.excluded))
	}
	var q query.Query = b
	switch len(filters) {
	case 0:
	case 1:
		q = &filteredQuery{q: b, filter: filters[0]}
	default:
		q = &filteredQuery{q: b, filter: query.NewConjunctionQuery(filters)}
	}
	// bleve orders ties by its internal document numbers, which change
	// when segments merge; ties are ordered by path below instead, over a
	// window past the limit, so the same notes give the same order
	// whatever the index's history. (Sorting on _id in bleve does the same
	// but loads the path of every match: a third slower at p50.)
	size := limit + tieWindow
	if len(c.ranked) > 0 {
		size = max(size, proxCandidates) // re-scored for proximity below
	}
	sr := bleve.NewSearchRequestOptions(q, size, 0, false)
	if !main.scoring {
		// Nothing to rank by: newest first. Sorting all matches by their
		// mtime from the metadata cache is about twice as fast as bleve
		// sorting on doc values.
		sr.Size = ix.Count() + 1
		sr.Score = "none"
	}
	ix.idxMu.RLock()
	defer ix.idxMu.RUnlock()
	if ix.idx == nil {
		return nil, nil, ErrClosed
	}
	if ix.testBeforeSearch != nil {
		ix.testBeforeSearch()
	}
	ix.advice.adviseSegments(ix.idx)
	sres, err := ix.idx.SearchInContext(ctx, sr)
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	hits := sres.Hits
	if !main.scoring {
		hits = ix.newestFirst(hits, limit)
	} else if len(c.ranked) > 0 {
		var terms []proxTerm
		for _, rq := range c.ranked {
			rq.stats.mu.Lock()
			terms = append(terms, rq.stats.prox...)
			rq.stats.mu.Unlock()
		}
		if len(terms) > 1 {
			if adv, err := ix.idx.Advanced(); err == nil {
				if r, err := adv.Reader(); err == nil {
					proximityRerank(ctx, r, hits, terms)
					r.Close()
				}
			}
		}
	}
	if main.scoring {
		sort.Slice(hits, func(i, j int) bool { return byScoreThenID(hits[i], hits[j]) })
		hits = c.tasksMentioningFirst(hits)
		hits = hits[:min(limit, len(hits))]
	}
	out := &Results{Results: make([]Result, 0, len(hits)), Total: int(sres.Total)}
	for _, h := range hits {
		r := Result{Path: h.ID, Score: h.Score, Tags: []string{}}
		if m, ok := ix.Note(h.ID); ok {
			r.Title = m.Title
			if m.Tags != nil {
				r.Tags = m.Tags
			}
			r.MTime = msec(m.MTime)
			if !m.Date.IsZero() {
				r.Date = msec(m.Date)
			}
		} else {
			r.Title = strings.TrimSuffix(h.ID[strings.LastIndexByte(h.ID, '/')+1:], ".md")
		}
		if !main.scoring {
			r.Score = 0
		}
		r.Matches = matchesOf(c.sets, h.ID)
		out.Results = append(out.Results, r)
	}
	return out, c, nil
}

// newestFirst sorts hits by mtime, newest first (then by path), and keeps
// the first limit.
func (ix *Index) newestFirst(hits bsearch.DocumentMatchCollection, limit int) bsearch.DocumentMatchCollection {
	type keyed struct {
		mt  int64
		hit *bsearch.DocumentMatch
	}
	ks := make([]keyed, len(hits))
	ix.mu.RLock()
	for i, h := range hits {
		ks[i].hit = h
		if m := ix.meta.get(h.ID); m != nil {
			ks[i].mt = m.mtime
		}
	}
	ix.mu.RUnlock()
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].mt != ks[j].mt {
			return ks[i].mt > ks[j].mt
		}
		return ks[i].hit.ID < ks[j].hit.ID
	})
	out := make(bsearch.DocumentMatchCollection, 0, min(limit, len(ks)))
	for _, k := range ks[:min(limit, len(ks))] {
		out = append(out, k.hit)
	}
	return out
}

// requestFilters turns the structured filters of req into queries; none
// is true when they cannot match anything.
func (ix *Index) requestFilters(req Request) (out []query.Query, none bool) {
	if q := anyOf(req.Tags, func(t string) query.Query {
		if t = normTag(t); t == "" {
			return nil
		}
		return termQ(fTag, t)
	}); q != nil {
		out = append(out, q)
	}
	if len(req.Folders) > 0 {
		var ids []string
		all := false
		for _, f := range req.Folders {
			f = strings.ToLower(strings.Trim(strings.TrimSpace(f), "/"))
			if f == "" || f == "." {
				all = true
				break
			}
			ids = append(ids, ix.matchPrefix(f+"/")...)
		}
		if !all {
			if len(ids) == 0 {
				return nil, true
			}
			out = append(out, query.NewDocIDQuery(ids))
		}
	}
	if !req.From.IsZero() || !req.To.IsZero() {
		var lo, hi *float64
		if !req.From.IsZero() {
			v := float64(req.From.UnixMilli())
			lo = &v
		}
		if !req.To.IsZero() {
			v := float64(req.To.UnixMilli())
			hi = &v
		}
		// Dated in the range, or modified in it: a daily note of March 12
		// is "from March 12" even when the vault was copied or synced
		// yesterday and every mtime is new. When most notes share one
		// recent mtime (a clone, a copy, a sync), mtimes say nothing of
		// when a note was written and only dates count.
		incl := true
		fields := []string{fDate}
		if ix.mtimesMeaningful() {
			fields = append(fields, fMTime)
		}
		byTime := make([]query.Query, 0, 2)
		for _, f := range fields {
			rq := query.NewNumericRangeInclusiveQuery(lo, hi, &incl, &incl)
			rq.SetField(f)
			byTime = append(byTime, rq)
		}
		d := query.NewDisjunctionQuery(byTime)
		d.SetMin(1)
		out = append(out, d)
	}
	return out, false
}

func anyOf(vals []string, one func(string) query.Query) query.Query {
	var qs []query.Query
	for _, v := range vals {
		if q := one(v); q != nil {
			qs = append(qs, q)
		}
	}
	switch len(qs) {
	case 0:
		return nil
	case 1:
		return qs[0]
	}
	d := query.NewDisjunctionQuery(qs)
	d.SetMin(1)
	return d
}

// Thresholds of mtimesMeaningful: a vault of at least sameMTimeMinNotes
// notes whose mtimes fall, for sameMTimeShare of them, within
// sameMTimeWindow was written to disk at once.
const (
	sameMTimeMinNotes = 20
	sameMTimeShare    = 0.8
	sameMTimeWindow   = time.Hour
)

// mtimesMeaningful reports whether the notes' modification times say when
// they were written: false when most of them fall within one hour, as after
// a clone, a copy or a sync.
func (ix *Index) mtimesMeaningful() bool {
	ix.mu.RLock()
	ts := make([]int64, 0, ix.meta.len())
	for m := range ix.meta.all() {
		ts = append(ts, m.MTime().UnixMilli())
	}
	ix.mu.RUnlock()
	if len(ts) < sameMTimeMinNotes {
		return true
	}
	slices.Sort(ts)
	most, j := 0, 0
	for i := range ts {
		for ts[i]-ts[j] > sameMTimeWindow.Milliseconds() {
			j++
		}
		most = max(most, i-j+1)
	}
	return float64(most) < sameMTimeShare*float64(len(ts))
}
