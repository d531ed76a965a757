package cq

import (
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

type fakeSRQ struct {
	wrid []uint64
	wqes []byte
	free int
}

func (s *fakeSRQ) Size() uint32          { return uint32(len(s.wrid)) }
func (s *fakeSRQ) WRID(i uint32) uint64  { return s.wrid[i] }
func (s *fakeSRQ) Free(uint32) bool      { s.free++; return true }
func (s *fakeSRQ) RepostODP(uint32) bool { s.free--; return true }
func (s *fakeSRQ) WQE(i uint32) []byte   { return s.wqes[i*64 : i*64+64] }

type flatMem struct {
	base uint64
	b    []byte
}

func (m *flatMem) Bytes(addr uint64, n uint32) []byte {
	if addr < m.base || addr-m.base > uint64(len(m.b)) || uint64(n) > uint64(len(m.b))-(addr-m.base) {
		return nil
	}
	return m.b[addr-m.base : addr-m.base+uint64(n)]
}

// FuzzPoll: any CQ contents, polled in either form and with either CQE
// size and version, never panic (so never index outside the CQ, the
// queues or the scatter memory), consume at most the ring's entries per
// call, and keep the doorbell record's SET_CI equal to the consumer
// index.
func FuzzPoll(f *testing.F) {
	f.Add([]byte{0x00, 0x01}, uint8(0))
	f.Add(make([]byte, 512), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		sz := 64
		if mode&1 != 0 {
			sz = 128
		}
		buf := make([]byte, 8*sz)
		copy(buf, data)
		ring := make([]byte, 8*64)
		if len(data) > len(buf) {
			copy(ring, data[len(buf):])
		}
		m := &qmem.Memory{CQ: buf, CQESize: sz, CQDBR: make([]byte, 8)}
		scat := &flatMem{base: 0x1000, b: make([]byte, 256)}
		c, err := New(Config{Mem: m, CQEVersion: int(mode >> 1 & 1), Scatter: scat, DumpFillLKey: 0x100, Log: func(LogEvent, []byte) {}})
		if err != nil {
			t.Fatal(err)
		}
		s := newFakeSQ(8)
		s.ring = ring
		for i := range s.data {
			if len(data) > 0 {
				s.data[i] = uint32(data[i%len(data)]) // any wr_data
			}
		}
		rq := &fakeRQ{wrid: make([]uint64, 4), wqes: ring[:4*32]}
		srq := &fakeSRQ{wrid: make([]uint64, 4), wqes: ring[:4*64]}
		for _, qp := range []*QP{{QPN: 0, UIdx: 0, RC: true, SQ: s, RQ: rq}, {QPN: 1, UIdx: 1, SQ: s, SRQ: srq}, {QPN: 2, UIdx: 2}} {
			if err := c.AddQP(qp); err != nil {
				t.Fatal(err)
			}
		}
		c.AddSRQ(1, srq)
		c.AddMkey(0, &Mkey{})
		c.AddMkey(1, &Mkey{NoContext: true})
		wc := make([]WC, 3)
		for i := 0; i < 6; i++ {
			before := c.ConsIndex()
			if mode&4 != 0 {
				if c.StartPoll() == nil {
					c.ReadOpcode()
					c.ReadFlags()
					for c.NextPoll() == nil {
					}
				}
				c.EndPoll()
			} else {
				c.Poll(wc)
			}
			if c.ConsIndex()-before > 8 {
				t.Fatalf("consumed %d entries of an 8-entry ring in one call", c.ConsIndex()-before)
			}
			if ci := uint32(m.CQDBR[1])<<16 | uint32(m.CQDBR[2])<<8 | uint32(m.CQDBR[3]); ci != c.ConsIndex()&0xffffff {
				t.Fatalf("SET_CI %d, consumer index %d", ci, c.ConsIndex())
			}
		}
	})
}
