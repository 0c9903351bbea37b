package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// ArgsError is a planner tool's argument validation failure. Its Error text
// is meant for the model: the tool name and every offending field with its
// JSON path (0-based indexes), e.g.
//
//	invalid write_todos arguments: todos[2].content: length 151 exceeds maximum 140
//
// Several problems are joined with "; ". Lengths are counted in characters
// (Unicode code points, i.e. runes), as JSON Schema's minLength/maxLength do.
type ArgsError struct {
	Tool     string
	Problems []string
}

// Error implements error.
func (e *ArgsError) Error() string {
	return "invalid " + e.Tool + " arguments: " + strings.Join(e.Problems, "; ")
}

// Unwrap makes errors.Is(err, ErrInvalidArgs) true.
func (e *ArgsError) Unwrap() error { return ErrInvalidArgs }

// validator checks raw tool arguments against a generated, resolved JSON
// schema plus tool-specific rules the schema cannot express.
type validator struct {
	tool     string
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	// extra runs after the schema walk found no problem.
	extra func(v any) []string
}

func newValidator(tool string, s *jsonschema.Schema, extra func(any) []string) *validator {
	r, err := s.Resolve(nil)
	if err != nil {
		// The schema is generated from our own structs: a failure is a bug
		// in this package, caught by its tests, never caused by input.
		panic(fmt.Sprintf("planner: resolve %s schema: %v", tool, err))
	}
	return &validator{tool: tool, schema: s, resolved: r, extra: extra}
}

// validate parses raw JSON arguments and checks them. Empty input is read as
// "{}" (some models send no text for an all-optional tool).
func (vd *validator) validate(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return &ArgsError{Tool: vd.tool, Problems: []string{"arguments: not valid JSON: " + err.Error()}}
	}
	var problems []string
	walk("", v, vd.schema, &problems)
	if len(problems) == 0 && vd.extra != nil {
		problems = vd.extra(v)
	}
	// The library validator is authoritative: whatever our readable walk
	// missed, it still refuses.
	if err := vd.resolved.Validate(v); err != nil && len(problems) == 0 {
		problems = []string{err.Error()}
	}
	if len(problems) > 0 {
		return &ArgsError{Tool: vd.tool, Problems: problems}
	}
	return nil
}

// walk collects readable schema violations of v, using only the keywords the
// planner schemas use (type, enum, min/maxLength, min/maxItems, items,
// properties, required, additionalProperties:false).
func walk(path string, v any, s *jsonschema.Schema, out *[]string) {
	at := path
	if at == "" {
		at = "arguments"
	}
	got := jsonType(v)
	if want := schemaTypes(s); len(want) > 0 && !slices.Contains(want, got) &&
		!(got == "integer" && slices.Contains(want, "number")) {
		*out = append(*out, fmt.Sprintf("%s: expected %s, got %s", at, strings.Join(want, " or "), got))
		return
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return e == v }) {
		opts := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			opts[i] = fmt.Sprint(e)
		}
		*out = append(*out, fmt.Sprintf("%s: %s is not one of %s", at, quote(v), strings.Join(opts, ", ")))
		return
	}
	switch x := v.(type) {
	case string:
		n := utf8.RuneCountInString(x)
		if s.MinLength != nil && n < *s.MinLength {
			*out = append(*out, fmt.Sprintf("%s: length %d is below minimum %d", at, n, *s.MinLength))
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			*out = append(*out, fmt.Sprintf("%s: length %d exceeds maximum %d", at, n, *s.MaxLength))
		}
	case []any:
		if s.MinItems != nil && len(x) < *s.MinItems {
			*out = append(*out, fmt.Sprintf("%s: %d items is below minimum %d", at, len(x), *s.MinItems))
		}
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			*out = append(*out, fmt.Sprintf("%s: %d items exceeds maximum %d", at, len(x), *s.MaxItems))
		}
		if s.Items != nil {
			for i, item := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), item, s.Items, out)
			}
		}
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := x[name]; !ok {
				*out = append(*out, fmt.Sprintf("%s: required field missing", join(path, name)))
			}
		}
		if ap := s.AdditionalProperties; ap != nil && ap.Not != nil {
			var unknown []string
			for k := range x {
				if _, ok := s.Properties[k]; !ok {
					unknown = append(unknown, k)
				}
			}
			sort.Strings(unknown)
			for _, k := range unknown {
				*out = append(*out, fmt.Sprintf("%s: unknown field (allowed: %s)", join(path, k), strings.Join(propertyNames(s), ", ")))
			}
		}
		for _, name := range propertyNames(s) {
			if pv, ok := x[name]; ok {
				walk(join(path, name), pv, s.Properties[name], out)
			}
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func quote(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// propertyNames lists properties in declaration order.
func propertyNames(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) == len(s.Properties) {
		return s.PropertyOrder
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func schemaTypes(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func intPtr(n int) *int { return &n }

// mustFor generates the schema of T; a failure is a bug in this package.
func mustFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("planner: generate schema: %v", err))
	}
	return s
}

// mustJSON marshals a generated schema; a failure is a bug in this package.
func mustJSON(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("planner: marshal schema: %v", err))
	}
	return b
}
