package offline

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vault-agent/vault-agent/search"
)

// Answer composition. The answer is built from the best note, not from the
// best sentences of many: it leads with the passage of the best note that
// answers (a paragraph, a list or numbered steps as the note has them, cut
// at a sentence), then gives at most a few points from other notes that
// hold most of the question's distinctive words, and names the other
// notes that only touch on it ("See also"). When the notes read hold too
// little of the question, it says so and lists the nearest notes.

// Bars a note must pass to be quoted beside the lead or named after it.
// Weighted shares are of the question's terms, each weighted by its
// rarity among the notes found (relevance).
const (
	// heldCover is the share of the question the lead note must hold for
	// the notes to be said to answer it at all (or half of its terms).
	heldCover = 0.5
	// A supporting point comes from a note that holds supportCover of
	// the question and adds supportAdds of what the notes quoted so far
	// lack: it answers a part of the question the lead does not. A note
	// that only repeats the lead is named under "See also".
	supportCover = 0.75
	supportAdds  = 0.25
	// supportScore is the search score relative to the best hit's a
	// note needs to be quoted as a supporting point: a note ranked far
	// below the lead that shares the question's words is most often on
	// another subject (on the eval's three question sets no supporting
	// point from a note below this bar came from a note the question
	// expects), so it is named under See also instead of quoted.
	supportScore = 0.8
	// seeAlsoCover is the share of the question a note must hold, and
	// seeAlsoScore its search score relative to the best hit's, to be
	// named under "See also".
	seeAlsoCover = 0.34
	seeAlsoScore = 0.5
	// wholeCover is the cover of a name that holds all of the question.
	wholeCover = 0.999
	// itemShare is the score (relevance.score) an item of a list must
	// reach, relative to the list's best item, to be quoted when the
	// list is cut to the items that hold the question.
	itemShare = 0.5
	// maxSupport and maxSeeAlso bound the notes quoted or named.
	maxSupport = 2
	maxSeeAlso = 3
	// maxNearest bounds the notes listed when none answers.
	maxNearest = 3
)

// notePick is a note read, as a source of the answer.
type notePick struct {
	path   string
	src    int     // its first source (chunk read)
	srcs   []int   // all its sources, in chunk order
	blocks []block // the blocks of its chunks, in order
	named  bool
	search float64 // its search score relative to the best hit's; 1 when the goal names it
	// byMeaning is set when the search found it by meaning, not by the
	// question's words: its hit's snippet marks none (semantic search).
	byMeaning bool
	// set is the match units of its name, folders, headings and the
	// chunks read; title is the cover of its name and folders alone.
	set   map[string]bool
	title float64
	// pairs are the stems of each two neighbouring words of its title
	// and file name (stop words left out), for titlePair.
	pairs map[[2]string]bool
	// best is its block that holds the most of the question (with the
	// list it introduces or the sentence introducing it), -1 when it has
	// no prose; bestCover is that block's cover.
	best      int
	bestCover float64
	// opening is the block quoted when none holds the question: the
	// first that may answer at all.
	opening int
}

// notesRead groups the sources by note, in the search's order (the notes
// the goal names first), and finds each note's best block.
//
// The search's order decides which note answers: it weighs every field of
// every note with the whole vault's word statistics. Re-ranking the first
// notes by the share of the question their chunk holds (with the words
// weighted by rarity among the notes found, or not) did not pick the
// expected note more often on three vaults' question sets; it only
// traded one question for another.
func (st *convState) notesRead(srcs []source, rel relevance) []notePick {
	howTo := reHowToDo.MatchString(st.goal)
	// A word of the question none of the notes found has ("cost") asks
	// for something they say in other words: a note named after the rest
	// of the question is not asked only what it is. A word the search
	// left out as framing ("how does X work") asks nothing.
	unsaid := false
	vault := st.vaultWeights()
	for i, g := range rel.groups {
		if _, searched := groupWeight(vault, g); searched && rel.weights[i] == 0 {
			unsaid = true
		}
	}
	scores := map[string]float64{}
	byMeaning := map[string]bool{}
	top := 0.0
	for _, h := range st.hits() {
		if _, ok := scores[h.Path]; !ok {
			scores[h.Path] = h.Score
			top = max(top, h.Score)
			byMeaning[h.Path] = h.Snippet != "" && !reHighlight.MatchString(h.Snippet)
		}
	}
	byPath := map[string]int{}
	var picks []notePick
	for i, s := range srcs {
		if j, ok := byPath[s.path]; ok {
			picks[j].srcs = append(picks[j].srcs, i)
			continue
		}
		byPath[s.path] = len(picks)
		picks = append(picks, notePick{path: s.path, src: i, srcs: []int{i}, named: s.named, byMeaning: byMeaning[s.path]})
	}
	for k := range picks {
		p := &picks[k]
		sort.SliceStable(p.srcs, func(a, b int) bool { return srcs[p.srcs[a]].chunk < srcs[p.srcs[b]].chunk })
		// Neighbouring chunks are read as one text, so a list the chunk
		// boundary cut is one list again.
		var text strings.Builder
		heading := lastHeading(srcs[p.srcs[0]].heading)
		for n, i := range p.srcs {
			if n > 0 && srcs[i].chunk != srcs[p.srcs[n-1]].chunk+1 {
				p.blocks = append(p.blocks, parseBlocks(text.String(), heading)...)
				text.Reset()
				heading = lastHeading(srcs[i].heading)
			}
			text.WriteString(reHighlight.ReplaceAllString(srcs[i].content, "") + "\n")
		}
		p.blocks = append(p.blocks, parseBlocks(text.String(), heading)...)
		// Lists of links alone (an index of notes) answer only what
		// their heading names (below): they are kept apart.
		var linkLists []block
		kept := p.blocks[:0]
		for _, b := range p.blocks {
			if b.linkList() {
				linkLists = append(linkLists, b)
			} else {
				kept = append(kept, b)
			}
		}
		p.blocks = kept
		for i := range p.blocks {
			p.blocks[i].pos = i
		}
		s := srcs[p.src]
		names := titleSet(s)
		p.set = mergeSets(stemSet(p.sectionText(srcs)), names)
		p.title = rel.cover(names)
		p.pairs = wordPairs(s.title + "\n" + noteName(s.path))
		switch sc, ok := scores[s.path]; {
		case s.named:
			p.search = 1
		case ok && top > 0:
			p.search = sc / top
		default:
			p.search = 0.5 // a note read because the previous answer cited it
		}
		p.best, p.bestCover, p.opening = -1, -1, -1
		bestScore := -1.0
		for i := range p.blocks {
			if b := p.blocks[i]; b.kind == tableBlock && rel.count(stemSet(b.items[bestItem(b, rel)].text)) == 0 {
				continue // a table none of whose rows holds the question does not answer it
			}
			if b := p.blocks[i]; b.kind == tableBlock && p.title >= wholeCover && !unsaid && !attributeAsked(b, names, rel) {
				// The question names the note and nothing else ("what
				// does counterspell do"): a table of its attributes,
				// none of which the question names, is what the note
				// is, not what it says.
				continue
			}
			set := stemSet(unitText(p.blocks, i, rel))
			sc := rel.score(set)
			if p.opening < 0 {
				p.opening = i
			}
			// Of passages holding as much of a question asking how to
			// do something, the one that says how (steps, or points a
			// sentence introduces) answers it, when it says the question
			// itself as much as the other: "This means:" and the
			// consequences it lists do not say how.
			if sc > bestScore || howTo && sc == bestScore && p.best >= 0 && !instructs(p.blocks, p.best, true) && instructs(p.blocks, i, true) &&
				rel.count(stemSet(p.blocks[i].text())) >= rel.count(stemSet(p.blocks[p.best].text())) {
				p.best, p.bestCover, bestScore = i, rel.cover(set), sc
			}
		}
		// A list of links whose heading says a word of the question the
		// note's name does not ("list the tools for fuzzing": Fuzzing's
		// "# Tools") answers with the notes it names, when no passage of
		// the note holds more of the question.
		for _, b := range linkLists {
			own := stemSet(b.heading)
			for s := range names {
				delete(own, s)
			}
			if rel.count(own) == 0 {
				continue
			}
			set := stemSet(b.heading + " " + b.text())
			if sc := rel.score(set); sc > bestScore {
				b.pos = len(p.blocks)
				p.blocks = append(p.blocks, b)
				p.best, p.bestCover, bestScore = b.pos, rel.cover(set), sc
				if p.opening < 0 {
					p.opening = b.pos
				}
			}
		}
	}
	sort.SliceStable(picks, func(a, b int) bool {
		if picks[a].named != picks[b].named {
			return picks[a].named
		}
		return picks[a].search > picks[b].search
	})
	return picks
}

// weighed is the sources, the weights of the goal's terms and the notes
// read, computed once per call: the step and the answer both need them.
func (st *convState) weighed() ([]source, relevance, []notePick) {
	if st.weighing == nil {
		w := &weighing{srcs: st.sources()}
		if len(w.srcs) > 0 {
			w.rel = st.relevanceOf(w.srcs)
			w.picks = st.notesRead(w.srcs, w.rel)
		}
		st.weighing = w
	}
	return st.weighing.srcs, st.weighing.rel, st.weighing.picks
}

// weighing is what weighed computes.
type weighing struct {
	srcs  []source
	rel   relevance
	picks []notePick
}

// answer renders the final answer from the notes read.
func (st *convState) answer() string {
	for _, l := range st.listings() {
		if a, ok := l.answer(); ok {
			return a
		}
	}
	if st.timeOnly() && st.timeRange != nil {
		return st.timeAnswer()
	}
	srcs, rel, picks := st.weighed()
	if len(srcs) == 0 {
		return st.noNotesAnswer()
	}
	if st.undated() {
		return fmt.Sprintf("Nothing in your notes from %s matches; this is from notes of other dates.\n\n", st.timeExpr) + st.answerFrom(srcs, rel, picks)
	}
	return st.answerFrom(srcs, rel, picks)
}

// answerFrom is the answer from the chunks read, weighed.
func (st *convState) answerFrom(srcs []source, rel relevance, picks []notePick) string {
	lead, ok := st.leadOf(picks, rel)
	if !ok {
		return st.unresolvedNote() + "I found " + joinAnd(st.noteCitations(srcs)) + ", but could not extract readable text from them. Open them to check."
	}
	if lead < 0 {
		return st.notHeldAnswer(srcs, picks, rel)
	}
	best := picks[lead]
	var b strings.Builder
	cited := []string{}
	cite := func(src int, heading string) string {
		c := st.citeSection(srcs, src, st.sectionHeading(srcs[src], heading))
		if n := st.cite(srcs, src); !slices.Contains(cited, n) {
			cited = append(cited, n)
		}
		return c
	}
	b.WriteString(st.leadPassage(srcs, best, rel, cite))
	support, seeAlso := st.othersOf(srcs, picks, lead, rel, cite)
	if len(support) > 0 {
		b.WriteString("\n\n" + strings.Join(support, "\n"))
	}
	var names []string
	for _, src := range seeAlso {
		n := st.cite(srcs, src)
		if !slices.Contains(cited, n) && !slices.Contains(names, n) && len(names) < maxSeeAlso {
			names = append(names, n)
		}
	}
	if len(names) > 0 {
		b.WriteString("\n\nSee also " + joinAnd(names) + ".")
	}
	b.WriteString("\n\nSources: " + strings.Join(cited, ", "))
	return st.unresolvedNote() + b.String()
}

// bestHitHolding reports whether the note is the search's best hit and
// holds a word of the question: where a reader would look next when the
// answer leads with another note, or when none answers.
func (p notePick) bestHitHolding(rel relevance) bool { return p.search >= 1 && rel.count(p.set) > 0 }

// othersOf weighs the notes read other than the lead: a note the goal
// names is quoted whatever its words; another is quoted as a supporting
// point when it holds supportCover of the question, adds supportAdds of
// what the notes quoted so far lack and has a search score of at least
// supportScore of the best hit's, else named under See also when it holds
// seeAlsoCover of the question; each with a search score of at least
// seeAlsoScore of the best hit's.
func (st *convState) othersOf(srcs []source, picks []notePick, lead int, rel relevance, cite func(int, string) string) (support []string, seeAlso []int) {
	covered := picks[lead].set
	for i, p := range picks {
		if i == lead {
			continue
		}
		switch {
		case p.named || st.namedOnly():
			if line := st.supportLine(srcs, p, rel, cite, true); line != "" {
				support = append(support, line)
			}
		case p.bestHitHolding(rel):
			// Weighed over every field of every note, it is named first.
			seeAlso = append(seeAlso, p.src)
		case p.search < seeAlsoScore:
		case len(support) < maxSupport && p.search >= supportScore && rel.cover(p.set) >= supportCover && rel.adds(covered, p.set) >= supportAdds:
			if line := st.supportLine(srcs, p, rel, cite, false); line != "" {
				support = append(support, line)
				covered = mergeSets(covered, p.set)
			} else {
				seeAlso = append(seeAlso, p.src)
			}
		case rel.cover(p.set) >= seeAlsoCover:
			seeAlso = append(seeAlso, p.src)
		}
	}
	return support, seeAlso
}

// unitText is the text a block is judged by: its heading, its words, and
// those of the list it introduces or of the sentence that introduces it,
// since the two are quoted together.
func unitText(blocks []block, i int, rel relevance) string {
	return blocks[i].heading + " " + passageText(blocks, i, rel)
}

// passageText is the text of the passage a block is quoted by: its words,
// and those of the list it introduces or of the sentence that introduces
// it. A table is judged by its header row and the row that best holds the
// question: a table holds many things, and answers by one row of them.
func passageText(blocks []block, i int, rel relevance) string {
	b := blocks[i]
	text := judgedText(b, rel)
	switch {
	case b.introduces() && i+1 < len(blocks) && blocks[i+1].kind != paragraphBlock && blocks[i+1].heading == b.heading:
		text += " " + judgedText(blocks[i+1], rel)
	case b.kind != paragraphBlock && i > 0 && blocks[i-1].introduces() && blocks[i-1].heading == b.heading:
		text += " " + blocks[i-1].text()
	}
	return text
}

// judgedText is the words a block is judged by: all of them, or a table's
// header and best row.
func judgedText(b block, rel relevance) string {
	if b.kind != tableBlock {
		return b.text()
	}
	return b.headerText() + " " + b.items[bestItem(b, rel)].text
}

// itemLine is a sentence or list item as quoted alone: a table row with
// its column headers.
func itemLine(b block, i int) string {
	if b.kind == tableBlock {
		return rowLine(b, b.items[i])
	}
	return b.items[i].text
}

// sectionText is the text of a note's chunks read, with their headings.
func (p notePick) sectionText(srcs []source) string {
	var b strings.Builder
	for _, i := range p.srcs {
		b.WriteString(srcs[i].heading + "\n" + srcs[i].content + "\n")
	}
	return b.String()
}

func mergeSets(a, b map[string]bool) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// sectionHeading is the heading a citation of a block under heading
// names: none for the note's own title heading (its name, or its first
// heading when that is a top-level one, "# Guide").
func (st *convState) sectionHeading(s source, heading string) string {
	if strings.EqualFold(heading, s.title) || strings.EqualFold(heading, noteName(s.path)) ||
		len(s.headings) > 0 && heading == s.headings[0] && s.firstLevel <= 1 && !strings.Contains(s.heading, " > ") {
		return ""
	}
	return heading
}

// leadPassage renders the passage of the best note that answers: its best
// block as the note has it, with the sentence that introduces a list, or
// the list a paragraph introduces, or the paragraphs after it under the
// same heading that go on answering (within leadRunes); the note's
// opening when no block holds a word of the question (the note was chosen
// for its name); a sentence saying what the note is when it has no prose.
func (st *convState) leadPassage(srcs []source, p notePick, rel relevance, cite func(int, string) string) string {
	if p.best < 0 {
		for _, k := range p.srcs {
			if code, ok := firstCode(srcs[k].content, lastHeading(srcs[k].heading)); ok {
				return "From " + cite(k, code.heading) + ":\n\n" + code.render()
			}
		}
		return describeNote(srcs[p.src]) + " " + cite(p.src, "")
	}
	i := p.best
	if p.bestCover <= 0 || st.namedOnly() {
		i = p.opening
	}
	blk := p.blocks[i]
	c := cite(p.src, blk.heading)
	items := func(b block) block {
		if p.title >= wholeCover || b.linkList() {
			// The note is named after the question ("TCP" for my
			// notes on TCP): every item of its lists is about it.
			return b
		}
		return relevantItems(b, rel)
	}
	switch {
	case blk.kind != paragraphBlock && i > 0 && p.blocks[i-1].introduces() && p.blocks[i-1].heading == blk.heading:
		return renderTail(p.blocks[i-1]) + " " + c + "\n\n" + renderList(items(blk))
	case blk.introduces() && i+1 < len(p.blocks) && p.blocks[i+1].kind != paragraphBlock && p.blocks[i+1].heading == blk.heading:
		return renderTail(blk) + " " + c + "\n\n" + renderList(items(p.blocks[i+1]))
	case blk.kind != paragraphBlock:
		return "From " + c + ":\n\n" + renderList(items(blk))
	}
	text, cut := renderBlock(blk, firstSentence(blk, rel))
	parts := []passagePart{paragraphPart(blk, text)}
	n := len([]rune(text))
	for j := i + 1; !cut && j < len(p.blocks); j++ {
		// The section goes on answering: its next paragraphs, and the
		// lists between them ("In TCP, ...", its points, "In UDP, ..."),
		// while they hold a word of the question. What a part ends on a
		// colon to introduce comes with it, whatever its words.
		next := p.blocks[j]
		opens := parts[len(parts)-1].opens()
		if next.kind == tableBlock || next.heading != blk.heading || rel.count(stemSet(next.text())) == 0 && !opens {
			break
		}
		part := passagePart{text: renderList(items(next)), list: true}
		if next.kind == paragraphBlock {
			more, _ := renderBlock(next, 0)
			part = paragraphPart(next, more)
		}
		if n+len([]rune(part.text)) > leadRunes {
			break
		}
		parts = append(parts, part)
		n += len([]rune(part.text))
	}
	for len(parts) > 1 {
		last := parts[len(parts)-1]
		// A list after the last paragraph is the next thing's, unless
		// the paragraph introduces it (quoted with it); a paragraph
		// whose list did not fit ends on its colon with nothing after.
		if last.list && !parts[len(parts)-2].opens() || !last.list && last.code == "" && last.opens() {
			parts = parts[:len(parts)-1]
			continue
		}
		break
	}
	if len(parts) == 1 && isLabel(blk) {
		// A line such as "Linux — 12.1%" means little alone: the
		// paragraphs before it under the same heading (what the figures
		// are of, the lines beside it) come with it, within leadRunes. A
		// label followed by text that goes on answering heads that text.
		for j := i - 1; j >= 0; j-- {
			prev := p.blocks[j]
			if prev.kind != paragraphBlock || prev.heading != blk.heading {
				break
			}
			more, _ := renderBlock(prev, 0)
			if n+len([]rune(more)) > leadRunes {
				break
			}
			parts = append([]passagePart{paragraphPart(prev, more)}, parts...)
			n += len([]rune(more))
		}
	}
	// The citation ends the last paragraph: after a list it would read
	// as its last item's.
	last := len(parts) - 1
	for last > 0 && parts[last].list {
		last--
	}
	var out strings.Builder
	for k, part := range parts {
		if k > 0 {
			out.WriteString("\n\n")
		}
		out.WriteString(part.text)
		if k == last {
			out.WriteString(" " + c)
		}
		if part.code != "" {
			out.WriteString("\n\n" + part.code)
		}
	}
	return out.String()
}

// passagePart is a paragraph or list of a lead passage, rendered, with
// the code block a paragraph introduces.
type passagePart struct {
	text, code string
	list       bool
}

// paragraphPart is paragraph b quoted as text, with its code.
func paragraphPart(b block, text string) passagePart {
	return passagePart{text: text, code: paraCode(b, text)}
}

// opens reports whether the part ends on a colon, introducing what
// follows.
func (p passagePart) opens() bool { return introduces(strings.TrimSpace(p.text)) }

// paraCode is the code block a paragraph introduces, rendered, when text,
// the paragraph as quoted, reaches the sentence that introduces it; "" for
// none.
func paraCode(b block, text string) string {
	last := b.items[len(b.items)-1]
	if last.code == nil || !strings.HasSuffix(text, last.text) {
		return ""
	}
	return last.code.render()
}

// renderList renders a list, steps or a table, saying so when it was cut.
func renderList(b block) string {
	text, cut := renderBlock(b, 0)
	unit, whole := "item", "list"
	if b.kind == tableBlock {
		unit, whole = "row", "table"
	}
	switch {
	case b.omitted > 0:
		text += fmt.Sprintf("\n\n(%s of this %s in the note %s about other things.)", plural(b.omitted, "more "+unit), whole, map[bool]string{true: "is", false: "are"}[b.omitted == 1])
	case cut:
		text += "\n\n(The " + whole + " goes on in the note.)"
	}
	return text
}

// relevantItems keeps, of a bulleted list or a table whose items are
// mostly about other things (a digest, a changelog, a price list), the
// items that hold a word of the question, each with its sub-items, in
// their order. A list most of whose items hold the question answers as a
// whole, and steps are never cut apart: they are kept whole.
func relevantItems(b block, rel relevance) block {
	if b.kind != listBlock && b.kind != tableBlock {
		return b
	}
	type group struct {
		items []blockItem
		text  string
		hit   bool
	}
	var groups []group
	for _, it := range b.items {
		if it.depth == 0 || len(groups) == 0 {
			groups = append(groups, group{})
		}
		g := &groups[len(groups)-1]
		g.items = append(g.items, it)
		g.text += " " + it.text
	}
	scores := make([]float64, len(groups))
	best := 0.0
	for i, g := range groups {
		scores[i] = rel.score(stemSet(g.text))
		best = max(best, scores[i])
	}
	hits := 0
	for i := range groups {
		// An item that holds a word of the question but far less of
		// it than the best item is about something else.
		if scores[i] > 0 && scores[i] >= itemShare*best {
			groups[i].hit = true
			hits++
		}
	}
	if len(groups) <= 3 || hits == 0 || 2*hits >= len(groups) {
		return b
	}
	out := b
	out.items = nil
	for _, g := range groups {
		if g.hit {
			out.items = append(out.items, g.items...)
		}
	}
	out.omitted = len(groups) - hits
	return out
}

// renderTail renders the end of a paragraph that introduces a list: its
// last sentences, within a third of leadRunes, ending with the one that
// opens the list.
func renderTail(b block) string {
	first := len(b.items) - 1
	n := len([]rune(b.items[first].text))
	for first > 0 && n+len([]rune(b.items[first-1].text)) <= leadRunes/3 {
		first--
		n += len([]rune(b.items[first].text)) + 1
	}
	text, _ := renderBlock(b, first)
	return text
}

// firstSentence is where a paragraph's passage starts: its beginning,
// unless the sentence that best holds the question lies past what a
// passage shows, then that sentence.
func firstSentence(b block, rel relevance) int {
	n, best := 0, bestItem(b, rel)
	for i := 0; i < best; i++ {
		n += len([]rune(b.items[i].text)) + 1
	}
	if n+len([]rune(b.items[best].text)) > leadRunes {
		return best
	}
	return 0
}

// supportLine is one point from another note: the sentence or list item
// of its best block that holds the most of the question, as a bullet with
// its citation; "" when none holds any (unless any is set: a note the
// goal names is quoted from its best block whatever its words).
func (st *convState) supportLine(srcs []source, p notePick, rel relevance, cite func(int, string) string, any bool) string {
	if p.best < 0 {
		if !any {
			return ""
		}
		return "- " + describeNote(srcs[p.src]) + " " + cite(p.src, "")
	}
	blk := p.blocks[p.best]
	best := bestItem(blk, rel)
	if !any && rel.score(stemSet(blk.items[best].text)) <= 0 {
		return ""
	}
	return "- " + itemLine(blk, best) + " " + cite(p.src, blk.heading)
}

// notHeldAnswer says the notes read do not answer the goal and lists the
// nearest notes, those holding the most of the question first, each with
// its best sentence.
func (st *convState) notHeldAnswer(srcs []source, picks []notePick, rel relevance) string {
	var b strings.Builder
	if missing := st.missingTerms(picks); len(missing) > 0 {
		// Only the parts of notes that matched are read: a word they
		// lack may be elsewhere in the same notes, unless the search
		// found it in no note at all.
		var absent, unread []string
		for _, t := range missing {
			if st.absentFromVault(t) {
				absent = append(absent, t)
			} else {
				unread = append(unread, t)
			}
		}
		switch {
		case len(unread) == 0:
			fmt.Fprintf(&b, "Your notes don't seem to answer this: none of your notes mention %s.", joinOr(absent))
		case len(absent) == 0:
			fmt.Fprintf(&b, "Your notes don't seem to answer this: none of the passages I read mention %s.", joinOr(unread))
		default:
			fmt.Fprintf(&b, "Your notes don't seem to answer this: none of your notes mention %s, and none of the passages I read mention %s.", joinOr(absent), joinOr(unread))
		}
	} else {
		fmt.Fprintf(&b, "Your notes don't seem to answer this: the notes I read touch on %s, but none of them holds enough of it.", st.keywordText())
	}
	order := nearestNotes(picks, rel)
	if len(order) == 0 {
		b.WriteString("\n\nYou could try other words, a tag (tag:#name) or a folder (path:folder/).")
		return st.unresolvedNote() + b.String()
	}
	b.WriteString(" The nearest notes are:\n\n")
	for _, p := range order {
		line := "- " + st.cite(srcs, p.src)
		if len(p.blocks) > 0 {
			blk := p.blocks[max(p.best, 0)]
			line += ": " + itemLine(blk, bestItem(blk, rel))
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\nYou could try other words, a tag (tag:#name) or a folder (path:folder/).")
	return st.unresolvedNote() + b.String()
}

// nearestShare is the share of the nearest note's cover of the question
// another note needs to be listed beside it when no note answers.
const nearestShare = 0.5

// nearestNotes are the notes read that come nearest to answering, the
// most of the question first: at most maxNearest, each holding a word of
// the question and at least nearestShare of what the nearest holds. A
// note that matched only the question's framing ("how do I find out")
// or one of its words the other notes far outweigh is not near: listed,
// it would read as an answer on another subject. When no note holds a
// word of the question, the notes the search found by meaning (in its
// order) are the nearest: the question may use other words than the note.
// The search's best hit is listed too when it holds a word of the
// question, last if the others leave no room: weighed over every field of
// every note, it is where a reader would look next ("the text I wiped out
// by mistake": File recovery, which says "back", beside a page that says
// "mistakes").
func nearestNotes(picks []notePick, rel relevance) []notePick {
	order := append([]notePick(nil), picks...)
	sort.SliceStable(order, func(i, j int) bool { return rel.cover(order[i].set) > rel.cover(order[j].set) })
	var out []notePick
	bestHit := -1
	for i, p := range order {
		if p.bestHitHolding(rel) {
			bestHit = i
		}
		if len(out) == maxNearest || rel.count(p.set) == 0 || len(out) > 0 && rel.cover(p.set) < nearestShare*rel.cover(out[0].set) {
			continue
		}
		out = append(out, p)
	}
	if bestHit >= 0 && !slices.ContainsFunc(out, func(p notePick) bool { return p.src == order[bestHit].src }) {
		if len(out) == maxNearest {
			out = out[:maxNearest-1]
		}
		out = append(out, order[bestHit])
	}
	if len(out) > 0 {
		return out
	}
	for _, p := range picks {
		if p.byMeaning && len(out) < maxNearest {
			out = append(out, p)
		}
	}
	return out
}

// missingTerms are the goal's terms that no note read holds, as typed.
func (st *convState) missingTerms(picks []notePick) []string {
	var out []string
	groups := st.goalGroups() // with the spellings the search found for a misspelt word
	vault := st.vaultWeights()
	for _, t := range st.terms.all() {
		g := termStems(queryTerms{keywords: []string{t}})
		if len(g) == 0 || st.fillerTerm(vault, t) {
			continue // a word that frames the question ("compare") is not missing
		}
		for _, gg := range groups {
			if len(gg) == len(g[0]) && (gg[0] == g[0][0] || strings.HasPrefix(gg[0], g[0][0]+"|")) {
				g[0] = gg
			}
		}
		found := false
		for _, p := range picks {
			if groupShare(p.set, g[0]) > 0 {
				found = true
				break
			}
		}
		if !found {
			out = append(out, t)
		}
	}
	return out
}

// fillerTerm reports whether the search weighed every word of term as
// filler (vault: vaultWeights).
func (st *convState) fillerTerm(vault map[string]search.TermWeight, term string) bool {
	seen := false
	for _, w := range tokenize(term) {
		for _, u := range stems(w) {
			if t, ok := vault[u]; !ok || !t.Filler {
				return false
			}
			seen = true
		}
	}
	return seen
}

// absentFromVault reports whether the search found a term of the goal in
// no note of the vault (its every word, with corrections of a typo,
// missing).
func (st *convState) absentFromVault(term string) bool {
	vault := st.vaultWeights()
	seen := false
	for _, w := range tokenize(term) {
		for _, u := range stems(w) {
			t, ok := vault[u]
			if !ok || !t.Missing {
				return false
			}
			seen = true
		}
	}
	return seen
}

// bestItem is the sentence or list item of a block that holds the most of
// the question, the first on a tie.
func bestItem(b block, rel relevance) int {
	best, bestScore := 0, -1.0
	for i, it := range b.items {
		if sc := rel.score(stemSet(it.text)); sc > bestScore {
			best, bestScore = i, sc
		}
	}
	return best
}

// noteCitations cites every note of srcs once.
func (st *convState) noteCitations(srcs []source) []string {
	var out []string
	for i := range srcs {
		if c := st.cite(srcs, i); !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// neighbourChunk is the chunk next to the one holding the answer's lead
// block, when the answer may run across the boundary: the lead is among
// the last two blocks of its chunk and the note goes on (the next chunk),
// or it opens a chunk that continues a section (the previous one). It is
// read once per run: ok is false when any note was already read at two
// chunks.
func (st *convState) neighbourChunk() (notePath string, chunk int, ok bool) {
	got := map[string]bool{}
	perNote := map[string]int{}
	most := 0
	for _, r := range st.reads {
		got[r.path+"#"+strconv.Itoa(r.chunk)] = true
		perNote[r.path]++
		most = max(most, perNote[r.path])
	}
	if most >= maxReadOn {
		return "", 0, false
	}
	srcs, rel, picks := st.weighed()
	if len(srcs) == 0 || st.terms.empty() {
		return "", 0, false
	}
	lead, _ := st.leadOf(picks, rel)
	if lead < 0 {
		return "", 0, false
	}
	best := picks[lead]
	s := srcs[best.src]
	if s.chunks <= 1 {
		return "", 0, false
	}
	if best.best < 0 {
		// The parts read say nothing but what the note is (its title,
		// a line of links under its frontmatter, a table of its
		// attributes): what it says comes next.
		last := srcs[best.srcs[len(best.srcs)-1]].chunk // srcs are in chunk order
		if next := last + 1; next < s.chunks && !got[s.path+"#"+strconv.Itoa(next)] {
			return s.path, next, true
		}
		return "", 0, false
	}
	if most > 1 {
		return "", 0, false
	}
	if best.bestCover <= 0 {
		return "", 0, false
	}
	switch {
	case s.chunk+1 < s.chunks && best.best >= len(best.blocks)-2 && !got[s.path+"#"+strconv.Itoa(s.chunk+1)]:
		return s.path, s.chunk + 1, true
	case s.chunk > 0 && best.best == 0 && !strings.HasPrefix(strings.TrimSpace(s.content), "#") &&
		!got[s.path+"#"+strconv.Itoa(s.chunk-1)]:
		return s.path, s.chunk - 1, true
	}
	return "", 0, false
}

// maxReadOn is how many parts of the lead note are read in all, at most,
// to find one that says more than what the note is.
const maxReadOn = 3

// labelRunes is the length under which a paragraph of one sentence is a
// label (a figure, a name and a value) rather than a passage.
const labelRunes = 40

// isLabel reports whether a paragraph is one short line.
func isLabel(b block) bool {
	return b.kind == paragraphBlock && len(b.items) == 1 && len([]rune(b.items[0].text)) < labelRunes
}
