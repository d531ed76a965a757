package cq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// cqe is a CQE as the device writes it (the test plays the device).
type cqe struct {
	op, sop, synd, vendor uint8
	qpn, srqnUidx, imm    uint32
	ctr                   uint16
	byteCnt, flagsRQPN    uint32
	scatter               uint8
}

// put writes c at consumer index n with the owner bit n's pass wants.
func put(m *qmem.Memory, n uint32, c cqe) {
	ncqe := uint32(len(m.CQ) / m.CQESize)
	off := int(n&(ncqe-1))*m.CQESize + m.CQESize - 64
	b := m.CQ[off : off+64]
	clear(b)
	be := binary.BigEndian
	be.PutUint32(b[24:], c.flagsRQPN)
	be.PutUint32(b[32:], c.srqnUidx)
	be.PutUint32(b[36:], c.imm)
	be.PutUint32(b[44:], c.byteCnt)
	b[54], b[55] = c.vendor, c.synd
	be.PutUint32(b[56:], uint32(c.sop)<<24|c.qpn)
	be.PutUint16(b[60:], c.ctr)
	owner := uint8(0)
	if n&ncqe != 0 {
		owner = 1
	}
	b[63] = c.op<<4 | c.scatter | owner
}

func newMem(t testing.TB, wqebbs, cqes int) *qmem.Memory {
	t.Helper()
	m, err := qmem.Plain(wqebbs, cqes, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	InitBuffer(m)
	return m
}

// fakeSQ is a send queue's bookkeeping.
type fakeSQ struct {
	wrid []uint64
	head []uint32
	data []uint32
	tail uint32
	ring []byte
}

func newFakeSQ(n int) *fakeSQ {
	s := &fakeSQ{wrid: make([]uint64, n), head: make([]uint32, n), data: make([]uint32, n), ring: make([]byte, n*64)}
	for i := range s.wrid {
		s.wrid[i], s.head[i] = uint64(1000+i), uint32(i)
	}
	return s
}
func (s *fakeSQ) Slots() uint32                          { return uint32(len(s.wrid)) }
func (s *fakeSQ) Slot(i uint32) (uint64, uint32, uint32) { return s.wrid[i], s.head[i], s.data[i] }
func (s *fakeSQ) Retire(t uint32)                        { s.tail = t }
func (s *fakeSQ) Ring() []byte                           { return s.ring }

type fakeRQ struct {
	wrid []uint64
	tail uint32
	wqes []byte
}

func (r *fakeRQ) Slots() uint32                   { return uint32(len(r.wrid)) }
func (r *fakeRQ) Consume(i uint32) (uint64, bool) { r.tail++; return r.wrid[i], true }
func (r *fakeRQ) WQE(i uint32) ([]byte, bool)     { return r.wqes[i*32 : i*32+32], false }

func newCQ(t testing.TB, m *qmem.Memory, v int) *CQ {
	t.Helper()
	c, err := New(Config{Mem: m, CQN: 7, CQEVersion: v})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPollRequesterAndWrap(t *testing.T) {
	m := newMem(t, 8, 4)
	c := newCQ(t, m, 0)
	s := newFakeSQ(8)
	if err := c.AddQP(&QP{QPN: 0x123, SQ: s}); err != nil {
		t.Fatal(err)
	}
	wc := make([]WC, 4)
	// Three passes over a 4-entry CQ: the owner bit flips each pass.
	for n := uint32(0); n < 12; n++ {
		put(m, n, cqe{op: opReq, sop: uint8(mlx.MLX5_OPCODE_RDMA_WRITE_IMM), qpn: 0x123, ctr: uint16(n)})
		got, err := c.Poll(wc)
		if err != nil || got != 1 {
			t.Fatalf("CQE %d: %d, %v", n, got, err)
		}
		w := wc[0]
		if w.WRID != uint64(1000+n%8) || w.Opcode != mlx.IBV_WC_RDMA_WRITE || w.Flags != mlx.IBV_WC_WITH_IMM || w.QPNum != 0x123 || w.Status != Success {
			t.Fatalf("CQE %d: %+v", n, w)
		}
		if s.tail != n%8+1 {
			t.Fatalf("CQE %d: sq tail %d", n, s.tail)
		}
		if ci := binary.BigEndian.Uint32(m.CQDBR); ci != n+1 {
			t.Fatalf("CQE %d: SET_CI %d", n, ci)
		}
		// The same entry, not rewritten, is the device's on the next pass.
		if got, err := c.Poll(wc); got != 0 || err != nil {
			t.Fatalf("after CQE %d: a stale entry polled: %d, %v", n, got, err)
		}
	}
}

func TestPollResponderAndErrors(t *testing.T) {
	m := newMem(t, 8, 8)
	c := newCQ(t, m, 0)
	rq := &fakeRQ{wrid: []uint64{1, 2, 3, 4}, wqes: make([]byte, 4*32)}
	s := newFakeSQ(8)
	if err := c.AddQP(&QP{QPN: 5, RQ: rq, SQ: s}); err != nil {
		t.Fatal(err)
	}
	put(m, 0, cqe{op: opRespSImm, qpn: 5, imm: 0x11223344, byteCnt: 100, flagsRQPN: 1<<28 | 3<<24 | 0x42, ctr: 1})
	put(m, 1, cqe{op: opReqErr, qpn: 5, synd: uint8(mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR), vendor: 0x79, ctr: 3})
	put(m, 2, cqe{op: opRespErr, qpn: 5, synd: 0x99, vendor: 0x12, ctr: 2})
	wc := make([]WC, 8)
	n, err := c.Poll(wc)
	if n != 3 || err != nil {
		t.Fatalf("%d, %v", n, err)
	}
	if w := wc[0]; w.WRID != 2 || w.Opcode != mlx.IBV_WC_RECV || w.Imm != 0x11223344 || w.ByteLen != 100 ||
		w.Flags != mlx.IBV_WC_WITH_IMM|mlx.IBV_WC_GRH || w.SL != 3 || w.SrcQP != 0x42 || w.PkeyIndex != 0x3344 {
		t.Errorf("recv: %+v", w)
	}
	if w := wc[1]; w.WRID != 1003 || w.Status != WRFlushErr || w.VendorErr != 0x79 || s.tail != 4 {
		t.Errorf("flush: %+v, tail %d", w, s.tail)
	}
	if w := wc[2]; w.WRID != 3 || w.Status != GeneralErr || !errors.Is(w.Status.Err(), syscall.EIO) {
		t.Errorf("unknown syndrome: %+v", w)
	}
	if !errors.Is(WRFlushErr.Err(), syscall.ECANCELED) || WRFlushErr.String() != "IBV_WC_WR_FLUSH_ERR" || Success.Err() != nil {
		t.Error("status classification")
	}
	if rq.tail != 2 {
		t.Errorf("rq tail %d", rq.tail)
	}
}

func TestUnknownQP(t *testing.T) {
	m := newMem(t, 8, 8)
	c := newCQ(t, m, 1)
	s := newFakeSQ(8)
	if err := c.AddQP(&QP{UIdx: 3, SQ: s}); err != nil {
		t.Fatal(err)
	}
	put(m, 0, cqe{op: opReq, sop: uint8(mlx.MLX5_OPCODE_SEND), srqnUidx: 3})
	put(m, 1, cqe{op: opReq, sop: uint8(mlx.MLX5_OPCODE_SEND), srqnUidx: 4})
	put(m, 2, cqe{op: opReq, sop: uint8(mlx.MLX5_OPCODE_SEND), srqnUidx: 3, ctr: 1})
	wc := make([]WC, 8)
	n, err := c.Poll(wc)
	var ue *UnknownError
	if n != 1 || !errors.As(err, &ue) || ue.What != "user index" || ue.Value != 4 || ue.Index != 1 {
		t.Fatalf("%d, %v", n, err)
	}
	// The bad CQE was consumed and the doorbell record written.
	if c.ConsIndex() != 2 || binary.BigEndian.Uint32(m.CQDBR) != 2 {
		t.Fatalf("cons index %d", c.ConsIndex())
	}
	if n, err := c.Poll(wc); n != 1 || err != nil || wc[0].WRID != 1001 {
		t.Fatalf("after: %d, %v, %+v", n, err, wc[0])
	}
}

func TestArm(t *testing.T) {
	m := newMem(t, 8, 8)
	uar := make([]byte, 64)
	c, err := New(Config{Mem: m, CQN: 0x77, UAR: uar, ConsIndex: 0x1000005, ArmSN: 6})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Arm(true); err != nil {
		t.Fatal(err)
	}
	// sn = 6 & 3 = 2, REQ_NOT_SOL, ci & 0xffffff = 5.
	want := uint32(2<<28 | mlx.MLX5_CQ_DB_REQ_NOT_SOL | 5)
	if got := binary.BigEndian.Uint32(m.CQDBR[4:]); got != want {
		t.Errorf("arm record %#x, want %#x", got, want)
	}
	if hi, lo := binary.BigEndian.Uint32(uar[0x20:]), binary.BigEndian.Uint32(uar[0x24:]); hi != want || lo != 0x77 {
		t.Errorf("doorbell %#x %#x", hi, lo)
	}
	c.Event()
	if err := c.Arm(false); err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint32(m.CQDBR[4:]); got != 3<<28|5 {
		t.Errorf("next arm %#x", got)
	}
}

func TestSigErrAndMkeyCheck(t *testing.T) {
	m := newMem(t, 8, 8)
	c := newCQ(t, m, 0)
	mk := &Mkey{Wire: SigT10DIF, Mem: SigCRC32}
	if err := c.AddMkey(0x1a2, mk); err != nil {
		t.Fatal(err)
	}
	b := m.CQ[0:64]
	binary.BigEndian.PutUint32(b[16:], 0xaaaa1111) // expected_trans_sig
	binary.BigEndian.PutUint32(b[20:], 0xbbbb2222)
	binary.BigEndian.PutUint16(b[32:], SigSyndromeGuard|SigSyndromeAppTag)
	b[35] = 0 // wire
	binary.BigEndian.PutUint32(b[36:], 0x1a233)
	b[63] = opSigErr << 4
	wc := make([]WC, 2)
	if n, err := c.Poll(wc); n != 0 || err != nil {
		t.Fatalf("a signature error is not a completion: %d, %v", n, err)
	}
	if !mk.ErrExists || mk.ErrCount != 1 {
		t.Fatalf("%+v", mk)
	}
	r, err := mk.Check()
	if err != nil || r.Type != mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG || r.Expected != 0x1111 || r.Actual != 0x2222 || mk.ErrExists {
		t.Fatalf("apptag before guard: %+v %v", r, err)
	}
	mk.ErrExists, mk.ErrInfo.Syndrome = true, SigSyndromeGuard
	if r, _ := mk.Check(); r.Expected != 0xaaaa || r.Actual != 0xbbbb {
		t.Errorf("T10-DIF guard is 16 bits: %+v", r)
	}
	mk.ErrExists, mk.ErrInfo.Domain = true, 1
	if r, _ := mk.Check(); r.Expected != 0xaaaa1111 {
		t.Errorf("CRC32 guard is 32 bits: %+v", r)
	}
	mk.ErrExists, mk.ErrInfo.Domain = true, 2
	if _, err := mk.Check(); err != syscall.EINVAL || !mk.ErrExists {
		t.Errorf("a bad domain fails and keeps the error: %v", err)
	}
	if r, err := (&Mkey{}).Check(); err != nil || r.Type != mlx.MLX5DV_MKEY_NO_ERR {
		t.Errorf("no error: %+v %v", r, err)
	}
}

func TestLazy(t *testing.T) {
	m := newMem(t, 8, 8)
	c := newCQ(t, m, 0)
	s := newFakeSQ(8)
	if err := c.AddQP(&QP{QPN: 9, SQ: s}); err != nil {
		t.Fatal(err)
	}
	if err := c.StartPoll(); err != ErrEmpty {
		t.Fatalf("empty: %v", err)
	}
	put(m, 0, cqe{op: opReq, sop: uint8(mlx.MLX5_OPCODE_ATOMIC_FA), qpn: 9, ctr: 2, byteCnt: 64})
	put(m, 1, cqe{op: opReqErr, qpn: 9, synd: 0x15, vendor: 0x81, ctr: 3})
	copy(m.CQDBR, []byte{9, 9, 9, 9})
	if err := c.StartPoll(); err != nil || c.WRID() != 1002 || c.ReadOpcode() != mlx.IBV_WC_FETCH_ADD || c.ReadByteLen() != 64 {
		t.Fatalf("start: %v %d %v %d", err, c.WRID(), c.ReadOpcode(), c.ReadByteLen())
	}
	if err := c.NextPoll(); err != nil || c.Status() != RetryExcErr || c.ReadVendorErr() != 0x81 || c.ReadOpcode() != 0 {
		t.Fatalf("next: %v %v", err, c.Status())
	}
	if binary.BigEndian.Uint32(m.CQDBR) != 0x09090909 {
		t.Fatal("the doorbell record is written by EndPoll only")
	}
	if err := c.NextPoll(); err != ErrEmpty {
		t.Fatal(err)
	}
	c.EndPoll()
	if binary.BigEndian.Uint32(m.CQDBR) != 2 {
		t.Fatal("EndPoll: SET_CI")
	}
}

func TestNewRefuses(t *testing.T) {
	m := newMem(t, 8, 8)
	for _, cfg := range []Config{{}, {Mem: &qmem.Memory{CQ: make([]byte, 192), CQESize: 64, CQDBR: make([]byte, 8)}},
		{Mem: &qmem.Memory{CQ: make([]byte, 256), CQESize: 32, CQDBR: make([]byte, 8)}},
		{Mem: &qmem.Memory{CQ: make([]byte, 256), CQESize: 64}}, {Mem: m, CQEVersion: 2}, {Mem: m, UAR: make([]byte, 8)}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	closed := newMem(t, 8, 8)
	closed.Close()
	if _, err := New(Config{Mem: closed}); !errors.Is(err, qmem.ErrClosed) {
		t.Errorf("closed memory: %v", err)
	}
}

func TestPollDoesNotAllocate(t *testing.T) {
	m := newMem(t, 8, 16)
	c := newCQ(t, m, 0)
	s := newFakeSQ(8)
	rq := &fakeRQ{wrid: make([]uint64, 8), wqes: make([]byte, 8*32)}
	if err := c.AddQP(&QP{QPN: 1, SQ: s, RQ: rq}); err != nil {
		t.Fatal(err)
	}
	wc := make([]WC, 16)
	n := uint32(0)
	allocs := testing.AllocsPerRun(200, func() {
		for i := 0; i < 16; i++ {
			op := opReq
			if i%2 == 1 {
				op = opRespSend
			}
			put(m, n, cqe{op: op, sop: uint8(mlx.MLX5_OPCODE_SEND), qpn: 1, ctr: uint16(n)})
			n++
		}
		if got, err := c.Poll(wc); got != 16 || err != nil {
			t.Fatalf("%d %v", got, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Poll", allocs)
	}
}

// BenchmarkPoll16 polls batches of 16 requester completions, the device's
// CQEs rewritten (owner bit) before each batch.
func BenchmarkPoll16(b *testing.B) {
	m := newMem(b, 64, 256)
	c := newCQ(b, m, 0)
	s := newFakeSQ(64)
	if err := c.AddQP(&QP{QPN: 1, SQ: s}); err != nil {
		b.Fatal(err)
	}
	wc := make([]WC, 16)
	n := uint32(0)
	b.ReportAllocs()
	for b.Loop() {
		for i := 0; i < 16; i++ {
			put(m, n, cqe{op: opReq, sop: uint8(mlx.MLX5_OPCODE_SEND), qpn: 1, ctr: uint16(n)})
			n++
		}
		if got, err := c.Poll(wc); got != 16 || err != nil {
			b.Fatalf("%d %v", got, err)
		}
	}
}

type testMem struct {
	base uint64
	b    []byte
}

func (m *testMem) Bytes(addr uint64, n uint32) []byte {
	if addr < m.base || addr-m.base+uint64(n) > uint64(len(m.b)) {
		return nil
	}
	return m.b[addr-m.base : addr-m.base+uint64(n)]
}

// TestInlineScatter: responder data from a scatter-32 CQE lands in the
// receive WQE's SGEs, skipping the dump-fill lkey's; too little room is
// LOC_LEN_ERR; an address outside the registered memory is not written
// and fails with LOC_PROT_ERR.
func TestInlineScatter(t *testing.T) {
	m := newMem(t, 8, 8)
	mem := &testMem{base: 0x10000, b: make([]byte, 64)}
	c, err := New(Config{Mem: m, DumpFillLKey: 0xdf, Scatter: mem})
	if err != nil {
		t.Fatal(err)
	}
	rq := &fakeRQ{wrid: []uint64{10, 11, 12, 13}, wqes: make([]byte, 4*32)}
	sge := func(slot, i int, n, lkey uint32, addr uint64) {
		b := rq.wqes[slot*32+i*16:]
		binary.BigEndian.PutUint32(b[0:], n)
		binary.BigEndian.PutUint32(b[4:], lkey)
		binary.BigEndian.PutUint64(b[8:], addr)
	}
	sge(0, 0, 4, 0xdf, 0x99999) // dump-fill: skipped, its 4 bytes counted
	sge(0, 1, 8, 1, 0x10000)
	sge(1, 0, 2, 1, 0x10010) // too small for 6 bytes
	sge(2, 0, 8, 1, 0x20000) // outside the memory
	if err := c.AddQP(&QP{QPN: 3, RQ: rq}); err != nil {
		t.Fatal(err)
	}
	for i := uint32(0); i < 3; i++ {
		put(m, i, cqe{op: opRespSend, qpn: 3, ctr: uint16(i), byteCnt: 6 + 4*(1-min(i, 1)), scatter: uint8(mlx.MLX5_INLINE_SCATTER_32)})
		copy(m.CQ[i*64:], []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	}
	wc := make([]WC, 4)
	if n, err := c.Poll(wc); n != 3 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	if wc[0].Status != Success || string(mem.b[:6]) != "\x05\x06\x07\x08\x09\x0a" {
		t.Errorf("scatter: %v % x", wc[0].Status, mem.b[:8])
	}
	if wc[1].Status != LocLenErr || wc[1].Opcode != 0 || wc[1].WRID != 11 || mem.b[16] != 1 || mem.b[17] != 2 {
		t.Errorf("too little room: %+v % x", wc[1], mem.b[16:18])
	}
	if wc[2].Status != LocProtErr {
		t.Errorf("outside the memory: %+v", wc[2])
	}
}

// TestRemoveQP: a removed QP is no longer found, and can be registered
// again (a QPN reused after destroy).
func TestRemoveQP(t *testing.T) {
	mem, err := qmem.New(qmem.Options{WQEBBs: 8, CQEs: 8, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	c, err := New(Config{Mem: mem, CQN: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.RemoveQP(5); ok || err != nil {
		t.Fatalf("RemoveQP of an unregistered QP: %v %v", ok, err)
	}
	if err := c.AddQP(&QP{QPN: 5}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddQP(&QP{QPN: 5}); err == nil {
		t.Fatal("a QPN registered twice was accepted")
	}
	if ok1, _ := c.RemoveQP(5); !ok1 {
		t.Fatal("RemoveQP did not remove")
	}
	if ok2, _ := c.RemoveQP(5); ok2 {
		t.Fatal("RemoveQP did not remove exactly once")
	}
	if err := c.AddQP(&QP{QPN: 5}); err != nil {
		t.Fatalf("re-registering after RemoveQP: %v", err)
	}
}

// TestClose: after Close the poller neither reads the CQ nor arms it.
func TestClose(t *testing.T) {
	mem, err := qmem.New(qmem.Options{WQEBBs: 8, CQEs: 8, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	InitBuffer(mem)
	c, err := New(Config{Mem: mem, CQN: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A CQE of an unknown QP: polling it would be an error other than
	// ErrClosed.
	mem.CQ[63] = 0
	before := append(append([]byte{}, mem.CQ...), mem.CQDBR...)
	c.Close()
	c.Close()
	wc := make([]WC, 1)
	if n, err := c.Poll(wc); n != 0 || !errors.Is(err, ErrClosed) {
		t.Errorf("Poll after Close: %d, %v", n, err)
	}
	if err := c.StartPoll(); !errors.Is(err, ErrClosed) {
		t.Errorf("StartPoll after Close: %v", err)
	}
	if err := c.NextPoll(); !errors.Is(err, ErrClosed) {
		t.Errorf("NextPoll after Close: %v", err)
	}
	if err := c.Arm(false); !errors.Is(err, ErrClosed) {
		t.Errorf("Arm after Close: %v", err)
	}
	if !bytes.Equal(append(append([]byte{}, mem.CQ...), mem.CQDBR...), before) || c.ConsIndex() != 0 {
		t.Error("the CQ or its doorbell record changed after Close")
	}
}
