package shared

import (
	"context"
	"fmt"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// The methods of *search.Index, wherever the index is. Those without an
// error in their signature log a failure to reach the holder and return
// nothing.

// Vault returns the vault the index was opened on.
func (x *Index) Vault() *vault.Vault { return x.v }

// Start brings the index up to date: the holder reconciles it with the
// disk (or rebuilds it) and embeds its notes, then watches the vault when
// asked; any other process waits for the holder's first sync (or asks it
// to rebuild), reporting its progress. It returns what the first sync
// did.
func (x *Index) Start(ctx context.Context, so StartOptions) (search.SyncStats, error) {
	r, err := x.role(ctx)
	if err != nil {
		return search.SyncStats{}, err
	}
	if h, ok := r.(*holding); ok {
		return h.start(ctx, so)
	}
	// Each call below is retried on whichever process takes the index
	// over, this one included (its takeover runs the first sync).
	return x.startRemote(ctx, so)
}

func (x *Index) startRemote(ctx context.Context, so StartOptions) (search.SyncStats, error) {
	progress := progressOf(so.Progress, so.EmbedProgress)
	var res syncResult
	var err error
	if so.Rebuild {
		res, err = opSync.call(ctx, x, syncParams{Full: true}, progress)
	} else {
		res, err = opReady.call(ctx, x, none{}, progress)
	}
	if err != nil {
		return res.stats(), err
	}
	if so.Watch {
		if _, err := opWatch.call(ctx, x, none{}, nil); err != nil {
			x.log.Warn("the index may not follow changes: asking its holder to watch the vault failed", "error", err)
		}
	}
	return res.stats(), nil
}

// Sync reconciles the index with the disk.
func (x *Index) Sync(ctx context.Context, progress search.ProgressFunc) (search.SyncStats, error) {
	res, err := opSync.call(ctx, x, syncParams{}, progressOf(progress, nil))
	return res.stats(), err
}

// Rebuild drops the index and indexes the whole vault again.
func (x *Index) Rebuild(ctx context.Context, progress search.ProgressFunc) (search.SyncStats, error) {
	res, err := opSync.call(ctx, x, syncParams{Full: true}, progressOf(progress, nil))
	return res.stats(), err
}

// Apply brings the index up to date with the changes of b at once (an
// edit written), rather than when the watcher notices.
func (x *Index) Apply(ctx context.Context, b vault.Batch) error {
	_, err := opApply.call(ctx, x, b, nil)
	return err
}

// Watch makes the index follow the vault's changes: the holder's watcher
// runs until the holder closes the index.
func (x *Index) Watch(ctx context.Context) error {
	_, err := opWatch.call(ctx, x, none{}, nil)
	return err
}

// Search runs a search in its mode (search.Request.Mode): with an
// embedding model at the holder the default is hybrid; without one it is
// lexical, and asking for semantic or hybrid is ErrNoEmbedder.
func (x *Index) Search(ctx context.Context, req search.Request) (*search.Results, error) {
	r, err := opSearch.call(ctx, x, newSearchParams(req), nil)
	if err != nil {
		return nil, err
	}
	if r.Results == nil {
		return nil, fmt.Errorf("%s: the holder sent no results", opSearch.method)
	}
	r.Results.Match = r.Match
	return r.Results, nil
}

// Related returns the notes closest in meaning to the note name designates.
func (x *Index) Related(ctx context.Context, name string, limit int) (*search.Results, error) {
	return opRelated.call(ctx, x, relatedParams{Name: name, Limit: limit}, nil)
}

// ReadChunk reads one chunk of the indexed note that name designates (see
// search.ReadChunkOf).
func (x *Index) ReadChunk(name string, chunk int) (*search.NoteChunk, error) {
	return opReadChunk.call(context.Background(), x, readParams{Name: name, Chunk: chunk}, nil)
}

// ReadNote reads and parses the indexed note that name designates: the
// index resolves the name, this process reads the note.
func (x *Index) ReadNote(name string) (*vault.Note, error) {
	p, err := x.Lookup(name)
	if err != nil {
		return nil, err
	}
	return x.v.ReadNote(p)
}

// Lookup resolves what a person or model typed to the path of an indexed
// note (see search.Index.Lookup).
func (x *Index) Lookup(name string) (string, error) {
	return opLookup.call(context.Background(), x, readParams{Name: name}, nil)
}

// Backlinks returns the notes linking to the indexed note at path target.
func (x *Index) Backlinks(ctx context.Context, target string) ([]search.Backlink, error) {
	return opBacklinks.call(ctx, x, readParams{Name: target}, nil)
}

// ResolveLink returns the indexed note that the link l, found in the note
// at from, points to, or "" when it points to none.
func (x *Index) ResolveLink(l vault.Link, from string) string {
	p, err := opResolveLink.call(context.Background(), x, linkParams{Link: l, From: from}, nil)
	x.logFailure(opResolveLink.method, err)
	return p
}

// Note returns the cached metadata of an indexed note.
func (x *Index) Note(path string) (search.NoteMeta, bool) {
	m, err := opNote.call(context.Background(), x, readParams{Name: path}, nil)
	x.logFailure(opNote.method, err)
	if m == nil {
		return search.NoteMeta{}, false
	}
	return *m, true
}

// Notes returns the cached metadata of every indexed note, sorted by path.
func (x *Index) Notes() []search.NoteMeta {
	var out []search.NoteMeta
	for after := ""; ; {
		notes, more, err := x.NotesPage(context.Background(), after, notesPerPage)
		if err != nil {
			x.logFailure(opNotes.method, err)
			return nil
		}
		out = append(out, notes...)
		if !more || len(notes) == 0 {
			return out
		}
		after = notes[len(notes)-1].Path
	}
}

// NotesPage returns the cached metadata of at most limit notes, those whose
// paths sort after after, sorted by path, and whether more follow: a list
// a client pages through without this process holding every note.
func (x *Index) NotesPage(ctx context.Context, after string, limit int) ([]search.NoteMeta, bool, error) {
	page, err := opNotes.call(ctx, x, notesParams{After: after, Limit: limit}, nil)
	if err != nil {
		return nil, false, err
	}
	return page.Notes, page.More, nil
}

// Paths returns every indexed note path, sorted. The slice may be shared:
// do not modify it.
func (x *Index) Paths() []string {
	p, err := opPaths.call(context.Background(), x, none{}, nil)
	x.logFailure(opPaths.method, err)
	return p
}

// Tags returns every tag with the number of notes carrying it, sorted by
// tag.
func (x *Index) Tags() []search.TagCount {
	t, err := opTags.call(context.Background(), x, none{}, nil)
	x.logFailure(opTags.method, err)
	return t
}

// Count returns the number of indexed notes.
func (x *Index) Count() int {
	n, err := opCount.call(context.Background(), x, none{}, nil)
	x.logFailure(opCount.method, err)
	return n
}

// Status describes the index.
func (x *Index) Status() search.Status {
	st, err := opStatus.call(context.Background(), x, none{}, nil)
	x.logFailure(opStatus.method, err)
	return st
}

// Holder describes the process holding the index (this one, perhaps).
func (x *Index) Holder(ctx context.Context) (Status, error) {
	return opHolder.call(ctx, x, none{}, nil)
}

// Created reports whether the holder found no index at its path and made
// a new, empty one (see search.Index.Created).
func (x *Index) Created() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch r := x.cur.(type) {
	case *holding:
		return r.ix.Created()
	case *following:
		return r.info.Created
	}
	return false
}

func (x *Index) logFailure(method string, err error) {
	if err != nil {
		x.log.Error("the index did not answer; answering with nothing", "method", method, "error", err)
	}
}
