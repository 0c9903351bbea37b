package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/term"
)

// Terminal colour for ask: steps dim, citations cyan, headings bold. Only
// on a terminal, and never when NO_COLOR is set (https://no-color.org) or
// TERM is dumb.

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
	ansiCyan  = "\x1b[36m"
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

// answerWriter is where ask writes the answer: out, painted when colour is
// on. The returned flush must be called once the answer is written.
func answerWriter(out io.Writer, colour bool) (io.Writer, func()) {
	if !colour {
		return out, func() {}
	}
	p := &paintWriter{w: out}
	return p, func() { _ = p.Flush() }
}

// stepWriter is where ask writes its reasoning steps: stderr, dim when
// colour is on.
func stepWriter(colour bool) io.Writer {
	if colour {
		return dimWriter{w: os.Stderr}
	}
	return os.Stderr
}

var (
	reCiteLink  = regexp.MustCompile(`\[\[[^\]\n]+\]\]`)
	reDayLine   = regexp.MustCompile(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), [A-Z][a-z]+ \d{1,2}, \d{4}$`)
	reMDHeading = regexp.MustCompile(`^#{1,6} `)
)

// paintLine colours one line of an answer: a heading (markdown, or a day
// of a time answer) bold, the "Sources:" label bold, citations cyan.
func paintLine(line string) string {
	body := strings.TrimRight(line, "\r\n")
	end := line[len(body):]
	switch {
	case reMDHeading.MatchString(body), reDayLine.MatchString(body):
		return ansiBold + body + ansiReset + end
	case strings.HasPrefix(body, "Sources: "):
		body = ansiBold + "Sources:" + ansiReset + body[len("Sources:"):]
	}
	return reCiteLink.ReplaceAllStringFunc(body, func(c string) string { return ansiCyan + c + ansiReset }) + end
}

// paintWriter colours the answer text written to it line by line: it holds
// a partial line until its end, so a citation split across two writes is
// still coloured whole. Flush writes what is held. Safe for concurrent use.
type paintWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
}

func (p *paintWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Write(b)
	for {
		i := bytes.IndexByte(p.buf.Bytes(), '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(p.buf.Next(i + 1))
		if _, err := io.WriteString(p.w, paintLine(line)); err != nil {
			return len(b), err
		}
	}
}

// Flush writes the partial line held, if any.
func (p *paintWriter) Flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.buf.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(p.w, paintLine(p.buf.String()))
	p.buf.Reset()
	return err
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
