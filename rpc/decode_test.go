package rpc

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/vault-agent/vault-agent/rpc/protocol"
)

func TestDecodeParams(t *testing.T) {
	tests := []struct {
		name    string
		params  string // "" = absent
		into    any
		lenient bool
		wantErr string // "" = no error
		unknown []string
	}{
		{name: "absent", into: &protocol.SearchParams{}},
		{name: "null", params: "null", into: &protocol.SearchParams{}},
		{name: "ok", params: `{"query":"x","limit":3,"timeRange":{"startTime":1}}`, into: &protocol.SearchParams{}},
		{name: "array", params: `["x"]`, into: &protocol.SearchParams{}, wantErr: "must be an object"},
		{name: "string", params: `"x"`, into: &protocol.SearchParams{}, wantErr: "got a string"},
		{name: "unknown strict", params: `{"query":"x","lmit":3}`, into: &protocol.SearchParams{}, wantErr: `unknown field "lmit" (valid fields: query, limit, tags, folders, timeRange, mode)`},
		{name: "unknown lenient", params: `{"vault":"/v","capabilities":{},"processId":1}`, into: &protocol.InitializeParams{}, lenient: true, unknown: []string{"capabilities", "processId"}},
		{name: "case matters", params: `{"Query":"x"}`, into: &protocol.SearchParams{}, wantErr: `unknown field "Query"`},
		{name: "type", params: `{"query":5}`, into: &protocol.SearchParams{}, wantErr: `"query" must be a string, got number`},
		{name: "nested type", params: `{"timeRange":{"endTime":true}}`, into: &protocol.SearchParams{}, wantErr: `"timeRange.endTime" must be an integer, got bool`},
		{name: "float for int", params: `{"limit":1.5}`, into: &protocol.SearchParams{}, wantErr: `"limit" must be an integer`},
		{name: "settings type", params: `{"vault":"v","settings":{"timeoutMs":"1s"}}`, into: &protocol.InitializeParams{}, wantErr: `"settings.timeoutMs" must be an integer`},
		{name: "settings excludes type", params: `{"vault":"v","settings":{"excludes":"a"}}`, into: &protocol.InitializeParams{}, wantErr: `"settings.excludes" must be an array of strings`},
		{name: "history type", params: `{"message":"m","history":[{"role":1}]}`, into: &protocol.AgentRunParams{}, wantErr: `"history.role" must be a string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var raw *json.RawMessage
			if tc.params != "" {
				r := json.RawMessage(tc.params)
				raw = &r
			}
			unknown, err := decodeParams("m", raw, tc.into, tc.lenient)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			} else {
				var re *jsonrpc2.Error
				if !errors.As(err, &re) || re.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(re.Message, tc.wantErr) {
					t.Fatalf("err = %v, want -32602 containing %q", err, tc.wantErr)
				}
			}
			if !reflect.DeepEqual(unknown, tc.unknown) {
				t.Errorf("unknown = %v, want %v", unknown, tc.unknown)
			}
		})
	}
}

func TestSettingsMergeAndUnknown(t *testing.T) {
	var init, run protocol.Settings
	if err := json.Unmarshal([]byte(`{"mode":"roa","maxIterations":7,"enableAgentPlannerV0":true,"zeta":1,"alpha":2}`), &init); err != nil {
		t.Fatal(err)
	}
	if got := init.Unknown(); !reflect.DeepEqual(got, []string{"alpha", "zeta"}) {
		t.Errorf("unknown = %v", got)
	}
	if err := json.Unmarshal([]byte(`{"maxIterations":3,"enableAgentPlannerV0":false}`), &run); err != nil {
		t.Fatal(err)
	}
	base := protocol.Settings{Provider: "offline", TimeoutMs: 1000}
	got := settingsOf(&base).Merge(settingsOf(&init)).Merge(settingsOf(&run))
	if got.Provider != "offline" || got.Mode != "roa" || got.MaxIterations != 3 || got.Timeout.Milliseconds() != 1000 || got.Planner == nil || *got.Planner {
		t.Errorf("merged = %+v", got)
	}
	cfg := got.RunConfig()
	if cfg.Mode != "roa" || cfg.MaxIterations != 3 || cfg.Planner || cfg.Timeout.Milliseconds() != 1000 {
		t.Errorf("agent config = %+v", cfg)
	}
	neg := protocol.Settings{MaxIterations: -1}
	if err := settingsOf(&neg).Validate(""); err == nil || !strings.Contains(toRPCError("m", err).Message, "settings.maxIterations") {
		t.Errorf("negative maxIterations: %v", err)
	}
}

// FuzzDecodeParams feeds arbitrary params to every method's params type
// and to the settings decoder: decoding never panics, and every failure is
// a -32602 error.
func FuzzDecodeParams(f *testing.F) {
	f.Add([]byte(`{"query":"x","limit":3,"tags":["a"],"timeRange":{"startTime":1}}`))
	f.Add([]byte(`{"vault":"/v","settings":{"mode":"react","excludes":["a"],"planReview":true}}`))
	f.Add([]byte(`{"message":"m","history":[{"role":"user","content":"c"}],"settings":{"x":1}}`))
	f.Add([]byte(`[1,{"a":null}]`))
	f.Add([]byte(`{"path":"../x","chunkIndex":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // jsonrpc2 only hands us valid JSON
		}
		raw := json.RawMessage(data)
		for _, m := range protocol.Methods {
			if m.Params == nil {
				continue
			}
			for _, lenient := range []bool{false, true} {
				p := reflect.New(m.Params).Interface()
				_, err := decodeParams(m.Name, &raw, p, lenient)
				var re *jsonrpc2.Error
				if err != nil && (!errors.As(err, &re) || re.Code != jsonrpc2.CodeInvalidParams) {
					t.Fatalf("%s: %v is not -32602", m.Name, err)
				}
			}
		}
		var s protocol.Settings
		if err := json.Unmarshal(data, &s); err == nil {
			_ = settingsOf(&s).Validate("/vault")
			_ = settingsOf(&s).RunConfig()
		}
	})
}
