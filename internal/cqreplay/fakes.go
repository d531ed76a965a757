package cqreplay

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// fakeSQ keeps a send queue's bookkeeping as libmlx5's struct mlx5_wq
// does (wrid, wqe_head, wr_data per slot, tail) and the send ring's bytes.
type fakeSQ struct {
	wrid    []uint64
	wqeHead []uint32
	wrData  []uint32
	tail    uint32
	ring    []byte
}

func newFakeSQ(q *SQ) *fakeSQ {
	s := &fakeSQ{
		wrid: make([]uint64, q.WQECnt), wqeHead: make([]uint32, q.WQECnt), wrData: make([]uint32, q.WQECnt),
		tail: q.Tail, ring: make([]byte, q.WQECnt*64),
	}
	for _, sl := range q.Slots {
		s.wrid[sl.Slot], s.wqeHead[sl.Slot], s.wrData[sl.Slot] = sl.WRID, sl.WQEHead, sl.WRData
	}
	for _, w := range q.WQEs {
		for _, sl := range w.Slots {
			b, _ := hex.DecodeString(sl.Hex) // checked
			copy(s.ring[sl.Slot*64:], b)
		}
	}
	return s
}

func (s *fakeSQ) Slots() uint32 { return uint32(len(s.wrid)) }
func (s *fakeSQ) Slot(i uint32) (uint64, uint32, uint32) {
	return s.wrid[i], s.wqeHead[i], s.wrData[i]
}
func (s *fakeSQ) Retire(tail uint32) { s.tail = tail }
func (s *fakeSQ) Ring() []byte       { return s.ring }

// fakeRQ is a QP's receive queue: wr_ids, tail and WQE bytes.
type fakeRQ struct {
	wrid  []uint64
	tail  uint32
	shift int
	sig   bool
	buf   []byte
}

func newFakeRQ(q *RQ) *fakeRQ {
	r := &fakeRQ{wrid: append([]uint64(nil), q.WRID...), tail: q.Tail, shift: q.WQEShift, sig: q.WQSig != 0,
		buf: make([]byte, q.WQECnt<<q.WQEShift)}
	for _, w := range q.WQEs {
		b, _ := hex.DecodeString(w.Hex) // checked
		copy(r.buf[w.Slot<<q.WQEShift:], b)
	}
	return r
}

func (r *fakeRQ) Slots() uint32 { return uint32(len(r.wrid)) }
func (r *fakeRQ) Consume(i uint32) (uint64, bool) {
	r.tail++
	return r.wrid[i], true
}
func (r *fakeRQ) WQE(i uint32) ([]byte, bool) {
	return r.buf[int(i)<<r.shift : int(i+1)<<r.shift], r.sig
}

// fakeSRQ is an SRQ with libmlx5 44.0's free list: each WQE's next
// segment names the next free WQE; freed WQEs are linked at the tail
// (mlx5_free_srq_wqe), and an ODP page fault reposts the WQE at the head
// (mlx5_complete_odp_fault, srq_repost).
type fakeSRQ struct {
	max, shift, maxGS int
	head, tail        int
	counter           uint32
	db                uint32
	dbWritten         bool
	wrid              []uint64
	buf               []byte
	err               error // a free list that leaves the SRQ
}

func newFakeSRQ(q *SRQ) *fakeSRQ {
	b, _ := hex.DecodeString(q.BufferHex) // checked
	return &fakeSRQ{max: q.Max, shift: q.WQEShift, maxGS: q.MaxGS, head: q.Head, tail: q.Tail,
		counter: q.Counter, wrid: append([]uint64(nil), q.WRID...), buf: b}
}

func (s *fakeSRQ) wqe(i int) []byte { return s.buf[i<<s.shift : (i+1)<<s.shift] }

func (s *fakeSRQ) Size() uint32         { return uint32(s.max) }
func (s *fakeSRQ) WRID(i uint32) uint64 { return s.wrid[i] }
func (s *fakeSRQ) WQE(i uint32) []byte  { return s.wqe(int(i)) }
func (s *fakeSRQ) setNext(at, next int) { binary.BigEndian.PutUint16(s.wqe(at)[2:4], uint16(next)) }

// Free never refuses: libmlx5 44.0 frees whatever the CQE names.
func (s *fakeSRQ) Free(i uint32) bool {
	s.setNext(s.tail, int(i))
	s.tail = int(i)
	return true
}

// RepostODP never refuses either; a free list leading outside the SRQ is
// recorded for the replay to report.
func (s *fakeSRQ) RepostODP(i uint32) bool {
	ind := int(i)
	if s.head >= s.max {
		// libmlx5 would write outside the SRQ.
		s.err = fmt.Errorf("SRQ head %d: a next_wqe_index outside the %d-WQE SRQ", s.head, s.max)
		return true
	}
	s.Free(i) // no wait queue: back at the tail
	s.wrid[s.head] = s.wrid[ind]
	src, dst := s.wqe(ind), s.wqe(s.head)
	for g := 0; g < s.maxGS; g++ {
		seg := src[16+16*g : 32+16*g]
		copy(dst[16+16*g:], seg)
		if binary.BigEndian.Uint32(seg[4:8]) == 0x100 { // MLX5_INVALID_LKEY
			break
		}
	}
	s.head = int(binary.BigEndian.Uint16(dst[2:4]))
	s.counter++
	s.db, s.dbWritten = s.counter, true
	return true
}

// memory is the scatter buffers, at their fixed addresses.
type memory struct {
	addr []uint64
	buf  [][]byte
}

func (m *memory) Bytes(addr uint64, n uint32) []byte {
	for i, a := range m.addr {
		if addr >= a && addr-a <= uint64(len(m.buf[i])) && uint64(n) <= uint64(len(m.buf[i]))-(addr-a) {
			return m.buf[i][addr-a : addr-a+uint64(n)]
		}
	}
	return nil
}
