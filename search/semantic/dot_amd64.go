package semantic

import "golang.org/x/sys/cpu"

//go:noescape
func dotsAVX2(q *int16, m *int8, stride int, rows int, out *int32)

var hasAVX2 = cpu.X86.HasAVX2

// dots sets out[r] to the dot product of q and row r of m, a matrix of
// len(out) rows of stride values. stride is a multiple of 32 and len(q)
// is stride.
func dots(q []int16, m []int8, stride int, out []int32) {
	if len(out) == 0 {
		return
	}
	if hasAVX2 {
		_ = m[len(out)*stride-1]
		_ = q[stride-1]
		dotsAVX2(&q[0], &m[0], stride, len(out), &out[0])
		return
	}
	dotsGeneric(q, m, stride, out)
}
