package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/search"
)

// Questions about notes by a frontmatter property ("which notes have the
// property rating?", "notes whose status is draft", "notes where type is
// lecture", or the search syntax typed as is, "[status:draft]"): the notes
// are listed with listNotesByProperty and the answer lists them, with the
// values when the question names none. When no note matches, the question
// may not have been about a property at all ("notes with links to Python"):
// it is searched as any other.

var (
	// rePropertyNamed asks for a property by name: "the property rating",
	// "the field status set to draft".
	rePropertyNamed = regexp.MustCompile(`(?i)\b(?:property|field)\s+["'“]?([\p{L}_][\p{L}\p{N}_-]*)["'”]?` +
		`(?:\s+(?:is|=|:|set\s+to|of|equal\s+to|equals)\s+["'“]?([^"'”?!]+?)["'”]?)?\s*[?.!]?$`)
	// rePropertyValue asks for notes by a property's value: "notes whose
	// status is draft", "notes where type = lecture".
	rePropertyValue = regexp.MustCompile(`(?i)\bnotes?\s+(?:whose|where)\s+(?:the\s+)?([\p{L}_][\p{L}\p{N}_-]*)\s+` +
		`(?:is|=|:|equals|set\s+to)\s+["'“]?([^"'”?!]+?)["'”]?\s*[?.!]?$`)
	// rePropertySyntax is the search's property syntax typed in a question.
	rePropertySyntax = regexp.MustCompile(`\[[^\[\]\n]+\]`)
)

// maxPropertyNotes caps the notes a property answer lists.
const maxPropertyNotes = 15

// propertyList is the last listNotesByProperty result.
type propertyList struct {
	query  string
	notes  []search.PropertyNote
	total  int
	failed bool
}

// propertyQuery is the property query the goal asks for, "" when none:
// the syntax as typed, else [name:value] or [name].
func (st *convState) propertyQuery() string {
	if !st.available(agent.ToolNotesByProperty) || reHowTo.MatchString(st.goal) {
		return ""
	}
	// The syntax typed: [name:value], or [name] in a question that says
	// "property"; never a [[wikilink]] or a [markdown](link).
	if qs := rePropertySyntax.FindAllString(linksToText(st.goal), -1); len(qs) > 0 &&
		(strings.Contains(strings.Join(qs, ""), ":") || strings.Contains(strings.ToLower(st.goal), "propert")) {
		return strings.Join(qs, " ")
	}
	m := rePropertyNamed.FindStringSubmatch(st.goal)
	if m == nil {
		m = rePropertyValue.FindStringSubmatch(st.goal)
	}
	if m == nil {
		return ""
	}
	value := strings.TrimSpace(m[2])
	switch {
	case value == "":
		return "[" + m[1] + "]"
	case len(strings.Fields(value)) > 3:
		return "" // a clause, not a value
	case strings.ContainsAny(value, " :"):
		return "[" + m[1] + ":" + strconv.Quote(value) + "]"
	}
	return "[" + m[1] + ":" + value + "]"
}

// propertyStep is the listNotesByProperty call a property question makes,
// then the plan closed and the answer; false when the goal is not about
// a property, or no note matched (the question is searched instead).
func (st *convState) propertyStep() (step, bool) {
	q := st.propertyQuery()
	if q == "" {
		return step{}, false
	}
	if st.props == nil || st.props.query != q {
		return callStep("Listing the notes with "+q+".", agent.ToolNotesByProperty, map[string]any{"query": q, "limit": maxPropertyNotes}), true
	}
	if st.props.total == 0 && !st.props.failed {
		return step{}, false
	}
	return st.listedStep("notes", "Listed the notes with "+q+"."), true
}

// noteProperties records a listNotesByProperty result.
func (st *convState) noteProperties(args, content string, failed bool) {
	var a struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	rec := &propertyList{query: a.Query, failed: failed}
	var r agent.NotesByPropertyResult
	if !failed && json.Unmarshal([]byte(content), &r) == nil {
		rec.notes, rec.total = r.Notes, max(r.Total, len(r.Notes))
	}
	st.props = rec
}

// propertyAnswer lists the notes found by property; false when the goal
// was not answered by such a listing.
func (st *convState) propertyAnswer() (string, bool) {
	q := st.propertyQuery()
	if q == "" || st.props == nil || st.props.query != q || st.props.total == 0 && !st.props.failed {
		return "", false
	}
	if st.props.failed {
		return fmt.Sprintf("I couldn't list the notes with %s: the listing failed.", q), true
	}
	var b strings.Builder
	verb := "match"
	if st.props.total == 1 {
		verb = "matches"
	}
	fmt.Fprintf(&b, "%s %s %s", plural(st.props.total, "note"), verb, q)
	shown := st.props.notes[:min(len(st.props.notes), maxPropertyNotes)]
	if len(shown) < st.props.total {
		fmt.Fprintf(&b, "; here are the first %d by path", len(shown))
	}
	b.WriteString(":\n\n")
	paths := make([]string, len(shown))
	for i, n := range shown {
		paths[i] = n.Path
	}
	values := make([]string, len(shown))
	same := true
	for i, n := range shown {
		var vals []string
		for _, p := range n.Properties {
			vals = append(vals, p.Name+": "+short(search.PropertyText(p.Value), 60))
		}
		values[i] = strings.Join(vals, "; ")
		same = same && values[i] == values[0]
	}
	var cited []string
	for i, n := range shown {
		c := linkAmong(paths, n.Path)
		line := "- " + c
		// The values, unless every note listed has the same ones (the
		// value the question asked for).
		if values[i] != "" && (!same || len(shown) == 1) {
			line += " (" + values[i] + ")"
		}
		b.WriteString(line + "\n")
		cited = append(cited, c)
	}
	if more := st.props.total - len(shown); more > 0 {
		fmt.Fprintf(&b, "- and %s more\n", plural(more, "note"))
	}
	b.WriteString("\nSources: " + strings.Join(cited, ", "))
	return b.String(), true
}
