package mcp

// SetListPage sets how many notes a page of resources/list holds, for a
// test; the returned func restores it.
func SetListPage(n int) (restore func()) {
	old := listPage
	listPage = n
	return func() { listPage = old }
}
