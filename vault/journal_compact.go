package vault

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// maybeCompact compacts the journal when it and its stored contents are
// over the cap. It is called with the lock held, after an append. A
// journal that could not be brought under the cap (its newest run alone
// is over it) is not tried again until it has grown by a quarter of the
// cap, so that edits do not each read it.
func (j *Journal) maybeCompact() error {
	if j.max <= 0 {
		return nil
	}
	if j.extra < 0 {
		j.extra = folderBytes(j.contents)
	}
	total := j.size + j.extra
	if total <= j.max || (j.floor > 0 && total < j.floor+j.max/4) {
		return nil
	}
	return j.compact()
}

// compact drops the oldest runs, whole (their edits, corrections and
// undos, and the contents stored for them only), until the journal with
// its stored contents is under half the cap, keeping at least the newest
// run. The kept lines are copied as they are, in order, to a new file
// that replaces the journal atomically.
func (j *Journal) compact() error {
	f, err := os.Open(j.path)
	if err != nil {
		return err
	}
	defer f.Close()
	type run struct {
		last  int   // the Seq of its newest record
		bytes int64 // its lines and stored contents
	}
	var recs []record
	runOf := map[int]string{} // edit Seq -> run
	runs := map[string]*run{}
	stored := map[string]int64{} // stored content -> size
	err = j.scan(f, false, func(r record) {
		id := r.RunID
		if target := max(r.Undoes, r.Amends); target > 0 {
			if owner, ok := runOf[target]; ok {
				id = owner
			}
		} else {
			runOf[r.Seq] = id
		}
		r.RunID = id
		recs = append(recs, r)
		ru := runs[id]
		if ru == nil {
			ru = &run{}
			runs[id] = ru
		}
		ru.last = max(ru.last, r.Seq)
		ru.bytes += r.n
		if r.BeforeStored && isHash(r.BeforeHash) {
			if _, seen := stored[r.BeforeHash]; !seen {
				if st, err := os.Stat(filepath.Join(j.contents, r.BeforeHash)); err == nil {
					stored[r.BeforeHash] = st.Size()
				} else {
					stored[r.BeforeHash] = 0
				}
			}
			ru.bytes += stored[r.BeforeHash]
		}
	})
	if err != nil {
		return err
	}
	order := make([]string, 0, len(runs))
	for id := range runs {
		order = append(order, id)
	}
	sort.Slice(order, func(a, b int) bool { return runs[order[a]].last > runs[order[b]].last })
	keep := map[string]bool{}
	var used int64
	for i, id := range order {
		if i > 0 && used+runs[id].bytes > j.max/2 {
			break // this run and every older one go
		}
		keep[id] = true
		used += runs[id].bytes
	}
	if len(keep) == len(runs) {
		j.floor = j.size + j.extra
		return nil
	}

	tmp, err := os.CreateTemp(filepath.Dir(j.path), "."+filepath.Base(j.path)+".compact-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	var size int64
	kept := map[string]bool{}
	edits := 0
	for _, r := range recs {
		if !keep[r.RunID] {
			if isEditOp(r.Op) {
				edits++
			}
			continue
		}
		if r.BeforeStored {
			kept[r.BeforeHash] = true
		}
		n, err := io.Copy(tmp, io.NewSectionReader(f, r.off, r.n))
		if err == nil && n > 0 {
			var last [1]byte
			if _, err = f.ReadAt(last[:], r.off+r.n-1); err == nil && last[0] != '\n' {
				var k int
				k, err = tmp.Write([]byte{'\n'})
				n += int64(k)
			}
		}
		if err != nil {
			tmp.Close()
			return err
		}
		size += n
	}
	if err := fsync(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), j.path); err != nil {
		return err
	}
	syncDir(filepath.Dir(j.path))
	for h := range stored {
		if !kept[h] {
			if err := os.Remove(filepath.Join(j.contents, h)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				j.log.Warn("could not remove a stored content the journal no longer needs", "file", filepath.Join(j.contents, h), "error", err)
			}
		}
	}
	j.size, j.extra, j.floor = size, folderBytes(j.contents), 0
	if j.size+j.extra > j.max {
		j.floor = j.size + j.extra
	}
	j.log.Info(fmt.Sprintf("the edit journal was over its %d MiB cap: dropped its %d oldest runs (%d edits), which can no longer be undone", j.max>>20, len(runs)-len(keep), edits),
		"journal", j.path, "bytes", j.size+j.extra)
	return nil
}

// folderBytes is the size of the files of dir (0 when there is none).
func folderBytes(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}
