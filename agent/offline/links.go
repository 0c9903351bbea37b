package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/search"
)

// Questions about a note's links ("which notes link to TCP?", "backlinks
// of [[Sockets]]", "what does Sockets link to?"): getNoteLinks lists them
// and the answer lists the notes, each cited. When no note has that name,
// the question is searched as any other.

var (
	// reBacklinkQuestion names the note whose backlinks are asked for.
	reBacklinkQuestion = regexp.MustCompile(`(?i)(?:\b(?:which|what)\s+(?:other\s+)?(?:notes?\s+|pages?\s+)?(?:links?|linking|points?|refers?)\s+(?:to|at)\s+|` +
		`\bnotes?\s+(?:that\s+|which\s+)?(?:links?|linking|points?|pointing|refers?|referring)\s+(?:to|at)\s+|` +
		`\bbacklinks?\s+(?:of|to|for|in)\s+)(.+?)[?.!]*$`)
	// reOutlinkQuestion names the note whose own links are asked for.
	reOutlinkQuestion = regexp.MustCompile(`(?i)(?:\bwhat\s+(?:notes?\s+)?does\s+(.+?)\s+(?:link|point|refer)\s+to|` +
		`\b(?:outgoing\s+links|links)\s+(?:in|of|from)\s+(.+?))\s*[?.!]*$`)
	reNoteWords = regexp.MustCompile(`(?i)^(?:the\s+|my\s+)?(?:note|page)\s+(?:called\s+|named\s+)?`)
)

// maxLinksListed caps the notes a links answer lists.
const maxLinksListed = 20

// linkList is the last getNoteLinks result.
type linkList struct {
	asked  string
	links  search.NoteLinks
	failed bool
}

// linkQuestion returns the note the goal asks the links of, and whether
// it asks for the notes linking to it (else those it links to); "" when
// the goal is not about a note's links.
func (st *convState) linkQuestion() (note string, back bool) {
	if !st.available(agent.ToolNoteLinks) || reHowTo.MatchString(st.goal) {
		return "", false
	}
	goal := strings.TrimSpace(st.goal)
	if m := reOutlinkQuestion.FindStringSubmatch(goal); m != nil {
		return cleanNoteName(m[1] + m[2]), false
	}
	if m := reBacklinkQuestion.FindStringSubmatch(goal); m != nil {
		return cleanNoteName(m[1]), true
	}
	return "", false
}

// cleanNoteName is a note named in a question, without its [[ ]], quotes
// and the words that say it is a note.
func cleanNoteName(s string) string {
	s = strings.TrimSpace(s)
	s = reNoteWords.ReplaceAllString(s, "")
	s = strings.Trim(s, `"'“”‘’`)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "[["), "]]")
	if i := strings.IndexAny(s, "|"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// linkStep is the getNoteLinks call a links question makes, then the
// answer; false when the goal is not about links, or no note has the name
// (the question is searched instead).
func (st *convState) linkStep() (step, bool) {
	note, back := st.linkQuestion()
	if note == "" {
		return step{}, false
	}
	if st.links == nil || st.links.asked != note {
		what := "the notes " + note + " links to"
		if back {
			what = "the notes that link to " + note
		}
		return callStep("Listing "+what+".", agent.ToolNoteLinks, map[string]any{"notePath": note}), true
	}
	if st.links.failed {
		return step{}, false
	}
	return st.listedStep("links", "Listed the links of "+note+"."), true
}

// noteLinks records a getNoteLinks result.
func (st *convState) noteLinks(args, content string, failed bool) {
	var a struct {
		NotePath string `json:"notePath"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	rec := &linkList{asked: a.NotePath, failed: failed}
	if !failed && json.Unmarshal([]byte(content), &rec.links) != nil {
		rec.failed = true
	}
	st.links = rec
}

// linkAnswer lists the links asked for; false when the goal was not
// answered by a links listing.
func (st *convState) linkAnswer() (string, bool) {
	note, back := st.linkQuestion()
	if note == "" || st.links == nil || st.links.asked != note || st.links.failed {
		return "", false
	}
	l := st.links.links
	self := "[[" + noteName(l.Path) + "]]"
	var b strings.Builder
	var cited []string
	if back {
		if l.BacklinkTotal == 0 {
			return fmt.Sprintf("No note links to %s.\n\nSources: %s", self, self), true
		}
		verb := "link"
		if l.BacklinkTotal == 1 {
			verb = "links"
		}
		fmt.Fprintf(&b, "%s %s to %s:\n\n", plural(l.BacklinkTotal, "note"), verb, self)
		paths := make([]string, len(l.Backlinks))
		for i, bl := range l.Backlinks {
			paths[i] = bl.Path
		}
		for _, bl := range l.Backlinks[:min(len(l.Backlinks), maxLinksListed)] {
			c := linkAmong(paths, bl.Path)
			line := "- " + c
			if bl.Count > 1 {
				line += fmt.Sprintf(" (%d links)", bl.Count)
			}
			b.WriteString(line + "\n")
			cited = append(cited, c)
		}
		if more := l.BacklinkTotal - min(len(l.Backlinks), maxLinksListed); more > 0 {
			fmt.Fprintf(&b, "- and %s more\n", plural(more, "note"))
		}
	} else {
		if l.OutgoingTotal == 0 {
			return fmt.Sprintf("%s links to no note.\n\nSources: %s", self, self), true
		}
		fmt.Fprintf(&b, "%s links to %s:\n\n", self, plural(l.OutgoingTotal, "target"))
		var paths []string
		for _, o := range l.Outgoing {
			if o.Path != "" {
				paths = append(paths, o.Path)
			}
		}
		var missing, files []string
		for _, o := range l.Outgoing[:min(len(l.Outgoing), maxLinksListed)] {
			switch {
			case o.Path == "" && o.Embed:
				files = append(files, o.Target)
				continue
			case o.Path == "":
				missing = append(missing, o.Target)
				continue
			}
			c := linkAmong(paths, o.Path)
			line := "- " + c
			if o.Heading != "" {
				line += " (its section " + o.Heading + ")"
			}
			b.WriteString(line + "\n")
			cited = append(cited, c)
		}
		if len(missing) > 0 {
			fmt.Fprintf(&b, "- not yet a note: %s\n", strings.Join(missing, ", "))
		}
		if len(files) > 0 {
			fmt.Fprintf(&b, "- embedded files: %s\n", strings.Join(files, ", "))
		}
		if more := l.OutgoingTotal - min(len(l.Outgoing), maxLinksListed); more > 0 {
			fmt.Fprintf(&b, "- and %s more\n", plural(more, "target"))
		}
	}
	b.WriteString("\nSources: " + strings.Join(append([]string{self}, cited...), ", "))
	return b.String(), true
}
