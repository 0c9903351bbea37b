package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/shared"
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

// follow registers every note of the index as a resource at once (an
// index being reconciled with the disk is open, with the notes it holds),
// then mirrors the index's changes until ctx ends: a note added or removed
// changes the resource list (the SDK sends notifications/resources/
// list_changed, debounced), and a note added, changed or removed sends
// notifications/resources/updated to the sessions subscribed to its URI.
func (s *Server) follow(ctx context.Context) {
	ix := s.cfg.Vault.Index()
	changes := ix.SubscribeChanges()
	defer changes.Close()
	for _, m := range ix.Notes() {
		s.addResource(m)
	}
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
			s.apply(ctx, ix, changes.Take())
		}
	}
}

// waitListed is a receiving middleware: resources/list waits until the
// index's notes are resources, so a client listing them right after
// connecting gets them all.
func (s *Server) waitListed(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "resources/list" {
			select {
			case <-s.listed:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return next(ctx, method, req)
	}
}

func (s *Server) addResource(m search.NoteMeta) {
	s.srv.AddResource(&sdk.Resource{URI: NoteURI(m.Path), Name: m.Path, Title: m.Title, MIMEType: markdown, Size: m.Size}, s.readResource)
}

// apply mirrors changes of the index into the resources.
func (s *Server) apply(ctx context.Context, ix *shared.Index, changes []search.NoteChange) {
	var gone []string
	for _, c := range changes {
		switch c.Kind {
		case search.NoteAdded:
			if m, ok := ix.Note(c.Path); ok {
				s.addResource(m)
			}
		case search.NoteRemoved:
			gone = append(gone, NoteURI(c.Path))
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveResources(gone...)
	}
	for _, c := range changes {
		if err := s.srv.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: NoteURI(c.Path)}); err != nil {
			s.log.Warn("resource update notification", "uri", NoteURI(c.Path), "err", err)
		}
	}
	if len(changes) > 0 {
		s.log.Debug("notes changed", "changed", len(changes), "removed", len(gone))
	}
	// One line for the change, however many sessions missed it (the list
	// notifications the SDK sends a moment later count at the next one).
	if n := s.undelivered.Swap(0); n > 0 {
		s.log.Warn("some sessions could not be told that notes changed (their client is gone or not listening)",
			"changed", len(changes), "undelivered", n)
	}
}
