package vault

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParseFixture parses every note of the fixture vault per op.
func BenchmarkParseFixture(b *testing.B) {
	v, err := Open(fixtureVault, Options{})
	if err != nil {
		b.Skip(err)
	}
	var contents [][]byte
	var paths []string
	total := 0
	if err := v.Walk(context.Background(), func(fi FileInfo) error {
		abs, err := v.Resolve(fi.Path)
		if err != nil {
			return err
		}
		c, err := os.ReadFile(abs)
		if err != nil {
			return err
		}
		contents, paths = append(contents, c), append(paths, fi.Path)
		total += len(c)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for i, c := range contents {
			Parse(paths[i], c, t0, 0)
		}
	}
}

// BenchmarkWalk walks a generated vault of 2,000 notes in 100 folders.
func BenchmarkWalk(b *testing.B) {
	root := b.TempDir()
	for d := range 100 {
		dir := filepath.Join(root, "d", string(rune('a'+d%26)), string(rune('a'+d/26)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 20 {
			if err := os.WriteFile(filepath.Join(dir, string(rune('a'+f))+".md"), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	v, err := Open(root, Options{Excludes: []string{"Archive/**", "*.excalidraw.md"}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n := 0
		if err := v.Walk(context.Background(), func(FileInfo) error { n++; return nil }); err != nil || n != 2000 {
			b.Fatalf("walk: %d files, %v", n, err)
		}
	}
}
