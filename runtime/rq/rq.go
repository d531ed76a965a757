package rq

import (
	"fmt"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/internal/gate"
)

const (
	segSize = mlx.WQEDataSegSize // a data segment, and the signature segment
	sigOff  = 4                  // mlx5_rwqe_sig.signature (providers/mlx5/wqe.h)

	// MaxRQWQEs bounds a receive queue: far above a device's
	// max_qp_wr, low enough that no index arithmetic overflows.
	MaxRQWQEs = 1 << 24
)

// Config describes a QP's receive queue, as mlx5dv_init_obj reports it
// (mlx5dv_qp.rq) with what the QP was created with.
//
// The QP is taken to be in INIT or a later state: before INIT (and after a
// reset) libmlx5 refuses every work request with SGEs. A raw packet QP
// before RTR, whose doorbell record libmlx5 leaves alone, is not modelled:
// the doorbell record is always written.
type Config struct {
	Mem    Memory
	Stride int // bytes per WQE: 1 << wqe_shift (mlx5dv_qp.rq.stride)

	// MaxPost is how many work requests may be outstanding; 0 means the
	// WQE count, as libmlx5 sets rq.max_post.
	MaxPost int

	// WQSig: the QP was created with wq_sig, so each WQE starts with a
	// signature segment before its max_gs data segments.
	WQSig bool
	QPN   uint32 // the QP number the signatures cover

	// Where the queue starts (0 and 0 for a new QP): Head-Tail work
	// requests are outstanding, their wr_ids in WRIDs (indexed by WQE;
	// nil: 0).
	Head, Tail uint32
	WRIDs      []uint64

	// CloseWait bounds how long Close waits for a post in progress on
	// another goroutine; 0 is DefaultCloseWait.
	CloseWait time.Duration
}

// DefaultCloseWait is how long Close waits for a post in progress when
// Config.CloseWait is 0.
const DefaultCloseWait = 2 * time.Second

// RQ writes receive WQEs into a QP's receive queue.
//
// Concurrency: one goroutine at a time posts (Post, PostList); one other
// may poll the CQ it completes to at the same time (the poller's calls:
// Retire, Completed, WRID, TailIndex, Scatter). They hand off through
// atomics, not a lock (libmlx5 takes the receive queue's lock around
// posting and the CQ's around polling): the writer publishes its head
// before the doorbell record, the poller its tail, and the writer reads
// the tail again only when the queue looks full. Head, Tail and
// Outstanding may be called from any goroutine; Close too, at any time:
// it waits for a post in progress. Two goroutines posting at once are not
// supported.
type RQ struct {
	ring   []byte
	dbr    *[4]byte
	stride int
	mask   uint32
	maxGS  int
	max    uint32 // max_post
	sig    bool
	qpnSig byte // calc_sig's XOR of the QP number's bytes, not inverted
	qpnNum uint32

	head, tail uint32   // the writer's: posted, and the poller's tail as last read
	wrid       []uint64 // rq.wrid: the wr_id of the WQE at each index
	wait       time.Duration

	// The writer's published head and the poller's tail, each on a cache
	// line of its own, and the gate Close waits at.
	pub struct {
		head gate.Word // the writer's, beside its gate mark
		gate gate.Gate
		_    [52]byte
		tail gate.Word // the poller's, on a line of its own
		_    [60]byte
	}

	errv mlx.RuleError
	rerr RetireError
}

// New makes a writer for a receive queue.
func New(c Config) (*RQ, error) {
	min := segSize
	if c.WQSig {
		min = 2 * segSize
	}
	n, err := c.Mem.check("receive queue", c.Stride, min, MaxRQWQEs)
	if err != nil {
		return nil, err
	}
	if c.MaxPost < 0 || c.MaxPost > n {
		return nil, fmt.Errorf("rq: max_post %d is not within the %d WQEs of the ring", c.MaxPost, n)
	}
	q := &RQ{
		ring: c.Mem.Ring, dbr: c.Mem.DBR, stride: c.Stride, mask: uint32(n - 1),
		maxGS: c.Stride / segSize, max: uint32(c.MaxPost), sig: c.WQSig, qpnNum: c.QPN,
		head: c.Head, tail: c.Tail, wrid: make([]uint64, n), wait: c.CloseWait,
	}
	if q.wait <= 0 {
		q.wait = DefaultCloseWait
	}
	q.pub.head.Publish(c.Head)
	q.pub.tail.Publish(c.Tail)
	if q.max == 0 {
		q.max = uint32(n)
	}
	if q.sig {
		q.maxGS--
		q.qpnSig = byte(c.QPN) ^ byte(c.QPN>>8) ^ byte(c.QPN>>16) ^ byte(c.QPN>>24)
	}
	if out := c.Head - c.Tail; out > q.max {
		return nil, fmt.Errorf("rq: head %d and tail %d leave %d work requests outstanding, above max_post %d", c.Head, c.Tail, out, q.max)
	}
	if c.WRIDs != nil {
		if len(c.WRIDs) != n {
			return nil, fmt.Errorf("rq: %d wr_ids for %d WQEs", len(c.WRIDs), n)
		}
		copy(q.wrid, c.WRIDs)
	}
	return q, nil
}

// MaxGS returns how many SGEs a work request may have (libmlx5's
// rq.max_gs).
func (q *RQ) MaxGS() int { return q.maxGS }

// MaxPost returns how many work requests may be outstanding.
func (q *RQ) MaxPost() uint32 { return q.max }

// Head returns the number of work requests posted so far (rq.head).
func (q *RQ) Head() uint32 { return q.pub.head.Load() }

// Tail returns the number retired so far (rq.tail).
func (q *RQ) Tail() uint32 { return q.pub.tail.Load() }

// Outstanding returns the work requests posted and not yet retired.
func (q *RQ) Outstanding() uint32 { return q.pub.head.Load() - q.pub.tail.Load() }

// ErrClosed is the error of a post after Close.
var ErrClosed = gate.Closed("rq: the receive queue is closed")

// Close detaches the writer from its queue, before the queue's memory is
// released (runtime/device calls it when its QP is closed): every later
// Post and PostList fails with ErrClosed and writes nothing, and a post in
// progress on another goroutine is waited for. Any goroutine may call it,
// at any time; it is idempotent. It fails only if a post stays in
// progress longer than Config.CloseWait: the memory must then stay.
func (q *RQ) Close() error {
	if err := q.pub.gate.Close(q.wait); err != nil {
		return fmt.Errorf("rq: QP %#x receive queue: %w", q.qpn(), err)
	}
	return nil
}

// qpn is for messages only.
func (q *RQ) qpn() uint32 { return q.qpnNum }

// Post posts one receive work request: all of it, or nothing and an
// error. rdma-core: mlx5_post_recv with a one-element list.
func (q *RQ) Post(wrID uint64, sges []SGE) error {
	if !q.pub.gate.EnterFast() && !q.pub.gate.Enter() {
		return ErrClosed
	}
	if err := q.check(0, 0, sges); err != nil {
		q.pub.gate.Leave()
		return err
	}
	q.write(q.head, wrID, sges, uint16(q.head))
	q.head++
	q.pub.head.Publish(q.head)
	ringDBR(q.dbr, q.head&0xffff)
	q.pub.gate.Leave()
	return nil
}

// PostList posts a list of receive work requests as ibv_post_recv does:
// in order, stopping at the first that fails its checks, which writes
// nothing. It returns how many were posted (the index of the bad work
// request, as bad_wr names it) and the error; the doorbell record is
// updated once, for the ones posted. rdma-core: mlx5_post_recv.
func (q *RQ) PostList(wrs []RecvWR) (int, error) {
	if !q.pub.gate.Enter() {
		return 0, ErrClosed
	}
	defer q.pub.gate.Leave()
	var err error
	n := 0
	for i := range wrs {
		if err = q.check(uint32(i), i, wrs[i].SGEs); err != nil {
			break
		}
		// libmlx5 signs every WQE of a list with the list's first index.
		q.write(q.head+uint32(i), wrs[i].WRID, wrs[i].SGEs, uint16(q.head))
		n++
	}
	if n > 0 {
		q.head += uint32(n)
		q.pub.head.Publish(q.head)
		ringDBR(q.dbr, q.head&0xffff)
	}
	return n, err
}

// check is libmlx5's order of checks for the nreq-th work request of a
// list: room first (mlx5_wq_overflow), then the SGE count; then the SGE
// lengths, which libmlx5 does not check.
func (q *RQ) check(nreq uint32, wr int, sges []SGE) error {
	if cur := q.head - q.tail; cur+nreq >= q.max {
		if q.refresh() {
			return q.check(nreq, wr, sges)
		}
		return ruleErr(&q.errv, mlx5rules.ChainRQRoom, mlx.FnPostRecv, wr,
			"outstanding", mlx.TestMax, uint64(cur)+uint64(nreq)+1, uint64(q.max), "max_post")
	}
	if len(sges) > q.maxGS {
		return ruleErr(&q.errv, mlx5rules.ChainRQSGECount, mlx.FnPostRecv, wr,
			"num_sge", mlx.TestMax, uint64(len(sges)), uint64(q.maxGS), "max_gs")
	}
	return sgeLengths(&q.errv, mlx.FnPostRecv, wr, sges)
}

// write writes the WQE of work request number idx: its data segments
// (zero-length SGEs skipped), the end segment when the list is shorter
// than max_gs, and with wq_sig the signature over the list and sigIdx.
func (q *RQ) write(idx uint32, wrID uint64, sges []SGE, sigIdx uint16) {
	ind := idx & q.mask
	off := int(ind) * q.stride
	w := q.ring[off : off+q.stride : off+q.stride]
	scat := w
	if q.sig {
		clear(w)
		scat = w[segSize:]
	}
	j := 0
	for i := range sges {
		s := &sges[i]
		if s.Length == 0 {
			continue
		}
		dataSeg(scat[j*segSize:], s.Length, s.LKey, s.Addr)
		j++
	}
	if j < q.maxGS {
		endSeg(scat[j*segSize:])
	}
	if q.sig {
		// set_sig_seg: calc_sig (the inverted XOR of the bytes) of the
		// signature segment and num_sge segments, of the QP number and of
		// the index, XORed together.
		x := byte(0)
		for _, b := range w[:(len(sges)+1)*segSize] {
			x ^= b
		}
		w[sigOff] = ^x ^ ^q.qpnSig ^ ^(byte(sigIdx) ^ byte(sigIdx>>8))
	}
	q.wrid[ind] = wrID
}

// Retire retires the oldest outstanding work request and returns its
// wr_id: the CQ poller calls it for each completion of this receive
// queue (v44: wr_id = rq.wrid[rq.tail & (wqe_cnt - 1)], then ++rq.tail).
// It fails, changing nothing, when none is outstanding.
func (q *RQ) Retire() (uint64, error) {
	t := q.pub.tail.Load()
	if q.pub.head.Load() == t {
		return 0, errNoOutstanding
	}
	id := q.wrid[t&q.mask]
	q.pub.tail.Publish(t + 1)
	return id, nil
}

// Completed retires the n oldest outstanding work requests at once. It
// fails, changing nothing, if fewer are outstanding.
func (q *RQ) Completed(n uint32) error {
	t := q.pub.tail.Load()
	if out := q.pub.head.Load() - t; n > out {
		q.rerr = RetireError{N: n, Outstanding: out}
		return &q.rerr
	}
	q.pub.tail.Publish(t + n)
	return nil
}

// refresh reads the poller's tail again; it reports whether work
// requests were retired since the last read.
func (q *RQ) refresh() bool {
	t := q.pub.tail.Load()
	if t == q.tail {
		return false
	}
	q.tail = t
	return true
}

// WRID returns the wr_id kept for the WQE at ring index ind (masked).
func (q *RQ) WRID(ind uint32) uint64 { return q.wrid[ind&q.mask] }

// TailIndex returns the ring index of the oldest outstanding work
// request: the WQE the next receive completion consumes (v44's wqe_ctr =
// rq.tail & (wqe_cnt - 1)).
func (q *RQ) TailIndex() uint32 { return q.pub.tail.Load() & q.mask }

// Scatter returns the data segments of the WQE at ring index ind
// (masked): max_gs segments of 16 bytes, after the signature segment of a
// QP with wq_sig. The CQ poller copies data scattered to the CQE through
// them (mlx5_copy_to_recv_wqe); v44 reads 1 << (wqe_shift - 4) segments
// from there, one more than the WQE holds with wq_sig.
func (q *RQ) Scatter(ind uint32) []byte {
	off := int(ind&q.mask)*q.stride + q.stride - q.maxGS*segSize
	return q.ring[off : off+q.maxGS*segSize : off+q.maxGS*segSize]
}

// WQEs returns the number of WQEs in the ring (rq.wqe_cnt).
func (q *RQ) WQEs() uint32 { return q.mask + 1 }
