package vault

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Task is one task of a note: a list item with a checkbox ("- [ ] call
// Bob", "1. [x] done"), in a blockquote or callout too, outside code blocks
// and the frontmatter.
type Task struct {
	// Line is the task's 1-based line in the file.
	Line int `json:"line"`
	// Status is the character between the brackets: " " for an open task,
	// "x" for a done one; the Tasks plugin adds others ("/" in progress,
	// "-" cancelled).
	Status string `json:"status"`
	// Done is true for any status but " ", as Obsidian checks the box.
	Done bool `json:"done"`
	// Text is what follows the checkbox, as written.
	Text string `json:"text"`
	// Section is the text of the heading the task is under, "" before the
	// first heading.
	Section string `json:"section,omitempty"`
	// The task's dates, YYYY-MM-DD, written the Tasks plugin's way
	// ("📅 2026-03-12", "⏳ ...", "🛫 ...", "✅ ...") or as Dataview
	// fields ("[due:: 2026-03-12]", "(scheduled:: ...)"); "" when absent.
	Due       string `json:"due,omitempty"`
	Scheduled string `json:"scheduled,omitempty"`
	Start     string `json:"start,omitempty"`
	Completed string `json:"completed,omitempty"`
}

// Span is a range of lines of a note, 1-based and inclusive, numbered as
// in the file (frontmatter included).
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Section is the text between two headings: from a heading's line to the
// line before the next heading of any level (or the end of the note). The
// text before the first heading is a section with no heading (Level 0).
type Section struct {
	Span
	Level int `json:"level,omitempty"`
}

// MaxTasks is how many tasks of a note are kept, in order of appearance.
const MaxTasks = 10_000

// maxBlocks caps the blocks of a note: past it, the rest of the note is
// one block (nothing is left out).
const maxBlocks = 50_000

// structure is what scanStructure finds.
type structure struct {
	tasks    []Task
	sections []Section
	blocks   []Span
	cut      bool // more than MaxTasks tasks
}

// scanStructure finds the tasks, sections and blocks of a body whose first
// line is the file's line bodyLine, given its headings (with file lines).
// fm is set when lines 1 to bodyLine-1 are a frontmatter block, which is a
// block of its own. Blocks are runs of lines between blank lines, a
// heading (with a setext underline) and a fenced code block (blank lines
// included) being blocks of their own: Obsidian's "block" for block:
// search. It reads each line once.
func scanStructure(body string, bodyLine int, headings []Heading) structure {
	// Blocks are about as many as blank lines and headings: sized once.
	st := structure{blocks: make([]Span, 0, strings.Count(body, "\n\n")+len(headings)+1)}
	hi := 0 // next heading of headings (in line order)
	section := ""
	var fence string
	blockStart := 0 // 0: no block open
	line := bodyLine - 1
	endBlock := func(last int) {
		if blockStart == 0 {
			return
		}
		if len(st.blocks) < maxBlocks {
			st.blocks = append(st.blocks, Span{blockStart, last})
		} else {
			st.blocks[len(st.blocks)-1].End = last
		}
		blockStart = 0
	}
	prevHeading := 0
	// A task inside a %% comment %% or an <!-- HTML comment --> is
	// hidden, as Obsidian hides it: not a task.
	inPercent, inHTML := false, false
	for off := 0; off < len(body); {
		text := body[off:]
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text, off = text[:i], off+i+1
		} else {
			off = len(body)
		}
		line++
		text = strings.TrimSuffix(text, "\r")
		for hi < len(headings) && headings[hi].Line <= line {
			section = headings[hi].Text
			hi++
		}
		first := firstNonBlank(text)
		if fence != "" {
			if (first == '`' || first == '~') && isFenceEnd(text, fence) {
				fence = ""
				endBlock(line)
			}
			continue
		}
		if first == '`' || first == '~' {
			if f := FenceOpening(text); f != "" {
				endBlock(line - 1)
				fence, blockStart = f, line
				continue
			}
		}
		switch {
		case first == 0:
			endBlock(line - 1)
		case hi > 0 && headings[hi-1].Line == line:
			endBlock(line - 1)
			blockStart = line
			endBlock(line)
			prevHeading = line
		case prevHeading == line-1 && isSetextUnderline(text) && len(st.blocks) > 0:
			st.blocks[len(st.blocks)-1].End = line
		default:
			if blockStart == 0 {
				blockStart = line
			}
			if hidden := inPercent || inHTML; !hidden && (first == '-' || first == '*' || first == '+' || first == '>' || first >= '0' && first <= '9') {
				if t, ok := parseTask(text); ok {
					if len(st.tasks) < MaxTasks {
						t.Line, t.Section = line, section
						st.tasks = append(st.tasks, t)
					} else {
						st.cut = true
					}
				}
			}
		}
		inPercent, inHTML = inComment(text, inPercent, inHTML)
	}
	endBlock(line) // a block, or a code block, running to the end
	st.sections = sectionsOf(headings, bodyLine, line)
	return st
}

// firstNonBlank is the first byte of line that is not a space or a tab,
// 0 for a blank line.
func firstNonBlank(line string) byte {
	for i := 0; i < len(line); i++ {
		if c := line[i]; c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\v' {
			return c
		}
	}
	return 0
}

// inComment says whether the line after text starts inside a %% comment
// or an HTML comment, given whether text did.
func inComment(text string, inPercent, inHTML bool) (bool, bool) {
	if strings.IndexAny(text, "%<>") < 0 {
		return inPercent, inHTML
	}
	for i := 0; i < len(text); {
		switch {
		case inHTML:
			j := strings.Index(text[i:], "-->")
			if j < 0 {
				return inPercent, true
			}
			inHTML, i = false, i+j+3
		case inPercent:
			j := strings.Index(text[i:], "%%")
			if j < 0 {
				return true, inHTML
			}
			inPercent, i = false, i+j+2
		case strings.HasPrefix(text[i:], "%%"):
			inPercent, i = true, i+2
		case strings.HasPrefix(text[i:], "<!--"):
			inHTML, i = true, i+4
		default:
			i++
		}
	}
	return inPercent, inHTML
}

// sectionsOf splits the lines first to last at the headings.
func sectionsOf(headings []Heading, first, last int) []Section {
	out := make([]Section, 0, len(headings)+1)
	start, level := first, 0
	for _, h := range headings {
		if h.Line < start || h.Line > last {
			continue
		}
		if h.Line > start {
			out = append(out, Section{Span{start, h.Line - 1}, level})
		}
		start, level = h.Line, h.Level
	}
	if start <= last && (level > 0 || len(out) == 0 || start < last) {
		out = append(out, Section{Span{start, last}, level})
	}
	return out
}

// isFenceEnd reports whether line closes a code block opened by fence.
func isFenceEnd(line, fence string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	n := 0
	for n < len(t) && t[n] == fence[0] {
		n++
	}
	return n >= len(fence) && strings.TrimSpace(t[n:]) == ""
}

func isSetextUnderline(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && (strings.Trim(t, "=") == "" || strings.Trim(t, "-") == "")
}

// parseTask reads a task line: optional indentation and blockquote marks,
// a list marker, a checkbox, the text.
func parseTask(line string) (Task, bool) {
	s := strings.TrimLeft(line, " \t")
	for strings.HasPrefix(s, ">") {
		s = strings.TrimLeft(s[1:], " \t")
	}
	switch {
	case s == "":
		return Task{}, false
	case s[0] == '-' || s[0] == '*' || s[0] == '+':
		s = s[1:]
	case s[0] >= '0' && s[0] <= '9':
		i := 0
		for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == len(s) || s[i] != '.' && s[i] != ')' {
			return Task{}, false
		}
		s = s[i+1:]
	default:
		return Task{}, false
	}
	if s == "" || s[0] != ' ' && s[0] != '\t' {
		return Task{}, false
	}
	s = strings.TrimLeft(s, " \t")
	if len(s) < 3 || s[0] != '[' {
		return Task{}, false
	}
	r, n := utf8.DecodeRuneInString(s[1:])
	if r == utf8.RuneError || 1+n >= len(s) || s[1+n] != ']' || r == '\t' || r == '\n' {
		return Task{}, false
	}
	rest := s[2+n:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return Task{}, false
	}
	status := string(r)
	switch r { // the usual ones without an allocation
	case ' ':
		status = " "
	case 'x':
		status = "x"
	}
	t := Task{Status: status, Done: r != ' ', Text: strings.TrimSpace(rest)}
	taskDates(&t)
	return t, true
}

// Task dates: the Tasks plugin's signifiers and Dataview's inline fields.
var (
	reTaskEmoji = regexp.MustCompile(`(📅|📆|🗓️?|⏳|⌛|🛫|✅)\s*(\d{4}-\d{2}-\d{2})`)
	reTaskField = regexp.MustCompile(`[\[(]\s*(due|scheduled|start|completion|done)\s*::\s*(\d{4}-\d{2}-\d{2})[^\])]*[\])]`)
)

func taskDates(t *Task) {
	if !strings.ContainsAny(t.Text, "0123456789") {
		return
	}
	set := func(kind, date string) {
		var p *string
		switch kind {
		case "📅", "📆", "🗓", "🗓️", "due":
			p = &t.Due
		case "⏳", "⌛", "scheduled":
			p = &t.Scheduled
		case "🛫", "start":
			p = &t.Start
		case "✅", "completion", "done":
			p = &t.Completed
		}
		if p != nil && *p == "" {
			*p = date
		}
	}
	for _, m := range reTaskEmoji.FindAllStringSubmatch(t.Text, -1) {
		set(m[1], m[2])
	}
	if strings.Contains(t.Text, "::") {
		for _, m := range reTaskField.FindAllStringSubmatch(t.Text, -1) {
			set(m[1], m[2])
		}
	}
}

// ParseDate reads a date or a date and time as notes write them in
// frontmatter (2026-03-12, 2026-03-12T10:30, 2026/03/12...), in the local
// time zone when it has none.
func ParseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 10 || s[4] != '-' && s[4] != '/' && s[4] != '.' || !isDigits(s[:4]) {
		return time.Time{}, false
	}
	return parseDateValue(s)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
