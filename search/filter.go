package search

import (
	"context"
	"strings"
)

// Search modes (Request.Mode). The index itself only searches words
// (lexical); the semantic package adds the other two.
const (
	ModeLexical  = "lexical"
	ModeSemantic = "semantic"
	ModeHybrid   = "hybrid"
)

// FilterPaths returns the notes that every filter of req keeps: its
// structured filters (Tags, Folders, From, To, Excludes) and the filters written in
// its query (phrases, -exclusions, tag:, path:, file:), free words left
// out. All is true, and paths nil, when req has no filter: every note is
// kept. It lets a search that ranks notes by other means (vectors) honour
// the same filters as Search.
func (ix *Index) FilterPaths(ctx context.Context, req Request) (paths []string, all bool, err error) {
	var root Node
	if strings.TrimSpace(req.Query) != "" {
		q, err := ParseQuery(req.Query)
		if err != nil && err != ErrEmptyQuery {
			return nil, false, err
		}
		if q != nil {
			root = withoutTerms(q.Root)
		}
	}
	filters, none := ix.requestFilters(req)
	excluded, err := ix.excluded(req.Excludes)
	if err != nil {
		return nil, false, err
	}
	if none {
		return []string{}, false, nil
	}
	if root == nil && len(filters) == 0 && len(excluded) == 0 {
		return nil, true, nil
	}
	if root != nil {
		if err := checkSize(root); err != nil {
			return nil, false, err
		}
	}
	res, _, err := ix.run(ctx, root, filters, ix.Count()+1, compileMode{excluded: excluded})
	if err != nil {
		return nil, false, err
	}
	paths = make([]string, len(res.Results))
	for i, r := range res.Results {
		paths[i] = r.Path
	}
	return paths, false, nil
}

// withoutTerms returns root without its free words: what is left filters
// notes without ranking them. An OR with a free word in it keeps every
// note, so it goes too.
func withoutTerms(n Node) Node {
	switch x := n.(type) {
	case Term:
		return nil
	case And:
		var items []Node
		for _, it := range x.Items {
			if it = withoutTerms(it); it != nil {
				items = append(items, it)
			}
		}
		switch len(items) {
		case 0:
			return nil
		case 1:
			return items[0]
		}
		return And{Items: items}
	case Or:
		for _, it := range x.Items {
			if withoutTerms(it) == nil {
				return nil
			}
		}
		return x
	case Not:
		return x
	}
	return n
}
