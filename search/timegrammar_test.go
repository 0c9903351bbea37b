package search

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTimeExpressions reads the expressions people use, with the clock
// pinned to Wednesday 2026-03-18 15:04 in a zone far from UTC, so a range
// computed in UTC by mistake shows.
func TestTimeExpressions(t *testing.T) {
	zone := time.FixedZone("UTC+9", 9*3600)
	now := time.Date(2026, 3, 18, 15, 4, 5, 0, zone)
	tests := []struct {
		expr, want string
		unsure     bool
	}{
		// simple periods
		{expr: "today", want: "2026-03-18 to 2026-03-18"},
		{expr: "yesterday", want: "2026-03-17 to 2026-03-17"},
		{expr: "this week", want: "2026-03-16 to 2026-03-22"},
		{expr: "last week", want: "2026-03-09 to 2026-03-15"},
		{expr: "next week", want: "2026-03-23 to 2026-03-29"},
		{expr: "this month", want: "2026-03-01 to 2026-03-31"},
		{expr: "last month", want: "2026-02-01 to 2026-02-28"},
		{expr: "next month", want: "2026-04-01 to 2026-04-30"},
		{expr: "last year", want: "2025-01-01 to 2025-12-31"},
		{expr: "past 7 days", want: "2026-03-12 to 2026-03-18"},
		{expr: "last 2 weeks", want: "2026-03-05 to 2026-03-18"},
		{expr: "earlier this week", want: "2026-03-16 to 2026-03-18"},
		{expr: "this month so far", want: "2026-03-01 to 2026-03-18"},
		{expr: "this morning", want: "2026-03-18 to 2026-03-18"},
		{expr: "last night", want: "2026-03-17 to 2026-03-18"},
		// dates and months
		{expr: "2026-03-12", want: "2026-03-12 to 2026-03-12"},
		{expr: "2026-02", want: "2026-02-01 to 2026-02-28"},
		{expr: "in March", want: "2026-03-01 to 2026-03-31"},
		{expr: "April", want: "2025-04-01 to 2025-04-30"},
		{expr: "march 2025", want: "2025-03-01 to 2025-03-31"},
		{expr: "on March 12", want: "2026-03-12 to 2026-03-12"},
		{expr: "March 12th", want: "2026-03-12 to 2026-03-12"},
		{expr: "12 March", want: "2026-03-12 to 2026-03-12"},
		{expr: "the 3rd of march", want: "2026-03-03 to 2026-03-03"},
		{expr: "Dec 24, 2025", want: "2025-12-24 to 2025-12-24"},
		{expr: "November 20", want: "2025-11-20 to 2025-11-20"},
		{expr: "in 2025", want: "2025-01-01 to 2025-12-31"},
		// weekdays
		{expr: "monday", want: "2026-03-16 to 2026-03-16"},
		{expr: "on Wednesday", want: "2026-03-18 to 2026-03-18"},
		{expr: "last wednesday", want: "2026-03-11 to 2026-03-11"},
		{expr: "last friday", want: "2026-03-13 to 2026-03-13"},
		{expr: "this friday", want: "2026-03-20 to 2026-03-20"},
		{expr: "next monday", want: "2026-03-23 to 2026-03-23"},
		// spans
		{expr: "between 2026-03-02 and 2026-03-05", want: "2026-03-02 to 2026-03-05"},
		{expr: "between March 2 and March 5", want: "2026-03-02 to 2026-03-05"},
		{expr: "from 2026-03-02 to 2026-03-08", want: "2026-03-02 to 2026-03-08"},
		{expr: "from Monday to Wednesday", want: "2026-03-16 to 2026-03-18"},
		{expr: "monday to wednesday", want: "2026-03-16 to 2026-03-18"},
		{expr: "from last monday to friday", want: "2026-03-16 to 2026-03-20"},
		{expr: "March 2 - March 6", want: "2026-03-02 to 2026-03-06"},
		{expr: "from December 28 to January 3", want: "2025-12-28 to 2026-01-03"},
		{expr: "between january and march", want: "2026-01-01 to 2026-03-31"},
		{expr: "from 2025-11 to 2026-01", want: "2025-11-01 to 2026-01-31"},
		{expr: "since Monday", want: "2026-03-16 to 2026-03-18"},
		{expr: "since March 1", want: "2026-03-01 to 2026-03-18"},
		{expr: "since last week", want: "2026-03-09 to 2026-03-18"},
		{expr: "since 2026-02", want: "2026-02-01 to 2026-03-18"},
		{expr: "first week of March", want: "2026-03-01 to 2026-03-07"},
		{expr: "the second week of march 2026", want: "2026-03-08 to 2026-03-14"},
		{expr: "last week of February", want: "2026-02-22 to 2026-02-28"},
		{expr: "first week of December 2025", want: "2025-12-01 to 2025-12-07"},
		{expr: "early March", want: "2026-03-01 to 2026-03-10"},
		{expr: "mid-february", want: "2026-02-11 to 2026-02-20"},
		{expr: "late january 2026", want: "2026-01-21 to 2026-01-31"},
		// weekends
		{expr: "last weekend", want: "2026-03-14 to 2026-03-15"},
		{expr: "the weekend", want: "2026-03-14 to 2026-03-15"},
		{expr: "this weekend", want: "2026-03-21 to 2026-03-22"},
		{expr: "next weekend", want: "2026-03-28 to 2026-03-29"},
		// quarters
		{expr: "Q3 2025", want: "2025-07-01 to 2025-09-30"},
		{expr: "q1", want: "2026-01-01 to 2026-03-31"},
		{expr: "Q4", want: "2025-10-01 to 2025-12-31"},
		{expr: "the second quarter of 2025", want: "2025-04-01 to 2025-06-30"},
		{expr: "this quarter", want: "2026-01-01 to 2026-03-31"},
		{expr: "last quarter", want: "2025-10-01 to 2025-12-31"},
		// unsure readings say so
		{expr: "over the holidays", want: "2025-12-20 to 2026-01-06", unsure: true},
		{expr: "christmas 2024", want: "2024-12-20 to 2025-01-06", unsure: true},
		{expr: "last summer", want: "2025-06-01 to 2025-08-31", unsure: true},
		{expr: "winter", want: "2025-12-01 to 2026-02-28", unsure: true},
	}
	if len(tests) < 50 {
		t.Fatalf("only %d expressions", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			r, err := ParseTimeRange(tt.expr, now)
			if err != nil {
				t.Fatal(err)
			}
			if r.Description != tt.want {
				t.Errorf("%q = %s, want %s", tt.expr, r.Description, tt.want)
			}
			start := time.UnixMilli(r.StartTime).In(zone)
			if start.Hour() != 0 || start.Minute() != 0 {
				t.Errorf("%q starts at %s, not at midnight in the zone", tt.expr, start)
			}
			if (r.Note != "") != tt.unsure {
				t.Errorf("%q note = %q, want a note: %v", tt.expr, r.Note, tt.unsure)
			}
		})
	}
	for _, bad := range []string{"when pigs fly", "between lunch and dinner", "from 2026 to 2024"} {
		if r, err := ParseTimeRange(bad, now); err == nil {
			t.Errorf("%q accepted as %s", bad, r.Description)
		}
	}
	if r, _ := ParseTimeRange("over the holidays", now); !strings.Contains(r.Note, "December 20") {
		t.Errorf("holidays note = %q", r.Note)
	}
}

// TestTimeRangeIgnoresSharedMTimes: in a vault written to disk at once (a
// clone, a sync) every note has a recent mtime, so a time range keeps only
// the notes dated in it; once mtimes differ they count again.
func TestTimeRangeIgnoresSharedMTimes(t *testing.T) {
	files := map[string]string{"journal/2024-03-01.md": "Planted the tomatoes.\n"}
	for i := 0; i < 25; i++ {
		files["notes/n"+strconv.Itoa(i)+".md"] = "tomatoes and other things\n"
	}
	dir := writeVault(t, files)
	ix := openIndex(t, dir, "")
	week := Request{Query: "tomatoes", From: time.Now().AddDate(0, 0, -7), To: time.Now().Add(time.Hour)}
	if got := paths(search(t, ix, week)); len(got) != 0 {
		t.Errorf("shared mtimes matched the range: %v", got)
	}
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.Local)
	if got := paths(search(t, ix, Request{Query: "tomatoes", From: day, To: day.AddDate(0, 0, 1)})); len(got) != 1 {
		t.Errorf("the dated note: %v", got)
	}
	// The same notes with mtimes spread over a year: now they say when
	// notes changed.
	dir = writeVault(t, files)
	for i := 0; i < 25; i++ {
		at := time.Now().AddDate(0, 0, -15*i)
		if err := os.Chtimes(filepath.Join(dir, "notes", "n"+strconv.Itoa(i)+".md"), at, at); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.Local)
	if err := os.Chtimes(filepath.Join(dir, "journal", "2024-03-01.md"), old, old); err != nil {
		t.Fatal(err)
	}
	ix = openIndex(t, dir, "")
	if got := paths(search(t, ix, week)); len(got) != 1 || got[0] != "notes/n0.md" {
		t.Errorf("meaningful mtimes: %v", got)
	}
}
