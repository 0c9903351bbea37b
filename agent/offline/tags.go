package offline

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/search"
)

// Questions about the notes of a tag ("which notes are tagged news?",
// "list my #LeetCode notes", "notes with the tag toProcess about
// networks"): the notes are found with a search for tag:#name (its nested
// tags too), the question's other words, if any, ranking them and
// required one at least; the answer lists them, each cited, and says how
// many there are. A question about tags in general ("how do I rename a
// tag?") is searched as any other.

var (
	// reTagQuestion finds the tag a question asks about after "tagged"
	// or "with the tag".
	reTagQuestion = regexp.MustCompile(`(?i)(?:\btagged\s+(?:as\s+|with\s+)?(?:the\s+)?(?:tag\s+)?|` +
		`\b(?:with|has|have|having|carry|carries|carrying|under|using)\s+(?:the\s+|a\s+)?tags?\s+)["'“]?#?([\p{L}_][\p{L}\p{N}_/-]*)`)
	// reHashtag is a #tag written in the question.
	reHashtag = regexp.MustCompile(`(?:^|\s)#([\p{L}_][\p{L}\p{N}_/-]*)`)
)

// tagWords are the words of a tag question that say nothing of which of
// the tag's notes: what remains is a topic they must mention.
var tagWords = toSet(`tag tags tagged note notes page pages file files which what list show find give all every any my our
have has having carry carries carrying with under using labelled labeled marked`)

// maxTagNotes caps the notes a tag answer lists: those of one search.
const maxTagNotes = 8

// questionTag returns the tag the goal asks for the notes of, without its
// #, and "" when it asks about none.
func (st *convState) questionTag() string {
	if !st.available(agent.ToolLocalSearch) || reHowTo.MatchString(st.goal) {
		return ""
	}
	if m := reHashtag.FindStringSubmatch(st.goal); m != nil {
		return strings.Trim(m[1], "/-")
	}
	for _, m := range reTagQuestion.FindAllStringSubmatch(st.goal, -1) {
		if t := strings.Trim(m[1], "/-"); t != "" && !tagWords[strings.ToLower(t)] {
			return t
		}
	}
	return ""
}

// tagTopic is the goal's words that are neither the tag nor about tags.
func (st *convState) tagTopic(tag string) []string {
	parts := map[string]bool{strings.ToLower(tag): true}
	for _, p := range strings.FieldsFunc(strings.ToLower(tag), func(r rune) bool { return r == '/' || r == '-' || r == '_' }) {
		parts[p] = true // a nested or compound tag's words
	}
	var out []string
	for _, w := range st.terms.all() {
		if !tagWords[w] && !parts[strings.ToLower(w)] {
			out = append(out, w)
		}
	}
	return out
}

// tagQuery is the search that lists the notes of tag about topic.
func tagQuery(tag string, topic []string) string {
	q := "tag:#" + tag
	if len(topic) > 0 {
		q += " " + strings.Join(topic, " ")
	}
	return q
}

// searchFor is the search made with query q, nil until made.
func (st *convState) searchFor(q string) *searchRec {
	for i := range st.searches {
		if st.searches[i].query == q {
			return &st.searches[i]
		}
	}
	return nil
}

// tagStep is the next step of a tag question: the search, then the plan
// closed and the answer; false when the goal is not about a tag's notes.
func (st *convState) tagStep() (step, bool) {
	tag := st.questionTag()
	if tag == "" {
		return step{}, false
	}
	topic := st.tagTopic(tag)
	rec := st.searchFor(tagQuery(tag, topic))
	if rec == nil {
		what := "the notes tagged #" + tag
		if len(topic) > 0 {
			what += " about " + joinOr(topic)
		}
		return callStep("Listing "+what+".", agent.ToolLocalSearch, map[string]any{"query": tagQuery(tag, topic)}), true
	}
	if st.tagGuessed(rec) {
		return step{}, false
	}
	return st.listedStep("notes", "Listed the notes tagged #"+tag+"."), true
}

// tagGuessed reports whether the tag search found nothing for a tag the
// goal did not write as a #tag: "filter with tags in graph view" is not
// about the tag #in, and is searched as any other question.
func (st *convState) tagGuessed(rec *searchRec) bool {
	return !rec.failed && len(rec.results) == 0 && !reHashtag.MatchString(st.goal)
}

// tagAnswer lists the notes of the goal's tag; false when the goal is not
// about a tag's notes, or its search was not made.
func (st *convState) tagAnswer() (string, bool) {
	tag := st.questionTag()
	if tag == "" {
		return "", false
	}
	topic := st.tagTopic(tag)
	rec := st.searchFor(tagQuery(tag, topic))
	if rec == nil || st.tagGuessed(rec) {
		return "", false
	}
	var b strings.Builder
	switch {
	case rec.failed:
		return fmt.Sprintf("I couldn't list the notes tagged #%s: the search failed.", tag), true
	case len(rec.results) == 0 && len(topic) > 0:
		return fmt.Sprintf("No note with the tag #%s mentions %s.", tag, joinOr(topic)), true
	case len(rec.results) == 0:
		return fmt.Sprintf("No note has the tag #%s. You could search for %s as a word, or list the vault's tags.", tag, tag), true
	}
	total := max(rec.total, len(rec.results))
	var head string
	switch {
	case len(topic) > 0 && total == 1:
		head = fmt.Sprintf("1 note with the tag #%s mentions %s", tag, joinOr(topic))
	case len(topic) > 0:
		head = fmt.Sprintf("%d notes with the tag #%s mention %s", total, tag, joinOr(topic))
	case total == 1:
		head = fmt.Sprintf("1 note has the tag #%s", tag)
	default:
		head = fmt.Sprintf("%d notes have the tag #%s", total, tag)
	}
	shown := rec.results[:min(len(rec.results), maxTagNotes)]
	if len(shown) < total {
		order := "most recently changed"
		if len(topic) > 0 {
			order = "that mention it most"
		}
		head += fmt.Sprintf("; here are the %d %s", len(shown), order)
	}
	b.WriteString(head + ":\n\n")
	// With a topic the snippet shows where a note mentions it; a tag
	// alone has no words to show the lines of.
	cited := writeHits(&b, rec, len(shown), len(topic) > 0, tagQuery(tag, topic))
	b.WriteString("\nSources: " + strings.Join(cited, ", "))
	return b.String(), true
}

// writeHits lists the first n notes of a listing search, each cited (with
// its snippet when snippets is set), says how to see them all when they
// are more, and returns the citations.
func writeHits(b *strings.Builder, rec *searchRec, n int, snippets bool, query string) []string {
	paths := make([]string, len(rec.results))
	for i, h := range rec.results {
		paths[i] = h.Path
	}
	var cited []string
	for _, h := range rec.results[:n] {
		c := linkAmong(paths, h.Path)
		line := "- " + c
		if s := snippetText(h); s != "" && snippets {
			line += ": " + s
		}
		b.WriteString(line + "\n")
		cited = append(cited, c)
	}
	if total := max(rec.total, len(rec.results)); n < total {
		fmt.Fprintf(b, "\nSearch for `%s` to see all %d.\n", query, total)
	}
	return cited
}

// linkAmong is the [[wikilink]] of the note at p in a listing of paths:
// its name, or its path when another note listed shares the name.
func linkAmong(paths []string, p string) string {
	name := noteName(p)
	for _, o := range paths {
		if o != p && strings.EqualFold(noteName(o), name) {
			return "[[" + strings.TrimSuffix(p, ".md") + "]]"
		}
	}
	return "[[" + name + "]]"
}

// snippetText is a search result's snippet as plain text, short.
func snippetText(h search.Result) string {
	s := strings.TrimSpace(reHighlight.ReplaceAllString(h.Snippet, ""))
	return short(plainText(s), 120)
}
