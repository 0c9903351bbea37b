package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestPaintLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"- A point. [[Home Network#Guest network]]\n", "- A point. " + ansiCyan + "[[Home Network#Guest network]]" + ansiReset + "\n"},
		{"Monday, March 16, 2026\n", ansiBold + "Monday, March 16, 2026" + ansiReset + "\n"},
		{"## Setup", ansiBold + "## Setup" + ansiReset},
		{"Sources: [[A]], [[B]]", ansiBold + "Sources:" + ansiReset + " " + ansiCyan + "[[A]]" + ansiReset + ", " + ansiCyan + "[[B]]" + ansiReset},
		{"plain text\n", "plain text\n"},
	}
	for _, tt := range tests {
		if got := paintLine(tt.in); got != tt.want {
			t.Errorf("paintLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A citation split across streamed deltas is coloured whole.
func TestPaintWriterJoinsDeltas(t *testing.T) {
	var b bytes.Buffer
	w, flush := answerWriter(&b, true)
	for _, d := range []string{"The answer. [[Ho", "me Net", "work]]\n\nSources: [[Home ", "Network]]"} {
		if _, err := w.Write([]byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	want := "The answer. " + ansiCyan + "[[Home Network]]" + ansiReset + "\n\n" + ansiBold + "Sources:" + ansiReset + " " + ansiCyan + "[[Home Network]]" + ansiReset
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	w, flush = answerWriter(&b, false)
	_, _ = w.Write([]byte("[[A]]"))
	flush()
	if b.String() != "[[A]]" {
		t.Errorf("colour off: %q", b.String())
	}
}

func TestColourOff(t *testing.T) {
	env := func(vals map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vals[k]; return v, ok }
	}
	// NO_COLOR set (even empty) or a dumb terminal: never colour, whatever
	// the output is.
	for _, e := range []map[string]string{{"NO_COLOR": ""}, {"NO_COLOR": "1"}, {"TERM": "dumb"}} {
		if colourOn(os.Stdout, env(e)) {
			t.Errorf("colour on with %v", e)
		}
	}
	// A pipe or a file is not a terminal.
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if colourOn(f, env(nil)) {
		t.Error("colour on for a file")
	}
	var b bytes.Buffer
	_, _ = dimWriter{w: &b}.Write([]byte("  • Reading Home\n"))
	if b.String() != ansiDim+"  • Reading Home"+ansiReset+"\n" {
		t.Errorf("dim step = %q", b.String())
	}
}

func TestAskQuiet(t *testing.T) {
	r := runCLI(t, "ask", "--quiet", "--vault", fixture, "what is the guest wifi password?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("--quiet wrote to stderr:\n%s", r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "The guest network password") || !strings.HasSuffix(r.stdout, "]]\n") || strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("stdout:\n%q", r.stdout)
	}
}
