package semantic

import "math"

// Whether the vectors carry meaning at all is measured on the vault, once
// for all queries: two sections of one note are about the same thing more
// often than two sections of two notes taken at random, and a model with
// signal puts them closer. For each note of two chunks or more (up to
// trustPairs of them, in id order), the cosine of its first two chunks is
// compared with that of its first chunk and another note's second (first
// chunks are alike across notes: a title, a heading); the gap of the
// means, over the spread of the random pairs (an effect size), is the
// model's coherence. Vectors without signal (random per text) have none,
// whatever the vault; a real sentence encoder has a large one. The
// measure needs no embedding call and no question.
const (
	trustPairs = 2000
	// minTrustPairs is the fewest pairs the measure is made on; a vault
	// with fewer notes of two chunks falls back on the agreement of the
	// vectors with each query's best lexical results (Engine.weight).
	minTrustPairs = 30
	// The coherence at which the vectors start to count, and fully do.
	coherenceLow, coherenceHigh = 0.2, 0.6
)

// coherence is a measure of the model on the vectors held.
type coherence struct {
	rows   int     // the rows it was measured on
	pairs  int     // the pairs measured
	effect float64 // the gap of the means over the spread of random pairs
	trust  float64 // 0..1
}

// trust returns how far the vectors can be trusted, 0..1, and whether the
// vault had enough notes of two chunks to tell. It is measured again when
// the number of chunks has changed by 2% since.
func (e *Engine) trust() (float64, bool) {
	e.mu.RLock()
	c, rows := e.coh, len(e.rowNote)
	e.mu.RUnlock()
	if c.rows == 0 || math.Abs(float64(rows-c.rows)) > 0.02*float64(c.rows) {
		c = e.measureCoherence()
		e.mu.Lock()
		e.coh = c
		e.mu.Unlock()
	}
	return c.trust, c.pairs >= minTrustPairs
}

// measureCoherence measures the coherence of the vectors held.
func (e *Engine) measureCoherence() coherence {
	e.mu.RLock()
	defer e.mu.RUnlock()
	c := coherence{rows: len(e.rowNote)}
	var multi []*noteState
	for _, n := range e.byID {
		if n != nil && len(n.rows) >= 2 {
			multi = append(multi, n)
		}
	}
	if len(multi) < 2 {
		return c
	}
	step := max(1, len(multi)/trustPairs)
	var same, other []float64
	for i := 0; i < len(multi); i += step {
		n := multi[i]
		// A partner far from n in id order, so not a neighbour of the
		// same folder.
		m := multi[(i+len(multi)/2+1)%len(multi)]
		if m == n {
			continue
		}
		same = append(same, e.rowCosine(n.rows[0], n.rows[1]))
		other = append(other, e.rowCosine(n.rows[0], m.rows[1]))
	}
	c.pairs = len(same)
	ms, _ := meanStd(same)
	mo, so := meanStd(other)
	if c.pairs == 0 || so == 0 {
		return c
	}
	d := (ms - mo) / so
	c.effect = d
	// A gap that chance alone would give (over three standard errors of
	// the difference of two means of that many pairs) counts for nothing.
	if d*math.Sqrt(float64(c.pairs)/2) < 3 {
		return c
	}
	c.trust = min(max((d-coherenceLow)/(coherenceHigh-coherenceLow), 0), 1)
	return c
}

// rowCosine is the cosine of two rows of the matrix. It is called with
// mu held.
func (e *Engine) rowCosine(a, b int32) float64 {
	s := e.stride
	x, y := e.mat[int(a)*s:int(a+1)*s], e.mat[int(b)*s:int(b+1)*s]
	var dot int64
	for i := range x {
		dot += int64(x[i]) * int64(y[i])
	}
	return float64(dot) * float64(e.inv[a]) * float64(e.inv[b])
}

func meanStd(xs []float64) (mean, std float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}
