package vectors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ReadLimited reads r to its end, at most max bytes: a larger input is an
// error naming name, so that a hostile file (or /dev/zero) cannot make a
// reader allocate without limit. The CQE vectors (internal/cqreplay) read
// through it too.
func ReadLimited(name string, r io.Reader, max int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes, the most a vector file may hold", name, max)
	}
	return data, nil
}

// Decode decodes the one JSON document data holds into v, numbers as
// json.Number. Errors name name and the line and column; data after the
// document is an error.
func Decode(name string, data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%s:%s: %w", name, position(data, errorOffset(err, d, data)), err)
	}
	if off := int(d.InputOffset()); len(bytes.TrimSpace(data[off:])) != 0 {
		off += len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n"))
		return fmt.Errorf("%s:%s: data after the JSON document", name, position(data, int64(off)))
	}
	return nil
}

// errorOffset is the byte offset a decoding error points at: the bad
// byte of a syntax error, the start of a value of the wrong type, the
// end of a truncated document.
func errorOffset(err error, d *json.Decoder, data []byte) int64 {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se.Offset - 1
	case errors.As(err, &te):
		return valueStart(data, te.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return int64(len(data))
	}
	return d.InputOffset()
}

// valueStart goes back from the end of a scalar JSON value to its start.
func valueStart(data []byte, end int64) int64 {
	end = min(max(end, 0), int64(len(data)))
	i := end - 1
	if i >= 0 && data[i] == '"' {
		for i--; i >= 0 && (data[i] != '"' || i > 0 && data[i-1] == '\\'); i-- {
		}
		return max(i, 0)
	}
	for i >= 0 && bytes.IndexByte([]byte("0123456789+-.eEtruefalsn"), data[i]) >= 0 {
		i--
	}
	if i+1 == end { // not a scalar: point at its end
		return end
	}
	return i + 1
}

// position is "line:column" (both from 1, the column in bytes) of byte
// offset off of data.
func position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return fmt.Sprintf("%d:%d", line, col)
}
