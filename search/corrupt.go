package search

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// ErrCorrupt is the error of a search that found the index damaged: the
// index is moved aside and rebuilt from the vault in the background, and a
// later search finds the notes again.
var ErrCorrupt = errors.New("the index is damaged; it is being rebuilt from the vault, retry in a moment")

// Files of a damaged index are moved into corruptDir, replacing the
// previous damaged one, for a look at what happened; verifiedFile records
// the segment files whose checksums were checked.
const (
	corruptDir   = "corrupt"
	verifiedFile = "vault-agent-verified.json"
)

// segStamp identifies one verified version of a segment file.
type segStamp struct {
	Size  int64 `json:"size"`
	MTime int64 `json:"mtime"`
}

// verifySegments checks the checksum that ends every segment file of the
// index's current snapshot, live (zap writes the CRC-32 of all the bytes
// before it, and never changes a segment once written), so that damage is
// found at open rather than by a search that reads the damaged bytes. A
// segment file no snapshot holds is not checked: a process killed while
// scorch wrote it leaves it short, and scorch removes it. A segment is
// read once: its size and modification time are remembered in
// verifiedFile, and a changed file is read again. It returns why the index
// must be rebuilt, or "".
func (ix *Index) verifySegments(live map[string]bool) string {
	store := filepath.Join(ix.path, bleveStoreDir)
	entries, err := os.ReadDir(store)
	if err != nil {
		return "index store unreadable: " + err.Error()
	}
	known := map[string]segStamp{}
	if b, err := os.ReadFile(filepath.Join(ix.path, verifiedFile)); err == nil {
		_ = json.Unmarshal(b, &known) // a damaged record only costs a re-check
	}
	verified := make(map[string]segStamp, len(entries))
	changed := false
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".zap") || !live[name] {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // removed by a merge's cleanup
			}
			return "index store unreadable: " + err.Error()
		}
		st := segStamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
		if known[name] != st {
			if err := checkSegment(filepath.Join(store, name)); err != nil {
				return fmt.Sprintf("index is corrupt: segment %s: %v", name, err)
			}
			changed = true
		}
		verified[name] = st
	}
	if changed || len(verified) != len(known) {
		if b, err := json.Marshal(verified); err == nil {
			tmp := filepath.Join(ix.path, verifiedFile+".tmp")
			if os.WriteFile(tmp, b, 0o600) == nil {
				_ = os.Rename(tmp, filepath.Join(ix.path, verifiedFile))
			}
		}
	}
	return ""
}

// liveSegments returns the file names of the segments of the current
// snapshot of idx, a scorch index.
func liveSegments(idx bleve.Index) (map[string]bool, error) {
	adv, err := idx.Advanced()
	if err != nil {
		return nil, err
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil, fmt.Errorf("not a scorch index: %T", adv)
	}
	r, err := s.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, fmt.Errorf("not a scorch snapshot: %T", r)
	}
	live := map[string]bool{}
	for _, seg := range snap.Segments() {
		if f, ok := seg.Segment().(interface{ Path() string }); ok && f.Path() != "" {
			live[filepath.Base(f.Path())] = true
		}
	}
	return live, nil
}

// checkSegment compares a zap segment file's closing CRC-32 with the
// checksum of the bytes before it.
func checkSegment(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < 4 {
		return errors.New("shorter than its checksum")
	}
	h := crc32.NewIEEE()
	if _, err := io.CopyN(h, f, fi.Size()-4); err != nil {
		return err
	}
	var want [4]byte
	if _, err := io.ReadFull(f, want[:]); err != nil {
		return err
	}
	if got := h.Sum32(); got != binary.BigEndian.Uint32(want[:]) {
		return fmt.Errorf("checksum %08x, recorded %08x", got, binary.BigEndian.Uint32(want[:]))
	}
	return nil
}

// moveAside moves a damaged index's bleve files into corruptDir, in place
// of the damaged index moved there before.
func (ix *Index) moveAside() error {
	dst := filepath.Join(ix.path, corruptDir)
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("move the damaged index aside: %w", err)
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return fmt.Errorf("move the damaged index aside: %w", err)
	}
	for _, name := range []string{bleveMetaFile, bleveStoreDir} {
		if err := os.Rename(filepath.Join(ix.path, name), filepath.Join(dst, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("move the damaged index aside: %w", err)
		}
	}
	_ = os.Remove(filepath.Join(ix.path, verifiedFile))
	ix.log.Warn("the damaged index was moved aside and is rebuilt from the vault", "moved to", dst)
	return nil
}

// ErrInternal is the error of a search that failed on a fault of this
// program, not of the query or the index.
var ErrInternal = errors.New("the search failed on an internal error (not your query or your vault; please report it)")

// indexPackages are the libraries that decode the index's bytes: a panic
// raised in them is damage they read, not a fault of this program's.
var indexPackages = []string{"github.com/blevesearch/", "github.com/RoaringBitmap/", "github.com/bits-and-blooms/", "go.etcd.io/bbolt"}

// indexPanic reports whether the panic whose stack (as debug.Stack prints
// it, from the deferred recover) is given was raised in one of
// indexPackages: the first function below the runtime's panic frames.
func indexPanic(stack string) bool {
	lines := strings.Split(stack, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "panic(") {
			continue
		}
		for _, f := range lines[i+1:] {
			if f == "" || strings.HasPrefix(f, "\t") || strings.HasPrefix(f, "runtime.") || strings.HasPrefix(f, "panic(") {
				continue
			}
			for _, p := range indexPackages {
				if strings.HasPrefix(f, p) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// searchPanicked handles a panic of a search. bleve panics on a segment
// whose bytes are damaged: the index is rebuilt in the background (once at
// a time) and the search gets ErrCorrupt. A panic anywhere else is a fault
// of this program's: the search gets ErrInternal, the index is left as it
// is, and the next search runs as usual.
func (ix *Index) searchPanicked(r any, stack string) error {
	if !indexPanic(stack) {
		ix.log.Error("a search failed on an internal error", "panic", fmt.Sprint(r), "stack", stack)
		return fmt.Errorf("%w: %v", ErrInternal, r)
	}
	reason := fmt.Sprintf("index is corrupt (panic while searching: %v)", r)
	ix.log.Warn("a search found the index damaged; rebuilding it from the vault", "panic", fmt.Sprint(r), "stack", stack)
	if ix.rebuilding.CompareAndSwap(false, true) {
		done := make(chan struct{})
		ix.rebuildDone.Store(&done)
		go func() {
			defer close(done)
			defer ix.rebuilding.Store(false)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				select {
				case <-ix.closed:
					cancel()
				case <-ctx.Done():
				}
			}()
			ix.writeMu.Lock()
			defer ix.writeMu.Unlock()
			if ix.isClosed() {
				return
			}
			ix.corrupt, ix.pendingReason = true, reason
			if _, err := ix.syncLocked(ctx, nil); err != nil && !ix.isClosed() {
				ix.log.Warn("rebuilding the damaged index failed", "error", err)
			}
		}()
	}
	return fmt.Errorf("%w (%s)", ErrCorrupt, reason)
}
