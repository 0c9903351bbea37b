package offline

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/vault-agent/vault-agent/search"
)

// Questions only about a period ("what did I do last week?"): the notes of
// the range are listed and read, and the answer goes day by day.

// timeFillers are the words of a question about a period that say nothing
// of a topic ("what did I do", "my journal", "what happened").
var timeFillers = toSet(`do did done doing happen happened happening work worked working journal journals diary daily
dailies log logs entry entries day days write wrote written writing go went up going recap review plan plans planned
activities activity note notes`)

// maxDayNotes caps the notes of a period read for a time question.
const maxDayNotes = 7

// timeOnly reports whether the goal is only about a period: it names one,
// and no other word names a topic.
func (st *convState) timeOnly() bool {
	if st.timeExpr == "" || len(st.refs) > 0 {
		return false
	}
	for _, w := range st.terms.all() {
		if !timeFillers[w] {
			return false
		}
	}
	return true
}

// listQuery lists every note: with a time range, the notes of the range,
// newest first.
const listQuery = "path:/"

var reDateName = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// dayOf is the day a search result is about: its own date, else its mtime,
// in the local zone.
func dayOf(h search.Result) time.Time {
	ms := h.Date
	if ms == 0 {
		ms = h.MTime
	}
	t := time.UnixMilli(ms)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local)
}

// timeReads picks the notes of the period to read: in date order, daily
// notes (named by their date) first within a day.
func (st *convState) timeReads() []search.Result {
	var hits []search.Result
	for _, h := range st.hits() {
		if !st.readAsked[h.Path] {
			hits = append(hits, h)
		}
	}
	sortByDay(hits)
	if len(hits) > maxDayNotes {
		hits = hits[:maxDayNotes]
	}
	return hits
}

func sortByDay(hits []search.Result) {
	sort.SliceStable(hits, func(i, j int) bool {
		di, dj := dayOf(hits[i]), dayOf(hits[j])
		if !di.Equal(dj) {
			return di.Before(dj)
		}
		return reDateName.MatchString(noteName(hits[i].Path)) && !reDateName.MatchString(noteName(hits[j].Path))
	})
}

// timeAnswer goes through the notes of the period day by day, quoting the
// opening sentences of each note.
func (st *convState) timeAnswer() string {
	period := st.timeExpr
	if st.timeRange != nil {
		period = st.timeRange.Description
		if !strings.ContainsAny(st.timeExpr, "0123456789") {
			period = fmt.Sprintf("%s (%s)", st.timeExpr, st.timeRange.Description)
		}
	}
	var unsure string
	if st.timeRange != nil && st.timeRange.Note != "" {
		unsure = "\n\nNote: " + st.timeRange.Note + "."
	}
	hitOf := map[string]search.Result{}
	for _, h := range st.hits() {
		if _, ok := hitOf[h.Path]; !ok {
			hitOf[h.Path] = h
		}
	}
	srcs := st.sources()
	var notes []search.Result
	byPath := map[string][]int{}
	for i, s := range srcs {
		h, ok := hitOf[s.path]
		if !ok {
			h = search.Result{Path: s.path, Title: s.title}
		}
		if _, seen := byPath[s.path]; !seen {
			notes = append(notes, h)
		}
		byPath[s.path] = append(byPath[s.path], i)
	}
	if len(notes) == 0 {
		return fmt.Sprintf("I found no notes dated in %s.%s", period, unsure)
	}
	sortByDay(notes)
	days := map[time.Time]bool{}
	for _, n := range notes {
		days[dayOf(n)] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your notes from %s: %s over %s.\n", period, plural(len(notes), "note"), plural(len(days), "day"))
	var cited []string
	var last time.Time
	for _, n := range notes {
		d := dayOf(n)
		if !d.Equal(last) {
			fmt.Fprintf(&b, "\n%s\n", d.Format("Monday, January 2, 2006"))
			last = d
		}
		var sents []sentence
		for _, i := range byPath[n.Path] {
			sents = append(sents, noteSentences(reHighlight.ReplaceAllString(srcs[i].content, ""), "")...)
		}
		c := st.cite(srcs, byPath[n.Path][0])
		cited = append(cited, c)
		if len(sents) == 0 {
			fmt.Fprintf(&b, "- %s %s\n", st.describe(srcs[byPath[n.Path][0]]), c)
			continue
		}
		for _, s := range sents[:min(2, len(sents))] {
			fmt.Fprintf(&b, "- %s %s\n", s.text, c)
		}
	}
	b.WriteString("\nSources: " + strings.Join(cited, ", "))
	b.WriteString(unsure)
	return b.String()
}

// describe names a note that has no sentence to quote.
func (st *convState) describe(s source) string {
	if dir := path.Dir(s.path); dir != "." {
		return s.title + " (in " + dir + "/)"
	}
	return s.title
}
