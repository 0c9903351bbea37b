package vault

import (
	"testing"
	"time"
)

func TestNoteDate(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.Local) }
	tests := []struct {
		name  string
		path  string
		props map[string]any
		want  time.Time
	}{
		{"daily note", "journal/2026-03-12.md", nil, day(2026, 3, 12)},
		{"dated meeting", "work/2026-04-02 Incident Review.md", nil, day(2026, 4, 2)},
		{"underscores", "2026_03_12.md", nil, day(2026, 3, 12)},
		{"dots", "2026.03.12 notes.md", nil, day(2026, 3, 12)},
		{"no date", "ideas/Garden.md", nil, time.Time{}},
		{"digits that are not a date", "20260312.md", nil, time.Time{}},
		{"not a calendar day", "2026-13-40.md", nil, time.Time{}},
		{"a longer number", "2026-03-123.md", nil, time.Time{}},
		{"frontmatter date wins over the name", "journal/2026-03-12.md", map[string]any{"date": "2025-01-02"}, day(2025, 1, 2)},
		{"created", "x.md", map[string]any{"created": "2025-01-02 09:30"}, time.Date(2025, 1, 2, 9, 30, 0, 0, time.Local)},
		{"with zone", "x.md", map[string]any{"date": "2025-01-02T09:30:00Z"}, time.Date(2025, 1, 2, 9, 30, 0, 0, time.UTC)},
		{"a time.Time", "x.md", map[string]any{"date": day(2024, 2, 29)}, day(2024, 2, 29)},
		{"unparsable date falls back to the name", "2026-03-12.md", map[string]any{"date": "someday"}, day(2026, 3, 12)},
		{"a list is not a date", "x.md", map[string]any{"date": []any{"2025-01-02"}}, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := noteDate(tt.path, tt.props); !got.Equal(tt.want) {
				t.Errorf("noteDate(%q, %v) = %v, want %v", tt.path, tt.props, got, tt.want)
			}
		})
	}
}
