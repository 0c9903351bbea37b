package search

import (
	"errors"
	"strings"
	"testing"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"sourdough", "sourdough"},
		{"sourdough starter", "(AND sourdough starter)"},
		{`"exact phrase"`, `"exact phrase"`},
		{`"  spaced   out  "`, `"spaced out"`},
		{`bread "rye flour" -wheat`, `(AND bread "rye flour" -wheat)`},
		{`-"bad idea" good`, `(AND -"bad idea" good)`},
		{"tag:#recipe", "tag:recipe"},
		{"tag:Recipe/Bread/", "tag:recipe/bread"},
		{"#recipe", "tag:recipe"},
		{"#2024", "#2024"},
		{"issue #42", "(AND issue #42)"},
		{"path:Projects/", "path:projects/"},
		{"path:/projects", "path:projects"},
		{`path:"My Folder/"`, "path:my folder/"},
		{"file:Alpha.md", "file:alpha"},
		{"FILE:alpha", "file:alpha"},
		{"file:*plan*", "file:*plan*"},
		{"file:.md", "file:.md"},
		{"a OR b", "(OR a b)"},
		{"a b OR c", "(OR (AND a b) c)"},
		{"(a OR b) c", "(AND (OR a b) c)"},
		{"-(a OR b) c", "(AND -(OR a b) c)"},
		{"a or b", "(AND a or b)"},
		{"OR a", "a"},
		{"a OR", "a"},
		{"a OR OR b", "(OR a b)"},
		{`"unclosed phrase`, `"unclosed phrase"`},
		{"(a b", "(AND a b)"},
		{"a - b", "(AND a b)"},
		{"foo:bar", "foo:bar"},
		{"10:30 meeting", "(AND 10:30 meeting)"},
		{"tag:x -tag:y path:a/ b", "(AND tag:x -tag:y path:a/ b)"},
		{"e-mail", "e-mail"},
		{"東京 タワー", "(AND 東京 タワー)"},
		{`""`, ""},
		{`content:"happy cat"`, `content:"happy cat"`},
		{"match-case:HappyCat", "match-case:HappyCat"},
		{"ignore-case:ikea", "ignore-case:ikea"},
		{"line:(mix flour)", "line:(AND mix flour)"},
		{"LINE:(mix -flour)", "line:(AND mix -flour)"},
		{"block:dog section:cat", "(AND block:dog section:cat)"},
		{"task:(call OR email)", "task:(OR call email)"},
		{"launch task-todo:", "(AND launch task-todo:)"},
		{"task-done:() x", "(AND task-done: x)"},
		{"-line:(a b)", "-line:(AND a b)"},
		{"[aliases]", "[aliases]"},
		{"[Status:Draft OR Published]", "[status:(OR Draft Published)]"},
		{`["my prop":"a b"]`, `[my prop:"a b"]`},
		{"[aliases:null]", "[aliases:null]"},
		{"[duration:<5] [due:>=2026-03-01]", "(AND [duration:<5] [due:>=2026-03-01])"},
		{"[status:", "[status]"},
		{"[[Note]]", "[[Note]]"},
		{`/\d{4}-\d{2}/`, `/\d{4}-\d{2}/`},
		{`/(a b)c/ x`, `(AND /(a b)c/ x)`},
		{`path:/^Daily/ file:/x/ tag:/^a/`, `(AND path:/^Daily/ file:/x/ tag:/^a/)`},
		{"/usr/bin", "/usr/bin"},
		{"path:/", "path:"},
		{`"say \"hi\" now"`, `"say \"hi\" now"`},
		{"tag:(a OR b)", "(OR tag:a tag:b)"},
		{"meeting -(work meetup)", "(AND meeting -(AND work meetup))"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			q, err := ParseQuery(tt.in)
			if tt.want == "" {
				if !errors.Is(err, ErrEmptyQuery) {
					t.Fatalf("ParseQuery(%q) = %v, %v; want ErrEmptyQuery", tt.in, q, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", tt.in, err)
			}
			if got := q.String(); got != tt.want {
				t.Errorf("ParseQuery(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseQueryErrors(t *testing.T) {
	tests := []struct {
		in  string
		pos int
	}{
		{"a b)", 4},
		{")", 1},
		{"tag:", 1},
		{"x tag:#", 3},
		{`file:""`, 1},
		{"path:", 1},
		{"tag:\"\"", 1},
		{"a line:", 3},
		{"content:()", 1},
		{"x line:(task:y)", 3},
		{"content:(tag:x)", 1},
		{"[]", 1},
		{"a [ :x]", 3},
		{"[n:<abc]", 1},
		{"/(?=x)/", 1},
		{"b path:/(/", 3},
		{"[p:(line:x)]", 1},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseQuery(tt.in)
			if !errors.Is(err, ErrBadQuery) {
				t.Fatalf("ParseQuery(%q) err = %v, want ErrBadQuery", tt.in, err)
			}
			var qe *QueryError
			if !errors.As(err, &qe) || qe.Pos != tt.pos {
				t.Fatalf("ParseQuery(%q) err = %v, want column %d", tt.in, err, tt.pos)
			}
		})
	}
	for _, in := range []string{"", "   ", "-", "()", `""`} {
		if _, err := ParseQuery(in); !errors.Is(err, ErrEmptyQuery) {
			t.Errorf("ParseQuery(%q) err = %v, want ErrEmptyQuery", in, err)
		}
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`a "b c" -d tag:#e/f path:g/ file:h OR (i j`, `-(")`, "tag:\"x", "\xff\"", "((((", "-\"\"",
		`line:(mix -flour) [status:"a b" OR /^c/] task-todo: [n:<=5]`, `/a[/]b/ path:/x/ [`, `[a:(b`, `match-case:(X OR "y \" z")`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err == nil {
			_ = q.String()
			_ = Explain(q)
		}
	})
}

// A query over the size limits is refused before any parsing, with an
// error that is also a bad query; one at the limits is searched.
func TestQueryLimits(t *testing.T) {
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }
	for _, tt := range []struct {
		q    string
		want string
	}{
		{strings.Repeat("x", MaxQueryBytes+1), "4097 bytes, at most 4096"},
		{words(MaxQueryTerms + 1), "65 words, at most 64"},
		{strings.Repeat("é", MaxQueryBytes), "8192 bytes"},
	} {
		_, err := ParseQuery(tt.q)
		if !errors.Is(err, ErrQueryTooLarge) || !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseQuery(%.20q...) = %v, want %q", tt.q, err, tt.want)
		}
	}
	for _, q := range []string{words(MaxQueryTerms), words(MaxQueryTerms) + strings.Repeat(" OR", 10), strings.Repeat("x", MaxQueryBytes)} {
		if _, err := ParseQuery(q); err != nil {
			t.Errorf("ParseQuery(%.20q...) = %v", q, err)
		}
	}
	if _, err := ParseQuery("OR OR"); !errors.Is(err, ErrEmptyQuery) || !strings.Contains(err.Error(), "OR joins two things") {
		t.Errorf("only OR: %v", err)
	}
}
