package engine_test

import (
	"encoding/binary"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

const allOps = mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | mlx.IBV_QP_EX_WITH_SEND |
	mlx.IBV_QP_EX_WITH_SEND_WITH_IMM | mlx.IBV_QP_EX_WITH_RDMA_READ | mlx.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
	mlx.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | mlx.IBV_QP_EX_WITH_LOCAL_INV | mlx.IBV_QP_EX_WITH_BIND_MW |
	mlx.IBV_QP_EX_WITH_SEND_WITH_INV

// side is one end of a test: a device with a PD, an MR over a data
// region, a CQ, an RC QP, and the program's writers and poller on them.
type side struct {
	t    testing.TB
	d    *engine.Device
	pd   uint32
	mem  *qmem.Memory
	cq   *engine.CQ
	qp   *engine.QP
	q    *sq.SQ
	r    *rq.RQ
	c    *cq.CQ
	data dma.Buffer // 64 KiB registered with every access
	key  uint32
	wc   []cq.WC
}

type sideOpts struct {
	wqebbs, cqes, cqeSize, bf int
	rqWQEs                    int
}

var defaults = sideOpts{wqebbs: 64, cqes: 64, cqeSize: 64, bf: 256, rqWQEs: 16}

func newSide(t testing.TB, f *engine.Fabric, name string, o sideOpts) *side {
	t.Helper()
	d, err := f.NewDevice(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	s := &side{t: t, d: d, wc: make([]cq.WC, 64)}
	s.mem, err = qmem.New(qmem.Options{WQEBBs: o.wqebbs, CQEs: o.cqes * o.cqeSize / 64, BFSize: o.bf, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.mem.Close() })
	s.mem.CQESize = o.cqeSize
	cq.InitBuffer(s.mem)
	region, err := dma.Map(dma.Options{Size: 1 << 17, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { region.Close() })
	s.data, _ = region.Alloc(1<<16, 0)
	ring, _ := region.Alloc(o.rqWQEs*32, 0)
	if s.pd, err = d.AllocPD(); err != nil {
		t.Fatal(err)
	}
	acc := mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_ATOMIC | mlx.IBV_ACCESS_MW_BIND
	if s.key, err = d.RegMR(s.pd, s.data.Bytes, s.data.Addr, acc); err != nil {
		t.Fatal(err)
	}
	if s.cq, err = d.CreateCQ(s.mem); err != nil {
		t.Fatal(err)
	}
	s.qp, err = d.CreateQP(engine.QPConfig{Type: engine.RC, PD: s.pd, SendCQ: s.cq, RecvCQ: s.cq, Mem: s.mem, RQ: ring.Bytes, RQStride: 32})
	if err != nil {
		t.Fatal(err)
	}
	s.q, err = sq.New(sq.Config{Mem: s.mem, QPN: s.qp.QPN(), QP: sq.QP{Type: mlx.QPRC, SendOps: allOps,
		MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MEMCPY | mlx.MLX5DV_QP_EX_WITH_RAW_WQE | mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE |
			mlx.MLX5DV_QP_EX_WITH_MR_LIST,
		MaxSendSGE: 4, MaxInlineData: 128, MaxMemcpy: 1 << 31, CryptoSingleBlock: true}, BF: sq.BlueFlame{UUARN: 1, Size: o.bf}})
	if err != nil {
		t.Fatal(err)
	}
	s.r, err = rq.New(rq.Config{Mem: rq.Memory{Ring: ring.Bytes, DBR: (*[4]byte)(s.mem.DBR[0:4])}, Stride: 32})
	if err != nil {
		t.Fatal(err)
	}
	s.c, err = cq.New(cq.Config{Mem: s.mem, CQN: s.cq.CQN()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.c.AddQP(&cq.QP{QPN: s.qp.QPN(), RC: true, SQ: cq.SQ{Q: s.q, Mem: s.mem}, RQ: cq.RQ{Q: s.r}}); err != nil {
		t.Fatal(err)
	}
	return s
}

// connect moves both QPs to RTS, each the other's peer.
func connect(t testing.TB, a, b *side, rnrRetry uint8) {
	t.Helper()
	for _, p := range [][2]*side{{a, b}, {b, a}} {
		x, y := p[0], p[1]
		for _, st := range []mlx.QPState{mlx.IBV_QPS_INIT, mlx.IBV_QPS_RTR, mlx.IBV_QPS_RTS} {
			if err := x.qp.Modify(st, &engine.Remote{LID: y.d.LID(), QPN: y.qp.QPN(), RNRRetry: rnrRetry}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func pair(t testing.TB, o sideOpts) (*engine.Fabric, *side, *side) {
	return pairRNR(t, o, 7)
}

func pairRNR(t testing.TB, o sideOpts, rnrRetry uint8) (*engine.Fabric, *side, *side) {
	f := engine.NewFabric()
	a, b := newSide(t, f, "sim0", o), newSide(t, f, "sim1", o)
	connect(t, a, b, rnrRetry)
	return f, a, b
}

// wireImm is the number a receiver reads for the __be32 imm a sender
// passed (be32toh).
func wireImm(imm mlx.BE32) uint32 {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(imm))
	return binary.BigEndian.Uint32(b[:])
}

// post builds one work request with build and posts it.
func (s *side) post(id uint64, flags mlx.SendFlags, build func(q *sq.SQ) error) {
	s.t.Helper()
	s.q.Start()
	s.q.SetWRID(id)
	s.q.SetWRFlags(flags)
	if err := build(s.q); err != nil {
		s.t.Fatal(err)
	}
	if err := s.q.Complete(); err != nil {
		s.t.Fatal(err)
	}
}

// poll polls and returns the completions.
func (s *side) poll() []cq.WC {
	s.t.Helper()
	n, err := s.c.Poll(s.wc)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.wc[:n]
}

// addr returns the address of byte off of the side's data.
func (s *side) addr(off int) uint64 { return s.data.Addr + uint64(off) }
