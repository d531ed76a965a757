package rq_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

func newSRQ(t testing.TB, c rq.SRQConfig, wqes int) (*rq.SRQ, rq.Memory) {
	t.Helper()
	c.Mem = newMem(wqes * c.Stride)
	s, err := rq.NewSRQ(c)
	if err != nil {
		t.Fatal(err)
	}
	return s, c.Mem
}

func next(m rq.Memory, stride, i int) uint16 {
	return binary.BigEndian.Uint16(m.Ring[i*stride+2:])
}

// TestSRQInit: a new SRQ's memory as mlx5_alloc_srq_buf leaves it: all
// zero, then set_srq_buf_ll links WQE i to i + 1 for i from head up to,
// not including, tail (next_wqe_index, big-endian at byte 2 of the next
// segment), and the same over the wait queue (tail + 1 up to the last
// WQE); the doorbell record is 0.
func TestSRQInit(t *testing.T) {
	_, m := newSRQ(t, rq.SRQConfig{Stride: 32, Tail: 7, Init: true}, 8)
	for i := 0; i < 8; i++ {
		want := uint16(i + 1)
		if i == 7 {
			want = 0
		}
		if got := next(m, 32, i); got != want {
			t.Errorf("WQE %d links to %d, want %d", i, got, want)
		}
		w := m.Ring[i*32 : i*32+32]
		if w[0] != 0 || w[1] != 0 || !bytes.Equal(w[4:], make([]byte, 28)) {
			t.Errorf("WQE %d: %x, want zeros but the link", i, w)
		}
	}
	if !bytes.Equal(m.DBR[:], []byte{0, 0, 0, 0}) {
		t.Errorf("doorbell record %x", m.DBR[:])
	}
	_, m = newSRQ(t, rq.SRQConfig{Stride: 32, Tail: 3, Init: true, WaitQueue: true}, 8)
	for i, want := range []uint16{1, 2, 3, 0, 5, 6, 7, 0} {
		if got := next(m, 32, i); got != want {
			t.Errorf("wait queue: WQE %d links to %d, want %d", i, got, want)
		}
	}
}

// TestSRQLayout checks a WQE byte for byte against mlx5_post_srq_recv: the
// 16-byte next segment is left as it is (its link was read to move the
// head), every SGE becomes a data segment, zero-length ones too (unlike
// the QP's receive queue), the end segment follows when fewer than max_gs
// = (stride - 16) / 16, and the doorbell record gets
// htobe32(srq->counter), a 16-bit counter.
func TestSRQLayout(t *testing.T) {
	s, m := newSRQ(t, rq.SRQConfig{Stride: 64, Tail: 3, Init: true, Counter: 0xfffe}, 4)
	if s.MaxGS() != 3 {
		t.Fatalf("max_gs %d, want 3", s.MaxGS())
	}
	err := s.Post(7, []rq.SGE{{Addr: 0x1122334455667788, Length: 0x40, LKey: 0xa1b2c3d4}, {Addr: 0x9000, Length: 0, LKey: 0x77}})
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, `
		00000001 00000000 0000000000000000
		00000040 a1b2c3d4 1122334455667788
		00000000 00000077 0000000000009000
		00000000 00000100 0000000000000000`)
	if got := m.Ring[:64]; !bytes.Equal(got, want) {
		t.Fatalf("WQE 0:\n got %x\nwant %x", got, want)
	}
	if !bytes.Equal(m.DBR[:], []byte{0, 0, 0xff, 0xff}) || s.Head() != 1 {
		t.Fatalf("doorbell record %x, head %d", m.DBR[:], s.Head())
	}
	if err := s.Post(8, nil); err != nil || !bytes.Equal(m.DBR[:], []byte{0, 0, 0, 0}) {
		t.Fatalf("%v: the counter wraps at 16 bits: %x", err, m.DBR[:])
	}
	if id, err := s.Retire(0); id != 7 || err != nil {
		t.Fatal(id, err)
	}
}

// TestSRQFreeList: the v44 free list's order of reuse. Eight WQEs, the
// list 0 → 1 → … → 7: posting takes the head and follows its link, so
// seven posts take 0..6 and the eighth finds head == tail (7): full,
// ENOMEM, nothing written. Retiring 3, then 1, then 5 links each at the
// tail: 7 → 3 → 1 → 5. The next three posts take 7, 3, 1, and the queue
// is full again with 5 as head and tail.
func TestSRQFreeList(t *testing.T) {
	s, m := newSRQ(t, rq.SRQConfig{Stride: 32, Tail: 7, Init: true}, 8)
	for i := 0; i < 7; i++ {
		if err := s.Post(uint64(100+i), []rq.SGE{{Addr: uint64(i), Length: 1, LKey: 1}}); err != nil {
			t.Fatal(i, err)
		}
	}
	before := state(m)
	re := wantRule(t, s.Post(1, nil), "post_recv.srq_room", syscall.ENOMEM)
	if re.Func != mlx.FnPostSRQRecv {
		t.Errorf("%v", re)
	}
	if !bytes.Equal(before, state(m)) {
		t.Fatal("a full SRQ was written")
	}
	for _, ind := range []uint16{3, 1, 5} {
		id, err := s.Retire(ind)
		if err != nil || id != uint64(100+ind) {
			t.Fatalf("retire %d: %d, %v", ind, id, err)
		}
	}
	if next(m, 32, 7) != 3 || next(m, 32, 3) != 1 || next(m, 32, 1) != 5 || s.Tail() != 5 {
		t.Fatalf("list 7 → %d → %d → %d, tail %d; want 7 → 3 → 1 → 5", next(m, 32, 7), next(m, 32, 3), next(m, 32, 1), s.Tail())
	}
	n, err := s.PostList([]rq.RecvWR{{WRID: 207}, {WRID: 203}, {WRID: 201}, {WRID: 999}})
	wantRule(t, err, "post_recv.srq_room", syscall.ENOMEM)
	if n != 3 || s.Head() != 5 || s.Tail() != 5 {
		t.Fatalf("posted %d, head %d, tail %d; want 3, 5, 5", n, s.Head(), s.Tail())
	}
	for _, ind := range []uint16{7, 3, 1} {
		if s.WRID(ind) != uint64(200+ind) {
			t.Errorf("WQE %d holds wr_id %d, want %d", ind, s.WRID(ind), 200+ind)
		}
	}
	if got := binary.BigEndian.Uint32(m.DBR[:]); got != 10 {
		t.Fatalf("doorbell record %d, want 10", got)
	}
	// Retiring a WQE that is not posted (free, or outside the ring)
	// changes nothing.
	before = state(m)
	for _, ind := range []uint16{5, 8, 0xffff} {
		if _, err := s.Retire(ind); err == nil {
			t.Errorf("retired WQE %d, which is not posted", ind)
		}
	}
	if !bytes.Equal(before, state(m)) || s.Tail() != 5 {
		t.Fatal("a refused retire wrote")
	}
}

// TestSRQSGECount: more SGEs than max_gs fail with post_recv.srq_sge_count
// (EINVAL), checked before the room as libmlx5 does.
func TestSRQSGECount(t *testing.T) {
	s, m := newSRQ(t, rq.SRQConfig{Stride: 32, Tail: 1, Init: true}, 2)
	if err := s.Post(1, nil); err != nil {
		t.Fatal(err)
	}
	before := state(m)
	wantRule(t, s.Post(2, make([]rq.SGE, 2)), "post_recv.srq_sge_count", syscall.EINVAL)
	wantRule(t, s.Post(2, make([]rq.SGE, 1)), "post_recv.srq_room", syscall.ENOMEM)
	if !bytes.Equal(before, state(m)) {
		t.Fatal("a refused work request was written")
	}
}

// TestSRQExisting: an SRQ taken over from its memory (Init false) reads
// the free list from the ring: WQEs on it are free, the others posted.
// A list that leaves the ring or loops is refused, and so is a post whose
// head links outside the free list.
func TestSRQExisting(t *testing.T) {
	s, m := newSRQ(t, rq.SRQConfig{Stride: 32, Tail: 7, Init: true}, 8)
	for i := 0; i < 4; i++ {
		s.Post(uint64(i), nil)
	}
	s.Retire(2)
	s2, err := rq.NewSRQ(rq.SRQConfig{Mem: m, Stride: 32, Head: s.Head(), Tail: s.Tail(), Counter: s.Counter()})
	if err != nil {
		t.Fatal(err)
	}
	// 4 → 5 → 6 → 7 → 2 are free; 0, 1, 3 posted.
	for _, ind := range []uint16{0, 1, 3} {
		if _, err := s2.Retire(ind); err != nil {
			t.Errorf("WQE %d: %v", ind, err)
		}
	}
	if _, err := s2.Retire(5); err == nil {
		t.Error("retired a free WQE")
	}
	binary.BigEndian.PutUint16(m.Ring[5*32+2:], 40) // 5 → 40
	if _, err := rq.NewSRQ(rq.SRQConfig{Mem: m, Stride: 32, Head: 4, Tail: 2}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("a list leaving the ring: %v", err)
	}
	binary.BigEndian.PutUint16(m.Ring[5*32+2:], 4) // 5 → 4: a loop
	if _, err := rq.NewSRQ(rq.SRQConfig{Mem: m, Stride: 32, Head: 4, Tail: 2}); err == nil || !strings.Contains(err.Error(), "loops") {
		t.Errorf("a looping list: %v", err)
	}
	// The head's link corrupted after the SRQ was made: refused, nothing written.
	s3, m3 := newSRQ(t, rq.SRQConfig{Stride: 32, Tail: 3, Init: true}, 4)
	binary.BigEndian.PutUint16(m3.Ring[2:], 9)
	before := state(m3)
	if err := s3.Post(1, nil); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("a corrupt link: %v", err)
	}
	if !bytes.Equal(before, state(m3)) || s3.Head() != 0 {
		t.Fatal("a refused post wrote")
	}
}

// TestSRQConfig: configurations that cannot describe an SRQ are refused.
func TestSRQConfig(t *testing.T) {
	for _, tc := range []struct {
		c    rq.SRQConfig
		ring int
		want string
	}{
		{rq.SRQConfig{Stride: 16}, 64, "stride of 16"},
		{rq.SRQConfig{Stride: 32, Tail: 2}, 64, "outside"},
		{rq.SRQConfig{Stride: 32, Head: 1, Tail: 0, Init: true}, 64, "head 1 up to tail 0"},
		{rq.SRQConfig{Stride: 32, WaitQueue: true}, 64, "WaitQueue"},
		{rq.SRQConfig{Stride: 32}, 32 << 17, "at most 65536"},
	} {
		tc.c.Mem = newMem(tc.ring)
		if _, err := rq.NewSRQ(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.c.Stride, err, tc.want)
		}
	}
}

// TestSRQWrap posts and retires, out of order, through thousands of
// reuses of every WQE: each wr_id comes back once, and the doorbell record
// follows the 16-bit counter.
func TestSRQWrap(t *testing.T) {
	s, m := newSRQ(t, rq.SRQConfig{Stride: 32, Tail: 15, Init: true}, 16)
	posted := map[uint16]uint64{}
	id := uint64(0)
	for round := 0; round < 40000; round++ {
		for k := round%4 + 1; k > 0; k-- {
			h := s.Head()
			err := s.Post(id, []rq.SGE{{Addr: id, Length: 8, LKey: 3}})
			if full := len(posted) == 15; (err != nil) != full {
				t.Fatalf("round %d: %d posted, error %v", round, len(posted), err)
			}
			if err == nil {
				posted[h] = id
				id++
			}
		}
		if got := binary.BigEndian.Uint32(m.DBR[:]); got != uint32(uint16(id)) {
			t.Fatalf("doorbell record %d, want %d", got, uint16(id))
		}
		// Retire some, in an order that depends on the round.
		for r := round % 3; r >= 0 && len(posted) > 0; r-- {
			ind := uint16((round*7 + r*5) % 16)
			for !has(posted, ind) {
				ind = (ind + 1) % 16
			}
			got, err := s.Retire(ind)
			if err != nil || got != posted[ind] {
				t.Fatalf("round %d: retire %d gave %d, %v; want %d", round, ind, got, err, posted[ind])
			}
			delete(posted, ind)
		}
	}
	if id < 0x10000 {
		t.Fatalf("only %d posted", id)
	}
}

func has(m map[uint16]uint64, k uint16) bool { _, ok := m[k]; return ok }

// TestScatter: the data segments the poller scatters into are those the
// post wrote, for the WQE the next completion consumes.
func TestScatter(t *testing.T) {
	q, _ := newRQ(t, rq.Config{Stride: 64, WQSig: true}, 4)
	q.Post(1, nil)
	q.Post(2, []rq.SGE{{Addr: 0xabc, Length: 9, LKey: 7}})
	q.Retire()
	sc := q.Scatter(q.TailIndex())
	if len(sc) != 48 || !bytes.Equal(sc[:16], unhex(t, "00000009 00000007 0000000000000abc")) {
		t.Fatalf("RQ scatter of WQE %d: %x", q.TailIndex(), sc)
	}
	s, _ := newSRQ(t, rq.SRQConfig{Stride: 64, Tail: 3, Init: true}, 4)
	s.Post(5, []rq.SGE{{Addr: 0xdef, Length: 3, LKey: 2}})
	if sc := s.Scatter(0); len(sc) != 48 || !bytes.Equal(sc[:16], unhex(t, "00000003 00000002 0000000000000def")) {
		t.Fatalf("SRQ scatter: %x", sc)
	}
	if s.Scatter(4) != nil {
		t.Fatal("a WQE outside the ring")
	}
}

// TestSRQClose: after Close no post writes the ring, the doorbell record
// or the free list.
func TestSRQClose(t *testing.T) {
	s, m := newSRQ(t, rq.SRQConfig{Stride: 32, Tail: 3, Init: true}, 4)
	if err := s.Post(1, []rq.SGE{{LKey: 1, Addr: 2, Length: 3}}); err != nil {
		t.Fatal(err)
	}
	ring, dbr := bytes.Clone(m.Ring), *m.DBR
	s.Close()
	s.Close()
	if err := s.Post(2, []rq.SGE{{LKey: 1, Addr: 2, Length: 3}}); !errors.Is(err, rq.ErrClosed) {
		t.Errorf("Post after Close: %v, want ErrClosed", err)
	}
	if n, err := s.PostList([]rq.RecvWR{{WRID: 3}}); n != 0 || !errors.Is(err, rq.ErrClosed) {
		t.Errorf("PostList after Close: %d, %v", n, err)
	}
	if !bytes.Equal(m.Ring, ring) || *m.DBR != dbr || s.Head() != 1 || s.Counter() != 1 {
		t.Error("a post after Close wrote the SRQ")
	}
}
