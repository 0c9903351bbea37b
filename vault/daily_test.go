package vault

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFormatMoment(t *testing.T) {
	day := time.Date(2026, 3, 12, 9, 5, 7, 0, time.Local) // a Thursday
	tests := []struct{ format, want string }{
		{"YYYY-MM-DD", "2026-03-12"},
		{"YYYY/MM-MMMM/YYYY-MM-DD dddd", "2026/03-March/2026-03-12 Thursday"},
		{"DD.MM.YY", "12.03.26"},
		{"ddd, MMM Do YYYY", "Thu, Mar 12th 2026"},
		{"GGGG-[W]WW", "2026-W11"},
		{"gggg-[W]ww", "2026-W11"},
		{"[Daily] YYYY-MM-DD", "Daily 2026-03-12"},
		{"YYYY-[Q]Q", "2026-Q1"},
		{"YYYY-DDDD", "2026-071"},
		{"HH:mm:ss A", "09:05:07 AM"},
		{"D/M", "12/3"},
		{"E e", "4 4"},
	}
	for _, tt := range tests {
		if got := FormatMoment(day, tt.format); got != tt.want {
			t.Errorf("FormatMoment(%q) = %q, want %q", tt.format, got, tt.want)
		}
	}
	// The last days of a year are in the first week of the next.
	newYear := time.Date(2026, 12, 31, 0, 0, 0, 0, time.Local)
	if got := FormatMoment(newYear, "gggg-ww GGGG-WW"); got != "2027-01 2026-53" {
		t.Errorf("week of 2026-12-31 = %q", got)
	}
	for d, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 23: "23rd"} {
		if got := FormatMoment(time.Date(2026, 1, d, 0, 0, 0, 0, time.Local), "Do"); got != want {
			t.Errorf("Do of %d = %q, want %q", d, got, want)
		}
	}
}

func TestDailyNotesSettings(t *testing.T) {
	day := time.Date(2026, 3, 12, 0, 0, 0, 0, time.Local)
	tests := []struct {
		name  string
		files map[string]string
		want  DailyNotes
		path  string
	}{
		{name: "default", want: DailyNotes{Format: "YYYY-MM-DD", Source: "default"}, path: "2026-03-12.md"},
		{name: "daily notes", files: map[string]string{
			".obsidian/daily-notes.json": `{"folder": "/Journal/", "format": "YYYY/MMMM/YYYY-MM-DD", "template": "t"}`,
		}, want: DailyNotes{Folder: "Journal", Format: "YYYY/MMMM/YYYY-MM-DD", Source: "daily-notes"}, path: "Journal/2026/March/2026-03-12.md"},
		{name: "daily notes without a format", files: map[string]string{
			".obsidian/daily-notes.json": `{"folder": "Daily"}`,
		}, want: DailyNotes{Folder: "Daily", Format: "YYYY-MM-DD", Source: "daily-notes"}, path: "Daily/2026-03-12.md"},
		{name: "periodic notes", files: map[string]string{
			".obsidian/daily-notes.json":                 `{"folder": "Daily"}`,
			".obsidian/community-plugins.json":           `["calendar", "periodic-notes"]`,
			".obsidian/plugins/periodic-notes/data.json": `{"daily": {"enabled": true, "folder": "Periodic/Days", "format": "DD-MM-YYYY"}, "weekly": {"enabled": true}}`,
		}, want: DailyNotes{Folder: "Periodic/Days", Format: "DD-MM-YYYY", Source: "periodic-notes"}, path: "Periodic/Days/12-03-2026.md"},
		{name: "periodic notes with daily notes off", files: map[string]string{
			".obsidian/daily-notes.json":                 `{"folder": "Daily"}`,
			".obsidian/community-plugins.json":           `["periodic-notes"]`,
			".obsidian/plugins/periodic-notes/data.json": `{"daily": {"enabled": false, "folder": "P"}}`,
		}, want: DailyNotes{Folder: "Daily", Format: "YYYY-MM-DD", Source: "daily-notes"}, path: "Daily/2026-03-12.md"},
		{name: "periodic notes not enabled", files: map[string]string{
			".obsidian/community-plugins.json":           `["calendar"]`,
			".obsidian/plugins/periodic-notes/data.json": `{"daily": {"enabled": true, "folder": "P"}}`,
		}, want: DailyNotes{Format: "YYYY-MM-DD", Source: "default"}, path: "2026-03-12.md"},
		{name: "broken settings", files: map[string]string{
			".obsidian/daily-notes.json": `{"folder": `,
		}, want: DailyNotes{Format: "YYYY-MM-DD", Source: "default"}, path: "2026-03-12.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, c := range tt.files {
				abs := filepath.Join(dir, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			v, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := v.DailyNotes()
			if got != tt.want {
				t.Errorf("DailyNotes() = %+v, want %+v", got, tt.want)
			}
			if p := got.Path(day); p != tt.path {
				t.Errorf("Path = %q, want %q", p, tt.path)
			}
		})
	}
}
