package engine

import (
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sim/cqe"
	"github.com/mlx5gen/mlx5gen/runtime/sim/keys"
)

// exec is the engine's working memory: one per fabric, used under its
// lock, so that executing a WQE allocates nothing.
type exec struct {
	src, dst sgl
	fault    keys.Fault
	scratch  []byte
	touch    [maxSpans]touched
	ntouch   int
	sigCQ    *CQ // where a signature error of the side being resolved goes
	sigQPN   uint32
	res      [8]byte // an atomic's original value
}

type touched struct {
	d   *Device
	key uint32
	cq  *CQ
	qpn uint32
}

func (x *exec) begin() {
	x.src.reset()
	x.dst.reset()
	x.scratch = x.scratch[:0]
	x.ntouch = 0
}

func (x *exec) touched(d *Device, key uint32) {
	if x.ntouch < maxSpans {
		x.touch[x.ntouch] = touched{d: d, key: key, cq: x.sigCQ, qpn: x.sigQPN}
		x.ntouch++
	}
}

// sigErrors writes a signature-error CQE for each mkey the transfer went
// through that recorded one. [ledger: sig-error-owner]
func (x *exec) sigErrors() {
	if x.ntouch != 0 {
		x.sigErrorsSlow()
	}
}

func (x *exec) sigErrorsSlow() {
	for _, t := range x.touch[:x.ntouch] {
		e, bad := t.d.mkeys.SigError(t.key)
		if !bad || t.cq == nil {
			continue
		}
		s := sigCQE(&e)
		s.QPN = t.qpn
		if !t.cq.ring.Sig(&s) {
			if q := t.cq.dev.qps[t.qpn]; q != nil {
				q.cqFull(t.cq)
			} else {
				t.cq.overrun()
			}
		}
		t.cq.wrote = true
	}
}

// step runs the QP once; it reports whether anything happened.
func (q *QP) step() bool {
	if q.closed || q.typ == DCT {
		return false
	}
	busy := false
	s := &q.sq
	if s.doorbell(q.qpn) {
		busy = true
	}
	if s.nflight > 0 {
		q.land()
		busy = true
	}
	switch q.state {
	case mlx.IBV_QPS_RTS:
		if q.execute() {
			busy = true
		}
	case mlx.IBV_QPS_ERR:
		if q.flush() {
			busy = true
		}
	}
	if !q.comps.empty() && q.writeComps() {
		busy = true
	}
	return busy
}

// execute runs the authorised WQEs until one must wait.
func (q *QP) execute() bool {
	s := &q.sq
	x := &q.dev.fab.x
	did := false
	for s.pending() > 0 && q.state == mlx.IBV_QPS_RTS {
		w := s.at(s.ci, s.pending())
		ctrl := (*mlx.WQECtrlSeg)(w[:mlx.WQECtrlSegSize])
		op := ctrl.Opcode()
		ds := int(ctrl.DS())
		bbs := uint32(ds*16+qmem.WQEBB-1) / qmem.WQEBB
		c := comp{op: op, ctr: uint16(s.ci), signaled: ctrl.FmCeSe()&mlx.MLX5_WQE_CTRL_CQ_UPDATE != 0}
		var st status
		switch {
		case ds == 0:
			st, bbs = malformed("ds 0"), 1
		case bbs > s.pending() || ds*16 > len(w):
			st, bbs = malformed("ds past the posted WQEs or the ring"), min(bbs, s.pending())
		case ctrl.WQEIndex() != uint16(s.ci) || ctrl.QPN() != q.qpn:
			st = malformed("the control segment names another WQE index or QP")
		case ctrl.Fence() == 0 && q.fastWrite(w[:ds*16], ctrl):
			s.ci += bbs
			did = true
			continue
		case ctrl.Fence() != 0 && s.nflight > 0:
			return did // a fence waits for the READs and atomics before it [ledger: fence-waits-reads]
		case q.errStr != nil && int(ctrl.DCIStreamChannelID()) < len(q.errStr) && q.errStr[ctrl.DCIStreamChannelID()]:
			st = fail(mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR, "the DCI stream is in error")
		default:
			x.begin()
			st = q.run(w[:ds*16], ctrl, &c)
		}
		if st.wait {
			return did || st.nak
		}
		did = true
		start := s.ci
		s.ci += bbs
		q.rnrCount = 0
		switch {
		case st.synd != 0:
			c.synd, c.signaled, c.ready = st.synd, true, true
			q.trace(c.op, c.ctr, st)
			q.complete(c)
			if q.errStr != nil && (st.synd == mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR || q.streamError(ctrl.DCIStreamChannelID())) {
				continue // only the stream is in error [ledger: dci-stream-errors]
			}
			q.toError()
			return true
		case st.flight:
			s.flight[s.nflight] = flight{start: start, bbs: bbs, comp: q.comps.push(c), peer: st.peer}
			s.nflight++
		default:
			c.ready = true
			q.complete(c)
		}
	}
	return did
}

// complete queues a ready completion, or writes it at once when nothing
// waits before it (the common case: no READ or atomic in flight).
func (q *QP) complete(c comp) {
	if q.comps.empty() {
		q.writeComp(&c)
		return
	}
	q.comps.push(c)
}

// writeComps writes the completions at the head of the queue that are
// ready.
func (q *QP) writeComps() bool {
	did := false
	for !q.comps.empty() {
		c := q.comps.at(q.comps.head)
		if !c.ready {
			break
		}
		q.writeComp(c)
		q.comps.head++
		did = true
	}
	return did
}

// writeComp writes a completion's CQE: signaled work requests and errors
// get one.
func (q *QP) writeComp(c *comp) {
	if !c.signaled && c.synd == 0 {
		return
	}
	cq := q.scq
	var ok bool
	if c.synd != 0 {
		ok = cq.ring.Err(&cqe.Err{QPN: q.qpn, Op: c.op, Ctr: c.ctr, Syndrome: c.synd, Vendor: c.vendor})
	} else {
		ok = cq.ring.Req(q.qpn, 0, c.op, c.ctr, c.byteCnt)
	}
	if !ok {
		q.cqFull(cq)
		return
	}
	cq.wrote = true
}

// flush completes every posted WQE with a flush error (the QP is in
// error), and every posted receive. [ledger: error-flush]
func (q *QP) flush() bool {
	s := &q.sq
	did := false
	for s.pending() > 0 {
		w := s.at(s.ci, 1)
		ctrl := (*mlx.WQECtrlSeg)(w[:mlx.WQECtrlSegSize])
		bbs := (uint32(ctrl.DS())*16 + qmem.WQEBB - 1) / qmem.WQEBB
		if bbs == 0 || bbs > s.pending() {
			bbs = 1
		}
		q.complete(comp{op: ctrl.Opcode(), ctr: uint16(s.ci), synd: mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR, ready: true})
		s.ci += bbs
		did = true
	}
	if q.flushRecv() {
		did = true
	}
	return did
}

// flushRecv completes the posted receives of a QP in error.
func (q *QP) flushRecv() bool {
	r := &q.rq
	did := false
	for r.pending() > 0 {
		_, idx := r.take()
		if !q.rcq.ring.Err(&cqe.Err{Resp: true, QPN: q.qpn, Ctr: idx, Syndrome: mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR}) {
			q.cqFull(q.rcq) // the flush CQE is lost: the CQ takes none
		}
		q.rcq.wrote = true
		did = true
	}
	return did
}

// WQEError is a work request the device failed, and why: what
// Fabric.Trace receives (the CQE carries only the syndrome).
type WQEError struct {
	Device   string
	QPN      uint32
	Index    uint16 // the WQE's index (the CQE's wqe_counter)
	Opcode   mlx.Opcode
	Syndrome mlx.CQESyndrome
	Why      string
}

func (e WQEError) Error() string {
	return fmt.Sprintf("%s QP %#x WQE %d (%v): %v: %s", e.Device, e.QPN, e.Index, e.Opcode, e.Syndrome, e.Why)
}

// trace reports a failed work request to the fabric's Trace hook.
func (q *QP) trace(op mlx.Opcode, ctr uint16, st status) {
	if t := q.dev.fab.Trace; t != nil {
		t(WQEError{Device: q.dev.name, QPN: q.qpn, Index: ctr, Opcode: op, Syndrome: st.synd, Why: st.fault})
	}
}
