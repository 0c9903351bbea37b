// Package redact removes secrets (API keys) from text before it leaves the
// process: from strings, from text that arrives in pieces (a model's
// streamed answer), from log records and from files written a line at a
// time (traces).
//
// A Redactor knows the secrets and replaces each occurrence with Mask. A
// secret cut short (by a truncation, or by a stream that ends mid-key)
// still gives part of it away, so the end of a truncated text and the end
// of a stream also lose any partial secret of at least MinPartial bytes.
// Strings shorter than MinSecret are placeholders ("none", "ollama"), not
// secrets, and are left alone.
//
// The package has no dependencies in this module; any layer may use it.
package redact

import (
	"strings"
	"unicode/utf8"
)

// Mask replaces a secret.
const Mask = "[REDACTED]"

const (
	// MinSecret is the length below which a configured secret is not
	// treated as one.
	MinSecret = 8
	// MinPartial is the length from which the start of a secret at the end
	// of a text (or the end of one at its start) is masked too.
	MinPartial = 4
)

// Redactor replaces secrets in text. The zero value and nil redact nothing.
// It is safe for concurrent use.
type Redactor struct {
	secrets []string
}

// New returns a Redactor for the given secrets; empty and short ones are
// ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) >= MinSecret {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// Active reports whether r has any secret to remove.
func (r *Redactor) Active() bool { return r != nil && len(r.secrets) > 0 }

// String returns s with every secret replaced by Mask. Secrets cut short
// at either end of s are masked too: s may be a piece of a longer text.
func (r *Redactor) String(s string) string {
	if !r.Active() {
		return s
	}
	for _, k := range r.secrets {
		if strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, Mask)
		}
	}
	if n := r.partialPrefixAtEnd(s); n >= MinPartial {
		s = s[:len(s)-n] + Mask
	}
	if n := r.partialSuffixAtStart(s); n >= MinPartial {
		s = Mask + s[n:]
	}
	return s
}

// Truncate redacts s first and then cuts it to at most n bytes (on a
// character boundary) followed by "...". A secret spanning the cut is
// therefore masked whole, not cut in two with its first part kept.
func (r *Redactor) Truncate(s string, n int) string {
	s = r.String(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// partialPrefixAtEnd is the length of the longest end of s that is the
// start (not the whole) of a secret.
func (r *Redactor) partialPrefixAtEnd(s string) int {
	best := 0
	for _, k := range r.secrets {
		for n := min(len(k)-1, len(s)); n > best; n-- {
			if strings.HasSuffix(s, k[:n]) {
				best = n
				break
			}
		}
	}
	return best
}

// partialSuffixAtStart is the length of the longest start of s that is the
// end (not the whole) of a secret.
func (r *Redactor) partialSuffixAtStart(s string) int {
	best := 0
	for _, k := range r.secrets {
		for n := min(len(k)-1, len(s)); n > best; n-- {
			if strings.HasPrefix(s, k[len(k)-n:]) {
				best = n
				break
			}
		}
	}
	return best
}

// Stream redacts a text that arrives in pieces, such as a streamed model
// answer: a secret split across pieces is still masked. It holds back the
// end of a piece that could be the start of a secret until the next piece
// (or Flush) decides. Not safe for concurrent use.
type Stream struct {
	r       *Redactor
	pending string
}

// NewStream returns a Stream redacting with r.
func (r *Redactor) NewStream() *Stream { return &Stream{r: r} }

// Write takes the next piece and returns the text that is safe to pass on
// now.
func (s *Stream) Write(piece string) string {
	if !s.r.Active() {
		return piece
	}
	text := s.pending + piece
	for _, k := range s.r.secrets {
		if strings.Contains(text, k) {
			text = strings.ReplaceAll(text, k, Mask)
		}
	}
	hold := s.r.partialPrefixAtEnd(text)
	s.pending = text[len(text)-hold:]
	return text[:len(text)-hold]
}

// Flush ends the text and returns what was held back, masked when it is a
// partial secret of at least MinPartial bytes.
func (s *Stream) Flush() string {
	p := s.pending
	s.pending = ""
	if len(p) >= MinPartial {
		return Mask
	}
	return p
}
