package search

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/vault-agent/vault-agent/vault"
)

// Properties are searched through terms of the facts field (fFacts), made
// when a note is indexed (appendPropertyFacts):
//
//	p␟name             the note has the property
//	z␟name             its value is empty (null)
//	t␟name␟token       a word of its value (analysed as text: stemmed, folded),
//	                   unless the value is a number or a date
//	l␟name             a value too long for its words to be facts
//	n␟name␟key         a number of its value, as a key that sorts as numbers do
//	d␟name␟key         a date of its value, the same way (epoch milliseconds)
//
// so [status:draft] is one term, [duration:<5] a term range and
// [status] one term, whatever the size of the vault. Names are
// lower-cased. A value that one term cannot decide ([status:"first
// draft"], a regular expression, -words) is checked against the note's
// frontmatter, read again, for the notes its terms leave. The words of
// long values (a description, a summary: more than maxFactWords words,
// before or after stop words go) are not facts: each would be a term of its own beside the same word of the
// text, and the terms of a vault's descriptions cost a first index as much
// as a tenth of its time; a note with such a value of the property a query
// names is checked against its frontmatter instead.

// factSep separates the parts of a fact term.
const factSep = "\x1f"

// Caps on what one note's properties add to the index: a property whose
// value is a long text or a long list is searchable by its first words.
const (
	maxPropTokens = 64
	// maxFactWords is the most words a value may have for them to be
	// facts (t␟name␟token): statuses, names, tags, aliases, titles.
	maxFactWords  = 8
	maxPropValues = 64
	maxProps      = 200
)

// Property types, as Obsidian names them.
const (
	propText     = "text"
	propNumber   = "number"
	propDate     = "date"
	propDateTime = "datetime"
	propCheckbox = "checkbox"
	propList     = "list"
	propNull     = "null"
	propObject   = "object"
)

// propType is the type of a frontmatter value as YAML decoded it: numbers,
// booleans, lists, empty values, and text that reads as a date or a date
// and time are typed; the rest is text.
func propType(v any) string {
	switch x := v.(type) {
	case nil:
		return propNull
	case bool:
		return propCheckbox
	case int, int64, uint64, float64:
		return propNumber
	case []any:
		return propList
	case map[string]any:
		return propObject
	case string:
		if t, ok := vault.ParseDate(x); ok {
			if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && len(strings.TrimSpace(x)) <= 10 {
				return propDate
			}
			return propDateTime
		}
	}
	return propText
}

// scalars returns the values of a property as scalars: the elements of a
// list, or the value itself; nested objects have none.
func scalars(v any) []any {
	switch x := v.(type) {
	case []any:
		out := make([]any, 0, min(len(x), maxPropValues))
		for _, e := range x {
			switch e.(type) {
			case []any, map[string]any:
				continue
			}
			if len(out) == maxPropValues {
				break
			}
			out = append(out, e)
		}
		return out
	case map[string]any, nil:
		return nil
	}
	return []any{v}
}

// scalarText is a scalar as text.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// isText reports whether a scalar is text as YAML read it (quoted, or
// not a number, a boolean or a date).
func isText(v any) bool {
	_, ok := v.(string)
	return ok
}

// scalarNumber is a scalar's number: a YAML number, or text that is one.
func scalarNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// sortKey encodes f, in hex, so that keys sort as the numbers do.
func sortKey(f float64) string { return hex.EncodeToString(sortKeyBytes(f)) }

// sortKeyBytes is f's bits made to sort as the numbers do: the sign bit
// flipped for positive numbers, every bit for negative ones.
func sortKeyBytes(f float64) []byte {
	bits := math.Float64bits(f)
	if bits>>63 == 0 {
		bits ^= 1 << 63
	} else {
		bits = ^bits
	}
	return binary.BigEndian.AppendUint64(nil, bits)
}

// appendPropertyFacts appends to b the fact terms of a note's properties
// (see the top of this file), one a line, analysing text with words.
func appendPropertyFacts(b []byte, words textWords, props map[string]any) []byte {
	if len(props) == 0 {
		return b
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names) // the cap keeps the same properties every time
	fact := func(kind byte, name string, rest ...[]byte) {
		b = append(b, kind)
		b = append(b, factSep...)
		b = append(b, name...)
		for _, r := range rest {
			b = append(b, factSep...)
			b = append(b, r...)
		}
		b = append(b, '\n')
	}
	var key [16]byte
	sortable := func(f float64) []byte {
		hex.Encode(key[:], sortKeyBytes(f))
		return key[:]
	}
	var value []byte // the words of one value, one a line
	for _, k := range names[:min(len(names), maxProps)] {
		name := strings.ToLower(strings.TrimSpace(k))
		if name == "" || strings.ContainsAny(name, "\n"+factSep) {
			continue
		}
		v := props[k]
		fact('p', name)
		if v == nil {
			fact('z', name)
			continue
		}
		tokens, long := 0, false
		for _, s := range scalars(v) {
			f, isNumber := scalarNumber(s)
			if isNumber {
				fact('n', name, sortable(f))
			}
			text := scalarText(s)
			t, isDate := vault.ParseDate(text)
			if isDate {
				fact('d', name, sortable(float64(t.UnixMilli())))
			}
			if isDate || isNumber && !isText(s) {
				continue // a date, a number: no words of its own
			}
			if tokens >= maxPropTokens || long {
				continue
			}
			if longText(text) {
				long = true
				fact('l', name)
				continue
			}
			value, n := value[:0], 0
			words.each(text, func(tok []byte) bool {
				if n++; n > maxFactWords {
					return false
				}
				value = append(append(value, tok...), '\n')
				return true
			})
			if n > maxFactWords {
				long = true
				fact('l', name)
				continue
			}
			for len(value) > 0 && tokens < maxPropTokens {
				i := bytes.IndexByte(value, '\n')
				fact('t', name, value[:i])
				value, tokens = value[i+1:], tokens+1
			}
		}
	}
	return b
}

// longText reports whether text has more than maxFactWords words
// between spaces: too many for them to be facts, whatever stop words the
// analyzer would drop (it is not run on such a text at all).
func longText(s string) bool {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		space := s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'
		if !space && !in {
			if n++; n > maxFactWords {
				return true
			}
		}
		in = !space
	}
	return false
}

// textWords analyses text as the text analyzer does: through the fused
// filters (fastfield.go) when there are, else the analyzer.
type textWords struct {
	an    analysis.Analyzer
	fused *fusedChain
}

// analyzer is the text analyzer itself.
func (w textWords) analyzer() analysis.Analyzer {
	if w.fused != nil {
		return w.fused.an
	}
	return w.an
}

// each calls fn with each token of text until it returns false; the token
// is valid during the call only.
func (w textWords) each(text string, fn func(tok []byte) bool) {
	if w.fused == nil {
		for _, t := range w.an.Analyze([]byte(text)) {
			if !fn(t.Term) {
				return
			}
		}
		return
	}
	t := tokenPool.Get().(*tokenWriter)
	t.tokenize([]byte(text))
	for _, tok := range w.fused.filter(t.out) {
		if !fn(tok.Term) {
			break
		}
	}
	t.reset()
	tokenPool.Put(t)
}

// lexProp reads the property token starting at rs[i] == '[' up to its
// closing ']' (or the end): [name], [name:value], [name:null] or
// [name:<bound]. A value is a sub-query. base is the column of rs[0].
func lexProp(rs []rune, i, base int) (*Prop, int, error) {
	pos := base + i + 1
	end, colon := len(rs), -1
	quoted := false
	for j := i + 1; j < len(rs); j++ {
		c := rs[j]
		switch {
		case c == '\\' && quoted:
			j++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '/' && colon >= 0 && (j == colon+1 || unicode.IsSpace(rs[j-1]) || rs[j-1] == '(') && regexEnd(rs, j) > 0:
			j = regexEnd(rs, j)
		case c == ':' && colon < 0:
			colon = j
		case c == ']':
			end = j
		}
		if end < len(rs) {
			break
		}
	}
	next := min(end+1, len(rs))
	nameEnd := end
	if colon >= 0 {
		nameEnd = colon
	}
	name := strings.TrimSpace(string(rs[i+1 : nameEnd]))
	if n, _ := readQuoted([]rune(name), 0); strings.HasPrefix(name, `"`) {
		name = n
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return nil, 0, &QueryError{Pos: pos, Msg: "[...] needs a property name, as in [status] or [status:draft]"}
	}
	p := &Prop{Name: name}
	if colon < 0 {
		return p, next, nil
	}
	vs := colon + 1
	val := strings.TrimSpace(string(rs[vs:end]))
	switch {
	case val == "":
	case strings.EqualFold(val, "null"):
		p.Null = true
	case strings.HasPrefix(val, "<") || strings.HasPrefix(val, ">"):
		p.Op = val[:1]
		if len(val) > 1 && val[1] == '=' {
			p.Op = val[:2]
		}
		p.Bound = strings.Trim(strings.TrimSpace(val[len(p.Op):]), `"`)
		if _, _, ok := parseBound(p.Bound, p.Op); !ok {
			return nil, 0, &QueryError{Pos: pos, Msg: fmt.Sprintf("[%s:%s%s]: compare with a number (5, 2.5) or a date (2026-03-01)", name, p.Op, p.Bound)}
		}
	default:
		toks, err := lexRunes(rs[vs:end], base+vs)
		if err != nil {
			return nil, 0, err
		}
		v, err := parseTokens(toks)
		if err != nil {
			return nil, 0, err
		}
		if v != nil {
			pp := &parser{}
			pp.noNested(pos, "["+name+":...]", v)
			if pp.err != nil {
				return nil, 0, pp.err
			}
		}
		p.Value = v
	}
	return p, next, nil
}

// parseBound reads the bound of a comparison: a number, or a date (then
// date is set) as the first moment it includes or excludes per op: a day
// bound compares with the whole day, so [due:<2026-03-02] is before that
// day and [due:>2026-03-02] after it.
func parseBound(s, op string) (v float64, date, ok bool) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f, false, true
	}
	t, ok := vault.ParseDate(s)
	if !ok {
		return 0, false, false
	}
	if len(strings.TrimSpace(s)) <= 10 && (op == ">" || op == "<=") {
		t = t.AddDate(0, 0, 1) // the day after: > and <= take the whole day
	}
	return float64(t.UnixMilli()), true, true
}

// compileProp compiles a property node: a query over fact terms, exact
// when exact is set, else the notes it finds must be checked against
// their frontmatter (see propMatches).
func (c *compiler) compileProp(p *Prop) (q query.Query, exact bool) {
	name := p.Name
	switch {
	case p.Null:
		return termQ(fFacts, "z"+factSep+name), true
	case p.Op != "":
		v, date, _ := parseBound(p.Bound, p.Op)
		prefix := "n" + factSep + name + factSep
		if date {
			prefix = "d" + factSep + name + factSep
		}
		lo, hi := prefix, prefix+"g" // every key is hex, below "g"
		loIncl, hiIncl := true, false
		switch {
		case p.Op == ">" && !date:
			lo, loIncl = prefix+sortKey(v), false
		case p.Op == ">=" || p.Op == ">":
			lo = prefix + sortKey(v)
		case p.Op == "<=" && !date:
			hi, hiIncl = prefix+sortKey(v), true
		default: // <, and <= of a day: before the day after
			hi = prefix + sortKey(v)
		}
		rq := query.NewTermRangeInclusiveQuery(lo, hi, &loIncl, &hiIncl)
		rq.SetField(fFacts)
		return rq, true
	case p.Value == nil:
		return termQ(fFacts, "p"+factSep+name), true
	}
	q, exact = c.factQuery(name, p.Value)
	if q != nil && c.factCount != nil && c.factCount("l"+factSep+name) > 0 {
		// Some notes' values of it are too long to have word facts:
		// those notes are candidates too, checked against their text.
		d := query.NewDisjunctionQuery([]query.Query{q, termQ(fFacts, "l"+factSep+name)})
		d.SetMin(1)
		q, exact = d, false
	}
	if q == nil {
		q = termQ(fFacts, "p"+factSep+name)
	} else if !exact {
		q = query.NewConjunctionQuery([]query.Query{termQ(fFacts, "p"+factSep+name), q})
	}
	return q, exact
}

// factQuery is the query of the value terms of property name for the
// value sub-query v: nil when the terms cannot narrow it (a negation, a
// regular expression), exact when they decide it alone (one word, or
// words joined by OR).
func (c *compiler) factQuery(name string, v Node) (query.Query, bool) {
	switch x := v.(type) {
	case Term:
		q, exact := c.wordFacts(name, x.Text)
		// A number or a date is a fact of its own: a value that is one
		// has no word facts.
		var typed query.Query
		if f, err := strconv.ParseFloat(x.Text, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			typed = termQ(fFacts, "n"+factSep+name+factSep+sortKey(f))
		} else if t, ok := vault.ParseDate(x.Text); ok {
			lo, hi := float64(t.UnixMilli()), float64(t.UnixMilli())
			if len(strings.TrimSpace(x.Text)) <= 10 {
				hi = float64(t.AddDate(0, 0, 1).UnixMilli() - 1) // the whole day
			}
			incl := true
			rq := query.NewTermRangeInclusiveQuery("d"+factSep+name+factSep+sortKey(lo), "d"+factSep+name+factSep+sortKey(hi), &incl, &incl)
			rq.SetField(fFacts)
			typed = rq
		}
		if typed == nil {
			return q, exact
		}
		if q == nil {
			return typed, true
		}
		d := query.NewDisjunctionQuery([]query.Query{typed, q})
		d.SetMin(1)
		return d, exact
	case Phrase:
		q, _ := c.wordFacts(name, x.Text)
		return q, false
	case *Content:
		return c.factQuery(name, x.X)
	case *Case:
		q, exact := c.factQuery(name, x.X)
		return q, exact && !x.Sensitive
	case And:
		var qs []query.Query
		for _, it := range x.Items {
			if q, _ := c.factQuery(name, it); q != nil {
				qs = append(qs, q)
			}
		}
		if len(qs) == 0 {
			return nil, false
		}
		return query.NewConjunctionQuery(qs), false
	case Or:
		qs := make([]query.Query, 0, len(x.Items))
		exact := true
		for _, it := range x.Items {
			q, e := c.factQuery(name, it)
			if q == nil {
				return nil, false
			}
			qs = append(qs, q)
			exact = exact && e
		}
		d := query.NewDisjunctionQuery(qs)
		d.SetMin(1)
		return d, exact
	}
	return nil, false
}

// wordFacts is the query of the word facts of property name for the
// words of text: exact for one word.
func (c *compiler) wordFacts(name, text string) (query.Query, bool) {
	toks := c.text.Analyze([]byte(text))
	switch len(toks) {
	case 0:
		return nil, false
	case 1:
		return termQ(fFacts, "t"+factSep+name+factSep+string(toks[0].Term)), true
	}
	qs := make([]query.Query, len(toks))
	for i, t := range toks {
		qs[i] = termQ(fFacts, "t"+factSep+name+factSep+string(t.Term))
	}
	return query.NewConjunctionQuery(qs), false
}

// propMatches reports whether a note's frontmatter holds property p with
// a value that matches expr, p's value sub-query made ready by buildSpan
// (one of the values of a list).
func propMatches(an analysis.Analyzer, p *Prop, expr spanExpr, props map[string]any, notePath string) bool {
	v, ok := propValue(props, p.Name)
	if !ok || p.Value == nil {
		return ok
	}
	for _, s := range scalars(v) {
		u := &unit{an: an, text: scalarText(s), path: notePath}
		if expr.eval(u) {
			return true
		}
	}
	return false
}

// propValue finds a property by its lower-cased name.
func propValue(props map[string]any, name string) (any, bool) {
	for k, v := range props {
		if strings.ToLower(strings.TrimSpace(k)) == name {
			return v, true
		}
	}
	return nil, false
}

// PropertyNote is a note listed by its properties.
type PropertyNote struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	// Properties are the note's properties that the query names, with
	// their values as written and their type.
	Properties []PropertyValue `json:"properties"`
	MTime      int64           `json:"mtime"`
}

// PropertyValue is one property of a note.
type PropertyValue struct {
	Name  string `json:"name"`
	Type  string `json:"type" jsonschema:"text, number, date, datetime, checkbox, list, null or object"`
	Value any    `json:"value"`
}

// PropertyText writes a property's value (as decoded from JSON, or as
// PropertyValue holds it) on one line, as a reader would: a list's items
// joined by commas, an empty value as "(empty)".
func PropertyText(v any) string {
	switch x := v.(type) {
	case nil:
		return "(empty)"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = PropertyText(e)
		}
		return strings.Join(parts, ", ")
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// NotesByProperty lists the notes that match a property query, written as
// in a search ("[status:draft]", "[duration:>5] [tags]", or without
// brackets "status:draft"), sorted by path, at most limit of them (all
// when limit <= 0), with the total and the values of the properties the
// query names.
func (ix *Index) NotesByProperty(ctx context.Context, expr string, limit int) ([]PropertyNote, int, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, 0, &QueryError{Pos: 1, Msg: "a property query is empty: write [status], [status:draft] or [duration:>5]"}
	}
	if !strings.HasPrefix(expr, "[") && !strings.HasPrefix(expr, "-[") {
		expr = "[" + expr + "]"
	}
	q, err := ParseQuery(expr)
	if err != nil {
		return nil, 0, err
	}
	var names []string
	walkNodes(q.Root, func(n Node) {
		if p, ok := n.(*Prop); ok && !containsStr(names, p.Name) {
			names = append(names, p.Name)
		}
	})
	if len(names) == 0 {
		return nil, 0, &QueryError{Pos: 1, Msg: "name a property in brackets: [status], [status:draft], [duration:>5]"}
	}
	paths, _, err := ix.FilterPaths(ctx, Request{Query: expr})
	if err != nil {
		return nil, 0, err
	}
	sort.Strings(paths)
	total := len(paths)
	if limit > 0 && len(paths) > limit {
		paths = paths[:limit]
	}
	out := make([]PropertyNote, 0, len(paths))
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		pn := PropertyNote{Path: p, Properties: []PropertyValue{}}
		if m, ok := ix.Note(p); ok {
			pn.Title, pn.MTime = m.Title, msec(m.MTime)
		}
		if raw, err := ix.v.ReadRaw(p, vault.MaxFrontmatterBytes+4096); err == nil {
			props := vault.ParseProperties(raw.Content)
			for _, name := range names {
				if v, ok := propValue(props, name); ok {
					pn.Properties = append(pn.Properties, PropertyValue{Name: name, Type: propType(v), Value: v})
				}
			}
		}
		out = append(out, pn)
	}
	return out, total, nil
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
