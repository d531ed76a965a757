package device_test

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

type fakeQP struct {
	c      *fakeCtx
	qpn    uint32
	kind   device.QPKind
	mem    *qmem.Memory
	rqRing *dma.Region
	rqMem  rq.Memory
	send   *fakeCQ
	recv   *fakeCQ
	srq    *fakeSRQ
	sigAll bool
	state  mlx.QPState
	remote uint32
	done   uint32 // WQEBBs executed (unmasked)
	posted uint32 // the doorbell record as of the last doorbell
	access mlx.AccessFlags
	modify []mlx.QPState // the transitions asked, for the tests
	info   device.QPInfo // what Query reports: the attributes the transitions set
}

func pow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

func (p *fakePD) CreateQP(cfg device.QPConfig, send, recv device.BackendCQ, srq device.BackendSRQ) (device.BackendQP, error) {
	c := p.c
	q := &fakeQP{c: c, kind: cfg.Kind, send: send.(*fakeCQ), recv: recv.(*fakeCQ), sigAll: cfg.SigAll, state: mlx.IBV_QPS_RESET}
	q.info.Caps = device.QPCaps{MaxSendWR: cfg.MaxSendWR, MaxRecvWR: cfg.MaxRecvWR, MaxSendSGE: cfg.MaxSendSGE,
		MaxRecvSGE: cfg.MaxRecvSGE, MaxInlineData: cfg.MaxInlineData}
	if srq != nil {
		q.srq = srq.(*fakeSRQ)
	}
	wqebbs := max(pow2(cfg.MaxSendWR), 1)
	var err error
	if q.mem, err = qmem.New(qmem.Options{WQEBBs: wqebbs, Lock: dma.LockBestEffort}); err != nil {
		return nil, err
	}
	if cfg.Kind == device.RC && cfg.MaxRecvWR > 0 {
		stride := pow2(16 * max(cfg.MaxRecvSGE, 1))
		n := pow2(cfg.MaxRecvWR)
		if q.rqRing, err = dma.Map(dma.Options{Size: max(n*stride, 4096), Lock: dma.LockBestEffort}); err != nil {
			q.mem.Close()
			return nil, err
		}
		b, _ := q.rqRing.Alloc(n*stride, 64)
		q.rqMem = rq.Memory{Ring: b.Bytes, DBR: (*[4]byte)(q.mem.DBR[0:4])}
	}
	c.mu.Lock()
	q.qpn = c.id()
	c.qps[q.qpn] = q
	c.mu.Unlock()
	return q, nil
}

func (q *fakeQP) Memory() device.QPMemory {
	typ := mlx.QPRC
	if q.kind == device.DCI {
		typ = mlx.QPDCI
	}
	m := device.QPMemory{QPN: q.qpn, SQ: q.mem, SigAll: q.sigAll,
		QP: sq.QP{Type: typ, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_READ | mlx.IBV_QP_EX_WITH_SEND,
			MaxSendSGE: 1, MaxInlineData: 64, MaxPost: q.mem.WQEBBs()}}
	if q.rqRing != nil {
		m.RQ, m.RQStride = q.rqMem, 16
	}
	return m
}

func (q *fakeQP) Modify(state mlx.QPState, attr device.QPAttr) error {
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	q.modify = append(q.modify, state)
	a := &q.info.Attr
	switch state {
	case mlx.IBV_QPS_RESET:
		// The device forgets the queues and the attributes; the send
		// ring starts over at 0.
		q.info.Attr, q.info.DestRdAtomic, q.done, q.posted = device.QPAttr{}, 0, 0, 0
	case mlx.IBV_QPS_INIT:
		q.access = attr.Access
		a.Access, a.PKeyIdx = attr.Access, attr.PKeyIdx
	case mlx.IBV_QPS_RTR:
		if q.kind == device.RC && q.c.qps[attr.Remote.QPN] == nil {
			return fmt.Errorf("fake: RTR: no QP %#x", attr.Remote.QPN)
		}
		q.remote = attr.Remote.QPN
		a.MTU, a.Remote, a.MinRNR, q.info.DestRdAtomic = attr.MTU, attr.Remote, attr.MinRNR, attr.RdAtomic
	case mlx.IBV_QPS_RTS:
		a.SQPSN, a.Timeout, a.Retry, a.RNRRetry, a.RdAtomic = attr.SQPSN, attr.Timeout, attr.Retry, attr.RNRRetry, attr.RdAtomic
	}
	q.state = state
	return nil
}

// Query reports the state, which an error completion changes, and what
// the transitions set.
func (q *fakeQP) Query() (device.QPInfo, error) {
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	info := q.info
	info.State = q.state
	return info, nil
}

func (q *fakeQP) Close() error {
	q.c.mu.Lock()
	delete(q.c.qps, q.qpn)
	q.c.mu.Unlock()
	q.mem.Close()
	q.rqRing.Close()
	return q.c.closed(fmt.Sprintf("QP %#x", q.qpn))
}

// run executes what the doorbell records of the QPs in RTS announce, and
// flushes what those of the QPs in ERR do.
func (c *fakeCtx) run() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.qps {
		if (q.state != mlx.IBV_QPS_RTS && q.state != mlx.IBV_QPS_ERR) || q.mem.Closed() {
			continue
		}
		// The doorbell first, as a device: its write (atomic under the
		// race detector) orders the ring and the record before it.
		if q.rung() {
			q.posted = mmio.LoadRecord32((*[4]byte)(q.mem.DBR[4:8]))
		}
		for uint16(q.done) != uint16(q.posted) {
			if !q.step() {
				break
			}
		}
	}
}

// rung reports (and consumes) a doorbell written to either half of the
// QP's register.
func (q *fakeQP) rung() bool {
	rung := false
	for h := 0; h+8 <= len(q.mem.BF); h += max(q.mem.BFSize, 8) {
		if atomic.SwapUint64((*uint64)(unsafe.Pointer(&q.mem.BF[h])), 0) != 0 {
			rung = true
		}
	}
	return rung
}

// peerAccepts reports whether q's remote takes q's requests: it is ready
// (RTR or RTS) and connected back to q. Otherwise the device drops them
// and q's transport retries run out (IBV_WC_RETRY_EXC_ERR), as the
// simulator and hardware do. The fake has one port, so the QPN is all
// there is to compare.
func (q *fakeQP) peerAccepts() bool {
	r := q.c.qps[q.remote]
	return q.kind != device.RC || r != nil && r.remote == q.qpn &&
		(r.state == mlx.IBV_QPS_RTR || r.state == mlx.IBV_QPS_RTS)
}

// flush completes the WQE at q.done of a QP in error with
// IBV_WC_WR_FLUSH_ERR, signaled or not, as the device does; a flush that
// finds the CQ full is lost.
func (q *fakeQP) flush() bool {
	w := q.mem.SQ[(q.done&uint32(q.mem.WQEBBs()-1))*64:][:64]
	ctrl := be.Uint32(w[0:4])
	ds := max(be.Uint32(w[4:8])&0x3f, 1)
	if !q.send.write(mlx.MLX5_CQE_REQ_ERR, mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR, uint8(ctrl), q.qpn, uint16(ctrl>>8)) {
		q.lost(q.send)
	}
	q.done += (ds*16 + 63) / 64
	return true
}

// lost is a CQE of q that found c full (or overrun): as the simulator
// and the InfiniBand architecture have it, the CQ error
// (IBV_EVENT_CQ_ERR, once) and q moves to error with IBV_EVENT_QP_FATAL
// unless it was there already. The caller holds q.c.mu.
func (q *fakeQP) lost(c *fakeCQ) {
	if !c.errSent {
		c.errSent = true
		q.c.events = append(q.c.events, device.AsyncEvent{Type: mlx.IBV_EVENT_CQ_ERR, CQN: c.cqn})
	}
	if q.state != mlx.IBV_QPS_ERR {
		q.state = mlx.IBV_QPS_ERR
		q.c.events = append(q.c.events, device.AsyncEvent{Type: mlx.IBV_EVENT_QP_FATAL, QPN: q.qpn})
	}
}

// step executes the WQE at q.done: an RDMA write of one SGE, or else an
// error CQE, which moves the QP to error; a CQE that finds the CQ full is
// lost (lost); false when the WQE must wait (sendTo).
func (q *fakeQP) step() bool {
	if q.state == mlx.IBV_QPS_ERR {
		return q.flush()
	}
	n := uint32(q.mem.WQEBBs())
	w := q.mem.SQ[(q.done&(n-1))*64:][:64]
	ctrl := be.Uint32(w[0:4])
	op, idx := uint8(ctrl), uint16(ctrl>>8)
	ds := be.Uint32(w[4:8]) & 0x3f
	signaled := w[11]&0x08 != 0
	status := mlx.CQESyndrome(0)
	switch {
	case (op == uint8(mlx.MLX5_OPCODE_SEND) || op == uint8(mlx.MLX5_OPCODE_RDMA_WRITE)) && !q.peerAccepts():
		status = mlx.MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR
	case op == uint8(mlx.MLX5_OPCODE_SEND) && ds == 2:
		length, lkey, addr := be.Uint32(w[16:20]), be.Uint32(w[20:24]), be.Uint64(w[24:32])
		var ok bool
		if status, ok = q.sendTo(q.c.bytes(lkey, addr, length, 0)); !ok {
			return false
		}
	case op != uint8(mlx.MLX5_OPCODE_RDMA_WRITE) || ds != 3:
		status = mlx.MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR
	default:
		raddr, rkey := be.Uint64(w[16:24]), be.Uint32(w[24:28])
		length, lkey, addr := be.Uint32(w[32:36]), be.Uint32(w[36:40]), be.Uint64(w[40:48])
		src := q.c.bytes(lkey, addr, length, 0)
		dst := q.c.bytes(rkey, raddr, length, mlx.IBV_ACCESS_REMOTE_WRITE)
		if r := q.c.qps[q.remote]; src == nil || dst == nil || r == nil || r.access&mlx.IBV_ACCESS_REMOTE_WRITE == 0 {
			status = mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR
		} else {
			copy(dst, src)
		}
	}
	if status != 0 {
		if !q.send.write(mlx.MLX5_CQE_REQ_ERR, status, op, q.qpn, idx) {
			q.lost(q.send)
		}
		q.state = mlx.IBV_QPS_ERR
	} else if signaled && !q.send.write(mlx.MLX5_CQE_REQ, 0, op, q.qpn, idx) {
		q.lost(q.send)
	}
	q.done += (ds*16 + 63) / 64
	return true
}
