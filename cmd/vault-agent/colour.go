package main

import (
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Terminal colour for ask's steps: dim, "Thought for" bold. Only on a
// terminal, and never when NO_COLOR is set (https://no-color.org) or TERM
// is dumb. The answer's own look is its rendered markdown (markdown.go).

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
)

// colourOn reports whether output to f may be coloured, given the
// environment's lookup function (os.LookupEnv).
func colourOn(f *os.File, lookup func(string) (string, bool)) bool {
	if _, set := lookup("NO_COLOR"); set {
		return false
	}
	if t, _ := lookup("TERM"); t == "dumb" {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// answerWriter is where ask writes the answer: out, its markdown rendered
// (markdownWriter) when markdown is on, as written otherwise. The
// returned flush must be called once the answer is written.
func answerWriter(out io.Writer, markdown bool, style string, width int) (io.Writer, func()) {
	if !markdown {
		return out, func() {}
	}
	m := newMarkdownWriter(out, style, width)
	return m, func() { _ = m.Flush() }
}

// stepWriter is where ask writes its reasoning steps: stderr, dim when
// colour is on.
func stepWriter(colour bool) io.Writer {
	if colour {
		return dimWriter{w: os.Stderr}
	}
	return os.Stderr
}

// dimWriter writes the step lines of the reasoning printer dim, and its
// closing "Thought for" line bold.
type dimWriter struct{ w io.Writer }

func (d dimWriter) Write(b []byte) (int, error) {
	s := string(b)
	style := ansiDim
	if strings.HasPrefix(s, "Thought for") {
		style = ansiBold
	}
	body := strings.TrimRight(s, "\n")
	if _, err := io.WriteString(d.w, style+body+ansiReset+s[len(body):]); err != nil {
		return 0, err
	}
	return len(b), nil
}
