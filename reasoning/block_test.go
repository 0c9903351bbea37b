package reasoning

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 2, 10, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func mustParse(t *testing.T, content string) (Marker, string) {
	t.Helper()
	m, rest, ok := Parse(content)
	if !ok {
		t.Fatalf("no marker in %q", content)
	}
	return m, rest
}

func TestBlockStatusSequence(t *testing.T) {
	clk := newFakeClock()
	b := New(Config{Now: clk.Now})

	if b.Status() != StatusIdle || b.Content() != "" {
		t.Fatalf("new block: status %s content %q", b.Status(), b.Content())
	}
	var seen []Status
	record := func() {
		if s := b.Status(); len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
		}
	}
	record()
	b.Start(clk.Now())
	record()
	b.AddStep("Searching notes for \"go\"")
	clk.Advance(1500 * time.Millisecond)
	b.AddStep("Found 5 relevant notes")
	record()
	b.Collapse()
	record()
	clk.Advance(3 * time.Second) // streaming the answer does not count
	b.AppendAnswer("The ")
	b.AppendAnswer("answer.")
	record()
	b.Complete("")
	record()

	want := []Status{StatusIdle, StatusReasoning, StatusCollapsed, StatusComplete}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("statuses = %v, want %v", seen, want)
	}
	m, rest := mustParse(t, b.Content())
	if m.Status != StatusComplete || m.Elapsed != 1 || rest != "The answer." {
		t.Errorf("final = %+v rest %q", m, rest)
	}
	if len(m.Steps) != 2 {
		t.Errorf("steps = %q", m.Steps)
	}
}

func TestBlockElapsedNeverDecreases(t *testing.T) {
	clk := newFakeClock()
	b := New(Config{Now: clk.Now})
	b.Start(time.Time{})
	prev := 0
	// The clock jumps forward and back; elapsed must be monotonic.
	for i, d := range []time.Duration{900 * time.Millisecond, 200 * time.Millisecond, -5 * time.Second, 8 * time.Second, -time.Hour, time.Hour + 6*time.Second} {
		clk.Advance(d)
		e := b.Elapsed()
		if e < prev {
			t.Fatalf("step %d: elapsed went from %d to %d", i, prev, e)
		}
		m, _ := mustParse(t, b.Content())
		if m.Elapsed != e {
			t.Fatalf("marker elapsed %d, Elapsed() %d", m.Elapsed, e)
		}
		prev = e
	}
	if prev != 10 {
		t.Errorf("final elapsed = %d, want 10", prev)
	}
	b.Collapse()
	clk.Advance(time.Minute)
	if e := b.Elapsed(); e != 10 {
		t.Errorf("elapsed after collapse = %d, want frozen at 10", e)
	}
}

func TestBlockWindow(t *testing.T) {
	steps := []string{"one", "two", "three", "four", "five"}
	tests := []struct {
		name   string
		window int
		want   []string
	}{
		{"default", 0, []string{"four", "five"}},
		{"one", 1, []string{"five"}},
		{"three", 3, []string{"three", "four", "five"}},
		{"larger than history", 10, steps},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(Config{Window: tt.window, Now: newFakeClock().Now})
			for _, s := range steps {
				b.AddStep(s)
			}
			m, _ := mustParse(t, b.Content())
			if m.Status != StatusReasoning || !reflect.DeepEqual(m.Steps, tt.want) {
				t.Fatalf("reasoning marker = %+v, want steps %q", m, tt.want)
			}
			b.Collapse()
			if m, _ = mustParse(t, b.Content()); !reflect.DeepEqual(m.Steps, steps) {
				t.Fatalf("collapsed steps = %q, want full history", m.Steps)
			}
			b.Complete("")
			if m, _ = mustParse(t, b.Content()); !reflect.DeepEqual(m.Steps, steps) {
				t.Fatalf("complete steps = %q, want full history", m.Steps)
			}
			if !reflect.DeepEqual(b.Steps(), steps) {
				t.Fatalf("Steps() = %q", b.Steps())
			}
		})
	}
}

func TestBlockStepsAreCleanedAndCapped(t *testing.T) {
	b := New(Config{MaxStepLen: 10, Now: newFakeClock().Now})
	if got := b.AddStep("  \n\t "); got != "" {
		t.Errorf("blank step stored as %q", got)
	}
	if got := b.AddStep("line one\nline two"); got != "line one…" {
		t.Errorf("step = %q", got)
	}
	if got := b.AddStep("\x1b[2Jok"); got != "[2Jok" {
		t.Errorf("step = %q", got)
	}
	if n := len(b.Steps()); n != 2 {
		t.Errorf("%d steps stored, want 2", n)
	}
}

func TestBlockContent(t *testing.T) {
	clk := newFakeClock()
	tests := []struct {
		name string
		run  func(b *Block)
		want string
	}{
		{"idle", func(b *Block) {}, ""},
		{"reasoning", func(b *Block) { b.AddStep("s") }, `<!--AGENT_REASONING:reasoning:0:["s"]-->`},
		{"collapsed without text", func(b *Block) { b.AddStep("s"); b.Collapse() }, `<!--AGENT_REASONING:collapsed:0:["s"]-->`},
		{"answer", func(b *Block) { b.AppendAnswer("\n\nHi") }, "<!--AGENT_REASONING:collapsed:0:[]-->\n\nHi"},
		{"set answer replaces", func(b *Block) { b.AppendAnswer("draft"); b.SetAnswer("final") }, "<!--AGENT_REASONING:collapsed:0:[]-->\n\nfinal"},
		{"note only", func(b *Block) { b.AddStep("s"); b.Complete("Stopped by user.") }, "<!--AGENT_REASONING:complete:0:[\"s\"]-->\n\nStopped by user."},
		{"answer and note", func(b *Block) { b.AppendAnswer("partial"); b.Complete("Timed out after 5m0s.") }, "<!--AGENT_REASONING:complete:0:[]-->\n\npartial\n\nTimed out after 5m0s."},
		{"discard", func(b *Block) { b.AddStep("s"); b.AppendAnswer("not final"); b.DiscardAnswer() }, `<!--AGENT_REASONING:reasoning:0:["s"]-->`},
		{"discard after complete is ignored", func(b *Block) { b.SetAnswer("a"); b.Complete(""); b.DiscardAnswer() }, "<!--AGENT_REASONING:complete:0:[]-->\n\na"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(Config{Now: clk.Now})
			tt.run(b)
			if got := b.Content(); got != tt.want {
				t.Errorf("Content = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBlockConcurrent(t *testing.T) {
	clk := newFakeClock()
	b := New(Config{Now: clk.Now})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				b.AddStep("step")
				clk.Advance(time.Millisecond)
				_ = b.Content()
				_ = b.Elapsed()
				if i == 90 {
					b.AppendAnswer("x")
				}
			}
		}()
	}
	wg.Wait()
	b.Complete("")
	if n := len(b.Steps()); n != 400 {
		t.Errorf("%d steps, want 400", n)
	}
	if a := b.Answer(); a != strings.Repeat("x", 4) {
		t.Errorf("answer = %q", a)
	}
}
