package vaultgen

import "errors"

// ErrNotEmpty is returned by Generate when the target directory already
// contains files; generating over an existing vault would mix two vaults.
var ErrNotEmpty = errors.New("vaultgen: target directory is not empty")
