package rpc_test

import (
	"encoding/json"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/search"
)

// holdIndex opens the index at dir the way another vault-agent process
// would, holding its lock until the returned func is called.
func holdIndex(t *testing.T, vaultDir, dir string) func() {
	t.Helper()
	idx, err := search.Open(ctxT(t), search.Options{Path: dir, Vault: openVault(t, vaultDir)})
	if err != nil {
		t.Fatal(err)
	}
	var closed bool
	release := func() {
		if !closed {
			closed = true
			idx.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// TestInitializeIndexLocked: an index held by another process makes
// initialize fail with a clear error once the wait for the lock is over;
// nothing stays open, and a retry succeeds once the holder is gone.
func TestInitializeIndexLocked(t *testing.T) {
	noLeaks(t)
	indexDir := filepath.Join(t.TempDir(), "index")
	release := holdIndex(t, fixtureVault, indexDir)
	s := rpctest.StartInProcessWith(t, rpc.Config{LockWait: 300 * time.Millisecond})
	ctx := ctxT(t)
	err := s.Call(ctx, "initialize", map[string]any{"vault": fixtureVault, "index": indexDir}, nil)
	t.Log(wantCode(t, err, -32603, "index in use by another process", indexDir).Message)
	wantCode(t, s.Call(ctx, "vault/status", nil, nil), -32002)
	release()
	res := initialize(t, s, map[string]any{"index": indexDir})
	if res.Index.Notes == 0 {
		t.Errorf("index = %+v", res.Index)
	}
}

// TestInitializeWaitsForLock: a sidecar restarted at once by its host finds
// the old process's lock; initialize waits for the holder to go instead of
// failing.
func TestInitializeWaitsForLock(t *testing.T) {
	noLeaks(t)
	indexDir := filepath.Join(t.TempDir(), "index")
	release := holdIndex(t, fixtureVault, indexDir)
	s := rpctest.StartInProcessWith(t, rpc.Config{})
	ctx := ctxT(t)
	call, err := s.Start("initialize", map[string]any{"vault": fixtureVault, "index": indexDir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AwaitNotification(ctx, "window/logMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "waiting")
	}); err != nil {
		t.Fatal(err)
	}
	release()
	resp, err := call.Wait(ctx)
	if err != nil || resp.Error != nil {
		t.Fatalf("initialize after the holder left = %+v, %v", resp, err)
	}
}

// TestInitializeIndexInsideVault: an index inside the vault is refused
// with a clear error, nothing is written into the vault, and the server
// takes another initialize.
func TestInitializeIndexInsideVault(t *testing.T) {
	noLeaks(t)
	v := fixture.Copy(t)
	s := rpctest.StartInProcessWith(t, rpc.Config{})
	ctx := ctxT(t)
	inside := filepath.Join(v, "index")
	err := s.Call(ctx, "initialize", map[string]any{"vault": v, "index": inside}, nil)
	t.Log(wantCode(t, err, -32602, "index must be outside the vault").Message)
	if _, err := os.Stat(inside); err == nil {
		t.Errorf("the refused index folder %s was created in the vault", inside)
	}
	initialize(t, s, map[string]any{"vault": v, "index": filepath.Join(t.TempDir(), "index")})
}

// TestIndexCreated: initialize says when the index was new (created), apart
// from an existing index rebuilt (rebuilt and its reason) or reused.
func TestIndexCreated(t *testing.T) {
	noLeaks(t)
	indexDir := filepath.Join(t.TempDir(), "index")
	first := rpctest.StartInProcessWith(t, rpc.Config{})
	res := initialize(t, first, map[string]any{"index": indexDir})
	if !res.Index.Created || res.Index.Rebuilt || res.Index.Notes == 0 {
		t.Errorf("a first start: index = %+v, want created, not rebuilt", res.Index)
	}
	first.Close()
	first.Wait(ctxT(t))

	again := rpctest.StartInProcessWith(t, rpc.Config{})
	res = initialize(t, again, map[string]any{"index": indexDir})
	if res.Index.Created || res.Index.Rebuilt {
		t.Errorf("a second start: index = %+v, want neither created nor rebuilt", res.Index)
	}
	again.Close()
	again.Wait(ctxT(t))

	// An index of another vault at the same place is rebuilt, not created.
	other := rpctest.StartInProcessWith(t, rpc.Config{})
	res = initialize(t, other, map[string]any{"vault": fixture.Copy(t), "index": indexDir})
	if res.Index.Created || !res.Index.Rebuilt || res.Index.Reason == "" {
		t.Errorf("another vault: index = %+v, want rebuilt with a reason", res.Index)
	}
}

// TestInitializeRetryAfterPanic: a panic while initialize opens the vault is
// an internal error, and the server takes the next initialize instead of
// answering "already in progress" for ever.
func TestInitializeRetryAfterPanic(t *testing.T) {
	noLeaks(t)
	var calls atomic.Int32
	s := rpctest.StartInProcessWith(t, rpc.Config{}, func(srv *rpc.Server) {
		rpc.SetOpenHook(srv, func() {
			if calls.Add(1) == 1 {
				panic("damaged file")
			}
		})
	})
	ctx := ctxT(t)
	err := s.Call(ctx, "initialize", map[string]any{"vault": fixtureVault, "index": filepath.Join(t.TempDir(), "index")}, nil)
	wantCode(t, err, -32603, "damaged file")
	res := initialize(t, s, map[string]any{"index": filepath.Join(t.TempDir(), "index2")})
	if res.Index.Notes == 0 {
		t.Errorf("index after the retry = %+v", res.Index)
	}
}
