package search

import (
	"fmt"
	"strconv"
	"strings"
)

// Explain says in words how a query is read, as Obsidian's "Explain search
// term" does: one line per part, indented under the part that holds it.
func Explain(q *Query) string {
	if q == nil || q.Root == nil {
		return "Nothing to search for.\n"
	}
	var b strings.Builder
	explainTop(&b, q.Root)
	words := false
	walkNodes(q.Root, func(n Node) {
		switch n.(type) {
		case Term, Phrase:
			words = true
		}
	})
	if words {
		b.WriteString("Words match whole words in any case, accents and English endings aside (call, calls, calling), not inside other words.\n")
	}
	return b.String()
}

// explainTop explains the root: its free words rank, its other parts
// filter (see compile.go).
func explainTop(b *strings.Builder, n Node) {
	items := []Node{n}
	if a, ok := n.(And); ok {
		items = a.Items
	}
	var words []string
	var rest []Node
	for _, it := range items {
		if t, ok := it.(Term); ok {
			words = append(words, strconv.Quote(t.Text))
		} else {
			rest = append(rest, it)
		}
	}
	if o, ok := n.(Or); ok && onlyTerms(o.Items) {
		for _, it := range o.Items {
			words = append(words, strconv.Quote(it.(Term).Text))
		}
		rest = nil
	}
	switch len(words) {
	case 0:
	case 1:
		fmt.Fprintf(b, "Find the notes with the word %s, ranked by it.\n", words[0])
	default:
		fmt.Fprintf(b, "Rank notes by the words %s: a note needs one of them, and notes holding more of them, and the rarer ones, come first.\n",
			strings.Join(words, ", "))
	}
	var plain []string
	for _, w := range words {
		t, _ := strconv.Unquote(w)
		plain = append(plain, t)
	}
	if frames := howFraming(standaloneTextAnalyzer(), plain); frames != nil {
		var framing []string
		for i, f := range frames {
			if f {
				framing = append(framing, words[i])
			}
		}
		fmt.Fprintf(b, "%s only frames the question or request: it is not searched for.\n", strings.Join(framing, " and "))
	}
	var spelt []string
	for i, t := range plain {
		if vs := spellingVariants(strings.ToLower(t), false); len(vs) > 0 {
			spelt = append(spelt, fmt.Sprintf("%s as %s", words[i], strings.Join(vs, ", ")))
		}
	}
	if len(spelt) > 0 {
		fmt.Fprintf(b, "Ranked words also match their other spellings, where notes use them: %s.\n", strings.Join(spelt, "; "))
	}
	var runs []string
	for i, t := range plain {
		if longCJKRun(t) {
			runs = append(runs, words[i])
		}
	}
	if len(runs) > 0 {
		fmt.Fprintf(b, "Chinese, Japanese and Korean are written without spaces: %s is matched by its pairs of neighbouring characters; a note needs a third of them (two at least), and notes holding more of them come first.\n",
			strings.Join(runs, ", "))
	}
	switch {
	case len(rest) == 0:
		return
	case len(words) > 0:
		b.WriteString("Keep only the notes that match all of these:\n")
	case len(rest) == 1:
		b.WriteString("Match notes by:\n")
	default:
		b.WriteString("Match notes by all of these:\n")
	}
	for _, it := range rest {
		explainNode(b, it, 1)
	}
	if len(words) == 0 {
		b.WriteString("Nothing ranks them: the newest come first.\n")
	}
}

func onlyTerms(items []Node) bool {
	for _, it := range items {
		if _, ok := it.(Term); !ok {
			return false
		}
	}
	return len(items) > 0
}

// explainNode writes one line for n at depth, and lines for its parts
// below it.
func explainNode(b *strings.Builder, n Node, depth int) {
	line := func(format string, args ...any) {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString("- ")
		fmt.Fprintf(b, format, args...)
		b.WriteByte('\n')
	}
	group := func(head string, x Node) {
		switch x := x.(type) {
		case And:
			line("%s all of these:", head)
			for _, it := range x.Items {
				explainNode(b, it, depth+1)
			}
		case Or:
			line("%s any of these:", head)
			for _, it := range x.Items {
				explainNode(b, it, depth+1)
			}
		default:
			line("%s %s", head, describe(x))
		}
	}
	switch x := n.(type) {
	case And:
		group("match", x)
	case Or:
		group("match", x)
	case Not:
		group("do not match", x.X)
	case *Content:
		group("in the note's text only (not its name, path, tags or properties), match", x.X)
	case *Case:
		if x.Sensitive {
			group("with the case as written, match", x.X)
		} else {
			group("in any case, match", x.X)
		}
	case *Scope:
		if x.X == nil {
			line("have %s", scopeName(x.Kind))
			return
		}
		group(fmt.Sprintf("have %s that matches", scopeName(x.Kind)), x.X)
	case *Prop:
		if x.Value == nil || x.Null || x.Op != "" {
			line("%s", describe(x))
			return
		}
		group(fmt.Sprintf("have the property %q with a value that matches", x.Name), x.Value)
	default:
		line("match %s", describe(n))
	}
}

// scopeName names the part of a note a Scope looks at.
func scopeName(kind string) string {
	switch kind {
	case scopeLine:
		return "a line"
	case scopeBlock:
		return "a block (text between blank lines)"
	case scopeSection:
		return "a section (text between headings)"
	case scopeTaskTodo:
		return "an open task"
	case scopeTaskDone:
		return "a done task"
	}
	return "a task (open or done)"
}

// describe names a node that holds no group.
func describe(n Node) string {
	switch x := n.(type) {
	case Term:
		return fmt.Sprintf("the word %q", x.Text)
	case Phrase:
		return fmt.Sprintf("the phrase %q", x.Text)
	case Tag:
		if x.Name == "" {
			return "any tag"
		}
		return fmt.Sprintf("the tag #%s, or a tag nested under it (#%s/...)", x.Name, x.Name)
	case PathPrefix:
		if x.Prefix == "" {
			return "any path"
		}
		return fmt.Sprintf("a path starting with %q", x.Prefix)
	case File:
		if strings.ContainsAny(x.Name, "*?") {
			return fmt.Sprintf("a file name matching the pattern %q", x.Name)
		}
		if x.Name == "" {
			return "a file name ending in .md (every note)"
		}
		return fmt.Sprintf("a file name containing %q", x.Name)
	case *Regex:
		switch x.Field {
		case "path":
			return fmt.Sprintf("a path matching the regular expression /%s/", x.Src)
		case "file":
			return fmt.Sprintf("a file name matching the regular expression /%s/", x.Src)
		case "tag":
			return fmt.Sprintf("a tag matching the regular expression /%s/", x.Src)
		}
		return fmt.Sprintf("the regular expression /%s/ in the note's text or file name, in any case", x.Src)
	case *Prop:
		switch {
		case x.Null:
			return fmt.Sprintf("have the property %q with no value", x.Name)
		case x.Op != "":
			_, date, _ := parseBound(x.Bound, x.Op)
			what := map[string]string{"<": "less than", ">": "greater than", "<=": "at most", ">=": "at least"}[x.Op]
			if date {
				what = map[string]string{"<": "before", ">": "after", "<=": "on or before", ">=": "on or after"}[x.Op]
			}
			return fmt.Sprintf("have the property %q %s %s", x.Name, what, x.Bound)
		}
		return fmt.Sprintf("have the property %q (any value, or none)", x.Name)
	}
	return n.String()
}
