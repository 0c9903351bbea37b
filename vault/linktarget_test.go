package vault

import (
	"strconv"
	"testing"
)

func TestLinkTarget(t *testing.T) {
	paths := []string{
		"Home.md",
		"Obsidian Sync/Security and privacy.md",
		"Obsidian Publish/Security and privacy.md",
		"a/x/Notes.md", "b/x/Notes.md", "b/y/Notes.md",
		"top/Readme.md", "Readme.md",
		"kb/Unique Note.md",
		"Case/home.MD",
	}
	tests := []struct{ p, want string }{
		{"kb/Unique Note.md", "Unique Note"},
		{"Obsidian Sync/Security and privacy.md", "Obsidian Sync/Security and privacy"},
		{"a/x/Notes.md", "a/x/Notes"},
		{"b/y/Notes.md", "y/Notes"},
		{"top/Readme.md", "top/Readme"},
		{"Readme.md", "Readme"}, // the exact path is the only note at it
		{"Home.md", "Home"},
		{"Case/home.MD", "Case/home"},
	}
	for _, tt := range tests {
		t.Run(tt.p, func(t *testing.T) {
			got := LinkTarget(tt.p, paths)
			if got != tt.want {
				t.Fatalf("LinkTarget(%q) = %q, want %q", tt.p, got, tt.want)
			}
			// The target resolves to the note, as a reader's lookup does.
			if p, err := LookupIn(got, paths); err != nil || p != tt.p {
				t.Errorf("LookupIn(%q) = %q, %v; want %q", got, p, err, tt.p)
			}
		})
	}
}

func BenchmarkLinkTarget(b *testing.B) {
	paths := make([]string, 100_000)
	for i := range paths {
		paths[i] = "folder " + strconv.Itoa(i%50) + "/note " + strconv.Itoa(i) + ".md"
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		LinkTarget(paths[i%len(paths)], paths)
	}
}
