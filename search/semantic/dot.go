package semantic

import "math"

// align is the row stride multiple: rows are padded with zeros to it, so
// the vector kernel has no tail to handle.
const align = 32

// dotsGeneric is the portable kernel: four accumulators over rows of
// int8, which Go compiles to plain scalar code (about 30 times slower than
// the AVX2 kernel, still exact).
func dotsGeneric(q []int16, m []int8, stride int, out []int32) {
	q = q[:stride]
	for r := range out {
		row := m[r*stride : (r+1)*stride : (r+1)*stride]
		var s0, s1, s2, s3 int32
		for i := 0; i+4 <= stride; i += 4 {
			s0 += int32(q[i]) * int32(row[i])
			s1 += int32(q[i+1]) * int32(row[i+1])
			s2 += int32(q[i+2]) * int32(row[i+2])
			s3 += int32(q[i+3]) * int32(row[i+3])
		}
		out[r] = s0 + s1 + s2 + s3
	}
}

// quantize turns v into int8 values in [-127, 127] (v scaled so its
// largest component is 127), padded with zeros to stride, and returns
// them with the inverse of their Euclidean norm, so that the cosine of two
// vectors is dot(qa, qb) * invA * invB. A zero vector has invNorm 0 (its
// cosine with anything is 0).
func quantize(v []float32, stride int) (q []int8, invNorm float32) {
	q = make([]int8, stride)
	var maxAbs float64
	for _, x := range v {
		maxAbs = max(maxAbs, math.Abs(float64(x)))
	}
	if maxAbs == 0 || math.IsNaN(maxAbs) || math.IsInf(maxAbs, 0) {
		return q, 0
	}
	s := 127 / maxAbs
	var norm int64
	for i, x := range v {
		n := int8(math.Round(float64(x) * s))
		q[i] = n
		norm += int64(n) * int64(n)
	}
	if norm == 0 {
		return q, 0
	}
	return q, float32(1 / math.Sqrt(float64(norm)))
}

// widen returns q as int16, the form the kernel takes the query in.
func widen(q []int8) []int16 {
	w := make([]int16, len(q))
	for i, x := range q {
		w[i] = int16(x)
	}
	return w
}

// stride is dims rounded up to align.
func strideOf(dims int) int { return (dims + align - 1) / align * align }
