package offline

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// Answer composition: the sentences of the notes read that best match the
// goal, with [[note]] citations.

// source is a chunk of a note the answer may quote.
type source struct {
	path     string
	link     string // the note's [[link]] target in the vault, "" when unknown
	title    string
	heading  string
	headings []string
	// firstLevel is the level of headings[0], 0 when not known.
	firstLevel int
	content    string
	rank       int  // the note's rank: named notes first, then search order
	named      bool // the goal names this note
	chunk      int
	chunks     int // the note's chunk count, 0 when unknown
}

// sources are the chunks read, a note's chunks together, in the order of
// their notes: the notes the goal names, then the search's order. A failed
// read falls back on the search snippet.
func (st *convState) sources() []source {
	snippets := map[string]search.Result{}
	for _, h := range st.hits() {
		if _, ok := snippets[h.Path]; !ok {
			snippets[h.Path] = h
		}
	}
	rank := map[string]int{}
	var order []string
	var byPath = map[string][]source{}
	add := func(s source) {
		if _, ok := rank[s.path]; !ok {
			rank[s.path] = len(order)
			order = append(order, s.path)
		}
		byPath[s.path] = append(byPath[s.path], s)
	}
	seen := map[string]bool{}
	for _, named := range []bool{true, false} {
		for _, r := range st.reads {
			if r.path == "" || r.named != named {
				continue
			}
			key := r.path + "#" + strconv.Itoa(r.chunk)
			if seen[key] {
				continue
			}
			seen[key] = true
			s := source{path: r.path, link: r.link, title: r.title, heading: r.heading, headings: r.headings, firstLevel: r.firstLevel, content: r.content, named: named, chunk: r.chunk, chunks: r.chunkCount}
			if r.failed || strings.TrimSpace(r.content) == "" {
				h, ok := snippets[r.path]
				if !ok {
					continue
				}
				s.content, s.heading, s.title = h.Snippet, h.Heading, h.Title
			}
			add(s)
		}
	}
	if len(order) == 0 { // no notes read (readNote not offered): quote snippets
		for i, h := range st.hits() {
			if i == 3 {
				break
			}
			add(source{path: h.Path, title: h.Title, heading: h.Heading, content: h.Snippet})
		}
	}
	var out []source
	for _, p := range order {
		for _, s := range byPath[p] {
			s.rank = rank[p]
			if s.title == "" {
				s.title = noteName(s.path)
			}
			out = append(out, s)
		}
	}
	return out
}

var reHighlight = regexp.MustCompile(`</?mark>|</?em>|\*\*`)

var reMetaPair = regexp.MustCompile(`^(?:\*\*|__)?([\p{L}][\p{L}\p{N} /-]{0,30}?)(?:\*\*|__)?\s*:(?:\*\*|__)?\s+(.+)$`)

// describeNote is a sentence for a note without prose: its title, its
// folder and the short metadata lines of the chunk ("Designed by: x").
func describeNote(s source) string {
	var facts []string
	for _, line := range strings.Split(s.content, "\n") {
		m := reMetaPair.FindStringSubmatch(strings.TrimSpace(reListMarker.ReplaceAllString(line, "")))
		if m == nil {
			continue
		}
		val := cleanSentenceText(m[2])
		if val == "" || len(facts) == 4 {
			continue
		}
		facts = append(facts, strings.ToLower(m[1][:1])+m[1][1:]+" "+val)
	}
	out := s.title
	if dir := path.Dir(s.path); dir != "." {
		out += " is a note in " + path.Base(dir)
	} else {
		out += " is a note"
	}
	if len(facts) > 0 {
		out += ": " + strings.Join(facts, "; ")
	}
	return out + "."
}

// lastHeading is the innermost heading of a chunk's heading path "A > B".
func lastHeading(h string) string {
	if i := strings.LastIndex(h, " > "); i >= 0 {
		h = h[i+3:]
	}
	return strings.TrimSpace(h)
}

// citeSection is the citation of a sentence of source i under heading:
// [[Note#Heading]], or [[Note]] when it has none.
func (st *convState) citeSection(srcs []source, i int, heading string) string {
	c := st.cite(srcs, i)
	heading = strings.NewReplacer("[", "", "]", "", "|", "", "#", "").Replace(heading)
	if heading == "" {
		return c
	}
	return strings.TrimSuffix(c, "]]") + "#" + heading + "]]"
}

// cite returns the [[wikilink]] of source i: the link target readNote gave
// (unique in the vault), else the basename without .md, or the path
// without .md when two sources share a basename.
func (st *convState) cite(srcs []source, i int) string {
	if l := srcs[i].link; l != "" {
		return "[[" + l + "]]"
	}
	name := noteName(srcs[i].path)
	for j, s := range srcs {
		if j != i && s.path != srcs[i].path && strings.EqualFold(noteName(s.path), name) {
			return "[[" + strings.TrimSuffix(srcs[i].path, ".md") + "]]"
		}
	}
	return "[[" + name + "]]"
}

var reWikilink = regexp.MustCompile(`\[\[[^\]]+\]\]`)

// citations returns the wikilinks answer cites, each once.
func citations(answer string) []string {
	var out []string
	for _, m := range reWikilink.FindAllString(answer, -1) {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return nonNil(out)
}

func (st *convState) noNotesAnswer() string {
	kw := st.keywordText()
	var b strings.Builder
	if !st.available(agent.ToolLocalSearch) && len(st.searches) == 0 {
		return st.unresolvedNote() + "I could not search the vault in this step, so I have no notes to answer from."
	}
	b.WriteString(st.unresolvedNote())
	if failure := st.searchFailure(); failure != "" {
		// Not "no notes match": the vault was not searched.
		fmt.Fprintf(&b, "I could not search your vault for %q: %s", kw, strings.TrimSuffix(failure, "."))
		b.WriteString(".")
		return b.String()
	}
	fmt.Fprintf(&b, "I couldn't find any notes in your vault matching %q", kw)
	anyDate := st.undated()
	switch {
	case anyDate:
		fmt.Fprintf(&b, ", from %s or any other date", st.timeExpr)
	case st.timeExpr != "":
		fmt.Fprintf(&b, " from %s", st.timeExpr)
	}
	b.WriteString(".")
	var queries []string
	for _, s := range st.searches {
		if s.query != "" {
			queries = append(queries, "`"+s.query+"`")
		}
	}
	if len(queries) > 0 {
		b.WriteString(" I searched for " + joinAnd(queries) + ".")
	}
	b.WriteString("\n\nYou could try other terms: a synonym or a more general word, a tag (tag:#name), a folder (path:folder/)")
	if st.timeExpr != "" && !anyDate {
		b.WriteString(", or a wider time range")
	}
	b.WriteString(".")
	return b.String()
}

// searchFailure is the error of the searches of this turn when every one
// of them failed, "" when one ran.
func (st *convState) searchFailure() string {
	msg := ""
	for _, s := range st.searches {
		if !s.failed {
			return ""
		}
		if msg == "" {
			msg = s.err
		}
	}
	if msg == "" && len(st.searches) > 0 {
		msg = "the search failed"
	}
	return msg
}

// displayNames names notes by basename, or by path where basenames clash.
func displayNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = noteName(p)
		for j, q := range paths {
			if j != i && strings.EqualFold(noteName(q), out[i]) {
				out[i] = strings.TrimSuffix(p, ".md")
				break
			}
		}
	}
	return out
}

// noteName is the basename of a vault path without .md.
func noteName(p string) string {
	return strings.TrimSuffix(path.Base(p), ".md")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func joinAnd(items []string) string { return joinWith(items, "and") }

func joinOr(items []string) string { return joinWith(items, "or") }

// joinWith lists items as "a, b <conj> c".
func joinWith(items []string, conj string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}

// short is s on one line, cut to n runes.
func short(s string, n int) string {
	return truncate.Runes(strings.Join(strings.Fields(s), " "), n)
}

// namedOnly reports whether the goal is only about the notes it names: it
// names some and has no other words to search for.
func (st *convState) namedOnly() bool { return len(st.refs) > 0 && st.terms.empty() }

var reQuotedPath = regexp.MustCompile(`"([^"]+)"`)

// unresolvedNote reports the named notes that could not be read, with the
// candidates the lookup offered.
func (st *convState) unresolvedNote() string {
	var b strings.Builder
	for _, r := range st.reads {
		if !r.named || !r.failed {
			continue
		}
		name := strings.TrimSpace(r.asked)
		msg, cands := r.err, []string(nil)
		if i := strings.Index(msg, "did you mean"); i >= 0 {
			for _, m := range reQuotedPath.FindAllStringSubmatch(msg[i:], -1) {
				cands = append(cands, "[["+strings.TrimSuffix(m[1], ".md")+"]]")
			}
		}
		fmt.Fprintf(&b, "I couldn't find a note named %q", name)
		if len(cands) > 0 {
			fmt.Fprintf(&b, "; did you mean %s?", joinOr(cands))
		} else {
			b.WriteString(".")
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

var reMarked = regexp.MustCompile(`<mark>([^<]+)</mark>|<em>([^<]+)</em>|\*\*([^*]+)\*\*`)

// goalGroups are the match units of the goal's terms (see termStems), where
// a misspelt word also matches the spellings the search found for it: the
// words its snippets highlight that are one or two edits away and begin
// with the same letter ("catpuccin" matches "Catppuccin").
func (st *convState) goalGroups() [][]string {
	groups := termStems(st.terms)
	var marked []string
	seen := map[string]bool{}
	for _, h := range st.hits() {
		for _, m := range reMarked.FindAllStringSubmatch(h.Snippet, -1) {
			for _, w := range tokenize(m[1] + m[2] + m[3]) {
				if !seen[w] {
					seen[w] = true
					marked = append(marked, w)
				}
			}
		}
	}
	if len(marked) == 0 {
		return groups
	}
	for _, t := range st.terms.keywords {
		words := tokenize(t)
		if len(words) != 1 || hasCJK(words[0]) || utf8.RuneCountInString(words[0]) < 4 || seen[words[0]] {
			continue
		}
		w := words[0]
		bound := 2
		if utf8.RuneCountInString(w) >= 8 {
			bound = 3
		}
		g := -1
		for i, units := range groups {
			if len(units) == 1 && strings.SplitN(units[0], "|", 2)[0] == stemOf(w) {
				g = i
			}
		}
		if g < 0 {
			continue
		}
		for _, m := range marked {
			if m[0] != w[0] || stemOf(m) == stemOf(w) || vault.OSADistance(w, m, bound) >= bound {
				continue
			}
			if s := stemOf(m); !strings.Contains("|"+groups[g][0]+"|", "|"+s+"|") {
				groups[g][0] += "|" + s // one unit: any spelling counts in full
			}
		}
	}
	return groups
}

// hasUnit reports whether set holds the match unit u, or one of its
// spellings "a|b".
func hasUnit(set map[string]bool, u string) bool {
	if set[u] {
		return true
	}
	if !strings.Contains(u, "|") {
		return false
	}
	for _, a := range strings.Split(u, "|") {
		if set[a] {
			return true
		}
	}
	return false
}
