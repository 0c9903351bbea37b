package search

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The query language:
//
//	sourdough starter        free terms, ranked (see compile.go for how many must match)
//	"exact phrase"           phrase in title, headings or body
//	-term  -"a phrase"       exclusion
//	tag:#recipe  tag:recipe  notes tagged recipe or recipe/… (also a bare #recipe)
//	path:projects/           path prefix, case-insensitive
//	file:plan  file:Plan.md  basename contains "plan", case-insensitive, with or
//	                         without .md; with * or ? a pattern for the whole name
//	a OR b                   either side; binds looser than the implicit AND
//	(a OR b) c               parentheses group
//
// The parser is forgiving where intent is clear: an unclosed quote runs to
// the end of the query, an unclosed parenthesis closes at the end, a
// dangling OR or a lone "-" is ignored, and a field name the language does
// not know ("foo:bar") is a plain term. It returns a *QueryError (matching
// ErrBadQuery) with the column only for what it cannot guess: a ")" without
// "(" and a tag:/path:/file: without a value.

// Query is a parsed query.
type Query struct {
	Root Node
}

// String renders the query as an s-expression-like form, stable for tests.
func (q *Query) String() string {
	if q == nil || q.Root == nil {
		return ""
	}
	return q.Root.String()
}

// Node is one node of the query AST.
type Node interface {
	String() string
	node()
}

// Term is a free search term, ranked.
type Term struct{ Text string }

// Phrase is an exact phrase.
type Phrase struct{ Text string }

// Tag matches notes carrying the tag or a nested tag below it.
type Tag struct{ Name string }

// PathPrefix matches notes whose path starts with Prefix (case-insensitive).
type PathPrefix struct{ Prefix string }

// File matches notes by basename (case-insensitive, without ".md").
type File struct{ Name string }

// Not excludes notes matching X.
type Not struct{ X Node }

// And requires its children (free terms are ranked, see compile.go).
type And struct{ Items []Node }

// Or matches any of its children.
type Or struct{ Items []Node }

func (Term) node()       {}
func (Phrase) node()     {}
func (Tag) node()        {}
func (PathPrefix) node() {}
func (File) node()       {}
func (Not) node()        {}
func (And) node()        {}
func (Or) node()         {}

func (n Term) String() string       { return n.Text }
func (n Phrase) String() string     { return strconv.Quote(n.Text) }
func (n Tag) String() string        { return "tag:" + n.Name }
func (n PathPrefix) String() string { return "path:" + n.Prefix }
func (n File) String() string       { return "file:" + n.Name }
func (n Not) String() string        { return "-" + n.X.String() }
func (n And) String() string        { return group("AND", n.Items) }
func (n Or) String() string         { return group("OR", n.Items) }

func group(op string, items []Node) string {
	var b strings.Builder
	b.WriteString("(")
	b.WriteString(op)
	for _, it := range items {
		b.WriteString(" ")
		b.WriteString(it.String())
	}
	b.WriteString(")")
	return b.String()
}

type tokKind int

const (
	tkEOF tokKind = iota
	tkWord
	tkPhrase
	tkField
	tkNeg
	tkOr
	tkLParen
	tkRParen
)

type token struct {
	kind  tokKind
	text  string // word, phrase text or field value
	field string // for tkField: "tag", "path" or "file"
	pos   int    // 1-based column
}

// lex splits s into tokens. Columns count runes.
func lex(s string) ([]token, error) {
	var toks []token
	rs := []rune(s)
	i := 0
	for i < len(rs) {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '(':
			toks = append(toks, token{kind: tkLParen, pos: i + 1})
			i++
		case r == ')':
			toks = append(toks, token{kind: tkRParen, pos: i + 1})
			i++
		case r == '-':
			// A '-' directly before something negates it; a lone '-' is
			// ignored.
			if i+1 < len(rs) && !unicode.IsSpace(rs[i+1]) && rs[i+1] != ')' && rs[i+1] != '-' {
				toks = append(toks, token{kind: tkNeg, pos: i + 1})
			}
			i++
		case r == '"':
			text, next := readQuoted(rs, i)
			if strings.TrimSpace(text) != "" {
				toks = append(toks, token{kind: tkPhrase, text: text, pos: i + 1})
			}
			i = next
		default:
			start := i
			for i < len(rs) && !unicode.IsSpace(rs[i]) && rs[i] != '(' && rs[i] != ')' && rs[i] != '"' {
				i++
			}
			word := string(rs[start:i])
			if word == "OR" {
				toks = append(toks, token{kind: tkOr, pos: start + 1})
				continue
			}
			if f, val, ok := splitField(word); ok {
				if val == "" && i < len(rs) && rs[i] == '"' {
					val, i = readQuoted(rs, i)
					val = strings.TrimSpace(val)
				}
				if fieldValueEmpty(f, val) {
					return nil, &QueryError{Pos: start + 1, Msg: f + ": needs a value"}
				}
				toks = append(toks, token{kind: tkField, field: f, text: val, pos: start + 1})
				continue
			}
			if len(word) > 1 && word[0] == '#' && isTagName(word[1:]) {
				toks = append(toks, token{kind: tkField, field: "tag", text: word[1:], pos: start + 1})
				continue
			}
			toks = append(toks, token{kind: tkWord, text: word, pos: start + 1})
		}
	}
	return append(toks, token{kind: tkEOF, pos: len(rs) + 1}), nil
}

func fieldValueEmpty(field, val string) bool {
	switch field {
	case "tag":
		return normTag(val) == ""
	case "file":
		return fileKey(val) == ""
	}
	return strings.TrimSpace(val) == ""
}

// readQuoted reads a quoted string starting at rs[i] == '"'. An unclosed
// quote runs to the end.
func readQuoted(rs []rune, i int) (string, int) {
	j := i + 1
	for j < len(rs) && rs[j] != '"' {
		j++
	}
	text := string(rs[i+1 : j])
	if j < len(rs) {
		j++ // closing quote
	}
	return text, j
}

func splitField(word string) (field, val string, ok bool) {
	k := strings.IndexByte(word, ':')
	if k <= 0 {
		return "", "", false
	}
	switch f := strings.ToLower(word[:k]); f {
	case "tag", "path", "file":
		return f, word[k+1:], true
	}
	return "", "", false
}

// isTagName reports whether s can be an Obsidian tag: letters, digits, '_',
// '-', '/', not only digits.
func isTagName(s string) bool {
	nonDigit := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || r == '_' || r == '-' || r == '/':
			nonDigit = true
		case unicode.IsDigit(r):
		default:
			return false
		}
	}
	return nonDigit
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tkEOF {
		p.i++
	}
	return t
}

// ParseQuery parses s in the query language described at the top of this
// file. It returns ErrEmptyQuery when s holds nothing to search for, a
// *QueryLimitError for a query over MaxQueryBytes or MaxQueryTerms, and a
// *QueryError for syntax it cannot make sense of.
func ParseQuery(s string) (*Query, error) {
	if err := CheckQuerySize(s); err != nil {
		return nil, err
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	var items []Node
	for {
		n := p.parseOr()
		if n != nil {
			items = append(items, n)
		}
		t := p.peek()
		if t.kind == tkEOF {
			break
		}
		if t.kind == tkRParen {
			return nil, &QueryError{Pos: t.pos, Msg: `")" without matching "("`}
		}
	}
	root := simplifyAnd(items)
	if root == nil {
		for _, t := range toks {
			if t.kind == tkOr {
				return nil, fmt.Errorf("%w: OR joins two things to search for, as in bread OR pizza, and %q has nothing for it to join",
					ErrEmptyQuery, truncateQuery(s))
			}
		}
		return nil, ErrEmptyQuery
	}
	return &Query{Root: root}, nil
}

func (p *parser) parseOr() Node {
	var items []Node
	for {
		for p.peek().kind == tkOr { // leading or doubled OR
			p.next()
		}
		if n := p.parseAnd(); n != nil {
			items = append(items, n)
		}
		if p.peek().kind != tkOr {
			break
		}
	}
	switch len(items) {
	case 0:
		return nil
	case 1:
		return items[0]
	}
	return Or{Items: items}
}

func (p *parser) parseAnd() Node {
	var items []Node
	for {
		k := p.peek().kind
		if k == tkEOF || k == tkRParen || k == tkOr {
			break
		}
		if n := p.parseUnary(); n != nil {
			items = append(items, n)
		}
	}
	return simplifyAnd(items)
}

func simplifyAnd(items []Node) Node {
	switch len(items) {
	case 0:
		return nil
	case 1:
		return items[0]
	}
	return And{Items: items}
}

func (p *parser) parseUnary() Node {
	if p.peek().kind == tkNeg {
		p.next()
		x := p.parsePrimary()
		if x == nil {
			return nil
		}
		return Not{X: x}
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() Node {
	t := p.next()
	switch t.kind {
	case tkWord:
		return Term{Text: t.text}
	case tkPhrase:
		return Phrase{Text: strings.Join(strings.Fields(t.text), " ")}
	case tkField:
		switch t.field {
		case "tag":
			return Tag{Name: normTag(t.text)}
		case "path":
			return PathPrefix{Prefix: strings.ToLower(strings.TrimPrefix(t.text, "/"))}
		default:
			return File{Name: fileKey(t.text)}
		}
	case tkLParen:
		n := p.parseOr()
		if p.peek().kind == tkRParen {
			p.next()
		} // an unclosed "(" closes at the end
		return n
	}
	// tkNeg directly followed by a token that cannot start a primary, or a
	// stray token: ignore.
	return nil
}

// normTag lower-cases a tag and strips '#' and surrounding '/'.
func normTag(s string) string {
	return strings.ToLower(strings.Trim(strings.TrimPrefix(strings.TrimSpace(s), "#"), "/"))
}
