package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// todosJSON builds write_todos arguments with n valid todos, then applies
// edit to the decoded map so a case can break one field.
func todosJSON(t *testing.T, n int, edit func(m map[string]any)) []byte {
	t.Helper()
	todos := make([]any, n)
	for i := range todos {
		todos[i] = map[string]any{"id": fmt.Sprintf("s%d", i), "content": fmt.Sprintf("Step %d", i), "status": "pending"}
	}
	m := map[string]any{"todos": todos}
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func todo(m map[string]any, i int) map[string]any { return m["todos"].([]any)[i].(map[string]any) }

func TestParseWriteTodos(t *testing.T) {
	set := func(i int, field string, v any) func(map[string]any) {
		return func(m map[string]any) { todo(m, i)[field] = v }
	}
	tests := []struct {
		name string
		raw  []byte
		want []string // substrings of the error; nil means valid
		// schemaOnly marks rules the JSON schema cannot express (the library
		// validator accepts them).
		schemaOnly bool
	}{
		{name: "one todo", raw: todosJSON(t, 1, nil)},
		{name: "zero todos", raw: todosJSON(t, 0, nil), want: []string{"todos: 0 items is below minimum 1"}},
		{name: "eight todos", raw: todosJSON(t, 8, nil)},
		{name: "nine todos", raw: todosJSON(t, 9, nil), want: []string{"todos: 9 items exceeds maximum 8"}},
		{name: "id empty", raw: todosJSON(t, 1, set(0, "id", "")), want: []string{"todos[0].id: length 0 is below minimum 1"}},
		{name: "id 1", raw: todosJSON(t, 1, set(0, "id", "a"))},
		{name: "id 40", raw: todosJSON(t, 1, set(0, "id", strings.Repeat("a", 40)))},
		{name: "id 41", raw: todosJSON(t, 1, set(0, "id", strings.Repeat("a", 41))), want: []string{"todos[0].id: length 41 exceeds maximum 40"}},
		{name: "content empty", raw: todosJSON(t, 2, set(1, "content", "")), want: []string{"todos[1].content: length 0 is below minimum 1"}},
		{name: "content 1", raw: todosJSON(t, 1, set(0, "content", "x"))},
		{name: "content 140", raw: todosJSON(t, 1, set(0, "content", strings.Repeat("c", 140)))},
		{name: "content 141", raw: todosJSON(t, 1, set(0, "content", strings.Repeat("c", 141))), want: []string{"todos[0].content: length 141 exceeds maximum 140"}},
		{name: "content 140 non-ASCII", raw: todosJSON(t, 1, set(0, "content", strings.Repeat("é", 140)))},
		{name: "content 141 non-ASCII", raw: todosJSON(t, 1, set(0, "content", strings.Repeat("日", 141))), want: []string{"todos[0].content: length 141 exceeds maximum 140"}},
		{name: "id 40 emoji", raw: todosJSON(t, 1, set(0, "id", strings.Repeat("🙂", 40)))},
		{name: "id 41 emoji", raw: todosJSON(t, 1, set(0, "id", strings.Repeat("🙂", 41))), want: []string{"todos[0].id: length 41 exceeds maximum 40"}},
		{name: "focus 40", raw: todosJSON(t, 1, func(m map[string]any) { m["focus"] = strings.Repeat("f", 40) })},
		{name: "focus 41", raw: todosJSON(t, 1, func(m map[string]any) { m["focus"] = strings.Repeat("f", 41) }), want: []string{"focus: length 41 exceeds maximum 40"}},
		{name: "focus empty", raw: todosJSON(t, 1, func(m map[string]any) { m["focus"] = "" })},
		{name: "note 200", raw: todosJSON(t, 1, func(m map[string]any) { m["note"] = strings.Repeat("ñ", 200) })},
		{name: "note 201", raw: todosJSON(t, 1, func(m map[string]any) { m["note"] = strings.Repeat("n", 201) }), want: []string{"note: length 201 exceeds maximum 200"}},
		{name: "status in_progress", raw: todosJSON(t, 1, set(0, "status", "in_progress"))},
		{name: "status completed", raw: todosJSON(t, 1, set(0, "status", "completed"))},
		{name: "status bad", raw: todosJSON(t, 1, set(0, "status", "done")), want: []string{`todos[0].status: "done" is not one of pending, in_progress, completed`}},
		{name: "status case", raw: todosJSON(t, 1, set(0, "status", "Pending")), want: []string{`todos[0].status: "Pending" is not one of`}},
		{name: "status number", raw: todosJSON(t, 1, set(0, "status", 1)), want: []string{"todos[0].status: expected string, got integer"}},
		{name: "missing todos", raw: []byte(`{"focus":"x"}`), want: []string{"todos: required field missing"}},
		{name: "empty arguments", raw: []byte(``), want: []string{"todos: required field missing"}},
		{name: "todos null", raw: []byte(`{"todos":null}`), want: []string{"todos: expected array, got null"}},
		{name: "todos string", raw: []byte(`{"todos":"read"}`), want: []string{"todos: expected array, got string"}},
		{name: "arguments array", raw: []byte(`[1]`), want: []string{"arguments: expected object, got array"}},
		{name: "missing content", raw: todosJSON(t, 1, func(m map[string]any) { delete(todo(m, 0), "content") }), want: []string{"todos[0].content: required field missing"}},
		{name: "missing id and status", raw: todosJSON(t, 1, func(m map[string]any) { delete(todo(m, 0), "id"); delete(todo(m, 0), "status") }), want: []string{"todos[0].id: required field missing", "todos[0].status: required field missing"}},
		{name: "extra root field", raw: todosJSON(t, 1, func(m map[string]any) { m["priority"] = 1 }), want: []string{"priority: unknown field (allowed: todos, focus, note)"}},
		{name: "extra todo field", raw: todosJSON(t, 1, set(0, "done", true)), want: []string{"todos[0].done: unknown field (allowed: id, content, status)"}},
		{name: "duplicate ids", raw: todosJSON(t, 3, set(2, "id", "s0")), want: []string{`todos[2].id: duplicate id "s0" (already used by todos[0])`}, schemaOnly: true},
		{name: "several problems", raw: todosJSON(t, 3, func(m map[string]any) {
			todo(m, 0)["id"] = ""
			todo(m, 2)["content"] = strings.Repeat("x", 151)
		}), want: []string{"todos[0].id: length 0 is below minimum 1", "; todos[2].content: length 151 exceeds maximum 140"}},
		{name: "malformed JSON", raw: []byte(`{"todos":[`), want: []string{"arguments: not valid JSON"}, schemaOnly: true},
	}
	resolved, err := WriteTodosSchema().Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args, err := ParseWriteTodos(tc.raw)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if len(args.Todos) == 0 {
					t.Fatal("no todos decoded")
				}
				// Typed validation agrees with raw validation.
				if err := args.Validate(); err != nil {
					t.Fatalf("Validate of parsed args: %v", err)
				}
			} else {
				if err == nil {
					t.Fatalf("want error containing %q, got nil", tc.want)
				}
				if !errors.Is(err, ErrInvalidArgs) {
					t.Errorf("error %v does not wrap ErrInvalidArgs", err)
				}
				if !strings.HasPrefix(err.Error(), "invalid write_todos arguments: ") {
					t.Errorf("error %q lacks the tool prefix", err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
			}
			// The library validator is the reference for every schema rule.
			if tc.schemaOnly {
				return
			}
			var v any
			if len(tc.raw) == 0 {
				v = map[string]any{}
			} else if err := json.Unmarshal(tc.raw, &v); err != nil {
				t.Fatal(err)
			}
			if libErr := resolved.Validate(v); (libErr == nil) != (tc.want == nil) {
				t.Errorf("jsonschema Validate = %v, our verdict error=%v", libErr, tc.want != nil)
			}
		})
	}
}

func TestErrorTextExact(t *testing.T) {
	raw := todosJSON(t, 3, func(m map[string]any) { todo(m, 2)["content"] = strings.Repeat("x", 151) })
	_, err := ParseWriteTodos(raw)
	const want = "invalid write_todos arguments: todos[2].content: length 151 exceeds maximum 140"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestWriteTodosSchemaShape(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal(WriteTodosParameters(), &m); err != nil {
		t.Fatal(err)
	}
	todos := m["properties"].(map[string]any)["todos"].(map[string]any)
	if todos["type"] != "array" || todos["minItems"] != 1.0 || todos["maxItems"] != 8.0 {
		t.Errorf("todos schema = %v", todos)
	}
	item := todos["items"].(map[string]any)
	props := item["properties"].(map[string]any)
	if got := props["content"].(map[string]any)["maxLength"]; got != 140.0 {
		t.Errorf("content maxLength = %v", got)
	}
	if got := props["status"].(map[string]any)["enum"]; fmt.Sprint(got) != "[pending in_progress completed]" {
		t.Errorf("status enum = %v", got)
	}
	if item["additionalProperties"] != false || m["additionalProperties"] != false {
		t.Errorf("additionalProperties not false: %v / %v", item["additionalProperties"], m["additionalProperties"])
	}
	if req := fmt.Sprint(m["required"]); req != "[todos]" {
		t.Errorf("required = %s", req)
	}
	if d, _ := props["id"].(map[string]any)["description"].(string); d == "" {
		t.Error("id has no description")
	}
	// Callers get copies: mutating one does not change the package schema.
	s := WriteTodosSchema()
	s.Properties["todos"].MaxItems = intPtr(100)
	if _, err := ParseWriteTodos(todosJSON(t, 9, nil)); err == nil {
		t.Error("schema copy mutation leaked into validation")
	}
}

func TestParseProgress(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
	}{
		{name: "empty object", raw: `{}`},
		{name: "empty text", raw: ``},
		{name: "all fields", raw: `{"step_id":"a","step_summary":"did a","next_step":"b","plan_status":"in_progress"}`},
		{name: "completed", raw: `{"plan_status":"completed"}`},
		{name: "bad status", raw: `{"plan_status":"done"}`, want: `plan_status: "done" is not one of completed, in_progress`},
		{name: "unknown field", raw: `{"stepId":"a"}`, want: "stepId: unknown field"},
		{name: "summary too long", raw: `{"step_summary":"` + strings.Repeat("s", 201) + `"}`, want: "step_summary: length 201 exceeds maximum 200"},
		{name: "step id too long", raw: `{"step_id":"` + strings.Repeat("s", 41) + `"}`, want: "step_id: length 41 exceeds maximum 40"},
		{name: "wrong type", raw: `{"step_id":3}`, want: "step_id: expected string, got integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProgress([]byte(tc.raw))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "invalid plan_progress arguments: ") {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func FuzzParseWriteTodos(f *testing.F) {
	f.Add([]byte(`{"todos":[{"id":"a","content":"b","status":"pending"}]}`))
	f.Add([]byte(`{"todos":[{"id":1}],"x":[]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := NewState()
		res, err := s.ApplyJSON(raw)
		if err == nil && (res.Revision != 1 || res.TodoCount < MinTodos || res.TodoCount > MaxTodos) {
			t.Fatalf("accepted %q with result %+v", raw, res)
		}
		_, _ = s.ProgressJSON(raw)
	})
}
