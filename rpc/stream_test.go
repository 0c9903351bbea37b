package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func header(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

const okMsg = `{"jsonrpc":"2.0","id":1,"method":"vault/status"}`

// wireError is an error response as the stream writes it.
type wireError struct {
	ID    json.RawMessage `json:"id"`
	Error struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// readAll reads every message from input and returns the methods read,
// the error responses written and the final error.
func readAll(t *testing.T, codec, input string, max int64) (methods []string, errs []wireError, end error) {
	t.Helper()
	var out bytes.Buffer
	st := newStream(strings.NewReader(input), nopCloser{&out}, codec, max, slog.New(slog.DiscardHandler))
	for range 100 {
		var req jsonrpc2.Request
		if err := st.ReadObject(&req); err != nil {
			end = err
			break
		}
		methods = append(methods, req.Method)
	}
	// Parse what was written back with the same framing.
	back := newStream(bytes.NewReader(out.Bytes()), nopCloser{io.Discard}, codec, 1<<20, slog.New(slog.DiscardHandler))
	for {
		body, err := back.readFrame()
		if err != nil {
			break
		}
		var we wireError
		if err := json.Unmarshal(body, &we); err != nil {
			t.Fatalf("stream wrote invalid JSON %q: %v", body, err)
		}
		errs = append(errs, we)
	}
	return methods, errs, end
}

func TestStreamFraming(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":42,"method":"vault/search","params":{"query":"` + strings.Repeat("x", 300) + `"}}`
	tests := []struct {
		name      string
		codec     string
		input     string
		max       int64
		methods   int      // valid messages read
		codes     []int64  // error responses, in order
		ids       []string // their ids
		wantFatal bool     // ended by an unreadable stream (reported as io.EOF)
		wantEnd   error
	}{
		{name: "header ok", codec: CodecHeader, input: header(okMsg) + header(okMsg), methods: 2, wantEnd: io.EOF},
		{name: "header lf only and extra headers", codec: CodecHeader,
			input: "Content-Type: application/vscode-jsonrpc; charset=utf-8\nContent-Length: " + fmt.Sprint(len(okMsg)) + "\n\n" + okMsg, methods: 1, wantEnd: io.EOF},
		{name: "header invalid json", codec: CodecHeader, input: header(`{"jsonrpc":`) + header(okMsg),
			methods: 1, codes: []int64{-32700}, ids: []string{"null"}, wantEnd: io.EOF},
		{name: "header garbage line then resync", codec: CodecHeader, input: "garbage!!\r\n" + header(okMsg),
			methods: 1, codes: []int64{-32700}, ids: []string{"null"}, wantEnd: io.EOF},
		{name: "header json without headers", codec: CodecHeader, input: okMsg + "\r\n" + header(okMsg),
			methods: 1, codes: []int64{-32700}, ids: []string{"null"}, wantEnd: io.EOF},
		{name: "header batch", codec: CodecHeader, input: header("["+okMsg+"]") + header(okMsg),
			methods: 1, codes: []int64{-32600}, ids: []string{"null"}, wantEnd: io.EOF},
		{name: "header not an object", codec: CodecHeader, input: header(`42`) + header(okMsg),
			methods: 1, codes: []int64{-32600}, ids: []string{"null"}, wantEnd: io.EOF},
		{name: "header bad method type keeps id", codec: CodecHeader, input: header(`{"jsonrpc":"2.0","id":7,"method":5}`) + header(okMsg),
			methods: 1, codes: []int64{-32600}, ids: []string{"7"}, wantEnd: io.EOF},
		{name: "header neither request nor response", codec: CodecHeader, input: header(`{"id":"a"}`) + header(okMsg),
			methods: 1, codes: []int64{-32600}, ids: []string{`"a"`}, wantEnd: io.EOF},
		{name: "header oversized skipped with id", codec: CodecHeader, input: header(big) + header(okMsg), max: 200,
			methods: 1, codes: []int64{-32600}, ids: []string{"42"}, wantEnd: io.EOF},
		{name: "header zero length", codec: CodecHeader, input: "Content-Length: 0\r\n\r\n" + header(okMsg),
			methods: 1, codes: []int64{-32700}, ids: []string{"null"}, wantEnd: io.EOF},
		{name: "header without content-length", codec: CodecHeader, input: "X-Foo: bar\r\n\r\n" + header(okMsg),
			methods: 1, codes: []int64{-32700}, ids: []string{"null"}, wantEnd: io.EOF},
		{name: "header endless line", codec: CodecHeader, input: strings.Repeat("a", maxHeaderLine+10), wantFatal: true},
		{name: "header bad content-length", codec: CodecHeader, input: "Content-Length: lots\r\n\r\n{}", wantFatal: true},
		{name: "header truncated body", codec: CodecHeader, input: "Content-Length: 100\r\n\r\n{}", wantEnd: io.ErrUnexpectedEOF},
		{name: "header truncated oversized body", codec: CodecHeader, input: "Content-Length: 1000\r\n\r\n{}", max: 10, wantEnd: io.ErrUnexpectedEOF},
		{name: "line ok with blank lines and crlf", codec: CodecLine, input: okMsg + "\r\n\n  \n" + okMsg + "\n", methods: 2, wantEnd: io.EOF},
		{name: "line last message without newline", codec: CodecLine, input: okMsg + "\n" + okMsg, methods: 2, wantEnd: io.EOF},
		{name: "line garbage", codec: CodecLine, input: "hello there\n" + okMsg + "\n",
			methods: 1, codes: []int64{-32700}, ids: []string{"null"}, wantEnd: io.EOF},
		{name: "line oversized skipped with id", codec: CodecLine, input: big + "\n" + okMsg + "\n", max: 200,
			methods: 1, codes: []int64{-32600}, ids: []string{"42"}, wantEnd: io.EOF},
		{name: "line jsonrpc 1.0", codec: CodecLine, input: `{"jsonrpc":"1.0","id":3,"method":"x"}` + "\n" + okMsg + "\n",
			methods: 1, codes: []int64{-32600}, ids: []string{"3"}, wantEnd: io.EOF},
		{name: "line jsonrpc missing", codec: CodecLine, input: `{"id":"q","method":"x"}` + "\n" + okMsg + "\n",
			methods: 1, codes: []int64{-32600}, ids: []string{`"q"`}, wantEnd: io.EOF},
		{name: "header too deep", codec: CodecHeader, input: header(`{"jsonrpc":"2.0","id":4,"params":`+strings.Repeat("[", maxDepth+1)+strings.Repeat("]", maxDepth+1)+`}`) + header(okMsg),
			methods: 1, codes: []int64{-32600}, ids: []string{"4"}, wantEnd: io.EOF},
		{name: "header deep but allowed", codec: CodecHeader, input: header(`{"jsonrpc":"2.0","id":4,"method":"x","params":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`),
			methods: 1, wantEnd: io.EOF},
		{name: "line id null is a request", codec: CodecLine, input: `{"jsonrpc":"2.0","id":null,"method":"x"}` + "\n",
			methods: 1, wantEnd: io.EOF},
		{name: "line oversized at eof", codec: CodecLine, input: big, max: 200, wantEnd: io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = 1 << 20
			}
			methods, errs, end := readAll(t, tc.codec, tc.input, max)
			if len(methods) != tc.methods {
				t.Errorf("read %d messages %v, want %d", len(methods), methods, tc.methods)
			}
			if len(errs) != len(tc.codes) {
				t.Fatalf("wrote %d error responses %+v, want codes %v", len(errs), errs, tc.codes)
			}
			for i, e := range errs {
				if e.Error.Code != tc.codes[i] || string(e.ID) != tc.ids[i] {
					t.Errorf("error %d = code %d id %s (%q), want code %d id %s", i, e.Error.Code, e.ID, e.Error.Message, tc.codes[i], tc.ids[i])
				}
				if e.Error.Message == "" {
					t.Errorf("error %d has no message", i)
				}
			}
			want := tc.wantEnd
			if tc.wantFatal {
				want = io.EOF
			}
			if !errors.Is(end, want) {
				t.Errorf("ended with %v, want %v", end, want)
			}
		})
	}
}

// A request with a null id reaches the handler as a request (with a
// stand-in id), and its reply goes out with id null.
func TestNullID(t *testing.T) {
	var out bytes.Buffer
	st := newStream(strings.NewReader(`{"jsonrpc":"2.0","id":null,"method":"x","params":{"id":"keep"}}`+"\n"), nopCloser{&out}, CodecLine, 1<<20, slog.New(slog.DiscardHandler))
	var req jsonrpc2.Request
	if err := st.ReadObject(&req); err != nil {
		t.Fatal(err)
	}
	if req.Notif || !req.ID.IsString || req.Method != "x" || string(*req.Params) != `{"id":"keep"}` {
		t.Fatalf("request = %+v (params %s), want a request with a stand-in id", req, *req.Params)
	}
	raw := json.RawMessage(`{"ok":true}`)
	if err := st.WriteObject(&jsonrpc2.Response{ID: req.ID, Result: &raw}); err != nil {
		t.Fatal(err)
	}
	var resp map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &resp); err != nil || string(resp["id"]) != "null" || string(resp["result"]) != `{"ok":true}` {
		t.Fatalf("reply %s: %v; want id null", out.Bytes(), err)
	}
}

func TestSniffID(t *testing.T) {
	tests := map[string]string{
		`{"jsonrpc":"2.0","id":12,"method":"x"}`:       "12",
		`{"method":"x","params":{"id":3},"id":"abc"}`:  `"abc"`,
		`{"id":{"nested":1}}`:                          "null",
		`{"params":{"a":[1,2,3]},"id":-5}`:             "-5",
		`{"params":"` + strings.Repeat("y", 100) + `"`: "null", // truncated before the id
		`[1,2]`: "null",
		``:      "null",
		`{"jsonrpc":"2.0","id":9,"params":{"q":"trunc...`: "9",
	}
	for in, want := range tests {
		if got := string(sniffID([]byte(in))); got != want {
			t.Errorf("sniffID(%.40q) = %s, want %s", in, got, want)
		}
	}
}

// FuzzStream feeds arbitrary bytes to both framings: reading must end
// without panicking, and everything written back must be well framed JSON.
func FuzzStream(f *testing.F) {
	f.Add([]byte(header(okMsg)), false)
	f.Add([]byte(okMsg+"\n"), true)
	f.Add([]byte("Content-Length: 5\r\n\r\n[1,2]garbage\r\n\r\n"), false)
	f.Add([]byte("{\"id\":1,\"method\":5}\n[]\n\n{\n"), true)
	f.Add([]byte("Content-Length: 99999999999\r\n\r\n"), false)
	f.Add([]byte(`{"jsonrpc":"2.0","id":null,"method":"x"}`+"\n"+`{"jsonrpc":"1.0","id":1,"method":"x"}`+"\n"), true)
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"params":`+strings.Repeat("[", 600)+"\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, line bool) {
		codec := CodecHeader
		if line {
			codec = CodecLine
		}
		var out bytes.Buffer
		st := newStream(bytes.NewReader(data), nopCloser{&out}, codec, 256, slog.New(slog.DiscardHandler))
		for range len(data) + 2 {
			var req jsonrpc2.Request
			if err := st.ReadObject(&req); err != nil {
				break
			}
		}
		back := newStream(bytes.NewReader(out.Bytes()), nopCloser{io.Discard}, codec, 1<<20, slog.New(slog.DiscardHandler))
		for {
			body, err := back.readFrame()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("stream wrote a bad frame: %v\n%q", err, out.Bytes())
				}
				break
			}
			if !json.Valid(body) {
				t.Fatalf("stream wrote invalid JSON %q", body)
			}
			if bytes.Contains(body, []byte(`\u0000null-id`)) {
				t.Fatalf("a stand-in id leaked: %q", body)
			}
		}
	})
}
