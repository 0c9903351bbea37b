package search

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

const (
	defaultLimit = 10
	maxLimit     = 100
)

// Search runs a query. The structured filters of req are ANDed with the
// query: Tags match any of the tags (nested tags included), Folders any of
// the folder prefixes, From/To bound the mtime (inclusive). A request with
// filters and no query lists the matching notes, newest first. When nothing
// matches and the query has free terms of 4+ characters, it is retried
// with fuzzy matching and Results.Fuzzy is set.
func (ix *Index) Search(ctx context.Context, req Request) (*Results, error) {
	start := time.Now()
	var root Node
	if strings.TrimSpace(req.Query) != "" {
		q, err := ParseQuery(req.Query)
		if err != nil && err != ErrEmptyQuery {
			return nil, err
		}
		if q != nil {
			root = q.Root
		}
	}
	filters := requestFilters(req)
	if root == nil && len(filters) == 0 {
		return nil, ErrEmptyQuery
	}
	limit := req.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	if limit > maxLimit {
		limit = maxLimit
	}

	res, c, err := ix.run(ctx, root, filters, limit, false)
	if err != nil {
		return nil, err
	}
	if res.Total == 0 && root != nil {
		fres, fc, err := ix.run(ctx, root, filters, limit, true)
		if err == nil && fc.fuzzed && fres.Total > 0 {
			res, c = fres, fc
			res.Fuzzy = true
		}
	}
	ix.addSnippets(res, c)
	res.TookMs = float64(time.Since(start).Microseconds()) / 1000
	return res, nil
}

func (ix *Index) run(ctx context.Context, root Node, filters []query.Query, limit int, fuzzy bool) (*Results, *compiler, error) {
	c := &compiler{text: ix.textAn, cjk: ix.cjkAn, fuzzy: fuzzy}
	main := compiled{}
	if root != nil {
		main = c.compile(root, false)
		if main.none {
			return &Results{Results: []Result{}}, c, nil
		}
	}
	if fuzzy && !c.fuzzed {
		return &Results{Results: []Result{}}, c, nil
	}
	b := query.NewBooleanQuery(nil, nil, nil)
	if main.q != nil && main.scoring {
		b.AddMust(main.q)
	} else if main.q != nil {
		filters = append([]query.Query{main.q}, filters...)
	}
	switch len(filters) {
	case 0:
	case 1:
		b.AddFilter(filters[0])
	default:
		b.AddFilter(query.NewConjunctionQuery(filters))
	}
	sr := bleve.NewSearchRequestOptions(b, limit, 0, false)
	if !main.scoring {
		sr.SortBy([]string{"-" + fMTime, "_id"})
	}
	ix.idxMu.RLock()
	defer ix.idxMu.RUnlock()
	if ix.idx == nil {
		return nil, nil, ErrClosed
	}
	sres, err := ix.idx.SearchInContext(ctx, sr)
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	out := &Results{Results: make([]Result, 0, len(sres.Hits)), Total: int(sres.Total)}
	for _, h := range sres.Hits {
		r := Result{Path: h.ID, Score: h.Score, Tags: []string{}}
		if m, ok := ix.Note(h.ID); ok {
			r.Title = m.Title
			if m.Tags != nil {
				r.Tags = m.Tags
			}
			r.MTime = msec(m.MTime)
		} else {
			r.Title = strings.TrimSuffix(h.ID[strings.LastIndexByte(h.ID, '/')+1:], ".md")
		}
		if !main.scoring {
			r.Score = 0
		}
		out.Results = append(out.Results, r)
	}
	return out, c, nil
}

// requestFilters turns the structured filters of req into queries.
func requestFilters(req Request) []query.Query {
	var out []query.Query
	if q := anyOf(req.Tags, func(t string) query.Query {
		if t = normTag(t); t == "" {
			return nil
		}
		return termQ(fTag, t)
	}); q != nil {
		out = append(out, q)
	}
	if q := anyOf(req.Folders, func(f string) query.Query {
		f = strings.ToLower(strings.Trim(strings.TrimSpace(f), "/"))
		if f == "" || f == "." {
			return query.NewMatchAllQuery()
		}
		pq := query.NewPrefixQuery(f + "/")
		pq.SetField(fPath)
		return pq
	}); q != nil {
		out = append(out, q)
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
		incl := true
		rq := query.NewNumericRangeInclusiveQuery(lo, hi, &incl, &incl)
		rq.SetField(fMTime)
		out = append(out, rq)
	}
	return out
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
