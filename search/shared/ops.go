package shared

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// An op is one operation of the index that the holder serves: its method
// on the socket, and run, which carries it out on the holder's index. A
// process that holds the index calls run itself; any other sends the
// params to the holder, which calls run there. Adding an operation is one
// newOp and one method of Index that calls it (see Search).
type op[P, R any] struct {
	method string
	// long marks an operation that may run for minutes (a sync): it is
	// bounded by the holder's heartbeats instead of the call deadline.
	long bool
	run  func(ctx context.Context, h *holding, p P, progress Progress) (R, error)
}

// Progress receives the progress of a long operation (notes done of total,
// phase "" for indexing, "embed" for the vectors); it must not block.
type Progress func(done, total int, phase string)

// handler runs one op's request on the holder.
type handler func(ctx context.Context, h *holding, params json.RawMessage, progress Progress) (any, error)

// handlers are the ops by method, filled by newOp.
var handlers = map[string]handler{}

// newOp registers an operation and returns it.
func newOp[P, R any](method string, long bool, run func(ctx context.Context, h *holding, p P, progress Progress) (R, error)) *op[P, R] {
	if _, dup := handlers[method]; dup {
		panic("shared: two operations named " + method)
	}
	o := &op[P, R]{method: method, long: long, run: run}
	handlers[method] = func(ctx context.Context, h *holding, raw json.RawMessage, progress Progress) (any, error) {
		var p P
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", method, err)}
			}
		}
		return o.run(ctx, h, p, progress)
	}
	return o
}

// call runs the operation where the index is: here when this process holds
// it, else on the holder. A call whose connection closes before the answer
// (the holder exited or died) is made once more, after a process has
// taken the index over (this one, perhaps).
func (o *op[P, R]) call(ctx context.Context, x *Index, p P, progress Progress) (R, error) {
	var zero R
	for attempt := 0; ; attempt++ {
		r, err := x.role(ctx)
		if err != nil {
			return zero, err
		}
		if h, ok := r.(*holding); ok {
			return o.run(ctx, h, p, progress)
		}
		f := r.(*following)
		var res R
		err = f.call(ctx, o.method, p, &res, o.long, progress)
		if errors.Is(err, errConnLost) && attempt == 0 {
			x.lost(f)
			continue
		}
		if errors.Is(err, ErrNoAnswer) && attempt == 0 {
			// A lock that is free has no holder: its connection is
			// stale, whatever the socket says.
			if _, locked := search.Locked(x.opts.Path); !locked {
				x.lost(f)
				continue
			}
		}
		return res, err
	}
}

// none is the params of an operation without any.
type none struct{}

// The operations. Each one's params and result are its wire form.
var (
	opSearch = newOp("index/search", false, func(ctx context.Context, h *holding, p searchParams, _ Progress) (searchReply, error) {
		res, err := h.search(ctx, p.request())
		if err != nil {
			return searchReply{}, err
		}
		return searchReply{Results: res, Match: res.Match}, nil
	})
	opRelated = newOp("index/related", false, func(ctx context.Context, h *holding, p relatedParams, _ Progress) (*search.Results, error) {
		if h.sem == nil {
			return nil, ErrNoEmbedder
		}
		return h.sem.Related(ctx, p.Name, p.Limit)
	})
	opReadChunk = newOp("index/readChunk", false, func(_ context.Context, h *holding, p readParams, _ Progress) (*search.NoteChunk, error) {
		return h.ix.ReadChunk(p.Name, p.Chunk)
	})
	opLookup = newOp("index/lookup", false, func(_ context.Context, h *holding, p readParams, _ Progress) (string, error) {
		return h.ix.Lookup(p.Name)
	})
	opNote = newOp("index/note", false, func(_ context.Context, h *holding, p readParams, _ Progress) (*search.NoteMeta, error) {
		m, ok := h.ix.Note(p.Name)
		if !ok {
			return nil, nil
		}
		return &m, nil
	})
	opNotes = newOp("index/notes", false, func(_ context.Context, h *holding, p notesParams, _ Progress) (notesPage, error) {
		paths := h.ix.Paths()
		i := sort.SearchStrings(paths, p.After)
		if i < len(paths) && paths[i] == p.After {
			i++
		}
		end := min(len(paths), i+max(p.Limit, 1))
		page := notesPage{Notes: make([]search.NoteMeta, 0, end-i), More: end < len(paths)}
		for _, path := range paths[i:end] {
			if m, ok := h.ix.Note(path); ok { // else removed meanwhile
				page.Notes = append(page.Notes, m)
			}
		}
		return page, nil
	})
	opPaths = newOp("index/paths", false, func(_ context.Context, h *holding, _ none, _ Progress) ([]string, error) {
		return h.ix.Paths(), nil
	})
	opTags = newOp("index/tags", false, func(_ context.Context, h *holding, _ none, _ Progress) ([]search.TagCount, error) {
		return h.ix.Tags(), nil
	})
	opCount = newOp("index/count", false, func(_ context.Context, h *holding, _ none, _ Progress) (int, error) {
		return h.ix.Count(), nil
	})
	opStatus = newOp("index/status", false, func(_ context.Context, h *holding, _ none, _ Progress) (search.Status, error) {
		return h.ix.Status(), nil
	})
	opResolveLink = newOp("index/resolveLink", false, func(_ context.Context, h *holding, p linkParams, _ Progress) (string, error) {
		return h.ix.ResolveLink(p.Link, p.From), nil
	})
	opBacklinks = newOp("index/backlinks", false, func(ctx context.Context, h *holding, p readParams, _ Progress) ([]search.Backlink, error) {
		return h.ix.Backlinks(ctx, p.Name)
	})
	opApply = newOp("index/apply", false, func(ctx context.Context, h *holding, b vault.Batch, _ Progress) (none, error) {
		// The caller's edit is written: it is indexed even if the caller
		// goes away meanwhile.
		return none{}, h.ix.Apply(context.WithoutCancel(ctx), b)
	})
	opSync = newOp("index/sync", true, func(ctx context.Context, h *holding, p syncParams, progress Progress) (syncResult, error) {
		st, err := h.sync(ctx, p.Full, progress)
		return wireStats(st), err
	})
	opReady = newOp("index/ready", true, func(ctx context.Context, h *holding, _ none, progress Progress) (syncResult, error) {
		st, err := h.waitReady(ctx, progress)
		return wireStats(st), err
	})
	opWatch = newOp("index/watch", false, func(_ context.Context, h *holding, _ none, _ Progress) (none, error) {
		return none{}, h.watch()
	})
	opHolder = newOp("index/holder", false, func(_ context.Context, h *holding, _ none, _ Progress) (Status, error) {
		return h.status(), nil
	})
)

// searchParams is a search.Request on the wire, with its time range (which
// the request's own JSON leaves out).
type searchParams struct {
	Req  search.Request `json:"req"`
	From time.Time      `json:"from,omitzero"`
	To   time.Time      `json:"to,omitzero"`
}

func newSearchParams(req search.Request) searchParams {
	return searchParams{Req: req, From: req.From, To: req.To}
}

func (p searchParams) request() search.Request {
	r := p.Req
	r.From, r.To = p.From, p.To
	return r
}

type relatedParams struct {
	Name  string `json:"name"`
	Limit int    `json:"limit,omitempty"`
}

// readParams name a note as a person or a model typed it, or a path.
type readParams struct {
	Name  string `json:"name"`
	Chunk int    `json:"chunk,omitempty"`
}

type linkParams struct {
	Link vault.Link `json:"link"`
	From string     `json:"from"`
}

// notesParams ask for the notes after the path After, at most Limit: the
// notes of a large vault go in pages, so that neither end holds the JSON
// of them all at once.
type notesParams struct {
	After string `json:"after,omitempty"`
	Limit int    `json:"limit"`
}

type notesPage struct {
	Notes []search.NoteMeta `json:"notes"`
	More  bool              `json:"more,omitempty"`
}

// notesPerPage is the Limit of Notes' pages (a variable for tests).
var notesPerPage = 500

type syncParams struct {
	Full bool `json:"full,omitempty"`
}

// syncResult is search.SyncStats on the wire, with its duration.
type syncResult struct {
	search.SyncStats
	TookMs int64 `json:"tookMs"`
}

func wireStats(st search.SyncStats) syncResult {
	return syncResult{SyncStats: st, TookMs: st.Took.Milliseconds()}
}

func (r syncResult) stats() search.SyncStats {
	st := r.SyncStats
	st.Took = time.Duration(r.TookMs) * time.Millisecond
	return st
}
