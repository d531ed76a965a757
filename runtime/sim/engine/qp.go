package engine

import (
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// QPType is the transport of a queue pair.
type QPType uint8

// The QP types the device models. [ledger: qp-types-not-modelled]
const (
	RC  QPType = iota + 1 // reliable connected
	DCI                   // dynamically connected initiator
	DCT                   // dynamically connected target (receive only, through an SRQ)
)

func (t QPType) String() string {
	switch t {
	case RC:
		return "RC"
	case DCI:
		return "DCI"
	case DCT:
		return "DCT"
	}
	return fmt.Sprintf("QPType(%d)", uint8(t))
}

// QPConfig describes a QP to create.
type QPConfig struct {
	Type   QPType
	PD     uint32
	SendCQ *CQ // RC, DCI
	RecvCQ *CQ // RC, DCT

	// Mem is the send queue's memory (RC, DCI): the ring, the doorbell
	// record (bytes 0..3 the receive counter, 4..7 the send counter) and
	// the doorbell register. Its CQ fields are not used.
	Mem *qmem.Memory

	// The receive queue (RC without SRQ; nil: none, and messages that
	// need a receive fail): a ring of WQEs of RQStride bytes, its doorbell
	// record Mem.DBR[0:4]. WQSig: each WQE starts with a signature segment.
	RQ       []byte
	RQStride int
	WQSig    bool

	SRQ   *SRQ   // receives through a shared receive queue (a DCT without one takes RDMA and atomics only)
	DCKey uint64 // DCT: the key DCIs must present

	// DCI streams (mlx5dv_dci_streams): 0 without. An error on a stream
	// puts that stream in error (its later work requests flush, until the
	// QP is reset) while the others go on; the DCI itself moves to error
	// when more than DCIErrStreams streams are in error. [ledger: dci-stream-errors]
	DCIStreams, DCIErrStreams int
}

// QP is a queue pair of the device.
type QP struct {
	dev    *Device
	qpn    uint32
	typ    QPType
	pd     uint32
	state  mlx.QPState
	closed bool
	scq    *CQ
	rcq    *CQ

	sq      sendQueue
	rq      recvQueue
	srq     *SRQ
	dcKey   uint64
	streams int
	errMax  int    // streams that may be in error before the DCI is
	errStr  []bool // streams in error
	nErr    int

	// RC: where the peer is (Connect), and the QP it resolved to.
	remLID   uint16
	remGID   [16]byte
	remGRH   bool
	remQPN   uint32
	peer     *QP
	rnrRetry uint8           // 7: retry forever
	access   mlx.AccessFlags // the remote operations the QP accepts (qp_access_flags)
	rnrCount uint8           // failed attempts of the WQE waiting for a receive

	comps compQueue
	// flushFlights: the program moved the QP to error (or reset it), so
	// the READs and atomics in flight complete as flushed.
	flushFlights bool
}

// QPN returns the QP's number.
func (q *QP) QPN() uint32 { return q.qpn }

// State returns the QP's state.
func (q *QP) State() mlx.QPState {
	q.dev.fab.mu.Lock()
	defer q.dev.fab.mu.Unlock()
	return q.state
}

// Type returns the QP's transport.
func (q *QP) Type() QPType { return q.typ }

// CreateQP makes a QP in the RESET state.
func (d *Device) CreateQP(c QPConfig) (*QP, error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.fab.mu.Unlock()
	if !d.pds[c.PD] {
		return nil, fmt.Errorf("engine: create_qp: no PD %d", c.PD)
	}
	if d.fab.nextQPN > 0xffffff {
		return nil, fmt.Errorf("engine: create_qp: the fabric has used every 24-bit QPN")
	}
	q := &QP{dev: d, qpn: d.fab.nextQPN, typ: c.Type, pd: c.PD, state: mlx.IBV_QPS_RESET,
		scq: c.SendCQ, rcq: c.RecvCQ, srq: c.SRQ, dcKey: c.DCKey, streams: c.DCIStreams, rnrRetry: 7,
		access: mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_ATOMIC}
	switch c.Type {
	case RC, DCI:
		if c.SendCQ == nil || c.SendCQ.dev != d {
			return nil, fmt.Errorf("engine: create_qp: a %v QP needs a send CQ of the device", c.Type)
		}
		if err := q.sq.init(c.Mem, d.caps.MaxRdAtomic); err != nil {
			return nil, err
		}
		q.comps.c = make([]comp, q.sq.nbb)
	case DCT:
		if c.RecvCQ == nil || c.RecvCQ.dev != d {
			return nil, fmt.Errorf("engine: create_qp: a DCT needs a receive CQ of the device")
		}
	default:
		return nil, fmt.Errorf("engine: create_qp: unsupported QP type %v", c.Type)
	}
	if c.Type == RC && (c.RecvCQ == nil || c.RecvCQ.dev != d) {
		return nil, fmt.Errorf("engine: create_qp: an RC QP needs a receive CQ of the device")
	}
	if c.Type == RC && c.SRQ == nil && c.RQ != nil {
		if err := q.rq.init(c.RQ, c.RQStride, c.Mem, c.WQSig); err != nil {
			return nil, err
		}
	}
	if c.Type == DCI && (c.DCIStreams > d.caps.MaxDCIStreams || c.DCIErrStreams > d.caps.MaxErrStreams) {
		return nil, fmt.Errorf("engine: create_qp: %d DCI streams (%d in error), the device offers %d (%d)",
			c.DCIStreams, c.DCIErrStreams, d.caps.MaxDCIStreams, d.caps.MaxErrStreams)
	}
	if c.Type == DCI && c.DCIStreams > 0 {
		q.errStr, q.errMax = make([]bool, c.DCIStreams), c.DCIErrStreams
	}
	d.fab.nextQPN++
	d.qps[q.qpn] = q
	d.qpList = append(d.qpList, q)
	return q, nil
}

// DestroyQP removes a QP; its peer's messages to it fail from then on.
func (d *Device) DestroyQP(q *QP) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.fab.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	q.closed = true
	delete(d.qps, q.qpn)
	for i, x := range d.qpList {
		if x == q {
			d.qpList = append(d.qpList[:i], d.qpList[i+1:]...)
			break
		}
	}
	return nil
}

// SetAccess sets the remote operations the QP accepts as a responder
// (ibv_qp_attr.qp_access_flags, given on the way to INIT; a new QP
// accepts RDMA write, read and atomics). [ledger: qp-default-access]
func (q *QP) SetAccess(acc mlx.AccessFlags) {
	q.dev.fab.mu.Lock()
	defer q.dev.fab.mu.Unlock()
	q.access = acc
}

// streamError records an error on a DCI stream; it reports whether the
// DCI goes on (false: it moves to error, as a QP without streams does).
// mlx5dv_dci_stream_id_reset(3) says the DCI moves to error once the
// streams in error "reach" log_num_errored, and mlx5dv_create_qp(3) calls
// it the error streams allowed "before moving DCI to an error state": the
// engine lets 2^log_num_errored streams be in error and moves the DCI at
// one more. [ledger: dci-stream-errors]
func (q *QP) streamError(id uint16) bool {
	if int(id) >= len(q.errStr) {
		return false
	}
	if !q.errStr[id] {
		q.errStr[id] = true
		q.nErr++
	}
	return q.nErr <= q.errMax
}

// ResetStream takes DCI stream id out of error, as
// mlx5dv_dci_stream_id_reset(3) does: its later work requests execute
// again, and it no longer counts against the streams the DCI lets be in
// error. Like libmlx5 (rdma-core providers/mlx5/mlx5.c), it refuses a QP
// that is not a DCI and one not in RTS (a DCI the errors moved to error
// needs a RESET). A stream past the DCI's streams is refused too, and
// resetting a stream not in error changes nothing (what firmware does
// with either is not documented). [ledger: dci-stream-reset]
func (q *QP) ResetStream(id uint16) error {
	if err := q.dev.lock(); err != nil {
		return err
	}
	defer q.dev.fab.mu.Unlock()
	switch {
	case q.closed:
		return ErrClosed
	case q.typ != DCI || q.errStr == nil:
		return fmt.Errorf("engine: dci_stream_id_reset: QP %#x is a %v without DCI streams", q.qpn, q.typ)
	case q.state != mlx.IBV_QPS_RTS:
		return fmt.Errorf("engine: dci_stream_id_reset: QP %#x is in %v, not RTS", q.qpn, q.state)
	case int(id) >= len(q.errStr):
		return fmt.Errorf("engine: dci_stream_id_reset: stream %d of a DCI with %d streams", id, len(q.errStr))
	}
	if q.errStr[id] {
		q.errStr[id] = false
		q.nErr--
	}
	return nil
}

// Remote is where an RC QP's peer is.
type Remote struct {
	LID      uint16
	GID      [16]byte
	GRH      bool // route by GID (RoCE) instead of LID
	QPN      uint32
	RNRRetry uint8 // 7: retry forever
}

// Modify moves the QP to state (RESET, INIT, RTR, RTS or ERR), as
// ibv_modify_qp does: INIT from RESET, RTR from INIT (an RC QP learns its
// peer from r), RTS from RTR (DCT: RTR is its last state); RESET and ERR
// from any state. Moving to RESET empties the queues' device state. [ledger: qp-state-machine]
func (q *QP) Modify(state mlx.QPState, r *Remote) error {
	if err := q.dev.lock(); err != nil {
		return err
	}
	defer q.dev.fab.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	from := q.state
	ok := false
	switch state {
	case mlx.IBV_QPS_RESET, mlx.IBV_QPS_ERR:
		ok = true
	case mlx.IBV_QPS_INIT:
		ok = from == mlx.IBV_QPS_RESET || from == mlx.IBV_QPS_INIT
	case mlx.IBV_QPS_RTR:
		ok = from == mlx.IBV_QPS_INIT
	case mlx.IBV_QPS_RTS:
		ok = (from == mlx.IBV_QPS_RTR || from == mlx.IBV_QPS_RTS) && q.typ != DCT
	}
	if !ok {
		return fmt.Errorf("engine: modify_qp: QP %#x (%v) cannot go from %v to %v", q.qpn, q.typ, from, state)
	}
	if state == mlx.IBV_QPS_RTR && q.typ == RC {
		if r == nil {
			return fmt.Errorf("engine: modify_qp: an RC QP needs its peer's address for RTR")
		}
		q.remLID, q.remGID, q.remGRH, q.remQPN, q.rnrRetry = r.LID, r.GID, r.GRH, r.QPN, r.RNRRetry
		q.peer = nil
	}
	if state == mlx.IBV_QPS_RESET {
		q.reset()
	}
	q.flushFlights = state == mlx.IBV_QPS_ERR || state == mlx.IBV_QPS_RESET
	q.state = state
	return nil
}

// reset forgets what the device knew of the queues and the peer
// (ibv_modify_qp to RESET): the program starts its rings over too, and
// RTR names the peer again. [ledger: qp-reset-forgets]
func (q *QP) reset() {
	q.sq.reset()
	q.rq.reset()
	q.comps.reset()
	q.peer, q.rnrCount = nil, 0
	q.remLID, q.remGID, q.remGRH, q.remQPN = 0, [16]byte{}, false, 0
	clear(q.errStr)
	q.nErr = 0
}

// toError moves the QP to the error state: what is posted from now on,
// and what was not executed, completes with a flush error. [ledger: error-flush]
func (q *QP) toError() {
	if q.state != mlx.IBV_QPS_ERR {
		q.state = mlx.IBV_QPS_ERR
	}
}

// cqFull is what follows when q has a CQE for c and c has no room for it,
// or is overrun already: the CQ error (IBV_EVENT_CQ_ERR, once), the CQE is
// lost, and q, which can no longer report its completions, moves to error
// with IBV_EVENT_QP_FATAL (a local work queue catastrophic error). The
// InfiniBand architecture describes it so: a CQ error is raised when the
// device fails to write a CQE (an overrun), the affected QP moves to the
// error state, and every send or receive queue that later tries to post a
// CQE to that CQ gets a local work queue catastrophic error (IBA 11.6.3,
// affiliated asynchronous errors; the responder's "class G" error in
// Linux drivers/infiniband/sw/rxe/rxe_resp.c moves the QP to error the
// same way). So each QP moves when it next needs the CQ, not at once, and
// the first QP too gets the QP event. [ledger: cq-overrun]
// A QP that was in error already (a failed work request, whose flush
// CQEs found the CQ full) gets no second event: IBV_EVENT_QP_FATAL says a
// QP went to error. [ledger: cq-overrun-no-event-in-error]
// A message whose responder CQE was lost still completes at its
// requester: hardware's responder sends no NAK for this error (IBA's
// class G) and may or may not have acknowledged the message; the engine
// has it acknowledged, and the requester's next message to the QP in
// error fails with a transport retry error. [ledger: cq-overrun-responder-ack]
func (q *QP) cqFull(c *CQ) {
	c.overrun()
	if q.state == mlx.IBV_QPS_ERR {
		return
	}
	q.toError()
	q.dev.ev.post(Event{Type: mlx.IBV_EVENT_QP_FATAL, QPN: q.qpn})
}

// resolve finds the RC QP's peer (nil: unreachable, or not ready).
func (q *QP) resolve() *QP {
	if p := q.peer; p != nil && !p.closed {
		return p
	}
	var d *Device
	if q.remGRH {
		d = q.dev.fab.byGID(q.remGID)
	} else {
		d = q.dev.fab.byLID(q.remLID)
	}
	if d == nil {
		return nil
	}
	p := d.qps[q.remQPN]
	if p == nil || p.typ != RC {
		return nil
	}
	q.peer = p
	return p
}

// accepts reports whether RC responder p takes requests from q: q must be
// the peer p's context names, the QPN and the address (LID, or GID when
// routed by GRH) RTR gave p. Hardware checks a request's source address
// against the QP context and silently drops one that does not match (IBA
// 9.6.1.5; rxe's check_addr), and a request from another QP behind the
// right address fails the PSN check (its PSNs are not the ones p
// expects) or, if it passes, its acknowledgements go to p's peer, never
// to q: either way q hears nothing, retransmits, and ends with a
// transport retry error. The engine drops every such request, so a wrong
// connection never moves data. A DCT has no peer (it checks the DC key
// of each request instead): it accepts any DCI. [ledger: wrong-peer-dropped, dct-dc-key]
func (p *QP) accepts(q *QP) bool {
	if p.typ != RC {
		return true
	}
	if p.remQPN != q.qpn {
		return false
	}
	if p.remGRH {
		return p.remGID == q.dev.gid
	}
	return p.remLID == q.dev.lid
}

// receiving reports whether a QP accepts messages (RTR or RTS).
func (q *QP) receiving() bool {
	return !q.closed && (q.state == mlx.IBV_QPS_RTR || q.state == mlx.IBV_QPS_RTS)
}

// Attrs is what the engine keeps of a QP that ibv_query_qp reports: its
// state (which an error completion moves to IBV_QPS_ERR), the remote
// operations it accepts and, for RC, its peer (zero until RTR names it).
type Attrs struct {
	State  mlx.QPState
	Access mlx.AccessFlags
	Remote Remote
}

// Attrs returns the QP's attributes as the device has them now.
func (q *QP) Attrs() Attrs {
	q.dev.fab.mu.Lock()
	defer q.dev.fab.mu.Unlock()
	return Attrs{State: q.state, Access: q.access,
		Remote: Remote{LID: q.remLID, GID: q.remGID, GRH: q.remGRH, QPN: q.remQPN, RNRRetry: q.rnrRetry}}
}
