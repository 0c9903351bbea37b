package search

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/vault-agent/vault-agent/vault"
)

// Link context. Each note's document carries, besides its own text, the
// anchor text and the sentence or list item around every link that points
// to it (fAnchor, fLinkText): people describe a note in the words of the
// notes that link to it. To keep that exact as notes change, NoteMeta keeps
// the link keys of each note's own links (vault.LinkKey: which names it
// links to) and a hash of its inbound context, so a note whose inbound
// context did not change is not rewritten; both are in the state record.
//
// A full index scans the links of every note first (a fast line scanner,
// vault.LinkContexts, no markdown parse) and then indexes each note with
// its inbound context (see scanLinks). An incremental update (a watcher batch, a sync with
// few changes) works out which notes' inbound context may have changed:
// the notes named by the old and new links of a changed or removed note,
// and the notes sharing a name with a created or removed note (a link by
// name may now resolve elsewhere); it recomputes their inbound context from
// their linkers (the notes whose keys name them) read from disk, and
// rewrites those whose hash changed. After the disk goes quiet the index
// equals a fresh scan.

// Limits on the inbound context of one note, so a note linked from
// thousands of daily notes does not grow without bound. The contexts kept
// are the first ones by linking path, so the choice is deterministic.
const (
	maxInboundTexts   = 64
	maxInboundAnchors = 32
)

// inbound is the context of the links pointing to one note.
type inbound struct {
	from    []string // linking notes, sorted, unique
	items   []inboundItem
	anchors []string
	texts   []string
	hash    uint64 // 0 when there is no inbound link
}

// linkKeys is the unique, sorted vault.LinkKey of each link of a note,
// packed in one string: each key as its length (a uvarint) and its bytes,
// the layout of a list in the state record. One pointer-free string a note
// instead of a slice of strings: a sync keeps the keys of every note, and
// the collector would scan each slice on every cycle.
type linkKeys string

// packLinkKeys returns the link keys of lcs.
func packLinkKeys(lcs []vault.LinkContext) linkKeys {
	if len(lcs) == 0 {
		return ""
	}
	keys := make([]string, 0, len(lcs))
	size := 0
	for _, l := range lcs {
		if k := vault.LinkKey(l.Target); k != "" {
			keys = append(keys, k)
			size += strBytes(k)
		}
	}
	sort.Strings(keys)
	keys = dedupeSorted(keys)
	b := make([]byte, 0, size)
	for _, k := range keys {
		b = appendStr(b, k)
	}
	return linkKeys(b)
}

// eachLinkKey yields each key of b, in linkKeys' layout, a subslice of b.
func eachLinkKey(b []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			n, w := binary.Uvarint(b)
			if w <= 0 || n > uint64(len(b)-w) {
				return // not written by packLinkKeys or the state reader
			}
			if !yield(b[w : w+int(n)]) {
				return
			}
			b = b[w+int(n):]
		}
	}
}

// all yields each key, a substring of k.
func (k linkKeys) all() iter.Seq[string] {
	return func(yield func(string) bool) {
		for s := string(k); s != ""; {
			n, w := binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
			if w <= 0 || n > uint64(len(s)-w) {
				return // not written by packLinkKeys or the state reader
			}
			if !yield(s[w : w+int(n)]) {
				return
			}
			s = s[w+int(n):]
		}
	}
}

// count returns the number of keys.
func (k linkKeys) count() int {
	n := 0
	for range k.all() {
		n++
	}
	return n
}

func dedupeSorted(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// inboundBuilder gathers the contexts pointing to one note.
type inboundBuilder struct {
	from  map[string]bool
	items []inboundItem
}

// inboundItem is one link pointing to a note: the linking note, the link's
// place among its links, and the link itself. A note's items are stored
// with its document (fInbound), so an update can recompute inbound
// context from them instead of reading the linking notes again.
type inboundItem struct {
	Src string
	I   int
	L   vault.LinkContext
}

func (b *inboundBuilder) add(src string, i int, lc vault.LinkContext) {
	if b.from == nil {
		b.from = map[string]bool{}
	}
	b.from[src] = true
	b.items = append(b.items, inboundItem{src, i, lc})
}

// build orders, deduplicates and caps the contexts and hashes the result.
func (b *inboundBuilder) build() *inbound {
	if len(b.from) == 0 {
		return nil
	}
	in := &inbound{from: make([]string, 0, len(b.from))}
	for s := range b.from {
		in.from = append(in.from, s)
	}
	sort.Strings(in.from)
	sort.Slice(b.items, func(i, j int) bool {
		if b.items[i].Src != b.items[j].Src {
			return b.items[i].Src < b.items[j].Src
		}
		return b.items[i].I < b.items[j].I
	})
	in.items = b.items
	seenA, seenT := map[string]bool{}, map[string]bool{}
	for _, it := range b.items {
		if a := strings.ToLower(it.L.Anchor); a != "" && !seenA[a] && len(in.anchors) < maxInboundAnchors {
			seenA[a] = true
			in.anchors = append(in.anchors, it.L.Anchor)
		}
		if t := strings.ToLower(it.L.Text); t != "" && !seenT[t] && len(in.texts) < maxInboundTexts {
			seenT[t] = true
			in.texts = append(in.texts, it.L.Text)
		}
	}
	h := fnv.New64a()
	for _, part := range [][]string{in.from, in.anchors, in.texts} {
		for _, s := range part {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
		h.Write([]byte{1})
	}
	in.hash = h.Sum64() | 1 // never 0, which means "no inbound link"
	return in
}

// outHash is a hash of a note's own links with their context, 0 when it
// has none: when it is unchanged, an edit of the note changes nothing for
// the notes it links to.
func outHash(lcs []vault.LinkContext) uint64 {
	if len(lcs) == 0 {
		return 0
	}
	h := fnv.New64a()
	for _, l := range lcs {
		for _, s := range []string{l.Target, l.Anchor, l.Text} {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
		if l.Markdown {
			h.Write([]byte{1})
		}
		h.Write([]byte{2})
	}
	return h.Sum64() | 1
}

// storedItems returns the inbound items stored with the document of the
// note at p (none when it has no inbound link or is not indexed).
func (ix *Index) storedItems(p string) []inboundItem {
	if m := ix.meta.get(p); m == nil || m.inHash == 0 {
		return nil
	}
	return ix.docItems(p)
}

// docItems reads the inbound items stored with the document at p.
func (ix *Index) docItems(p string) []inboundItem {
	ix.idxMu.RLock()
	doc, err := ix.idx.Document(p)
	ix.idxMu.RUnlock()
	if err != nil || doc == nil {
		return nil
	}
	var items []inboundItem
	doc.VisitFields(func(f index.Field) {
		if f.Name() == fInbound {
			var err error
			if items, err = decodeItems(f.Value()); err != nil {
				ix.log.Warn("unreadable inbound links", "path", p, "err", err)
			}
		}
	})
	return items
}

// storedInbound returns the inbound context of the note at p as indexed.
func (ix *Index) storedInbound(p string) *inbound {
	items := ix.storedItems(p)
	if len(items) == 0 {
		return nil
	}
	var b inboundBuilder
	for _, it := range items {
		b.add(it.Src, it.I, it.L)
	}
	return b.build()
}

// storedItem is the stored form of an inboundItem, with short keys.
type storedItem struct {
	Src      string `json:"s"`
	I        int    `json:"i,omitempty"`
	Target   string `json:"t"`
	Markdown bool   `json:"m,omitempty"`
	Anchor   string `json:"a,omitempty"`
	Text     string `json:"x,omitempty"`
}

// encodeItems is the stored form of a note's inbound items.
func encodeItems(items []inboundItem) []byte {
	st := make([]storedItem, len(items))
	for i, it := range items {
		st[i] = storedItem{it.Src, it.I, it.L.Target, it.L.Markdown, it.L.Anchor, it.L.Text}
	}
	b, err := json.Marshal(st)
	if err != nil {
		panic(err) // strings and ints cannot fail to marshal
	}
	return b
}

// decodeItems reads what encodeItems wrote.
func decodeItems(b []byte) ([]inboundItem, error) {
	var st []storedItem
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, err
	}
	items := make([]inboundItem, len(st))
	for i, s := range st {
		items[i] = inboundItem{s.Src, s.I, vault.LinkContext{Target: s.Target, Markdown: s.Markdown, Anchor: s.Anchor, Text: s.Text}}
	}
	return items, nil
}

func (in *inbound) hashOrZero() uint64 {
	if in == nil {
		return 0
	}
	return in.hash
}

// keyView is a key index with some keys' notes replaced: the notes by name
// after a change, without copying the whole index.
type keyView struct {
	base *keyIndex
	over map[string][]string
}

func (v keyView) get(k string) []string {
	if ps, ok := v.over[k]; ok {
		return ps
	}
	return v.base.get(k)
}

// resolve returns the note lc (found in src) points to.
func (v keyView) resolve(lc vault.LinkContext, src string) (string, bool) {
	return vault.ResolveLink(lc, src, v.get(vault.LinkKey(lc.Target)))
}

// A full index needs the inbound context of every note before it writes
// the note, so it scans the links of the whole vault first. Held in
// memory, the links of a vault take about 300 bytes each (a 100,000-note
// vault has about a million): the scan instead resolves each link to the
// note it points to and spills it, encoded, to one of a few partitions
// (files beside the index) by that note's path; the notes are then
// indexed one partition at a time, with only that partition's links in
// memory.

// notesPerPartition sets the number of partitions of a full index: the
// links pointing to about this many notes are in memory at once.
var notesPerPartition = 4000

// linkScanPrefix begins the name of the folder a full index spills to.
const linkScanPrefix = "linkscan-"

// linkParts are the links of a vault, spilled by target partition. A
// partition is a run of the vault's paths in sorted order, so that notes
// written partition by partition are written in the order of their ids:
// before it adds a batch, bleve looks up each of the batch's ids in every
// segment whose largest id is not smaller (to delete the documents the
// batch replaces), which for a first index written in that order is none.
type linkParts struct {
	n      int
	bounds []string   // the first path of partitions 1 to n-1
	files  []*os.File // when spilled to disk (more than one partition)
	bufs   []*bufio.Writer
	mem    []bytes.Buffer // when in memory (one partition)
	dir    string
}

// partOf returns the partition of the note at p.
func (lp *linkParts) partOf(p string) int {
	return sort.Search(len(lp.bounds), func(i int) bool { return lp.bounds[i] > p })
}

// newLinkParts makes the partitions of the notes at paths, sorted.
func (ix *Index) newLinkParts(paths []string) (*linkParts, error) {
	n := max(1, (len(paths)+notesPerPartition-1)/notesPerPartition)
	lp := &linkParts{n: n}
	if n == 1 {
		lp.mem = make([]bytes.Buffer, 1)
		return lp, nil
	}
	size := (len(paths) + n - 1) / n
	for k := 1; k < n; k++ {
		lp.bounds = append(lp.bounds, paths[min(k*size, len(paths)-1)])
	}
	parent := os.TempDir()
	if ix.path != "" {
		parent = ix.path
	}
	dir, err := os.MkdirTemp(parent, linkScanPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("link scan: %w", err)
	}
	lp.dir = dir
	for i := 0; i < n; i++ {
		f, err := os.Create(filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			lp.close()
			return nil, fmt.Errorf("link scan: %w", err)
		}
		lp.files = append(lp.files, f)
		lp.bufs = append(lp.bufs, bufio.NewWriterSize(f, 64<<10))
	}
	return lp, nil
}

func (lp *linkParts) writer(k int) io.Writer {
	if lp.mem != nil {
		return &lp.mem[k]
	}
	return lp.bufs[k]
}

// read returns the encoded links of partition k.
func (lp *linkParts) read(k int) ([]byte, error) {
	if lp.mem != nil {
		return lp.mem[k].Bytes(), nil
	}
	if err := lp.bufs[k].Flush(); err != nil {
		return nil, fmt.Errorf("link scan: %w", err)
	}
	b, err := os.ReadFile(lp.files[k].Name())
	if err != nil {
		return nil, fmt.Errorf("link scan: %w", err)
	}
	return b, nil
}

// drop frees partition k once it was read.
func (lp *linkParts) drop(k int) {
	if lp.mem != nil {
		lp.mem[k] = bytes.Buffer{}
	}
}

func (lp *linkParts) close() {
	for _, f := range lp.files {
		f.Close()
	}
	if lp.dir != "" {
		os.RemoveAll(lp.dir)
	}
}

// appendLinkItem encodes one link (of the note src, the i-th of its
// links) pointing to the note to.
func appendLinkItem(b []byte, to, src string, i int, lc vault.LinkContext) []byte {
	b = appendStr(b, to)
	b = appendStr(b, src)
	b = binary.AppendUvarint(b, uint64(i))
	b = appendStr(b, lc.Target)
	md := byte(0)
	if lc.Markdown {
		md = 1
	}
	b = append(b, md)
	b = appendStr(b, lc.Anchor)
	return appendStr(b, lc.Text)
}

// inboundOf decodes a partition's links into the inbound context of each
// note they point to.
func inboundOf(b []byte) (map[string]*inbound, error) {
	builders := map[string]*inboundBuilder{}
	r := &stateReader{b: b}
	for len(r.b) > 0 && r.err == nil {
		to, src, i := r.str(), r.str(), int(r.uvarint())
		lc := vault.LinkContext{Target: r.str()}
		if len(r.b) == 0 {
			r.err = errors.New("truncated link")
			break
		}
		lc.Markdown, r.b = r.b[0] == 1, r.b[1:]
		lc.Anchor, lc.Text = r.str(), r.str()
		bl := builders[to]
		if bl == nil {
			bl = &inboundBuilder{}
			builders[to] = bl
		}
		bl.add(src, i, lc)
	}
	if r.err != nil {
		return nil, fmt.Errorf("link scan: %w", r.err)
	}
	in := make(map[string]*inbound, len(builders))
	for p, bl := range builders {
		in[p] = bl.build()
	}
	return in, nil
}

// scanLinks reads the links of the notes at paths from disk with a pool of
// workers, resolves each against keys and spills it to the partition of
// the note it points to. Notes that cannot be read are left out.
func (ix *Index) scanLinks(ctx context.Context, paths []string, keys *keyIndex, lp *linkParts) error {
	var mu sync.Mutex // guards lp's writers
	var werr error
	jobs := make(chan string)
	var wg sync.WaitGroup
	for w := 0; w < min(ix.workers, max(1, len(paths))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			encoded := make([][]byte, lp.n)
			for p := range jobs {
				raw, err := ix.v.ReadRaw(p, vault.LinkScanLimit)
				if err != nil {
					continue
				}
				for i, lc := range vault.LinkContexts(p, raw.Content) {
					if to, ok := keys.resolve(lc, p); ok {
						k := lp.partOf(to)
						encoded[k] = appendLinkItem(encoded[k], to, p, i, lc)
					}
				}
				mu.Lock()
				for k, b := range encoded {
					if len(b) > 0 {
						if _, err := lp.writer(k).Write(b); err != nil && werr == nil {
							werr = fmt.Errorf("link scan: %w", err)
						}
						encoded[k] = b[:0]
					}
				}
				mu.Unlock()
			}
		}()
	}
	var err error
feed:
	for _, p := range paths {
		select {
		case jobs <- p:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		err = werr
	}
	return err
}

// readLinks reads the links of one note from disk.
func (ix *Index) readLinks(p string) ([]vault.LinkContext, bool) {
	raw, err := ix.v.ReadRaw(p, vault.LinkScanLimit)
	if err != nil {
		return nil, false
	}
	return vault.LinkContexts(p, raw.Content), true
}

// keys returns the key index of the indexed notes, building it if stale.
// The index is shared: change it only through buildTable's updates.
func (ix *Index) keys() *keyIndex {
	ix.mu.RLock()
	k := ix.keyIdx
	ix.mu.RUnlock()
	if k != nil {
		return k
	}
	ix.buildTable(func(notes *noteMap) {
		paths := notes.paths()
		slices.Sort(paths)
		k = newKeyIndex(paths)
	}, func(old, m *noteRec) {
		keysChanged(k, old, m)
	}, func() bool {
		return ix.keyIdx != nil
	}, func() {
		ix.keyIdx = k
	})
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.keyIdx
}

// linkTablesChanged updates the key table, when built, for a note
// replaced (old or m may be nil). Lists are replaced, never changed in
// place, so a table handed out earlier stays as it was. Called with mu held
// for writing.
func (ix *Index) linkTablesChanged(old, m *noteRec) {
	if ix.keyIdx != nil {
		keysChanged(ix.keyIdx, old, m)
	}
}

// keysChanged updates a key index for a note replaced.
func keysChanged(keys *keyIndex, old, m *noteRec) {
	switch {
	case old != nil && m == nil:
		k := vault.NoteKey(old.Path)
		keys.set(k, without(keys.get(k), old.Path))
	case old == nil && m != nil:
		k := vault.NoteKey(m.Path)
		keys.set(k, withSorted(keys.get(k), m.Path))
	}
}

// without returns a copy of ps without p.
func without(ps []string, p string) []string {
	out := make([]string, 0, len(ps))
	for _, q := range ps {
		if q != p {
			out = append(out, q)
		}
	}
	return out
}

// withSorted returns a copy of the sorted ps with p added.
func withSorted(ps []string, p string) []string {
	i, found := slices.BinarySearch(ps, p)
	if found {
		return ps
	}
	out := make([]string, 0, len(ps)+1)
	out = append(out, ps[:i]...)
	out = append(out, p)
	return append(out, ps[i:]...)
}

// linkersOf returns, for each of keys, the notes with a link of that key,
// sorted. It reads the link keys of every note (from the note store, tens
// of milliseconds at 100,000 notes), which a change needs only when notes
// come or go, rather than keeping a table of them all (26 MB there, and a
// second to build after each sync). Called with writeMu held.
func (ix *Index) linkersOf(keys map[string]bool) map[string][]string {
	out := map[string][]string{}
	if len(keys) == 0 {
		return out
	}
	if ix.path != "" {
		if ix.store == nil {
			ix.lostLinkKeys(errNoStore)
			return out
		}
		out, err := ix.store.linkers(keys)
		if err != nil {
			ix.lostLinkKeys(err)
			return map[string][]string{}
		}
		return out
	}
	ix.mu.RLock()
	for p, lk := range ix.memKeys {
		for k := range lk.all() {
			if keys[k] {
				out[k] = append(out[k], p)
			}
		}
	}
	ix.mu.RUnlock()
	for _, ps := range out {
		sort.Strings(ps)
	}
	return out
}

// linkKeysOf returns the link keys of the indexed notes among paths: from
// the note store, which keeps them, or from their metadata in an index
// held in memory. Called with writeMu held.
func (ix *Index) linkKeysOf(paths []string) map[string]linkKeys {
	if len(paths) == 0 {
		return nil
	}
	if ix.path != "" {
		if ix.store == nil {
			ix.lostLinkKeys(errNoStore)
			return nil
		}
		out, err := ix.store.linkKeysOf(paths)
		if err != nil {
			ix.lostLinkKeys(err)
		}
		return out
	}
	out := make(map[string]linkKeys, len(paths))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, p := range paths {
		if ix.meta.get(p) != nil {
			out[p] = ix.memKeys[p]
		}
	}
	return out
}

// errNoStore is the error of an index on disk whose note store is closed.
var errNoStore = errors.New("the note store is not open")

// lostLinkKeys handles a store that failed to give the link keys of its
// notes: the change goes on with what it has, and the next sync scans the
// links of the whole vault, as after an interrupted one.
func (ix *Index) lostLinkKeys(err error) {
	ix.log.Warn("reading the notes' links; the next sync checks the links of every note", "err", err)
	ix.interrupted = true
}
