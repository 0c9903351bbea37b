package search

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The range grammar: the spans people say that name more than one day
// ("between A and B", "from Monday to Wednesday", "first week of March",
// "last weekend", "Q3 2025", "since Monday", "over the holidays").
// Single days and the simple periods are left to ParseTimeRange's own
// rules and to olebedev/when, which knows instants, not spans.

const monthPattern = `january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec`

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "sun": time.Sunday, "monday": time.Monday, "mon": time.Monday,
	"tuesday": time.Tuesday, "tue": time.Tuesday, "tues": time.Tuesday, "wednesday": time.Wednesday, "wed": time.Wednesday,
	"thursday": time.Thursday, "thu": time.Thursday, "thurs": time.Thursday, "friday": time.Friday, "fri": time.Friday,
	"saturday": time.Saturday, "sat": time.Saturday,
}

var (
	reBetween    = regexp.MustCompile(`^(?:between|from)\s+(.+?)\s+(?:and|to|until|till|through|thru|-|–)\s+(.+)$`)
	reSpan       = regexp.MustCompile(`^(.+?)\s+(?:to|until|till|through|thru|-|–)\s+(.+)$`)
	reSince      = regexp.MustCompile(`^(?:since|after)\s+(.+)$`)
	reNthWeek    = regexp.MustCompile(`^(?:the\s+)?(first|1st|second|2nd|third|3rd|fourth|4th|last)\s+week\s+(?:of|in)\s+(.+)$`)
	rePartMonth  = regexp.MustCompile(`^(early|mid|late|end of|beginning of|start of)[\s-]+(.+)$`)
	reWeekend    = regexp.MustCompile(`^(?:(last|this|past|previous|next)\s+|the\s+)?weekend$`)
	reQuarter    = regexp.MustCompile(`^q([1-4])(?:\s+(?:of\s+)?(\d{4}))?$`)
	reQuarterNth = regexp.MustCompile(`^(?:the\s+)?(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter(?:\s+(?:of\s+)?(\d{4}))?$`)
	reRelQuarter = regexp.MustCompile(`^(this|last|previous|next)\s+quarter$`)
	reHolidays   = regexp.MustCompile(`^(?:over\s+|during\s+)?(?:the\s+)?(?:christmas\s+|winter\s+|xmas\s+)?(?:holidays|holiday season|christmas|xmas)(?:\s+(\d{4}))?$`)
	reSeason     = regexp.MustCompile(`^(?:over\s+|during\s+)?(?:the\s+|this\s+|last\s+)?(spring|summer|autumn|fall|winter)(?:\s+(\d{4}))?$`)
	reWeekday    = regexp.MustCompile(`^(?:on\s+)?(last|this|past|previous|next)?\s*(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thurs|fri|sat|sun)$`)
	reMonthDay   = regexp.MustCompile(`^(?:on\s+)?(?:the\s+)?(?:(` + monthPattern + `)\.?\s+(\d{1,2})(?:st|nd|rd|th)?|(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(` + monthPattern + `)\.?)(?:,?\s+(\d{4}))?$`)
	reEarlier    = regexp.MustCompile(`^(?:earlier|so far)\s+this\s+(week|month|year)$|^this\s+(week|month|year)\s+so\s+far$`)
	reNextPeriod = regexp.MustCompile(`^next\s+(week|month|year)$`)
	reDayParts   = regexp.MustCompile(`^(?:this\s+(?:morning|afternoon|evening)|tonight|earlier today|last night)$`)
)

var nth = map[string]int{"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1}

// parseSpan parses e (lower-cased, blanks collapsed) with the range
// grammar: the first day and the day after the last, and a note when the
// reading is a guess. ok is false when e is not a span this grammar knows.
func parseSpan(e string, now time.Time) (start, end time.Time, note string, ok bool) {
	loc := now.Location()
	today := dayOf(now)
	switch {
	case reBetween.MatchString(e):
		m := reBetween.FindStringSubmatch(e)
		return joinEnds(m[1], m[2], now)
	case reSince.MatchString(e):
		m := reSince.FindStringSubmatch(e)
		s, _, n, err := rangeOf(m[1], now)
		if err != nil {
			return
		}
		return s, today.AddDate(0, 0, 1), n, true
	case reNthWeek.MatchString(e):
		m := reNthWeek.FindStringSubmatch(e)
		ms, me, n, err := rangeOf(m[2], now)
		if err != nil || me.Sub(ms) < 27*24*time.Hour {
			return
		}
		if k := nth[m[1]]; k > 0 {
			start = ms.AddDate(0, 0, 7*(k-1))
			return start, start.AddDate(0, 0, 7), n, true
		}
		return me.AddDate(0, 0, -7), me, n, true
	case rePartMonth.MatchString(e):
		m := rePartMonth.FindStringSubmatch(e)
		ms, me, n, err := rangeOf(m[2], now)
		if err != nil || me.Sub(ms) < 27*24*time.Hour || me.Sub(ms) > 32*24*time.Hour {
			return
		}
		switch m[1] {
		case "early", "beginning of", "start of":
			return ms, ms.AddDate(0, 0, 10), n, true
		case "mid":
			return ms.AddDate(0, 0, 10), ms.AddDate(0, 0, 20), n, true
		default:
			return ms.AddDate(0, 0, 20), me, n, true
		}
	case reWeekend.MatchString(e):
		m := reWeekend.FindStringSubmatch(e)
		// The Saturday of this week (weeks start on Monday).
		sat := weekStartOf(today).AddDate(0, 0, 5)
		switch m[1] {
		case "this":
		case "next":
			sat = sat.AddDate(0, 0, 7)
		case "":
			if today.Before(sat) {
				sat = sat.AddDate(0, 0, -7) // "the weekend" on a weekday is the one just gone
			}
		default:
			sat = sat.AddDate(0, 0, -7)
		}
		return sat, sat.AddDate(0, 0, 2), "", true
	case reQuarter.MatchString(e), reQuarterNth.MatchString(e):
		m := reQuarter.FindStringSubmatch(e)
		q := 0
		if m == nil {
			m = reQuarterNth.FindStringSubmatch(e)
			q = nth[m[1]]
		} else {
			q, _ = strconv.Atoi(m[1])
		}
		y := now.Year()
		if m[2] != "" {
			y, _ = strconv.Atoi(m[2])
		} else if time.Month(3*q-2) > now.Month() {
			y-- // "Q4" said in May is last year's
		}
		start = time.Date(y, time.Month(3*q-2), 1, 0, 0, 0, 0, loc)
		return start, start.AddDate(0, 3, 0), "", true
	case reRelQuarter.MatchString(e):
		m := reRelQuarter.FindStringSubmatch(e)
		start = time.Date(now.Year(), time.Month((int(now.Month())-1)/3*3+1), 1, 0, 0, 0, 0, loc)
		switch m[1] {
		case "last", "previous":
			start = start.AddDate(0, -3, 0)
		case "next":
			start = start.AddDate(0, 3, 0)
		}
		return start, start.AddDate(0, 3, 0), "", true
	case reHolidays.MatchString(e):
		m := reHolidays.FindStringSubmatch(e)
		y := now.Year()
		if m[1] != "" {
			y, _ = strconv.Atoi(m[1])
		} else if today.Before(time.Date(y, 12, 20, 0, 0, 0, 0, loc)) {
			y-- // the last holidays that have begun
		}
		start = time.Date(y, 12, 20, 0, 0, 0, 0, loc)
		return start, time.Date(y+1, 1, 7, 0, 0, 0, 0, loc), `"the holidays" is read as the year-end holidays, December 20 to January 6; give dates if you meant others`, true
	case reSeason.MatchString(e):
		m := reSeason.FindStringSubmatch(e)
		first := map[string]time.Month{"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}[m[1]]
		y := now.Year()
		if m[2] != "" {
			y, _ = strconv.Atoi(m[2])
		} else if time.Date(y, first, 1, 0, 0, 0, 0, loc).After(today) || strings.HasPrefix(e, "last ") {
			y--
		}
		start = time.Date(y, first, 1, 0, 0, 0, 0, loc)
		return start, start.AddDate(0, 3, 0), "seasons are read as the northern meteorological ones (" + m[1] + ": " +
			start.Format("January 2") + " to " + start.AddDate(0, 3, -1).Format("January 2") + ")", true
	case reWeekday.MatchString(e):
		m := reWeekday.FindStringSubmatch(e)
		wd := weekdays[m[2]]
		back := (int(today.Weekday()) - int(wd) + 7) % 7 // days since the latest wd, today included
		switch m[1] {
		case "last", "past", "previous":
			if back == 0 {
				back = 7
			}
		case "next":
			back = -((int(wd) - int(today.Weekday()) + 7) % 7)
			if back == 0 {
				back = -7
			}
		case "this":
			// this week's, even when it is still to come
			back = int(today.Sub(weekStartOf(today)).Hours()/24+0.5) - (int(wd)+6)%7
		}
		start = today.AddDate(0, 0, -back)
		return start, start.AddDate(0, 0, 1), "", true
	case reMonthDay.MatchString(e):
		m := reMonthDay.FindStringSubmatch(e)
		mon, day := m[1], m[2]
		if mon == "" {
			mon, day = m[4], m[3]
		}
		d, _ := strconv.Atoi(day)
		if d < 1 || d > 31 {
			return
		}
		y := now.Year()
		if m[5] != "" {
			y, _ = strconv.Atoi(m[5])
		}
		start = time.Date(y, monthNames[mon], d, 0, 0, 0, 0, loc)
		if m[5] == "" && start.After(today) {
			start = start.AddDate(-1, 0, 0) // "March 12" said in February is last March's
		}
		return start, start.AddDate(0, 0, 1), "", true
	case reEarlier.MatchString(e):
		m := reEarlier.FindStringSubmatch(e)
		unit := m[1] + m[2]
		switch unit {
		case "week":
			start = weekStartOf(today)
		case "month":
			start = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
		default:
			start = time.Date(now.Year(), 1, 1, 0, 0, 0, 0, loc)
		}
		return start, today.AddDate(0, 0, 1), "", true
	case reNextPeriod.MatchString(e):
		switch reNextPeriod.FindStringSubmatch(e)[1] {
		case "week":
			start = weekStartOf(today).AddDate(0, 0, 7)
			return start, start.AddDate(0, 0, 7), "", true
		case "month":
			start = time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, loc)
			return start, start.AddDate(0, 1, 0), "", true
		default:
			start = time.Date(now.Year()+1, 1, 1, 0, 0, 0, 0, loc)
			return start, start.AddDate(1, 0, 0), "", true
		}
	case reDayParts.MatchString(e):
		if e == "last night" {
			return today.AddDate(0, 0, -1), today.AddDate(0, 0, 1), "", true
		}
		return today, today.AddDate(0, 0, 1), "", true
	case reSpan.MatchString(e):
		m := reSpan.FindStringSubmatch(e)
		return joinEnds(m[1], m[2], now)
	}
	return
}

// joinEnds is the span from the first day of a to the last day of b. A
// weekday or a day of the month as b is the first one on or after a's
// start ("from Monday to Wednesday"), and an end before the start is moved
// a year on ("December 28 to January 3").
func joinEnds(a, b string, now time.Time) (start, end time.Time, note string, ok bool) {
	s, _, n1, err := rangeOf(a, now)
	if err != nil {
		return
	}
	bs, be, n2, err := rangeOf(b, now)
	if err != nil {
		return
	}
	if wm := reWeekday.FindStringSubmatch(b); wm != nil && wm[1] == "" {
		d := (int(weekdays[wm[2]]) - int(s.Weekday()) + 7) % 7
		bs = s.AddDate(0, 0, d)
		be = bs.AddDate(0, 0, 1)
	}
	for be.Before(s) || be.Equal(s) {
		if !reMonthDay.MatchString(b) && !reMonthName.MatchString(b) {
			return // "2026 to 2024": no span
		}
		bs, be = bs.AddDate(1, 0, 0), be.AddDate(1, 0, 0)
	}
	note = strings.TrimSpace(n1 + " " + n2)
	return s, be, note, true
}

// rangeOf parses one end of a span with every rule: the first day and the
// day after the last.
func rangeOf(e string, now time.Time) (start, end time.Time, note string, err error) {
	r, err := ParseTimeRange(e, now)
	if err != nil {
		return
	}
	start = time.UnixMilli(r.StartTime).In(now.Location())
	end = time.UnixMilli(r.EndTime + 1).In(now.Location())
	return start, end, r.Note, nil
}

func dayOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
}

// weekStartOf is the Monday of day's week.
func weekStartOf(day time.Time) time.Time {
	return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
}
