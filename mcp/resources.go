package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

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

// noteKey is what tells that a note changed.
type noteKey struct {
	hash  string
	mtime int64
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
	if err := s.cfg.Vault.WaitReady(ctx, nil); err != nil {
		return nil, err
	}
	n, err := s.cfg.Vault.Note(ctx, p)
	switch {
	case errors.Is(err, vault.ErrNotFound), errors.Is(err, vault.ErrNotMarkdown):
		return nil, sdk.ResourceNotFoundError(uri)
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: noteError(p, err).Error()}
	}
	text, _, err := s.cfg.Vault.Source(ctx, n.Path)
	if errors.Is(err, vault.ErrNotFound) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", n.Path, err)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: NoteURI(n.Path), MIMEType: markdown, Text: text}}}, nil
}

// follow registers every note as a resource once the index is ready, then
// mirrors the index's changes until ctx ends: a note added or removed
// changes the resource list (the SDK sends notifications/resources/
// list_changed, debounced), and a note added, changed or removed sends
// notifications/resources/updated to the sessions subscribed to its URI.
func (s *Server) follow(ctx context.Context) {
	changes, unsubscribe := s.cfg.Vault.Subscribe()
	defer unsubscribe()
	if err := s.cfg.Vault.WaitReady(ctx, nil); err != nil {
		if ctx.Err() == nil {
			s.log.Error("notes are not offered as resources: the index is not available", "err", err)
		}
		return
	}
	s.sync(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			s.sync(ctx)
		}
	}
}

// sync brings the registered resources in step with the index.
func (s *Server) sync(ctx context.Context) {
	notes := s.cfg.Vault.Notes()
	cur := make(map[string]noteKey, len(notes))
	byPath := make(map[string]search.NoteMeta, len(notes))
	for _, m := range notes {
		cur[m.Path] = noteKey{m.Hash, m.MTime.UnixNano()}
		byPath[m.Path] = m
	}
	s.followMu.Lock()
	prev := s.res
	s.res = cur
	s.followMu.Unlock()
	first := prev == nil

	var updated []string
	var gone []string
	for p, k := range cur {
		old, ok := prev[p]
		if !ok {
			m := byPath[p]
			s.srv.AddResource(&sdk.Resource{URI: NoteURI(p), Name: p, Title: m.Title, MIMEType: markdown, Size: m.Size}, s.readResource)
		}
		if ok && old != k || !ok && !first {
			updated = append(updated, p)
		}
	}
	for p := range prev {
		if _, ok := cur[p]; !ok {
			gone = append(gone, NoteURI(p))
			updated = append(updated, p)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveResources(gone...)
	}
	for _, p := range updated {
		if err := s.srv.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: NoteURI(p)}); err != nil {
			s.log.Warn("resource update notification", "uri", NoteURI(p), "err", err)
		}
	}
	if len(updated) > 0 {
		s.log.Debug("notes changed", "changed", len(updated), "removed", len(gone))
	}
}
