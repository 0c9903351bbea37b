package llmtest

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// EmbedFunc is a deterministic embedding model: the same text always gets
// the same vector.
type EmbedFunc func(text string) []float32

// WordVectors is an embedding model that carries lexical signal: the
// normalized sum of one fixed pseudo-random direction per lower-cased
// word, so texts sharing words are close and texts sharing none are
// nearly orthogonal. Words listed in synonyms share the direction of
// their key ("leaven" -> "starter"), which lets tests find a note by a
// word it never uses.
func WordVectors(dims int, synonyms map[string]string) EmbedFunc {
	return func(text string) []float32 {
		v := make([]float32, dims)
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if s, ok := synonyms[w]; ok {
				w = s
			}
			addSeeded(v, w, 1)
		}
		return normalize(v)
	}
}

// RandomVectors is an embedding model without any signal: each distinct
// text gets an unrelated pseudo-random unit vector.
func RandomVectors(dims int) EmbedFunc {
	return func(text string) []float32 {
		v := make([]float32, dims)
		addSeeded(v, "\x00random\x00"+text, 1)
		return normalize(v)
	}
}

func addSeeded(v []float32, key string, w float32) {
	h := fnv.New64a()
	h.Write([]byte(key))
	r := rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15))
	for i := range v {
		v[i] += w * float32(r.NormFloat64())
	}
}

func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		v[0] = 1
		return v
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// LocalEmbedder embeds in process with Fn, its vectors named Name: an
// embedder for search/semantic without a server (the benchmarks, the
// eval's random and word vectors).
type LocalEmbedder struct {
	Name string
	Fn   EmbedFunc
}

// Model returns the name of the vectors.
func (l LocalEmbedder) Model() string { return l.Name }

// Embed returns Fn of every text.
func (l LocalEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = l.Fn(t)
	}
	return out, nil
}

// EmbedServer is a fake OpenAI-compatible embeddings endpoint
// (POST /v1/embeddings) answering with an EmbedFunc. It counts requests
// and texts, can fail the next requests with a status, and records the
// Authorization header so tests can check a key was sent.
type EmbedServer struct {
	URL string // base URL, ending in /v1
	srv *httptest.Server

	mu       sync.Mutex
	fn       EmbedFunc
	requests int
	texts    int
	batches  []int // texts per successful request
	models   map[string]int
	fails    []Reply
	auth     string
	holdFrom int           // requests from this number on are held; 0: none
	held     chan struct{} // signalled when a request is held
	release  chan struct{} // closed to let held requests go
}

// NewEmbedServer starts a server embedding with fn; it is closed when the
// test ends.
func NewEmbedServer(t testing.TB, fn EmbedFunc) *EmbedServer {
	t.Helper()
	s := &EmbedServer{fn: fn, models: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// SetFunc replaces the embedding model (a server now serving another
// model, or one of another dimension).
func (s *EmbedServer) SetFunc(fn EmbedFunc) {
	s.mu.Lock()
	s.fn = fn
	s.mu.Unlock()
}

// FailNext makes the next requests answer with the replies given, in
// order (Status, Message and Header are used), before embedding again.
func (s *EmbedServer) FailNext(replies ...Reply) {
	s.mu.Lock()
	s.fails = append(s.fails, replies...)
	s.mu.Unlock()
}

// HoldFrom makes request number n (1-based) and every later one wait,
// before answering, until release is called or the client goes away (a
// process killed mid-request). held receives a value as each arrives.
func (s *EmbedServer) HoldFrom(n int) (held <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdFrom, s.held, s.release = n, make(chan struct{}, 16), make(chan struct{})
	rel := s.release
	var once sync.Once
	return s.held, func() { once.Do(func() { close(rel) }) }
}

// Requests returns how many requests arrived, failed ones included.
func (s *EmbedServer) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Texts returns how many texts were embedded by successful requests.
func (s *EmbedServer) Texts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.texts
}

// Batches returns the number of texts of each successful request.
func (s *EmbedServer) Batches() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.batches...)
}

// Models returns how many texts each model name embedded.
func (s *EmbedServer) Models() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.models {
		out[k] = v
	}
	return out
}

// Authorization returns the Authorization header of the last request.
func (s *EmbedServer) Authorization() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth
}

func (s *EmbedServer) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/embeddings") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req struct {
		Input any    `json:"input"`
		Model string `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests++
	s.auth = r.Header.Get("Authorization")
	if s.holdFrom > 0 && s.requests >= s.holdFrom {
		held, rel := s.held, s.release
		s.mu.Unlock()
		select {
		case held <- struct{}{}:
		default:
		}
		select {
		case <-rel:
		case <-r.Context().Done():
			return
		}
		if r.Context().Err() != nil {
			return // the client went away meanwhile
		}
		s.mu.Lock()
	}
	if len(s.fails) > 0 {
		f := s.fails[0]
		s.fails = s.fails[1:]
		s.mu.Unlock()
		for k, v := range f.Header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": f.Message, "type": "server_error"}})
		return
	}
	fn := s.fn
	s.mu.Unlock()
	var texts []string
	switch in := req.Input.(type) {
	case string:
		texts = []string{in}
	case []any:
		for _, x := range in {
			t, _ := x.(string)
			texts = append(texts, t)
		}
	}
	data := make([]map[string]any, len(texts))
	for i, t := range texts {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": fn(t)}
	}
	s.mu.Lock()
	s.texts += len(texts)
	s.batches = append(s.batches, len(texts))
	s.models[req.Model] += len(texts)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}
