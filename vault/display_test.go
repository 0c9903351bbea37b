package vault

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"crlf\r\nline\r\n", "crlf\r\nline\r\n"},
		{"shown\rhidden", `shown\rhidden`},
		{"end\r", `end\r`},
		{"\x1b[2Kerased", `\x1b[2Kerased`},
		{"bell\a nul\x00 del\x7f", `bell\x07 nul\x00 del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"abc\u202edcba", `abc\u202edcba`},
		{"isolate \u2067x\u2069", `isolate \u2067x\u2069`},
		{"sep\u2028line", `sep\u2028line`},
		{"bad \xff byte", `bad \xff byte`},
		{"café 😀 漢字 ‍", "café 😀 漢字 ‍"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Printable(tt.in); got != tt.want {
				t.Fatalf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if HasHidden(tt.in) != (tt.in != tt.want) {
				t.Fatalf("HasHidden(%q) = %v", tt.in, HasHidden(tt.in))
			}
		})
	}
}

// TestProposalDiffShowsHiddenCharacters proposes notes whose text holds
// characters that would make a terminal show another line than the one
// written: the diff shows them escaped, the note gets them as they are.
func TestProposalDiffShowsHiddenCharacters(t *testing.T) {
	tests := []struct {
		name string
		req  EditRequest
	}{
		{"create with CR and erase line", EditRequest{Op: EditCreate, Path: "Spoof.md", Content: "rm nothing\r\x1b[2Kall good\n"}},
		{"append with a bidi override", EditRequest{Op: EditAppend, Path: "Note.md", Content: "pay \u202e001$ ot\u202c bob"}},
		{"control characters in the path", EditRequest{Op: EditAppend, Path: "a\x1b[31mred.md", Content: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, root, _ := editVault(t)
			write(t, filepath.Join(root, "a\x1b[31mred.md"), "# named by another program\n")
			p, err := v.Propose(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Hidden {
				t.Error("Hidden is not set")
			}
			for i, r := range p.Diff {
				if r == '\n' || r == '\t' {
					continue
				}
				if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || r == utf8.RuneError {
					t.Fatalf("the diff holds %U at %d:\n%q", r, i, p.Diff)
				}
			}
			if !strings.Contains(p.After, tt.req.Content) {
				t.Fatalf("the note to write lost its characters: %q", p.After)
			}
		})
	}
}

// TestCreateRefusesHiddenCharactersInName: a new note is never named with
// characters a person cannot see as they are.
func TestCreateRefusesHiddenCharactersInName(t *testing.T) {
	v, _, _ := editVault(t)
	for _, name := range []string{"a\x1b[31mred.md", "evil\u202egnp.md", "cr\rname.md"} {
		if _, err := v.Propose(EditRequest{Op: EditCreate, Path: name, Content: "x"}); !errors.Is(err, ErrUnsafePath) {
			t.Errorf("create %q: %v, want ErrUnsafePath", name, err)
		}
	}
}
