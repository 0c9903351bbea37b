package redact

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// NewHandler wraps h so that the message and every attribute value of a
// record (strings, errors, Stringers, groups, including attributes added
// with WithAttrs) pass through r before h sees them.
func NewHandler(h slog.Handler, r *Redactor) slog.Handler {
	if !r.Active() {
		return h
	}
	return &handler{h: h, r: r}
}

type handler struct {
	h slog.Handler
	r *Redactor
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &handler{h: h.h.WithAttrs(red), r: h.r}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{h: h.h.WithGroup(name), r: h.r}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.r.String(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, h.r.String(x.String()))
		case []byte:
			return slog.String(a.Key, h.r.String(string(x)))
		default:
			if s := fmt.Sprint(x); s != h.r.String(s) {
				return slog.String(a.Key, h.r.String(s))
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// Writer redacts what is written through it, a secret split across writes
// included. Call Flush (or Close) at the end to write what it holds back.
// Safe for concurrent use.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
	s  *Stream
}

// NewWriter returns a Writer that writes the redacted text to w.
func NewWriter(w io.Writer, r *Redactor) *Writer {
	return &Writer{w: w, s: r.NewStream()}
}

// Write redacts p and writes what is safe to write now. It reports len(p)
// written when the underlying write succeeds.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if out := w.s.Write(string(p)); out != "" {
		if _, err := io.WriteString(w.w, out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what was held back.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if out := w.s.Flush(); out != "" {
		_, err := io.WriteString(w.w, out)
		return err
	}
	return nil
}

// Close flushes, then closes the underlying writer when it is an
// io.Closer.
func (w *Writer) Close() error {
	err := w.Flush()
	if c, ok := w.w.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
