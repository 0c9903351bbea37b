package search

import (
	"testing"
	"time"
)

func TestTimeRanges(t *testing.T) {
	now := time.Date(2026, 3, 18, 15, 4, 5, 0, time.UTC) // a Wednesday
	day := func(s string) string { return s }
	tests := []struct{ expr, want string }{
		{"today", "2026-03-18 to 2026-03-18"},
		{"yesterday", "2026-03-17 to 2026-03-17"},
		{"last week", "2026-03-09 to 2026-03-15"},
		{"this week", "2026-03-16 to 2026-03-22"},
		{"last month", "2026-02-01 to 2026-02-28"},
		{"2026-03", "2026-03-01 to 2026-03-31"},
		{"2025", "2025-01-01 to 2025-12-31"},
		{"2026-03-14", "2026-03-14 to 2026-03-14"},
		{"last 7 days", "2026-03-12 to 2026-03-18"},
		{"in March", "2026-03-01 to 2026-03-31"},
		{"April", "2025-04-01 to 2025-04-30"},
		{"december 2025", "2025-12-01 to 2025-12-31"},
	}
	for _, tt := range tests {
		r, err := ParseTimeRange(tt.expr, now)
		if err != nil {
			t.Errorf("%q: %v", tt.expr, err)
			continue
		}
		if r.Description != day(tt.want) {
			t.Errorf("%q = %s, want %s", tt.expr, r.Description, tt.want)
		}
		if r.EndTime <= r.StartTime {
			t.Errorf("%q: empty range", tt.expr)
		}
	}
	if _, err := ParseTimeRange("when pigs fly", now); err == nil {
		t.Error("nonsense accepted")
	}
	if _, err := ParseTimeRange("2026-13", now); err == nil {
		t.Error("month 13 accepted")
	}
}
