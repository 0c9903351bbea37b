package search

import (
	"context"
	"slices"
	"testing"
)

func TestSpellingVariants(t *testing.T) {
	for _, tt := range []struct {
		word      string
		want, not []string
	}{
		{"colour", []string{"color"}, nil},
		{"coloured", []string{"colored"}, nil},
		{"favorite", []string{"favourite", "fav"}, nil},
		{"organise", []string{"organize"}, nil},
		{"synchronization", []string{"synchronisation", "sync"}, nil},
		{"syncing", []string{"synchronise", "synchronize"}, nil},
		{"analyse", []string{"analyze"}, nil},
		{"centre", []string{"center"}, nil},
		{"greyed", []string{"gray"}, nil},
		{"repos", []string{"repository"}, nil},
		// A swap that would make another word is not made.
		{"floor", nil, []string{"flour"}},
		{"four", nil, []string{"for"}},
		{"prise", nil, []string{"prize"}},
		{"this", nil, []string{"thiz"}},
	} {
		got := SpellingVariants(tt.word)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("SpellingVariants(%q) = %v, want %q among them", tt.word, got, w)
			}
		}
		for _, w := range tt.not {
			if slices.Contains(got, w) {
				t.Errorf("SpellingVariants(%q) = %v, want no %q", tt.word, got, w)
			}
		}
	}
	if got := SpellingVariants("notes"); got != nil {
		t.Errorf("SpellingVariants(notes) = %v, want none", got)
	}
}

// A note is found by the spelling its writer did not use.
func TestSearchFindsOtherSpellings(t *testing.T) {
	// Each word of the queries is in some note as typed, so no typo
	// correction stands in for the other spelling; the note holding the
	// other words as typed ranks first without it.
	ix := openIndex(t, writeVault(t, map[string]string{
		"Theme.md":    joinLines("# Theme", "Set the accent colour in Appearance; customise the ribbon there too."),
		"Accent.md":   joinLines("# Accent", "An accent is how a language sounds."),
		"Paint.md":    joinLines("# Paint", "Color the walls; customize the brushes."),
		"Ribbon.md":   joinLines("# Ribbon", "A ribbon is a strip of cloth, in sync with the dress."),
		"Devices.md":  joinLines("# Devices", "Synchronisation settings live under Options."),
		"Settings.md": joinLines("# Settings", "The settings of the editor."),
		"Baking.md":   joinLines("# Baking", "Sift the flour twice."),
		"Cleaning.md": joinLines("# Cleaning", "Mop the kitchen floor, then the hall."),
	}), "")
	wantFirst(t, ix, 4,
		[2]string{"accent color", "Theme.md"},
		[2]string{"customize the ribbon", "Theme.md"},
		[2]string{"sync settings", "Devices.md"},
	)
	res, err := ix.Search(context.Background(), Request{Query: "floor", Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(res); slices.Contains(got, "Baking.md") {
		t.Errorf("floor: results %v, want no Baking.md (flour is not floor)", got)
	}
}
