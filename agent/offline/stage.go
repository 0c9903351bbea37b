package offline

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/vault-agent/vault-agent/llm"
)

// stageTurn answers a [stage:NAME] prompt: tool_routing acts like react
// until it is done; every other stage (and tool_routing once done) returns
// a JSON object for the stage's output schema.
func (st *convState) stageTurn(name string, msgs []llm.Message) *llm.Response {
	if name == "tool_routing" && st.tools {
		if s := st.next(); !s.final {
			return &llm.Response{Content: s.text, ToolCalls: s.calls}
		}
	}
	schema := findSchema(msgs)
	known := st.stageValues(name)
	var out map[string]any
	if schema != nil {
		out, _ = fillSchema(schema, known, st.goal).(map[string]any)
	}
	if out == nil {
		out = map[string]any{}
	}
	// The standard stages always carry their own fields.
	for _, k := range standardStageFields[name] {
		if _, ok := out[k]; !ok {
			out[k] = known[k]
		}
	}
	b, _ := json.Marshal(out)
	return &llm.Response{Content: string(b)}
}

var standardStageFields = map[string][]string{
	"goal_framing":  {"goal", "constraints"},
	"decomposition": {"subtasks"},
	"synthesis":     {"answer", "citations"},
	"tool_routing":  {"summary"},
}

// stageValues are the values the offline model can give for common field
// names.
func (st *convState) stageValues(stage string) map[string]any {
	constraints := []string{"Answer only from the notes in the vault", "Cite every note used as [[Note]]"}
	if st.timeExpr != "" {
		constraints = append([]string{"Only notes from " + st.timeExpr}, constraints...)
	}
	subtasks := []string{"Search the vault for " + st.keywordText(), "Read the most relevant notes", "Answer with citations"}
	if st.timeExpr != "" {
		subtasks = append([]string{"Work out the dates for " + st.timeExpr}, subtasks...)
	}
	v := map[string]any{
		"goal":        st.goal,
		"question":    st.goal,
		"query":       st.terms.query(),
		"keywords":    nonNil(st.terms.all()),
		"constraints": constraints,
		"subtasks":    subtasks,
		"steps":       subtasks,
	}
	// The answer is built only for the stages that need it.
	if stage == "synthesis" || stage == "tool_routing" || stage == "answer" || stage == "final" {
		ans := st.answer()
		v["answer"] = ans
		v["final_answer"] = ans
		v["citations"] = citations(ans)
		v["sources"] = v["citations"]
		v["summary"] = short(st.observation(), 200)
		v["done"] = true
		v["finish"] = true
		v["complete"] = true
	}
	return v
}

// findSchema returns the first JSON object with "properties" found in the
// system messages.
func findSchema(msgs []llm.Message) map[string]any {
	for _, m := range msgs {
		if m.Role != llm.RoleSystem {
			continue
		}
		s := m.Content
		for i, tries := 0, 0; i < len(s) && tries < 200; i++ {
			if s[i] != '{' {
				continue
			}
			tries++
			var obj map[string]any
			if err := json.NewDecoder(strings.NewReader(s[i:])).Decode(&obj); err != nil {
				continue
			}
			if _, ok := obj["properties"].(map[string]any); ok {
				return obj
			}
		}
	}
	return nil
}

// fillSchema builds a value matching schema, using known values by property
// name where their type fits and short defaults elsewhere.
func fillSchema(schema map[string]any, known map[string]any, text string) any {
	typ := schemaType(schema)
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			ps, _ := props[k].(map[string]any)
			if ps == nil {
				ps = map[string]any{}
			}
			if v, ok := known[k]; ok && fits(v, ps) {
				out[k] = adapt(v, ps)
				continue
			}
			out[k] = fillSchema(ps, nil, text)
		}
		return out
	case "array":
		return []any{}
	case "string":
		if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
			return enum[0]
		}
		return short(text, 120)
	case "boolean":
		return false
	case "integer", "number":
		return 0
	}
	return nil
}

func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok && str != "null" {
				return str
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

// fits reports whether a known value can fill a property of schema ps.
func fits(v any, ps map[string]any) bool {
	switch schemaType(ps) {
	case "string":
		_, ok := v.(string)
		return ok
	case "array":
		_, ok := v.([]string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "":
		return true
	}
	return false
}

// adapt shapes a known value for ps: a list of strings becomes a list of
// objects when the items are objects (their string fields get the text).
func adapt(v any, ps map[string]any) any {
	list, ok := v.([]string)
	if !ok {
		return v
	}
	items, _ := ps["items"].(map[string]any)
	if items == nil || schemaType(items) != "object" {
		out := make([]any, len(list))
		for i, s := range list {
			out[i] = s
		}
		return out
	}
	out := make([]any, len(list))
	for i, s := range list {
		obj, _ := fillSchema(items, map[string]any{"id": "s" + strconv.Itoa(i+1)}, s).(map[string]any)
		out[i] = obj
	}
	return out
}
