package search

import (
	"fmt"
	"path"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
)

// How an operator's value is matched against a part of a note (a line, a
// block, a section, a task's text, a property's value): as Obsidian does,
// every word of it required in that part, with OR, - and "phrases"
// inside. Words match as free terms do (case, accents and English endings
// aside: "call" matches "calls" and "Called"), not as substrings; a
// /regular expression/ matches anywhere in the text, in any case, and
// match-case: words only with their case as written.

// unit is the text of one part of a note, with its words analysed on
// first use.
type unit struct {
	an   analysis.Analyzer
	text string
	path string // the note's path, for path: and file: inside a value

	analysed bool
	toks     []unitTok
	set      map[string]bool // for long units
}

type unitTok struct {
	term string
	pos  int
}

// analysedText is a note's text analysed once, whose parts (lines, blocks,
// sections) are units with their share of its tokens.
type analysedText struct {
	an     analysis.Analyzer
	lines  noteLines
	toks   []unitTok
	starts []int // the byte offset of each token in lines.text
}

// analyseText analyses a note's text with words, its terms in one arena
// (a check analyses thousands of notes in a search).
func analyseText(words textWords, lines noteLines) *analysedText {
	input := []byte(lines.text)
	var ts analysis.TokenStream
	var w *tokenWriter
	if words.fused != nil {
		w = tokenPool.Get().(*tokenWriter)
		w.tokenize(input)
		ts = words.fused.filter(w.out)
	} else {
		ts = words.an.Analyze(input)
	}
	n := 0
	for _, t := range ts {
		n += len(t.Term)
	}
	arena := make([]byte, 0, n) // never grows: the strings below view it
	a := &analysedText{an: words.analyzer(), lines: lines, toks: make([]unitTok, len(ts)), starts: make([]int, len(ts))}
	for i, t := range ts {
		off := len(arena)
		arena = append(arena, t.Term...)
		a.toks[i], a.starts[i] = unitTok{unsafeString(arena[off:len(arena):len(arena)]), t.Position}, t.Start
	}
	if w != nil {
		w.reset()
		tokenPool.Put(w)
	}
	return a
}

// unit is lines from to to (1-based, inclusive) with their tokens.
func (a *analysedText) unit(from, to int, path string) *unit {
	lo, hi := a.lines.offsets(from, to)
	i := sort.SearchInts(a.starts, lo)
	j := i + sort.SearchInts(a.starts[i:], hi)
	return &unit{an: a.an, text: a.lines.span(from, to), path: path, analysed: true, toks: a.toks[i:j:j]}
}

func (u *unit) tokens() []unitTok {
	if !u.analysed {
		u.analysed = true
		ts := u.an.Analyze([]byte(u.text))
		u.toks = make([]unitTok, len(ts))
		for i, t := range ts {
			u.toks[i] = unitTok{string(t.Term), t.Position}
		}
	}
	return u.toks
}

func (u *unit) has(term string) bool {
	toks := u.tokens()
	if u.set == nil && len(toks) > 24 {
		u.set = make(map[string]bool, len(toks))
		for _, t := range toks {
			u.set[t.term] = true
		}
	}
	if u.set != nil {
		return u.set[term]
	}
	for _, t := range toks {
		if t.term == term {
			return true
		}
	}
	return false
}

// spanExpr is an operator's value made ready to match parts of notes.
type spanExpr interface {
	eval(u *unit) bool
}

type (
	spanConst bool
	spanWords []string // every word
	// spanPhrase is words at these relative positions.
	spanPhrase []unitTok
	// spanExact is text with its case, as a whole word or words.
	spanExact string
	spanRegex struct{ re *regexp.Regexp }
	spanTag   string // #tag or a nested #tag/...
	// spanNote is a test of the note itself (path:, file: inside a value).
	spanNote func(path string) bool
	spanAnd  []spanExpr
	spanOr   []spanExpr
	spanNot  struct{ x spanExpr }
)

func (s spanConst) eval(*unit) bool { return bool(s) }

func (s spanWords) eval(u *unit) bool {
	for _, w := range s {
		if !u.has(w) {
			return false
		}
	}
	return true
}

func (s spanPhrase) eval(u *unit) bool {
	toks := u.tokens()
	for i, t := range toks {
		if t.term != s[0].term {
			continue
		}
		ok := true
		for _, w := range s[1:] {
			want := t.pos + w.pos - s[0].pos
			found := false
			for _, o := range toks[i+1:] {
				if o.pos == want {
					found = o.term == w.term
					break
				}
				if o.pos > want {
					break
				}
			}
			if !found {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (s spanExact) eval(u *unit) bool {
	text, w := u.text, string(s)
	for off := 0; ; {
		i := strings.Index(text[off:], w)
		if i < 0 {
			return false
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(w):])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
		off = i + 1
	}
}

func (s spanRegex) eval(u *unit) bool { return s.re.MatchString(u.text) }

func (s spanTag) eval(u *unit) bool {
	text := strings.ToLower(u.text)
	want := "#" + string(s)
	for off := 0; ; {
		i := strings.Index(text[off:], want)
		if i < 0 {
			return false
		}
		i += off
		after, _ := utf8.DecodeRuneInString(text[i+len(want):])
		if after == utf8.RuneError || after == '/' || !isWordRune(after) && after != '-' {
			return true
		}
		off = i + 1
	}
}

func (s spanNote) eval(u *unit) bool { return s(u.path) }

func (s spanAnd) eval(u *unit) bool {
	for _, x := range s {
		if !x.eval(u) {
			return false
		}
	}
	return true
}

func (s spanOr) eval(u *unit) bool {
	for _, x := range s {
		if x.eval(u) {
			return true
		}
	}
	return false
}

func (s spanNot) eval(u *unit) bool { return !s.x.eval(u) }

// buildSpan makes n ready to match parts of notes, analysing its words
// with an; sensitive matches words with their case (match-case:).
func buildSpan(an analysis.Analyzer, n Node, sensitive bool) spanExpr {
	switch x := n.(type) {
	case Term:
		if sensitive {
			return spanExact(x.Text)
		}
		toks := an.Analyze([]byte(x.Text))
		if len(toks) == 0 {
			return spanConst(true) // a stop word: ignored, as in a search
		}
		ws := make(spanWords, len(toks))
		for i, t := range toks {
			ws[i] = string(t.Term)
		}
		return ws
	case Phrase:
		if sensitive {
			return spanExact(x.Text)
		}
		toks := an.Analyze([]byte(x.Text))
		switch len(toks) {
		case 0:
			return spanConst(true)
		case 1:
			return spanWords{string(toks[0].Term)}
		}
		ph := make(spanPhrase, len(toks))
		for i, t := range toks {
			ph[i] = unitTok{string(t.Term), t.Position}
		}
		return ph
	case *Regex:
		re := x.re
		if sensitive {
			re, _ = compileRegex(x.Src, true) // it compiled without case
		}
		switch x.Field {
		case "path":
			return spanNote(func(p string) bool { return re.MatchString(p) })
		case "file":
			return spanNote(func(p string) bool {
				return re.MatchString(strings.TrimSuffix(p[strings.LastIndexByte(p, '/')+1:], ".md"))
			})
		case "tag":
			return spanTagRegex{re}
		}
		return spanRegex{re}
	case Tag:
		if x.Name == "" {
			return spanConst(true)
		}
		return spanTag(x.Name)
	case PathPrefix:
		return spanNote(func(p string) bool { return strings.HasPrefix(strings.ToLower(p), x.Prefix) })
	case File:
		return spanNote(func(p string) bool { return fileMatches(fileKey(p), x.Name) })
	case *Content:
		return buildSpan(an, x.X, sensitive)
	case *Case:
		return buildSpan(an, x.X, x.Sensitive)
	case Not:
		return spanNot{buildSpan(an, x.X, sensitive)}
	case And:
		out := make(spanAnd, 0, len(x.Items))
		for _, it := range x.Items {
			if s := buildSpan(an, it, sensitive); s != spanConst(true) {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			return spanConst(true)
		}
		return out
	case Or:
		out := make(spanOr, 0, len(x.Items))
		for _, it := range x.Items {
			out = append(out, buildSpan(an, it, sensitive))
		}
		return out
	}
	return spanConst(false)
}

// spanTagRegex is tag:/re/ inside a value: a #tag of the text that the
// expression matches.
type spanTagRegex struct{ re *regexp.Regexp }

var reHashTag = regexp.MustCompile(`#[\p{L}\p{N}_/\-]+`)

func (s spanTagRegex) eval(u *unit) bool {
	for _, t := range reHashTag.FindAllString(u.text, -1) {
		if s.re.MatchString(t[1:]) {
			return true
		}
	}
	return false
}

// positives returns the words, phrases and expressions of n that are not
// negated, one spanExpr each: what shows where a part matched.
func positives(an analysis.Analyzer, n Node, sensitive bool) spanOr {
	var out spanOr
	var walk func(Node, bool)
	walk = func(n Node, sens bool) {
		switch x := n.(type) {
		case Term, Phrase, *Regex, Tag:
			if s := buildSpan(an, x, sens); s != spanConst(true) {
				out = append(out, s)
			}
		case *Content:
			walk(x.X, sens)
		case *Case:
			walk(x.X, x.Sensitive)
		case And:
			for _, it := range x.Items {
				walk(it, sens)
			}
		case Or:
			for _, it := range x.Items {
				walk(it, sens)
			}
		}
	}
	if n != nil {
		walk(n, sensitive)
	}
	return out
}

// fileMatches is file:'s test of a file key: it contains name, or
// matches it as a pattern when it has * or ?.
func fileMatches(key, name string) bool {
	if strings.ContainsAny(name, "*?") {
		ok, _ := path.Match(name, key)
		return ok
	}
	return strings.Contains(key, name)
}

// Bounds on a query's regular expression: its source and its compiled
// program (RE2 runs in time linear in the text, times the program).
const (
	maxRegexBytes = 1000
	maxRegexInsts = 20_000
)

// compileRegex compiles a regular expression of the query (RE2 syntax),
// without regard to case unless sensitive, refusing one over the bounds.
func compileRegex(src string, sensitive bool) (*regexp.Regexp, error) {
	if len(src) > maxRegexBytes {
		return nil, fmt.Errorf("regular expression /%s/ is %d bytes long, at most %d", truncateQuery(src), len(src), maxRegexBytes)
	}
	flags := syntax.Perl
	if !sensitive {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(src, flags)
	if err != nil {
		return nil, fmt.Errorf("regular expression /%s/: %v (the syntax is RE2's: no lookaround such as (?=...) or backreferences such as \\1)", truncateQuery(src), strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, fmt.Errorf("regular expression /%s/: %v", truncateQuery(src), err)
	}
	if len(prog.Inst) > maxRegexInsts {
		return nil, fmt.Errorf("regular expression /%s/ is too complex (%d instructions, at most %d): simplify its repetitions", truncateQuery(src), len(prog.Inst), maxRegexInsts)
	}
	if !sensitive {
		src = "(?i)" + src
	}
	return regexp.Compile(src)
}

// walkNodes calls fn for n and every node inside it, operator values
// included.
func walkNodes(n Node, fn func(Node)) {
	if n == nil {
		return
	}
	fn(n)
	for _, c := range children(n) {
		walkNodes(c, fn)
	}
}

// children returns the nodes right inside n: the items of a group, the
// value of an operator (none when it has none).
func children(n Node) []Node {
	var one Node
	switch x := n.(type) {
	case And:
		return x.Items
	case Or:
		return x.Items
	case Not:
		one = x.X
	case *Content:
		one = x.X
	case *Case:
		one = x.X
	case *Scope:
		one = x.X
	case *Prop:
		one = x.Value
	}
	if one == nil {
		return nil
	}
	return []Node{one}
}
