package search

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The ranges people ask about ("last week", "2026-03", "last 30 days") are
// ranges, while natural-language date libraries return instants. Ranges are
// handled here; anything else that names a day ("next tuesday", "3 days
// ago", "March 5th") falls through to olebedev/when, which is small,
// dependency-free and has the widest English rule set of the Go parsers
// (whenDay).

var (
	reLastN     = regexp.MustCompile(`^(?:last|past|previous)\s+(\d{1,4})\s+(day|week|month|year)s?$`)
	reYear      = regexp.MustCompile(`^(\d{4})$`)
	reYearMonth = regexp.MustCompile(`^(\d{4})-(\d{1,2})$`)
	reDate      = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})$`)
	reMonthName = regexp.MustCompile(`^(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)(?:\s+(\d{4}))?$`)
)

var monthNames = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
	"sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

// DateRange is the span of days a time expression names, in epoch
// milliseconds, both ends included: what the agent's getTimeRangeMs tool
// returns, ready for Request.From and Request.To.
type DateRange struct {
	StartTime   int64  `json:"startTime"`
	EndTime     int64  `json:"endTime"`
	Expression  string `json:"expression"`
	Description string `json:"description"`
	// Note says how an unsure expression was read ("the holidays").
	Note string `json:"note,omitempty"`
}

// ParseTimeRange turns a time expression ("last week", "yesterday",
// "2026-03", "last 30 days", "in March", "next tuesday") into a range
// [start, end] in epoch milliseconds, relative to now (in now's location).
func ParseTimeRange(expr string, now time.Time) (*DateRange, error) {
	e := strings.Join(strings.Fields(strings.ToLower(strings.TrimSpace(expr))), " ")
	e = strings.TrimRight(e, "?.!,")
	if !reBetween.MatchString(e) {
		for _, p := range []string{"in ", "during ", "from ", "on ", "for ", "over the ", "of "} {
			e = strings.TrimPrefix(e, p)
		}
	}
	e = strings.TrimPrefix(e, "the ")
	day := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location()) }
	today := day(now)
	weekStart := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7)) // Monday
	monthStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, now.Location())
	yearStart := time.Date(now.Year(), 1, 1, 0, 0, 0, 0, now.Location())

	var start, end time.Time
	var note string
	if s, en, n, ok := parseSpan(e, now); ok {
		start, end, note = s, en, n
		e = "" // handled
	}
	switch e {
	case "today":
		start, end = today, today.AddDate(0, 0, 1)
	case "yesterday":
		start, end = today.AddDate(0, 0, -1), today
	case "tomorrow":
		start, end = today.AddDate(0, 0, 1), today.AddDate(0, 0, 2)
	case "this week":
		start, end = weekStart, weekStart.AddDate(0, 0, 7)
	case "last week", "previous week":
		start, end = weekStart.AddDate(0, 0, -7), weekStart
	case "past week":
		start, end = today.AddDate(0, 0, -7), today.AddDate(0, 0, 1)
	case "this month":
		start, end = monthStart, monthStart.AddDate(0, 1, 0)
	case "last month", "previous month":
		start, end = monthStart.AddDate(0, -1, 0), monthStart
	case "this year":
		start, end = yearStart, yearStart.AddDate(1, 0, 0)
	case "last year", "previous year":
		start, end = yearStart.AddDate(-1, 0, 0), yearStart
	}
	if start.IsZero() {
		switch {
		case reLastN.MatchString(e):
			m := reLastN.FindStringSubmatch(e)
			n, _ := strconv.Atoi(m[1])
			end = today.AddDate(0, 0, 1)
			switch m[2] {
			case "day":
				start = today.AddDate(0, 0, -n+1)
			case "week":
				start = today.AddDate(0, 0, -7*n+1)
			case "month":
				start = today.AddDate(0, -n, 1)
			case "year":
				start = today.AddDate(-n, 0, 1)
			}
		case reDate.MatchString(e):
			m := reDate.FindStringSubmatch(e)
			y, _ := strconv.Atoi(m[1])
			mo, _ := strconv.Atoi(m[2])
			d, _ := strconv.Atoi(m[3])
			if mo < 1 || mo > 12 || d < 1 || d > 31 {
				return nil, fmt.Errorf("%q is not a valid date", expr)
			}
			start = time.Date(y, time.Month(mo), d, 0, 0, 0, 0, now.Location())
			end = start.AddDate(0, 0, 1)
		case reYearMonth.MatchString(e):
			m := reYearMonth.FindStringSubmatch(e)
			y, _ := strconv.Atoi(m[1])
			mo, _ := strconv.Atoi(m[2])
			if mo < 1 || mo > 12 {
				return nil, fmt.Errorf("%q is not a valid month", expr)
			}
			start = time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, now.Location())
			end = start.AddDate(0, 1, 0)
		case reYear.MatchString(e):
			y, _ := strconv.Atoi(e)
			start = time.Date(y, 1, 1, 0, 0, 0, 0, now.Location())
			end = start.AddDate(1, 0, 0)
		case reMonthName.MatchString(e):
			m := reMonthName.FindStringSubmatch(e)
			mo := monthNames[m[1]]
			y := now.Year()
			if m[2] != "" {
				y, _ = strconv.Atoi(m[2])
			} else if mo > now.Month() {
				y-- // "in March" said in February means last March
			}
			start = time.Date(y, mo, 1, 0, 0, 0, 0, now.Location())
			end = start.AddDate(0, 1, 0)
		default:
			t, ok := whenDay(e, now)
			if !ok {
				return nil, fmt.Errorf("could not understand the time expression %q; try \"today\", \"yesterday\", \"last week\", \"this month\", \"last 30 days\", \"2026-03\" or \"2026-03-14\"", expr)
			}
			start = day(t)
			end = start.AddDate(0, 0, 1)
		}
	}
	end = end.Add(-time.Millisecond)
	return &DateRange{
		StartTime:   start.UnixMilli(),
		EndTime:     end.UnixMilli(),
		Expression:  expr,
		Description: fmt.Sprintf("%s to %s", start.Format("2006-01-02"), end.Format("2006-01-02")),
		Note:        note,
	}, nil
}
