package search

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/vault"
)

// Operators that look at parts of notes (line:, block:, section:, the task
// operators, a [property:value] its terms cannot decide, match-case:, a
// /regex/ over the text) are resolved before the query runs, into the set
// of notes they match: the index narrows the notes to those that can match
// (every word of the value is in them), and each of those is checked, its
// tasks from the index, its text from the disk with the line ranges of its
// sections and blocks from the index. The set is then one filter of the
// query, so these operators compose with ranking, OR and - like any other.
// Checking reads notes in parallel and stops after scanTimeout.

// LineMatch is a line of a note where an operator matched: the line of line:,
// the task of a task operator, the lines of the block or section that hold
// its words.
type LineMatch struct {
	// Line is the 1-based line in the file.
	Line int `json:"line"`
	// Text is the line as written (a task as "- [ ] text"), cut at
	// matchRunes characters.
	Text string `json:"text"`
	// Kind is the operator: line, block, section, task, task-todo or
	// task-done.
	Kind string `json:"kind"`
}

// Bounds on what matches a search reports and how long it checks notes.
const (
	matchRunes        = 200
	maxMatchesPerNote = 20
	// maxResultMatches is how many matches one result carries.
	maxResultMatches = 10
)

// scanTimeout bounds the checking of notes for one operator (a variable
// for tests).
var scanTimeout = 5 * time.Second

// opResult is what an operator resolved to: the notes it matches, sorted,
// and where in each it matched.
type opResult struct {
	paths []string
	lines map[string][]LineMatch
}

// opResolver resolves the operators of one search (and its fuzzy retry).
type opResolver struct {
	ix    *Index
	ctx   context.Context
	cache map[Node]*opResult
}

func (ix *Index) newResolver(ctx context.Context) *opResolver {
	return &opResolver{ix: ix, ctx: ctx, cache: map[Node]*opResult{}}
}

// resolve returns the notes n matches; n is a *Scope, a *Prop, a *Regex
// over the text or a match-case *Case.
func (r *opResolver) resolve(c *compiler, n Node) (*opResult, error) {
	if res, ok := r.cache[n]; ok {
		return res, nil
	}
	ctx, cancel := context.WithTimeout(r.ctx, scanTimeout)
	defer cancel()
	var res *opResult
	var err error
	switch x := n.(type) {
	case *Scope:
		if isTaskScope(x.Kind) {
			res, err = r.tasks(ctx, c, x)
		} else {
			res, err = r.parts(ctx, c, x)
		}
	case *Prop:
		res, err = r.prop(ctx, c, x)
	case *Regex:
		expr := spanRegex{x.re}
		res, err = r.noteText(ctx, nil, func(u *unit) bool { return expr.eval(u) || x.re.MatchString(fileKey(u.path)) })
	case *Case:
		expr := buildSpan(c.text, x.X, x.Sensitive)
		res, err = r.noteText(ctx, c.candidates(x.X, []string{fTitle, fBody, fURL}), func(u *unit) bool {
			return expr.eval(u) || expr.eval(&unit{an: c.text, text: strings.TrimSuffix(u.path[strings.LastIndexByte(u.path, '/')+1:], ".md"), path: u.path})
		})
	default:
		return nil, fmt.Errorf("search: cannot resolve %s", n)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && r.ctx.Err() == nil {
			return nil, &QuerySlowError{Op: n.String(), Limit: scanTimeout}
		}
		return nil, err
	}
	r.cache[n] = res
	return res, nil
}

func isTaskScope(kind string) bool {
	return kind == scopeTask || kind == scopeTaskTodo || kind == scopeTaskDone
}

// candidate is a note the index leaves for an operator to check, with a
// stored field of its document.
type candidate struct {
	path   string
	stored string
}

// candidateHits returns the notes q matches (every note when q is nil),
// with the stored field (when not "").
func (ix *Index) candidateHits(ctx context.Context, q query.Query, field string) ([]candidate, error) {
	if q == nil {
		q = query.NewMatchAllQuery()
	}
	sr := bleve.NewSearchRequestOptions(q, ix.Count()+1, 0, false)
	sr.Score = "none"
	if field != "" {
		sr.Fields = []string{field}
	}
	ix.idxMu.RLock()
	defer ix.idxMu.RUnlock()
	if ix.idx == nil {
		return nil, ErrClosed
	}
	res, err := ix.idx.SearchInContext(ctx, sr)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	out := make([]candidate, len(res.Hits))
	for i, h := range res.Hits {
		out[i].path = h.ID
		if s, ok := h.Fields[field].(string); ok {
			out[i].stored = s
		}
	}
	return out, nil
}

// candidates returns a query that every note with a part matching n
// matches, its words looked for in fields; nil when the index cannot
// narrow the notes (a negation, a regular expression).
func (c *compiler) candidates(n Node, fields []string) query.Query {
	switch x := n.(type) {
	case Term:
		return c.wordsIn(x.Text, fields)
	case Phrase:
		return c.wordsIn(x.Text, fields)
	case Tag:
		if x.Name == "" {
			return nil
		}
		return termQ(fTag, x.Name)
	case *Content:
		return c.candidates(x.X, fields)
	case *Case:
		return c.candidates(x.X, fields)
	case And:
		var qs []query.Query
		for _, it := range x.Items {
			if q := c.candidates(it, fields); q != nil {
				qs = append(qs, q)
			}
		}
		switch len(qs) {
		case 0:
			return nil
		case 1:
			return qs[0]
		}
		return query.NewConjunctionQuery(qs)
	case Or:
		qs := make([]query.Query, 0, len(x.Items))
		for _, it := range x.Items {
			q := c.candidates(it, fields)
			if q == nil {
				return nil
			}
			qs = append(qs, q)
		}
		d := query.NewDisjunctionQuery(qs)
		d.SetMin(1)
		return d
	}
	return nil
}

// wordsIn matches notes holding every word of text in one of fields; nil
// for only stop words or CJK text (the text analyzer's words are not the
// CJK fields').
func (c *compiler) wordsIn(text string, fields []string) query.Query {
	if hasCJK(text) || len(c.text.Analyze([]byte(text))) == 0 {
		return nil
	}
	return anyOf(fields, func(f string) query.Query {
		mq := query.NewMatchQuery(text)
		mq.SetField(f)
		mq.SetOperator(query.MatchQueryOperatorAnd)
		return mq
	})
}

// tasks resolves a task operator from the tasks stored in the index.
func (r *opResolver) tasks(ctx context.Context, c *compiler, s *Scope) (*opResult, error) {
	fact := factTask
	switch s.Kind {
	case scopeTaskTodo:
		fact = factTaskTodo
	case scopeTaskDone:
		fact = factTaskDone
	}
	q := termQ(fFacts, fact)
	var expr spanExpr = spanConst(true)
	if s.X != nil {
		// A task's words are words of the body (a task in a comment is
		// none).
		if cq := c.candidates(s.X, []string{fBody}); cq != nil {
			q = query.NewConjunctionQuery([]query.Query{q, cq})
		}
		expr = buildSpan(c.text, s.X, false)
	}
	cands, err := r.ix.candidateHits(ctx, q, fParts)
	if err != nil {
		return nil, err
	}
	res := &opResult{lines: map[string][]LineMatch{}}
	for _, cand := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tasks, err := decodeTasks(cand.stored)
		if err != nil {
			r.ix.log.Warn("stored tasks unreadable", "path", cand.path, "err", err)
			continue
		}
		var ms []LineMatch
		for _, t := range tasks {
			if !taskKind(t, s.Kind) || !expr.eval(&unit{an: c.text, text: t.Text, path: cand.path}) {
				continue
			}
			if len(ms) < maxMatchesPerNote {
				ms = append(ms, LineMatch{Line: t.Line, Text: taskLine(t), Kind: s.Kind})
			}
		}
		if len(ms) > 0 {
			res.paths = append(res.paths, cand.path)
			res.lines[cand.path] = ms
		}
	}
	sort.Strings(res.paths)
	return res, nil
}

// taskKind reports whether t is a task of the operator kind.
func taskKind(t vault.Task, kind string) bool {
	switch kind {
	case scopeTaskTodo:
		return !t.Done
	case scopeTaskDone:
		return t.Done
	}
	return true
}

// taskLine is a task as a line of markdown.
func taskLine(t vault.Task) string {
	return truncate.Runes("- ["+t.Status+"] "+t.Text, matchRunes)
}

// parts resolves line:, block: and section: against the notes' text.
func (r *opResolver) parts(ctx context.Context, c *compiler, s *Scope) (*opResult, error) {
	expr := buildSpan(c.text, s.X, false)
	show := positives(c.text, s.X, false)
	cands, err := r.ix.candidateHits(ctx, c.candidates(s.X, []string{fBody, fURL}), fParts)
	if err != nil {
		return nil, err
	}
	return r.ix.checkNotes(ctx, cands, func(cand candidate, raw *vault.RawNote) (bool, []LineMatch) {
		sections, blocks := r.ix.noteSpans(cand, raw)
		// Parts are matched as the note reads (comments and HTML tags
		// out, as the index has them); the lines shown are as written.
		lines := newNoteLines(raw.Content)
		visible := lines
		if v := visibleText(lines.text); v != lines.text {
			visible = newNoteLines([]byte(v))
		}
		var units []vault.Span
		switch s.Kind {
		case scopeLine:
			if len(sections) > 0 {
				for l := sections[0].Start; l <= lines.count(); l++ {
					units = append(units, vault.Span{Start: l, End: l})
				}
			}
		case scopeBlock:
			units = blocks
		default:
			for _, sec := range sections {
				units = append(units, sec.Span)
			}
		}
		// The text is analysed once; each part takes its tokens.
		text := analyseText(textWords{an: c.text, fused: r.ix.fused}, visible)
		var ms []LineMatch
		found := false
		for _, sp := range units {
			if !expr.eval(text.unit(sp.Start, sp.End, cand.path)) {
				continue
			}
			found = true
			before := len(ms)
			for l := sp.Start; l <= sp.End && l <= lines.count() && len(ms) < maxMatchesPerNote; l++ {
				if sp.Start == sp.End || len(show) > 0 && show.eval(text.unit(l, l, cand.path)) {
					ms = append(ms, LineMatch{Line: l, Text: truncate.Runes(strings.TrimSpace(lines.line(l)), matchRunes), Kind: s.Kind})
				}
			}
			if len(ms) == before && len(ms) < maxMatchesPerNote {
				ms = append(ms, LineMatch{Line: sp.Start, Text: truncate.Runes(strings.TrimSpace(lines.line(sp.Start)), matchRunes), Kind: s.Kind})
			}
			if len(ms) >= maxMatchesPerNote {
				break
			}
		}
		return found, ms
	})
}

// noteSpans returns the sections and blocks of a note read from raw: those
// stored in the index, unless the note changed since it was indexed.
func (ix *Index) noteSpans(cand candidate, raw *vault.RawNote) ([]vault.Section, []vault.Span) {
	if m, ok := ix.Note(cand.path); ok && !raw.Truncated {
		sum := sha256.Sum256(raw.Content)
		if hex.EncodeToString(sum[:]) == m.Hash {
			if cand.stored == "" {
				return nil, nil // an empty note
			}
			if secs, blocks, _, err := decodeParts(cand.stored, false); err == nil {
				return secs, blocks
			}
		}
	}
	n := vault.ParseForIndex(raw.Path, raw.Content, raw.ModTime)
	return n.Sections, n.Blocks
}

// prop resolves a property whose value its terms cannot decide, against
// the frontmatter of the notes they leave.
func (r *opResolver) prop(ctx context.Context, c *compiler, p *Prop) (*opResult, error) {
	q, _ := c.compileProp(p)
	cands, err := r.ix.candidateHits(ctx, q, "")
	if err != nil {
		return nil, err
	}
	var expr spanExpr = spanConst(true)
	if p.Value != nil {
		expr = buildSpan(c.text, p.Value, false)
	}
	return r.ix.checkNotes(ctx, cands, func(cand candidate, raw *vault.RawNote) (bool, []LineMatch) {
		return propMatches(c.text, p, expr, vault.ParseProperties(raw.Content), cand.path), nil
	})
}

// noteText resolves an operator over the whole text of the notes q leaves
// (every note when q is nil).
func (r *opResolver) noteText(ctx context.Context, q query.Query, match func(u *unit) bool) (*opResult, error) {
	cands, err := r.ix.candidateHits(ctx, q, "")
	if err != nil {
		return nil, err
	}
	an := r.ix.textAn
	return r.ix.checkNotes(ctx, cands, func(cand candidate, raw *vault.RawNote) (bool, []LineMatch) {
		return match(&unit{an: an, text: string(raw.Content), path: cand.path}), nil
	})
}

// maxCheckBytes is how much of a note is read to check it: what the
// index reads of it (its frontmatter and body limits), and a little more.
const maxCheckBytes = vault.MaxFrontmatterBytes + vault.MaxBodyBytes + 64<<10

// checkNotes reads the candidates from the vault, in parallel, and keeps
// those check accepts. A note that cannot be read (gone since it was
// indexed) is left out.
func (ix *Index) checkNotes(ctx context.Context, cands []candidate, check func(candidate, *vault.RawNote) (bool, []LineMatch)) (*opResult, error) {
	res := &opResult{lines: map[string][]LineMatch{}}
	var mu sync.Mutex
	work := make(chan candidate)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), max(1, len(cands))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cand := range work {
				raw, err := ix.v.ReadRaw(cand.path, maxCheckBytes)
				if err != nil {
					continue
				}
				ok, ms := check(cand, raw)
				if !ok {
					continue
				}
				mu.Lock()
				res.paths = append(res.paths, cand.path)
				if len(ms) > 0 {
					res.lines[cand.path] = ms
				}
				mu.Unlock()
			}
		}()
	}
	var err error
feed:
	for _, cand := range cands {
		select {
		case work <- cand:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	sort.Strings(res.paths)
	return res, nil
}

// noteLines indexes the lines of a note's content (or of its visible text,
// which has the same lines).
type noteLines struct {
	text   string
	starts []int // byte offset of each line
}

func newNoteLines(content []byte) noteLines {
	text := string(content)
	starts := make([]int, 1, 1+len(text)/32)
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	if len(text) > 0 && text[len(text)-1] == '\n' {
		starts = starts[:len(starts)-1] // no line after the last line end
	}
	return noteLines{text: text, starts: starts}
}

func (nl noteLines) count() int { return len(nl.starts) }

// offsets returns the byte range of lines a to b (1-based, inclusive),
// clamped to the note.
func (nl noteLines) offsets(a, b int) (lo, hi int) {
	a, b = max(a, 1), min(b, len(nl.starts))
	if a > b {
		return 0, 0
	}
	hi = len(nl.text)
	if b < len(nl.starts) {
		hi = nl.starts[b]
	}
	return nl.starts[a-1], hi
}

// line returns line n (1-based) without its line end; "" out of range.
func (nl noteLines) line(n int) string { return nl.span(n, n) }

// span returns lines a to b (1-based, inclusive), clamped to the note.
func (nl noteLines) span(a, b int) string {
	a, b = max(a, 1), min(b, len(nl.starts))
	if a > b {
		return ""
	}
	end := len(nl.text)
	if b < len(nl.starts) {
		end = nl.starts[b] - 1
	}
	return strings.TrimSuffix(nl.text[nl.starts[a-1]:max(end, nl.starts[a-1])], "\r")
}

// matchesOf returns the matches of the resolved operators for path, in
// line order, at most maxResultMatches.
func matchesOf(sets []*opResult, path string) []LineMatch {
	var out []LineMatch
	for _, s := range sets {
		out = append(out, s.lines[path]...)
	}
	if len(out) == 0 {
		return nil
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	uniq := out[:1]
	for _, m := range out[1:] {
		if last := uniq[len(uniq)-1]; m.Line != last.Line {
			uniq = append(uniq, m)
		}
	}
	return uniq[:min(len(uniq), maxResultMatches)]
}

// tasksMentioningFirst moves first, keeping their order, the hits whose
// tasks matched by a task operator of the query mention one of its ranked
// words: "launch task-todo:" lists the notes whose open tasks speak of
// the launch before those that only mention it elsewhere.
func (c *compiler) tasksMentioningFirst(hits bsearch.DocumentMatchCollection) bsearch.DocumentMatchCollection {
	var tasks []*opResult
	for _, s := range c.sets {
		for _, ms := range s.lines {
			if len(ms) > 0 && isTaskScope(ms[0].Kind) {
				tasks = append(tasks, s)
			}
			break
		}
	}
	if len(tasks) == 0 || len(c.ranked) == 0 {
		return hits
	}
	words := map[string]bool{}
	for _, rq := range c.ranked {
		for _, w := range rq.words {
			if !w.filler {
				words[w.token] = true
			}
		}
	}
	mentions := func(path string) bool {
		for _, s := range tasks {
			for _, m := range s.lines[path] {
				for _, t := range c.text.Analyze([]byte(m.Text)) {
					if words[string(t.Term)] {
						return true
					}
				}
			}
		}
		return false
	}
	out := make(bsearch.DocumentMatchCollection, 0, len(hits))
	var rest bsearch.DocumentMatchCollection
	for _, h := range hits {
		if mentions(h.ID) {
			out = append(out, h)
		} else {
			rest = append(rest, h)
		}
	}
	return append(out, rest...)
}

// factCount returns how many notes have the fact term (0 when the index
// cannot say).
func (ix *Index) factCount(term string) int {
	sr := bleve.NewSearchRequestOptions(termQ(fFacts, term), 0, 0, false)
	sr.Score = "none"
	ix.idxMu.RLock()
	defer ix.idxMu.RUnlock()
	if ix.idx == nil {
		return 0
	}
	res, err := ix.idx.Search(sr)
	if err != nil {
		return 0
	}
	return int(res.Total)
}
