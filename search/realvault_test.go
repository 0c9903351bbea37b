package search

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Operators on real vaults, checked against a plain scan of the notes'
// files written here: the notes with an open task, with an aliases
// property, with a line holding two words. The vaults are large and not
// in the repository: set VAULT_AGENT_REAL_VAULTS to their folders,
// separated as in PATH, e.g.
//
//	VAULT_AGENT_REAL_VAULTS=/work/vaults/obsidian-help:/work/vaults/obsidian-hub go test ./search -run TestRealVaults -v
func TestRealVaults(t *testing.T) {
	dirs := os.Getenv("VAULT_AGENT_REAL_VAULTS")
	if dirs == "" {
		t.Skip("VAULT_AGENT_REAL_VAULTS is not set")
	}
	// Each line: query: the forms of each word (what the analyzer makes of
	// them is the same token).
	lineQueries := map[string]struct {
		query string
		forms [][]string
	}{
		"obsidian-help": {"line:(link note)", [][]string{{"link", "links", "linked", "linking"}, {"note", "notes", "noted", "noting"}}},
		"obsidian-hub":  {"line:(community plugin)", [][]string{{"community", "communities"}, {"plugin", "plugins"}}},
	}
	for _, dir := range filepath.SplitList(dirs) {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("vault %s: %v", dir, err)
			}
			ix := openIndex(t, dir, "")
			notes := ix.Paths()
			var todo, aliases, lines []string
			lq, hasLine := lineQueries[name]
			for _, p := range notes {
				fm, body := scanNote(t, filepath.Join(dir, filepath.FromSlash(p)))
				body = hideComments(body)
				if hasOpenTask(body) {
					todo = append(todo, p)
				}
				if hasTopKey(fm, "aliases") {
					aliases = append(aliases, p)
				}
				if hasLine && lineWithAll(body, lq.forms) {
					lines = append(lines, p)
				}
			}
			check := func(query string, want []string) {
				t.Helper()
				got, _, err := ix.FilterPaths(context.Background(), Request{Query: query})
				if err != nil {
					t.Fatalf("%s: %v", query, err)
				}
				sort.Strings(got)
				if want == nil {
					want = []string{}
				}
				if got == nil {
					got = []string{}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: %d notes, the scan finds %d\nonly searched: %v\nonly scanned: %v", query, len(got), len(want), minus(got, want), minus(want, got))
					return
				}
				t.Logf("%s: %d notes of %d (the scan agrees)", query, len(got), len(notes))
			}
			check("task-todo:", todo)
			check("[aliases]", aliases)
			if hasLine {
				check(lq.query, lines)
			}
		})
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// scanNote reads a note's frontmatter and body lines: the frontmatter is
// the lines between a first line "---" and the next "---".
func scanNote(t *testing.T, abs string) (fm, body []string) {
	t.Helper()
	f, err := os.Open(abs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var all []string
	for sc.Scan() {
		all = append(all, strings.TrimSuffix(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(all) > 0 && strings.TrimRight(strings.TrimPrefix(all[0], "\uFEFF"), " \t") == "---" {
		for i := 1; i < len(all); i++ {
			if strings.TrimRight(all[i], " \t") == "---" {
				return all[1:i], all[i+1:]
			}
		}
	}
	return nil, all
}

var scanTask = regexp.MustCompile(`^\s*(?:>\s*)*(?:[-*+]|\d+[.)])\s+\[ \](?:\s|$)`)

// hasOpenTask reports whether lines hold "- [ ] ..." outside ``` and ~~~
// code blocks.
func hasOpenTask(lines []string) bool {
	fence := ""
	for _, l := range lines {
		t := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" \t") == "" {
				fence = ""
			}
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
		case scanTask.MatchString(l):
			return true
		}
	}
	return false
}

// hasTopKey reports whether frontmatter lines, valid YAML, set key at the
// top level.
func hasTopKey(fm []string, key string) bool {
	var m map[string]any
	if yaml.Unmarshal([]byte(strings.Join(fm, "\n")), &m) != nil {
		return false // Obsidian reads no property of such a note either
	}
	_, ok := m[key]
	return ok
}

var (
	scanComment = regexp.MustCompile(`(?s)%%.*?(%%|$)|<!--.*?(-->|$)`)
	scanTag     = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(?:[ \t/][^>]*)?>`)
)

// hideComments blanks what a reader does not see outside code blocks:
// %% comments %% and <!-- comments --> (over several lines too) and HTML
// tags, keeping the lines.
func hideComments(lines []string) []string {
	out := make([]string, len(lines))
	fence := ""
	var text []string // the lines outside code blocks, joined to blank comments across lines
	var at []int
	flush := func() {
		if len(text) == 0 {
			return
		}
		joined := scanComment.ReplaceAllStringFunc(strings.Join(text, "\n"), func(m string) string {
			return strings.Repeat("\n", strings.Count(m, "\n")) + " "
		})
		for i, l := range strings.Split(joined, "\n") {
			out[at[i]] = scanTag.ReplaceAllString(l, " ")
		}
		text, at = nil, nil
	}
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			out[i] = l
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" \t") == "" {
				fence = ""
			}
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			flush()
			out[i], fence = l, t[:3]
		default:
			text, at = append(text, l), append(at, i)
		}
	}
	flush()
	return out
}

// lineWithAll reports whether a line holds a form of each word: words are
// runs of letters, digits and '_', joined by a '.', ':' or an apostrophe between
// letters, as the analyzer segments them.
func lineWithAll(lines []string, forms [][]string) bool {
	for _, l := range lines {
		words := lineWords(strings.ToLower(l))
		ok := true
		for _, fs := range forms {
			if !slices.ContainsFunc(fs, func(f string) bool { return slices.Contains(words, f) || slices.Contains(words, f+"'s") }) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func lineWords(s string) []string {
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }
	rs := []rune(s)
	var out []string
	for i := 0; i < len(rs); {
		if !isWord(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && (isWord(rs[j]) || (rs[j] == '.' || rs[j] == ':' || rs[j] == '\'' || rs[j] == '’') && j+1 < len(rs) && isWord(rs[j+1]) && j > i) {
			j++
		}
		out = append(out, string(rs[i:j]))
		i = j
	}
	return out
}
