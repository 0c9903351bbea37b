package planner

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Checking a policy document: policyChecker walks the decoded YAML or JSON,
// builds the Policy and collects every problem with its location.

// policyChecker walks a decoded policy document, building the Policy and
// collecting located problems.
type policyChecker struct {
	tools    []string // the tools a stage may allow; nil: any
	problems []string
}

func (c *policyChecker) addf(path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	c.problems = append(c.problems, msg)
}

func keyPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// object checks that v is a mapping with only the known keys.
func (c *policyChecker) object(v any, path string, known ...string) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		what := "the document"
		if path != "" {
			what = path
		}
		c.addf("", "%s: want a mapping, got %s", what, describeValue(v))
		return nil, false
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	sorted := slices.Clone(known)
	sort.Strings(sorted)
	for _, k := range unknown {
		c.addf(keyPath(path, k), "unknown key (known keys: %s)", strings.Join(sorted, ", "))
	}
	return m, true
}

func (c *policyChecker) str(m map[string]any, key, path string, required bool) string {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			c.addf(keyPath(path, key), "required")
		}
		return ""
	}
	switch x := v.(type) {
	case string:
		if required && strings.TrimSpace(x) == "" {
			c.addf(keyPath(path, key), "must not be empty")
		}
		return x
	case json.Number:
		return x.String()
	case int, float64:
		if key == "version" {
			return fmt.Sprint(x)
		}
	}
	c.addf(keyPath(path, key), "want a string, got %s", describeValue(v))
	return ""
}

func (c *policyChecker) integer(m map[string]any, key, path string, lo, hi, def int) int {
	v, ok := m[key]
	if !ok || v == nil {
		return def
	}
	var n float64
	switch x := v.(type) {
	case int:
		n = float64(x)
	case int64:
		n = float64(x)
	case uint64:
		n = float64(x)
	case float64:
		n = x
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			c.addf(keyPath(path, key), "want an integer, got %s", x)
			return def
		}
		n = f
	default:
		c.addf(keyPath(path, key), "want an integer, got %s", describeValue(v))
		return def
	}
	if n != math.Trunc(n) {
		c.addf(keyPath(path, key), "want an integer, got %v", n)
		return def
	}
	if n < float64(lo) || n > float64(hi) {
		c.addf(keyPath(path, key), "%v is out of range %d..%d", n, lo, hi)
		return def
	}
	return int(n)
}

func (c *policyChecker) strList(m map[string]any, key, path string) []string {
	v, ok := m[key]
	if !ok || v == nil {
		return []string{}
	}
	list, ok := v.([]any)
	if !ok {
		c.addf(keyPath(path, key), "want a list of strings, got %s", describeValue(v))
		return []string{}
	}
	out := make([]string, 0, len(list))
	for i, x := range list {
		s, ok := x.(string)
		if !ok {
			c.addf(fmt.Sprintf("%s[%d]", keyPath(path, key), i), "want a string, got %s", describeValue(x))
			continue
		}
		out = append(out, s)
	}
	return out
}

var reStageName = regexp.MustCompile(`^[A-Za-z0-9_.\-]+$`)

func (c *policyChecker) policy(doc any) *Policy {
	m, ok := c.object(doc, "", "name", "version", "description", "stages")
	if !ok {
		return nil
	}
	p := &Policy{
		Name:        c.str(m, "name", "", false),
		Version:     c.str(m, "version", "", false),
		Description: c.str(m, "description", "", false),
	}
	if p.Name == "" {
		p.Name = "policy"
	}
	list, isList := m["stages"].([]any)
	switch {
	case m["stages"] != nil && !isList:
		c.addf("stages", "want a list of stages, got %s", describeValue(m["stages"]))
		return p
	case len(list) == 0:
		c.addf("stages", "at least one stage is required")
		return p
	}
	// Names first, so that references can be checked against all of them.
	seen := map[string]int{}
	for i, raw := range list {
		path := fmt.Sprintf("stages[%d]", i)
		sm, ok := c.object(raw, path, "name", "description", "prompt", "output_schema", "guardrails", "transitions")
		if !ok {
			p.Stages = append(p.Stages, Stage{})
			continue
		}
		s := Stage{Name: c.str(sm, "name", path, true), Description: c.str(sm, "description", path, false)}
		if s.Name != "" {
			if prev, dup := seen[s.Name]; dup {
				c.addf(path+".name", "duplicate stage name %q (also stages[%d])", s.Name, prev)
			} else if !reStageName.MatchString(s.Name) {
				c.addf(path+".name", "%q: use letters, digits, _, . or - (the name goes into the [stage:NAME] tag)", s.Name)
			} else {
				seen[s.Name] = i
			}
		}
		p.Stages = append(p.Stages, s)
	}
	names := strings.Join(p.StageNames(), ", ")
	for i, raw := range list {
		sm, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		path := fmt.Sprintf("stages[%d]", i)
		s := &p.Stages[i]
		s.Prompt = c.str(sm, "prompt", path, true)
		c.stageSchema(s, sm["output_schema"], path+".output_schema")

		gpath := path + ".guardrails"
		if g, ok := c.optionalObject(sm["guardrails"], gpath, "allowed_tools", "token_budget", "max_turns"); ok {
			s.Guardrails.AllowedTools = c.strList(g, "allowed_tools", gpath)
			for j, t := range s.Guardrails.AllowedTools {
				if c.tools != nil && !slices.Contains(c.tools, t) {
					c.addf(fmt.Sprintf("%s.allowed_tools[%d]", gpath, j), "unknown tool %q (tools: %s)", t, strings.Join(c.tools, ", "))
				}
			}
			s.Guardrails.TokenBudget = c.integer(g, "token_budget", gpath, 0, math.MaxInt32, 0)
			def := 0
			if len(s.Guardrails.AllowedTools) > 0 {
				def = defaultStageMaxTurns
			}
			s.Guardrails.MaxTurns = c.integer(g, "max_turns", gpath, 0, maxStageTurns, def)
			if s.Guardrails.MaxTurns == 0 {
				s.Guardrails.MaxTurns = def
			}
		}

		tpath := path + ".transitions"
		s.Transitions = Transitions{OnInvalid: OnInvalidRetry, MaxRetries: defaultMaxRetries, OnSuccess: OnSuccessNext}
		if t, ok := c.optionalObject(sm["transitions"], tpath, "on_invalid", "max_retries", "fallback_stage", "on_success"); ok {
			if v := c.str(t, "on_invalid", tpath, false); v != "" {
				s.Transitions.OnInvalid = v
			}
			switch s.Transitions.OnInvalid {
			case OnInvalidRetry, OnInvalidFallback, OnInvalidTerminate:
			default:
				c.addf(tpath+".on_invalid", "%q: want retry, fallback or terminate", s.Transitions.OnInvalid)
			}
			s.Transitions.MaxRetries = c.integer(t, "max_retries", tpath, 0, maxStageRetries, defaultMaxRetries)
			s.Transitions.FallbackStage = c.str(t, "fallback_stage", tpath, false)
			if fb := s.Transitions.FallbackStage; fb != "" {
				switch at, ok := seen[fb]; {
				case !ok:
					c.addf(tpath+".fallback_stage", "unknown stage %q (stages: %s)", fb, names)
				case at == i:
					c.addf(tpath+".fallback_stage", "a stage cannot fall back to itself")
				}
			} else if s.Transitions.OnInvalid == OnInvalidFallback {
				c.addf(tpath+".fallback_stage", `required when on_invalid is "fallback" (stages: %s)`, names)
			}
			if v := c.str(t, "on_success", tpath, false); v != "" {
				s.Transitions.OnSuccess = v
			}
			if v := s.Transitions.OnSuccess; v != OnSuccessNext && v != OnSuccessTerminate {
				if _, ok := seen[v]; !ok {
					c.addf(tpath+".on_success", "unknown stage %q (want next, terminate or a stage: %s)", v, names)
				}
			}
		}
	}
	return p
}

func (c *policyChecker) optionalObject(v any, path string, known ...string) (map[string]any, bool) {
	if v == nil {
		return map[string]any{}, true
	}
	return c.object(v, path, known...)
}

// stageSchema checks and compiles a stage's output schema.
func (c *policyChecker) stageSchema(s *Stage, v any, path string) {
	if v == nil {
		c.addf(path, "required (a JSON schema object for the stage's output)")
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.addf(path, "want a JSON schema object, got %s", describeValue(v))
		return
	}
	before := len(c.problems)
	c.schemaKeywords(m, path)
	if t, ok := m["type"].(string); ok && t != "object" {
		c.addf(path+".type", "a stage output must be an object, got %q", t)
	}
	if len(c.problems) > before {
		return
	}
	raw, err := json.Marshal(m)
	if err != nil {
		c.addf(path, "%v", err)
		return
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(raw, &schema); err != nil {
		c.addf(path, "not a valid JSON schema: %v", err)
		return
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		c.addf(path, "not a valid JSON schema: %v", err)
		return
	}
	s.OutputSchema = raw
	s.schema = resolved
}

// jsonTypes are the values of the "type" keyword.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// schemaKeywordNames are the keywords jsonschema-go understands.
var schemaKeywordNames = []string{
	"$id", "$schema", "$ref", "$comment", "$defs", "definitions", "$anchor", "$dynamicAnchor", "$dynamicRef", "$vocabulary",
	"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
	"type", "enum", "const", "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType", "contentSchema",
	"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "unevaluatedItems",
	"properties", "patternProperties", "additionalProperties", "propertyNames", "unevaluatedProperties",
	"required", "dependentRequired", "dependentSchemas", "dependencies", "minProperties", "maxProperties",
	"allOf", "anyOf", "oneOf", "not", "if", "then", "else",
}

// schemaKeywords rejects unknown keywords and unknown types anywhere in a
// schema, so that a typo ("propertes", "type: strng") is reported where it
// is instead of silently validating everything.
func (c *policyChecker) schemaKeywords(m map[string]any, path string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sub := func(v any, p string) {
		switch x := v.(type) {
		case map[string]any:
			c.schemaKeywords(x, p)
		case bool:
		default:
			c.addf(p, "want a schema object, got %s", describeValue(v))
		}
	}
	for _, k := range keys {
		v := m[k]
		p := keyPath(path, k)
		switch {
		case strings.HasPrefix(k, "x-"):
		case !slices.Contains(schemaKeywordNames, k):
			c.addf(p, "unknown JSON schema keyword")
		case k == "type":
			var types []any
			if s, ok := v.(string); ok {
				types = []any{s}
			} else if l, ok := v.([]any); ok {
				types = l
			} else {
				c.addf(p, "want a type name or a list of them, got %s", describeValue(v))
			}
			for _, t := range types {
				if s, ok := t.(string); !ok || !slices.Contains(jsonTypes, s) {
					c.addf(p, "unknown type %v (want one of %s)", describeValue(t), strings.Join(jsonTypes, ", "))
				}
			}
		case k == "required":
			if l, ok := v.([]any); ok {
				for i, x := range l {
					if _, ok := x.(string); !ok {
						c.addf(fmt.Sprintf("%s[%d]", p, i), "want a property name, got %s", describeValue(x))
					}
				}
			} else {
				c.addf(p, "want a list of property names, got %s", describeValue(v))
			}
		case k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions" || k == "dependentSchemas":
			props, ok := v.(map[string]any)
			if !ok {
				c.addf(p, "want a mapping of schemas, got %s", describeValue(v))
				continue
			}
			names := make([]string, 0, len(props))
			for n := range props {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				sub(props[n], p+"."+n)
			}
		case k == "items" || k == "additionalProperties" || k == "additionalItems" || k == "not" || k == "if" || k == "then" ||
			k == "else" || k == "contains" || k == "propertyNames" || k == "unevaluatedItems" || k == "unevaluatedProperties" || k == "contentSchema":
			if l, ok := v.([]any); ok && k == "items" {
				for i, x := range l {
					sub(x, fmt.Sprintf("%s[%d]", p, i))
				}
				continue
			}
			sub(v, p)
		case k == "allOf" || k == "anyOf" || k == "oneOf" || k == "prefixItems":
			l, ok := v.([]any)
			if !ok {
				c.addf(p, "want a list of schemas, got %s", describeValue(v))
				continue
			}
			for i, x := range l {
				sub(x, fmt.Sprintf("%s[%d]", p, i))
			}
		}
	}
}

// describe names a decoded value for error messages.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return strconv.Quote(x)
	case bool:
		return fmt.Sprintf("a boolean (%v)", x)
	case int, int64, uint64, float64, json.Number:
		return fmt.Sprintf("a number (%v)", x)
	case []any:
		return "a list"
	case map[string]any, map[any]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}
