package main

import (
	"io"
	"strings"
	"sync"
)

// The answer's markdown is rendered on a terminal (bold, lists, code,
// headings) by termRenderer (termrender.go). Piped output is the answer
// as written.

// markdownOn reports whether ask renders the answer on a terminal (the
// caller checks that stdout is one), given the environment's lookup
// function: not on a dumb terminal.
func markdownOn(lookup func(string) (string, bool)) bool {
	t, _ := lookup("TERM")
	return t != "dumb"
}

// markdownStyle is the style of the answer on the terminal: without colour
// when NO_COLOR is set (https://no-color.org).
func markdownStyle(lookup func(string) (string, bool)) string {
	if _, set := lookup("NO_COLOR"); set {
		return "notty"
	}
	return "dark"
}

// markdownWriter renders the markdown written to it a block at a time, so
// a streamed answer shows as it comes: a block (a paragraph, a list, a
// fenced code block) is rendered once a blank line outside a code fence
// ends it; Flush renders the rest. Safe for concurrent use.
type markdownWriter struct {
	mu      sync.Mutex
	w       io.Writer
	r       *termRenderer
	pending strings.Builder
	blocks  int // blocks written so far
}

// newMarkdownWriter renders onto w, wrapping at width columns.
func newMarkdownWriter(w io.Writer, style string, width int) *markdownWriter {
	return &markdownWriter{w: w, r: newTermRenderer(style, width)}
}

func (m *markdownWriter) Write(b []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending.WriteString(string(b))
	text := m.pending.String()
	end := blockEnd(text)
	if end == 0 {
		return len(b), nil
	}
	m.pending.Reset()
	m.pending.WriteString(text[end:])
	return len(b), m.render(text[:end])
}

// Flush renders what is held.
func (m *markdownWriter) Flush() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	text := m.pending.String()
	m.pending.Reset()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return m.render(text)
}

func (m *markdownWriter) render(md string) error {
	out := m.r.Render(md)
	if out == "" {
		return nil
	}
	if m.blocks > 0 {
		out = "\n" + out
	}
	m.blocks++
	_, err := io.WriteString(m.w, out+"\n")
	return err
}

// blockEnd is the end of the last complete block of text: just after the
// last blank line outside a fenced code block, 0 when there is none.
func blockEnd(text string) int {
	end, pos := 0, 0
	fence := ""
	for pos < len(text) {
		nl := strings.IndexByte(text[pos:], '\n')
		if nl < 0 {
			break // an unfinished line
		}
		line := text[pos : pos+nl]
		pos += nl + 1
		t := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
		case t == "":
			end = pos
		}
	}
	return end
}
