package rq_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// fill is what the tests put in memory first, so that a byte the writer
// leaves alone shows as 0xee.
const fill = 0xee

func newMem(ringBytes int) rq.Memory {
	return rq.Memory{Ring: bytes.Repeat([]byte{fill}, ringBytes), DBR: &[4]byte{fill, fill, fill, fill}}
}

func newRQ(t testing.TB, c rq.Config, wqes int) (*rq.RQ, rq.Memory) {
	t.Helper()
	c.Mem = newMem(wqes * c.Stride)
	q, err := rq.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return q, c.Mem
}

// state is everything a call may write: the ring and the doorbell record.
func state(m rq.Memory) []byte { return append(append([]byte{}, m.Ring...), m.DBR[:]...) }

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantRule checks that err is the RuleError of rule with errno.
func wantRule(t *testing.T, err error, rule string, errno syscall.Errno) *mlx.RuleError {
	t.Helper()
	var re *mlx.RuleError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a *RuleError of %s", err, rule)
	}
	if re.Rule != rule || !errors.Is(err, errno) {
		t.Fatalf("got %v (rule %s, %v), want rule %s with %v", err, re.Rule, re.Errno, rule, errno)
	}
	return re
}

// TestRQLayout checks receive WQEs byte for byte against mlx5_post_recv
// (providers/mlx5/qp.c, v44): WQE n starts at n << wqe_shift; each SGE
// with a non-zero length becomes a data segment {byte_count, lkey, addr},
// all big-endian; zero-length SGEs are skipped; when fewer segments than
// max_gs (stride / 16) were written, the next one is the end segment
// {0, MLX5_INVALID_LKEY = 0x100, 0}; the bytes after it are not touched;
// the doorbell record dbrec[MLX5_RCV_DBR] gets htobe32(head & 0xffff).
func TestRQLayout(t *testing.T) {
	c := rq.Config{Stride: 64}
	c.Mem = newMem(4 * 64)
	q, err := rq.New(c)
	if err != nil {
		t.Fatal(err)
	}
	if q.MaxGS() != 4 || q.MaxPost() != 4 {
		t.Fatalf("max_gs %d, max_post %d; want 4 and 4", q.MaxGS(), q.MaxPost())
	}
	sges := []rq.SGE{
		{Addr: 0x1122334455667788, Length: 0x40, LKey: 0xa1b2c3d4},
		{Addr: 0x9000, Length: 0, LKey: 0x77}, // skipped
		{Addr: 0x0a0b0c0d, Length: 0x1000, LKey: 0x5},
	}
	if err := q.Post(0xdead, sges); err != nil {
		t.Fatal(err)
	}
	want := unhex(t, `
		00000040 a1b2c3d4 1122334455667788
		00001000 00000005 000000000a0b0c0d
		00000000 00000100 0000000000000000
		eeeeeeee eeeeeeee eeeeeeeeeeeeeeee`)
	if got := c.Mem.Ring[:64]; !bytes.Equal(got, want) {
		t.Fatalf("WQE 0:\n got %x\nwant %x", got, want)
	}
	if !bytes.Equal(c.Mem.Ring[64:], bytes.Repeat([]byte{fill}, 3*64)) {
		t.Fatal("the other WQEs were written")
	}
	if got := c.Mem.DBR[:]; !bytes.Equal(got, []byte{0, 0, 0, 1}) {
		t.Fatalf("doorbell record %x, want 00000001", got)
	}

	// A full list: max_gs segments and no end segment, in WQE 1.
	full := []rq.SGE{{Addr: 1, Length: 1, LKey: 1}, {Addr: 2, Length: 2, LKey: 2}, {Addr: 3, Length: 3, LKey: 3}, {Addr: 4, Length: 4, LKey: 4}}
	if err := q.Post(2, full); err != nil {
		t.Fatal(err)
	}
	want = unhex(t, `
		00000001 00000001 0000000000000001
		00000002 00000002 0000000000000002
		00000003 00000003 0000000000000003
		00000004 00000004 0000000000000004`)
	if got := c.Mem.Ring[64:128]; !bytes.Equal(got, want) {
		t.Fatalf("WQE 1:\n got %x\nwant %x", got, want)
	}
	// No SGE at all: only the end segment, in WQE 2.
	if err := q.Post(3, nil); err != nil {
		t.Fatal(err)
	}
	want = unhex(t, `00000000 00000100 0000000000000000`)
	if got := c.Mem.Ring[128:144]; !bytes.Equal(got, want) || c.Mem.Ring[144] != fill {
		t.Fatalf("WQE 2: %x, want %x then untouched bytes", c.Mem.Ring[128:145], want)
	}
	if got := binary.BigEndian.Uint32(c.Mem.DBR[:]); got != 3 {
		t.Fatalf("doorbell record %d, want 3", got)
	}
	for i, id := range []uint64{0xdead, 2, 3} {
		if got, err := q.Retire(); err != nil || got != id {
			t.Fatalf("retire %d: %#x, %v; want %#x", i, got, err, id)
		}
	}
}

// TestRQSignature checks wq_sig as mlx5_post_recv writes it: the whole
// WQE zeroed, a 16-byte signature segment (mlx5_rwqe_sig) first, the data
// segments after it, max_gs one less, and byte 4 = calc_sig(WQE,
// (num_sge + 1) * 16) ^ calc_sig(&qpn, 4) ^ calc_sig(&head, 2), calc_sig
// being the inverted XOR of the bytes. Worked by hand for QPN 0x12, head 0
// and one SGE {addr 0x1000, length 0x40, lkey 0x100}: the data segment's
// bytes XOR to 0x40 ^ 0x01 ^ 0x10 = 0x51, so the WQE's calc_sig is 0xae;
// the QPN's is ^0x12 = 0xed; the index's ^0 = 0xff; 0xae ^ 0xed ^ 0xff =
// 0xbc.
func TestRQSignature(t *testing.T) {
	c := rq.Config{Stride: 32, WQSig: true, QPN: 0x12}
	c.Mem = newMem(2 * 32)
	q, err := rq.New(c)
	if err != nil {
		t.Fatal(err)
	}
	if q.MaxGS() != 1 {
		t.Fatalf("max_gs %d, want 1", q.MaxGS())
	}
	if err := q.Post(1, []rq.SGE{{Addr: 0x1000, Length: 0x40, LKey: 0x100}}); err != nil {
		t.Fatal(err)
	}
	want := unhex(t, `
		00000000 bc000000 0000000000000000
		00000040 00000100 0000000000001000`)
	if got := c.Mem.Ring[:32]; !bytes.Equal(got, want) {
		t.Fatalf("WQE 0:\n got %x\nwant %x", got, want)
	}
	// Without SGEs: the end segment after the signature; the WQE's bytes
	// XOR to 0x01 (lkey 0x100), but only the signature segment is signed
	// ((0 + 1) * 16 bytes): ^0 ^ ^0x12 ^ ^(0x01 ^ 0x00) (head 1) =
	// 0xff ^ 0xed ^ 0xfe = 0xec.
	if err := q.Post(2, nil); err != nil {
		t.Fatal(err)
	}
	want = unhex(t, `
		00000000 ec000000 0000000000000000
		00000000 00000100 0000000000000000`)
	if got := c.Mem.Ring[32:64]; !bytes.Equal(got, want) {
		t.Fatalf("WQE 1:\n got %x\nwant %x", got, want)
	}
}

// TestRQListSignature: libmlx5 signs every WQE of a list with the index
// of the list's first one (rq.head before the loop), not its own.
func TestRQListSignature(t *testing.T) {
	c := rq.Config{Stride: 32, WQSig: true, QPN: 0x12}
	c.Mem = newMem(4 * 32)
	q, _ := rq.New(c)
	if n, err := q.PostList([]rq.RecvWR{{WRID: 1}, {WRID: 2}}); n != 2 || err != nil {
		t.Fatal(n, err)
	}
	// Both: ^0 ^ ^0x12 ^ ^0 (head 0) = 0xff ^ 0xed ^ 0xff = 0xed.
	for i := 0; i < 2; i++ {
		if got := c.Mem.Ring[i*32+4]; got != 0xed {
			t.Fatalf("WQE %d: signature %#x, want 0xed", i, got)
		}
	}
}

// TestRQFull: with max_post work requests outstanding the next post fails
// with rule post_recv.rq_room (ENOMEM) and writes nothing: not the ring,
// not the doorbell record; once one is retired, posting resumes.
func TestRQFull(t *testing.T) {
	c := rq.Config{Stride: 16}
	c.Mem = newMem(4 * 16)
	q, _ := rq.New(c)
	for i := 0; i < 4; i++ {
		if err := q.Post(uint64(i), []rq.SGE{{Addr: 0x100, Length: 8, LKey: 1}}); err != nil {
			t.Fatal(i, err)
		}
	}
	before := state(c.Mem)
	err := q.Post(9, []rq.SGE{{Addr: 0x200, Length: 8, LKey: 2}})
	re := wantRule(t, err, "post_recv.rq_room", syscall.ENOMEM)
	if re.Value != 5 || re.Limit != 4 || re.Func != mlx.FnPostRecv {
		t.Errorf("%v: value %d limit %d", err, re.Value, re.Limit)
	}
	if n, err := q.PostList([]rq.RecvWR{{WRID: 9}}); n != 0 {
		t.Fatal(n, err)
	}
	if !bytes.Equal(before, state(c.Mem)) || q.Head() != 4 {
		t.Fatal("a full queue was written")
	}
	if _, err := q.Retire(); err != nil {
		t.Fatal(err)
	}
	if err := q.Post(9, nil); err != nil {
		t.Fatal(err)
	}
}

// TestRQSGECount: more SGEs than max_gs fail with post_recv.sge_count
// (EINVAL, as libmlx5); a queue that is full and given too many SGEs
// reports the room first, libmlx5's order.
func TestRQSGECount(t *testing.T) {
	c := rq.Config{Stride: 32}
	c.Mem = newMem(2 * 32)
	q, _ := rq.New(c)
	three := make([]rq.SGE, 3)
	before := state(c.Mem)
	re := wantRule(t, q.Post(1, three), "post_recv.sge_count", syscall.EINVAL)
	if re.Field != "num_sge" || re.Value != 3 || re.Limit != 2 {
		t.Errorf("%v", re)
	}
	if !strings.Contains(re.Error(), "num_sge 3 is above the limit 2 (max_gs)") {
		t.Errorf("%q", re.Error())
	}
	if !bytes.Equal(before, state(c.Mem)) {
		t.Fatal("a refused work request was written")
	}
	q.Post(1, nil)
	q.Post(2, nil)
	wantRule(t, q.Post(3, three), "post_recv.rq_room", syscall.ENOMEM)
}

// TestRQPostList: ibv_post_recv's bad_wr semantics, as libmlx5: the work
// requests before the bad one are posted and the doorbell record shows
// them; the bad one and those after it are not written; the error names
// the bad one's index.
func TestRQPostList(t *testing.T) {
	c := rq.Config{Stride: 32}
	c.Mem = newMem(8 * 32)
	q, _ := rq.New(c)
	wrs := []rq.RecvWR{
		{WRID: 10, SGEs: []rq.SGE{{Addr: 1, Length: 1, LKey: 1}}},
		{WRID: 11, SGEs: []rq.SGE{{Addr: 2, Length: 2, LKey: 2}}},
		{WRID: 12, SGEs: make([]rq.SGE, 3)}, // too many
		{WRID: 13},
	}
	n, err := q.PostList(wrs)
	re := wantRule(t, err, "post_recv.sge_count", syscall.EINVAL)
	if n != 2 || re.WR != 2 {
		t.Fatalf("posted %d, error at work request %d; want 2 and 2", n, re.WR)
	}
	if q.Head() != 2 || binary.BigEndian.Uint32(c.Mem.DBR[:]) != 2 {
		t.Fatalf("head %d, doorbell record %x", q.Head(), c.Mem.DBR[:])
	}
	if !bytes.Equal(c.Mem.Ring[64:], bytes.Repeat([]byte{fill}, 6*32)) {
		t.Fatal("the bad work request or one after it was written")
	}
	// A list that runs into the full queue: the prefix that fits.
	n, err = q.PostList(make([]rq.RecvWR, 10))
	if re := wantRule(t, err, "post_recv.rq_room", syscall.ENOMEM); n != 6 || re.WR != 6 {
		t.Fatalf("posted %d (error at %d), want 6", n, re.WR)
	}
	if n, err := q.PostList(nil); n != 0 || err != nil {
		t.Fatal("an empty list:", n, err)
	}
}

// TestRQWrap posts and retires through thousands of wraps of the ring and
// of the 16-bit doorbell counter: every wr_id comes back once, in order,
// and the doorbell record always holds head & 0xffff.
func TestRQWrap(t *testing.T) {
	c := rq.Config{Stride: 32}
	c.Mem = newMem(8 * 32)
	q, _ := rq.New(c)
	next, want := uint64(0), uint64(0)
	wrs := make([]rq.RecvWR, 8)
	for round := 0; round < 80000; round++ {
		k := round%7 + 1
		for i := range wrs[:k] {
			wrs[i] = rq.RecvWR{WRID: next + uint64(i), SGEs: []rq.SGE{{Addr: next + uint64(i), Length: uint32(round%3) * 8, LKey: 1}}}
		}
		n, err := q.PostList(wrs[:k])
		if free := int(8 - (next - want)); n != min(k, free) || (err != nil) != (k > free) {
			t.Fatalf("round %d: posted %d of %d with %d free: %v", round, n, k, free, err)
		}
		next += uint64(n)
		if got := binary.BigEndian.Uint32(c.Mem.DBR[:]); got != uint32(next)&0xffff {
			t.Fatalf("round %d: doorbell record %#x, want %#x", round, got, uint32(next)&0xffff)
		}
		for r := round%5 + 1; r > 0 && want < next; r-- {
			id, err := q.Retire()
			if err != nil || id != want {
				t.Fatalf("round %d: retired %d (%v), want %d", round, id, err, want)
			}
			want++
		}
	}
	if next < 3*0x10000 {
		t.Fatalf("only %d posted: the counter did not wrap", next)
	}
	if err := q.Completed(q.Outstanding()); err != nil || q.Outstanding() != 0 {
		t.Fatal(err)
	}
	if _, err := q.Retire(); err == nil {
		t.Fatal("retired from an empty queue")
	}
	if err := q.Completed(1); err == nil {
		t.Fatal("completed more than outstanding")
	}
}

// TestRQConfig: configurations that cannot describe a receive queue are
// refused with an error naming what is wrong.
func TestRQConfig(t *testing.T) {
	for _, tc := range []struct {
		c    rq.Config
		ring int
		want string
	}{
		{rq.Config{Stride: 24}, 96, "stride of 24"},
		{rq.Config{Stride: 16, WQSig: true}, 64, "stride of 16"},
		{rq.Config{Stride: 32}, 96, "96-byte ring"},
		{rq.Config{Stride: 32}, 0, "0-byte ring"},
		{rq.Config{Stride: 32, MaxPost: 5}, 128, "max_post 5"},
		{rq.Config{Stride: 32, Head: 9, Tail: 2}, 128, "outstanding"},
		{rq.Config{Stride: 32, WRIDs: make([]uint64, 3)}, 128, "3 wr_ids"},
	} {
		tc.c.Mem = newMem(tc.ring)
		if _, err := rq.New(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.c, err, tc.want)
		}
	}
	if _, err := rq.New(rq.Config{Stride: 32, Mem: rq.Memory{Ring: make([]byte, 64)}}); err == nil {
		t.Error("no doorbell record accepted")
	}
	// Outstanding work requests at start: their wr_ids come back.
	c := rq.Config{Stride: 16, Head: 0x10001, Tail: 0xffff, WRIDs: make([]uint64, 4)}
	c.WRIDs[3], c.WRIDs[0] = 33, 44
	q, _ := newRQ(t, c, 4)
	for _, want := range []uint64{33, 44} {
		if id, err := q.Retire(); id != want || err != nil {
			t.Fatalf("retired %d, %v; want %d", id, err, want)
		}
	}
}

// TestClose: after Close no post writes the ring or the doorbell record.
func TestClose(t *testing.T) {
	q, m := newRQ(t, rq.Config{Stride: 16}, 4)
	if err := q.Post(1, []rq.SGE{{LKey: 1, Addr: 2, Length: 3}}); err != nil {
		t.Fatal(err)
	}
	before := state(m)
	q.Close()
	q.Close()
	if err := q.Post(2, []rq.SGE{{LKey: 1, Addr: 2, Length: 3}}); !errors.Is(err, rq.ErrClosed) {
		t.Errorf("Post after Close: %v, want ErrClosed", err)
	}
	if n, err := q.PostList([]rq.RecvWR{{WRID: 3}}); n != 0 || !errors.Is(err, rq.ErrClosed) {
		t.Errorf("PostList after Close: %d, %v", n, err)
	}
	if !bytes.Equal(state(m), before) || q.Head() != 1 {
		t.Error("a post after Close wrote the queue")
	}
}
