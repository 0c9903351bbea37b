package vaultgen

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// TouchNotes appends a generated paragraph under a new heading to n notes of
// the vault in dir, chosen deterministically from seed among the regular
// .md files outside dot-folders (symlinks are skipped). n is capped at the
// number of notes. It returns the vault-relative slash paths it modified,
// sorted. The files get the current time as mtime, as an editor would.
func TouchNotes(dir string, n int, seed int64) ([]string, error) {
	var all []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		all = append(all, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list notes: %w", err)
	}
	sort.Strings(all)
	n = min(max(n, 0), len(all))
	r := rand.New(rand.NewPCG(uint64(seed), 0x70c4))
	perm := r.Perm(len(all))[:n]
	chosen := make([]string, n)
	v := getVocab()
	var buf bytes.Buffer
	for k, idx := range perm {
		rel := all[idx]
		chosen[k] = rel
		g := newTextGen(r, v, &v.topics[r.IntN(len(v.topics))], nil)
		buf.Reset()
		buf.WriteString("\n## Update " + strconv.Itoa(k+1) + "\n\n")
		g.paragraph(&buf)
		f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(rel)), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, fmt.Errorf("touch %s: %w", rel, err)
		}
		_, werr := f.Write(buf.Bytes())
		cerr := f.Close()
		if werr != nil || cerr != nil {
			return nil, fmt.Errorf("touch %s: %w", rel, firstErr(werr, cerr))
		}
	}
	sort.Strings(chosen)
	return chosen, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
