package search

import (
	"testing"
	"time"

	"github.com/olebedev/when"
)

// TestWhenDayAsTheLibraryParser checks that whenDay reads every expression
// as olebedev/when's own English parser does (the test binary may link the
// library's root package; the program does not).
func TestWhenDayAsTheLibraryParser(t *testing.T) {
	now := time.Date(2026, 11, 26, 15, 4, 0, 0, time.UTC)
	for _, expr := range []string{
		"next tuesday", "last friday", "3 days ago", "in 2 weeks", "march 5th", "5th of march",
		"tomorrow", "yesterday", "the day after tomorrow",
		"10 am tomorrow", "monday at 5pm", "2 hours ago", "december 24", "no date here", "",
	} {
		t.Run(expr, func(t *testing.T) {
			want, err := when.EN.Parse(expr, now)
			if err != nil {
				t.Fatalf("the library: %v", err)
			}
			got, ok := whenDay(expr, now)
			if readable := expr != "no date here" && expr != ""; ok != readable {
				t.Errorf("whenDay read it: %v, want %v", ok, readable)
			}
			if ok != (want != nil) {
				t.Fatalf("whenDay read it: %v, the library: %v", ok, want != nil)
			}
			if ok && !got.Equal(want.Time) {
				t.Errorf("whenDay = %v, the library %v", got, want.Time)
			}
		})
	}
}
