package offline

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/search"
)

// Answer composition: the sentences of the notes read that best match the
// goal, with [[note]] citations.

// source is a note the answer may quote.
type source struct {
	path     string
	title    string
	heading  string
	headings []string
	content  string
	rank     int
}

func (st *convState) sources() []source {
	var out []source
	seen := map[string]bool{}
	snippets := map[string]search.Result{}
	for _, h := range st.hits() {
		if _, ok := snippets[h.Path]; !ok {
			snippets[h.Path] = h
		}
	}
	for _, r := range st.reads {
		if r.path == "" || seen[r.path] {
			continue
		}
		seen[r.path] = true
		s := source{path: r.path, title: r.title, heading: r.heading, headings: r.headings, content: r.content}
		if r.failed || strings.TrimSpace(r.content) == "" {
			h, ok := snippets[r.path]
			if !ok {
				continue
			}
			s.content, s.heading, s.title = h.Snippet, h.Heading, h.Title
		}
		out = append(out, s)
	}
	if len(out) == 0 { // no notes read (readNote not offered): quote snippets
		for i, h := range st.hits() {
			if i == 3 {
				break
			}
			out = append(out, source{path: h.Path, title: h.Title, heading: h.Heading, content: h.Snippet})
		}
	}
	for i := range out {
		out[i].rank = i
		if out[i].title == "" {
			out[i].title = noteName(out[i].path)
		}
	}
	return out
}

var reHighlight = regexp.MustCompile(`</?mark>|</?em>|\*\*`)

type pick struct {
	src  int
	sent sentence
}

// answer renders the final answer from the notes read.
func (st *convState) answer() string {
	srcs := st.sources()
	if len(srcs) == 0 {
		return st.noNotesAnswer()
	}
	groups := termStems(st.terms)
	var cands []pick
	for i, s := range srcs {
		bonus := 0.0
		meta := stemSet(s.title + " " + s.heading + " " + noteName(s.path) + " " + strings.Join(s.headings, " "))
		for _, g := range groups {
			for _, u := range g {
				if meta[u] {
					bonus += 0.25
					break
				}
			}
		}
		for j, text := range splitSentences(reHighlight.ReplaceAllString(s.content, "")) {
			sc := scoreSentence(text, groups)
			if sc > 0 {
				sc += bonus
			}
			cands = append(cands, pick{src: i, sent: sentence{text: text, pos: j, score: sc}})
		}
	}
	if len(cands) == 0 {
		names := make([]string, len(srcs))
		for i := range srcs {
			names[i] = st.cite(srcs, i)
		}
		return "I found " + joinAnd(names) + ", but could not extract readable text from them. Open them to check."
	}
	ranked := append([]pick(nil), cands...)
	sort.SliceStable(ranked, func(a, b int) bool { return ranked[a].sent.score > ranked[b].sent.score })
	var chosen []pick
	seen := map[string]bool{}
	take := func(p pick) {
		key := strings.ToLower(p.sent.text)
		if seen[key] || len(chosen) >= 6 {
			return
		}
		seen[key] = true
		chosen = append(chosen, p)
	}
	for _, p := range ranked {
		if p.sent.score > 0 {
			take(p)
		}
	}
	// Fewer than 3 matching sentences: add the opening sentences of the
	// best-ranked notes, which usually say what a note is about.
	for pos := 0; len(chosen) < 3 && pos < 3; pos++ {
		for _, p := range cands {
			if p.sent.pos == pos && len(chosen) < 3 {
				take(p)
			}
		}
	}
	sort.SliceStable(chosen, func(a, b int) bool {
		if chosen[a].src != chosen[b].src {
			return chosen[a].src < chosen[b].src
		}
		return chosen[a].sent.pos < chosen[b].sent.pos
	})
	var b strings.Builder
	b.WriteString("From your notes:\n\n")
	var cited []string
	citedSet := map[string]bool{}
	for _, p := range chosen {
		c := st.cite(srcs, p.src)
		fmt.Fprintf(&b, "- %s %s\n", p.sent.text, c)
		if !citedSet[c] {
			citedSet[c] = true
			cited = append(cited, c)
		}
	}
	b.WriteString("\nSources: " + strings.Join(cited, ", "))
	return b.String()
}

// cite returns the [[wikilink]] of source i: the basename without .md, or
// the path without .md when two sources share a basename.
func (st *convState) cite(srcs []source, i int) string {
	name := noteName(srcs[i].path)
	for j, s := range srcs {
		if j != i && strings.EqualFold(noteName(s.path), name) {
			return "[[" + strings.TrimSuffix(srcs[i].path, ".md") + "]]"
		}
	}
	return "[[" + name + "]]"
}

// citations returns the wikilinks the answer cites.
func (st *convState) citations() []string {
	ans := st.answer()
	var out []string
	for _, m := range regexp.MustCompile(`\[\[[^\]]+\]\]`).FindAllString(ans, -1) {
		if !containsString(out, m) {
			out = append(out, m)
		}
	}
	return nonNil(out)
}

func (st *convState) noNotesAnswer() string {
	kw := st.keywordText()
	var b strings.Builder
	if !st.available(agent.ToolLocalSearch) && len(st.searches) == 0 {
		return "I could not search the vault in this step, so I have no notes to answer from."
	}
	fmt.Fprintf(&b, "I couldn't find any notes in your vault matching %q", kw)
	if st.timeExpr != "" {
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
	if st.timeExpr != "" {
		b.WriteString(", or a wider time range")
	}
	b.WriteString(".")
	return b.String()
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

func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// short is s on one line, cut to n runes.
func short(s string, n int) string {
	return truncate.Runes(strings.Join(strings.Fields(s), " "), n)
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
