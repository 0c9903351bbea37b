package search

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/vault"
)

// The operators of Obsidian's search (its help page "Search", the operator
// table and "Search properties"), each against testdata/operators, a vault
// whose notes each hold what one operator should find or pass over. The
// page's own examples are marked "help:". Where vault-agent differs from
// Obsidian by design, the row says so: free words are ranked, none
// required (so the notes holding all of them come first), and tag:#work
// also finds #work/project.

var (
	opsOnce sync.Once
	opsIx   *Index
	opsErr  error
)

func operatorsIndex(t *testing.T) *Index {
	t.Helper()
	opsOnce.Do(func() {
		v, err := openVaultErr(filepath.Join("..", "testdata", "operators"))
		if err != nil {
			opsErr = err
			return
		}
		ix, err := Open(context.Background(), Options{Vault: v, Logger: testLogger(t)})
		if err != nil {
			opsErr = err
			return
		}
		if _, err := ix.Sync(context.Background(), nil); err != nil {
			opsErr = err
			return
		}
		opsIx = ix
	})
	if opsErr != nil {
		t.Fatalf("index testdata/operators: %v", opsErr)
	}
	return opsIx
}

func TestOperators(t *testing.T) {
	ix := operatorsIndex(t)
	const (
		teamSync = "gatherings/Team sync.md"
		bookClub = "gatherings/Book club.md"
		standup  = "gatherings/Standup.md"
		planning = "gatherings/Planning.md"
		retro    = "gatherings/Retro.md"
		allHands = "gatherings/All hands.md"
		office   = "office/Office.md"
		roadmap  = "office/Roadmap.md"
		hiring   = "office/Hiring.md"
		draft    = "props/Draft.md"
		sameLine = "pets/Same line.md"
		sameBlk  = "pets/Same block.md"
		sameSec  = "pets/Same section.md"
		diffSec  = "pets/Different sections.md"
		calls    = "tasks/Calls.md"
		doneCall = "tasks/Done calls.md"
		launch   = "tasks/Launch.md"
		mixed    = "tasks/Mixed.md"
		prep     = "tasks/Prep.md"
		launchDy = "tasks/Launch day.md"
		daily1   = "Daily notes/2022-07-14.md"
		daily2   = "Daily notes/2022-08-01.md"
		dated    = "props/Dated.md"
	)
	tests := []struct {
		name    string
		query   string
		exactly []string          // the result set, whatever the order
		top     []string          // the first len(top) results, as a set
		all     func(string) bool // every result passes
		first   string            // rank 1
		lines   map[string][]int  // the lines of Matches of these results
		none    bool
	}{
		// Search terms.
		{name: "help: meeting work (ranked: both words first)", query: "meeting work", top: []string{teamSync, allHands}},
		{name: "help: meeting OR work", query: "meeting OR work",
			exactly: []string{teamSync, standup, planning, retro, allHands, office, roadmap, hiring, draft}},
		{name: "help: meeting work OR meetup personal", query: "meeting work OR meetup personal",
			top: []string{teamSync, allHands, bookClub, retro}},
		{name: "help: meeting (work OR meetup) personal", query: "meeting (work OR meetup) personal", first: retro,
			all: func(p string) bool {
				return slices.Contains([]string{teamSync, allHands, bookClub, retro, office, roadmap, hiring, draft}, p)
			}},
		{name: "help: meeting -work", query: "meeting -work", exactly: []string{standup, planning, retro}},
		{name: "help: meeting -work -meetup", query: "meeting -work -meetup", exactly: []string{standup, planning}},
		{name: "help: meeting -(work meetup)", query: "meeting -(work meetup)", exactly: []string{teamSync, standup, planning, retro}},
		{name: "help: meeting [duration:<5]", query: "meeting [duration:<5]", exactly: []string{standup}},
		{name: "help: meeting [duration:>5]", query: "meeting [duration:>5]", exactly: []string{planning}},
		{name: "duration <= 5", query: "[duration:<=5]", exactly: []string{standup, retro}},
		{name: "duration >= 5", query: "[duration:>=5]", exactly: []string{planning, retro}},
		{name: `help: "star wars"`, query: `"star wars"`, exactly: []string{"films/Star Wars.md"}},
		{name: `help: escaped quotes`, query: `"they said \"hello\" to each other"`, exactly: []string{"quotes/Hello.md"}},
		{name: "help: query block embed OR search", query: "embed OR search", exactly: []string{"quotes/Embed.md", "README.md"}, first: "quotes/Embed.md"},

		// file:, path:, content:, match-case:, ignore-case:, tag:.
		{name: "help: file:.jpg (notes only)", query: "file:.jpg", none: true},
		{name: "help: file:202209", query: "file:202209", exactly: []string{"Archive/202209 Report.md"}},
		{name: `help: path:"Daily notes/2022-07"`, query: `path:"Daily notes/2022-07"`, exactly: []string{daily1}},
		{name: `help: content:"happy cat"`, query: `content:"happy cat"`, exactly: []string{"animals/Happy.md"}},
		{name: `"happy cat" also matches a title`, query: `"happy cat"`, exactly: []string{"animals/Happy.md", "animals/Happy cat.md"}},
		{name: "content: word", query: "content:feline", exactly: []string{"animals/Happy cat.md"}},
		{name: "content: leaves out names", query: "content:(happy -feline)", exactly: []string{"animals/Happy.md"}},
		{name: "help: match-case:HappyCat", query: "match-case:HappyCat", exactly: []string{"code/HappyCat.md"}},
		{name: "any case: happycat", query: "happycat", exactly: []string{"code/HappyCat.md", "code/Lower.md"}},
		{name: "help: ignore-case:ikea", query: "ignore-case:ikea", exactly: []string{"shopping/Ikea.md", "shopping/Flatpack.md"}},
		{name: "match-case:IKEA", query: "match-case:IKEA", exactly: []string{"shopping/Ikea.md"}},
		{name: "help: tag:#work (and nested #work/project, unlike Obsidian)", query: "tag:#work", exactly: []string{hiring, roadmap}},
		{name: "tag:(work OR myjob)", query: "tag:(work OR myjob)", exactly: []string{hiring, roadmap, office}},

		// line:, block:, section:.
		{name: "help: line:(mix flour)", query: "line:(mix flour)", exactly: []string{"recipes/Bread.md"},
			lines: map[string][]int{"recipes/Bread.md": {1}}},
		{name: "help: -line (no line matches)", query: "path:recipes/ -line:(mix flour)", exactly: []string{"recipes/Cake.md"}},
		{name: "line: with a phrase", query: `line:"mix the flour"`, exactly: []string{"recipes/Bread.md"}},
		{name: "line: with a negation", query: "line:(mix -flour)", exactly: []string{"recipes/Cake.md"}},
		{name: "line:(dog cat)", query: "line:(dog cat)", exactly: []string{sameLine}},
		{name: "help: block:(dog cat)", query: "block:(dog cat)", exactly: []string{sameLine, sameBlk},
			lines: map[string][]int{sameBlk: {1, 2}}},
		{name: "help: section:(dog cat)", query: "section:(dog cat)", exactly: []string{sameLine, sameBlk, sameSec},
			lines: map[string][]int{sameSec: {3, 5}}},
		{name: "dog cat anywhere", query: "dog cat", top: []string{sameLine, sameBlk, sameSec, diffSec}},
		{name: "line: OR", query: "line:(knead OR chased)", exactly: []string{"recipes/Bread.md", sameLine}},
		{name: "line: regex", query: `line:/^mix .* flour/`, exactly: []string{"recipes/Bread.md"}},

		// Tasks.
		{name: "help: task:call", query: "task:call", exactly: []string{calls, doneCall},
			lines: map[string][]int{calls: {3}, doneCall: {3}}},
		{name: "help: task-todo:call", query: "task-todo:call", exactly: []string{calls}, lines: map[string][]int{calls: {3}}},
		{name: "help: task-done:call", query: "task-done:call", exactly: []string{doneCall}, lines: map[string][]int{doneCall: {3}}},
		{name: "help: task:(call OR email)", query: "task:(call OR email)", exactly: []string{calls, doneCall},
			lines: map[string][]int{calls: {3, 4}, doneCall: {3, 4}}},
		{name: "task-todo:email", query: "task-todo:email", exactly: []string{doneCall}, lines: map[string][]int{doneCall: {4}}},
		{name: "task-done:email", query: "task-done:email", exactly: []string{calls}},
		{name: "task-todo: alone", query: "task-todo:", exactly: []string{calls, doneCall, launch, mixed, prep, launchDy}},
		{name: "task-done: alone", query: "task-done:", exactly: []string{calls, doneCall, launch}},
		{name: "task:(call plumber) in one task", query: "task:(call plumber)", exactly: []string{calls}},
		{name: "task:(call landlord) across tasks", query: "task:(call landlord)", none: true},
		{name: "launch task-todo: ranks notes with open tasks, those mentioning it first", query: "launch task-todo:",
			top: []string{launch, prep}, exactly: []string{launch, prep, mixed, launchDy},
			lines: map[string][]int{launch: {3}, mixed: {6}, prep: {1}}},
		{name: "-task-todo:", query: "path:tasks/ -task-todo:", exactly: []string{"tasks/Call notes.md"}},

		// Properties.
		{name: "help: [aliases]", query: "[aliases]", exactly: []string{"props/Aliased.md", "props/Empty alias.md", "props/Empty list.md", "props/Empty quotes.md"}},
		{name: "help: [aliases:Name]", query: "[aliases:Name]", exactly: []string{"props/Aliased.md"}},
		{name: "help: [aliases:null]", query: "[aliases:null]", exactly: []string{"props/Empty alias.md"}},
		{name: "help: [status:Draft OR Published]", query: "[status:Draft OR Published]", exactly: []string{draft, "props/Published.md", "props/Archived.md"}},
		{name: `[status:"archived draft"]`, query: `[status:"archived draft"]`, exactly: []string{"props/Archived.md"}},
		{name: `[status:"draft archived"] (phrase order)`, query: `[status:"draft archived"]`, none: true},
		{name: "[status:(draft -archived)]", query: "[status:(draft -archived)]", exactly: []string{draft}},
		{name: "a word of a long value", query: "[description:roof]", exactly: []string{"props/Described.md", "props/Short.md"}},
		{name: "words of a long value", query: "[description:(winter shed)]", exactly: []string{"props/Described.md"}},
		{name: "a word of a long value, OR", query: "[description:winter OR gutter]", exactly: []string{"props/Described.md"}},
		{name: "a short value", query: "[summary:roof]", exactly: []string{"props/Described.md"}},
		{name: "[status:/^pub/] regex in a value", query: "[status:/^pub/]", exactly: []string{"props/Published.md"}},
		{name: "[status] case of the name", query: "[Status]", exactly: []string{draft, "props/Published.md", "props/Archived.md"}},
		{name: "[due:<2026-03-10] a date", query: "[due:<2026-03-10]", exactly: []string{dated}},
		{name: "[due:>2026-03-05] after the day", query: "[due:>2026-03-05]", none: true},
		{name: "[due:>=2026-03-05]", query: "[due:>=2026-03-05]", exactly: []string{dated}},
		{name: "[due:<=2026-03-05]", query: "[due:<=2026-03-05]", exactly: []string{dated}},
		{name: "[rating:>4] a decimal", query: "[rating:>4]", exactly: []string{dated}},
		{name: "[done:true] a checkbox", query: "[done:true]", exactly: []string{dated}},
		{name: "[rating:4.5] a number", query: "[rating:4.5]", exactly: []string{dated}},
		{name: "[duration:10 OR 3] numbers", query: "[duration:10 OR 3]", exactly: []string{planning, standup}},
		{name: "[due:2026-03-05] a date", query: "[due:2026-03-05]", exactly: []string{dated}},
		{name: "[due:2026-03-06] another date", query: "[due:2026-03-06]", none: true},
		{name: "-[status]", query: "path:props/ -[status]", exactly: []string{"props/Aliased.md", "props/Empty alias.md", "props/Empty list.md", "props/Empty quotes.md", dated,
			"props/Described.md", "props/Short.md"}},

		// Regular expressions.
		{name: `help: /\d{4}-\d{2}-\d{2}/`, query: `/\d{4}-\d{2}-\d{2}/`, exactly: []string{daily1, daily2, calls, doneCall, dated}},
		{name: `help: path:/\d{4}-\d{2}-\d{2}/`, query: `path:/\d{4}-\d{2}-\d{2}/`, exactly: []string{daily1, daily2}},
		{name: "file:/^\\d{6} /", query: `file:/^\d{6} /`, exactly: []string{"Archive/202209 Report.md"}},
		{name: "tag:/^work/", query: "tag:/^work/", exactly: []string{hiring, roadmap}},
		{name: "a regex and a word", query: `/star.*wars/ documentary`, none: true},
		{name: "regex ignores case", query: `/HAPPYCAT/`, exactly: []string{"code/HappyCat.md", "code/Lower.md"}},
		{name: "match-case: regex", query: `match-case:/HappyCat/`, exactly: []string{"code/HappyCat.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ix.Search(context.Background(), Request{Query: tt.query, Limit: 100})
			if err != nil {
				t.Fatalf("Search(%q): %v", tt.query, err)
			}
			got := paths(res)
			if tt.none && len(got) != 0 {
				t.Errorf("%q found %v, want nothing", tt.query, got)
			}
			if tt.exactly != nil {
				want := append([]string(nil), tt.exactly...)
				sort.Strings(want)
				if g := sortedPaths(res); !slices.Equal(g, want) {
					t.Errorf("%q found %v, want %v", tt.query, g, want)
				}
			}
			if tt.top != nil {
				if len(got) < len(tt.top) {
					t.Fatalf("%q found %v, want at least %v first", tt.query, got, tt.top)
				}
				head := append([]string(nil), got[:len(tt.top)]...)
				want := append([]string(nil), tt.top...)
				sort.Strings(head)
				sort.Strings(want)
				if !slices.Equal(head, want) {
					t.Errorf("%q found %v first, want %v", tt.query, got[:len(tt.top)], tt.top)
				}
			}
			if tt.first != "" && (len(got) == 0 || got[0] != tt.first) {
				t.Errorf("%q found %v, want %s first", tt.query, got, tt.first)
			}
			for _, p := range got {
				if tt.all != nil && !tt.all(p) {
					t.Errorf("%q found %s", tt.query, p)
				}
			}
			for p, want := range tt.lines {
				var lines []int
				for _, r := range res.Results {
					if r.Path == p {
						for _, m := range r.Matches {
							lines = append(lines, m.Line)
						}
					}
				}
				if !slices.Equal(lines, want) {
					t.Errorf("%q: matches of %s at lines %v, want %v", tt.query, p, lines, want)
				}
			}
		})
	}
}

// A match says where: the line's text, and the operator.
func TestOperatorMatchText(t *testing.T) {
	ix := operatorsIndex(t)
	res := search(t, ix, Request{Query: "task-todo:call"})
	if len(res.Results) != 1 || len(res.Results[0].Matches) != 1 {
		t.Fatalf("results %+v", res.Results)
	}
	if m := res.Results[0].Matches[0]; m != (LineMatch{Line: 3, Text: "- [ ] call the plumber 📅 2026-03-12", Kind: "task-todo"}) {
		t.Errorf("match %+v", m)
	}
	res = search(t, ix, Request{Query: "line:(mix flour)"})
	if m := res.Results[0].Matches[0]; m != (LineMatch{Line: 1, Text: "Mix the flour with water.", Kind: "line"}) {
		t.Errorf("match %+v", m)
	}
	// A negated operator says nothing of where.
	res = search(t, ix, Request{Query: "path:recipes/ -line:(mix flour)"})
	if len(res.Results) != 1 || res.Results[0].Matches != nil {
		t.Errorf("results %+v", res.Results)
	}
}

func TestOperatorErrors(t *testing.T) {
	ix := operatorsIndex(t)
	for _, q := range []string{"line:()", "line:(task:x)", "[]", "[x:<abc]", "/(?=x)/", "/a{1000}{1000}/", "content:(tag:x)", "[status:line:x]"} {
		_, err := ix.Search(context.Background(), Request{Query: q})
		if !errors.Is(err, ErrBadQuery) {
			t.Errorf("Search(%q) = %v, want a bad query", q, err)
		}
	}
	_, err := ix.Search(context.Background(), Request{Query: "/" + strings.Repeat("a", maxRegexBytes+1) + "/"})
	if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "at most 1000") {
		t.Errorf("long regex: %v", err)
	}
}

func openVaultErr(dir string) (*vault.Vault, error) { return vault.Open(dir, vault.Options{}) }

func TestTasks(t *testing.T) {
	ix := operatorsIndex(t)
	day := func(s string) time.Time {
		d, err := time.ParseInLocation(time.DateOnly, s, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	type at struct {
		path string
		line int
	}
	tests := []struct {
		name  string
		q     TaskQuery
		want  []at
		total int
	}{
		{name: "open, by due date then path", q: TaskQuery{},
			want: []at{{"tasks/Calls.md", 3}, {"tasks/Done calls.md", 4}, {"tasks/Calls.md", 5}, {"tasks/Launch day.md", 5}, {"tasks/Launch.md", 3}, {"tasks/Mixed.md", 6}, {"tasks/Prep.md", 1}}},
		{name: "done", q: TaskQuery{Status: TasksDone}, want: []at{{"tasks/Calls.md", 4}, {"tasks/Done calls.md", 3}, {"tasks/Launch.md", 4}}},
		{name: "all, limited", q: TaskQuery{Status: TasksAll, Limit: 2}, want: []at{{"tasks/Calls.md", 3}, {"tasks/Done calls.md", 4}}, total: 10},
		{name: "text", q: TaskQuery{Text: "call OR email"}, want: []at{{"tasks/Calls.md", 3}, {"tasks/Done calls.md", 4}}},
		{name: "text in one task", q: TaskQuery{Status: TasksAll, Text: "email landlord"}, want: []at{{"tasks/Calls.md", 4}}},
		{name: "due before", q: TaskQuery{DueBefore: day("2026-03-15")}, want: []at{{"tasks/Calls.md", 3}}},
		{name: "due after", q: TaskQuery{DueAfter: day("2026-03-15")}, want: []at{{"tasks/Done calls.md", 4}}},
		{name: "due on the day", q: TaskQuery{DueAfter: day("2026-03-12"), DueBefore: day("2026-03-12")}, want: []at{{"tasks/Calls.md", 3}}},
		{name: "in a time range", q: TaskQuery{From: day("2026-03-18"), To: day("2026-03-22")}, want: []at{{"tasks/Done calls.md", 4}}},
		{name: "property", q: TaskQuery{Property: "project:alpha"}, want: []at{{"tasks/Mixed.md", 6}}},
		{name: "folder", q: TaskQuery{Folders: []string{"gatherings"}}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := ix.Tasks(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var ats []at
			for _, h := range got {
				ats = append(ats, at{h.Path, h.Line})
			}
			if !slices.Equal(ats, tt.want) {
				t.Errorf("tasks %v, want %v", ats, tt.want)
			}
			if want := max(tt.total, len(tt.want)); total != want {
				t.Errorf("total %d, want %d", total, want)
			}
		})
	}
	got, _, err := ix.Tasks(context.Background(), TaskQuery{Text: "plumber"})
	if err != nil || len(got) != 1 || got[0].Due != "2026-03-12" || got[0].Section != "Today" || got[0].Title != "Calls" || got[0].Done {
		t.Errorf("plumber: %+v, %v", got, err)
	}
	for _, q := range []TaskQuery{{Status: "pending"}, {Text: "line:(x)"}, {DueAfter: day("2026-03-02"), DueBefore: day("2026-03-01")}} {
		if _, _, err := ix.Tasks(context.Background(), q); !errors.Is(err, ErrBadQuery) {
			t.Errorf("Tasks(%+v) = %v, want a bad query", q, err)
		}
	}
}

func TestNotesByProperty(t *testing.T) {
	ix := operatorsIndex(t)
	notes, total, err := ix.NotesByProperty(context.Background(), "status:draft", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range notes {
		got = append(got, n.Path+"="+fmt.Sprint(n.Properties[0].Value)+"/"+n.Properties[0].Type)
	}
	if want := []string{"props/Archived.md=Archived draft/text", "props/Draft.md=Draft/text"}; !slices.Equal(got, want) || total != 2 {
		t.Errorf("status:draft: %v (%d), want %v", got, total, want)
	}
	notes, total, err = ix.NotesByProperty(context.Background(), "[rating:>4] [due]", 1)
	if err != nil || total != 1 || len(notes[0].Properties) != 2 || notes[0].Properties[0].Type != "number" || notes[0].Properties[1].Type != "date" {
		t.Errorf("rating and due: %+v %d %v", notes, total, err)
	}
	notes, total, err = ix.NotesByProperty(context.Background(), "aliases", 2)
	if err != nil || total != 4 || len(notes) != 2 {
		t.Errorf("aliases: %+v %d %v", notes, total, err)
	}
	for _, q := range []string{"", "[]", "[x:<y]"} {
		if _, _, err := ix.NotesByProperty(context.Background(), q, 0); !errors.Is(err, ErrBadQuery) {
			t.Errorf("NotesByProperty(%q) = %v, want a bad query", q, err)
		}
	}
}

func TestDailyNotes(t *testing.T) {
	ix := operatorsIndex(t)
	from := time.Date(2022, 7, 14, 0, 0, 0, 0, time.Local)
	settings, notes := ix.DailyNotes(from, from.AddDate(0, 0, 1).Add(-time.Millisecond))
	if settings.Folder != "Daily notes" || settings.Source != "daily-notes" {
		t.Errorf("settings %+v", settings)
	}
	want := []DailyNote{
		{Date: "2022-07-14", Path: "Daily notes/2022-07-14.md", Exists: true, Title: "2022-07-14"},
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes %+v, want %+v", notes, want)
	}
	_, notes = ix.DailyNotes(from, from.AddDate(0, 0, 100))
	if len(notes) != maxDailyDays || notes[1].Exists || notes[1].Path != "Daily notes/2022-07-15.md" {
		t.Errorf("a long range: %d notes, %+v", len(notes), notes[:2])
	}
}

// The parts of a note follow its edits: a watcher batch re-indexes its
// tasks, properties, sections and blocks with it, and a note changed on
// disk since it was indexed is checked against its new text.
func TestOperatorsFollowEdits(t *testing.T) {
	dir := writeVault(t, map[string]string{
		"a.md": "---\nstatus: draft\n---\n# Plan\n\n- [ ] call the printer\n- [x] email Ann\n",
		"b.md": "Nothing to do here.\n",
	})
	ix := openIndex(t, dir, "")
	count := func(q string) int {
		t.Helper()
		return len(search(t, ix, Request{Query: q}).Results)
	}
	for q, want := range map[string]int{"task-todo:printer": 1, "[status:draft]": 1, "task-done:email": 1, "[status:final]": 0} {
		if got := count(q); got != want {
			t.Fatalf("before: %s found %d notes, want %d", q, got, want)
		}
	}
	writeFile(t, dir, "a.md", "---\nstatus: final\n---\n# Plan\n\n- [x] call the printer\n- [ ] email Ann\n")
	writeFile(t, dir, "b.md", "# Later\n\n- [ ] buy a printer\n")
	if err := ix.Apply(context.Background(), vault.Batch{Changes: []vault.Change{{Path: "a.md"}, {Path: "b.md"}}}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{"task-todo:printer": 1, "task-done:printer": 1, "[status:draft]": 0, "[status:final]": 1, "task-todo:email": 1} {
		if got := count(q); got != want {
			t.Errorf("after: %s found %d notes, want %d", q, got, want)
		}
	}
	res := search(t, ix, Request{Query: "task-todo:printer"})
	if res.Results[0].Path != "b.md" || res.Results[0].Matches[0].Line != 3 {
		t.Errorf("open printer task: %+v", res.Results)
	}
	// Lines added above the section since the index saw the note: the
	// section is found at its new lines.
	writeFile(t, dir, "a.md", "---\nstatus: final\n---\nintro\n\nmore intro\n\n# Plan\n\n- [x] call the printer\n- [ ] email Ann\n")
	res = search(t, ix, Request{Query: "section:(printer ann)"})
	if len(res.Results) != 1 || len(res.Results[0].Matches) != 2 || res.Results[0].Matches[0].Line != 10 {
		t.Errorf("section after an edit the index has not seen: %+v", res.Results)
	}
}

// An operator that checks notes for longer than scanTimeout is stopped
// with an error that is a bad query and says how to narrow it.
func TestOperatorTimeout(t *testing.T) {
	ix := openIndex(t, writeVault(t, map[string]string{"a.md": "one 2026-03-12\n"}), "")
	prev := scanTimeout
	t.Cleanup(func() { scanTimeout = prev })
	scanTimeout = 0
	_, err := ix.Search(context.Background(), Request{Query: `/\d{4}/`})
	var slow *QuerySlowError
	if !errors.As(err, &slow) || !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "narrow it") {
		t.Fatalf("err = %v", err)
	}
	scanTimeout = prev
	if res := search(t, ix, Request{Query: `/\d{4}/`}); len(res.Results) != 1 {
		t.Errorf("results %+v", res.Results)
	}
}
