package llm

import "strings"

// Thinking tags that local reasoning models (DeepSeek R1, Qwen3, QwQ...) put
// around their chain of thought in the visible text.
var (
	thinkOpenTags  = []string{"<think>", "<thinking>"}
	thinkCloseTags = []string{"</think>", "</thinking>"}
)

// ThinkFilter removes <think>...</think> (and <thinking>...</thinking>)
// blocks from streamed text, even when a tag is split across deltas. Text
// inside the blocks is collected as reasoning: thinking never reaches the
// answer or the reasoning steps.
//
// A stray closing tag without an opening one is dropped. A block that is
// never closed counts as reasoning up to the end. Whitespace before the first
// visible character is dropped, so an answer that follows a thinking block
// does not start with the blank lines models put after </think>.
//
// The zero value is ready to use. A ThinkFilter is used by one goroutine.
type ThinkFilter struct {
	inThink   bool
	started   bool // a visible non-space character was emitted
	pending   string
	reasoning strings.Builder
}

// Write consumes one delta and returns the visible text it releases. Text
// that could be the start of a tag is held back until the next Write or
// Flush.
func (f *ThinkFilter) Write(delta string) string {
	buf := f.pending + delta
	f.pending = ""
	var out strings.Builder
	for buf != "" {
		if f.inThink {
			i, n := indexAny(buf, thinkCloseTags)
			if i >= 0 {
				f.reasoning.WriteString(buf[:i])
				buf = buf[i+n:]
				f.inThink = false
				continue
			}
			k := partialTagSuffix(buf, thinkCloseTags)
			f.reasoning.WriteString(buf[:len(buf)-k])
			f.pending = buf[len(buf)-k:]
			break
		}
		oi, on := indexAny(buf, thinkOpenTags)
		ci, cn := indexAny(buf, thinkCloseTags)
		if ci >= 0 && (oi < 0 || ci < oi) {
			f.emit(&out, buf[:ci])
			buf = buf[ci+cn:]
			continue
		}
		if oi >= 0 {
			f.emit(&out, buf[:oi])
			buf = buf[oi+on:]
			f.inThink = true
			if f.reasoning.Len() > 0 {
				f.reasoning.WriteString("\n")
			}
			continue
		}
		k := partialTagSuffix(buf, thinkOpenTags, thinkCloseTags)
		f.emit(&out, buf[:len(buf)-k])
		f.pending = buf[len(buf)-k:]
		break
	}
	return out.String()
}

// Flush returns visible text still held back; call it once the stream ended.
func (f *ThinkFilter) Flush() string {
	p := f.pending
	f.pending = ""
	if f.inThink {
		f.reasoning.WriteString(p)
		return ""
	}
	var out strings.Builder
	f.emit(&out, p)
	return out.String()
}

// Reasoning returns the thinking text removed so far.
func (f *ThinkFilter) Reasoning() string {
	return strings.TrimSpace(f.reasoning.String())
}

func (f *ThinkFilter) emit(out *strings.Builder, s string) {
	if !f.started {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			return
		}
		f.started = true
	}
	out.WriteString(s)
}

// StripThinking removes thinking blocks from a complete text and returns the
// visible text and the reasoning.
func StripThinking(s string) (visible, reasoning string) {
	var f ThinkFilter
	visible = f.Write(s)
	visible += f.Flush()
	return visible, f.Reasoning()
}

// indexAny returns the earliest index of any of tags in s and the length of
// the tag found there, or -1.
func indexAny(s string, tags []string) (int, int) {
	best, n := -1, 0
	for _, t := range tags {
		if i := strings.Index(s, t); i >= 0 && (best < 0 || i < best) {
			best, n = i, len(t)
		}
	}
	return best, n
}

// partialTagSuffix returns the length of the longest suffix of s that is a
// proper prefix of one of the tags.
func partialTagSuffix(s string, tagSets ...[]string) int {
	start := len(s) - 12
	if start < 0 {
		start = 0
	}
	for j := start; j < len(s); j++ {
		if s[j] != '<' {
			continue
		}
		tail := s[j:]
		for _, tags := range tagSets {
			for _, t := range tags {
				if len(tail) < len(t) && strings.HasPrefix(t, tail) {
					return len(tail)
				}
			}
		}
	}
	return 0
}
