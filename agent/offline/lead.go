package offline

import (
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/vault-agent/vault-agent/vault"
)

// Which note leads the answer. The search's order decides, with a few
// exceptions a reader would make: a passage that only names the subject
// in its heading gives way to a note that says it, a passage that points
// to another note for the subject gives way to that note, a note with
// nothing to quote gives way to one named more after the question, and a
// question asking how to do something is answered by steps.

// leadOf is the note the answer leads with: the first, in the search's
// order, that holds the question (relevance.held) and has prose to quote
// or is named after the question; but when that note's passage says none
// of the question's words (only its heading does), the next such note
// whose passage does, if the search ranks it within leadSaysScore of the
// best hit. ok is false when no note has anything
// to quote; lead is -1 when none holds the question.
func (st *convState) leadOf(picks []notePick, rel relevance) (lead int, ok bool) {
	lead, ok = st.firstLead(picks, rel)
	if lead >= 0 && !picks[lead].named && !st.namedOnly() && !st.terms.empty() {
		if to := referred(picks, lead, rel); to >= 0 {
			return to, true
		}
		if to := betterNamed(picks, lead, rel); to >= 0 {
			return to, true
		}
		if to := st.titledFor(picks, lead, rel); to >= 0 {
			return to, true
		}
		if to := st.stepsFor(picks, lead, rel); to >= 0 {
			return to, true
		}
	}
	return lead, ok
}

// betterNamed is the note that leads in place of a lead with no prose of
// its own (a plugin page that is only a table of facts, quoted as "X is a
// note in Plugins"): another note read that holds the question, says it
// in a passage of its own and whose name (title and folders) holds more of
// the question than the lead's ("a theme that makes my vault look like
// Wikipedia": Themes/Wikipedia over the plugin random-wikipedia-article).
// The first such in the search's order; -1 when there is none.
func betterNamed(picks []notePick, lead int, rel relevance) int {
	p := picks[lead]
	if p.best >= 0 || p.title >= heldCover {
		return -1 // the lead has a passage, or is named after the question
	}
	return answeringOther(picks, lead, rel, func(q notePick) bool { return q.bestCover > 0 && q.title > p.title })
}

// titledFor is the note that leads in place of a lead whose name holds
// the question's words apart: another note read, ranked within
// leadSaysScore of the best hit, whose name holds the same share of the
// question but two of its words side by side, as the question says them
// ("list of built-in core plugins": Obsidian Core Plugins over
// obsidian-core-search-assistant-plugin), and that answers the question
// itself. Of two names holding the same words, the one that says them
// together names the question's subject; a name holding more of the
// question is left to the search's order. -1 when there is none.
func (st *convState) titledFor(picks []notePick, lead int, rel relevance) int {
	pairs := goalPairs(st.terms.keywords)
	p := picks[lead]
	if len(pairs) == 0 || p.title <= 0 || titlePair(p, pairs) {
		return -1
	}
	return answeringOther(picks, lead, rel, func(q notePick) bool {
		return q.search >= leadSaysScore && math.Abs(q.title-p.title) < 1e-9 && titlePair(q, pairs)
	})
}

// titlePair reports whether the note's name holds one of the question's
// word pairs, in the question's order.
func titlePair(p notePick, pairs [][2][]string) bool {
	for _, qp := range pairs {
		for _, a := range qp[0] {
			for _, b := range qp[1] {
				if p.pairs[[2]string{a, b}] {
					return true
				}
			}
		}
	}
	return false
}

// goalPairs are the stems of each two neighbouring keywords of the
// question (stop words left out, so "plugins with their ids" pairs
// plugins and ids).
func goalPairs(keywords []string) [][2][]string {
	var out [][2][]string
	for i := 0; i+1 < len(keywords); i++ {
		a, b := stems(keywords[i]), stems(keywords[i+1])
		if len(a) > 0 && len(b) > 0 {
			out = append(out, [2][]string{a, b})
		}
	}
	return out
}

// wordPairs is the set of stem pairs of each two neighbouring words of
// text, stop words left out; words of different lines are not neighbours,
// and a hyphenated name ("random-wikipedia-article") is read as its parts.
func wordPairs(text string) map[[2]string]bool {
	set := map[[2]string]bool{}
	for _, line := range strings.Split(text, "\n") {
		var prev []string
		for _, w := range tokenize(strings.ReplaceAll(line, "-", " ")) {
			if stopWords[w] {
				continue
			}
			cur := stems(w)
			for _, a := range prev {
				for _, b := range cur {
					set[[2]string{a, b}] = true
				}
			}
			prev = cur
		}
	}
	return set
}

// referred is the note the lead's passage sends the reader to for the
// question: its sentence or item that best holds the question links to
// another note read that holds the question, says it in its own passage
// and ranks within leadSaysScore of the best hit ("a write-up about
// [[X]]", "see [[X]] for more"), or names without a link, by a name of
// two words or more, a note read that is named after a word of the
// question and says it ("a tip in the Atomic Habits book" in a journal):
// that note is the source, the lead only points to it. -1 when there is
// none.
func referred(picks []notePick, lead int, rel relevance) int {
	p := picks[lead]
	if p.quotedForName() {
		return -1 // a note named after the question answers it itself
	}
	blk := p.blocks[p.best]
	it := blk.items[bestItem(blk, rel)]
	text := strings.ToLower(it.text)
	if strings.Contains(text, vault.NoteKey(p.path)) {
		// A sentence naming the lead note itself says what that note
		// is ("Note composer is a [[core plugin]] that..."): its links
		// classify it, they do not send the reader elsewhere.
		return -1
	}
	if to := answeringOther(picks, lead, rel, func(q notePick) bool {
		return q.search >= leadSaysScore && slices.Contains(it.links, vault.NoteKey(q.path))
	}); to >= 0 {
		return to
	}
	// A note named in the lead's own words is the subject the lead
	// talks about: it need only be named after a word of the question
	// and say something of it; the naming vouches for the rest.
	for i, q := range picks {
		if i != lead && q.search >= leadSaysScore && q.title > 0 && q.best >= 0 && q.says(rel) && mentions(text, vault.NoteKey(q.path)) {
			return i
		}
	}
	return -1
}

// mentions reports whether lower-cased text names a note by its key (its
// lower-cased file name) as whole words, when the name has two words or
// more: a one-word name ("Git", "Home") is too often just a word.
func mentions(text, key string) bool {
	if len(strings.Fields(key)) < 2 {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], key)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(key)
		if (start == 0 || !isWordByte(text[start-1])) && (end == len(text) || !isWordByte(text[end])) {
			return true
		}
		i = start + 1
	}
}

// isWordByte reports whether b is part of an ASCII word (a byte of a
// multi-byte character counts as one, so a name is not found inside a
// longer word of another script).
func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b >= 0x80
}

// reHowToDo marks a question asking how to do something ("how do I",
// "how can we", "how to").
var reHowToDo = regexp.MustCompile(`(?i)^\s*(?:how (?:do|can|could|should|would) (?:i|we|you|one)\b|how to\b)`)

// stepsFor is the note that leads in place of the lead when the question
// asks how to do something and the lead's passage is not steps: another
// note read that holds the question, says it in numbered steps that hold
// at least as much of the question as the lead's passage, and ranks
// within leadSaysScore of the best hit ("how can I add my own page":
// the guide's steps, not a sentence of a tip that says "add"). The first
// such in the search's order; -1 when there is none.
func (st *convState) stepsFor(picks []notePick, lead int, rel relevance) int {
	if !reHowToDo.MatchString(st.goal) || picks[lead].quotedForName() || picks[lead].stepsPassage() {
		return -1
	}
	return answeringOther(picks, lead, rel, func(q notePick) bool {
		return q.search >= leadSaysScore && q.stepsPassage() && q.bestCover >= picks[lead].bestCover
	})
}

// answeringOther is the first note read, in the search's order, other than
// the lead, that also qualifies and answers the question itself: it holds
// the question and says it in a passage of its own. -1 when there is none.
func answeringOther(picks []notePick, lead int, rel relevance, also func(notePick) bool) int {
	for i, q := range picks {
		if i != lead && also(q) && q.best >= 0 && rel.held(q.set) && q.says(rel) {
			return i
		}
	}
	return -1
}

// stepsPassage reports whether the note's passage is numbered steps, or
// the sentence that introduces them.
func (p notePick) stepsPassage() bool {
	return p.best >= 0 && instructs(p.blocks, p.best, false)
}

// instructs reports whether block i is numbered steps or the sentence that
// introduces them; with lists, a list or the sentence that introduces one
// ("you can customize the ribbon as follows:" and its points).
func instructs(blocks []block, i int, lists bool) bool {
	how := func(b block) bool { return b.kind == stepsBlock || lists && b.kind == listBlock }
	if how(blocks[i]) {
		return true
	}
	next := i + 1
	return blocks[i].introduces() && next < len(blocks) && how(blocks[next]) && blocks[next].heading == blocks[i].heading
}

// firstLead is leadOf's choice before a lead that points to another note
// gives way to it.
func (st *convState) firstLead(picks []notePick, rel relevance) (lead int, ok bool) {
	lead = -1
	for i, p := range picks {
		if p.best < 0 && p.title <= 0 && !p.named {
			continue // nothing to quote, and not named after the question
		}
		ok = true
		if p.named || st.namedOnly() || st.terms.empty() {
			return i, true
		}
		if !rel.held(p.set) && !namedNearlyHeld(p, rel) {
			continue
		}
		if p.says(rel) && (lead < 0 || p.search >= leadSaysScore) {
			return i, true
		}
		if lead < 0 {
			lead = i
		} else if p.search < leadSaysScore {
			break
		}
	}
	return lead, ok
}

// namedNearlyHeld reports whether a note that falls just short of holding
// the question may lead all the same: its name holds a word of the
// question and its passage says more of it ("Basketball Handling Drill
// 1", listing dribbling exercises, for "ball handling exercises to get
// better at dribbling"), so that together they hold a third of the
// question's words and nearly the weighted share a note must hold. The
// name says what the note is about; a note the search ranks lower that
// holds the question by a common word should not lead over it.
func namedNearlyHeld(p notePick, rel relevance) bool {
	return p.title > 0 && p.best >= 0 && rel.cover(p.set) >= 0.8*heldCover && rel.count(p.set) >= 0.34*float64(len(rel.groups))
}

// leadSaysScore is the search score, relative to the best hit's, of a
// note that may lead in place of a better-ranked one whose passage says
// none of the question's words.
const leadSaysScore = 0.5

// says reports whether the passage the note would be quoted by holds a
// word of the question in its own text, when only its heading does: a
// passage under a heading that names the question's subject may say
// nothing about it (a warning, a line before a list of links). A note
// named after the question is about it whatever its passage, and a note
// with no prose, or none holding the question, is quoted for its name
// (its opening, or what it is).
func (p notePick) says(rel relevance) bool {
	if p.quotedForName() || p.best >= 0 && p.blocks[p.best].linkList() {
		return true // a list of notes says what its heading names
	}
	return rel.count(stemSet(passageText(p.blocks, p.best, rel))) > 0
}

// quotedForName reports whether the note is quoted for what it is rather
// than for a passage holding the question: it has no prose, none of its
// prose holds the question, or it is named after the question.
func (p notePick) quotedForName() bool {
	return p.best < 0 || p.bestCover <= 0 || p.title >= heldCover
}
