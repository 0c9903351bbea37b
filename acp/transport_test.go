package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/service"
)

func TestCheckMessage(t *testing.T) {
	tests := []struct {
		line   string
		code   int
		wantID string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}`, 0, ""},
		{`not json`, -32700, ""},
		{`{"jsonrpc":"2.0","id":1,`, -32700, ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, -32600, ""},
		{`"hello"`, -32600, ""},
		{`{"jsonrpc":"1.0","id":4,"method":"initialize"}`, -32600, "4"},
		{`{"id":5,"method":"initialize"}`, -32600, "5"},
		{`{"jsonrpc":"2.0","id":6,"method":42}`, -32600, "6"},
		{`{"jsonrpc":"2.0","id":7,"method":""}`, -32600, "7"},
		{`{"jsonrpc":"2.0","id":8,"params":{}}`, -32600, "8"},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}`, -32600, ""},
	}
	for _, tt := range tests {
		id, code, msg := checkMessage([]byte(tt.line))
		if code != tt.code || string(id) != tt.wantID {
			t.Errorf("%s: code %d id %s (%s), want code %d id %s", tt.line, code, id, msg, tt.code, tt.wantID)
		}
		if code != 0 && msg == "" {
			t.Errorf("%s: no message", tt.line)
		}
	}
}

func TestFilterInput(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":9,"method":"x","params":"` + strings.Repeat("a", MaxMessageBytes) + `"}`
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`garbage`,
		``,
		huge,
		`  {"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}  `,
		`{"jsonrpc":"2.0","id":2,"method":"session/new"}`, // no final newline
	}, "\n")
	pr, pw := io.Pipe()
	var out bytes.Buffer
	forwarded := make(chan string)
	go func() {
		b, _ := io.ReadAll(pr)
		forwarded <- string(b)
	}()
	filterInput(strings.NewReader(in), pw, &lockedWriter{w: &out}, slog.New(slog.DiscardHandler))
	got := <-forwarded
	want := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/new"}` + "\n"
	if got != want {
		t.Errorf("forwarded:\n%q\nwant\n%q", got, want)
	}
	var codes []int
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID    json.RawMessage    `json:"id"`
			Error struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("answer is not JSON: %q", line)
		}
		if string(m.ID) != "null" {
			t.Errorf("id = %s, want null", m.ID)
		}
		codes = append(codes, m.Error.Code)
	}
	if len(codes) != 2 || codes[0] != -32700 || codes[1] != -32600 {
		t.Errorf("error codes = %v, want [-32700 -32600]", codes)
	}
}

func TestSettings(t *testing.T) {
	s := service.Settings{Mode: "react", MaxIterations: 10}
	for _, bad := range [][2]string{{optMode, "yolo"}, {optPlanner, "maybe"}, {optMaxIterations, "0"}, {optMaxIterations, "51"}, {"color", "red"}} {
		if err := setOption(&s, bad[0], bad[1]); err == nil {
			t.Errorf("set(%s, %s) accepted", bad[0], bad[1])
		}
	}
	if err := setOption(&s, optMode, "par"); err != nil || s.Mode != "par" {
		t.Errorf("set mode: %v %+v", err, s)
	}
	if err := setOption(&s, optPlanner, "on"); err != nil || !isTrue(s.Planner) {
		t.Errorf("set planner: %v %+v", err, s)
	}
	unknown, err := applyMeta(&s, map[string]any{MetaKey: map[string]any{"maxIterations": 25.0, "enableAgentPlannerV0": false, "timeoutMs": 1500.0, "colour": "red"}})
	if err != nil || s.MaxIterations != 25 || isTrue(s.Planner) || s.Timeout.Milliseconds() != 1500 || len(unknown) != 1 || unknown[0] != "colour" {
		t.Errorf("applyMeta: %v %v %+v", unknown, err, s)
	}
	if _, err := applyMeta(&s, map[string]any{MetaKey: map[string]any{"maxIterations": 2.5}}); err == nil {
		t.Error("a fractional maxIterations was accepted")
	}

	// A value outside the select's choices stays selectable.
	b, err := json.Marshal(configOptions(s))
	if err != nil {
		t.Fatal(err)
	}
	var opts []struct {
		ID, Type, CurrentValue string
		Options                []struct{ Value string }
	}
	if err := json.Unmarshal(b, &opts); err != nil {
		t.Fatal(err)
	}
	if len(opts) != 3 {
		t.Fatalf("options = %s", b)
	}
	for _, o := range opts {
		if o.Type != "select" {
			t.Errorf("%s: type %q", o.ID, o.Type)
		}
		found := false
		for _, v := range o.Options {
			found = found || v.Value == o.CurrentValue
		}
		if !found {
			t.Errorf("%s: current value %q is not among its options", o.ID, o.CurrentValue)
		}
	}
}
