package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

const key = "sk-test-SECRET123"

func TestString(t *testing.T) {
	r := New(key, "short", "")
	tests := []struct{ in, want string }{
		{"no secret here", "no secret here"},
		{"key " + key + " twice " + key, "key [REDACTED] twice [REDACTED]"},
		{"ends with sk-test-SEC", "ends with [REDACTED]"},
		{"CRET123 starts it", "[REDACTED] starts it"},
		{"short is not a secret", "short is not a secret"},
		{"ends with sk-", "ends with sk-"},
	}
	for _, tc := range tests {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := (*Redactor)(nil).String(key); got != key {
		t.Errorf("nil redactor changed the text: %q", got)
	}
}

// The cut falls inside the key: redacting after cutting would keep its
// first part.
func TestTruncateRedactsFirst(t *testing.T) {
	r := New(key)
	msg := strings.Repeat("x", 290) + key + " tail"
	got := r.Truncate(msg, 300)
	if strings.Contains(got, "sk-test") || strings.Contains(got, "SEC") {
		t.Errorf("Truncate kept part of the key: %q", got[280:])
	}
	if !strings.HasPrefix(got, strings.Repeat("x", 290)) || !strings.HasSuffix(got, "...") {
		t.Errorf("Truncate = %q", got)
	}
	if got := r.Truncate("héllo", 2); got != "h..." {
		t.Errorf("Truncate cut a character: %q", got)
	}
}

func TestStreamAcrossPieces(t *testing.T) {
	r := New(key)
	for _, split := range [][]string{
		{"the key is sk-te", "st-SECR", "ET123, done"},
		{"s", "k", "-test-SECRET123"},
		{"sk-test-SECRET123"},
		{"nothing ", "secret ", "sk", " ok"},
	} {
		s := r.NewStream()
		var out strings.Builder
		for _, p := range split {
			out.WriteString(s.Write(p))
		}
		out.WriteString(s.Flush())
		want := r.String(strings.Join(split, ""))
		if out.String() != want || strings.Contains(out.String(), "SECRET") {
			t.Errorf("stream of %q = %q, want %q", split, out.String(), want)
		}
	}
	s := r.NewStream()
	if got := s.Write("cut off at sk-test-SE") + s.Flush(); got != "cut off at [REDACTED]" {
		t.Errorf("a stream ending mid-key gave %q", got)
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	r := New(key)
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, nil), r)).With("base", "u="+key)
	log.Info("msg "+key, "s", key, "err", errors.New("bad key "+key),
		slog.Group("g", "inner", key), "n", 3, "b", []byte(key))
	out := buf.String()
	if strings.Contains(out, "SECRET") {
		t.Fatalf("log kept the key: %s", out)
	}
	if strings.Count(out, Mask) != 6 || !strings.Contains(out, "n=3") {
		t.Errorf("log = %s", out)
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, New(key))
	for _, p := range []string{`{"a":"sk-test-`, `SECRET123"}` + "\n", `{"b":"sk-te`} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), `{"a":"[REDACTED]"}`+"\n"+`{"b":"[REDACTED]`; got != want {
		t.Errorf("written %q, want %q", got, want)
	}
}
