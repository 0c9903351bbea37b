package rpc

import "context"

// SetTestHook installs a handler for "test/..." methods (tests only).
func SetTestHook(s *Server, fn func(ctx context.Context, method string) (any, error)) {
	s.testHook = fn
}

// SetProgressHook installs a func that sees initialize's indexing progress
// on the indexing goroutine; it may block it (tests only).
func SetProgressHook(s *Server, fn func(done, total int)) {
	s.progressHook = fn
}

// SetBeforeCall installs a function called before each method of the
// protocol table runs (tests only).
func SetBeforeCall(s *Server, fn func(ctx context.Context, method string)) {
	s.beforeCall = fn
}

// SetOpenHook installs a func run as initialize starts opening the vault
// (tests only).
func SetOpenHook(s *Server, fn func()) {
	s.openHook = fn
}
