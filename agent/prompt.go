package agent

import (
	"strings"

	"github.com/vault-agent/vault-agent/llm"
)

// intro opens every loop's system prompt.
const intro = "You are vault-agent, an assistant that answers questions about the user's markdown notes (an Obsidian-style vault)."

// What the agent may do with the vault, said in every loop's system
// prompt: a run offered the edit tools must know it may use them, and that
// the person decides.
const (
	readOnlyAccess = "You cannot edit the vault; you can only search and read it with the tools you are given."
	editAccess     = "You can search and read the vault, and you may change it with " + ToolCreateNote + ", " + ToolAppendToNote + ", " +
		ToolReplaceInNote + " and " + ToolSetProperties + ": each edit is shown to the user as a diff and written only if they approve it, " +
		"and the tool's result says whether it was applied. Change notes only when the user asks for it, and read a note before changing it."
)

// access is what the run may do with the vault, as its prompts say it.
func (r *runState) access() string {
	if r.editsOffered() {
		return editAccess
	}
	return readOnlyAccess
}

// reactSystemPrompt is the system prompt of the react loop, after intro
// and the access sentence. Its version is PromptVersion; change both
// together.
const reactSystemPrompt = `How to work:
- Search first (localSearch), then read the most promising notes (readNote) before answering.
- Use getTimeRangeMs for questions about a period ("last week", "in March") and pass the range to localSearch.
- Do not repeat a search you already made; try different terms or read the notes you found.
- Answer from the notes only. Cite every note you use as a wikilink with its file name, like [[Note Name]].
- If the notes do not contain the answer, say so plainly.
- Before each tool call, write one short sentence saying what you are doing and why.`

// preamble is the opening of a loop's system prompt: intro, the access
// sentence and what the loop adds.
func (r *runState) preamble(extra string) string {
	s := intro + "\n" + r.access()
	if extra != "" {
		s += " " + extra
	}
	return s
}

// buildMessages assembles the conversation for the first model call.
func buildMessages(system string, history []llm.Message, user string) []llm.Message {
	msgs := make([]llm.Message, 0, len(history)+2)
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: system})
	for _, m := range history {
		m.Content = strings.TrimSpace(m.Content)
		if m.Role == llm.RoleSystem {
			continue // the host's history never overrides our system prompt
		}
		if strings.TrimSpace(m.Content) == "" && len(m.ToolCalls) == 0 {
			continue
		}
		msgs = append(msgs, m)
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: user})
	return msgs
}

// firstSentence returns the first sentence of s, whitespace-collapsed and
// capped at max runes: the [Reflect] text of an iteration.
func firstSentence(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	for i, r := range s {
		if r == '.' || r == '!' || r == '?' || r == '。' || r == '！' || r == '？' {
			next := i + len(string(r))
			if next >= len(s) || s[next] == ' ' || r >= 0x3000 {
				s = s[:next]
				break
			}
		}
	}
	if rs := []rune(s); len(rs) > max {
		s = string(rs[:max-1]) + "…"
	}
	return s
}
