//go:build !amd64

package semantic

// dots sets out[r] to the dot product of q and row r of m, a matrix of
// len(out) rows of stride values.
func dots(q []int16, m []int8, stride int, out []int32) { dotsGeneric(q, m, stride, out) }
