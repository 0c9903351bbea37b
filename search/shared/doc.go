// Package shared is a vault's index as every vault-agent process of the
// user shares it: one process holds the index and the others reach it.
//
// The process that takes the index's lock opens it (search.Open), keeps it
// fresh (sync, watcher, the vectors of semantic search) and serves its
// operations on a Unix socket private to the user; any other process of
// that index connects there and forwards its searches, reads and
// reindexing. Both ends are one type, *Index, whose methods are those of
// *search.Index: a front-end does not know which end it has. When the
// holder exits or dies its socket closes; a process that had it open
// takes the lock and becomes the holder (reopening the persisted index,
// reconciling it with the disk, watching it), the others reconnect, and a
// call that was in flight is retried once. A holder that stops answering
// never blocks the others for longer than a call's deadline.
//
// Each forwarded operation is one op value (ops.go): its method name, its
// params and the function that runs it on the holder's index; the same
// function answers the holder's own calls, so both ends run the same code.
//
// It must not write into the vault, nor read the environment: the caller
// chooses the socket's path.
package shared
