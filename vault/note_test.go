package vault

import "testing"

func TestIsNotePath(t *testing.T) {
	for p, want := range map[string]bool{
		"a.md":                 true,
		"Projects/Alpha.MD":    true,
		"deep/er/note.md":      true,
		"a.txt":                false,
		"a.md.bak":             false,
		".hidden.md":           false,
		".obsidian/plugins.md": false,
		"x/.trash/old.md":      false,
		"folder.md/child.txt":  false,
		"dots.in.name.md":      true,
	} {
		if got := IsNotePath(p); got != want {
			t.Errorf("IsNotePath(%q) = %v, want %v", p, got, want)
		}
	}
}
