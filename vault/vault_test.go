package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/internal/truncate"
)

// writeTree creates files (slash paths -> content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks not supported: %v", err)
	}
}

// newTestVault builds a vault with symlinks in and out, and a folder outside.
func newTestVault(t *testing.T, opts Options) (*Vault, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "vault")
	outside := filepath.Join(base, "outside")
	writeTree(t, root, map[string]string{
		"Home.md":                  "# Home",
		"projects/alpha/design.md": "# Design",
		"projects/beta/design.md":  "# Beta design",
		"notes/Meeting Notes.md":   "meeting",
		"notes/image.png":          "png",
		".obsidian/app.json":       "{}",
		".obsidian/plugin.md":      "hidden",
		".trash/old.md":            "old",
		"Archive/2020/old.md":      "archived",
		"drawings/x.excalidraw.md": "drawing",
		"templates/daily.md":       "tpl",
		"sub/templates/x.md":       "nested tpl",
		"%2e%2e/literal.md":        "literal",
		"notes/.hidden.md":         "dotfile",
		"notes/draft.md~":          "backup",
	})
	writeTree(t, outside, map[string]string{"secret.md": "secret", "dir/s.md": "secret"})
	symlink(t, filepath.Join(root, "Home.md"), filepath.Join(root, "link-home.md"))
	symlink(t, filepath.Join(outside, "secret.md"), filepath.Join(root, "leak.md"))
	symlink(t, outside, filepath.Join(root, "outdir"))
	symlink(t, filepath.Join(root, "projects"), filepath.Join(root, "notes", "proj-link"))
	symlink(t, root, filepath.Join(root, "notes", "loop"))
	symlink(t, filepath.Join(base, "nowhere.md"), filepath.Join(root, "dangling-out.md"))
	symlink(t, "self-a", filepath.Join(root, "self-b.md"))
	symlink(t, "self-b.md", filepath.Join(root, "self-a"))
	symlink(t, filepath.Join(root, ".obsidian", "plugin.md"), filepath.Join(root, "to-hidden.md"))
	symlink(t, filepath.Join(root, ".obsidian"), filepath.Join(root, "to-hidden-dir"))
	v, err := Open(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	return v, outside
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.md")
	writeTree(t, dir, map[string]string{"f.md": "x"})
	tests := []struct {
		name string
		root string
		opts Options
		want error
		msg  string
	}{
		{"missing", filepath.Join(dir, "nope"), Options{}, ErrNotFound, "nope"},
		{"file", file, Options{}, ErrNotDir, "f.md"},
		{"empty", "", Options{}, nil, "no vault folder"},
		{"bad pattern", dir, Options{Excludes: []string{"a/[x"}}, nil, "a/[x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(tc.root, tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err %q does not mention %q", err, tc.msg)
			}
		})
	}
	v, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(v.Root()) {
		t.Errorf("root %q not absolute", v.Root())
	}
}

func TestResolve(t *testing.T) {
	v, _ := newTestVault(t, Options{})
	root := v.Root()
	tests := []struct {
		in   string
		want string // vault-relative expected location; "" means refused
	}{
		{"Home.md", "Home.md"},
		{"projects/alpha/design.md", "projects/alpha/design.md"},
		{"./Home.md", "Home.md"},
		{"a/../Home.md", "Home.md"},
		{`projects\alpha\design.md`, "projects/alpha/design.md"},
		{"missing/new.md", "missing/new.md"},
		{"%2e%2e/literal.md", "%2e%2e/literal.md"},
		{"link-home.md", "Home.md"},
		{"notes/proj-link/alpha/design.md", "projects/alpha/design.md"},
		{".obsidian/app.json", ".obsidian/app.json"}, // safe; ReadNote refuses it
		{".", "."},
		{"", ""},
		{"/etc/passwd", ""},
		{`C:\x`, ""},
		{"c:x", ""},
		{`\\server\share`, ""},
		{"..", ""},
		{"../outside/secret.md", ""},
		{"a/../../b", ""},
		{`..\..\x`, ""},
		{"notes/../../x", ""},
		{"Home.md\x00.png", ""},
		{"leak.md", ""},
		{"outdir/secret.md", ""},
		{"outdir", ""},
		{"outdir/missing.md", ""},
		{"dangling-out.md", ""},
		{"self-b.md", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := v.Resolve(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("Resolve(%q) = %q, want refusal", tc.in, got)
				}
				if !errors.Is(err, ErrUnsafePath) {
					t.Errorf("err = %v, want ErrUnsafePath", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.in, err)
			}
			want := filepath.Join(root, filepath.FromSlash(tc.want))
			if got != want {
				t.Errorf("Resolve(%q) = %q, want %q", tc.in, got, want)
			}
		})
	}
	_, err := v.Resolve("../x")
	if err == nil || !strings.Contains(err.Error(), `path "../x" escapes the vault`) {
		t.Errorf("message = %v", err)
	}
}

func TestRel(t *testing.T) {
	v, outside := newTestVault(t, Options{})
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{filepath.Join(v.Root(), "notes", "a.md"), "notes/a.md", true},
		{v.Root(), ".", true},
		{filepath.Join(outside, "secret.md"), "", false},
		{"relative/x.md", "", false},
		{v.Root() + "-sibling/x.md", "", false},
	}
	for _, tc := range tests {
		got, ok := v.Rel(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Rel(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestIgnored(t *testing.T) {
	v, err := Open(t.TempDir(), Options{Excludes: []string{"Archive/**", "*.excalidraw.md", "templates/", "/rooted.md", "a/*/deep.md"}})
	if err != nil {
		t.Fatal(err)
	}
	checkIgnored(t, v, []ignoredCase{
		{"note.md", false, false},
		{"Note.MD", false, false},
		{"dir", true, false},
		{".", true, false},
		{"", true, false},
		{".obsidian", true, true},
		{".obsidian/app.json", false, true},
		{"a/.git/x.md", false, true},
		{".note.md.swp", false, true},
		{".#note.md", false, true},
		{"note.md~", false, true},
		{"4913", false, true},
		{"image.png", false, true},
		{"Archive", true, true},
		{"Archive/x.md", false, true},
		{"Archive/2020/x.md", false, true},
		{"Archived.md", false, false},
		{"x/Archive/y.md", false, false},
		{"d/x.excalidraw.md", false, true},
		{"x.excalidraw.md", false, true},
		{"templates", true, true},
		{"templates/daily.md", false, true},
		{"sub/templates/x.md", false, true},
		{"templates.md", false, false},
		{"rooted.md", false, true},
		{"sub/rooted.md", false, false},
		{"a/b/deep.md", false, true},
		{"a/b/c/deep.md", false, false},
	})
}

// ignoredCase is one expectation of Vault.Ignored.
type ignoredCase struct {
	rel   string
	isDir bool
	want  bool
}

func checkIgnored(t *testing.T, v *Vault, cases []ignoredCase) {
	t.Helper()
	for _, tc := range cases {
		if got := v.Ignored(tc.rel, tc.isDir); got != tc.want {
			t.Errorf("Ignored(%q, %v) = %v, want %v", tc.rel, tc.isDir, got, tc.want)
		}
	}
}

func TestWalk(t *testing.T) {
	v, _ := newTestVault(t, Options{Excludes: []string{"Archive/**", "*.excalidraw.md", "templates/"}})
	var got []string
	if err := v.Walk(context.Background(), func(fi FileInfo) error {
		if fi.Size <= 0 || fi.ModTime.IsZero() {
			t.Errorf("%s: size %d mtime %v", fi.Path, fi.Size, fi.ModTime)
		}
		got = append(got, fi.Path)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"%2e%2e/literal.md",
		"Home.md",
		"link-home.md",
		"notes/Meeting Notes.md",
		"projects/alpha/design.md",
		"projects/beta/design.md",
	}
	// "notes/proj-link" reaches projects/ too: the real path wins.
	if !reflect.DeepEqual(got, want) {
		t.Errorf("walk = %q\nwant %q", got, want)
	}

	t.Run("stop and cancel", func(t *testing.T) {
		n := 0
		stop := errors.New("stop")
		if err := v.Walk(context.Background(), func(FileInfo) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
			t.Errorf("err = %v after %d calls", err, n)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := v.Walk(ctx, func(FileInfo) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled walk err = %v", err)
		}
	})
}

func TestReadNote(t *testing.T) {
	v, _ := newTestVault(t, Options{Excludes: []string{"Archive/**"}})
	tests := []struct {
		in   string
		want error
		msg  string
	}{
		{"Home.md", nil, ""},
		{"link-home.md", nil, ""},
		{"missing.md", ErrNotFound, `"missing.md"`},
		{"Home.md/x.md", ErrNotFound, "Home.md/x.md"},
		{"notes/image.png", ErrNotMarkdown, "image.png"},
		{"notes", ErrNotMarkdown, "notes"},
		{".obsidian/app.json", ErrNotFound, "hidden"},
		{".obsidian/plugin.md", ErrNotFound, "hidden"},
		{"Archive/2020/old.md", ErrNotFound, "Archive/**"},
		{"../outside/secret.md", ErrUnsafePath, "escapes the vault"},
		{"leak.md", ErrUnsafePath, "leak.md"},
		{"to-hidden.md", ErrNotFound, "hidden"},
		{"self-b.md", ErrUnsafePath, "loop"},
		{"/etc/passwd", ErrUnsafePath, "absolute"},
		{"", ErrUnsafePath, "empty"},
		{"a\x00.md", ErrUnsafePath, "NUL"},
		{"outdir/secret.md", ErrUnsafePath, "a symlink on the path leads outside the vault"},
		{"dangling-out.md", ErrUnsafePath, "a symlink on the path leads outside the vault"},
		{strings.Repeat("a/", 1<<20) + "x.md", ErrUnsafePath, "no file path is longer than 4096"},
	}
	for _, tc := range tests {
		t.Run(truncate.Runes(tc.in, 40), func(t *testing.T) {
			n, err := v.ReadNote(tc.in)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if n.Title == "" || n.Body == "" || n.Hash == "" || n.Path != tc.in {
					t.Errorf("note = %+v", n)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err %q does not mention %q", truncate.Runes(err.Error(), 200), tc.msg)
			}
			// Where a symlink leads out of the vault is nobody's business.
			if base := filepath.Dir(v.Root()); strings.Contains(err.Error(), base) {
				t.Errorf("err %q reveals where the symlink leads", err)
			}
			if len(err.Error()) > 1000 {
				t.Errorf("err of %d bytes echoes its input whole", len(err.Error()))
			}
		})
	}
}

func TestLookupIn(t *testing.T) {
	paths := []string{
		"Home.md",
		"projects/alpha/design.md",
		"projects/beta/design.md",
		"notes/Meeting Notes.md",
		"notes/meeting.md",
		"archive/Meeting.md",
		"Readme.md",
		"readme.md",
		"daily/2026-03-01.md",
	}
	tests := []struct {
		in    string
		want  string
		err   error
		cands []string
		msg   string
	}{
		{in: "Home.md", want: "Home.md"},
		{in: "Home", want: "Home.md"},
		{in: "  ./Home  ", want: "Home.md"},
		{in: "home", want: "Home.md"},
		{in: "HOME.MD", want: "Home.md"},
		{in: "[[Home]]", want: "Home.md"},
		{in: "![[Home]]", want: "Home.md"},
		{in: "[[Home|start]]", want: "Home.md"},
		{in: "[[Home#Intro]]", want: "Home.md"},
		{in: "[[meeting notes#x|y]]", want: "notes/Meeting Notes.md"},
		{in: "alpha/design", want: "projects/alpha/design.md"},
		{in: "Alpha/Design.md", want: "projects/alpha/design.md"},
		{in: `projects\beta\design`, want: "projects/beta/design.md"},
		{in: "2026-03-01", want: "daily/2026-03-01.md"},
		{in: "Readme", want: "Readme.md"},
		{in: "readme", want: "readme.md"},
		{in: "design", err: ErrAmbiguous, cands: []string{"projects/alpha/design.md", "projects/beta/design.md"}},
		{in: "meeting", err: ErrAmbiguous, cands: []string{"archive/Meeting.md", "notes/meeting.md"}},
		{in: "README", err: ErrAmbiguous, cands: []string{"Readme.md", "readme.md"}},
		{in: "gamma/design", err: ErrNotFound},
		{in: "desing", err: ErrNotFound, msg: `did you mean "projects/alpha/design.md", "projects/beta/design.md"?`},
		{in: "Hom", err: ErrNotFound, msg: `"Home.md"`},
		{in: "zzzzzzzz", err: ErrNotFound},
		{in: "", err: ErrNotFound, msg: "empty"},
		{in: "[[]]", err: ErrNotFound, msg: "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := LookupIn(tc.in, paths)
			if tc.err == nil {
				if err != nil || got != tc.want {
					t.Fatalf("LookupIn(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if tc.cands != nil {
				var ae *AmbiguousError
				if !errors.As(err, &ae) || !reflect.DeepEqual(ae.Candidates, tc.cands) {
					t.Errorf("candidates = %v, want %v", err, tc.cands)
				}
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err %q does not contain %q", err, tc.msg)
			}
		})
	}
}

func TestLookupSuggestionsCapped(t *testing.T) {
	var paths []string
	for _, c := range "abcdefgh" {
		paths = append(paths, "n/note"+string(c)+".md")
	}
	_, err := LookupIn("notex", paths)
	if !errors.Is(err, ErrNotFound) || strings.Count(err.Error(), `"n/note`) != maxSuggestions {
		t.Errorf("err = %v", err)
	}
}

func TestVaultLookup(t *testing.T) {
	v, _ := newTestVault(t, Options{})
	ctx := context.Background()
	tests := []struct {
		in   string
		want string
		err  error
	}{
		{"Home.md", "Home.md", nil},
		{"[[meeting notes]]", "notes/Meeting Notes.md", nil},
		{"alpha/design", "projects/alpha/design.md", nil},
		{"design", "", ErrAmbiguous},
		{"secret", "", ErrNotFound},
		{"leak", "", ErrNotFound},
		{".obsidian/plugin.md", "", ErrNotFound},
	}
	for _, tc := range tests {
		got, err := v.Lookup(ctx, tc.in)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("Lookup(%q) = %q, %v; want %v", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestWalkVanishing(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.md": "a", "b.md": "b", "c/d.md": "d", "e/f.md": "f"})
	v, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = v.Walk(context.Background(), func(fi FileInfo) error {
		got = append(got, fi.Path)
		if fi.Path == "a.md" {
			// Entries already listed vanish before they are reached.
			for _, p := range []string{"b.md", "c", "e/f.md"} {
				if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
					t.Fatal(err)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	if !reflect.DeepEqual(got, []string{"a.md"}) {
		t.Errorf("walk = %q", got)
	}
}
