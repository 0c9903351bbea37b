//go:build !linux

package vault

// exchange has no atomic swap of two names here: edits rename.
func exchange(a, b string) error { return errNoExchange }
