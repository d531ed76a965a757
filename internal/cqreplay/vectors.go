// Package cqreplay replays the CQE reference vectors (testdata/cqe-vectors:
// results of rdma-core 44.0's libmlx5 CQ code on fake CQs, QPs, SRQs and
// mkeys) through runtime/cq and compares every work completion field, the
// consumer index, the doorbell record, the queues' bookkeeping, the mkeys'
// signature errors, the scattered bytes and the debug log.
//
// The replay builds its own fake send queues, receive queues and SRQs from
// a case's setup, which keep libmlx5's bookkeeping byte for byte (the SRQ
// free list as 44.0 keeps it); runtime/cq sees them through its
// SendQueue, RecvQueue and SharedRecvQueue interfaces.
package cqreplay

import (
	"encoding/json"
	"fmt"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
	"os"
	"regexp"
)

// Bounds of what a CQE vector may describe, so that a hostile file
// cannot make the replay allocate or index without limit.
const (
	MaxFileSize = 16 << 20 // the shared files are under 600 KB
	MaxCQEs     = 1 << 16  // entries of a replayed CQ
	MaxQueue    = 1 << 15  // WQEs of a send queue, receive queue or SRQ (a device's log_max_qp_sz)
	MaxWQEShift = 10       // receive / SRQ WQE stride (max_rq_desc_sz 512; 1 KiB at most)
	MaxBuffer   = 1 << 20  // bytes of a scatter buffer
	MaxEntries  = 1 << 12  // wc entries of one ibv_poll_cq call
	MaxObjects  = 64       // QPs, SRQs, mkeys, scatter buffers of a case
)

// Enum is a {value, name} or {value, names} object.
type Enum struct {
	Value uint64 `json:"value"`
}

// File is one CQE vector file.
type File struct {
	Path       string       `json:"-"`
	Family     string       `json:"family"`
	CrossCheck []CrossCheck `json:"cross_check"`
	Cases      []json.RawMessage
}

// CrossCheck names a later rdma-core build the cases were also run on.
type CrossCheck struct {
	Label    string `json:"label"`
	RdmaCore string `json:"rdma_core"`
}

var releaseRE = regexp.MustCompile(`^v?([0-9]+\.[0-9]+)`)

// release returns the rdma-core release of a cross-check label ("56.1",
// "64.0"), or "".
func (f *File) release(label string) string {
	for _, c := range f.CrossCheck {
		if c.Label == label {
			if m := releaseRE.FindStringSubmatch(c.RdmaCore); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

// IsCQE reports whether data is a CQE vector file: its schema describes a
// CQ in the setup (a WQE vector's does not).
func IsCQE(data []byte) bool {
	var f struct {
		Schema struct {
			Setup map[string]json.RawMessage `json:"setup"`
		} `json:"schema"`
	}
	if json.Unmarshal(data, &f) != nil {
		return false
	}
	_, ok := f.Schema.Setup["cq"]
	return ok
}

// Load reads a CQE vector file, bounded; errors name the file and the
// line and column, or the case and field.
func Load(path string) (*File, []*Case, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	data, err := vectors.ReadLimited(path, fh, MaxFileSize)
	if err != nil {
		return nil, nil, err
	}
	return Parse(path, data)
}

// Parse is Load from bytes.
func Parse(name string, data []byte) (*File, []*Case, error) {
	if len(data) > MaxFileSize {
		return nil, nil, fmt.Errorf("%s: larger than %d bytes, the most a vector file may hold", name, MaxFileSize)
	}
	var raw struct {
		File
		Cases []json.RawMessage `json:"cases"`
	}
	if err := vectors.Decode(name, data, &raw); err != nil {
		return nil, nil, err
	}
	f := raw.File
	f.Path = name
	if len(raw.Cases) == 0 {
		return nil, nil, fmt.Errorf("%s: no cases: a vector file must hold at least one", name)
	}
	cases := make([]*Case, 0, len(raw.Cases))
	seen := map[string]bool{}
	for i, rc := range raw.Cases {
		c, err := decodeCase(&f, rc)
		if err == nil {
			err = c.Check()
		}
		if err != nil {
			if c != nil && c.ID != "" {
				return nil, nil, fmt.Errorf("%s: case %q: %w", name, c.ID, err)
			}
			return nil, nil, fmt.Errorf("%s: case %d: %w", name, i, err)
		}
		if seen[c.ID] {
			return nil, nil, fmt.Errorf("%s: case %d: id %q repeats an earlier case's", name, i, c.ID)
		}
		seen[c.ID] = true
		cases = append(cases, c)
	}
	return &f, cases, nil
}
