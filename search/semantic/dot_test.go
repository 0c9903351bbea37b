package semantic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestDotsMatchGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{1, 31, 32, 100, 768} {
		stride := strideOf(dims)
		rows := 37
		m := make([]int8, rows*stride)
		for i := range rows {
			for j := range dims {
				m[i*stride+j] = int8(r.IntN(255) - 127)
			}
		}
		q := make([]int16, stride)
		for j := range dims {
			q[j] = int16(r.IntN(255) - 127)
		}
		got, want := make([]int32, rows), make([]int32, rows)
		dots(q, m, stride, got)
		dotsGeneric(q, m, stride, want)
		for i := range got {
			var exact int32
			for j := range dims {
				exact += int32(q[j]) * int32(m[i*stride+j])
			}
			if got[i] != want[i] || want[i] != exact {
				t.Fatalf("dims %d row %d: kernel %d, generic %d, exact %d", dims, i, got[i], want[i], exact)
			}
		}
	}
}

func TestQuantizedCosine(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const dims = 768
	stride := strideOf(dims)
	for range 50 {
		a, b := make([]float32, dims), make([]float32, dims)
		for i := range a {
			a[i] = float32(r.NormFloat64())
			b[i] = a[i]*0.5 + float32(r.NormFloat64())
		}
		var ab, aa, bb float64
		for i := range a {
			ab += float64(a[i]) * float64(b[i])
			aa += float64(a[i]) * float64(a[i])
			bb += float64(b[i]) * float64(b[i])
		}
		want := ab / math.Sqrt(aa*bb)
		qa, ia := quantize(a, stride)
		qb, ib := quantize(b, stride)
		out := make([]int32, 1)
		dots(widen(qa), qb, stride, out)
		got := float64(out[0]) * float64(ia) * float64(ib)
		if math.Abs(got-want) > 0.01 {
			t.Fatalf("cosine %f, quantized %f", want, got)
		}
	}
	if _, inv := quantize(make([]float32, 4), 32); inv != 0 {
		t.Errorf("zero vector: invNorm %v", inv)
	}
}

// The pass that keeps each note's best chunk, split over the scan's
// goroutines for a large matrix, finds what one pass over all the rows
// finds.
func TestRankSplitMatchesOnePass(t *testing.T) {
	const chunks, perNote, d = 40_000, 4, 32
	r := rand.New(rand.NewPCG(3, 4))
	e := &Engine{notes: map[string]*noteState{}}
	e.dims, e.stride = d, strideOf(d)
	for n := range chunks / perNote {
		vecs := make([]vec, perNote)
		for i := range vecs {
			v := make([]float32, d)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			vecs[i].q, vecs[i].inv = quantize(v, e.stride)
		}
		e.place(fmt.Sprintf("n%05d.md", n), "h", vecs)
	}
	for i := range 5 {
		v := make([]float32, d)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		q, _ := quantize(v, e.stride)
		one, split := e.rank(widen(q), nil, -1, 50, true), e.rank(widen(q), nil, -1, 50, false)
		if fmt.Sprint(one.top) != fmt.Sprint(split.top) {
			t.Fatalf("query %d: one pass %v, split %v", i, one.top[:3], split.top[:3])
		}
	}
}
