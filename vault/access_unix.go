//go:build unix

package vault

import "golang.org/x/sys/unix"

// canWrite asks the kernel whether this process may write the file at
// abs, as an open for writing would find (a rename over it would not).
func canWrite(abs string) error { return unix.Access(abs, unix.W_OK) }
