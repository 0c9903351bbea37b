package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// On a terminal the answer's markdown is rendered: no ** or backquotes
// or list markers left as typed, bold and code styled; a block streamed in
// pieces is rendered once it is complete; a fenced block holding blank
// lines is one block. Off the terminal it is written as it is.
func TestMarkdownAnswer(t *testing.T) {
	answer := "Keep it **fed** weekly and use a `glass jar` [[Sourdough Starter]].\n\n" +
		"- feed it flour\n- keep it warm\n\n" +
		"```\nline one\n\nline two\n```\n\nSources: [[Sourdough Starter]]"
	var b bytes.Buffer
	w, flush := answerWriter(&b, true, "dark", 80)
	held := 0
	for i := 0; i < len(answer); i += 7 {
		if _, err := w.Write([]byte(answer[i:min(i+7, len(answer))])); err != nil {
			t.Fatal(err)
		}
		if i == 14 {
			held = b.Len() // the first paragraph is not complete yet
		}
	}
	flush()
	out := b.String()
	if held != 0 {
		t.Errorf("%d bytes written before the first block was complete", held)
	}
	plain := regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(out, "")
	for _, gone := range []string{"**fed**", "`glass jar`", "- feed", "```"} {
		if strings.Contains(plain, gone) {
			t.Errorf("rendered answer still holds %q:\n%s", gone, plain)
		}
	}
	for _, kept := range []string{"fed", "glass jar", "feed it flour", "line one", "line two", "Sourdough Starter]]", "Sources:"} {
		if !strings.Contains(plain, kept) {
			t.Errorf("rendered answer lost %q:\n%s", kept, plain)
		}
	}
	if !strings.Contains(out, ansiBold+"fed") {
		t.Errorf("bold not styled: %q", out)
	}
	if strings.Count(plain, "line one") != 1 || strings.Index(plain, "line one") > strings.Index(plain, "line two") {
		t.Errorf("the code block was split:\n%s", plain)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, " ") || strings.HasSuffix(l, " \x1b[m") {
			t.Errorf("line padded: %q", l)
		}
	}

	b.Reset()
	w, flush = answerWriter(&b, false, "dark", 80)
	_, _ = w.Write([]byte(answer))
	flush()
	if b.String() != answer {
		t.Errorf("markdown off: %q", b.String())
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
	if !strings.Contains(r.stdout, "The guest network password") || !strings.HasSuffix(r.stdout, "]]\n") || strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("stdout:\n%q", r.stdout)
	}
}
