package service

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FolderSigns is what a folder holds that says it is a vault.
type FolderSigns struct {
	// Obsidian: the folder holds .obsidian/, Obsidian's settings.
	Obsidian bool
	// Notes counts the markdown notes found, up to maxCountedNotes, in a
	// walk of at most maxInspected entries that skips dot-folders.
	Notes int
	// Home: the folder is the user's home folder.
	Home bool
}

// Bounds of InspectFolder's walk: enough to tell a vault from a folder
// that is not one, little enough to be instant on a home folder.
const (
	maxCountedNotes = 20
	maxInspected    = 5000
	// fewNotes is how many notes a folder without .obsidian/ needs before
	// a session on it is not warned about.
	fewNotes = 5
)

// InspectFolder looks at the folder dir: whether it holds .obsidian/ and
// how many markdown notes (counted up to a small number).
func InspectFolder(dir, home string) (FolderSigns, error) {
	var sig FolderSigns
	st, err := os.Stat(dir)
	if err != nil {
		return sig, err
	}
	if !st.IsDir() {
		return sig, fmt.Errorf("%s is a file, not a folder", dir)
	}
	if home != "" {
		sig.Home = canonical(dir) == canonical(home)
	}
	if st, err := os.Stat(filepath.Join(dir, ".obsidian")); err == nil && st.IsDir() {
		sig.Obsidian = true
	}
	seen := 0
	errStop := errors.New("stop")
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != dir {
				return filepath.SkipDir
			}
			return nil
		}
		if seen++; seen > maxInspected || sig.Notes >= maxCountedNotes {
			return errStop
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.EqualFold(filepath.Ext(d.Name()), ".md") {
			sig.Notes++
		}
		return nil
	})
	return sig, nil
}

// IsVault reports whether the folder looks like a vault: it holds
// .obsidian/ or markdown notes.
func (f FolderSigns) IsVault() bool { return f.Obsidian || f.Notes > 0 }

// Doubtful reports whether a session should be warned that its folder may
// not be the vault meant: no .obsidian/ and few notes, or the home folder
// itself.
func (f FolderSigns) Doubtful() bool { return !f.Obsidian && (f.Notes < fewNotes || f.Home) }

// Describe says what the folder holds, for a warning.
func (f FolderSigns) Describe() string {
	notes := fmt.Sprintf("%d markdown notes", f.Notes)
	if f.Notes >= maxCountedNotes {
		notes = fmt.Sprintf("%d or more markdown notes", maxCountedNotes)
	}
	if f.Home {
		return "it is your home folder, with no .obsidian folder and " + notes
	}
	return "it has no .obsidian folder and " + notes
}

// DefaultVault is the vault of a command given no --vault: the working
// directory, when it looks like a vault; otherwise an error that says so.
func (e Env) DefaultVault() (string, error) {
	if e.WorkDir == "" {
		return "", errors.New("--vault is required: the folder of your markdown notes (the current folder is unknown)")
	}
	sig, err := InspectFolder(e.WorkDir, e.Home)
	if err != nil {
		return "", fmt.Errorf("--vault is required: the folder of your markdown notes (the current folder: %v)", err)
	}
	if !sig.IsVault() {
		return "", fmt.Errorf("--vault is required: the current folder %s is not a vault (no .obsidian folder and no markdown notes); pass --vault DIR, or run the command in your vault", e.WorkDir)
	}
	return e.WorkDir, nil
}
