package semantic

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/search"
)

// ErrMode is a search mode other than lexical, semantic and hybrid.
var ErrMode = errors.New("search mode must be lexical, semantic or hybrid")

// Depth of the two ranked lists that hybrid search fuses. With the 16
// hits past it that the lexical search orders its ties over, a lexical
// window of 14 reads as many hits as a search of 10 does: hybrid's
// lexical half is the lexical ranking itself, at its cost.
const (
	lexDepth = 14
	semDepth = 100
	// agreeTop is how many of the best lexical results measure how much
	// the vectors agree with the words.
	agreeTop = 5
	maxLimit = 100
)

// Search runs req in its mode: lexical (the index's own search), semantic
// (the notes whose chunks are closest to the query's vector) or hybrid
// (both lists fused, see fuse.go), the default. Every filter of req
// (Tags, Folders, From, To and the filters written in the query) applies
// in every mode. A query with no free words (only filters) is answered
// lexically. Hybrid search falls back to the lexical results, with a
// warning in the log, when the query cannot be embedded.
func (e *Engine) Search(ctx context.Context, req search.Request) (*search.Results, error) {
	switch req.Mode {
	case search.ModeLexical:
		return e.ix.Search(ctx, req)
	case search.ModeSemantic, search.ModeHybrid, "":
	default:
		return nil, fmt.Errorf("%w, got %q", ErrMode, req.Mode)
	}
	text := freeText(req.Query)
	if text == "" {
		return e.ix.Search(ctx, req)
	}
	if req.Mode == search.ModeSemantic {
		return e.semantic(ctx, req, text)
	}
	return e.hybrid(ctx, req, text)
}

// limitOf is the number of results asked for: 10 when unset, at most
// maxLimit.
func limitOf(limit int) int {
	switch {
	case limit <= 0:
		return 10
	case limit > maxLimit:
		return maxLimit
	}
	return limit
}

func (e *Engine) semantic(ctx context.Context, req search.Request, text string) (*search.Results, error) {
	start := time.Now()
	allowed, err := e.allowed(ctx, req)
	if err != nil {
		return nil, err
	}
	q, err := e.queryVector(ctx, text)
	if err != nil {
		return nil, err
	}
	r := e.rank(q, allowed, -1, limitOf(req.Limit), false)
	res := &search.Results{Results: e.results(r.top), Total: r.scored}
	res.TookMs = float64(time.Since(start).Microseconds()) / 1000
	return res, nil
}

// hybrid fuses the lexical and the semantic ranking (see fuse.go): a
// convex combination of their normalised scores, the vectors weighed per
// query by how much of the query the vault's words hold and by how far the
// model can be trusted, a strong lexical hit kept in the first results.
// Vectors without signal get no weight: the lexical order stands. With no
// lexical result, the vectors rank alone, unless the model was found to
// have no signal on this vault.
func (e *Engine) hybrid(ctx context.Context, req search.Request, text string) (*search.Results, error) {
	start := time.Now()
	trust, measured := e.trust()
	if measured && trust == 0 || e.downErr() != nil {
		// Vectors without signal, or none to be had: lexical search as
		// it is, with its own limit (the limit changes which notes the
		// lexical ranking re-scores for proximity).
		return e.ix.Search(ctx, req)
	}
	// The query's embedding is made while the words are searched, and,
	// once the model's trust on this vault is measured (so the scan needs
	// nothing of the lexical results), the vectors are scanned then too:
	// on two cores or more the scan then adds little to the search's time.
	type embedded struct {
		q       []int16
		err     error
		scanned bool
		r       ranked
	}
	qc := make(chan embedded, 1)
	go func() {
		q, err := e.queryVector(ctx, text)
		out := embedded{q: q, err: err}
		if err == nil && measured {
			// A filter that fails here fails again, and is reported,
			// when the scan is made after the search.
			if allowed, aerr := e.allowed(ctx, req); aerr == nil {
				out.r, out.scanned = e.rank(q, allowed, -1, semDepth, false), true
			}
		}
		qc <- out
	}()
	limit := limitOf(req.Limit)
	lreq := req
	lreq.Limit = max(limit, lexDepth)
	lreq.NoSnippets = true // only the results kept get one
	lex, err := e.ix.Search(ctx, lreq)
	if errors.Is(err, search.ErrEmptyQuery) {
		lex, err = &search.Results{Results: []search.Result{}}, nil
	}
	qv := <-qc
	if err != nil {
		return nil, err
	}
	cut := func(r *search.Results) *search.Results {
		r.Results = r.Results[:min(limit, len(r.Results))]
		e.ix.AddSnippets(lex, r.Results)
		r.TookMs = float64(time.Since(start).Microseconds()) / 1000
		return r
	}
	q, err := qv.q, qv.err
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !errors.Is(err, ErrUnavailable) && !unavailable(err) {
			// An outage is said once, by markDown; this is one query.
			e.log.Warn("hybrid search without vectors: the query could not be embedded", "error", err)
		}
		return cut(lex), nil
	}
	r := qv.r
	if !qv.scanned {
		allowed, err := e.allowed(ctx, req)
		if err != nil {
			return nil, err
		}
		r = e.rank(q, allowed, -1, semDepth, !measured && len(lex.Results) > 0)
	}
	beta := 1.0
	if len(lex.Results) > 0 {
		if !measured {
			trust = e.weight(r, lex.Results)
		}
		beta = e.fusion.beta(lex.Match, lex.Results, trust)
		if beta == 0 {
			return cut(lex), nil
		}
	}
	sem := semList{paths: e.paths(r.top), scores: make([]float32, len(r.top))}
	for i, h := range r.top {
		sem.scores[i] = h.score
	}
	fused := e.fusion.fuse(lex.Results, lex.Match, sem, func(p string) (float32, bool) {
		e.mu.RLock()
		defer e.mu.RUnlock()
		if n := e.notes[p]; n != nil && int(n.id) < len(r.best) && !math.IsInf(float64(r.best[n.id]), -1) {
			return r.best[n.id], true
		}
		return 0, false
	}, beta)
	semOnly := map[string]hit{}
	for _, h := range r.top {
		semOnly[e.pathOf(h.note)] = h
	}
	byPath := make(map[string]search.Result, len(lex.Results))
	for _, x := range lex.Results {
		byPath[x.Path] = x
		delete(semOnly, x.Path)
	}
	out := &search.Results{Results: make([]search.Result, 0, limit), Total: max(lex.Total, len(fused)), Fuzzy: lex.Fuzzy, Partial: lex.Partial, Match: lex.Match}
	var need []hit
	for _, f := range fused[:min(limit, len(fused))] {
		if h, ok := semOnly[f.path]; ok {
			need = append(need, h)
		}
	}
	made := map[string]search.Result{}
	for _, x := range e.results(need) {
		made[x.Path] = x
	}
	var lexKept []search.Result
	var lexAt []int
	for _, f := range fused[:min(limit, len(fused))] {
		x, ok := byPath[f.path]
		if ok {
			lexKept = append(lexKept, x)
			lexAt = append(lexAt, len(out.Results))
		} else if x, ok = made[f.path]; !ok {
			continue
		}
		x.Score = math.Round(f.score*1e6) / 1e6
		out.Results = append(out.Results, x)
	}
	e.ix.AddSnippets(lex, lexKept)
	for i, at := range lexAt {
		score := out.Results[at].Score
		out.Results[at] = lexKept[i]
		out.Results[at].Score = score
	}
	out.TookMs = float64(time.Since(start).Microseconds()) / 1000
	return out, nil
}

// weight is how much hybrid search trusts the vectors for one query, in a
// vault too small to measure the model's coherence on (see trust.go). The
// best lexical results (up to agreeTop) are likely relevant; if the
// vectors carry signal they put those notes' chunks above the typical
// chunk. For each, the mean similarity of its k chunks is turned into a
// z-score against all chunks (mean, and standard deviation over sqrt(k)),
// and the z-scores are summed and divided by the square root of their
// number. For vectors without signal that statistic is a standard normal
// whatever the notes' lengths (a note's best chunk would not be: the best
// of many chunks is high by chance), so the weight, 0 below tLow and
// rising to 1 at tHigh, stays 0 for all but about 1 query in 150, and
// small for those.
func (e *Engine) weight(r ranked, lex []search.Result) float64 {
	const tLow, tHigh = 2.5, 4.5
	if r.chunkStd == 0 {
		return 0
	}
	var sum float64
	n := 0
	e.mu.RLock()
	for _, x := range lex[:min(agreeTop, len(lex))] {
		n++
		st := e.notes[x.Path]
		if st == nil || int(st.id) >= len(r.sum) || len(st.rows) == 0 {
			continue // not embedded yet: counts as noise
		}
		k := float64(len(st.rows))
		sum += (float64(r.sum[st.id])/k - r.chunkMean) * math.Sqrt(k) / r.chunkStd
	}
	e.mu.RUnlock()
	t := sum / math.Sqrt(float64(n))
	return min(max((t-tLow)/(tHigh-tLow), 0), 1)
}

// allowed returns which note ids the filters of req keep (nil: all).
func (e *Engine) allowed(ctx context.Context, req search.Request) ([]bool, error) {
	paths, all, err := e.ix.FilterPaths(ctx, req)
	if err != nil || all {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	ok := make([]bool, len(e.byID))
	for _, p := range paths {
		if n := e.notes[p]; n != nil {
			ok[n.id] = true
		}
	}
	return ok, nil
}

// queryVector embeds the query text.
func (e *Engine) queryVector(ctx context.Context, text string) ([]int16, error) {
	vs, err := e.embedQuery(ctx, text)
	if err != nil {
		return nil, fmt.Errorf("embed the query: %w", err)
	}
	if len(vs) != 1 {
		return nil, errors.New("embed the query: no vector")
	}
	e.mu.RLock()
	dims, stride := e.dims, e.stride
	e.mu.RUnlock()
	if dims == 0 {
		return nil, errors.New("no note has vectors yet")
	}
	if len(vs[0]) != dims {
		return nil, fmt.Errorf("embed the query: %d dimensions, the notes have %d (the model changed: reindex)", len(vs[0]), dims)
	}
	q, _ := quantize(vs[0], stride)
	return widen(q), nil
}

// hit is one note: its best chunk's row and similarity.
type hit struct {
	note  int32
	row   int32
	score float32
}

// ranked is the outcome of a scan.
type ranked struct {
	top    []hit     // best first
	best   []float32 // by note id: best similarity, -Inf when not scored
	sum    []float32 // by note id: the sum of its chunks' similarities (with stats)
	scored int       // notes scored
	// chunkMean and chunkStd describe the similarities of all the chunks
	// scored.
	chunkMean, chunkStd float64
}

var scorePool = sync.Pool{New: func() any { return new([]int32) }}

// rank scores every chunk against q with the int8 kernel (exact cosine of
// the quantized vectors), keeps each note's best chunk, and returns the k
// best notes of those allowed (nil: all), skipping note id skip. With
// stats it also sums each note's similarities and describes those of all
// the chunks (ranked.sum, chunkMean, chunkStd), for Engine.weight.
func (e *Engine) rank(q []int16, allowed []bool, skip int32, k int, stats bool) ranked {
	e.mu.RLock()
	defer e.mu.RUnlock()
	rows := len(e.rowNote)
	sp := scorePool.Get().(*[]int32)
	if cap(*sp) < rows {
		*sp = make([]int32, rows)
	}
	scores := (*sp)[:rows]
	defer scorePool.Put(sp)
	negInf := float32(math.Inf(-1))
	// Without stats, each goroutine of the scan keeps its rows' best per
	// note: the pass over the rows is split over the cores as the kernel
	// is.
	var partsMu sync.Mutex
	var parts []partBest
	var each func(lo, hi int)
	if !stats {
		each = func(lo, hi int) {
			pb := partBest{best: make([]float32, len(e.byID)), row: make([]int32, len(e.byID))}
			for i := range pb.best {
				pb.best[i] = negInf
			}
			for r := lo; r < hi; r++ {
				n := e.rowNote[r]
				if n == skip || (allowed != nil && !allowed[n]) {
					continue
				}
				if c := float32(scores[r]) * e.inv[r]; c > pb.best[n] {
					pb.best[n], pb.row[n] = c, int32(r)
				}
			}
			partsMu.Lock()
			parts = append(parts, pb)
			partsMu.Unlock()
		}
	}
	scan(q, e.mat, e.stride, scores, each)

	var qn int64
	for _, x := range q {
		qn += int64(x) * int64(x)
	}
	qinv := float32(0)
	if qn > 0 {
		qinv = float32(1 / math.Sqrt(float64(qn)))
	}
	best := make([]float32, len(e.byID))
	bestRow := make([]int32, len(e.byID))
	for i := range best {
		best[i] = negInf
	}
	out := ranked{best: best}
	if stats {
		sums := make([]float32, len(e.byID))
		var cSum, cSq float64
		chunks := 0
		for r, s := range scores {
			n := e.rowNote[r]
			if n == skip || (allowed != nil && !allowed[n]) {
				continue
			}
			c := float32(s) * e.inv[r] * qinv
			sums[n] += c
			chunks++
			cSum += float64(c)
			cSq += float64(c) * float64(c)
			if c > best[n] {
				best[n], bestRow[n] = c, int32(r)
			}
		}
		out.sum = sums
		if chunks > 0 {
			out.chunkMean = cSum / float64(chunks)
			out.chunkStd = math.Sqrt(max(cSq/float64(chunks)-out.chunkMean*out.chunkMean, 0))
		}
	} else {
		// The query's norm scales every cosine alike: it is applied to
		// each note's best only. Ties between parts go to the earlier row,
		// as a single pass would.
		for _, pb := range parts {
			for n, c := range pb.best {
				if c > best[n] || c == best[n] && c != negInf && pb.row[n] < bestRow[n] {
					best[n], bestRow[n] = c, pb.row[n]
				}
			}
		}
		for n, c := range best {
			if c != negInf {
				best[n] = c * qinv
			}
		}
	}
	h := &hitHeap{}
	for n, s := range best {
		if s == negInf {
			continue
		}
		out.scored++
		x := hit{note: int32(n), row: bestRow[n], score: s}
		if h.Len() < k {
			heap.Push(h, x)
		} else if k > 0 && less((*h)[0], x) {
			(*h)[0] = x
			heap.Fix(h, 0)
		}
	}
	out.top = make([]hit, h.Len())
	for i := len(out.top) - 1; i >= 0; i-- {
		out.top[i] = heap.Pop(h).(hit)
	}
	for i := range out.top {
		out.top[i].row = int32(e.rowChunk[out.top[i].row])
	}
	return out
}

// parallelRows is the size from which a scan is split over the cores:
// scanning 100,000 rows of 768 bytes is bound by memory bandwidth, which
// two cores use better than one.
const parallelRows = 32 << 10

// scan runs the kernel over the rows of m, split over GOMAXPROCS
// goroutines for a large matrix, and then each (nil: none) over the rows
// [lo, hi) each goroutine scored, in that goroutine.
func scan(q []int16, m []int8, stride int, out []int32, each func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), len(out)/(parallelRows/2))
	if len(out) < parallelRows || parts < 2 {
		dots(q, m, stride, out)
		if each != nil {
			each(0, len(out))
		}
		return
	}
	var wg sync.WaitGroup
	per := (len(out) + parts - 1) / parts
	for lo := 0; lo < len(out); lo += per {
		hi := min(lo+per, len(out))
		wg.Add(1)
		go func() {
			defer wg.Done()
			dots(q, m[lo*stride:hi*stride], stride, out[lo:hi])
			if each != nil {
				each(lo, hi)
			}
		}()
	}
	wg.Wait()
}

// partBest is the best chunk of each note among some rows.
type partBest struct {
	best []float32
	row  []int32
}

// less orders hits worst first: lower score, then later path id.
func less(a, b hit) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.note > b.note
}

type hitHeap []hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return less(h[i], h[j]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (e *Engine) pathOf(id int32) string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if n := e.byID[id]; n != nil {
		return n.path
	}
	return ""
}

func (e *Engine) paths(hs []hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = e.pathOf(h.note)
	}
	return out
}

// results turns hits (whose row is now the chunk index) into results,
// with the best chunk's heading and the start of its text, cleaned as
// search's snippets are, as snippet. The notes are read in parallel.
func (e *Engine) results(hs []hit) []search.Result {
	out := make([]search.Result, len(hs))
	keep := make([]bool, len(hs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, h := range hs {
		p := e.pathOf(h.note)
		if p == "" {
			continue
		}
		keep[i] = true
		r := &out[i]
		*r = search.Result{Path: p, Score: math.Round(float64(h.score)*1e4) / 1e4, ChunkIndex: int(h.row), Tags: []string{}}
		if m, ok := e.ix.Note(p); ok {
			r.Title = m.Title
			if m.Tags != nil {
				r.Tags = m.Tags
			}
			r.MTime = m.MTime.UnixMilli()
			if !m.Date.IsZero() {
				r.Date = m.Date.UnixMilli()
			}
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			heading, snippet, err := e.ix.ChunkSnippet(p, r.ChunkIndex)
			if err != nil {
				e.log.Debug("no snippet", "path", p, "error", err)
				return
			}
			r.Heading, r.Snippet = heading, snippet
		}()
	}
	wg.Wait()
	kept := out[:0]
	for i, r := range out {
		if keep[i] {
			kept = append(kept, r)
		}
	}
	return kept
}

// freeText is the part of a query that is embedded: its words and
// phrases, without operators (OR, -exclusions, tag:, path:, file:), which
// filter instead.
func freeText(q string) string {
	var words []string
	for _, f := range strings.Fields(q) {
		lf := strings.ToLower(f)
		switch {
		case f == "OR", strings.HasPrefix(f, "-"),
			strings.HasPrefix(lf, "tag:"), strings.HasPrefix(lf, "path:"), strings.HasPrefix(lf, "file:"):
			continue
		}
		if f = strings.Trim(f, `"`); f != "" {
			words = append(words, f)
		}
	}
	return strings.Join(words, " ")
}

// Related returns the notes closest to the note name designates (a path,
// title or wikilink, as readNote takes): their best chunk against the
// mean of its chunks. The note itself is left out.
func (e *Engine) Related(ctx context.Context, name string, limit int) (*search.Results, error) {
	start := time.Now()
	p, err := e.ix.Lookup(name)
	if err != nil {
		return nil, err
	}
	limit = limitOf(limit)
	e.mu.RLock()
	n := e.notes[p]
	var q []int16
	skip := int32(-1)
	if n != nil && len(n.rows) > 0 {
		skip = n.id
		sum := make([]float64, e.stride)
		for _, r := range n.rows {
			row := e.mat[int(r)*e.stride : int(r+1)*e.stride]
			inv := float64(e.inv[r])
			for i, x := range row {
				sum[i] += float64(x) * inv
			}
		}
		f := make([]float32, len(sum))
		for i, x := range sum {
			f[i] = float32(x)
		}
		qq, _ := quantize(f, e.stride)
		q = widen(qq)
	}
	e.mu.RUnlock()
	if q == nil {
		return nil, fmt.Errorf("%w: %s (it is embedded in the background; try again shortly)", ErrNotEmbedded, p)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := e.rank(q, nil, skip, limit, false)
	res := &search.Results{Results: e.results(r.top), Total: r.scored}
	res.TookMs = float64(time.Since(start).Microseconds()) / 1000
	return res, nil
}
