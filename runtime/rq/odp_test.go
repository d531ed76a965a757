package rq_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// TestSRQRepostODP follows mlx5_complete_odp_fault step by step: without
// a wait queue the faulted WQE is linked at the free list's tail; with
// one, the wait queue's head joins the free list and the faulted WQE
// waits at the wait queue's tail. Then the free list's head WQE takes the
// faulted work request (wr_id and data segments up to the end segment),
// the head moves on, the counter and doorbell record count it.
func TestSRQRepostODP(t *testing.T) {
	for _, tc := range []struct {
		waitq            bool
		tail             uint16
		wantTail, wantHd uint16
		links            map[int]uint16 // WQE -> next_wqe_index after the repost
	}{
		// Free list 0..7; posts take 0, 1, 2; head 3. WQE 1 faults: 7 -> 1,
		// tail 1; head 3 takes it and moves to 4.
		{false, 7, 1, 4, map[int]uint16{7: 1}},
		// Free list 0..3, wait queue 4..7; posts take 0, 1, 2; head 3 =
		// tail. WQE 1 faults: 3 -> 4 (the wait queue's head joins), 7 -> 1
		// (WQE 1 waits); head 3 takes it and moves to 4.
		{true, 3, 4, 4, map[int]uint16{3: 4, 7: 1}},
	} {
		s, m := newSRQ(t, rq.SRQConfig{Stride: 32, Tail: tc.tail, Init: true, WaitQueue: tc.waitq}, 8)
		for i := uint64(0); i < 3; i++ {
			if err := s.Post(100+i, []rq.SGE{{Addr: 0x1000 * (i + 1), Length: 8, LKey: 3}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RepostODP(1); err != nil {
			t.Fatalf("waitq %v: %v", tc.waitq, err)
		}
		if s.Tail() != tc.wantTail || s.Head() != tc.wantHd || s.Counter() != 4 || binary.BigEndian.Uint32(m.DBR[:]) != 4 {
			t.Errorf("waitq %v: head %d tail %d counter %d dbr % x", tc.waitq, s.Head(), s.Tail(), s.Counter(), m.DBR[:])
		}
		for w, want := range tc.links {
			if got := next(m, 32, w); got != want {
				t.Errorf("waitq %v: WQE %d links to %d, want %d", tc.waitq, w, got, want)
			}
		}
		if s.WRID(3) != 101 || !bytes.Equal(s.WQE(3)[16:32], s.WQE(1)[16:32]) {
			t.Errorf("waitq %v: WQE 3: wr_id %d % x", tc.waitq, s.WRID(3), s.WQE(3))
		}
		// WQE 3 is posted now, WQE 1 is not.
		if _, err := s.Retire(3); err != nil {
			t.Errorf("waitq %v: retire the reposted WQE: %v", tc.waitq, err)
		}
		before := append([]byte(nil), m.Ring...)
		if err := s.RepostODP(1); err == nil || !bytes.Equal(before, m.Ring) || s.Counter() != 4 {
			t.Errorf("waitq %v: reposting a WQE that is not posted: %v", tc.waitq, err)
		}
	}
}

// TestSRQRepostODPCorruptList: a free list whose head links to a posted
// WQE refuses the repost and changes nothing.
func TestSRQRepostODPCorruptList(t *testing.T) {
	s, m := newSRQ(t, rq.SRQConfig{Stride: 32, Tail: 7, Init: true}, 8)
	s.Post(1, nil)
	s.Post(2, nil)
	binary.BigEndian.PutUint16(m.Ring[2*32+2:], 0) // head 2 links to posted WQE 0
	before := append([]byte(nil), m.Ring...)
	if err := s.RepostODP(1); err == nil || !bytes.Equal(before, m.Ring) || s.Tail() != 7 {
		t.Fatalf("%v, tail %d", err, s.Tail())
	}
}
