package sq_test

import (
	"bytes"
	"encoding/binary"
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

const qpn = 0x1234

// newSQConf makes an RC writer with every builder on a plain queue of n
// WQEBBs (the tests' common QP: max_inline_data 316, 8 SGEs, memcpy up
// to 2 GiB, mkey tags, a 256-byte BlueFlame register), its config
// changed by edit first; it returns sq.New's error.
func newSQConf(t testing.TB, n int, edit func(*sq.Config)) (*sq.SQ, *qmem.Memory, error) {
	t.Helper()
	mem, err := qmem.Plain(n, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	c := sq.Config{
		Mem: mem, QPN: qpn,
		QP: sq.QP{Type: mlx.QPRC, SendOps: ruletest.RCSendOps, MlxSendOps: ruletest.RCMlxSendOps, MaxInlineData: 316, MaxSendSGE: 8,
			MaxMemcpy: 1 << 31, MkeyTagSupported: true},
		BF: sq.BlueFlame{UUARN: 1, Size: 256},
	}
	edit(&c)
	q, err := sq.New(c)
	return q, mem, err
}

// mustSQConf is newSQConf failing the test on sq.New's error.
func mustSQConf(t testing.TB, n int, edit func(*sq.Config)) (*sq.SQ, *qmem.Memory) {
	t.Helper()
	q, mem, err := newSQConf(t, n, edit)
	if err != nil {
		t.Fatal(err)
	}
	return q, mem
}

// newSQ makes an RC writer with every builder on a plain queue of n
// WQEBBs; maxPost 0 leaves the work-request budget unchecked, so that
// only the ring limits it.
func newSQ(t testing.TB, n, maxPost int) (*sq.SQ, *qmem.Memory) {
	t.Helper()
	return mustSQConf(t, n, func(c *sq.Config) { c.QP.MaxPost = maxPost })
}

// TestRingFull fills the ring with work requests larger than one WQEBB
// while the work-request budget would allow more: the builder that does
// not fit fails with sq_room, writes nothing, and the batch posts nothing.
func TestRingFull(t *testing.T) {
	q, mem := newSQ(t, 8, 0)
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	// Local invalidate: 2 WQEBBs each, so 4 fill the ring.
	for i := 0; i < 4; i++ {
		if err := q.LocalInv(uint32(i)); err != nil {
			t.Fatalf("local inv %d: %v", i, err)
		}
	}
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.LocalInv(9) })
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, q.Send) // latched
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.Complete() })
	if q.CurPost() != 0 || q.Last.Rung || binary.BigEndian.Uint32(mem.DBR[4:]) != 0 {
		t.Fatalf("a failed batch posted: producer index %d, doorbell %v", q.CurPost(), q.Last)
	}

	// Posted, the ring stays full until completions free it.
	for i := 0; i < 2; i++ {
		q.Start()
		q.LocalInv(1)
		q.LocalInv(2)
		if err := q.Complete(); err != nil {
			t.Fatal(err)
		}
	}
	q.Start()
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.LocalInv(3) })
	q.Abort()
	if err := q.Completed(1); err != nil {
		t.Fatal(err)
	}
	q.Start()
	if err := q.LocalInv(3); err != nil {
		t.Fatalf("after a completion: %v", err)
	}
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.LocalInv(4) })
	q.Abort()
	if err := q.Completed(4); err == nil {
		t.Fatal("more completions than outstanding work requests were accepted")
	}
}

// TestWorkRequestBudget: with max_post, the budget is the limit.
func TestWorkRequestBudget(t *testing.T) {
	q, mem := newSQ(t, 64, 3)
	q.Start()
	for i := 0; i < 3; i++ {
		if err := q.Send(); err != nil {
			t.Fatal(err)
		}
		if err := q.SetSGE(1, 2, 3); err != nil {
			t.Fatal(err)
		}
	}
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.Send() })
	q.Abort()
}

// TestBindMW checks ibv_wr_bind_mw, which no vector covers, against the
// layout libmlx5 writes (rdma-core providers/mlx5/qp.c, set_umr_mkey_seg
// and friends), built here byte by byte.
func TestBindMW(t *testing.T) {
	q, mem := newSQ(t, 8, 0)
	for i := range mem.SQ {
		mem.SQ[i] = 0xee
	}
	q.SetWRID(7)
	q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	q.Start()
	mw := &sq.MW{RKey: 0xaabbcc01}
	info := &sq.MWBindInfo{LKey: 0x5000, Addr: 0x10000, Length: 0x2000, AccessFlags: mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_WRITE}
	if err := q.BindMW(mw, 0xaabbcc02, info); err != nil {
		t.Fatal(err)
	}
	// Unbind: a zero length.
	if err := q.BindMW(mw, 0xaabbcc03, &sq.MWBindInfo{}); err != nil {
		t.Fatal(err)
	}
	if err := q.Complete(); err != nil {
		t.Fatal(err)
	}
	be32 := binary.BigEndian.PutUint32
	be64 := binary.BigEndian.PutUint64
	want := bytes.Repeat([]byte{0xee}, 5*64)
	// WQE 0, 3 WQEBBs: ctrl, UMR ctrl, mkey context, KLM block.
	w := want[0:]
	be32(w[0:], 0<<8|0x25)
	be32(w[4:], qpn<<8|12)
	be32(w[8:], 0x08) // CE
	be32(w[12:], 0xaabbcc01)
	copy(w[16:64], make([]byte, 48))
	w[16] = 0xb0                          // INLINE | TRANSLATION_OFFSET | CHECK_FREE
	binary.BigEndian.PutUint16(w[20:], 4) // klm_octowords
	be64(w[24:], 0x203c6041)
	m := w[64:]
	m[0] = 0                 // free
	m[2] = 0x20 | 0x10       // remote write, remote read
	be32(m[4:], qpn<<8|0x02) // qpn, new rkey's tag
	be64(m[16:], 0x10000)
	be64(m[24:], 0x2000)
	k := w[128:192]
	copy(k, make([]byte, 64))
	be32(k[0:], 0x2000)
	be32(k[4:], 0x5000)
	be64(k[8:], 0x10000)
	// WQE 1, 2 WQEBBs: an unbind is a free.
	w = want[192:]
	be32(w[0:], 3<<8|0x25)
	be32(w[4:], qpn<<8|8)
	be32(w[8:], 0x20|0x08) // the small fence the bind left, CE
	be32(w[12:], 0xaabbcc01)
	copy(w[16:64], make([]byte, 48))
	w[16] = 0x98 // INLINE | TRANSLATION_OFFSET | CHECK_QPN
	be64(w[24:], 0x20006000)
	w[64] = 0x40
	be32(w[68:], 0xffffff03)
	if !bytes.Equal(mem.SQ[:5*64], want) {
		t.Fatalf("bind MW WQEs:\n got %x\nwant %x", mem.SQ[:5*64], want)
	}
	if q.CurPost() != 5 || q.FmCache() != 0x20 {
		t.Fatalf("producer index %d, fence cache %#x", q.CurPost(), q.FmCache())
	}
	if s := q.Slots[0]; s.WRID != 7 || s.WRData != uint16(mlx.IBV_WC_BIND_MW) || s.Opcode != uint8(mlx.MLX5_OPCODE_UMR) || s.WQEHead != 0 {
		t.Fatalf("bookkeeping %+v", s)
	}
	if s := q.Slots[3]; s.WQEHead != 1 {
		t.Fatalf("bookkeeping %+v", s)
	}

	q.Start()
	rejects(t, mem, "ibv_wr.bind_mw.length", syscall.EOPNOTSUPP, func() error { return q.BindMW(mw, 1, &sq.MWBindInfo{Length: 1<<31 + 1}) })
	q.Abort()
}

// TestRawWQESize: a raw WQE must hold the ds its control segment gives.
func TestRawWQESize(t *testing.T) {
	q, mem := newSQ(t, 8, 0)
	before := snapshot(mem)
	for _, wqe := range [][]byte{
		nil,
		{0, 0, 0, 8, 0, 0x12, 0x34, 0}, // short
		{0, 0, 0, 8, 0, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0},         // ds 0
		{0, 0, 0, 8, 0, 0x12, 0x34, 2, 0, 0, 0, 0, 0, 0, 0, 0},         // ds 2 in 16 bytes
		append(make([]byte, 7), 0x3f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1), // ds 63
	} {
		q.Start()
		rejects(t, mem, "wr_post.raw_wqe.size", syscall.EINVAL, func() error { return q.RawWQE(wqe) })
		rejects(t, mem, "wr_post.raw_wqe.size", syscall.EINVAL, func() error { return q.Complete() })
	}
	if what := before.changed(mem); what != "" {
		t.Fatalf("rejected raw WQEs changed %s", what)
	}
	q.Start()
	if err := q.RawWQE([]byte{0xff, 0xff, 0xff, 8, 0, 0x12, 0x34, 1, 0, 0, 0, 8, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if err := q.Complete(); err != nil {
		t.Fatal(err)
	}
	if got := mem.SQ[:4]; !bytes.Equal(got, []byte{0xff, 0, 0, 8}) {
		t.Fatalf("the index was not replaced: %x", got)
	}
}

// TestNew rejects queues the writer cannot use.
func TestNew(t *testing.T) {
	mem, err := qmem.Plain(8, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	rc := sq.QP{Type: mlx.QPRC}
	for name, c := range map[string]sq.Config{
		"no memory":     {QP: rc},
		"UD":            {Mem: mem, QP: sq.QP{Type: mlx.QPUD}},
		"over the ring": {Mem: mem, QP: rc, Head: 9, Tail: 0},
		"big BlueFlame": {Mem: mem, QP: rc, BF: sq.BlueFlame{UUARN: 1, Size: 512}},
		"odd BlueFlame": {Mem: mem, QP: rc, BF: sq.BlueFlame{UUARN: 1, Size: 100}},
		"RC streams":    {Mem: mem, QP: sq.QP{Type: mlx.QPRC, Streams: true}},
		"bad ring":      {Mem: &qmem.Memory{SQ: make([]byte, 3*64), DBR: make([]byte, 8), BF: make([]byte, 64)}, QP: rc},
	} {
		if _, err := sq.New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestBurstMatchesCalls: RDMAWriteBurst writes what the calls write, with
// any flags, zero lengths, a cached fence and a ring wrap.
func TestBurstMatchesCalls(t *testing.T) {
	reqs := make([]sq.RDMAWriteReq, 11)
	for i := range reqs {
		reqs[i] = sq.RDMAWriteReq{WRID: uint64(100 + i), Raddr: 0x1000 * uint64(i), Addr: 0x7000 + uint64(i), RKey: 0x10 + uint32(i), LKey: 0x20, Length: uint32(i * 3 % 4)}
	}
	for _, flags := range []mlx.SendFlags{0, mlx.IBV_SEND_SIGNALED, mlx.IBV_SEND_FENCE | mlx.IBV_SEND_SOLICITED} {
		a, amem := newSQ(t, 16, 0)
		b, bmem := newSQ(t, 16, 0)
		for _, q := range []*sq.SQ{a, b} {
			// Leave a small fence for the next WQE, and move the
			// producer index near the end of the ring.
			q.SetWRFlags(mlx.IBV_SEND_INLINE)
			q.Start()
			q.LocalInv(1)
			for i := 0; i < 5; i++ {
				q.RawWQE([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
			}
			q.LocalInv(2)
			if err := q.Complete(); err != nil {
				t.Fatal(err)
			}
			q.Completed(q.Outstanding())
			q.SetWRFlags(flags)
			q.Start()
		}
		if err := a.RDMAWriteBurst(reqs); err != nil {
			t.Fatal(err)
		}
		for _, r := range reqs {
			b.SetWRID(r.WRID)
			b.RDMAWrite(r.RKey, r.Raddr)
			b.SetSGE(r.LKey, r.Addr, r.Length)
		}
		for _, q := range []*sq.SQ{a, b} {
			if err := q.Complete(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(amem.SQ, bmem.SQ) || !bytes.Equal(amem.DBR, bmem.DBR) || !bytes.Equal(amem.BF, bmem.BF) {
			t.Fatalf("flags %v: the burst and the calls wrote different queues", flags)
		}
		for i := range a.Slots {
			if a.Slots[i] != b.Slots[i] {
				t.Fatalf("flags %v: bookkeeping of slot %d: %+v, %+v", flags, i, a.Slots[i], b.Slots[i])
			}
		}
		if a.CurPost() != b.CurPost() || a.FmCache() != b.FmCache() || a.Last != b.Last {
			t.Fatalf("flags %v: state differs", flags)
		}
	}
}

// TestBurstFallsBack: when the burst's checks fail, the calls one by one
// report the rule.
func TestBurstFallsBack(t *testing.T) {
	q, mem := newSQ(t, 8, 0)
	q.Start()
	q.Send() // no data setter yet
	rejects(t, mem, "ibv_wr.data_required", syscall.EINVAL, func() error { return q.RDMAWriteBurst(make([]sq.RDMAWriteReq, 2)) })
	q.Abort()
	q.Start()
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.RDMAWriteBurst(make([]sq.RDMAWriteReq, 9)) })
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.Complete() })
	rejects(t, mem, "ibv_wr.in_batch", syscall.EINVAL, func() error { return q.RDMAWriteBurst(make([]sq.RDMAWriteReq, 1)) })
}

// TestNoAllocations: posting allocates nothing.
func TestNoAllocations(t *testing.T) {
	q, _ := newSQ(t, 64, 0)
	mk := sq.NewMkey(0x12300, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	dif := mlx.SigT10DIF{BG: 0xffff, AppTag: 1, RefTag: 2}
	wire := mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	wire.SetSigDif(&dif)
	sig := mlx.SigBlockAttr{Wire: &wire, CheckMask: 0xff}
	sges := []mlx.SGE{{Addr: 1, Length: 512, LKey: 2}, {Addr: 3, Length: 512, LKey: 4}}
	reqs := make([]sq.RDMAWriteReq, 4)
	conf := &mlx.MkeyConfAttr{}
	data := []byte("inline payload")
	tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, &sig)
	if err != nil {
		t.Fatal(err)
	}
	run := func() {
		q.SetWRFlags(mlx.IBV_SEND_INLINE)
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		q.RDMAWrite(1, 2)
		q.SetSGE(3, 4, 5)
		q.Send()
		q.SetInlineData(data)
		q.RDMAWriteBurst(reqs)
		q.MkeyConfigure(mk, 3, conf)
		q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
		q.SetMkeyLayoutList(sges)
		q.SetMkeySigBlock(&sig)
		q.ConfigureMkey(mk, tmpl, sges)
		if err := q.Complete(); err != nil {
			t.Fatal(err)
		}
		q.Completed(q.Outstanding())
		if err := q.PostRDMAWriteSGE(1, 2, 3, 4, 5); err != nil {
			t.Fatal(err)
		}
		q.Completed(q.Outstanding())
		q.SetWRFlags(mlx.IBV_SEND_INLINE)
		if err := q.PostConfigureMkey(mk, tmpl, sges); err != nil {
			t.Fatal(err)
		}
		q.Completed(q.Outstanding())
	}
	run()
	if n := testing.AllocsPerRun(1000, run); n != 0 {
		t.Errorf("%v allocations per batch", n)
	}
}

// TestOutsideBatch: Complete and Abort outside a batch fail (or do
// nothing) without touching what was posted.
func TestOutsideBatch(t *testing.T) {
	q, mem := newSQ(t, 8, 0)
	q.Start()
	q.Send()
	q.SetSGE(1, 2, 3)
	if err := q.Complete(); err != nil {
		t.Fatal(err)
	}
	dbr := bytes.Clone(mem.DBR)
	rejects(t, mem, "ibv_wr.in_batch", syscall.EINVAL, func() error { return q.Complete() })
	q.Abort()
	if q.CurPost() != 1 || q.Outstanding() != 1 || !bytes.Equal(dbr, mem.DBR) || q.Last.Rung {
		t.Fatalf("producer index %d, outstanding %d, last %+v", q.CurPost(), q.Outstanding(), q.Last)
	}
	rejects(t, mem, "ibv_wr.in_batch", syscall.EINVAL, func() error { return q.Send() })
}
