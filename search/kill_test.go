package search

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/vault-agent/vault-agent/vault"
)

// The kill tests run a sync in a child process (this test binary, running
// TestKillHelper) and kill it with SIGKILL part way, then open the index
// in the test and check what a crash must leave: every note's record is
// either its old or its new version, never another; a note not marked
// dirty has a document of exactly the version of its record, or neither;
// and the next Sync makes the index what a fresh index of the vault is.
//
// The vault's notes hold "oldtext" in their old version and "newtext" in
// their new one, and link to each other so that changes rewrite the
// inbound link context of notes that did not change.

const (
	killNotes = 120
	killBatch = 6
)

// killVault writes version v ("old" or "new") of the kill vault into dir,
// replacing what is there, and returns each note's content by path. The
// new version changes a third of the notes (some with other links),
// removes a tenth and adds a tenth.
func killVault(t *testing.T, dir, v string) map[string]string {
	t.Helper()
	notes := map[string]string{}
	for i := 0; i < killNotes+killNotes/10; i++ {
		p := fmt.Sprintf("k%d/note %03d.md", i%4, i)
		old := i < killNotes
		switch {
		case v == "old" && old:
			notes[p] = fmt.Sprintf("# Note %d\noldtext word%d, see [[note %03d]].\n", i, i, (i+1)%killNotes)
		case v == "new" && old && i%10 == 9: // removed
		case v == "new" && (i%3 == 0 || !old):
			notes[p] = fmt.Sprintf("# Note %d\nnewtext word%d, see [[note %03d]] and [[note %03d]].\n", i, i, (i+1)%killNotes, (i*7)%killNotes)
		case v == "new":
			notes[p] = fmt.Sprintf("# Note %d\noldtext word%d, see [[note %03d]].\n", i, i, (i+1)%killNotes)
		}
	}
	for i := 0; i < killNotes+killNotes/10; i++ {
		p := fmt.Sprintf("k%d/note %03d.md", i%4, i)
		if c, ok := notes[p]; ok {
			writeFile(t, dir, p, c)
		} else if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	return notes
}

// TestKillHelper is the child process of the kill tests; it does nothing
// unless run by them. It syncs the index, killing itself (SIGKILL) at the
// n-th time the writer reaches the step given, or reporting each step on
// stdout for the parent to kill it at.
func TestKillHelper(t *testing.T) {
	vaultDir, idxPath := os.Getenv("VAULT_AGENT_KILL_VAULT"), os.Getenv("VAULT_AGENT_KILL_INDEX")
	if vaultDir == "" {
		t.Skip("the child process of the kill tests")
	}
	for env, v := range map[string]*int{"VAULT_AGENT_KILL_BULK": &bulkNotes, "VAULT_AGENT_KILL_FULLSCAN": &fullScanNotes, "VAULT_AGENT_KILL_HELD": &heldNotes} {
		if n, err := strconv.Atoi(os.Getenv(env)); err == nil {
			*v = n
		}
	}
	at, nth, _ := strings.Cut(os.Getenv("VAULT_AGENT_KILL_AT"), ":")
	n, _ := strconv.Atoi(nth)
	seen := 0
	testStep = func(step string) {
		if at == "" {
			fmt.Println("step", step) // the parent kills on some line
			return
		}
		if step == at {
			if seen++; seen == n {
				p, _ := os.FindProcess(os.Getpid())
				p.Kill()
				select {}
			}
		}
	}
	v, err := vault.Open(vaultDir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(context.Background(), Options{Path: idxPath, Vault: v, Logger: testLogger(t), BatchSize: killBatch})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	fmt.Println("synced")
	if os.Getenv("VAULT_AGENT_KILL_HOLD") != "" {
		select {} // a parent that kills on a line kills it here at the latest
	}
}

// killScenario prepares a vault and its index (or none) for a child to
// sync, and says what the notes were before.
type killScenario struct {
	name string
	// prepare writes the vault into dir and indexes it into idx as it was
	// before the sync the child runs; it returns the notes before and
	// after (path → content).
	prepare func(t *testing.T, dir, idx string) (before, after map[string]string)
	// env sets the child's thresholds: the first index in bulk, the large
	// change as a full link scan, the small one read twice (heldNotes).
	env []string
	// once is set when the sync reaches each step once or twice only.
	once bool
}

var killScenarios = []killScenario{
	{name: "one save", once: true, prepare: func(t *testing.T, dir, idx string) (map[string]string, map[string]string) {
		before := killVault(t, dir, "old")
		ix, _ := openDisk(t, dir, idx)
		ix.Close()
		after := maps.Clone(before)
		p := "k1/note 005.md" // with other links: two notes' inbound context changes
		after[p] = "# Note 5\nnewtext word5, see [[note 077]].\n"
		writeFile(t, dir, p, after[p])
		return before, after
	}},
	{name: "first index", env: []string{"VAULT_AGENT_KILL_BULK=50"}, prepare: func(t *testing.T, dir, idx string) (map[string]string, map[string]string) {
		return nil, killVault(t, dir, "new")
	}},
	{name: "large change", env: []string{"VAULT_AGENT_KILL_FULLSCAN=20"}, prepare: func(t *testing.T, dir, idx string) (map[string]string, map[string]string) {
		before := killVault(t, dir, "old")
		ix, _ := openDisk(t, dir, idx)
		ix.Close()
		return before, killVault(t, dir, "new")
	}},
	{name: "small change", env: []string{"VAULT_AGENT_KILL_HELD=10"}, prepare: func(t *testing.T, dir, idx string) (map[string]string, map[string]string) {
		before := killVault(t, dir, "old")
		ix, _ := openDisk(t, dir, idx)
		ix.Close()
		after := maps.Clone(before)
		// A sixth of the notes change, with their links: an incremental
		// change, which rewrites the notes they link to as well.
		for i := 0; i < killNotes; i += 6 {
			p := fmt.Sprintf("k%d/note %03d.md", i%4, i)
			after[p] = fmt.Sprintf("# Note %d\nnewtext word%d, see [[note %03d]].\n", i, i, (i*5+2)%killNotes)
			writeFile(t, dir, p, after[p])
		}
		return before, after
	}},
}

// childCmd is the child process syncing the index idx of the vault dir in
// the scenario sc, with the environment env added.
func childCmd(sc killScenario, dir, idx string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKillHelper$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "VAULT_AGENT_KILL_VAULT="+dir, "VAULT_AGENT_KILL_INDEX="+idx)
	cmd.Env = append(append(cmd.Env, sc.env...), env...)
	return cmd
}

// runKilled runs the child on dir and idx with the environment given and
// fails unless SIGKILL ended it. With onLine, the parent reads the child's
// steps and kills it when onLine returns true.
func runKilled(t *testing.T, sc killScenario, dir, idx string, env []string, onLine func(string) bool) {
	t.Helper()
	if onLine != nil {
		env = append(env, "VAULT_AGENT_KILL_HOLD=1")
	}
	cmd := childCmd(sc, dir, idx, env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc2 := bufio.NewScanner(out)
	for sc2.Scan() {
		lines = append(lines, sc2.Text())
		// A sync that took fewer steps than the count the parent aimed at
		// (the persister merged some under load) is killed once it is done.
		if onLine != nil && (onLine(sc2.Text()) || sc2.Text() == "synced") {
			cmd.Process.Kill()
			break
		}
	}
	go func() {
		for sc2.Scan() { // drain, so the child never blocks on stdout
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.Sys() == nil || ee.ExitCode() != -1 {
		tail := lines[max(0, len(lines)-3):]
		t.Fatalf("the child was not killed: %v\n%v\n%s", err, tail, stderr.String())
	}
}

// checkKilled opens the index a killed child left and checks it, before
// and after the next Sync.
func checkKilled(t *testing.T, dir, idx string, before, after map[string]string) {
	t.Helper()
	ix, err := Open(context.Background(), Options{Path: idx, Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: killBatch})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.pendingReason != "" {
		t.Fatalf("the index is rebuilt after the kill: %s", ix.pendingReason)
	}
	hashOf := func(p, c string) string { return vault.ParseForIndex(p, []byte(c), time.Time{}).Hash }
	version := map[string]string{} // path → "oldtext" or "newtext" of its record
	for _, m := range ix.Notes() {
		switch m.Hash {
		case hashOf(m.Path, before[m.Path]):
			version[m.Path] = versionWord(before[m.Path])
		case hashOf(m.Path, after[m.Path]):
			version[m.Path] = versionWord(after[m.Path])
		default:
			t.Errorf("%s: the record is neither the old nor the new version of the note", m.Path)
		}
	}
	all := map[string]bool{}
	for p := range before {
		all[p] = true
	}
	for p := range after {
		all[p] = true
	}
	for p := range all {
		if ix.suspect[p] {
			continue
		}
		for _, word := range []string{"oldtext", "newtext"} {
			has := docHas(t, ix, p, word)
			if want := version[p] == word; has != want {
				t.Errorf("%s: not marked dirty, its record is %q, and its document holds %s: %v", p, version[p], word, has)
			}
		}
	}
	// While the process was down, a fifth of the notes went from the
	// disk: some of the batch in flight among them, whose documents
	// may be there without records.
	for i, p := range slices.Sorted(maps.Keys(after)) {
		if i%5 == 2 {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err := ix.Sync(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rebuilt {
		t.Fatalf("rebuilt: %s", st.Reason)
	}
	assertHashesAsFresh(t, ix, assertSameAsFresh(t, ix, dir, "oldtext", "newtext"))
	if n, _ := ix.idx.DocCount(); int(n) != ix.Count() {
		t.Errorf("%d documents for %d notes", n, ix.Count())
	}
	if len(ix.suspect) > 0 {
		t.Errorf("%d notes still to check after a sync", len(ix.suspect))
	}
}

func versionWord(content string) string {
	if strings.Contains(content, "newtext") {
		return "newtext"
	}
	return "oldtext"
}

// docHas reports whether the document of p holds word in its body.
func docHas(t *testing.T, ix *Index, p, word string) bool {
	t.Helper()
	tq := bleve.NewTermQuery(word)
	tq.SetField(fBody)
	q := bleve.NewConjunctionQuery(bleve.NewDocIDQuery([]string{p}), tq)
	res, err := ix.idx.Search(bleve.NewSearchRequestOptions(q, 1, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	return res.Total > 0
}

// TestKilledAtEachStep kills a sync at each step of the writer where the
// bleve index and the note store part (the first and the third time it
// gets there): a first index, a change read in full and one followed note
// by note.
func TestKilledAtEachStep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	for _, sc := range killScenarios {
		for _, at := range []string{"marked:1", "batched:1", "persisted:1", "recorded:1", "marked:3", "batched:3", "persisted:3", "recorded:3"} {
			if sc.once && strings.HasSuffix(at, ":3") {
				continue
			}
			t.Run(sc.name+"/"+at, func(t *testing.T) {
				dir, idx := t.TempDir(), filepath.Join(t.TempDir(), "idx")
				before, after := sc.prepare(t, dir, idx)
				runKilled(t, sc, dir, idx, []string{"VAULT_AGENT_KILL_AT=" + at}, nil)
				checkKilled(t, dir, idx, before, after)
			})
		}
	}
}

// TestKilledAnywhere kills a sync from outside at a moment the test does
// not choose precisely: when the child reports its k-th step (k at two and
// five eighths of the steps of the sync run to its end), the child goes on
// (reading, analysing, persisting, merging) until the signal lands.
func TestKilledAnywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	for _, sc := range killScenarios {
		if sc.once {
			continue
		}
		// The steps of the whole sync, counted on a copy.
		dir, idx := t.TempDir(), filepath.Join(t.TempDir(), "idx")
		sc.prepare(t, dir, idx)
		steps := countSteps(t, sc, dir, idx)
		if steps < 8 {
			t.Fatalf("%s: %d steps", sc.name, steps)
		}
		for _, eighths := range []int{2, 5} {
			k := steps * eighths / 8
			t.Run(fmt.Sprintf("%s/after step %d of %d", sc.name, k, steps), func(t *testing.T) {
				dir, idx := t.TempDir(), filepath.Join(t.TempDir(), "idx")
				before, after := sc.prepare(t, dir, idx)
				n := 0
				runKilled(t, sc, dir, idx, nil, func(line string) bool {
					if strings.HasPrefix(line, "step ") {
						n++
					}
					return n == k
				})
				checkKilled(t, dir, idx, before, after)
			})
		}
	}
}

// countSteps runs the child on dir and idx to the end and returns the
// steps it reported.
func countSteps(t *testing.T, sc killScenario, dir, idx string) int {
	t.Helper()
	out, err := childCmd(sc, dir, idx).Output()
	if err != nil || !strings.Contains(string(out), "synced") {
		t.Fatalf("%s: the child did not sync: %v\n%s", sc.name, err, out)
	}
	return strings.Count(string(out), "step ")
}
