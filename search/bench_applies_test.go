package search

// appliesOf is how many watcher batches ix has applied (BenchmarkBranchSwitch).
func appliesOf(ix *Index) int64 { return ix.applies.Load() }
