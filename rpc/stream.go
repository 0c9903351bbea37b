package rpc

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/rpc/protocol"
)

// Framing codecs.
const (
	// CodecHeader frames every message with LSP-style Content-Length headers
	// (what vscode-jsonrpc speaks). It is the default.
	CodecHeader = "header"
	// CodecLine frames every message as one line of JSON.
	CodecLine = "line"
)

// DefaultMaxMessageBytes caps the size of one incoming message.
const DefaultMaxMessageBytes = 16 << 20

const (
	// maxHeaderLine bounds one header line; a longer line means the
	// stream is not speaking the header protocol and cannot be resynced.
	maxHeaderLine = 4 << 10
	// sniffPrefix is how much of a refused message is kept to find its id.
	sniffPrefix = 64 << 10
)

// stream is the jsonrpc2.ObjectStream of a connection. It owns the framing,
// so that it can do what jsonrpc2's codecs cannot: refuse oversized
// messages without buffering them, answer malformed messages with -32700
// or -32600 and carry on with the next frame, and end cleanly only when
// the byte stream can no longer be resynchronized.
//
// ReadObject is called from the connection's read loop only; WriteObject
// and the error replies written by ReadObject are serialized by wmu.
type stream struct {
	codec string
	max   int64
	log   *slog.Logger

	r  *bufio.Reader
	in io.Reader

	wmu sync.Mutex // guards out, w and broken
	out io.Writer
	w   *bufio.Writer
	// broken is set once a write failed (a dead host); later writes fail
	// fast instead of blocking on a pipe nobody reads.
	broken error

	// onWriteError is called once, outside wmu, when a write fails.
	onWriteError func(error)
	writeErrOnce sync.Once

	closeOnce sync.Once
}

func newStream(in io.Reader, out io.Writer, codec string, max int64, log *slog.Logger) *stream {
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	if codec == "" {
		codec = CodecHeader
	}
	return &stream{
		codec: codec,
		max:   max,
		log:   log,
		r:     bufio.NewReaderSize(in, 64<<10),
		in:    in,
		out:   out,
		w:     bufio.NewWriterSize(out, 64<<10),
	}
}

// frameError is a malformed or refused frame after which the stream is
// still in sync: it is answered with an error response and reading goes on.
type frameError struct {
	id   json.RawMessage // the request id when it could be found, else null
	code int64
	msg  string
}

func (e *frameError) Error() string { return e.msg }

// fatalFrameError ends the connection: the stream cannot be resynced.
type fatalFrameError struct{ msg string }

func (e *fatalFrameError) Error() string { return e.msg }

// ReadObject implements jsonrpc2.ObjectStream. It returns only a valid
// message or an error that ends the connection.
func (s *stream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		if err != nil {
			var fe *frameError
			if errors.As(err, &fe) {
				s.log.Warn("refused incoming message", "code", fe.code, "error", fe.msg)
				s.writeError(fe.id, fe.code, fe.msg)
				continue
			}
			var fatal *fatalFrameError
			if errors.As(err, &fatal) {
				s.log.Error("ending connection: unreadable input", "error", fatal.msg)
				return io.EOF // a clean end: the reason is logged above
			}
			return err
		}
		if fe := checkMessage(body, v); fe != nil {
			s.log.Warn("refused incoming message", "code", fe.code, "error", fe.msg)
			s.writeError(fe.id, fe.code, fe.msg)
			continue
		}
		return nil
	}
}

// checkMessage decodes one frame into v (a jsonrpc2 message), mapping what
// jsonrpc2 would treat as a fatal read error to a parse or invalid-request
// error response.
func checkMessage(body []byte, v any) *frameError {
	trimmed := bytes.TrimSpace(body)
	if tooDeep(trimmed, maxDepth) {
		return &frameError{id: sniffID(trimmed), code: jsonrpc2.CodeInvalidRequest,
			msg: fmt.Sprintf("invalid request: message of %d bytes is too deep: JSON nested more than %d levels", len(body), maxDepth)}
	}
	// One decoding pass checks the syntax and finds the fields the
	// transport looks at.
	var probe struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
	}
	perr := json.Unmarshal(trimmed, &probe)
	var syntax *json.SyntaxError
	if len(trimmed) == 0 || errors.As(perr, &syntax) {
		return &frameError{id: nullID, code: jsonrpc2.CodeParseError,
			msg: fmt.Sprintf("parse error: message of %d bytes is not valid JSON", len(body))}
	}
	switch trimmed[0] {
	case '{':
	case '[':
		return &frameError{id: nullID, code: jsonrpc2.CodeInvalidRequest,
			msg: "invalid request: batch messages are not supported; send one request per message"}
	default:
		return &frameError{id: nullID, code: jsonrpc2.CodeInvalidRequest,
			msg: "invalid request: a message must be a JSON object"}
	}
	if perr != nil {
		return &frameError{id: sniffID(trimmed), code: jsonrpc2.CodeInvalidRequest, msg: "invalid request: " + perr.Error()}
	}
	if string(probe.JSONRPC) != `"2.0"` {
		got := "none"
		if probe.JSONRPC != nil {
			got = truncate.Runes(string(probe.JSONRPC), 40)
		}
		return &frameError{id: sniffID(trimmed), code: jsonrpc2.CodeInvalidRequest,
			msg: fmt.Sprintf(`invalid request: "jsonrpc":"2.0" is required (got %s): this server speaks JSON-RPC 2.0 only`, got)}
	}
	sent := trimmed // the message as the client sent it, before any stand-in id
	if string(probe.ID) == "null" && probe.Method != nil {
		// A request with a null id: jsonrpc2 would take it for a
		// notification. It gets a stand-in id that the reply turns back
		// into null.
		if fe := withStandInID(&trimmed, nextNullID()); fe != nil {
			return fe
		}
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return &frameError{id: sniffID(sent), code: jsonrpc2.CodeInvalidRequest,
			msg: "invalid request: " + strings.TrimPrefix(err.Error(), "jsonrpc2: ") +
				` (a request needs "jsonrpc":"2.0", a string "method" and an integer or string "id")`}
	}
	return nil
}

var nullID = json.RawMessage("null")

// maxDepth bounds how deeply an incoming message nests objects and arrays.
// No params of the protocol come close; deeper input is refused before it is
// decoded.
const maxDepth = protocol.MaxNestingDepth

// tooDeep reports whether b (JSON, maybe invalid) nests objects and arrays
// more than max levels. It scans b once, skipping strings.
func tooDeep(b []byte, max int) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > max {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// nullIDPrefix starts the stand-in id of a request whose id is null. The NUL
// byte and a random token per process keep it apart from any id a host
// would choose.
var nullIDPrefix = "\x00null-id-" + rand.Text()[:12] + ":"

var nullIDs atomic.Uint64

func nextNullID() string { return nullIDPrefix + strconv.FormatUint(nullIDs.Add(1), 10) }

// withStandInID replaces the top-level id of the request in *msg with the
// string id.
func withStandInID(msg *[]byte, id string) *frameError {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(*msg, &fields); err != nil {
		return &frameError{id: nullID, code: jsonrpc2.CodeInvalidRequest, msg: "invalid request: " + err.Error()}
	}
	fields["id"], _ = json.Marshal(id)
	b, err := json.Marshal(fields)
	if err != nil {
		return &frameError{id: nullID, code: jsonrpc2.CodeInvalidRequest, msg: "invalid request: " + err.Error()}
	}
	*msg = b
	return nil
}

// restoreNullID turns the stand-in id of a reply (withStandInID) back into
// null. jsonrpc2 writes a response's id first.
func restoreNullID(data []byte) []byte {
	start := `{"id":"\u0000` + nullIDPrefix[1:]
	if !bytes.HasPrefix(data, []byte(start)) {
		return data
	}
	end := bytes.IndexByte(data[len(start):], '"')
	if end < 0 {
		return data
	}
	out := append([]byte(`{"id":null`), data[len(start)+end+1:]...)
	return out
}

// sniffID finds the top-level "id" of a (possibly truncated) JSON object
// without decoding the rest, so that refused messages can still be
// answered to the right request. It returns null when there is none.
func sniffID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nullID
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nullID
		}
		key, _ := t.(string)
		if key == "id" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nullID
			}
			raw = bytes.TrimSpace(raw)
			if len(raw) > 0 && (raw[0] == '"' || raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
				return raw
			}
			return nullID
		}
		// Skip the value. Decoding into RawMessage buffers it, but the
		// input is already bounded by the caller.
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nullID
		}
	}
	return nullID
}

func (s *stream) readFrame() ([]byte, error) {
	if s.codec == CodecLine {
		return s.readLineFrame()
	}
	return s.readHeaderFrame()
}

// readHeaderFrame reads "Header: value\r\n" lines up to an empty line, then
// Content-Length bytes. Bare "\n" line endings are accepted. Lines that are
// not headers are answered with -32700 and skipped, which resyncs on the
// next header block.
func (s *stream) readHeaderFrame() ([]byte, error) {
	length := int64(-1)
	sawHeader := false
	for {
		line, err := s.readHeaderLine()
		if err != nil {
			if err == io.EOF && !sawHeader {
				return nil, io.EOF
			}
			if err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if line == "" {
			if !sawHeader {
				continue // stray blank line between messages
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(name, " \t{}\"") || name == "" {
			return nil, &frameError{id: nullID, code: jsonrpc2.CodeParseError,
				msg: fmt.Sprintf("parse error: expected a header like \"Content-Length: N\", got %d bytes of something else (is the host using --codec line?)", len(line))}
		}
		sawHeader = true
		if strings.EqualFold(name, "Content-Length") {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n < 0 {
				return nil, &fatalFrameError{msg: fmt.Sprintf("invalid Content-Length %q", truncate.Runes(strings.TrimSpace(value), 40))}
			}
			length = n
		}
	}
	if length < 0 {
		return nil, &frameError{id: nullID, code: jsonrpc2.CodeParseError,
			msg: "parse error: header block without a Content-Length header"}
	}
	if length == 0 {
		return nil, &frameError{id: nullID, code: jsonrpc2.CodeParseError, msg: "parse error: empty message (Content-Length: 0)"}
	}
	if length > s.max {
		return nil, s.discard(length)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// readHeaderLine returns one line without its line ending.
func (s *stream) readHeaderLine() (string, error) {
	var buf []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxHeaderLine {
			return "", &fatalFrameError{msg: fmt.Sprintf("header line longer than %d bytes: the input is not Content-Length framed (use --codec line for newline-delimited JSON)", maxHeaderLine)}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(buf) > 0 {
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
		return strings.TrimRight(string(buf), "\r\n"), nil
	}
}

// discard skips an oversized body of n bytes without buffering it, keeping
// only a prefix to find the request id.
func (s *stream) discard(n int64) error {
	prefix := make([]byte, min(n, sniffPrefix))
	if _, err := io.ReadFull(s.r, prefix); err != nil {
		return io.ErrUnexpectedEOF
	}
	if _, err := io.CopyN(io.Discard, s.r, n-int64(len(prefix))); err != nil {
		return io.ErrUnexpectedEOF
	}
	return s.tooLarge(n, prefix)
}

func (s *stream) tooLarge(n int64, prefix []byte) error {
	size := strconv.FormatInt(n, 10) + " bytes"
	if n < 0 {
		size = "more than " + strconv.FormatInt(s.max, 10) + " bytes"
	}
	return &frameError{id: sniffID(prefix), code: jsonrpc2.CodeInvalidRequest,
		msg: fmt.Sprintf("invalid request: message of %s exceeds the limit of %d bytes (MaxMessageBytes)", size, s.max)}
}

// readLineFrame reads one newline-terminated JSON message. Blank lines are
// skipped; a line longer than the cap is discarded up to its newline.
func (s *stream) readLineFrame() ([]byte, error) {
	for {
		var buf []byte
		over := false
		for {
			chunk, err := s.r.ReadSlice('\n')
			if !over {
				if int64(len(buf)+len(chunk)) > s.max+2 { // +2 for "\r\n"
					over = true
					keep := max(0, min(len(chunk), sniffPrefix-len(buf)))
					buf = append(buf, chunk[:keep]...)
				} else {
					buf = append(buf, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			if err == io.EOF {
				if over {
					return nil, io.ErrUnexpectedEOF
				}
				if len(bytes.TrimSpace(buf)) == 0 {
					return nil, io.EOF
				}
				// A last message without its newline is still a message.
				return buf, nil
			}
			break
		}
		if over {
			return nil, s.tooLarge(-1, buf)
		}
		if len(bytes.TrimSpace(buf)) == 0 {
			continue
		}
		return buf, nil
	}
}

// WriteObject implements jsonrpc2.ObjectStream.
func (s *stream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeFrame(restoreNullID(data))
}

// writeError writes an error response by hand: jsonrpc2.Response cannot
// carry a null id.
func (s *stream) writeError(id json.RawMessage, code int64, msg string) {
	m, _ := json.Marshal(msg)
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	fmt.Fprintf(&b, `,"error":{"code":%d,"message":`, code)
	b.Write(m)
	b.WriteString("}}")
	_ = s.writeFrame(b.Bytes())
}

func (s *stream) writeFrame(data []byte) error {
	s.wmu.Lock()
	err := s.broken
	if err == nil {
		if s.codec == CodecLine {
			s.w.Write(data)
			s.w.WriteByte('\n')
		} else {
			fmt.Fprintf(s.w, "Content-Length: %d\r\n\r\n", len(data))
			s.w.Write(data)
		}
		err = s.w.Flush()
		if err != nil {
			s.broken = err
		}
	}
	s.wmu.Unlock()
	if err != nil && s.onWriteError != nil {
		s.writeErrOnce.Do(func() { s.onWriteError(err) })
	}
	return err
}

// Close implements jsonrpc2.ObjectStream. It closes the input and output
// when they are closers, which unblocks a read in progress on a pipe.
func (s *stream) Close() error {
	s.closeOnce.Do(func() {
		if c, ok := s.in.(io.Closer); ok {
			c.Close()
		}
		// Not under wmu: closing is what unblocks a writer stuck on a
		// host that stopped reading.
		if c, ok := s.out.(io.Closer); ok {
			c.Close()
		}
	})
	return nil
}
