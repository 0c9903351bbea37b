package search

import (
	"context"

	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// A search with filters (the request's tags, folders and dates, and the
// query's operators that do not score) is a boolean query with a filter.
// Bleve's filtering searcher drops each match its filter rejects without
// giving it back to the search's pool, and so does its filter with each
// match of its own it steps past: the pool runs dry and every later match
// is a new allocation, hundreds of kilobytes a search at 100,000 notes.
// filteredQuery is bleve's boolean query with a filter, built of the same
// searchers (so it matches and scores the same), whose filtering gives
// both back.

// filteredQuery is q with filter applied as a bleve BooleanQuery's filter
// (q's own filter unset).
type filteredQuery struct {
	q      *query.BooleanQuery
	filter query.Query
}

// Searcher is BooleanQuery.Searcher with a filter, the filtering searcher
// replaced.
func (f *filteredQuery) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	var open []bsearch.Searcher
	fail := func(err error) (bsearch.Searcher, error) {
		for _, s := range open {
			_ = s.Close()
		}
		return nil, err
	}
	// Each clause's searcher, nil for none or one matching nothing.
	clause := func(q query.Query, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
		if q == nil {
			return nil, nil
		}
		s, err := q.Searcher(ctx, r, m, opts)
		if err != nil {
			return nil, err
		}
		if _, none := s.(*searcher.MatchNoneSearcher); none {
			return nil, s.Close()
		}
		open = append(open, s)
		return s, nil
	}
	mustNot, err := clause(f.q.MustNot, opts)
	if err != nil {
		return fail(err)
	}
	must, err := clause(f.q.Must, opts)
	if err != nil {
		return fail(err)
	}
	should, err := clause(f.q.Should, opts)
	if err != nil {
		return fail(err)
	}
	// The filter neither scores nor explains.
	filter, err := f.filter.Searcher(ctx, r, m, bsearch.SearcherOptions{Score: "none"})
	if err != nil {
		return fail(err)
	}
	open = append(open, filter)
	var child bsearch.Searcher
	switch {
	case must == nil && should == nil && mustNot == nil:
		child, err = searcher.NewMatchAllSearcher(ctx, r, 1.0, opts)
	default:
		if must == nil && should == nil {
			if must, err = searcher.NewMatchAllSearcher(ctx, r, 1.0, opts); err != nil {
				return fail(err)
			}
			open = append(open, must)
		}
		child, err = searcher.NewBooleanSearcher(ctx, r, must, should, mustNot, opts)
	}
	if err != nil {
		return fail(err)
	}
	return &filteringSearcher{child: child, filter: filter}, nil
}

// filteringSearcher passes on the matches of child that filter matches
// too, giving the others back to the search's pool, and each match of
// filter once past it.
type filteringSearcher struct {
	child, filter bsearch.Searcher
	ref           *bsearch.DocumentMatch // filter's current match
	started       bool
}

// accepts reports whether filter matches d, stepping filter to d.
func (f *filteringSearcher) accepts(ctx *bsearch.SearchContext, d *bsearch.DocumentMatch) (bool, error) {
	if !f.started {
		f.started = true
		var err error
		if f.ref, err = f.filter.Next(ctx); err != nil {
			return false, err
		}
	}
	if f.ref == nil {
		return false, nil // the filter has no more matches
	}
	if f.ref.IndexInternalID.Compare(d.IndexInternalID) < 0 {
		ctx.DocumentMatchPool.Put(f.ref)
		var err error
		if f.ref, err = f.filter.Advance(ctx, d.IndexInternalID); err != nil || f.ref == nil {
			return false, err
		}
	}
	return f.ref.IndexInternalID.Equals(d.IndexInternalID), nil
}

// pass returns d if the filter matches it, else the next match of the
// child it matches.
func (f *filteringSearcher) pass(ctx *bsearch.SearchContext, d *bsearch.DocumentMatch) (*bsearch.DocumentMatch, error) {
	for d != nil {
		ok, err := f.accepts(ctx, d)
		if err != nil {
			return nil, err
		}
		if ok {
			return d, nil
		}
		ctx.DocumentMatchPool.Put(d)
		if d, err = f.child.Next(ctx); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (f *filteringSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	d, err := f.child.Next(ctx)
	if err != nil {
		return nil, err
	}
	return f.pass(ctx, d)
}

func (f *filteringSearcher) Advance(ctx *bsearch.SearchContext, id index.IndexInternalID) (*bsearch.DocumentMatch, error) {
	d, err := f.child.Advance(ctx, id)
	if err != nil {
		return nil, err
	}
	return f.pass(ctx, d)
}

func (f *filteringSearcher) Close() error {
	err := f.child.Close()
	if ferr := f.filter.Close(); err == nil {
		err = ferr
	}
	return err
}

func (f *filteringSearcher) Weight() float64        { return f.child.Weight() }
func (f *filteringSearcher) SetQueryNorm(n float64) { f.child.SetQueryNorm(n) }
func (f *filteringSearcher) Count() uint64          { return f.child.Count() }
func (f *filteringSearcher) Min() int               { return f.child.Min() }
func (f *filteringSearcher) Size() int              { return 64 + f.child.Size() + f.filter.Size() }
func (f *filteringSearcher) DocumentMatchPoolSize() int {
	return f.child.DocumentMatchPoolSize() + f.filter.DocumentMatchPoolSize()
}
