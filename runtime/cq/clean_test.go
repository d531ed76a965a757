package cq

import (
	"encoding/binary"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// The helpers of this file are its own, so that it does not depend on
// the other tests' fixtures.

// cleanCQE writes a CQE at index n of m's ring as the device does: QPN
// (or user index), WQE counter, opcode and the owner bit of n's pass.
func cleanCQE(m *qmem.Memory, n uint32, op mlx.CQEOpcode, qpn, uidx uint32, ctr uint16) {
	ncqe := uint32(len(m.CQ) / m.CQESize)
	off := int(n&(ncqe-1))*m.CQESize + m.CQESize - 64
	b := m.CQ[off : off+64]
	clear(b)
	binary.BigEndian.PutUint32(b[32:], uidx)
	binary.BigEndian.PutUint32(b[56:], uint32(mlx.MLX5_OPCODE_RDMA_WRITE)<<24|qpn)
	binary.BigEndian.PutUint16(b[60:], ctr)
	b[63] = uint8(op)<<4 | uint8(n/ncqe&1)
}

// cleanSQ is a send queue whose slot i holds wr_id 100+i.
type cleanSQ struct{ tail uint32 }

func (s *cleanSQ) Slots() uint32                          { return 8 }
func (s *cleanSQ) Slot(i uint32) (uint64, uint32, uint32) { return 100 + uint64(i), i, 0 }
func (s *cleanSQ) Retire(t uint32)                        { s.tail = t }
func (s *cleanSQ) Ring() []byte                           { return nil }

// cleanSRQ records the WQEs given back.
type cleanSRQ struct{ freed []uint32 }

func (s *cleanSRQ) Size() uint32          { return 8 }
func (s *cleanSRQ) WRID(i uint32) uint64  { return 200 + uint64(i) }
func (s *cleanSRQ) Free(i uint32) bool    { s.freed = append(s.freed, i); return true }
func (s *cleanSRQ) RepostODP(uint32) bool { return false }
func (s *cleanSRQ) WQE(i uint32) []byte   { return nil }

func cleanSetup(t *testing.T, version int, ci uint32) (*qmem.Memory, *CQ, *cleanSRQ) {
	t.Helper()
	m, err := qmem.Plain(8, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	InitBuffer(m)
	c, err := New(Config{Mem: m, CQN: 3, CQEVersion: version, ConsIndex: ci})
	if err != nil {
		t.Fatal(err)
	}
	srq := &cleanSRQ{}
	if err := c.AddQP(&QP{QPN: 0x10, UIdx: 1, RC: true, SQ: &cleanSQ{}}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddQP(&QP{QPN: 0x20, UIdx: 2, RC: true, SQ: &cleanSQ{}, SRQ: srq}); err != nil {
		t.Fatal(err)
	}
	return m, c, srq
}

// TestClean: the CQEs of one QP leave the CQ (wrapping its end), those of
// the other are polled after it in their order, the consumer index moves
// on by the number removed (and is written), an SRQ gets the WQEs of the
// removed receive CQEs back, and the ring goes on working.
func TestClean(t *testing.T) {
	for _, v := range []int{0, 1} {
		m, c, srq := cleanSetup(t, v, 6)
		// Indexes 6..10 (the ring of 8 wraps after 7): A, B, A, B, A.
		cleanCQE(m, 6, mlx.MLX5_CQE_REQ, 0x10, 1, 0)
		cleanCQE(m, 7, mlx.MLX5_CQE_RESP_SEND, 0x20, 2, 3)
		cleanCQE(m, 8, mlx.MLX5_CQE_REQ, 0x10, 1, 1)
		cleanCQE(m, 9, mlx.MLX5_CQE_REQ_ERR, 0x20, 2, 4)
		cleanCQE(m, 10, mlx.MLX5_CQE_REQ, 0x10, 1, 2)
		key := uint32(0x20)
		if v == 1 {
			key = 2
		}
		c.Clean(key)
		if c.ConsIndex() != 8 {
			t.Fatalf("v%d: consumer index %d after removing 2 CQEs from 6, want 8", v, c.ConsIndex())
		}
		if got := binary.BigEndian.Uint32(m.CQDBR[0:4]); got != 8 {
			t.Fatalf("v%d: SET_CI %d, want 8", v, got)
		}
		if len(srq.freed) != 1 || srq.freed[0] != 3 {
			t.Fatalf("v%d: SRQ WQEs given back %v, want [3] (the responder CQE's; the requester error has none)", v, srq.freed)
		}
		wc := make([]WC, 8)
		n, err := c.Poll(wc)
		if n != 3 || err != nil {
			t.Fatalf("v%d: poll after Clean: %d, %v, want the other QP's 3", v, n, err)
		}
		for i := range 3 {
			if wc[i].WRID != 100+uint64(i) || wc[i].QPNum != 0x10 {
				t.Errorf("v%d: completion %d: wr_id %d of QP %#x, want %d of 0x10", v, i, wc[i].WRID, wc[i].QPNum, 100+i)
			}
		}
		// The next CQE the device writes (index 11) is the next polled.
		cleanCQE(m, 11, mlx.MLX5_CQE_REQ, 0x10, 1, 3)
		if n, err := c.Poll(wc); n != 1 || err != nil || wc[0].WRID != 103 {
			t.Fatalf("v%d: poll of the CQE written after Clean: %d, %v, %+v", v, n, err, wc[0])
		}
	}
}

// TestCleanNothing: a QP without CQEs in the CQ, or a closed CQ, changes
// nothing.
func TestCleanNothing(t *testing.T) {
	m, c, _ := cleanSetup(t, 0, 0)
	cleanCQE(m, 0, mlx.MLX5_CQE_REQ, 0x10, 1, 0)
	c.Clean(0x20)
	c.Clean(0x99) // not registered
	if c.ConsIndex() != 0 {
		t.Fatalf("consumer index %d after cleaning QPs without CQEs", c.ConsIndex())
	}
	c.Close()
	c.Clean(0x10)
	if c.ConsIndex() != 0 {
		t.Fatal("Clean of a closed CQ moved its consumer index")
	}
}

// TestCleanFullRing: a ring full of one QP's CQEs empties; one full of
// another's stays.
func TestCleanFullRing(t *testing.T) {
	m, c, _ := cleanSetup(t, 0, 0)
	for i := range uint32(8) {
		cleanCQE(m, i, mlx.MLX5_CQE_REQ, 0x10, 1, uint16(i))
	}
	c.Clean(0x20)
	if c.ConsIndex() != 0 {
		t.Fatalf("consumer index %d after cleaning another QP", c.ConsIndex())
	}
	c.Clean(0x10)
	// libmlx5 looks at most cqe (ncqe - 1) entries ahead: the last stays.
	if c.ConsIndex() != 7 {
		t.Fatalf("consumer index %d after cleaning a full ring of 8, want 7", c.ConsIndex())
	}
	wc := make([]WC, 8)
	if n, _ := c.Poll(wc); n != 1 || wc[0].WRID != 107 {
		t.Fatalf("poll after cleaning: %d, %+v", n, wc[0])
	}
}
