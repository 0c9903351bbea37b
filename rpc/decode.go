package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/vault-agent/vault-agent/rpc/protocol"
)

// decodeParams decodes a request's params into p (a pointer to a params
// struct) and returns a -32602 error a plugin author can act on: it names
// the field, the expected type and, for unknown fields, the valid ones.
// Absent or null params decode as {}. When lenient is set, unknown
// top-level fields are returned instead of refused.
func decodeParams(method string, raw *json.RawMessage, p any, lenient bool) (unknown []string, err error) {
	var data []byte
	if raw != nil {
		data = bytes.TrimSpace(*raw)
	}
	if len(data) == 0 || string(data) == "null" {
		data = []byte("{}")
	}
	if data[0] != '{' {
		return nil, invalidParams("invalid params for %s: params must be an object with named fields, got %s", method, jsonKind(data))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, invalidParams("invalid params for %s: %v", method, err)
	}
	valid := jsonFieldNames(reflect.TypeOf(p).Elem())
	for k := range fields {
		if !contains(valid, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 && !lenient {
		return nil, invalidParams("invalid params for %s: unknown field %q (valid fields: %s)", method, unknown[0], strings.Join(valid, ", "))
	}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, paramsDecodeError(method, err)
	}
	return unknown, nil
}

func paramsDecodeError(method string, err error) error {
	var fe *protocol.FieldError
	if errors.As(err, &fe) {
		return invalidParams("invalid params for %s: %s", method, fe.Error())
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "params"
		}
		return invalidParams("invalid params for %s: %q must be %s, got %s", method, field, protocol.JSONTypeName(te.Type), te.Value)
	}
	return invalidParams("invalid params for %s: %v", method, err)
}

func jsonKind(data []byte) string {
	switch data[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// jsonFieldNames lists the JSON names of t's fields, in declaration order.
func jsonFieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// required returns a -32602 error for a missing field.
func required(method, field, hint string) error {
	msg := fmt.Sprintf("invalid params for %s: missing required field %q", method, field)
	if hint != "" {
		msg += " (" + hint + ")"
	}
	return invalidParams("%s", msg)
}
