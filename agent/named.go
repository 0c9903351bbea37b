package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/vault"
)

// NoteRef is a note a message names: [[Note]], [[Note#Heading]],
// [[Note|alias]] or @Note.
type NoteRef struct {
	// Name is the note's name as written, without brackets, heading or
	// alias.
	Name string `json:"name"`
	// Heading is the section named after '#', if any.
	Heading string `json:"heading,omitempty"`
	// Mention is true for the @Note form, whose end is a guess: the
	// agent tries the following words too (see resolveRef).
	Mention bool `json:"mention,omitempty"`
	// Raw is the text of the reference in the message.
	Raw string `json:"raw"`
}

// NamedCallPrefix starts the call ids of the readNote calls the agent
// makes, before the loop, for the notes the goal names, so a model (the
// offline policy) can tell them from its own.
const NamedCallPrefix = "named-"

// maxNamedNotes caps the notes read up front for one message.
const maxNamedNotes = 5

var (
	reNamedWiki = regexp.MustCompile(`!?\[\[([^\[\]|#]+)(?:#([^\[\]|]*))?(?:\|[^\[\]]*)?\]\]`)
	// An @ starts a mention at the start of the text or after a space or
	// an opening bracket, so e-mail addresses are not mentions.
	reMention = regexp.MustCompile(`(?:^|[\s(\[{"'“])@([\p{L}\p{N}][\p{L}\p{N}_.\-/]*)`)
)

// NamedNotes returns the notes msg names, in order, without repeats.
func NamedNotes(msg string) []NoteRef {
	var out []NoteRef
	seen := map[string]bool{}
	add := func(r NoteRef) {
		key := strings.ToLower(r.Name + "#" + r.Heading)
		if r.Name == "" || seen[key] || len(out) == maxNamedNotes {
			return
		}
		seen[key] = true
		out = append(out, r)
	}
	type hit struct {
		at  int
		ref NoteRef
	}
	var hits []hit
	for _, m := range reNamedWiki.FindAllStringSubmatchIndex(msg, -1) {
		r := NoteRef{Name: strings.TrimSpace(msg[m[2]:m[3]]), Raw: msg[m[0]:m[1]]}
		if m[4] >= 0 {
			r.Heading = strings.TrimSpace(msg[m[4]:m[5]])
		}
		hits = append(hits, hit{m[0], r})
	}
	for _, m := range reMention.FindAllStringSubmatchIndex(msg, -1) {
		name := strings.TrimRight(msg[m[2]:m[3]], ".-/")
		hits = append(hits, hit{m[2] - 1, NoteRef{Name: name, Mention: true, Raw: "@" + name}})
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.at - b.at })
	for _, h := range hits {
		add(h.ref)
	}
	return out
}

// WithoutNamedNotes returns msg with its note references taken out.
func WithoutNamedNotes(msg string) string {
	msg = reNamedWiki.ReplaceAllString(msg, " ")
	return reMention.ReplaceAllStringFunc(msg, func(m string) string {
		if i := strings.IndexByte(m, '@'); i > 0 {
			return m[:i] + " "
		}
		return " "
	})
}

// PlainNamedNotes returns msg with each note reference replaced by the
// note's name ("[[Obsidian Sync#Setup|sync]]" and "@Zettelkasten" become
// "Obsidian Sync" and "Zettelkasten"), as words to search for.
func PlainNamedNotes(msg string) string {
	msg = reNamedWiki.ReplaceAllString(msg, "$1")
	return reMention.ReplaceAllStringFunc(msg, func(m string) string {
		return strings.Replace(m, "@", "", 1)
	})
}

// mentionWords is how many words after an @ may belong to the name.
const mentionWords = 4

// resolveRef finds the note path of ref among paths with the lenient
// lookup (vault.LookupIn: path, basename, path tail, any case). An @Note
// mention may name a note of several words ("@Obsidian Sync"): the
// longest run of words after the @ that names a note wins. It returns the
// name to read: the path (with its #heading) when resolved, the name as
// written otherwise, so readNote reports why it failed.
func resolveRef(ref NoteRef, msg string, paths []string) string {
	name := ref.Name
	if ref.Mention {
		if i := strings.Index(msg, ref.Raw); i >= 0 {
			words := strings.Fields(msg[i+1:])
			for n := min(mentionWords, len(words)); n >= 1; n-- {
				cand := strings.TrimRight(strings.Join(words[:n], " "), ".,;:!?)]}\"'”")
				if p, err := vault.LookupIn(cand, paths); err == nil {
					return p
				}
			}
		}
	}
	p, err := vault.LookupIn(name, paths)
	if err != nil {
		if ref.Heading != "" {
			return name + "#" + ref.Heading
		}
		return name
	}
	if ref.Heading != "" {
		return p + "#" + ref.Heading
	}
	return p
}

// readNamed reads, before the loop, the notes the goal names, as readNote
// calls of the run that every model sees in its conversation, so a note
// named [[like this]] or @this is read first in every mode and over every
// front-end. A name that resolves to no note gives readNote's error, with
// the close names the lookup found.
func (r *runState) readNamed(ctx context.Context) {
	refs := NamedNotes(r.goal)
	if len(refs) == 0 || !r.allowed(ToolReadNote) {
		return
	}
	paths := r.index.Paths()
	calls := make([]llm.ToolCall, 0, len(refs))
	var names []string
	for i, ref := range refs {
		b, _ := json.Marshal(ReadNoteArgs{NotePath: resolveRef(ref, r.goal, paths)})
		calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("%s%d", NamedCallPrefix, i+1), Name: ToolReadNote, Arguments: string(b)})
		names = append(names, ref.Raw)
	}
	r.messages = append(r.messages, llm.Message{Role: llm.RoleAssistant,
		Content: "Reading the notes the question names first: " + strings.Join(names, ", ") + ".", ToolCalls: calls})
	r.runTools(ctx, calls)
}
