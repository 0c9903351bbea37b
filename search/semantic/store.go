package semantic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// key identifies a chunk's vector: the first 16 bytes of the SHA-256 of
// the chunk's heading path and text. The vectors of one model live in one
// bucket, so a key with the model's name is the "content hash + model" the
// vectors are stored under.
type key [16]byte

// vec is one stored vector: int8 components (padded to the stride) and
// the inverse of their norm.
type vec struct {
	q   []int8
	inv float32
}

// noteRec is what the store remembers of a note: the content hash it was
// embedded at and the key of each of its chunks, in order.
type noteRec struct {
	hash string
	keys []key
}

// Buckets and meta keys of the store file.
var (
	bucketMeta  = []byte("meta")
	bucketNotes = []byte("notes")
	bucketVecs  = []byte("vectors")
	metaFormat  = []byte("format")
	metaModel   = []byte("model")
	metaDims    = []byte("dims")
)

const storeFormat = "1"

// store keeps vectors and note records in a bbolt file, or in memory when
// it has none. A bbolt transaction is atomic and durable on commit, so a
// process killed mid-sync loses at most the batch it had not committed.
// A damaged file (checkStoreFile at open; a panic of bbolt in any
// transaction after) is moved aside and replaced by an empty one: vectors
// can always be made again, and until they are, search is lexical for the
// notes without them. It is not safe for concurrent use: the Engine
// serializes its writes.
type store struct {
	db   *bolt.DB // nil: memory only
	path string
	log  *slog.Logger
	// damaged is set when a transaction found the file damaged: every
	// later one fails with it until reset replaces the file.
	damaged error

	model string
	dims  int

	vecs  map[key]vec // memory only
	notes map[string]noteRec
}

// openStore opens (or creates) the store at path; "" keeps it in memory.
// It reports the model and dimension the vectors were made with. A damaged
// file is moved aside (<path>.damaged) and an empty store made in its
// place.
func openStore(path string, log *slog.Logger) (*store, error) {
	s := &store{notes: map[string]noteRec{}, path: path, log: log}
	if path == "" {
		s.vecs = map[key]vec{}
		return s, nil
	}
	err := s.openFile()
	if errors.Is(err, errDamaged) {
		s.damaged = err
		if err = s.moveAside(); err == nil {
			err = s.openFile()
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// openFile opens s.path, checked, and reads its meta and note records.
func (s *store) openFile() (err error) {
	if st, serr := os.Stat(s.path); serr == nil && st.Size() > 0 {
		if err := checkStoreFile(s.path); err != nil {
			return fmt.Errorf("open the vector store %s: %w", s.path, err)
		}
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("open the vector store %s: %w: %v", s.path, errDamaged, r)
		}
	}()
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: time.Second})
	switch {
	case errors.Is(err, bolt.ErrTimeout):
		return fmt.Errorf("vector store %s is in use by another process", s.path)
	case errors.Is(err, bolt.ErrInvalid), errors.Is(err, bolt.ErrChecksum), errors.Is(err, bolt.ErrVersionMismatch):
		return fmt.Errorf("open the vector store %s: %w: %v", s.path, errDamaged, err)
	case err != nil:
		return fmt.Errorf("open the vector store %s: %w", s.path, err)
	}
	s.notes = map[string]noteRec{}
	s.model, s.dims = "", 0
	err = db.Update(func(tx *bolt.Tx) error {
		m, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if f := m.Get(metaFormat); f != nil && string(f) != storeFormat {
			// An unknown layout: start again (vectors can be recomputed).
			for _, b := range [][]byte{bucketNotes, bucketVecs} {
				if tx.Bucket(b) != nil {
					if err := tx.DeleteBucket(b); err != nil {
						return err
					}
				}
			}
			m.Delete(metaModel)
			m.Delete(metaDims)
		}
		if err := m.Put(metaFormat, []byte(storeFormat)); err != nil {
			return err
		}
		s.model = string(m.Get(metaModel))
		if d := m.Get(metaDims); len(d) == 4 {
			s.dims = int(binary.LittleEndian.Uint32(d))
		}
		for _, b := range [][]byte{bucketNotes, bucketVecs} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketNotes).ForEach(func(k, v []byte) error {
			if r, ok := decodeNote(v); ok {
				s.notes[string(k)] = r
			}
			return nil
		})
	})
	if err != nil {
		db.Close()
		return fmt.Errorf("read the vector store %s: %w", s.path, err)
	}
	s.db, s.damaged = db, nil
	return nil
}

// moveAside moves the damaged file out of the way (<path>.damaged, in
// place of an older one), or removes it when it cannot be moved.
func (s *store) moveAside() error {
	aside := s.path + ".damaged"
	if err := os.Rename(s.path, aside); err != nil {
		aside = "(removed)"
		if rerr := os.Remove(s.path); rerr != nil {
			return fmt.Errorf("%w; it could not be moved aside or removed: %v", s.damaged, rerr)
		}
	}
	s.log.Warn("the vector store was damaged: it was moved aside and is rebuilt, every chunk will be embedded again; search is lexical for the notes without vectors meanwhile",
		"store", s.path, "movedTo", aside, "error", s.damaged)
	return nil
}

// recreate replaces a damaged file with an empty store.
func (s *store) recreate() error {
	if s.db != nil {
		_ = s.db.Close()
		s.db = nil
	}
	if err := s.moveAside(); err != nil {
		return err
	}
	return s.openFile()
}

// viewTx and updateTx run fn in a transaction; a panic of bbolt in it (an
// assertion on a damaged page) marks the store damaged and is returned as
// errDamaged, as every later transaction is, until reset.
func (s *store) viewTx(fn func(tx *bolt.Tx) error) error { return s.tx(false, fn) }

func (s *store) updateTx(fn func(tx *bolt.Tx) error) error { return s.tx(true, fn) }

func (s *store) tx(write bool, fn func(tx *bolt.Tx) error) (err error) {
	if s.damaged != nil {
		return s.damaged
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			s.damaged = fmt.Errorf("vector store %s: %w: %v", s.path, errDamaged, r)
			err = s.damaged
		}
	}()
	if write {
		return s.db.Update(fn)
	}
	return s.db.View(fn)
}

func (s *store) close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// reset drops every vector and records model and dims (0: unknown yet).
// Note records stay: their keys do not depend on the model.
func (s *store) reset(model string, dims int) error {
	if s.damaged != nil && s.db != nil {
		if err := s.recreate(); err != nil {
			return err
		}
	}
	s.model, s.dims = model, dims
	if s.db == nil {
		s.vecs = map[key]vec{}
		return nil
	}
	return s.updateTx(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketVecs); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
			return err
		}
		if _, err := tx.CreateBucket(bucketVecs); err != nil {
			return err
		}
		return putMeta(tx, model, dims)
	})
}

func putMeta(tx *bolt.Tx, model string, dims int) error {
	m := tx.Bucket(bucketMeta)
	var d [4]byte
	binary.LittleEndian.PutUint32(d[:], uint32(dims))
	if err := m.Put(metaModel, []byte(model)); err != nil {
		return err
	}
	return m.Put(metaDims, d[:])
}

// get returns the stored vectors of keys, and false when one is missing.
func (s *store) get(keys []key, stride int) ([]vec, bool) {
	out := make([]vec, len(keys))
	if s.db == nil {
		for i, k := range keys {
			v, ok := s.vecs[k]
			if !ok {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	}
	ok := true
	err := s.viewTx(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketVecs)
		for i, k := range keys {
			v, good := decodeVec(b.Get(k[:]), s.dims, stride)
			if !good {
				ok = false
				return nil
			}
			out[i] = v
		}
		return nil
	})
	return out, ok && err == nil
}

// has reports whether the vector of k is stored.
func (s *store) has(tx *bolt.Tx, k key) bool {
	if s.db == nil {
		_, ok := s.vecs[k]
		return ok
	}
	return tx.Bucket(bucketVecs).Get(k[:]) != nil
}

// view runs fn in a read transaction (nil tx in memory).
func (s *store) view(fn func(tx txn)) {
	if s.db == nil {
		fn(nil)
		return
	}
	// An error (a damaged file) is the store's from now on: the commit
	// that follows a view reports it.
	_ = s.viewTx(func(tx *bolt.Tx) error { fn(tx); return nil })
}

// commit stores vectors and note records, and deletes the records of
// gone, in one transaction.
func (s *store) commit(keys []key, vecs []vec, notes map[string]noteRec, gone []string) error {
	if s.db == nil {
		for i, k := range keys {
			s.vecs[k] = vecs[i]
		}
		for p, r := range notes {
			s.notes[p] = r
		}
		for _, p := range gone {
			delete(s.notes, p)
		}
		return nil
	}
	err := s.updateTx(func(tx *bolt.Tx) error {
		if err := putMeta(tx, s.model, s.dims); err != nil {
			return err
		}
		b := tx.Bucket(bucketVecs)
		for i, k := range keys {
			if err := b.Put(k[:], encodeVec(vecs[i], s.dims)); err != nil {
				return err
			}
		}
		nb := tx.Bucket(bucketNotes)
		for p, r := range notes {
			if err := nb.Put([]byte(p), encodeNote(r)); err != nil {
				return err
			}
		}
		for _, p := range gone {
			if err := nb.Delete([]byte(p)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write the vector store: %w", err)
	}
	for p, r := range notes {
		s.notes[p] = r
	}
	for _, p := range gone {
		delete(s.notes, p)
	}
	return nil
}

// collect deletes the vectors no note record refers to, and returns how
// many it deleted.
func (s *store) collect() (int, error) {
	used := make(map[key]struct{})
	for _, r := range s.notes {
		for _, k := range r.keys {
			used[k] = struct{}{}
		}
	}
	n := 0
	if s.db == nil {
		for k := range s.vecs {
			if _, ok := used[k]; !ok {
				delete(s.vecs, k)
				n++
			}
		}
		return n, nil
	}
	var stale [][]byte
	err := s.viewTx(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketVecs).ForEach(func(k, _ []byte) error {
			var kk key
			copy(kk[:], k)
			if _, ok := used[kk]; !ok || len(k) != len(kk) {
				stale = append(stale, append([]byte(nil), k...))
			}
			return nil
		})
	})
	if err != nil || len(stale) == 0 {
		return 0, err
	}
	err = s.updateTx(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketVecs)
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	return len(stale), err
}

// A stored vector is its dims int8 components, then its inverse norm as a
// little-endian float32. bbolt commits are atomic (copy-on-write pages, a
// checksummed meta page), so a value is whole or absent; one of the wrong
// length (another dimension) is treated as missing and embedded again.
func encodeVec(v vec, dims int) []byte {
	b := make([]byte, dims+4)
	for i := range dims {
		b[i] = byte(v.q[i])
	}
	binary.LittleEndian.PutUint32(b[dims:], math.Float32bits(v.inv))
	return b
}

func decodeVec(b []byte, dims, stride int) (vec, bool) {
	if dims == 0 || len(b) != dims+4 {
		return vec{}, false
	}
	q := make([]int8, stride)
	for i := range dims {
		q[i] = int8(b[i])
	}
	return vec{q: q, inv: math.Float32frombits(binary.LittleEndian.Uint32(b[dims:]))}, true
}

func encodeNote(r noteRec) []byte {
	b := make([]byte, 0, 2+len(r.hash)+4+16*len(r.keys))
	b = binary.AppendUvarint(b, uint64(len(r.hash)))
	b = append(b, r.hash...)
	b = binary.AppendUvarint(b, uint64(len(r.keys)))
	for _, k := range r.keys {
		b = append(b, k[:]...)
	}
	return b
}

func decodeNote(b []byte) (noteRec, bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return noteRec{}, false
	}
	r := noteRec{hash: string(b[w : w+int(n)])}
	b = b[w+int(n):]
	c, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) != c*16 {
		return noteRec{}, false
	}
	b = b[w:]
	r.keys = make([]key, c)
	for i := range r.keys {
		copy(r.keys[i][:], b[i*16:])
	}
	return r, true
}

// txn is a read transaction of the store (nil for a store in memory).
type txn = *bolt.Tx
