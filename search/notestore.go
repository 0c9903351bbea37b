package search

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The note store keeps the record of every indexed note (its metadata,
// appendNoteRecord) in a bbolt file beside the bleve index, one key per
// note, so that a save writes the records of the notes it changed and
// nothing else. Bleve's own internal values would not do: scorch writes
// every one of them again with each snapshot it persists.
//
// The store and the bleve index are two files, so a crash can leave them
// apart. The writer keeps them consistent note by note:
//
//  1. before a batch goes to bleve, the paths of its notes are marked dirty
//     in the store (one transaction, synced);
//  2. once bleve has persisted the batch, their records are written and
//     their marks cleared, in one transaction.
//
// A record is therefore never ahead of its document. After a crash a dirty
// note's record may be behind its document, or its document may be
// missing or left over; Open hands the dirty paths to the next Sync, which
// reads each of them again (or deletes its document when the note is gone
// from the disk), as it does a note whose mtime changed. A note that is
// not dirty has a record if and only if it has a document, and both are of
// the same version of the note.
//
// A change of several batches is not one note's business: a note written
// in an early batch changes the inbound link context of notes a later
// batch rewrites. So the store also says when a writer is at work (set
// with its first marks, cleared with its last records, in the same
// transactions), and the Sync after an interrupted one scans the links of
// the whole vault (applyFull), which finds every note whose inbound
// context its document lacks, whatever its record says.
//
// Each store carries the id of the bleve index its records belong to
// (written into both when the index is made): a store of another index,
// or none, makes the index rebuild.

// noteStoreFile is the store's file in the index folder.
const noteStoreFile = "notes.db"

// storeFill is how full bbolt fills the pages of records it splits.
const storeFill = 0.9

var (
	bucketNotes = []byte("notes") // path → record
	bucketDirty = []byte("dirty") // path → nothing: a note whose batch may not have reached both files
	bucketInfo  = []byte("info")
	infoIndex   = []byte("index")   // the id of the bleve index (keyNotes)
	infoFormat  = []byte("format")  // recordFormat
	infoWriting = []byte("writing") // present while a writer is at work
)

// noteStore is the open store. Its methods are called with the index's
// writeMu held, or before the index is shared.
type noteStore struct {
	path string
	db   *bolt.DB
	// records counts the records written or deleted (tests).
	records atomic.Int64
}

// openNoteStore opens (or creates) the store in the index folder dir.
func openNoteStore(dir string) (*noteStore, error) {
	path := filepath.Join(dir, noteStoreFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("note records %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("note records %s: %w", path, err)
	}
	return &noteStore{path: path, db: db}, nil
}

// newStoreID returns a new id for a bleve index and its store.
func newStoreID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// removeNoteStore deletes the store file in dir.
func removeNoteStore(dir string) error {
	if err := os.Remove(filepath.Join(dir, noteStoreFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove note records: %w", err)
	}
	return nil
}

func (s *noteStore) close() error { return s.db.Close() }

// unmap closes and opens the store again. bbolt reads through a mapping of
// the file: once load has read every record, all of its pages are in the
// process's resident memory (100 MB at 100,000 notes), where the kernel
// leaves them until it needs the memory. A new mapping holds only the pages
// later transactions touch.
func (s *noteStore) unmap() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("note records: %w", err)
	}
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("note records %s: %w", s.path, err)
	}
	s.db = db
	return nil
}

// The link keys of each note (the names its links point to) are read
// from the store when a change needs them, not kept with the notes in
// memory (at 100,000 notes about 20 MB): the old keys of the notes a
// change relinked or removed, and the notes linking to a name when a note
// of that name comes or goes. A writer writes the records of its notes
// before it ends, or leaves the index interrupted, whose next sync scans
// the links of the whole vault instead.

// linkKeysOf returns the link keys recorded for each of paths that has a
// record.
func (s *noteStore) linkKeysOf(paths []string) (map[string]linkKeys, error) {
	out := make(map[string]linkKeys, len(paths))
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNotes)
		if b == nil {
			return nil
		}
		for _, p := range paths {
			v := b.Get([]byte(p))
			if v == nil {
				continue
			}
			keys, err := recordLinkKeys(v)
			if err != nil {
				return fmt.Errorf("record of %q: %w", p, err)
			}
			out[p] = linkKeys(keys)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("note records: %w", err)
	}
	return out, nil
}

// linkers returns, for each of keys, the notes whose records hold a link
// with that key, sorted. It reads every record, so it maps the whole file:
// the store is mapped again after it (unmap).
func (s *noteStore) linkers(keys map[string]bool) (map[string][]string, error) {
	out := map[string][]string{}
	// A vault's notes hold about ten links each: most keys are told
	// apart from the few looked for by their length alone, without a
	// lookup.
	var lens [256]bool
	for k := range keys {
		lens[min(len(k), len(lens)-1)] = true
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNotes)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			lks, err := recordLinkKeys(v)
			if err != nil {
				return fmt.Errorf("record of %q: %w", k, err)
			}
			for key := range eachLinkKey(lks) {
				if lens[min(len(key), len(lens)-1)] && keys[string(key)] {
					out[string(key)] = append(out[string(key)], string(k))
				}
			}
			return nil
		})
	})
	if err == nil {
		err = s.unmap()
	}
	if err != nil {
		return nil, fmt.Errorf("note records: %w", err)
	}
	// ForEach goes in key order: each list is sorted.
	return out, nil
}

// storeState is what a store holds.
type storeState struct {
	id    string // the bleve index's id; "" for none, or for records of another format
	notes []*noteRec
	dirty []string
	// interrupted is set when a writer was at work: the process ended
	// (or the writer failed) part way through a change.
	interrupted bool
}

// load reads the whole store. A record that does not decode is an error:
// the index is rebuilt.
func (s *noteStore) load() (storeState, error) {
	var st storeState
	err := s.db.View(func(tx *bolt.Tx) error {
		info := tx.Bucket(bucketInfo)
		if info == nil || string(info.Get(infoFormat)) != recordFormat {
			return nil
		}
		st.id = string(info.Get(infoIndex))
		st.interrupted = info.Get(infoWriting) != nil
		if b := tx.Bucket(bucketNotes); b != nil {
			tags, arena := newTagInterner(), &strArena{}
			err := b.ForEach(func(k, v []byte) error {
				m, err := decodeNoteRec(k, v, tags, arena)
				if err != nil {
					return fmt.Errorf("record of %q: %w", k, err)
				}
				st.notes = append(st.notes, m)
				return nil
			})
			if err != nil {
				return err
			}
		}
		if b := tx.Bucket(bucketDirty); b != nil {
			return b.ForEach(func(k, _ []byte) error {
				st.dirty = append(st.dirty, string(k))
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return storeState{}, fmt.Errorf("note records: %w", err)
	}
	return st, nil
}

// start makes the (empty) store that of the bleve index id.
func (s *noteStore) start(id string) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketNotes, bucketDirty, bucketInfo} {
			if tx.Bucket(name) != nil {
				if err := tx.DeleteBucket(name); err != nil {
					return err
				}
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		info := tx.Bucket(bucketInfo)
		if err := info.Put(infoFormat, []byte(recordFormat)); err != nil {
			return err
		}
		return info.Put(infoIndex, []byte(id))
	})
	if err != nil {
		return fmt.Errorf("note records: %w", err)
	}
	return nil
}

// storeUpdate is one transaction of the store.
type storeUpdate struct {
	// done are the records of batches bleve has persisted, oldest first
	// (a nil record deletes the note's); their notes' dirty marks go.
	done []map[string]*NoteMeta
	// dirty are the notes of the batch about to be written.
	dirty []string
	// begin marks a writer at work; end clears that.
	begin, end bool
}

// update makes the changes of u in one transaction.
func (s *noteStore) update(u storeUpdate) error {
	if len(u.done) == 0 && len(u.dirty) == 0 && !u.begin && !u.end {
		return nil
	}
	done, dirty := u.done, u.dirty
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		notes, marks, info := tx.Bucket(bucketNotes), tx.Bucket(bucketDirty), tx.Bucket(bucketInfo)
		if notes == nil || marks == nil || info == nil {
			return errors.New("buckets missing")
		}
		// A first index writes its notes in the order of their paths, and
		// later changes rewrite records of about the same size: pages
		// split at bbolt's default of half full would double the file.
		notes.FillPercent = storeFill
		switch {
		case u.begin:
			if err := info.Put(infoWriting, []byte{}); err != nil {
				return err
			}
		case u.end:
			if err := info.Delete(infoWriting); err != nil {
				return err
			}
		}
		// bbolt keeps the values it is given until the transaction ends:
		// each record is a slice of buf that is never written again.
		var buf []byte
		for _, records := range done {
			// In key order: bbolt then touches each page once.
			for _, p := range slices.Sorted(maps.Keys(records)) {
				var err error
				if m := records[p]; m != nil {
					start := len(buf)
					buf = appendNoteRecord(buf, m)
					err = notes.Put([]byte(p), buf[start:len(buf):len(buf)])
				} else {
					err = notes.Delete([]byte(p))
				}
				if err == nil {
					err = marks.Delete([]byte(p))
				}
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				n++
			}
		}
		for _, p := range dirty {
			if err := marks.Put([]byte(p), []byte{}); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("note records: %w", err)
	}
	s.records.Add(int64(n))
	return nil
}
