package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
)

// MaxMessageBytes is the largest message accepted. The SDK's line scanner
// gives up (and ends the connection) past 10 MiB, so longer lines are
// refused here, without being buffered, and the connection goes on.
const MaxMessageBytes = 8 << 20

// lockedWriter serializes whole messages onto the output: the SDK writes
// each message with one Write call, and so does the filter.
type lockedWriter struct {
	mu sync.Mutex // guards w
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// filterInput copies the client's messages from in to the SDK's reader, one
// line each, and answers what is not a JSON-RPC message itself: a line that
// is not JSON gets -32700, a JSON value that is not a request, notification
// or response (arrays included: ACP has no batches) gets -32600, and so
// does a line over MaxMessageBytes. The SDK would log such lines and send
// nothing, leaving a client waiting. filterInput returns when in ends or
// the SDK side is closed, and closes sdkIn.
func filterInput(in io.Reader, sdkIn *io.PipeWriter, out io.Writer, log *slog.Logger) {
	defer sdkIn.Close()
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, MaxMessageBytes)
		if tooLong {
			log.Warn("message refused: larger than the limit", "limit", MaxMessageBytes)
			writeError(out, nil, -32600, "Invalid request: message larger than 8 MiB refused")
		} else if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			if id, code, msg := checkMessage(trimmed); code != 0 {
				log.Warn("malformed message answered with an error", "code", code, "error", msg)
				writeError(out, id, code, msg)
			} else if _, werr := sdkIn.Write(append(trimmed, '\n')); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				log.Warn("reading stdin failed", "error", err)
			}
			return
		}
	}
}

// readLine reads one '\n'-terminated line. A line longer than max is
// consumed and reported as tooLong without being kept.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// checkMessage returns a non-zero JSON-RPC error code, with its message and
// the request id when one can be read, for a line that is not a message the
// SDK can handle.
func checkMessage(line []byte) (id json.RawMessage, code int, msg string) {
	if !json.Valid(line) {
		return nil, -32700, "Parse error: the line is not valid JSON (ACP messages are one JSON object per line)"
	}
	if line[0] != '{' {
		if line[0] == '[' {
			return nil, -32600, "Invalid request: batches are not supported by ACP; send one message per line"
		}
		return nil, -32600, "Invalid request: a message must be a JSON object"
	}
	var m struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, -32600, "Invalid request: " + err.Error()
	}
	if len(m.ID) > 0 && !validID(m.ID) {
		return nil, -32600, "Invalid request: id must be a string, a number or null"
	}
	if m.JSONRPC == nil || *m.JSONRPC != "2.0" {
		return m.ID, -32600, `Invalid request: "jsonrpc" must be "2.0"`
	}
	if len(m.Method) > 0 {
		var name string
		if json.Unmarshal(m.Method, &name) != nil || name == "" {
			return m.ID, -32600, "Invalid request: method must be a non-empty string"
		}
		return nil, 0, ""
	}
	if len(m.ID) > 0 && (len(m.Result) > 0 || len(m.Error) > 0) {
		return nil, 0, "" // a response to one of our requests
	}
	return m.ID, -32600, "Invalid request: a message needs a method (request or notification) or an id with a result or error (response)"
}

func validID(raw json.RawMessage) bool {
	switch raw[0] {
	case '"', 'n':
		return true
	case '{', '[', 't', 'f':
		return false
	}
	return true // a number
}

// writeError writes one JSON-RPC error response.
func writeError(out io.Writer, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	_, _ = out.Write(append(b, '\n'))
}
