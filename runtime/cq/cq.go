// Package cq polls an mlx5 completion queue in pure Go, as libmlx5's CQ
// code does (providers/mlx5/cq.c): it reads the CQEs the device writes into
// qmem.Memory's CQ buffer (64- or 128-byte entries, owner bit against the
// consumer index, cqe_version 0 or 1), finds the work request of each one
// through the bookkeeping of its send queue, receive queue or shared
// receive queue, retires the send queue's unsignaled work requests, records
// signature errors on their mkey, copies inline-scattered data, and writes
// the consumer index into the CQ doorbell record when libmlx5 writes it.
//
// Poll takes requester successes on a fast path (fast.go) that reads the
// owner bits of a batch, then issues one read barrier for all of them,
// where libmlx5 issues one per CQE; the completions are the same
// (TestFastPathAgrees). Receive queues and shared receive queues written
// by runtime/rq are registered through the RQ and SRQ adapters, send
// queues written by runtime/sq through SQ.
//
// Two forms, as libibverbs has: Poll fills a batch of WC (ibv_poll_cq),
// and StartPoll / NextPoll / EndPoll with the Read* methods read one
// completion at a time, lazily (ibv_start_poll and the ibv_wc_read_*
// callbacks). Neither allocates nor calls C.
//
// The checked results are those of rdma-core 44.0, replayed from
// testdata/cqe-vectors by mlx5gen replay; where a later release fixed a
// v44 behaviour the poller follows the fix (spec rules cq.* with follows).
// Each function names the libmlx5 function it mirrors.
//
// Concurrency: one goroutine polls a CQ (Poll, the StartPoll session,
// Arm, Event) while, at the same time, one goroutine writes each send
// queue (runtime/sq) and each receive queue (runtime/rq) completing to it:
// the slot bookkeeping and the tails are handed off through atomics, no
// lock on the poll path. Close, AddQP, RemoveQP, Clean and the mkey and
// SRQ registrations may come from any goroutine at any moment: they wait
// for a poll in progress to end. Two goroutines polling one CQ at once
// are not supported; put a lock of your own around them. The full table
// of who may run beside whom is docs/design.md, "Goroutines".
package cq

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/barrier"
	"github.com/mlx5gen/mlx5gen/runtime/internal/gate"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// MaxCQEs bounds the ring: a device offers at most 2^22 entries.
const MaxCQEs = qmem.MaxCQEs

// SendQueue is what the poller needs of a send queue: libmlx5's per-slot
// bookkeeping (sq.wrid, sq.wqe_head, sq.wr_data) and its tail.
type SendQueue interface {
	// Slots returns the number of WQEBBs in the ring (sq.wqe_cnt), a
	// power of two.
	Slots() uint32
	// Slot returns the bookkeeping of slot idx (< Slots()).
	Slot(idx uint32) (wrID uint64, wqeHead uint32, wrData uint32)
	// Retire sets the tail (sq.tail): work requests before it completed.
	Retire(tail uint32)
	// Ring returns the send ring's bytes, for inline scatter into an RDMA
	// READ's or atomic's SGEs; nil if the ring cannot be read.
	Ring() []byte
}

// RecvQueue is what the poller needs of a QP's receive queue.
type RecvQueue interface {
	// Slots returns the number of receive WQEs in the ring, a power of two.
	Slots() uint32
	// Consume returns the wr_id posted at slot idx (< Slots()) and moves
	// the tail on by one (libmlx5: ++rq.tail); false if no work request
	// is outstanding (the CQE is then unknown).
	Consume(idx uint32) (uint64, bool)
	// WQE returns the receive WQE at slot idx and whether it starts with
	// a signature segment (wq_sig), for inline scatter; nil if unknown.
	WQE(idx uint32) (wqe []byte, sig bool)
}

// SharedRecvQueue is what the poller needs of a shared receive queue.
type SharedRecvQueue interface {
	// Size returns the number of WQEs (srq.max); indexes are below it.
	Size() uint32
	// WRID returns the wr_id posted at WQE index idx (< Size()).
	WRID(idx uint32) uint64
	// Free puts WQE idx back on the free list (mlx5_free_srq_wqe);
	// false if it is not posted (the CQE is then unknown).
	Free(idx uint32) bool
	// RepostODP reposts WQE idx after an ODP page fault the device
	// reported on it (mlx5_complete_odp_fault); false if it cannot.
	RepostODP(idx uint32) bool
	// WQE returns the SRQ WQE at idx (next segment, then the data
	// segments), for inline scatter; nil if unknown.
	WQE(idx uint32) []byte
}

// QP is a queue pair (or a receive-only resource) registered on the CQ.
type QP struct {
	QPN  uint32 // looked up with cqe_version 0
	UIdx uint32 // user index, looked up with cqe_version 1
	RC   bool   // an RC QP: the only type with requester inline scatter
	// RxCsum says the QP reports IP checksum validity
	// (MLX5_RX_CSUM_VALID in qp_cap_cache).
	RxCsum bool
	SQ     SendQueue       // nil: no send queue
	RQ     RecvQueue       // nil: no receive queue of its own
	SRQ    SharedRecvQueue // the SRQ its receives use (cqe_version 1 finds it through the QP)
}

// Memory resolves an address in a scatter entry to bytes the poller may
// write: inline scatter copies a CQE's data to the addresses of the work
// request's SGEs, which must lie in memory the program registered.
type Memory interface {
	// Bytes returns the n bytes at addr, or nil if they are not all in
	// known memory.
	Bytes(addr uint64, n uint32) []byte
}

// Config describes a completion queue.
type Config struct {
	Mem        *qmem.Memory // CQ (ncqe entries of CQESize bytes) and CQDBR
	CQN        uint32
	CQEVersion int    // 0: QPs by QPN, SRQs by srqn; 1: by user index
	ConsIndex  uint32 // the software consumer index to start at (0 for a new CQ)
	ArmSN      uint32 // the arm sequence number to start at

	// DumpFillLKey is the device's dump-and-fill lkey (the null MR):
	// inline scatter skips SGEs that carry it.
	DumpFillLKey uint32

	// UAR is the CQ's doorbell register page (at least MLX5_CQ_DOORBELL
	// + 8 bytes); Device says it is a device mapping (runtime/mmio). nil:
	// Arm writes the doorbell record only.
	UAR    []byte
	Device bool

	// Scatter is the memory inline scatter writes to; nil: inline
	// scatter fails with IBV_WC_LOC_PROT_ERR (see Memory).
	Scatter Memory

	// Log, if set, is called where libmlx5 writes to its debug file
	// (an error CQE with its dump, a refused inline scatter). It must not
	// keep cqe, nor close or reconfigure this CQ.
	Log func(ev LogEvent, cqe []byte)

	// CloseWait bounds how long Close, and the Add and Remove calls, wait
	// for a poll in progress on another goroutine; 0 is DefaultCloseWait.
	CloseWait time.Duration
}

// DefaultCloseWait is how long Close waits for a poll in progress when
// Config.CloseWait is 0.
const DefaultCloseWait = 2 * time.Second

// LogEvent says why libmlx5 would write to its debug file.
type LogEvent int

const (
	LogErrorCQE      LogEvent = iota // "got completion with error" and the 64-byte dump
	LogScatterQPType                 // "scatter to CQE is supported only for RC QPs"
	LogScatterOpcode                 // "scatter to CQE for opcode %d" (the WQE's opcode in cqe[0])
)

// CQ is a completion queue poller.
//
// Concurrency: one goroutine at a time polls (Poll, StartPoll, NextPoll,
// EndPoll and the Read methods, Arm, Event, ConsIndex). It may run beside
// the goroutines writing the send and receive queues that complete here:
// the queues' bookkeeping is handed off through atomics (runtime/sq,
// runtime/rq), with no lock on the poll path. Close and the Add and
// Remove calls may be called from any goroutine at any time: they wait
// for a poll in progress (a Poll call, a StartPoll session until EndPoll)
// to end and keep the poller out while they run, so that no registration
// changes under it and no memory goes while it reads. Two goroutines
// polling at once are not supported: serialise them with a lock of your
// own.
type CQ struct {
	gate    gate.Gate  // the poller inside; Close and registration changes wait for it
	session bool       // a StartPoll session is open (the poller is inside)
	regMu   sync.Mutex // Add and Remove calls, one at a time
	wait    time.Duration
	buf     []byte
	ciRec   *[4]byte // the doorbell record's consumer index (MLX5_CQ_SET_CI)
	armRec  *[4]byte // and its arm word (MLX5_CQ_ARM_DB)
	uar     []byte
	device  bool
	sz      int    // CQE size, 64 or 128
	mask    uint32 // ncqe-1
	ci      uint32 // cons_index
	armSN   uint32
	cqn     uint32
	v1      bool
	dump    uint32
	scat    Memory
	log     func(LogEvent, []byte)

	qps   map[uint32]*QP // by QPN (v0) or user index (v1)
	srqs  map[uint32]SharedRecvQueue
	mkeys map[uint32]SigRecorder

	// libmlx5's cur_rsc / cur_srq: the last lookups of a poll.
	curQP  *QP
	curKey uint32
	curSRQ SharedRecvQueue
	curSN  uint32

	// the lazy (extended) session
	ex exState

	hot    hot  // the fast path's QP (fast.go)
	noFast bool // tests: every CQE takes the full path

	// scratch for an inline-scatter source assembled across the ring's end
	scratch [128]byte

	unk     UnknownError // the error of the last CQE that could not be attributed
	ownSh   uint32       // log2(ncqe): the owner bit of index n is bit ownSh of n
	szShift uint32       // log2(CQE size)
}

// New makes a poller on a CQ buffer written as mlx5_alloc_cq_buf leaves
// it (or by earlier polls, from Config.ConsIndex).
func New(c Config) (*CQ, error) {
	if c.Mem == nil {
		return nil, errors.New("cq: no queue memory")
	}
	if c.Mem.Closed() {
		return nil, fmt.Errorf("cq: %w", qmem.ErrClosed)
	}
	if err := barrier.Check(); err != nil {
		return nil, fmt.Errorf("cq: %w", err)
	}
	sz := c.Mem.CQESize
	if sz != 64 && sz != 128 {
		return nil, fmt.Errorf("cq: %d-byte CQEs (64 or 128)", sz)
	}
	n := len(c.Mem.CQ) / sz
	if n < 2 || n&(n-1) != 0 || n*sz != len(c.Mem.CQ) || n > MaxCQEs {
		return nil, fmt.Errorf("cq: a %d-byte CQ buffer is not a power of two (2 to %d) of %d-byte CQEs", len(c.Mem.CQ), MaxCQEs, sz)
	}
	if len(c.Mem.CQDBR) < 8 {
		return nil, errors.New("cq: the CQ doorbell record needs 8 bytes")
	}
	if c.CQEVersion != 0 && c.CQEVersion != 1 {
		return nil, fmt.Errorf("cq: cqe_version %d (0 or 1)", c.CQEVersion)
	}
	if c.UAR != nil && len(c.UAR) < mlx.MLX5_CQ_DOORBELL+8 {
		return nil, fmt.Errorf("cq: a %d-byte doorbell register has no CQ doorbell at %#x", len(c.UAR), mlx.MLX5_CQ_DOORBELL)
	}
	sh := uint32(0)
	for m := n; m > 1; m >>= 1 {
		sh++
	}
	return &CQ{ownSh: sh, szShift: uint32(6 + sz/128),
		buf: c.Mem.CQ, ciRec: (*[4]byte)(c.Mem.CQDBR[0:4]), armRec: (*[4]byte)(c.Mem.CQDBR[4:8]), uar: c.UAR, device: c.Device,
		sz: sz, mask: uint32(n - 1), ci: c.ConsIndex, armSN: c.ArmSN, cqn: c.CQN,
		v1: c.CQEVersion == 1, dump: c.DumpFillLKey, scat: c.Scatter, log: c.Log,
		qps: map[uint32]*QP{}, srqs: map[uint32]SharedRecvQueue{}, mkeys: map[uint32]SigRecorder{},
		wait: cmp.Or(c.CloseWait, DefaultCloseWait),
	}, nil
}

// change runs f with the poller kept out (Pause), under the registration
// lock: f may change what the poller reads. After Close there is no
// poller to keep out.
func (c *CQ) change(what string, f func() error) error {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	if err := c.gate.Pause(c.wait); err != nil {
		return fmt.Errorf("cq: CQ %#x: %s: %w", c.cqn, what, err)
	}
	defer c.gate.Resume()
	return f()
}

// AddQP registers a QP (mlx5_store_qp or mlx5_store_uidx), by its QPN with
// cqe_version 0 and by its user index with cqe_version 1. Its queues must
// not be replaced afterwards: Poll's fast path keeps the send queue of the
// QP it polled last.
func (c *CQ) AddQP(qp *QP) error {
	if qp == nil {
		return errors.New("cq: nil QP")
	}
	key := qp.QPN
	if c.v1 {
		key = qp.UIdx
	}
	if key > 0xffffff {
		return fmt.Errorf("cq: QP key %#x does not fit the CQE's 24 bits", key)
	}
	// A queue that is an interface holding nil (a nil *rq.RQ in the RQ
	// adapter, say) would panic at the first completion: refuse it now.
	switch {
	case qp.SQ != nil && nilQueue(qp.SQ):
		return fmt.Errorf("cq: QP %#x: the send queue (QP.SQ) is a nil queue; leave QP.SQ nil for none", key)
	case qp.RQ != nil && nilQueue(qp.RQ):
		return fmt.Errorf("cq: QP %#x: the receive queue (QP.RQ) is a nil queue; leave QP.RQ nil for none", key)
	case qp.SRQ != nil && nilQueue(qp.SRQ):
		return fmt.Errorf("cq: QP %#x: the shared receive queue (QP.SRQ) is a nil queue; leave QP.SRQ nil for none", key)
	}
	if qp.SQ != nil {
		if n := qp.SQ.Slots(); n == 0 || n&(n-1) != 0 {
			return fmt.Errorf("cq: QP %#x: a send queue of %d slots is not a power of two", key, n)
		}
	}
	if qp.RQ != nil {
		if n := qp.RQ.Slots(); n == 0 || n&(n-1) != 0 {
			return fmt.Errorf("cq: QP %#x: a receive queue of %d slots is not a power of two", key, n)
		}
	}
	return c.change("AddQP", func() error {
		if _, dup := c.qps[key]; dup {
			return fmt.Errorf("cq: QP key %#x registered twice", key)
		}
		c.flushRetire()
		c.qps[key] = qp
		c.curQP, c.hot = nil, hot{}
		return nil
	})
}

// nilQueue reports whether a queue interface holds nothing usable: one
// of this package's adapters over a nil writer, or a nil pointer.
func nilQueue(q any) bool {
	switch a := q.(type) {
	case SQ:
		return a.Q == nil
	case RQ:
		return a.Q == nil
	case SRQ:
		return a.Q == nil
	}
	v := reflect.ValueOf(q)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// ErrClosed is the error of Poll, StartPoll, NextPoll and Arm after
// Close.
var ErrClosed = gate.Closed("cq: the CQ is closed")

// Close detaches the poller from its CQ, before the CQ's memory is
// released (runtime/device calls it when its CQ is closed): every later
// Poll, StartPoll, NextPoll and Arm fails with ErrClosed and reads or
// writes nothing, and a poll in progress on another goroutine is waited
// for. Any goroutine may call it, at any time; it is idempotent. It fails
// only if a poll stays in progress longer than Config.CloseWait (a
// StartPoll session not ended, perhaps by the goroutine calling Close):
// the CQ's memory must then stay, and a later Close succeeds.
func (c *CQ) Close() error {
	if err := c.gate.Close(c.wait); err != nil {
		return fmt.Errorf("cq: CQ %#x: %w", c.cqn, err)
	}
	return nil
}

// RemoveQP takes out the QP registered under key (its QPN, or its user
// index with cqe_version 1), as mlx5_clear_qp does when a QP is
// destroyed; CQEs of it polled later find no QP. It reports whether one
// was registered. A poll in progress is waited for: when it returns, the
// poller no longer reads the QP's queues. It fails only as Close does.
func (c *CQ) RemoveQP(key uint32) (bool, error) {
	found := false
	err := c.change("RemoveQP", func() error {
		if _, found = c.qps[key]; found {
			c.flushRetire()
			delete(c.qps, key)
			c.curQP, c.hot = nil, hot{}
		}
		return nil
	})
	return found, err
}

// RemoveQPAfter is how a QP leaves its CQ when it is destroyed, in
// libmlx5's order (mlx5_destroy_qp): with the poller kept out (a poll in
// progress is waited for), destroy runs (the device's destruction of the
// QP: no CQE of it is written after), then the QP's CQEs still in the
// ring are removed (Clean) and the QP is unregistered (RemoveQP). If
// destroy fails, the QP stays registered and its error is returned.
// destroy may nest another CQ's RemoveQPAfter, for a QP on two CQs.
func (c *CQ) RemoveQPAfter(key uint32, destroy func() error) (bool, error) {
	found := false
	err := c.change("RemoveQP", func() error {
		if err := destroy(); err != nil {
			return err
		}
		if _, found = c.qps[key]; found && !c.gate.Closed() {
			c.clean(key)
		}
		if found {
			c.flushRetire()
			delete(c.qps, key)
			c.curQP, c.hot = nil, hot{}
		}
		return nil
	})
	return found, err
}

// AddSRQ registers a shared receive queue by its number (mlx5_store_srq);
// with cqe_version 1 an SRQ is found through its QP instead.
func (c *CQ) AddSRQ(srqn uint32, s SharedRecvQueue) error {
	if s == nil || srqn == 0 || srqn > 0xffffff {
		return fmt.Errorf("cq: SRQ %#x: needs a queue and a non-zero 24-bit number", srqn)
	}
	return c.change("AddSRQ", func() error {
		if _, dup := c.srqs[srqn]; dup {
			return fmt.Errorf("cq: SRQ %#x registered twice", srqn)
		}
		c.srqs[srqn] = s
		c.curSRQ = nil
		return nil
	})
}

// RemoveSRQ takes out the SRQ registered under srqn (mlx5_clear_srq);
// CQEs of it polled later find no SRQ. It reports whether one was
// registered.
func (c *CQ) RemoveSRQ(srqn uint32) (bool, error) {
	found := false
	err := c.change("RemoveSRQ", func() error {
		if _, found = c.srqs[srqn]; found {
			delete(c.srqs, srqn)
			c.curSRQ = nil
		}
		return nil
	})
	return found, err
}

// AddMkey registers an mkey with a signature context by its index
// (lkey >> 8), as mlx5_store_mkey does.
func (c *CQ) AddMkey(index uint32, m SigRecorder) error {
	if m == nil || index > 0xffffff {
		return fmt.Errorf("cq: mkey index %#x: needs an mkey and 24 bits", index)
	}
	return c.change("AddMkey", func() error {
		if _, dup := c.mkeys[index]; dup {
			return fmt.Errorf("cq: mkey index %#x registered twice", index)
		}
		c.mkeys[index] = m
		return nil
	})
}

// RemoveMkey takes out the mkey registered under index (mlx5_clear_mkey);
// a signature-error CQE naming it later is unknown. It reports whether one
// was registered.
func (c *CQ) RemoveMkey(index uint32) (bool, error) {
	found := false
	err := c.change("RemoveMkey", func() error {
		if _, found = c.mkeys[index]; found {
			delete(c.mkeys, index)
		}
		return nil
	})
	return found, err
}

// ConsIndex returns the software consumer index.
func (c *CQ) ConsIndex() uint32 { return c.ci }

// CQEs returns the number of entries in the ring.
func (c *CQ) CQEs() int { return int(c.mask) + 1 }

// entry returns the bytes of the ring entry at consumer index n and its
// 64-byte CQE (the second half of a 128-byte entry).
func (c *CQ) entry(n uint32) (off int, cqe []byte) {
	off = int(n&c.mask) * c.sz
	cqe = c.buf[off+c.sz-64 : off+c.sz : off+c.sz]
	return off, cqe
}

// nextCQE returns the next software-owned CQE, consuming it, or nil.
// rdma-core: mlx5_get_next_cqe (get_sw_cqe, next_cqe_sw).
func (c *CQ) nextCQE() (off int, cqe []byte) {
	off, cqe = c.entry(c.ci)
	own := cqe[63]
	if own>>4 == uint8(mlx.MLX5_CQE_INVALID) || own&1 != uint8(c.ci>>c.ownSh&1) {
		return 0, nil
	}
	c.ci++
	// Read the entry's body only after its ownership was seen.
	barrier.UDMAFromDeviceBarrier()
	return off, cqe
}

// updateConsIndex writes SET_CI. rdma-core: update_cons_index.
func (c *CQ) updateConsIndex() {
	mmio.Record32(c.ciRec, c.ci&0xffffff)
}

// Arm requests a completion event for the next completion (solicited
// false) or the next solicited one: the arm doorbell record, then the CQ
// doorbell. rdma-core: mlx5_arm_cq.
func (c *CQ) Arm(solicited bool) error {
	if !c.session { // in a session the poller is inside already
		// Not Enter: a caller may arm under a lock (the simulator's) that
		// a registration change waiting for the poller needs.
		ok, paused := c.gate.TryEnter()
		if !ok && paused {
			return ErrBusy
		}
		if !ok {
			return ErrClosed
		}
		defer c.gate.Leave()
	}
	sn := c.armSN & 3
	ci := c.ci & 0xffffff
	cmd := uint32(mlx.MLX5_CQ_DB_REQ_NOT)
	if solicited {
		cmd = mlx.MLX5_CQ_DB_REQ_NOT_SOL
	}
	word := sn<<28 | cmd | ci
	mmio.Record32(c.armRec, word)
	if c.uar == nil {
		return nil
	}
	var db [8]byte
	binary.BigEndian.PutUint32(db[0:4], word)
	binary.BigEndian.PutUint32(db[4:8], c.cqn)
	barrier.MMIOWCStart() // the record before the doorbell
	if err := mmio.Write(c.uar[mlx.MLX5_CQ_DOORBELL:mlx.MLX5_CQ_DOORBELL+8], db[:], c.device); err != nil {
		return err
	}
	barrier.MMIOFlushWrites()
	return nil
}

// ErrBusy is Arm's error while a registration change (AddQP, RemoveQP,
// Clean, ...) keeps the poller out: nothing was written; arm again.
var ErrBusy = errors.New("cq: the CQ's registrations are changing: arm again")

// Event counts a completion event the channel delivered for this CQ, so
// that the next Arm uses the next sequence number. rdma-core:
// mlx5_cq_event.
func (c *CQ) Event() { c.armSN++ }
