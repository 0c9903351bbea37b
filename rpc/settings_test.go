package rpc_test

import (
	"encoding/json"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
	"github.com/vault-agent/vault-agent/service"
)

// A number setting out of its range is -32602 at once, naming the setting
// and its range, in initialize and in agent/run: a huge timeoutMs must not
// overflow into a negative duration that fails every run later.
func TestNumberSettingsRange(t *testing.T) {
	noLeaks(t)
	tests := []struct {
		key   string
		value any
		want  string
	}{
		{"timeoutMs", 9000000000000000, "from 1 to 86400000 ms (0 or absent: 300000 ms), got 9e+15"},
		{"timeoutMs", -5, "from 1 to 86400000 ms"},
		{"requestInputTimeoutMs", 100000000000, "from 1 to 86400000 ms"},
		{"maxIterations", 51, "from 1 to 50"},
		{"reasoningWindow", 1000, "from 1 to 100"},
		{"maxPlanContinuations", 1000, "from 1 to 50"},
		{"planReminderInterval", -1, "from 1 to 50"},
	}
	s := start(t, rpc.Config{})
	ctx := ctxT(t)
	for _, tt := range tests {
		err := s.Call(ctx, "initialize", map[string]any{"vault": fixtureVault, "settings": map[string]any{tt.key: tt.value}}, nil)
		wantCode(t, err, -32602, "settings."+tt.key, tt.want)
	}
	initialize(t, s, map[string]any{"settings": map[string]any{"timeoutMs": 120000}})
	for _, tt := range tests {
		err := s.Call(ctx, "agent/run", map[string]any{"message": "x", "settings": map[string]any{tt.key: tt.value}}, nil)
		wantCode(t, err, -32602, "settings."+tt.key, tt.want)
	}
}

// initialize lists the tools a run with its settings is offered: no edit
// tool without allowEdits, no planner tool without the planner.
func TestInitializeToolsOffered(t *testing.T) {
	noLeaks(t)
	names := func(res protocol.InitializeResult) []string {
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	edits := []string{"create_note", "append_to_note", "replace_in_note", "set_properties"}
	planning := []string{"write_todos", "plan_progress"}
	for _, tt := range []struct {
		name     string
		settings map[string]any
		has      []string
		hasNot   []string
	}{
		{"defaults", nil, []string{"localSearch", "readNote"}, append(edits, planning...)},
		{"allowEdits false", map[string]any{"allowEdits": false}, []string{"localSearch"}, edits},
		{"allowEdits and planner", map[string]any{"allowEdits": true, "enableAgentPlannerV0": true}, append(edits, planning...), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, rpc.Config{})
			got := names(initialize(t, s, map[string]any{"settings": tt.settings}))
			for _, n := range tt.has {
				if !slices.Contains(got, n) {
					t.Errorf("tools %v lack %s", got, n)
				}
			}
			for _, n := range tt.hasNot {
				if slices.Contains(got, n) {
					t.Errorf("tools %v list %s, which is not offered", got, n)
				}
			}
		})
	}
}

// A serve on an index that is up to date indexes nothing, and says
// nothing about indexing: no vault/indexProgress {done: 0, total: 0}.
func TestNoProgressWhenNothingIsIndexed(t *testing.T) {
	noLeaks(t)
	indexDir := filepath.Join(t.TempDir(), "index")
	first := rpctest.StartInProcessWith(t, rpc.Config{})
	initialize(t, first, map[string]any{"index": indexDir})
	if len(first.Notifications(protocol.NotifyIndexProgress)) == 0 {
		t.Fatal("the first index sent no progress")
	}
	if err := first.Call(ctxT(t), "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	first.Close()
	if err := first.Wait(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	second := rpctest.StartInProcessWith(t, rpc.Config{})
	res := initialize(t, second, map[string]any{"index": indexDir})
	if res.Index.Notes == 0 {
		t.Fatal("the second server found no notes")
	}
	if n := second.Notifications(protocol.NotifyIndexProgress); len(n) > 0 {
		var p protocol.IndexProgressParams
		_ = json.Unmarshal(n[0].Params, &p)
		t.Errorf("%d vault/indexProgress on an up-to-date index, the first %+v", len(n), p)
	}
}

// initialize never fails because of the model settings or the environment:
// an exported key without a model, a base URL at a closed port, a model at
// a closed port. Search works, and runs answer offline, or fail alone with
// an error naming the variables that chose the model.
func TestInitializeWhateverTheModel(t *testing.T) {
	noLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	for _, tt := range []struct {
		name     string
		env      service.Env
		settings map[string]any
		failWith string
	}{
		{name: "key without a model", env: service.Env{APIKey: testKey}},
		{name: "base URL at a closed port", env: service.Env{BaseURL: closed}},
		{name: "model at a closed port", env: service.Env{APIKey: testKey, BaseURL: closed, Model: "llama3.1"}, failWith: "chosen by OPENAI_MODEL, the base URL from OPENAI_BASE_URL"},
		{name: "provider setting without a model", env: service.Env{APIKey: testKey}, settings: map[string]any{"provider": "openai"}, failWith: "chosen by settings.provider"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			s := start(t, rpc.Config{Env: &env})
			initialize(t, s, map[string]any{"settings": tt.settings})
			var found protocol.Results
			if err := s.Call(ctxT(t), "vault/search", map[string]any{"query": "sourdough starter"}, &found); err != nil || len(found.Results) == 0 {
				t.Fatalf("search: %+v, %v", found, err)
			}
			var res protocol.AgentRunResult
			if err := s.Call(ctxT(t), "agent/run", map[string]any{"message": "how do I keep my sourdough starter alive?"}, &res); err != nil {
				t.Fatalf("agent/run: %v", err)
			}
			if tt.failWith == "" {
				if res.StopReason != "final_answer" || !strings.Contains(res.Answer, "[[Sourdough Starter]]") {
					t.Errorf("offline run: %+v", res)
				}
				return
			}
			if res.StopReason != "error" || !strings.Contains(res.Error, tt.failWith) || strings.Contains(res.Error, testKey) {
				t.Errorf("run: %s %q, want an error with %q", res.StopReason, res.Error, tt.failWith)
			}
		})
	}
}
