package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// fakeServer answers vault/search and shutdown; any other method panics
// (the embedded nil Server).
type fakeServer struct {
	Server
	got *SearchParams
}

func (f *fakeServer) Search(ctx context.Context, p *SearchParams) (*Results, error) {
	f.got = p
	return &Results{Total: 3}, errors.New("partial")
}

func (f *fakeServer) Shutdown(ctx context.Context, _ *NoParams) (*Null, error) { return nil, nil }

// The table is the dispatch: an entry decodes its params and calls its
// handler, keeping a result that comes with an error; null results are nil.
func TestMethodsDispatch(t *testing.T) {
	f := &fakeServer{}
	m, ok := Lookup(MethodVaultSearch)
	if !ok || !m.Slow || m.Params != reflect.TypeFor[SearchParams]() || m.Result != reflect.TypeFor[Results]() {
		t.Fatalf("vault/search = %+v", m)
	}
	res, err := m.Call(context.Background(), f, func(p any) error { return json.Unmarshal([]byte(`{"query":"starter","limit":2}`), p) })
	if f.got == nil || f.got.Query != "starter" || f.got.Limit != 2 {
		t.Fatalf("params = %+v", f.got)
	}
	if r, ok := res.(*Results); !ok || r.Total != 3 || err == nil {
		t.Fatalf("result = %#v, %v", res, err)
	}
	bad := errors.New("bad params")
	if _, err := m.Call(context.Background(), f, func(any) error { return bad }); !errors.Is(err, bad) {
		t.Fatalf("decode error = %v", err)
	}
	m, _ = Lookup(MethodShutdown)
	if m.Params != nil || m.Result != nil {
		t.Fatalf("shutdown = %+v", m)
	}
	if res, err := m.Call(context.Background(), f, func(any) error { return nil }); res != nil || err != nil {
		t.Fatalf("shutdown answered %#v, %v; want null", res, err)
	}
	for _, m := range Methods {
		if m.Handled() == (m.Name == MethodCancelRequest) {
			t.Errorf("%s: handled = %v", m.Name, m.Handled())
		}
	}
	// Only control methods are quick: they must never wait behind work.
	control := map[string]bool{MethodShutdown: true, MethodExit: true, MethodCancelRequest: true,
		MethodVaultStatus: true, MethodAgentStop: true, MethodAgentInput: true}
	for _, m := range Methods {
		if m.Slow == control[m.Name] {
			t.Errorf("%s: slow = %v; work methods are slow, control methods quick", m.Name, m.Slow)
		}
	}
	if _, ok := Lookup("vault/nope"); ok {
		t.Error("an unknown method was found")
	}
	if got := MethodNames(); len(got) != 10 || got[0] != MethodInitialize {
		t.Errorf("MethodNames = %v", got)
	}
}

// The typed client sends each notification under its name.
func TestClient(t *testing.T) {
	var sent []string
	c := NewClient(func(ctx context.Context, method string, params any) error {
		sent = append(sent, method+" "+reflect.TypeOf(params).Elem().Name())
		return nil
	})
	ctx := context.Background()
	_ = c.AgentMessage(ctx, &AgentMessageParams{})
	_ = c.AgentUpdate(ctx, &AgentUpdateParams{})
	_ = c.IndexProgress(ctx, &IndexProgressParams{})
	_ = c.LogMessage(ctx, &LogMessageParams{})
	want := []string{"agent/message AgentMessageParams", "agent/update AgentUpdateParams",
		"vault/indexProgress IndexProgressParams", "window/logMessage LogMessageParams"}
	if !reflect.DeepEqual(sent, want) {
		t.Fatalf("sent %q", sent)
	}
	for i, n := range Notifications {
		if n.Name != NotificationNames()[i] || n.Params == nil {
			t.Errorf("notification %d = %+v", i, n)
		}
	}
}
