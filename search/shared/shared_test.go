package shared

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// holderAndFollower starts on a new place two processes' indexes on one place, the first
// holding it, and returns a check that a value read through each is the
// same, as JSON (what a front-end can see of it); with allowNull false, an
// empty (null) value is an error too.
func holderAndFollower(t *testing.T, allowNull bool) (pl place, holder, follower *Index, same func(name string, get func(x *Index) any)) {
	t.Helper()
	pl = newPlace(t)
	holder = pl.started(t)
	follower = pl.started(t)
	if !holder.Holding() || follower.Holding() {
		t.Fatalf("holding: first %v, second %v", holder.Holding(), follower.Holding())
	}
	same = func(name string, get func(x *Index) any) {
		t.Helper()
		a, _ := json.Marshal(get(holder))
		b, _ := json.Marshal(get(follower))
		if string(a) != string(b) || (!allowNull && string(a) == "null") {
			t.Errorf("%s: the holder has %s, the follower %s", name, a, b)
		}
	}
	return pl, holder, follower, same
}

// The first process to open an index holds it; the next reaches it
// through the holder, and every operation answers there as it does at the
// holder: the same results, and errors that match the same sentinels.
func TestFollowerAnswersAsTheHolder(t *testing.T) {
	pl, holder, follower, same := holderAndFollower(t, true)
	ctx := ctxT(t)
	searchFor := func(q string) func(x *Index) any {
		return func(x *Index) any {
			res, err := x.Search(ctx, search.Request{Query: q, Limit: 5, From: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)})
			if err != nil {
				return err.Error()
			}
			var paths []string
			for _, r := range res.Results {
				paths = append(paths, r.Path)
			}
			return paths
		}
	}
	same("search", searchFor("sourdough starter"))
	same("search with a filter", searchFor("tag:#recipe bread"))
	// How the words matched (kept off the protocols' JSON) reaches the
	// follower too: hybrid fusion and the offline model read it.
	same("how the words matched", func(x *Index) any {
		res, err := x.Search(ctx, search.Request{Query: "keep the sourdough starter alive", Limit: 5})
		if err != nil {
			return err.Error()
		}
		if len(res.Match.Terms) == 0 {
			return "no terms weighed"
		}
		return res.Match
	})
	same("paths", func(x *Index) any { return x.Paths() })
	same("notes", func(x *Index) any { return x.Notes() })
	func() {
		defer func(n int) { notesPerPage = n }(notesPerPage)
		notesPerPage = 7
		same("notes in pages", func(x *Index) any { return x.Notes() })
		if n := len(follower.Notes()); n != holder.Count() {
			t.Errorf("notes in pages of 7: %d, want %d", n, holder.Count())
		}
	}()
	same("tags", func(x *Index) any { return x.Tags() })
	same("count", func(x *Index) any { return x.Count() })
	same("status", func(x *Index) any { return x.Status() })
	same("note", func(x *Index) any { m, ok := x.Note("recipes/Sourdough Starter.md"); return []any{m, ok} })
	same("no note", func(x *Index) any { m, ok := x.Note("nowhere.md"); return []any{m, ok} })
	same("chunk", func(x *Index) any { c, err := x.ReadChunk("[[Sourdough Starter]]", 0); return []any{c, err} })
	same("whole note", func(x *Index) any { n, err := x.ReadNote("Sourdough Starter"); return []any{n, err} })
	same("backlinks", func(x *Index) any { b, err := x.Backlinks(ctx, "recipes/Sourdough Starter.md"); return []any{b, err} })
	same("link", func(x *Index) any {
		return x.ResolveLink(vault.Link{Target: "Sourdough Starter", Kind: "wikilink"}, "recipes/Country Sourdough Loaf.md")
	})
	if n := follower.Count(); n == 0 {
		t.Fatal("the follower counts no notes")
	}

	errs := []struct {
		name string
		call func(x *Index) error
		is   error
	}{
		{"unknown note", func(x *Index) error { _, err := x.ReadChunk("No Such Note", 0); return err }, vault.ErrNotFound},
		{"ambiguous note", func(x *Index) error { _, err := x.Lookup("Meeting Notes"); return err }, vault.ErrAmbiguous},
		{"escape", func(x *Index) error { _, err := x.ReadChunk("../../etc/passwd", 0); return err }, vault.ErrUnsafePath},
		{"chunk out of range", func(x *Index) error { _, err := x.ReadChunk("Sourdough Starter", 99); return err }, search.ErrChunkRange},
		{"bad query", func(x *Index) error { _, err := x.Search(ctx, search.Request{Query: "a b)"}); return err }, search.ErrBadQuery},
		{"empty query", func(x *Index) error { _, err := x.Search(ctx, search.Request{Query: "  "}); return err }, search.ErrEmptyQuery},
		{"no embedder", func(x *Index) error {
			_, err := x.Search(ctx, search.Request{Query: "bread", Mode: search.ModeSemantic})
			return err
		}, ErrNoEmbedder},
		{"related without embedder", func(x *Index) error { _, err := x.Related(ctx, "Sourdough Starter", 3); return err }, ErrNoEmbedder},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			want, got := c.call(holder), c.call(follower)
			if !errors.Is(want, c.is) || !errors.Is(got, c.is) {
				t.Fatalf("holder: %v, follower: %v; want both %v", want, got, c.is)
			}
			if want.Error() != got.Error() {
				t.Errorf("the follower says %q, the holder %q", got, want)
			}
		})
	}
	var amb *vault.AmbiguousError
	if _, err := follower.Lookup("Meeting Notes"); !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Errorf("ambiguous name at the follower: %v (%+v)", err, amb)
	}
	st, err := follower.Holder(ctx)
	if err != nil || st.PID != os.Getpid() || st.Clients != 1 || st.Notes == 0 || !st.Ready || st.IndexBytes == 0 || st.Vault != pl.root {
		t.Errorf("holder status = %+v, %v", st, err)
	}
}

// A note saved while the holder watches reaches the follower's
// subscriptions and searches; a note the follower writes itself (an
// approved edit) is searchable as soon as its Apply returns, watcher or
// not.
func TestChangesReachTheFollower(t *testing.T) {
	pl := newPlace(t)
	pl.started(t)
	follower := pl.open(t)
	if _, err := follower.Start(ctxT(t), StartOptions{Watch: true}); err != nil {
		t.Fatal(err)
	}
	changes := follower.SubscribeChanges()
	defer changes.Close()
	signal, stop := follower.Subscribe()
	defer stop()

	note := filepath.Join(pl.root, "Quokka.md")
	if err := os.WriteFile(note, []byte("# Quokka\n\nThe quokka smiles at zookeepers.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []search.NoteChange
	eventually(t, 5*time.Second, changes.Ready(), func() bool {
		got = append(got, changes.Take()...)
		return len(got) > 0
	})
	if want := []search.NoteChange{{Path: "Quokka.md", Kind: search.NoteAdded}}; !reflect.DeepEqual(got, want) {
		t.Errorf("changes = %v, want %v", got, want)
	}
	select {
	case <-signal:
	case <-time.After(5 * time.Second):
		t.Error("Subscribe was not signalled")
	}
	found := func(x *Index, q, path string) bool {
		res, err := x.Search(context.Background(), search.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Results {
			if r.Path == path {
				return true
			}
		}
		return false
	}
	if !found(follower, "quokka", "Quokka.md") {
		t.Error("the follower does not find the new note")
	}

	// An edit: written by the follower, indexed by the holder at once.
	edited := filepath.Join(pl.root, "Wombat.md")
	if err := os.WriteFile(edited, []byte("# Wombat\n\nWombats dig burrows.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := follower.Apply(ctxT(t), vault.Batch{Changes: []vault.Change{{Path: "Wombat.md"}}}); err != nil {
		t.Fatal(err)
	}
	if !found(follower, "burrows", "Wombat.md") {
		t.Error("a note applied by the follower is not searchable when Apply returns")
	}
}

// When the holder goes, one of its followers takes the index over and the
// other reconnects to it; both answer, and a call made as it happens is
// retried. Changes made while no process held the index are reconciled.
func TestTakeover(t *testing.T) {
	pl := newPlace(t)
	holder := pl.started(t)
	a := pl.started(t, func(o *Options) { o.FrontEnd = "a" })
	b := pl.started(t, func(o *Options) { o.FrontEnd = "b" })
	before := a.Count()

	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pl.root, "Okapi.md"), []byte("# Okapi\n\nThe okapi lives in the Ituri forest.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	for _, x := range []*Index{a, b} {
		res, err := x.Search(ctx, search.Request{Query: "sourdough"})
		if err != nil || len(res.Results) == 0 {
			t.Fatalf("search after the holder left: %v %v", res, err)
		}
	}
	if a.Holding() == b.Holding() {
		t.Fatalf("holding after the takeover: a %v, b %v", a.Holding(), b.Holding())
	}
	newHolder, other := a, b
	if b.Holding() {
		newHolder, other = b, a
	}
	st, err := other.Holder(ctx)
	if err != nil || st.PID != os.Getpid() || st.FrontEnd != newHolder.opts.FrontEnd || st.Clients != 1 {
		t.Fatalf("the new holder: %+v %v", st, err)
	}
	eventually(t, 10*time.Second, nil, func() bool { return other.Count() == before+1 })
	res, err := other.Search(ctx, search.Request{Query: "okapi"})
	if err != nil || len(res.Results) == 0 || res.Results[0].Path != "Okapi.md" {
		t.Fatalf("a note written while no one held the index: %v %v", res, err)
	}
	// It watches once its first sync is over.
	eventually(t, 10*time.Second, nil, func() bool { return newHolder.Status().Watching })
}

// Calls made while the index changes hands all succeed: none is lost.
func TestCallsDuringTakeover(t *testing.T) {
	pl := newPlace(t)
	holder := pl.started(t)
	follower := pl.started(t)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	start := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 20 {
				if _, err := follower.Search(ctx, search.Request{Query: "sourdough"}); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	close(start)
	holder.Close()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Errorf("a search during the takeover: %v", err)
	}
	if !follower.Holding() {
		t.Error("the follower did not take the index over")
	}
}

// A holder that accepts calls and never answers them costs each call its
// deadline, then a clear error: it does not hang the others.
func TestHungHolder(t *testing.T) {
	pl := newPlace(t)
	// The hung process holds the lock and answers hello, nothing else.
	v, ix := pl.lock(t)
	defer ix.Close()
	ln, err := listenSocket(pl.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(nc, jsonrpc2.VSCodeObjectCodec{}),
				jsonrpc2.HandlerWithError(func(ctx context.Context, c *jsonrpc2.Conn, r *jsonrpc2.Request) (any, error) {
					if r.Method == methodHello {
						return helloResult{Protocol: protocolVersion, PID: 4242, FrontEnd: "hung", Vault: v.Root()}, nil
					}
					<-ctx.Done()
					return nil, ctx.Err()
				}))
		}
	}()
	x := pl.open(t, func(o *Options) { o.CallTimeout = 300 * time.Millisecond })
	begin := time.Now()
	_, err = x.Search(ctxT(t), search.Request{Query: "sourdough"})
	if !errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "pid 4242 (hung)") {
		t.Fatalf("search on a hung holder: %v", err)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("the call took %s", took)
	}
	if n := x.Count(); n != 0 {
		t.Errorf("count on a hung holder = %d", n)
	}
	// A long call fails as well once the holder is silent that long.
	if _, err := x.Start(ctxT(t), StartOptions{}); !errors.Is(err, ErrNoAnswer) {
		t.Errorf("waiting for a hung holder's sync: %v", err)
	}
}

// An index locked by a process that does not share it is refused after
// ConnectWait with search.ErrLocked; once that process lets go within the
// wait, this one holds it.
func TestLockedIndexNotShared(t *testing.T) {
	pl := newPlace(t)
	v, ix := pl.lock(t)
	_, err := Open(ctxT(t), Options{Path: pl.index, Socket: pl.socket, Vault: v, ConnectWait: 200 * time.Millisecond})
	if !errors.Is(err, search.ErrLocked) || !strings.Contains(err.Error(), "does not share it") {
		t.Fatalf("open of a locked index nobody serves: %v", err)
	}
	opened := make(chan error, 1)
	go func() {
		x, err := Open(ctxT(t), Options{Path: pl.index, Socket: pl.socket, Vault: v, ConnectWait: 20 * time.Second})
		if err == nil {
			if !x.Holding() {
				err = errors.New("not holding")
			}
			x.Close()
		}
		opened <- err
	}()
	ix.Close()
	if err := <-opened; err != nil {
		t.Fatalf("open once the lock was free: %v", err)
	}
}

// Processes of two vaults given one index folder are refused each other's
// index; a socket folder that others may enter is never used.
func TestRefusals(t *testing.T) {
	t.Run("another vault", func(t *testing.T) {
		pl := newPlace(t)
		pl.started(t)
		other := newPlace(t)
		v, err := vault.Open(other.root, vault.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Open(ctxT(t), Options{Path: pl.index, Socket: pl.socket, Vault: v})
		if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), pl.root) {
			t.Fatalf("open of another vault's index: %v", err)
		}
	})
	t.Run("socket folder open to others", func(t *testing.T) {
		pl := newPlace(t)
		if err := os.MkdirAll(filepath.Dir(pl.socket), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Dir(pl.socket), 0o755); err != nil {
			t.Fatal(err)
		}
		holder := pl.started(t)
		if holder.opts.Socket == "" || holder.Holding() == false {
			t.Fatal("no holder")
		}
		if _, err := os.Stat(pl.socket); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a socket in a folder others may enter: %v", err)
		}
		v, _ := vault.Open(pl.root, vault.Options{})
		if _, err := Open(ctxT(t), Options{Path: pl.index, Socket: pl.socket, Vault: v}); !errors.Is(err, search.ErrLocked) || !strings.Contains(err.Error(), "open to other users") {
			t.Fatalf("open through a socket folder others may enter: %v", err)
		}
	})
}

// Semantic and hybrid searches of a follower are answered with the
// holder's vectors; a follower whose holder has no embedding model is told
// so.
func TestSemanticAtTheHolder(t *testing.T) {
	pl := newPlace(t)
	emb := embedder{model: "words", fn: llmtest.WordVectors(64, map[string]string{"leaven": "starter"})}
	pl.started(t, func(o *Options) { o.Embedder, o.VectorsPath = emb, filepath.Join(filepath.Dir(pl.index), "vectors.db") })
	follower := pl.started(t)
	ctx := ctxT(t)
	res, err := follower.Search(ctx, search.Request{Query: "leaven", Mode: search.ModeSemantic, Limit: 3})
	if err != nil || len(res.Results) == 0 || !strings.Contains(res.Results[0].Path, "Sourdough") {
		t.Fatalf("semantic search at the follower: %+v %v", res, err)
	}
	rel, err := follower.Related(ctx, "Sourdough Starter", 3)
	if err != nil || len(rel.Results) == 0 {
		t.Fatalf("related at the follower: %+v %v", rel, err)
	}
	if follower.Semantic() != nil {
		t.Error("the follower has vectors of its own")
	}
}

// A follower that starts while the holder's first sync runs waits for its
// end, hearing its progress; a rebuild asked by a follower runs at the
// holder and reports progress too.
func TestStartWaitsForTheHolder(t *testing.T) {
	pl := newPlace(t)
	holder := pl.open(t)
	follower := pl.open(t)
	var mu sync.Mutex
	var last [2]int
	got := make(chan error, 1)
	go func() {
		_, err := follower.Start(ctxT(t), StartOptions{Progress: func(done, total int) {
			mu.Lock()
			last = [2]int{done, total}
			mu.Unlock()
		}})
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the follower started before the holder's first sync: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	st, err := holder.Start(ctxT(t), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if st.Added == 0 || follower.Count() != st.Added {
		t.Errorf("holder added %d, follower counts %d", st.Added, follower.Count())
	}
	last = [2]int{}
	rb, err := follower.Rebuild(ctxT(t), func(done, total int) {
		mu.Lock()
		last = [2]int{done, total}
		mu.Unlock()
	})
	if err != nil || !rb.Rebuilt {
		t.Fatalf("rebuild from the follower: %+v %v", rb, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if last[0] != last[1] || last[1] != holder.Count() {
		t.Errorf("last progress of the rebuild %v, notes %d", last, holder.Count())
	}
}

func TestMergeKind(t *testing.T) {
	A, U, R := search.NoteAdded, search.NoteUpdated, search.NoteRemoved
	for _, c := range []struct {
		old, next, want search.ChangeKind
	}{
		{"", A, A}, {A, U, A}, {A, R, ""}, {U, U, U}, {U, R, R}, {R, A, U}, {R, R, R},
	} {
		if got := mergeKind(c.old, c.next); got != c.want {
			t.Errorf("%q then %q = %q, want %q", c.old, c.next, got, c.want)
		}
	}
}

// TestHolderClosesWhileConnecting: a holder that closes while processes
// connect closes every connection it took, a new one included, without a
// race (this test runs under -race) or a crash, and Close returns.
func TestHolderClosesWhileConnecting(t *testing.T) {
	pl := newPlace(t)
	holder := pl.started(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				nc, err := dialSocket(ctx, pl.socket)
				if err != nil {
					continue
				}
				nc.Close()
			}
		}()
	}
	closed := make(chan struct{})
	go func() {
		holder.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Error("Close did not return while processes connected")
	}
	cancel()
	wg.Wait()
}
