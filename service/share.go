package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/semantic"
	"github.com/vault-agent/vault-agent/search/shared"
)

// defaultLockWait is how long a process waits for an index locked by a
// process that does not answer on its socket yet: one opening a large
// index verifies it before it serves.
const defaultLockWait = 5 * time.Second

// runtimeDir is Env.RuntimeDir for this process.
func runtimeDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, "vault-agent")
	}
	return filepath.Join(os.TempDir(), "vault-agent-"+strconv.Itoa(os.Getuid()))
}

// SocketPath is where the process holding the index at indexPath serves
// it: a socket in Env.RuntimeDir named by a hash of the index's absolute
// path (short, for the 104 bytes a socket path may have). It is "" when
// nothing is shared: no runtime dir, or an index in memory.
func (e Env) SocketPath(indexPath string) string {
	if e.RuntimeDir == "" || indexPath == "" {
		return ""
	}
	abs, err := filepath.Abs(indexPath)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return filepath.Join(e.RuntimeDir, hex.EncodeToString(sum[:8])+".sock")
}

// sharing are the options of the vault's shared index.
func (s *Service) sharing(opts Options, emb semantic.Embedder) shared.Options {
	wait := opts.LockWait
	if wait <= 0 {
		wait = defaultLockWait
	}
	front := opts.FrontEnd
	if front == "" {
		front = "vault-agent"
	}
	return shared.Options{
		Path:        s.indexPath,
		Socket:      s.env.SocketPath(s.indexPath),
		Vault:       s.vault,
		Logger:      s.log,
		FrontEnd:    front,
		Embedder:    emb,
		VectorsPath: vectorsPath(s.indexPath),
		CallTimeout: opts.CallTimeout,
		ConnectWait: wait,
	}
}

// IndexStatus is what `vault-agent status` tells of a vault's index.
type IndexStatus struct {
	// Index is the index folder, Socket where its holder serves it.
	Index  string `json:"index"`
	Socket string `json:"socket,omitempty"`
	// Holder describes the process serving the index; nil when none does.
	Holder *shared.Status `json:"holder,omitempty"`
	// LockedBy is the process holding the index without serving it (an
	// older vault-agent, one still opening it, or a hung one), 0 if none;
	// Locked says whether any process holds it.
	LockedBy int  `json:"lockedBy,omitempty"`
	Locked   bool `json:"locked"`
	// OnDisk is the size of the index folder, and Modified when it last
	// changed, for an index nobody holds.
	OnDisk   int64     `json:"onDisk,omitempty"`
	Modified time.Time `json:"modified"`
	// Problem says why the holder could not be asked, when it could not.
	Problem string `json:"problem,omitempty"`
}

// ErrNoIndex is the error of Status for a vault that has no index yet.
var ErrNoIndex = errors.New("the vault has no index yet")

// Status tells who holds the index of the vault of opts (its folder and
// index options), without opening it: the process serving it, how many
// processes it serves, and the index's size and freshness.
func Status(ctx context.Context, opts Options) (*IndexStatus, error) {
	env := ProcessEnv()
	if opts.Env != nil {
		env = *opts.Env
	}
	root, err := filepath.Abs(opts.Vault)
	if err != nil {
		return nil, &OpenError{Part: PartVault, Path: opts.Vault, Err: err}
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, &OpenError{Part: PartVault, Path: root, Err: fmt.Errorf("%s is not a folder", root)}
	}
	index := opts.Index
	if index == "" {
		if index, err = env.DefaultIndexPath(root); err != nil {
			return nil, &OpenError{Part: PartIndex, Err: err}
		}
		// The excludes of the config file and the environment count, as
		// for Open.
		index += excludesSuffix(env.Layered(root, opts.Settings, opts.Logger))
	}
	if index, err = filepath.Abs(index); err != nil {
		return nil, &OpenError{Part: PartIndex, Path: index, Err: err}
	}
	st := &IndexStatus{Index: index, Socket: env.SocketPath(index)}
	fi, err := os.Stat(index)
	if err != nil {
		return st, fmt.Errorf("%w: %s (vault-agent index --vault %s builds it)", ErrNoIndex, index, root)
	}
	st.Modified = fi.ModTime()
	st.LockedBy, st.Locked = search.Locked(index)
	if st.Locked && st.Socket != "" {
		timeout := opts.CallTimeout
		if timeout <= 0 {
			timeout = 5 * time.Second
		}
		h, err := shared.Inspect(ctx, st.Socket, timeout)
		if err == nil {
			st.Holder = &h
			return st, nil
		}
		st.Problem = err.Error()
	}
	var size int64
	_ = filepath.Walk(index, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
			if fi.ModTime().After(st.Modified) {
				st.Modified = fi.ModTime()
			}
		}
		return nil
	})
	st.OnDisk = size
	return st, nil
}
