//go:build !unix

package vault

// canWrite has no kernel to ask here: checkWritable's read-only test (the
// mode's write bits, which mirror the read-only attribute) is the check.
func canWrite(abs string) error { return nil }
