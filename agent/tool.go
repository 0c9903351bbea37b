package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/llm"
)

// Tool is one tool the model may call: a name, a version, a description, a
// JSON schema generated from a Go struct, a per-tool timeout, and one-line
// summaries of a call and of its result for the reasoning block.
//
// A tool's work runs in one of two ways. Vault tools (run) read the index
// and the clock on a goroutine of their own, bounded by Timeout; a call
// that times out is abandoned while its goroutine may still be running, so
// run sees only a toolEnv, never the run's state. What a vault tool
// remembers in the run (a search made, a note read) is recorded by after,
// on the run's goroutine, and only for a result that arrived in time.
// Tools that exist to change the run's own state (the planner tools,
// request_input) are inline: they run on the run's goroutine.
type Tool struct {
	Name        string
	Version     string
	Description string
	// Parameters is the JSON schema of the arguments.
	Parameters json.RawMessage
	// Timeout bounds a vault tool's call (default 30s); inline tools are
	// bounded by the run itself.
	Timeout time.Duration

	resolved *jsonschema.Resolved
	run      func(ctx context.Context, env toolEnv, raw json.RawMessage) (any, error)
	inline   func(ctx context.Context, r *runState, raw json.RawMessage) (any, error)
	// before, on the run's goroutine, may answer a call without running it.
	before func(r *runState, raw json.RawMessage) (any, bool)
	// after records a result that arrived in time, on the run's goroutine.
	after   func(r *runState, raw json.RawMessage, out any)
	summary func(raw json.RawMessage) string
	outcome func(out any) string
}

// Def returns the tool as offered to the model.
func (t *Tool) Def() llm.ToolDef {
	return llm.ToolDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
}

// toolSpec describes a tool whose arguments are the Go type A. Exactly one
// of run and inline is set (see Tool).
type toolSpec[A any] struct {
	name, version, description string
	timeout                    time.Duration
	// tune adjusts the generated schema (limits, enums) before it is resolved.
	tune    func(s *jsonschema.Schema)
	run     func(ctx context.Context, env toolEnv, args A) (any, error)
	inline  func(ctx context.Context, r *runState, args A) (any, error)
	before  func(r *runState, args A) (any, bool)
	after   func(r *runState, args A, out any)
	summary func(args A) string
	outcome func(out any) string
}

// defineTool builds a Tool from a spec, generating its schema from A.
func defineTool[A any](spec toolSpec[A]) *Tool {
	schema, err := jsonschema.For[A](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: schema: %v", spec.name, err))
	}
	if spec.tune != nil {
		spec.tune(schema)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: resolve schema: %v", spec.name, err))
	}
	params, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("tool %s: marshal schema: %v", spec.name, err))
	}
	decode := func(raw json.RawMessage) (A, error) {
		var a A
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		err := dec.Decode(&a)
		return a, err
	}
	invalid := func(err error) error { return fmt.Errorf("invalid arguments for %s: %v", spec.name, err) }
	t := &Tool{
		Name:        spec.name,
		Version:     spec.version,
		Description: spec.description,
		Parameters:  params,
		Timeout:     spec.timeout,
		resolved:    resolved,
		outcome:     spec.outcome,
	}
	if spec.run != nil {
		t.run = func(ctx context.Context, env toolEnv, raw json.RawMessage) (any, error) {
			a, err := decode(raw)
			if err != nil {
				return nil, invalid(err)
			}
			return spec.run(ctx, env, a)
		}
	}
	if spec.inline != nil {
		t.inline = func(ctx context.Context, r *runState, raw json.RawMessage) (any, error) {
			a, err := decode(raw)
			if err != nil {
				return nil, invalid(err)
			}
			return spec.inline(ctx, r, a)
		}
	}
	if spec.before != nil {
		t.before = func(r *runState, raw json.RawMessage) (any, bool) {
			a, err := decode(raw)
			if err != nil {
				return nil, false
			}
			return spec.before(r, a)
		}
	}
	if spec.after != nil {
		t.after = func(r *runState, raw json.RawMessage, out any) {
			if a, err := decode(raw); err == nil {
				spec.after(r, a, out)
			}
		}
	}
	if spec.summary != nil {
		t.summary = func(raw json.RawMessage) string {
			a, err := decode(raw)
			if err != nil {
				return fmt.Sprintf("Calling %s", spec.name)
			}
			return spec.summary(a)
		}
	}
	return t
}

// toolError is a failure the model sees as the tool's result and may correct.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func toolErrorf(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// normalizeArgs turns the model's raw argument text into a JSON object.
// Empty text means no arguments.
func normalizeArgs(raw string) (json.RawMessage, any, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "null" {
		raw = "{}"
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, nil, toolErrorf("arguments are not valid JSON (%v); send a JSON object matching the tool's schema", err)
	}
	if str, ok := v.(string); ok {
		// Encoded twice ("{\"query\": ...}"), as some models do.
		var inner map[string]any
		if json.Unmarshal([]byte(str), &inner) == nil {
			v, raw = inner, str
		}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, nil, toolErrorf("arguments must be a JSON object, got %s", jsonKind(v))
	}
	return json.RawMessage(raw), v, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return "null"
	}
}

// coerceArgs repairs, in place, the slips models make in arguments where the
// intent is unambiguous: a number or boolean sent as a string ("chunkIndex":
// "2") and one string where a list of strings is expected. It reports
// whether it changed anything; everything else is left to validation.
func coerceArgs(s *jsonschema.Schema, args map[string]any) bool {
	if s == nil {
		return false
	}
	changed := false
	for name, val := range args {
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		switch x := val.(type) {
		case string:
			t := strings.TrimSpace(x)
			switch {
			case schemaAllows(ps, "integer"):
				if n, err := strconv.ParseInt(t, 10, 64); err == nil {
					args[name], changed = n, true
				}
			case schemaAllows(ps, "number"):
				if f, err := strconv.ParseFloat(t, 64); err == nil {
					args[name], changed = f, true
				}
			case schemaAllows(ps, "boolean"):
				if b, err := strconv.ParseBool(t); err == nil {
					args[name], changed = b, true
				}
			case schemaAllows(ps, "array") && ps.Items != nil && schemaAllows(ps.Items, "string"):
				args[name], changed = []any{x}, true
			}
		case map[string]any:
			if coerceArgs(ps, x) {
				changed = true
			}
		}
	}
	return changed
}

// schemaAllows reports whether s admits JSON values of type typ.
func schemaAllows(s *jsonschema.Schema, typ string) bool {
	return s.Type == typ || slices.Contains(s.Types, typ)
}

// Summary returns the one-line description of a call.
func (t *Tool) Summary(raw json.RawMessage) string {
	if t.summary == nil {
		return fmt.Sprintf("Calling %s", t.Name)
	}
	if fixed, _, err := t.prepare(string(raw)); err == nil {
		raw = fixed
	}
	return t.summary(raw)
}

// prepare parses raw arguments into an object and repairs slips (see
// coerceArgs), returning the arguments as the tool will decode them.
func (t *Tool) prepare(rawArgs string) (json.RawMessage, map[string]any, error) {
	raw, v, err := normalizeArgs(rawArgs)
	if err != nil {
		return nil, nil, err
	}
	obj := v.(map[string]any)
	if t.resolved != nil && coerceArgs(t.resolved.Schema(), obj) {
		if b, err := json.Marshal(obj); err == nil {
			raw = b
		}
	}
	return raw, obj, nil
}

// Outcome returns the one-line description of a result or failure.
func (t *Tool) Outcome(out any, err error) string {
	if err != nil {
		return fmt.Sprintf("%s failed: %s", t.Name, truncate.FirstLine(err.Error(), 120))
	}
	if t.outcome == nil {
		return fmt.Sprintf("Completed %s", t.Name)
	}
	return t.outcome(out)
}

// Call validates raw arguments and runs the tool, recovering a panic into
// an error. A vault tool runs on its own goroutine under its timeout; when
// it times out, Call returns and the goroutine is left to finish alone,
// with nothing of the run in its hands. Errors are model-facing unless ctx
// itself ended. Call is made on the run's goroutine.
func (t *Tool) Call(ctx context.Context, env toolEnv, r *runState, rawArgs string) (out any, err error) {
	raw, v, err := t.prepare(rawArgs)
	if err != nil {
		return nil, err
	}
	if t.resolved == nil {
		// The tool validates its own arguments (the planner tools do).
	} else if err := t.resolved.Validate(v); err != nil {
		return nil, toolErrorf("invalid arguments for %s: %v", t.Name, err)
	}
	if t.inline != nil {
		defer func() {
			if p := recover(); p != nil {
				out, err = nil, t.panicked(env, p)
			}
		}()
		return t.inline(ctx, r, raw)
	}
	if t.before != nil {
		if out, ok := t.before(r, raw); ok {
			return out, nil
		}
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	type outcome struct {
		out any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: t.panicked(env, p)}
			}
		}()
		o, e := t.run(tctx, env, raw)
		done <- outcome{o, e}
	}()
	select {
	case o := <-done:
		if o.err != nil && errors.Is(o.err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, toolErrorf("tool %s timed out after %s", t.Name, timeout)
		}
		if o.err == nil && t.after != nil {
			t.after(r, raw, o.out)
		}
		return o.out, o.err
	case <-tctx.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, toolErrorf("tool %s timed out after %s", t.Name, timeout)
	}
}

// panicked logs a tool's panic and turns it into a model-facing error.
func (t *Tool) panicked(env toolEnv, p any) error {
	if env.logger != nil {
		env.logger.Error("tool panicked", "tool", t.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	}
	return toolErrorf("tool %s panicked: %v", t.Name, p)
}

// Registry is a set of tools by name. It is read-only after construction
// and safe for concurrent use.
type Registry struct {
	tools map[string]*Tool
}

// NewRegistry returns a registry of the given tools.
func NewRegistry(tools ...*Tool) *Registry {
	r := &Registry{tools: make(map[string]*Tool, len(tools))}
	for _, t := range tools {
		r.tools[t.Name] = t
	}
	return r
}

// Get returns a tool by name.
func (r *Registry) Get(name string) (*Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the tool names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Defs returns the tool definitions offered to the model, filtered by
// keep (nil keeps all), in name order.
func (r *Registry) Defs(keep func(name string) bool) []llm.ToolDef {
	var defs []llm.ToolDef
	for _, n := range r.Names() {
		if keep == nil || keep(n) {
			defs = append(defs, r.tools[n].Def())
		}
	}
	return defs
}
