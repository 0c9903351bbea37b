package mcp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// Notes are resources under the vault: scheme, one per note, named by its
// vault path: vault:///projects/Alpha.md (percent-encoded:
// vault:///recipes/Caf%C3%A9%20de%20Olla.md). The template vault:///{+path}
// reads any note with the lenient lookup of read_note.
const (
	uriScheme   = "vault"
	uriTemplate = "vault:///{+path}"
	markdown    = "text/markdown"
)

// NoteURI returns the resource URI of the note at vault path p.
func NoteURI(p string) string {
	u := url.URL{Scheme: uriScheme, Path: "/" + p}
	return u.String()
}

// notePath returns the vault path a resource URI names.
func notePath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != uriScheme || u.Host != "" || u.Opaque != "" {
		return "", fmt.Errorf("%q is not a note URI: note URIs look like vault:///folder/Note.md", uri)
	}
	p := strings.TrimPrefix(u.Path, "/")
	if p == "" {
		return "", fmt.Errorf("%q names no note: note URIs look like vault:///folder/Note.md", uri)
	}
	return p, nil
}

func (s *Server) addResourceTemplate() {
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: uriTemplate,
		Name:        "note",
		Title:       "Note by path",
		Description: "A markdown note of the vault by its path relative to the vault folder, percent-encoded, e.g. " +
			"vault:///projects/Alpha.md. The path may also be a file name or a path without .md.",
		MIMEType: markdown,
	}, s.readResource)
}

// readResource serves resources/read for notes: the whole markdown text.
func (s *Server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	p, err := notePath(uri)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	svc, err := s.vault(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	found, err := svc.Index().Lookup(p)
	switch {
	case errors.Is(err, vault.ErrNotFound):
		return nil, sdk.ResourceNotFoundError(uri)
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: noteError(p, err).Error()}
	}
	raw, err := svc.Vault().ReadRaw(found, -1)
	if errors.Is(err, vault.ErrNotFound) || errors.Is(err, vault.ErrNotMarkdown) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", found, err)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: NoteURI(found), MIMEType: markdown, Text: string(raw.Content)}}}, nil
}

// follow mirrors the index's changes until ctx ends: a note added or
// removed changes the resource list (notifications/resources/list_changed,
// debounced by the SDK), and a note added, changed or removed sends
// notifications/resources/updated to the sessions subscribed to its URI.
//
// The notes are not registered with the SDK one by one: it would keep a
// resource for every note in every MCP process (6 MB for 6,500 notes),
// beside the index that already holds them. resources/list is answered
// from the index a page at a time (listNotes), and reads go through the
// note template.
func (s *Server) follow(ctx context.Context) {
	ix := s.cfg.Vault.Index()
	changes := ix.SubscribeChanges()
	defer changes.Close()
	close(s.listed)
	go func() {
		svc, err := s.vault(ctx, nil, nil)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("the index is not available: notes cannot be read", "err", err)
			}
			return
		}
		st := svc.Synced()
		s.log.Info("index ready", "notes", svc.Index().Count(), "added", st.Added, "updated", st.Updated,
			"removed", st.Removed, "rebuilt", st.Rebuilt, "took", st.Took.Round(time.Millisecond))
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes.Ready():
			s.apply(ctx, changes.Take())
		}
	}
}

// listResources is a receiving middleware that answers resources/list
// from the index: the notes sorted by path, listPage at a time, the
// cursor naming the last path given. It waits until follow watches the
// index's changes, so that a client listing right after connecting hears
// of every change after its list.
func (s *Server) listResources(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "resources/list" {
			return next(ctx, method, req)
		}
		select {
		case <-s.listed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var cursor string
		if r, ok := req.(*sdk.ListResourcesRequest); ok && r.Params != nil {
			cursor = r.Params.Cursor
		}
		after, err := decodeCursor(cursor)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		notes, more, err := s.cfg.Vault.Index().NotesPage(ctx, after, listPage)
		if err != nil {
			return nil, fmt.Errorf("listing the notes: %w", err)
		}
		res := &sdk.ListResourcesResult{Resources: make([]*sdk.Resource, 0, len(notes))}
		for _, m := range notes {
			res.Resources = append(res.Resources, &sdk.Resource{URI: NoteURI(m.Path), Name: m.Path, Title: m.Title, MIMEType: markdown, Size: m.Size})
		}
		if more && len(notes) > 0 {
			res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(notes[len(notes)-1].Path))
		}
		return res, nil
	}
}

// listPage is how many notes a page of resources/list holds (the SDK's
// own page size).
var listPage = sdk.DefaultPageSize

// decodeCursor returns the path a resources/list cursor names ("" for the
// first page).
func decodeCursor(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !utf8.Valid(b) {
		return "", fmt.Errorf("invalid cursor %q: pass the nextCursor of the previous page", cursor)
	}
	return string(b), nil
}

// listChangedURI is the resource listChanged adds and removes at once.
const listChangedURI = "vault:///.vault-agent/list-changed"

// listChanged has the SDK send notifications/resources/list_changed to
// every session (it decides how, by each session's protocol version):
// the SDK sends it when a resource is added or removed, debounced, and has
// no other way to ask for it, so a resource no list shows (resources/list
// is listResources') is added and removed at once.
func (s *Server) listChanged() {
	s.srv.AddResource(&sdk.Resource{URI: listChangedURI, Name: "list-changed", MIMEType: markdown}, s.readResource)
	s.srv.RemoveResources(listChangedURI)
}

// apply mirrors changes of the index into notifications.
func (s *Server) apply(ctx context.Context, changes []search.NoteChange) {
	removed, added := 0, 0
	for _, c := range changes {
		switch c.Kind {
		case search.NoteAdded:
			added++
		case search.NoteRemoved:
			removed++
		}
	}
	if added+removed > 0 {
		// The notes the index caught up with the disk come this way too:
		// a client that listed them before hears that the list changed.
		s.listChanged()
	}
	for _, c := range changes {
		if err := s.srv.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: NoteURI(c.Path)}); err != nil {
			s.log.Warn("resource update notification", "uri", NoteURI(c.Path), "err", err)
		}
	}
	if len(changes) > 0 {
		s.log.Debug("notes changed", "changed", len(changes), "removed", removed)
	}
	// One line for the change, however many sessions missed it (the list
	// notifications the SDK sends a moment later count at the next one).
	if n := s.undelivered.Swap(0); n > 0 {
		s.log.Warn("some sessions could not be told that notes changed (their client is gone or not listening)",
			"changed", len(changes), "undelivered", n)
	}
}
