package search

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/vault-agent/vault-agent/vault"
)

// What a note's document holds for the operators that look at its parts
// (line:, block:, section:, task:, [property]), made once when the note is
// indexed: the fact terms of its tasks and properties (fFacts) and, stored,
// its sections, blocks and tasks (fParts, encodeParts). None of it is kept
// in memory: a search reads it from the index. The words of tasks are the
// body's: a task operator finds its candidates by them and a fact, and
// checks their stored tasks.

// Facts of a note's tasks, beside those of its properties (properties.go).
const (
	factTask     = "task"      // the note has a task
	factTaskTodo = "task-todo" // an open one
	factTaskDone = "task-done" // a done one
)

const lineTokenizerName = "vault_lines"

func init() {
	if err := registry.RegisterTokenizer(lineTokenizerName, func(map[string]interface{}, *registry.Cache) (analysis.Tokenizer, error) {
		return lineTokenizer{}, nil
	}); err != nil {
		panic(err)
	}
}

// lineTokenizer makes each line of its input one token, as written: the
// facts field holds one fact a line.
type lineTokenizer struct{}

func (lineTokenizer) Tokenize(input []byte) analysis.TokenStream {
	// One slab for the tokens: a note has a few dozen facts.
	slab := make([]analysis.Token, 0, bytes.Count(input, []byte{'\n'})+1)
	out := make(analysis.TokenStream, 0, cap(slab))
	start := 0
	for start < len(input) {
		end := start
		if i := bytes.IndexByte(input[start:], '\n'); i >= 0 {
			end += i
		} else {
			end = len(input)
		}
		if end > start {
			slab = append(slab, analysis.Token{Term: input[start:end], Start: start, End: end, Position: len(out) + 1, Type: analysis.AlphaNumeric})
			out = append(out, &slab[len(slab)-1])
		}
		start = end + 1
	}
	return out
}

// addNoteParts adds to d, the data of a note's document, its facts and
// parts, analysing property values with words.
func addNoteParts(d map[string]interface{}, words textWords, n *vault.Note) {
	facts := appendPropertyFacts(make([]byte, 0, 64*len(n.Properties)+32), words, n.Properties)
	if len(n.Tasks) > 0 {
		facts = append(facts, factTask+"\n"...)
		todo, done := false, false
		for _, t := range n.Tasks {
			todo, done = todo || !t.Done, done || t.Done
		}
		if todo {
			facts = append(facts, factTaskTodo+"\n"...)
		}
		if done {
			facts = append(facts, factTaskDone+"\n"...)
		}
	}
	if len(facts) > 0 {
		d[fFacts] = string(facts)
	}
	if len(n.Sections)+len(n.Blocks)+len(n.Tasks) > 0 {
		d[fParts] = string(encodeParts(n.Sections, n.Blocks, n.Tasks))
	}
}

// encodeParts packs the line ranges of a note's sections and blocks and
// its tasks, as uvarints and strings (uvarint length, bytes): the count of
// sections, each as its start after the previous one's end, its length and
// its heading's level; the count of blocks, each as start and length the
// same way; the count of tasks, each as its line after the previous one's,
// then its status, text, section, due, scheduled, start and completed
// dates.
func encodeParts(sections []vault.Section, blocks []vault.Span, tasks []vault.Task) []byte {
	b := make([]byte, 0, 6+3*len(sections)+2*len(blocks)+64*len(tasks))
	b = binary.AppendUvarint(b, uint64(len(sections)))
	prev := 0
	for _, s := range sections {
		b = binary.AppendUvarint(b, uint64(max(0, s.Start-prev)))
		b = binary.AppendUvarint(b, uint64(max(0, s.End-s.Start)))
		b = binary.AppendUvarint(b, uint64(s.Level))
		prev = s.End
	}
	b = binary.AppendUvarint(b, uint64(len(blocks)))
	prev = 0
	for _, s := range blocks {
		b = binary.AppendUvarint(b, uint64(max(0, s.Start-prev)))
		b = binary.AppendUvarint(b, uint64(max(0, s.End-s.Start)))
		prev = s.End
	}
	b = binary.AppendUvarint(b, uint64(len(tasks)))
	prev = 0
	for _, t := range tasks {
		b = binary.AppendUvarint(b, uint64(max(0, t.Line-prev)))
		prev = t.Line
		for _, s := range [...]string{t.Status, t.Text, t.Section, t.Due, t.Scheduled, t.Start, t.Completed} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	return b
}

// partsReader reads encodeParts; the first error sticks.
type partsReader struct {
	b   []byte
	err error
}

func (r *partsReader) int() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<30 {
		r.err = errors.New("note parts: bad number")
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// count reads a count no larger than the bytes left can hold.
func (r *partsReader) count() int {
	n := r.int()
	if n > len(r.b) {
		r.err = errors.New("note parts: bad count")
		return 0
	}
	return n
}

func (r *partsReader) str() string {
	n := r.int()
	if r.err != nil || n > len(r.b) {
		r.err = errors.New("note parts: truncated")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// decodeParts unpacks encodeParts; tasks only when withTasks is set.
func decodeParts(s string, withTasks bool) (sections []vault.Section, blocks []vault.Span, tasks []vault.Task, err error) {
	r := &partsReader{b: []byte(s)}
	n := r.count()
	sections = make([]vault.Section, 0, n)
	prev := 0
	for i := 0; i < n && r.err == nil; i++ {
		start := prev + r.int()
		end := start + r.int()
		sections = append(sections, vault.Section{Span: vault.Span{Start: start, End: end}, Level: r.int()})
		prev = end
	}
	n = r.count()
	blocks = make([]vault.Span, 0, n)
	prev = 0
	for i := 0; i < n && r.err == nil; i++ {
		start := prev + r.int()
		end := start + r.int()
		blocks = append(blocks, vault.Span{Start: start, End: end})
		prev = end
	}
	if withTasks {
		n = r.count()
		tasks = make([]vault.Task, 0, n)
		prev = 0
		for i := 0; i < n && r.err == nil; i++ {
			t := vault.Task{Line: prev + r.int()}
			prev = t.Line
			t.Status, t.Text, t.Section = r.str(), r.str(), r.str()
			t.Due, t.Scheduled, t.Start, t.Completed = r.str(), r.str(), r.str(), r.str()
			t.Done = t.Status != " "
			tasks = append(tasks, t)
		}
	}
	if r.err != nil {
		return nil, nil, nil, r.err
	}
	return sections, blocks, tasks, nil
}

// decodeTasks reads the stored tasks of a note from its parts.
func decodeTasks(s string) ([]vault.Task, error) {
	if s == "" {
		return nil, nil
	}
	_, _, tasks, err := decodeParts(s, true)
	return tasks, err
}
