package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
	fx "github.com/vault-agent/vault-agent/internal/fixture"
)

var binary string

// TestMain builds the command once; the tests run it like a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vault-agent-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "vault-agent")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	return runCLIWithCache(t, t.TempDir(), args...)
}

// runCLIWithCache runs the command with cache as the user cache dir, where
// the default index lives.
func runCLIWithCache(t *testing.T, cache string, args ...string) result {
	t.Helper()
	return execCLI(t, "", []string{"XDG_CACHE_HOME=" + cache}, args...)
}

const fixture = "../../testdata/vault"

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"search", "--vault", fixture, "--bogus", "x"}, 2, "unknown flag: --bogus"},
		{"missing vault flag", []string{"search", "sourdough"}, 2, "--vault is required"},
		{"vault does not exist", []string{"search", "--vault", "/no/such/vault", "x"}, 1, "/no/such/vault"},
		{"empty query", []string{"search", "--vault", fixture}, 2, "a query is required"},
		{"bad limit", []string{"search", "--vault", fixture, "--limit", "0", "x"}, 2, "--limit must be between 1 and 100"},
		{"empty question", []string{"ask", "--vault", fixture}, 2, "a question is required"},
		{"bad mode", []string{"ask", "--vault", fixture, "--mode", "yolo", "x"}, 2, "--mode must be"},
		{"bad max iterations", []string{"ask", "--vault", fixture, "--max-iterations", "99", "x"}, 2, "between 1 and 50"},
		{"unknown provider", []string{"ask", "--vault", fixture, "--provider", "magic", "x"}, 2, "magic"},
		{"bad codec", []string{"serve", "--codec", "xml"}, 2, "--codec must be header or line"},
		{"acp bad mode", []string{"acp", "--mode", "yolo"}, 2, "--mode must be"},
		{"acp unknown provider", []string{"acp", "--provider", "magic"}, 2, "magic"},
		{"mcp unknown provider", []string{"mcp", "--vault", fixture, "--provider", "magic"}, 2, "magic"},
		{"mcp vault does not exist", []string{"mcp", "--vault", "/no/such/vault"}, 1, "/no/such/vault"},
		{"unknown command", []string{"frobnicate"}, 1, "unknown command"},
		{"reversed dates", []string{"search", "--vault", fixture, "--since", "2026-03-12", "--until", "2026-03-01", "x"}, 2, "swap them"},
		{"only OR", []string{"search", "--vault", fixture, "OR"}, 2, "OR joins two things"},
		{"query too long", []string{"search", "--vault", fixture, strings.Repeat("x", 4097)}, 2, "query too large: 4097 bytes, at most 4096"},
		{"too many words", []string{"search", "--vault", fixture, strings.Repeat("word ", 65)}, 2, "query too large: 65 words, at most 64"},
		{"flag after the query", []string{"search", "--vault", fixture, "sourdough", "--limit", "3"}, 2, `"--limit" after "sourdough" would be taken as text`},
		{"flag after the question", []string{"ask", "--vault", fixture, "sourdough", "--planner"}, 2, `"--planner" after "sourdough" would be taken as text`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d with %q", r.code, r.stderr, tt.code, tt.want)
			}
			if r.stdout != "" {
				t.Fatalf("stdout not empty on error: %q", r.stdout)
			}
		})
	}
}

func TestIndexAndSearch(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	r := runCLI(t, "index", "--vault", fixture, "--index", idx)
	if r.code != 0 || !regexp.MustCompile(`^\d+ notes indexed \(\d+ added`).MatchString(r.stdout) {
		t.Fatalf("index: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "index", "--vault", fixture, "--index", idx, "--json")
	var sum map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || sum["added"].(float64) != 0 || sum["unchanged"].(float64) == 0 {
		t.Fatalf("second index should change nothing: %s (%v)", r.stdout, err)
	}
	r = runCLI(t, "search", "--vault", fixture, "--index", idx, "--limit", "3", "sourdough", "starter")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "1. Sourdough Starter  (recipes/Sourdough Starter.md)") {
		t.Fatalf("search: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "search", "--vault", fixture, "--index", idx, "--json", "tag:#recipe")
	var res struct {
		Results []struct{ Path string } `json:"results"`
		Total   int                     `json:"total"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Total == 0 {
		t.Fatalf("search --json: %v\n%s", err, r.stdout)
	}
}

func TestAskOffline(t *testing.T) {
	r := runCLI(t, "ask", "--vault", fixture, "--planner", "how do I keep my sourdough starter alive?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "[[Sourdough Starter]]") {
		t.Fatalf("answer does not cite the starter note:\n%s", r.stdout)
	}
	for _, tag := range []string{"[Plan]", "[Act]", "[Obs]", "[Reflect]"} {
		if !strings.Contains(r.stderr, tag) {
			t.Errorf("steps on stderr lack %s:\n%s", tag, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "[Act]") {
		t.Error("steps leaked to stdout")
	}
}

// A question about a day finds the daily note by its name, whatever the
// file's mtime (a fresh checkout has new mtimes), and quotes its prose
// rather than its title heading.
func TestAskAboutADay(t *testing.T) {
	r := runCLI(t, "ask", "--vault", fixture, "what did I write in my journal on 2026-03-12?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "[[2026-03-12]]") || !strings.Contains(r.stdout, "Project Beta kicked off today") {
		t.Fatalf("answer does not quote the daily note:\n%s\n%s", r.stdout, r.stderr)
	}
}

func TestAskJSONEvents(t *testing.T) {
	r := runCLI(t, "ask", "--vault", fixture, "--json", "what did we decide about the LoRa gateway?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var last struct {
		Type   string `json:"type"`
		Result struct {
			StopReason string `json:"stopReason"`
			Answer     string `json:"answer"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "result" || last.Result.StopReason != "final_answer" {
		t.Fatalf("last line %q (%v)", lines[len(lines)-1], err)
	}
	for _, l := range lines[:len(lines)-1] {
		var ev struct {
			Type  string `json:"type"`
			Event struct {
				EventType string `json:"event_type"`
				EventID   string `json:"event_id"`
			} `json:"event"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Type != "event" || ev.Event.EventID == "" {
			t.Fatalf("bad event line %q (%v)", l, err)
		}
	}
}

func TestAskTraceIsWritten(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	r := runCLI(t, "ask", "--vault", fixture, "--trace", trace, "sourdough")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 5 || !strings.Contains(lines[0], `"RunStarted"`) || !strings.Contains(lines[len(lines)-1], `"RunTerminated"`) {
		t.Fatalf("trace:\n%s", b)
	}
}

func TestHelpAndVersion(t *testing.T) {
	r := runCLI(t, "--help")
	for _, cmd := range []string{"ask", "search", "index", "serve", "watch"} {
		if !strings.Contains(r.stdout, cmd) {
			t.Errorf("--help lacks %s", cmd)
		}
	}
	r = runCLI(t, "search", "--help")
	if !strings.Contains(r.stdout, "tag:#x") {
		t.Errorf("search --help lacks the query language:\n%s", r.stdout)
	}
	if r = runCLI(t, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "vault-agent ") {
		t.Errorf("version: %q", r.stdout)
	}
	if v := runCLI(t, "--version"); v.code != 0 || v.stdout != r.stdout {
		t.Errorf("--version: exit %d, %q, want %q", v.code, v.stdout, r.stdout)
	}
	// --vault says what it defaults to: the current folder for the vault
	// commands; what initialize or the trace names for serve and replay.
	for cmd, cwd := range map[string]bool{"search": true, "ask": true, "index": true, "mcp": true, "serve": false, "replay": false} {
		r = runCLI(t, cmd, "--help")
		line := regexp.MustCompile(`--vault string +(.*)`).FindStringSubmatch(r.stdout)
		if line == nil || strings.Contains(line[1], "(required)") || strings.Contains(line[1], "the current folder") != cwd {
			t.Errorf("%s --help: --vault %q, the current folder by default: %v", cmd, line, cwd)
		}
	}
}

func TestPrintAnswer(t *testing.T) {
	tests := []struct{ streamed, answer, want string }{
		{"", "The answer.", "The answer.\n"},
		{"The answer.", "The answer.", "The answer.\n"},
		{"The answer.\n", "The answer.", "The answer.\n"},
		{"A preamble that was withdrawn", "The answer.", "A preamble that was withdrawn\n\nThe answer.\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		l := &terminalLines{out: &b, err: io.Discard}
		fmt.Fprint(l.stdout(), tt.streamed)
		printAnswer(l.stdout(), tt.streamed, tt.answer, l.endLine)
		if b.String() != tt.want {
			t.Errorf("printAnswer(%q, %q) = %q, want %q", tt.streamed, tt.answer, b.String(), tt.want)
		}
	}
}

// On a terminal, the answer streamed on stdout and the steps and "Thought
// for" on stderr share the screen: each starts on a line of its own.
func TestAskTerminalLines(t *testing.T) {
	var screen bytes.Buffer
	l := &terminalLines{out: &screen, err: &screen, shared: true}
	var streamed strings.Builder
	sink := stepSink(l, false, true, &streamed)
	ev := func(typ string, p agent.Payload) agent.Event {
		return agent.Event{EventType: typ, RunID: "r", Payload: p}
	}
	answer := "From your notes: feed it.\n\nSources: [[Sourdough Starter]]"
	sink.Emit(ev(agent.EventRunStarted, agent.RunStartedPayload{Goal: "starter"}))
	sink.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "From your notes: feed it.\n\n"}))
	sink.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "Sources: [[Sourdough Starter]]"}))
	sink.Emit(ev(agent.EventRunTerminated, agent.RunTerminatedPayload{StopReason: agent.StopFinalAnswer, Answer: answer}))
	printAnswer(l.stdout(), streamed.String(), answer, l.endLine)
	if got := screen.String(); !strings.HasSuffix(got, "Sources: [[Sourdough Starter]]\nThought for 0s\n") {
		t.Errorf("screen:\n%q", got)
	}
}

// Notes hidden by Obsidian's "Excluded files" setting are not searched,
// unless --no-obsidian-excludes says otherwise.
func TestObsidianExcludedFiles(t *testing.T) {
	vaultDir := t.TempDir()
	files := map[string]string{
		"Inbox/kept.md":            "The quokka lives on Rottnest.\n",
		"Templates/quokka.md":      "Template: quokka {{title}}\n",
		".obsidian/app.json":       `{"userIgnoreFilters":["Templates/"]}`,
		".obsidian/workspace.json": "{}",
	}
	for p, c := range files {
		full := filepath.Join(vaultDir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths := func(args ...string) []string {
		t.Helper()
		r := runCLI(t, append([]string{"search", "--vault", vaultDir, "--index", filepath.Join(t.TempDir(), "idx"), "--json"}, args...)...)
		var res struct {
			Results []struct{ Path string } `json:"results"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil {
			t.Fatalf("search: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		var out []string
		for _, x := range res.Results {
			out = append(out, x.Path)
		}
		sort.Strings(out)
		return out
	}
	if got := paths("quokka"); !slices.Equal(got, []string{"Inbox/kept.md"}) {
		t.Errorf("with Obsidian's excludes: %v", got)
	}
	if got := paths("--no-obsidian-excludes", "quokka"); !slices.Equal(got, []string{"Inbox/kept.md", "Templates/quokka.md"}) {
		t.Errorf("--no-obsidian-excludes: %v", got)
	}
}

// --trace never lands in the vault, through a symbolic link or a path
// relative to the working directory: the refusal names a place outside.
// A second run appends to a trace, and replay replays the last run.
func TestAskTraceNeverInTheVault(t *testing.T) {
	vaultDir := fx.Copy(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(vaultDir, link); err != nil {
		t.Fatal(err)
	}
	for _, trace := range []string{filepath.Join(vaultDir, "trace.jsonl"), filepath.Join(link, "trace.jsonl")} {
		r := runCLI(t, "ask", "--vault", vaultDir, "--trace", trace, "canvas")
		if r.code != 2 || !strings.Contains(r.stderr, "must be outside the vault") || !strings.Contains(r.stderr, "e.g. "+filepath.Dir(vaultDir)) {
			t.Errorf("--trace %s: exit %d\n%s", trace, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(vaultDir, "trace.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the trace was written into the vault")
	}
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	for range 2 {
		if r := runCLI(t, "ask", "--vault", vaultDir, "--trace", trace, "sourdough"); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	}
	b, _ := os.ReadFile(trace)
	if n := strings.Count(string(b), `"RunStarted"`); n != 2 {
		t.Fatalf("the trace holds %d runs, want 2", n)
	}
	if r := runCLI(t, "replay", trace, "--vault", vaultDir); r.code != 0 || !strings.HasPrefix(r.stdout, "identical") {
		t.Fatalf("replay: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// search --exclude filters one search: the shared index keeps the
// excluded notes, so the next command re-indexes nothing. Other commands
// given --exclude keep an index of their own.
func TestSearchExcludeKeepsTheSharedIndex(t *testing.T) {
	cache := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		r := runCLIWithCache(t, cache, append([]string{args[0], "--vault", fixture}, args[1:]...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
		return r.stdout
	}
	unchanged := func() {
		t.Helper()
		var sum struct{ Added, Removed, Updated int }
		if out := run("index", "--json"); json.Unmarshal([]byte(out), &sum) != nil || sum.Added+sum.Removed+sum.Updated != 0 {
			t.Fatalf("the shared index changed: %s", out)
		}
	}
	run("index")
	if out := run("search", "--json", "--exclude", "recipes/**", "sourdough"); strings.Contains(out, "recipes/") {
		t.Errorf("search --exclude found an excluded note:\n%s", out)
	}
	unchanged()
	run("index", "--exclude", "recipes/**")
	unchanged()
	if out := run("search", "sourdough"); !strings.Contains(out, "recipes/Sourdough Starter.md") {
		t.Errorf("a plain search lost the excluded notes:\n%s", out)
	}
}

// Search arguments after the first word of the query are query text, a
// "-term" among them; filters alone list notes, newest first.
func TestSearchQueryWordsAndFilters(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	r := runCLI(t, "search", "--vault", fixture, "--index", idx, "sourdough", "-starter")
	if r.code != 0 || strings.Contains(r.stdout, "Sourdough Starter.md") || !strings.Contains(r.stdout, "matching notes") {
		t.Errorf("sourdough -starter: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "search", "--vault", fixture, "--index", idx, "--json", "--since", "2026-03-10", "--until", "2026-03-12", "")
	var res struct {
		Results []struct{ Path string } `json:"results"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || len(res.Results) == 0 {
		t.Fatalf("filters only: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !slices.ContainsFunc(res.Results, func(x struct{ Path string }) bool { return x.Path == "journal/2026-03-12.md" }) {
		t.Errorf("filters only: %v lacks journal/2026-03-12.md", res.Results)
	}
	r = runCLI(t, "search", "--help")
	for _, want := range []string{"Flags go before the query", "single quotes", "4096 bytes and 64 words"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("search --help does not say %q", want)
		}
	}
}

// Without a terminal, progress is a line per 10%, the last one once even
// when the indexer reports the end twice.
func TestProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, lastPct: -1, what: "indexing", unit: "notes"}
	for done := 0; done <= 300; done += 30 {
		p.update(done, 300)
	}
	p.update(300, 300)
	p.finish()
	if n := strings.Count(b.String(), "indexing: 300/300 notes (100%)"); n != 1 || strings.Count(b.String(), "\n") != 10 {
		t.Errorf("progress:\n%s", b.String())
	}
}

// TestNoMemoryProfiling checks that the program samples no allocations:
// nothing reads a heap profile of it, and the samples' records cost memory.
func TestNoMemoryProfiling(t *testing.T) {
	if runtime.MemProfileRate != 0 {
		t.Errorf("runtime.MemProfileRate = %d, want 0", runtime.MemProfileRate)
	}
}
