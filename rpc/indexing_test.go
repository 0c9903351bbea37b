package rpc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/search"
)

// TestStatusWhileIndexing holds initialize's first index in the middle
// and checks that vault/status shows how far it is and vault/search says
// it is still indexing, then that both work once initialize answered.
func TestStatusWhileIndexing(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	for i := 0; i < 250; i++ {
		p := filepath.Join(dir, fmt.Sprintf("note %03d.md", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("# Note %d\nabout lighthouse%d\n", i, i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s := start(t, rpc.Config{}, func(srv *rpc.Server) {
		rpc.SetProgressHook(srv, func(done, total int) {
			if done >= 100 && done < total {
				once.Do(func() { close(reached); <-release })
			}
		})
	})
	ctx := ctxT(t)
	initErr := make(chan error, 1)
	go func() {
		var res protocol.InitializeResult
		initErr <- s.Call(ctx, "initialize", map[string]any{"vault": dir}, &res)
	}()
	select {
	case <-reached:
	case err := <-initErr:
		t.Fatalf("initialize ended before indexing was held: %v", err)
	}

	var st protocol.StatusResult
	if err := s.Call(ctx, "vault/status", nil, &st); err != nil {
		close(release)
		t.Fatalf("vault/status while indexing: %v", err)
	}
	if !st.Indexing || st.Progress == nil || st.Progress.Done != 100 || st.Progress.Total != 250 {
		t.Errorf("status while indexing = %+v (progress %+v)", st, st.Progress)
	}
	err := s.Call(ctx, "vault/search", map[string]any{"query": "lighthouse7"}, &search.Results{})
	wantCode(t, err, protocol.CodeServerNotInitialized, "still indexing", "100 of 250 notes indexed (40%)")

	close(release)
	if err := <-initErr; err != nil {
		t.Fatalf("initialize: %v", err)
	}
	st = protocol.StatusResult{}
	if err := s.Call(ctx, "vault/status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.Indexing || st.Progress != nil || st.Notes != 250 {
		t.Errorf("status after initialize = %+v", st)
	}
	var res search.Results
	if err := s.Call(ctx, "vault/search", map[string]any{"query": "lighthouse7"}, &res); err != nil || len(res.Results) == 0 {
		t.Errorf("search after initialize: %v, %+v", err, res.Results)
	}
}
