// Package cqe writes completion queue entries as an mlx5 device does, into
// a CQ buffer that runtime/cq polls: 64- or 128-byte entries (the 64-byte
// CQE in the second half of a 128-byte one), the owner bit of each pass,
// and the opcode byte written last, after a barrier, so that a poller that
// sees the owner bit sees the whole entry. The layouts are those of
// testdata/cqe-vectors/README.md (struct mlx5_cqe64, mlx5_err_cqe and cq.c's
// mlx5_sigerr_cqe). Writing does not allocate.
package cqe

import (
	"encoding/binary"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/barrier"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"
)

var be = binary.BigEndian

// Ring is the device's side of one CQ: where the next CQE goes, and the
// consumer index the poller leaves in the CQ doorbell record.
type Ring struct {
	buf  []byte
	size int    // bytes per entry: 64 or 128
	n    uint32 // entries, a power of two
	pi   uint32 // CQEs written (the producer index)
	dbr  []byte // CQ doorbell record: bytes 0..3 the consumer index

	// Overrun says a CQE found no room: the poller fell a whole ring
	// behind. The device reports it (IBV_EVENT_CQ_ERR) and writes no
	// more CQEs to this CQ. [ledger: cq-overrun]
	Overrun bool

	// Solicited is the producer index just past the last CQE that
	// answers a solicited-only arm: a responder CQE with the solicited
	// event bit, or an error (0: none yet). [ledger: cq-arm]
	Solicited uint32
}

// New makes the writer of a CQ whose entries are size bytes in buf, and
// whose doorbell record is dbr (8 bytes: consumer index, arm).
func New(buf []byte, size int, dbr []byte) (*Ring, error) {
	if size != 64 && size != 128 {
		return nil, fmt.Errorf("cqe: a CQE is 64 or 128 bytes, not %d", size)
	}
	n := len(buf) / size
	if n == 0 || n&(n-1) != 0 || n*size != len(buf) {
		return nil, fmt.Errorf("cqe: a %d-byte buffer is not a power-of-two number of %d-byte CQEs", len(buf), size)
	}
	if len(dbr) < 8 {
		return nil, fmt.Errorf("cqe: the CQ doorbell record has %d bytes, not 8", len(dbr))
	}
	return &Ring{buf: buf, size: size, n: uint32(n), dbr: dbr}, nil
}

// Entries returns the number of CQEs in the ring.
func (r *Ring) Entries() uint32 { return r.n }

// Written returns the CQEs written so far (the producer index).
func (r *Ring) Written() uint32 { return r.pi }

// Free returns how many CQEs may be written before the poller's consumer
// index (24 bits in the doorbell record) says the ring is full.
func (r *Ring) Free() uint32 {
	ci := mmio.LoadRecord32((*[4]byte)(r.dbr[0:4]))
	used := (r.pi - ci) & 0xffffff
	if used > r.n {
		return 0 // a consumer index ahead of the CQEs written: broken
	}
	return r.n - used
}

// next returns the 64-byte CQE to fill, cleared; nil if the ring is full
// (Overrun is set) or overrun already.
func (r *Ring) next() []byte {
	if r.Overrun || r.Free() == 0 {
		r.Overrun = true
		return nil
	}
	off := int(r.pi&(r.n-1))*r.size + r.size - 64
	b := r.buf[off : off+64 : off+64]
	clear(b[:62])
	return b
}

// commit writes the opcode and owner bit last and moves on.
func (r *Ring) commit(b []byte, op mlx.CQEOpcode, low uint8) {
	barrier.UDMAToDeviceBarrier() // the entry before its owner bit
	owner := uint8(0)
	if r.pi&r.n != 0 {
		owner = 1
	}
	b[63] = uint8(op)<<4 | low | owner
	r.pi++
}
