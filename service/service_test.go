package service

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/agent/agenttest"
	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
)

// openFixture opens a copy of the fixture vault with an in-memory index.
func openFixture(t *testing.T, o Options) (*Service, string) {
	t.Helper()
	dir := fixture.Copy(t)
	o.Vault = dir
	if o.Index == "" {
		o.InMemoryIndex = true
	}
	if o.Env == nil {
		o.Env = &Env{CacheDir: t.TempDir()}
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// Markers a host kept in the history (ours and the legacy tool-call ones)
// never reach the model.
func TestHistoryMarkersAreStripped(t *testing.T) {
	model := llm.NewScripted([]llm.Turn{{Content: "ok"}})
	s, _ := openFixture(t, Options{Model: model, Agent: true})
	hist := []llm.Message{
		{Role: llm.RoleUser, Content: "earlier question"},
		{Role: llm.RoleAssistant, Content: `<!--AGENT_REASONING:complete:3:["Searching"]-->` + "\n\nearlier answer" +
			`<!--TOOL_CALL_START:1:localSearch-->junk<!--TOOL_CALL_END:1:x-->`},
	}
	if _, err := s.Run(context.Background(), RunRequest{Message: "follow-up", History: hist}, nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range model.Requests()[0].Messages {
		if strings.Contains(m.Content, "<!--") || strings.Contains(m.Content, "junk") {
			t.Fatalf("marker reached the model: %q", m.Content)
		}
	}
}

// Open gives an indexed vault and an agent that answers with the offline
// model; Run merges the run's settings over the vault's and writes the
// trace they name; the settings a run cannot use are refused by name.
func TestOpenAndRun(t *testing.T) {
	var progress int
	s, dir := openFixture(t, Options{Agent: true, Progress: func(done, total int) { progress++ },
		Settings: Settings{Mode: agent.ModeReact, MaxIterations: 8}})
	if s.Index().Count() == 0 || progress == 0 || s.Synced().Added == 0 {
		t.Fatalf("index: %d notes, %d progress calls, %+v", s.Index().Count(), progress, s.Synced())
	}
	if got, err := s.RunSettings(Settings{MaxIterations: 3}); err != nil || got.MaxIterations != 3 || got.Mode != agent.ModeReact {
		t.Fatalf("run settings = %+v, %v", got, err)
	}
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	res, err := s.Run(context.Background(), RunRequest{RunID: "r1", Message: agenttest.Goal, Settings: Settings{Trace: trace}}, nil)
	if err != nil || res.StopReason != agent.StopFinalAnswer || !strings.Contains(res.Answer, "[[Sourdough Starter]]") {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if b, err := os.ReadFile(trace); err != nil || !strings.Contains(string(b), `"RunTerminated"`) {
		t.Fatalf("trace: %v\n%s", err, b)
	}
	for _, tt := range []struct {
		s   Settings
		key string
	}{
		{Settings{Trace: filepath.Join(dir, "run.jsonl")}, "trace"},
		{Settings{MaxIterations: -1}, "maxIterations"},
		{Settings{Mode: "yolo"}, "mode"},
		{Settings{Provider: "claude"}, "provider"},
	} {
		var se *SettingError
		if _, err := s.Run(context.Background(), RunRequest{Message: "x", Settings: tt.s}, nil); !errors.As(err, &se) || se.Key != tt.key {
			t.Errorf("%+v: err = %v, want a %s setting error", tt.s, err, tt.key)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "run.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a trace was written into the vault")
	}
	// A model that cannot be used fails its run alone, saying what chose it.
	res, err = s.Run(context.Background(), RunRequest{Message: "x", Settings: Settings{Provider: "openai", Model: "m"}}, nil)
	if err != nil || res.StopReason != agent.StopError || !strings.Contains(res.Error, "the provider setting") || !strings.Contains(res.Error, "OPENAI_API_KEY") {
		t.Errorf("a run with a model that cannot be used: %+v, %v", res, err)
	}
	if res, err := s.Run(context.Background(), RunRequest{Message: agenttest.Goal}, nil); err != nil || res.StopReason != agent.StopFinalAnswer {
		t.Errorf("the next run: %+v, %v", res, err)
	}
}

// A run id that is running cannot start again.
func TestRunDuplicateID(t *testing.T) {
	slow := llm.NewScripted([]llm.Turn{{Content: "slow", DelayMs: 60_000}})
	s, _ := openFixture(t, Options{Model: slow, Agent: true})
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background(), RunRequest{RunID: "dup", Message: "x"}, agent.SinkFunc(func(e agent.Event) {
			if e.EventType == agent.EventTurnStarted {
				close(started)
			}
		}))
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the first run did not start")
	}
	if _, err := s.Run(context.Background(), RunRequest{RunID: "dup", Message: "y"}, nil); !errors.Is(err, agent.ErrDuplicateRun) {
		t.Fatalf("err = %v", err)
	}
	s.Close() // stops the first run
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), RunRequest{Message: "z"}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("a run after Close: %v", err)
	}
}

// Open fails with the part that failed; a model that cannot be built keeps
// nothing from opening: the runs that use it fail.
func TestOpenErrors(t *testing.T) {
	var oe *OpenError
	_, err := Open(context.Background(), Options{Vault: filepath.Join(t.TempDir(), "nope"), InMemoryIndex: true, Env: &Env{}})
	if !errors.As(err, &oe) || oe.Part != PartVault {
		t.Errorf("missing vault: %v", err)
	}
	s, err := Open(context.Background(), Options{Vault: fixture.Copy(t), InMemoryIndex: true, Env: &Env{}, Agent: true,
		Settings: Settings{Provider: "openai"}})
	if err != nil {
		t.Fatalf("a model that cannot be built kept the vault from opening: %v", err)
	}
	res, err := s.Run(context.Background(), RunRequest{Message: "x"}, nil)
	var me *ModelError
	if err != nil || res.StopReason != agent.StopError || !strings.Contains(res.Error, "no model configured") {
		t.Errorf("bad model: %+v, %v", res, err)
	}
	if _, cerr := s.runModel(context.Background(), Settings{}, s.settings).Chat(context.Background(), llm.Request{}, nil); !errors.As(cerr, &me) || me.Choice.By != "the provider setting" {
		t.Errorf("the model's error is %v, want a *ModelError naming the provider setting", cerr)
	}
	s.Close()
	_, err = Open(context.Background(), Options{Vault: fixture.Copy(t), Env: &Env{}})
	if !errors.As(err, &oe) || oe.Part != PartIndex {
		t.Errorf("no cache dir: %v", err)
	}
	var se *SettingError
	if _, err := Open(context.Background(), Options{Vault: fixture.Copy(t), InMemoryIndex: true, Env: &Env{},
		Settings: Settings{ReasoningWindow: -2}}); !errors.As(err, &se) || se.Key != "reasoningWindow" {
		t.Errorf("bad setting: %v", err)
	}
}

// The index goes to the per-vault folder in the cache dir, with the plan
// review store beside it when runs have sessions; the watcher keeps it
// fresh until Close.
func TestOpenOnDiskAndWatch(t *testing.T) {
	env := &Env{CacheDir: t.TempDir()}
	dir := fixture.Copy(t)
	s, err := Open(context.Background(), Options{Vault: dir, Env: env, Watch: true, Agent: true, Sessions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want, err := env.DefaultIndexPath(dir)
	if err != nil || s.IndexPath() != want || !strings.HasPrefix(want, env.CacheDir) {
		t.Fatalf("index path %q, want %q (%v)", s.IndexPath(), want, err)
	}
	if _, err := os.Stat(want + "-reviews.db"); err != nil {
		t.Fatalf("review store: %v", err)
	}
	updates, unsubscribe := s.Index().Subscribe()
	defer unsubscribe()
	if err := os.WriteFile(filepath.Join(dir, "Zebra Facts.md"), []byte("# Zebra Facts\n\nStripes are unique."), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		res, err := s.Index().Search(context.Background(), search.Request{Query: "zebra stripes"})
		if err == nil && len(res.Results) > 0 {
			break
		}
		select {
		case <-updates:
		case <-deadline:
			t.Fatal("the saved note never became searchable")
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestDefaultIndexPath(t *testing.T) {
	env := Env{CacheDir: t.TempDir()}
	a, err := env.DefaultIndexPath("/some/where/My Vault!")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := env.DefaultIndexPath("/other/My Vault!")
	if a == b || !strings.Contains(filepath.Base(a), "My_Vault-") || filepath.Base(filepath.Dir(a)) != "vault-agent" {
		t.Errorf("DefaultIndexPath = %s, %s", a, b)
	}
	if c, _ := env.DefaultIndexPath("/some/where/My Vault!/"); c != a {
		t.Errorf("DefaultIndexPath not stable: %s vs %s", c, a)
	}
	if _, err := (Env{}).DefaultIndexPath("/v"); err == nil {
		t.Error("no cache dir, no error")
	}
}

// Without sessions (the command line), plan reviews stay in memory: nothing
// is created beside the index.
func TestNoSessionsNoReviewStore(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	s, err := Open(context.Background(), Options{Vault: fixture.Copy(t), Index: idx, Env: &Env{}, Agent: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(idx + "-reviews.db"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("review store created without sessions: %v", err)
	}
}

// Start returns before the index is reconciled; Wait gives the Service once
// it is, errors of the quick part come at once, and Close ends it all.
func TestStart(t *testing.T) {
	var oe *OpenError
	if _, err := Start(context.Background(), Options{Vault: filepath.Join(t.TempDir(), "nope"), InMemoryIndex: true, Env: &Env{}}); !errors.As(err, &oe) || oe.Part != PartVault {
		t.Errorf("missing vault: %v", err)
	}
	if o, err := Start(context.Background(), Options{Vault: fixture.Copy(t), InMemoryIndex: true, Env: &Env{}, Agent: true,
		Settings: Settings{Provider: "openai"}}); err != nil {
		t.Errorf("a model that cannot be built kept the vault from opening: %v", err)
	} else {
		o.Close()
	}

	var reported bool
	ctx, cancel := context.WithCancel(context.Background())
	o, err := Start(ctx, Options{Vault: fixture.Copy(t), InMemoryIndex: true, Env: &Env{}, Agent: true, Watch: true,
		Progress: func(done, total int) { reported = true }})
	if err != nil {
		t.Fatal(err)
	}
	cancel() // the open outlives the context it was started with
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	select {
	case <-o.Done():
	default:
		if _, err := o.Wait(cancelled, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Wait with a cancelled context: %v", err)
		}
	}
	s, err := o.Wait(context.Background(), func(int, int) {})
	if err != nil {
		t.Fatal(err)
	}
	if s.Index().Count() == 0 || !reported || !s.Index().Status().Watching {
		t.Fatalf("after Wait: %d notes, progress reported %v, watching %v", s.Index().Count(), reported, s.Index().Status().Watching)
	}
	res, err := s.Run(context.Background(), RunRequest{Message: agenttest.Goal}, nil)
	if err != nil || res.StopReason != agent.StopFinalAnswer {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if again, err := o.Wait(context.Background(), nil); again != s || err != nil {
		t.Errorf("a second Wait = %p, %v", again, err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Index().Search(context.Background(), search.Request{Query: "sourdough"}); !errors.Is(err, search.ErrClosed) {
		t.Errorf("search after Close: %v", err)
	}
}

// When another process holds the index, PrivateIndexIfLocked opens one in
// memory instead of failing.
func TestLockedIndexFallsBack(t *testing.T) {
	dir := fixture.Copy(t)
	idx := filepath.Join(t.TempDir(), "idx")
	holder, err := Open(context.Background(), Options{Vault: dir, Index: idx, Env: &Env{}})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var oe *OpenError
	if _, err := Open(context.Background(), Options{Vault: dir, Index: idx, Env: &Env{}}); !errors.As(err, &oe) || !errors.Is(err, search.ErrLocked) {
		t.Fatalf("a locked index without the fallback: %v", err)
	}
	s, err := Open(context.Background(), Options{Vault: dir, Index: idx, Env: &Env{}, PrivateIndexIfLocked: true})
	if err != nil {
		t.Fatalf("a locked index: %v", err)
	}
	defer s.Close()
	res, err := s.Index().Search(context.Background(), search.Request{Query: "sourdough"})
	if err != nil || len(res.Results) == 0 || s.IndexPath() != "" {
		t.Fatalf("search on the fallback index %q: %v %v", s.IndexPath(), res, err)
	}
}

// A trace is never written into the vault, whatever the path's spelling: a
// path relative to the working directory, a symbolic link to the vault or
// to one of its notes, a vault opened through a link. The refusal names a
// place outside the vault. A run appends to an existing trace and never
// writes into a file that is not one.
func TestTraceStaysOutOfTheVault(t *testing.T) {
	s, dir := openFixture(t, Options{Agent: true})
	outside := t.TempDir()
	vaultLink := filepath.Join(outside, "vault-link")
	noteLink := filepath.Join(outside, "note-link.jsonl")
	note := filepath.Join(dir, "Home.md")
	before, err := os.ReadFile(note)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, vaultLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(note, noteLink); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(dir, "projects"))
	for _, trace := range []string{
		"run.jsonl",
		"../Home.md",
		filepath.Join(vaultLink, "run.jsonl"),
		filepath.Join(vaultLink, "new-folder", "run.jsonl"),
		noteLink,
	} {
		var se *SettingError
		_, err := s.Run(context.Background(), RunRequest{Message: "x", Settings: Settings{Trace: trace}}, nil)
		if !errors.As(err, &se) || se.Key != "trace" || !strings.Contains(se.Msg, "e.g. "+filepath.Dir(dir)) {
			t.Errorf("trace %s: err = %v, want a trace setting error naming a place outside the vault", trace, err)
		}
	}

	// The same vault opened through the link refuses its real path.
	s2, err := Open(context.Background(), Options{Vault: vaultLink, InMemoryIndex: true, Agent: true, Env: &Env{CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Run(context.Background(), RunRequest{Message: "x", Settings: Settings{Trace: filepath.Join(dir, "run.jsonl")}}, nil); err == nil {
		t.Error("a vault opened through a link accepted a trace at its real path")
	}
	if after, _ := os.ReadFile(note); string(after) != string(before) {
		t.Fatal("a note was overwritten by a trace")
	}
	if _, err := os.Stat(filepath.Join(dir, "projects", "run.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a trace was written into the vault")
	}

	// Outside the vault: two runs append, and a file that is not a trace
	// is left as it was.
	trace := filepath.Join(outside, "run.jsonl")
	for _, id := range []string{"first", "second"} {
		if _, err := s.Run(context.Background(), RunRequest{RunID: id, Message: agenttest.Goal, Settings: Settings{Trace: trace}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(trace); !strings.Contains(string(b), `"run_id":"first"`) || !strings.Contains(string(b), `"run_id":"second"`) {
		t.Errorf("the second run did not append to the trace:\n%s", b)
	}
	notTrace := filepath.Join(outside, "config.json")
	if err := os.WriteFile(notTrace, []byte(`{"keep": true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var se *SettingError
	if _, err := s.Run(context.Background(), RunRequest{Message: "x", Settings: Settings{Trace: notTrace}}, nil); !errors.As(err, &se) || !errors.Is(err, agent.ErrNotTrace) {
		t.Errorf("a file that is not a trace: err = %v", err)
	}
	if b, _ := os.ReadFile(notTrace); string(b) != `{"keep": true}`+"\n" {
		t.Errorf("a file that is not a trace was changed: %q", b)
	}
}

// A vault opened with excludes keeps a default index of its own: the
// shared one, which holds every note, is never rewritten without them.
func TestExcludesKeepTheirOwnIndex(t *testing.T) {
	dir := fixture.Copy(t)
	env := &Env{CacheDir: t.TempDir()}
	shared, err := env.DefaultIndexPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	off := false
	for _, tt := range []struct {
		s    Settings
		same bool
	}{
		{Settings{}, true},
		{Settings{Excludes: []string{" "}}, true},
		{Settings{Excludes: []string{"recipes/**"}}, false},
		{Settings{ObsidianExcludes: &off}, false},
	} {
		s, err := Open(context.Background(), Options{Vault: dir, Env: env, Settings: tt.s})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if (s.IndexPath() == shared) != tt.same {
			t.Errorf("%+v: index %s, shared %s", tt.s, s.IndexPath(), shared)
		}
	}
}

// LockWait waits for a holder that lets go of the index (a host restarting
// its sidecar), and gives up with ErrLocked, or the private index, when the
// holder stays; a cancelled context ends the wait.
func TestLockWait(t *testing.T) {
	dir := fixture.Copy(t)
	idx := filepath.Join(t.TempDir(), "idx")
	holder, err := Open(context.Background(), Options{Vault: dir, Index: idx, Env: &Env{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), Options{Vault: dir, Index: idx, Env: &Env{}, LockWait: 200 * time.Millisecond}); !errors.Is(err, search.ErrLocked) {
		t.Fatalf("a lock held past LockWait: %v, want ErrLocked", err)
	}
	s, err := Open(context.Background(), Options{Vault: dir, Index: idx, Env: &Env{}, LockWait: 200 * time.Millisecond, PrivateIndexIfLocked: true})
	if err != nil || s.IndexPath() != "" {
		t.Fatalf("fallback after the wait: %v", err)
	}
	s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, Options{Vault: dir, Index: idx, Env: &Env{}, LockWait: time.Hour}); !errors.Is(err, search.ErrLocked) && !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}

	// The holder exits while the next process waits.
	waiting := make(chan struct{})
	log := slog.New(&signalHandler{msg: "waiting for it to exit", ch: waiting})
	type result struct {
		s   *Service
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Open(context.Background(), Options{Vault: dir, Index: idx, Env: &Env{}, Logger: log, LockWait: time.Minute})
		done <- result{s, err}
	}()
	<-waiting
	holder.Close()
	r := <-done
	if r.err != nil {
		t.Fatalf("Open after the holder left: %v", r.err)
	}
	if r.s.IndexPath() != idx {
		t.Errorf("index path = %q, want %q", r.s.IndexPath(), idx)
	}
	r.s.Close()
}

// signalHandler closes ch the first time a record with msg is logged.
type signalHandler struct {
	msg  string
	ch   chan struct{}
	once sync.Once
}

func (h *signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *signalHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.msg) {
		h.once.Do(func() { close(h.ch) })
	}
	return nil
}
func (h *signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *signalHandler) WithGroup(string) slog.Handler      { return h }
