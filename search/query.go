package search

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The query language, Obsidian's search syntax:
//
//	sourdough starter        free terms, ranked (see compile.go for how many must match)
//	"exact phrase"           phrase in title, headings or body; \" is a quote inside it
//	-term  -"a phrase"       exclusion; -(a b) excludes notes holding both a and b
//	tag:#recipe  tag:recipe  notes tagged recipe or recipe/… (also a bare #recipe)
//	path:projects/           path prefix, case-insensitive
//	file:plan  file:Plan.md  basename contains "plan", case-insensitive, with or
//	                         without .md; with * or ? a pattern for the whole name
//	a OR b                   either side; binds looser than the implicit AND
//	(a OR b) c               parentheses group
//	content:X                X in the note's text only (not its name, tags or properties)
//	match-case:X             X with its case as written; ignore-case:X in any case
//	line:X block:X section:X a line, a block (text between blank lines) or a
//	                         section (text between headings) that matches X
//	task:X task-todo:X       a task (open, or done) that matches X; alone:
//	task-done:X              notes with such a task
//	[prop] [prop:X]          notes with the property; whose value matches X
//	[prop:null]              whose value is empty; [prop:<5] [prop:>2026-03-01]
//	                         compare numbers and dates (also <= and >=)
//	/regex/                  a regular expression (RE2) over the note's text;
//	                         path:/re/ file:/re/ tag:/re/ over those
//
// X is a word, a "phrase", a /regex/ or a sub-query in parentheses, which
// an operator evaluates the way Obsidian does: every part required, with
// OR, - and quotes inside ("line:(mix -flour)", "task:(call OR email)").
//
// The parser is forgiving where intent is clear: an unclosed quote runs to
// the end of the query, an unclosed parenthesis or bracket closes at the
// end, a dangling OR or a lone "-" is ignored, and a field name the
// language does not know ("foo:bar") is a plain term. It returns a
// *QueryError (matching ErrBadQuery) with the column only for what it
// cannot guess: a ")" without "(", an operator without a value, a regular
// expression that does not compile, a property without a name or compared
// with something that is neither a number nor a date, and an operator
// nested in one that cannot hold it.

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

// Content matches X against the note's text only (content:X): not its
// name, path, tags or properties.
type Content struct{ X Node }

// Case matches X with its case as written (match-case:X, Sensitive) or in
// any case (ignore-case:X).
type Case struct {
	X         Node
	Sensitive bool
}

// Scope matches notes with a part that matches X: a line, a block, a
// section or a task (any, open or done), by Kind. A task Scope with a nil
// X matches notes with any such task.
type Scope struct {
	Kind string // one of the scope* constants
	X    Node
}

// Kinds of Scope, named as the operators.
const (
	scopeLine     = "line"
	scopeBlock    = "block"
	scopeSection  = "section"
	scopeTask     = "task"
	scopeTaskTodo = "task-todo"
	scopeTaskDone = "task-done"
)

// Prop matches notes by a frontmatter property: [name] (Value nil, no
// Op), [name:X], [name:null] (Null) or [name:<bound] (Op "<", ">", "<="
// or ">=" and Bound, a number or a date).
type Prop struct {
	Name  string // lower-cased
	Value Node
	Null  bool
	Op    string
	Bound string
}

// Regex is a regular expression (/.../, RE2 syntax) matched, without
// regard to case, against the note's text (Field "") or its path, file
// name or tags (Field "path", "file", "tag").
type Regex struct {
	Src   string
	Field string
	re    *regexp.Regexp // the expression, case-insensitive
}

func (Term) node()       {}
func (*Content) node()   {}
func (*Case) node()      {}
func (*Scope) node()     {}
func (*Prop) node()      {}
func (*Regex) node()     {}
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
func (n File) String() string {
	if n.Name == "" {
		return "file:.md" // every note
	}
	return "file:" + n.Name
}
func (n Not) String() string      { return "-" + n.X.String() }
func (n *Content) String() string { return "content:" + n.X.String() }
func (n *Case) String() string {
	if n.Sensitive {
		return "match-case:" + n.X.String()
	}
	return "ignore-case:" + n.X.String()
}
func (n *Scope) String() string {
	if n.X == nil {
		return n.Kind + ":"
	}
	return n.Kind + ":" + n.X.String()
}
func (n *Prop) String() string {
	switch {
	case n.Null:
		return "[" + n.Name + ":null]"
	case n.Op != "":
		return "[" + n.Name + ":" + n.Op + n.Bound + "]"
	case n.Value != nil:
		return "[" + n.Name + ":" + n.Value.String() + "]"
	}
	return "[" + n.Name + "]"
}
func (n *Regex) String() string {
	if n.Field != "" {
		return n.Field + ":/" + n.Src + "/"
	}
	return "/" + n.Src + "/"
}
func (n And) String() string { return group("AND", n.Items) }
func (n Or) String() string  { return group("OR", n.Items) }

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
	tkRegex // text: the expression's source
	tkProp  // node: the *Prop
)

// valueKind says what an operator's value is (token.val).
type valueKind int

const (
	valWord   valueKind = iota // a word: token.text
	valQuoted                  // a quoted value: token.text
	valRegex                   // /.../: token.text is the source
	valGroup                   // a sub-query in parentheses: the tokens that follow
	valNone                    // nothing (task operators alone)
)

type token struct {
	kind  tokKind
	text  string // word, phrase text, field value or regex source
	field string // for tkField: the operator, lower-cased, without ':'
	val   valueKind
	node  Node // for tkProp
	pos   int  // 1-based column
}

// operators are the field operators and whether a value is optional.
var operators = map[string]bool{
	"tag": false, "path": false, "file": false,
	"content": false, "match-case": false, "ignore-case": false,
	scopeLine: false, scopeBlock: false, scopeSection: false,
	scopeTask: true, scopeTaskTodo: true, scopeTaskDone: true,
}

// lex splits s into tokens. Columns count runes, from base+1.
func lex(s string) ([]token, error) { return lexRunes([]rune(s), 0) }

func lexRunes(rs []rune, base int) ([]token, error) {
	var toks []token
	i := 0
	for i < len(rs) {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '(':
			toks = append(toks, token{kind: tkLParen, pos: base + i + 1})
			i++
		case r == ')':
			toks = append(toks, token{kind: tkRParen, pos: base + i + 1})
			i++
		case r == '-':
			// A '-' directly before something negates it; a lone '-' is
			// ignored.
			if i+1 < len(rs) && !unicode.IsSpace(rs[i+1]) && rs[i+1] != ')' && rs[i+1] != '-' {
				toks = append(toks, token{kind: tkNeg, pos: base + i + 1})
			}
			i++
		case r == '"':
			text, next := readQuoted(rs, i)
			if strings.TrimSpace(text) != "" {
				toks = append(toks, token{kind: tkPhrase, text: text, pos: base + i + 1})
			}
			i = next
		case r == '[' && (i+1 == len(rs) || rs[i+1] != '['):
			prop, next, err := lexProp(rs, i, base)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tkProp, node: prop, pos: base + i + 1})
			i = next
		case r == '/' && regexEnd(rs, i) > 0:
			end := regexEnd(rs, i)
			toks = append(toks, token{kind: tkRegex, text: string(rs[i+1 : end]), pos: base + i + 1})
			i = end + 1
		default:
			start := i
			i = wordEnd(rs, i)
			word := string(rs[start:i])
			if word == "OR" {
				toks = append(toks, token{kind: tkOr, pos: base + start + 1})
				continue
			}
			if f, val, ok := splitField(word); ok {
				t := token{kind: tkField, field: f, text: val, pos: base + start + 1}
				valStart := start + utf8.RuneCountInString(f) + 1
				switch {
				case val != "" && val[0] == '/' && regexEnd(rs, valStart) > 0:
					end := regexEnd(rs, valStart)
					t.val, t.text, i = valRegex, string(rs[valStart+1:end]), end+1
				case val != "":
				case i < len(rs) && rs[i] == '"':
					t.val = valQuoted
					t.text, i = readQuoted(rs, i)
					t.text = strings.TrimSpace(t.text)
				case i < len(rs) && rs[i] == '(':
					t.val = valGroup
				case operators[f]:
					t.val = valNone
				}
				if t.val != valGroup && t.val != valNone && fieldValueEmpty(f, t.text) {
					return nil, &QueryError{Pos: t.pos, Msg: f + ": needs a value"}
				}
				toks = append(toks, t)
				continue
			}
			if len(word) > 1 && word[0] == '#' && isTagName(word[1:]) {
				toks = append(toks, token{kind: tkField, field: "tag", text: word[1:], pos: base + start + 1})
				continue
			}
			toks = append(toks, token{kind: tkWord, text: word, pos: base + start + 1})
		}
	}
	return append(toks, token{kind: tkEOF, pos: base + len(rs) + 1}), nil
}

// wordEnd is the end of the word starting at rs[i].
func wordEnd(rs []rune, i int) int {
	for i < len(rs) && !unicode.IsSpace(rs[i]) && rs[i] != '(' && rs[i] != ')' && rs[i] != '"' {
		i++
	}
	return i
}

// regexEnd returns the index of the slash closing the regular expression
// that opens at rs[i] == '/', or -1: the first unescaped '/' outside a
// character class that ends a word (followed by a space, ')' or ']' or
// the end), with something between the slashes. "/usr/bin" and "path:/"
// are not regular expressions.
func regexEnd(rs []rune, i int) int {
	if i >= len(rs) || rs[i] != '/' {
		return -1
	}
	class := false
	for j := i + 1; j < len(rs); j++ {
		switch c := rs[j]; {
		case c == '\\':
			j++
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '/':
			if j > i+1 && (j+1 == len(rs) || unicode.IsSpace(rs[j+1]) || rs[j+1] == ')' || rs[j+1] == ']') {
				return j
			}
		}
	}
	return -1
}

func fieldValueEmpty(field, val string) bool {
	switch field {
	case "tag":
		return normTag(val) == ""
	case "file":
		// file:.md is every note (Obsidian's file: sees the extension;
		// the key leaves it out, all notes having it).
		v := strings.TrimSpace(val)
		return v == "" || fileKey(v) == "" && !strings.EqualFold(v, ".md")
	}
	return strings.TrimSpace(val) == ""
}

// readQuoted reads a quoted string starting at rs[i] == '"'; \" is a quote
// and \\ a backslash inside it. An unclosed quote runs to the end.
func readQuoted(rs []rune, i int) (string, int) {
	var b strings.Builder
	j := i + 1
	for ; j < len(rs) && rs[j] != '"'; j++ {
		if rs[j] == '\\' && j+1 < len(rs) && (rs[j+1] == '"' || rs[j+1] == '\\') {
			j++
		}
		b.WriteRune(rs[j])
	}
	if j < len(rs) {
		j++ // closing quote
	}
	return b.String(), j
}

func splitField(word string) (field, val string, ok bool) {
	k := strings.IndexByte(word, ':')
	if k <= 0 {
		return "", "", false
	}
	f := strings.ToLower(word[:k])
	if _, ok := operators[f]; !ok {
		return "", "", false
	}
	return f, word[k+1:], true
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
	err  error // the first error
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tkEOF {
		p.i++
	}
	return t
}

func (p *parser) fail(pos int, format string, args ...any) {
	if p.err == nil {
		p.err = &QueryError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
	}
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
	root, err := parseTokens(toks)
	if err != nil {
		return nil, err
	}
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

// parseTokens parses a whole token stream (a query, or an operator's
// value) into its root node, nil when it holds nothing.
func parseTokens(toks []token) (Node, error) {
	p := &parser{toks: toks}
	var items []Node
	for {
		n := p.parseOr()
		if n != nil {
			items = append(items, n)
		}
		t := p.peek()
		if t.kind == tkEOF || p.err != nil {
			break
		}
		if t.kind == tkRParen {
			return nil, &QueryError{Pos: t.pos, Msg: `")" without matching "("`}
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	return simplifyAnd(items), nil
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
		if k == tkEOF || k == tkRParen || k == tkOr || p.err != nil {
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
	case tkRegex:
		return p.regex(t.pos, t.text, "")
	case tkProp:
		return t.node
	case tkField:
		return p.operator(t)
	case tkLParen:
		return p.group()
	}
	// tkNeg directly followed by a token that cannot start a primary, or a
	// stray token: ignore.
	return nil
}

// group parses a parenthesized group whose "(" was read. An unclosed "("
// closes at the end.
func (p *parser) group() Node {
	n := p.parseOr()
	if p.peek().kind == tkRParen {
		p.next()
	}
	return n
}

// regex compiles a regular expression of the query.
func (p *parser) regex(pos int, src, field string) Node {
	re, err := compileRegex(src, false)
	if err != nil {
		p.fail(pos, "%v", err)
		return nil
	}
	return &Regex{Src: src, Field: field, re: re}
}

// operator builds the node of a field operator from its token and, for a
// group, the sub-query that follows.
func (p *parser) operator(t token) Node {
	var val Node
	switch t.val {
	case valWord:
		val = Term{Text: t.text}
	case valQuoted:
		val = Phrase{Text: strings.Join(strings.Fields(t.text), " ")}
	case valRegex:
		if t.field == "tag" || t.field == "path" || t.field == "file" {
			return p.regex(t.pos, t.text, t.field)
		}
		val = p.regex(t.pos, t.text, "")
	case valGroup:
		p.next() // "("
		val = p.group()
		if val == nil {
			if !operators[t.field] {
				p.fail(t.pos, "%s: needs a value", t.field)
			}
			return &Scope{Kind: t.field}
		}
	}
	if val == nil && t.val != valNone {
		return nil // a regex that failed
	}
	switch t.field {
	case "tag", "path", "file":
		return p.fieldValues(t, val)
	case "content":
		p.onlyText(t, val)
		return &Content{X: val}
	case "match-case", "ignore-case":
		p.onlyText(t, val)
		return &Case{X: val, Sensitive: t.field == "match-case"}
	}
	if val != nil {
		p.noNested(t.pos, t.field+":", val)
	}
	return &Scope{Kind: t.field, X: val}
}

// fieldValues turns the value of tag:, path: or file: into that filter;
// the words of a group become one filter each ("tag:(a OR b)").
func (p *parser) fieldValues(t token, val Node) Node {
	one := func(text string) Node {
		switch t.field {
		case "tag":
			return Tag{Name: normTag(text)}
		case "path":
			return PathPrefix{Prefix: strings.ToLower(strings.TrimPrefix(text, "/"))}
		}
		return File{Name: fileKey(text)}
	}
	var walk func(Node) Node
	walk = func(n Node) Node {
		switch x := n.(type) {
		case Term:
			return one(x.Text)
		case Phrase:
			return one(x.Text)
		case *Regex:
			return &Regex{Src: x.Src, Field: t.field, re: x.re}
		case Not:
			return Not{X: walk(x.X)}
		case And:
			items := make([]Node, len(x.Items))
			for i, it := range x.Items {
				items[i] = walk(it)
			}
			return And{Items: items}
		case Or:
			items := make([]Node, len(x.Items))
			for i, it := range x.Items {
				items[i] = walk(it)
			}
			return Or{Items: items}
		}
		p.fail(t.pos, "%s: takes names, not %s", t.field, n)
		return n
	}
	if t.val == valQuoted || t.val == valWord {
		return one(t.text)
	}
	return walk(val)
}

// onlyText checks that the value of content:, match-case: or ignore-case:
// holds only words, phrases and regular expressions.
func (p *parser) onlyText(t token, val Node) {
	walkNodes(val, func(n Node) {
		switch n.(type) {
		case Term, Phrase, *Regex, Not, And, Or:
		default:
			p.fail(t.pos, "%s: takes words, \"phrases\" and /regular expressions/, not %s", t.field, n)
		}
	})
}

// noNested refuses an operator that looks at parts of a note (line:,
// task:, a property...) inside one that does too.
func (p *parser) noNested(pos int, op string, val Node) {
	walkNodes(val, func(n Node) {
		switch n.(type) {
		case *Scope, *Prop:
			p.fail(pos, "%s cannot hold %s: each looks at its own part of a note", op, n)
		}
	})
}

// normTag lower-cases a tag and strips '#' and surrounding '/'.
func normTag(s string) string {
	return strings.ToLower(strings.Trim(strings.TrimPrefix(strings.TrimSpace(s), "#"), "/"))
}
