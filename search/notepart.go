package search

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/vault-agent/vault-agent/vault"
)

// What a note's document holds for the operators that look at its parts
// (line:, block:, section:, task:, [property]), made once when the note is
// indexed: the fact terms of its tasks and properties (fFacts), the text of
// its open and done tasks (fTaskTodo, fTaskDone), and stored, its tasks
// (fTasks) and the line ranges of its sections and blocks (fSpans). None of
// it is kept in memory: a search reads it from the index.

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
	out := make(analysis.TokenStream, 0, 1+len(input)/16)
	start := 0
	for start < len(input) {
		end := start
		for end < len(input) && input[end] != '\n' {
			end++
		}
		if end > start {
			out = append(out, &analysis.Token{Term: input[start:end], Start: start, End: end, Position: len(out) + 1, Type: analysis.AlphaNumeric})
		}
		start = end + 1
	}
	return out
}

// addNoteParts adds to d, the data of a note's document, its facts, task
// texts, tasks and spans, analysing property values with words.
func addNoteParts(d map[string]interface{}, words textWords, n *vault.Note) {
	facts := appendPropertyFacts(nil, words, n.Properties)
	if len(n.Tasks) > 0 {
		var todo, done []string
		for _, t := range n.Tasks {
			if t.Done {
				done = append(done, t.Text)
			} else {
				todo = append(todo, t.Text)
			}
		}
		facts = append(facts, factTask+"\n"...)
		if len(todo) > 0 {
			facts = append(facts, factTaskTodo+"\n"...)
			d[fTaskTodo] = strings.Join(todo, "\n")
		}
		if len(done) > 0 {
			facts = append(facts, factTaskDone+"\n"...)
			d[fTaskDone] = strings.Join(done, "\n")
		}
		if b, err := json.Marshal(n.Tasks); err == nil {
			d[fTasks] = string(b)
		}
	}
	if len(facts) > 0 {
		d[fFacts] = string(facts)
	}
	if len(n.Sections) > 0 || len(n.Blocks) > 0 {
		d[fSpans] = string(encodeSpans(n.Sections, n.Blocks))
	}
}

// encodeSpans packs the line ranges of a note's sections and blocks:
// uvarints, each range as its start after the previous one's end and its
// length; sections with their heading's level.
func encodeSpans(sections []vault.Section, blocks []vault.Span) []byte {
	b := make([]byte, 0, 4+3*len(sections)+2*len(blocks))
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
	return b
}

// decodeSpans unpacks encodeSpans.
func decodeSpans(b []byte) (sections []vault.Section, blocks []vault.Span, err error) {
	next := func() int {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			err = errors.New("spans: truncated")
			return 0
		}
		b = b[n:]
		return int(min(v, 1<<30))
	}
	count := next()
	if count > len(b) {
		return nil, nil, errors.New("spans: bad count")
	}
	sections = make([]vault.Section, 0, count)
	prev := 0
	for i := 0; i < count && err == nil; i++ {
		start := prev + next()
		end := start + next()
		sections = append(sections, vault.Section{Span: vault.Span{Start: start, End: end}, Level: next()})
		prev = end
	}
	count = next()
	if count > len(b) {
		return nil, nil, errors.New("spans: bad count")
	}
	blocks = make([]vault.Span, 0, count)
	prev = 0
	for i := 0; i < count && err == nil; i++ {
		start := prev + next()
		end := start + next()
		blocks = append(blocks, vault.Span{Start: start, End: end})
		prev = end
	}
	if err != nil {
		return nil, nil, err
	}
	return sections, blocks, nil
}

// decodeTasks reads the stored tasks of a note.
func decodeTasks(s string) ([]vault.Task, error) {
	if s == "" {
		return nil, nil
	}
	var ts []vault.Task
	if err := json.Unmarshal([]byte(s), &ts); err != nil {
		return nil, err
	}
	return ts, nil
}
