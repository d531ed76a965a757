// Package sq writes work requests into an mlx5 send queue: the ibv_wr_* and
// mlx5dv_wr_* builders and setters, in pure Go, with the bytes libmlx5
// writes (checked against rdma-core's own output in testdata/vectors by
// mlx5gen replay). It works on qmem.Memory, so the same code writes into
// plain memory or a device's mapped queue.
//
// Every call is checked first by the work-request state machine
// (runtime/internal/wrcheck), from the rules of the man pages; a call that breaks
// one returns a *mlx5dv.RuleError and writes nothing, and the batch it
// belongs to is rolled back by Complete. A full send queue is such an
// error too: nothing is written over an outstanding WQE. Posting does not
// allocate and does not call C.
//
// What the writer cannot see is the device's to report, with an error
// completion: a data work request names memory by lkey, and lkeys are not
// looked up. In particular an mkey created with
// MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO and used by a data work request before
// its crypto attributes are configured is posted as written, and the device
// fails that work request (rule mkey_configure.crypto_required in
// spec/RULES.md).
//
// Each method names the libmlx5 function it mirrors.
//
// Concurrency: one goroutine writes an SQ (Start to Complete or Abort,
// the builders and setters) while one other polls the CQ it completes to
// (runtime/cq, which calls Completed, Retire and reads Slots): the head,
// the tail and the slots are handed off through atomics, with no lock.
// Close may come from any goroutine at any moment and waits for a batch
// in progress. Two goroutines writing one SQ at once are not supported;
// serialise them with a lock of your own (docs/design.md, "Goroutines").
package sq

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/barrier"
	"github.com/mlx5gen/mlx5gen/runtime/internal/gate"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

const (
	wqebb = mlx.MLX5_SEND_WQE_BB

	smallFence = uint8(mlx.MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE) // 0x20
	fence      = uint8(mlx.MLX5_WQE_CTRL_FENCE)                 // 0x80
	ce         = uint8(mlx.MLX5_WQE_CTRL_CQ_UPDATE)             // 0x08
	se         = uint8(mlx.MLX5_WQE_CTRL_SOLICITED)             // 0x02

	// ibv_wc_opcode values libmlx5 keeps per WQE for its CQ poller.
	wrDataBindMW   = uint32(mlx.IBV_WC_BIND_MW)
	wrDataLocalInv = uint32(mlx.IBV_WC_LOCAL_INV)
	wrDataUMR      = uint32(mlx.IBV_WC_DRIVER1)
	wrDataRaw      = uint32(mlx.IBV_WC_DRIVER2)
	wrDataMemcpy   = uint32(mlx.IBV_WC_DRIVER3)

	opModMMODMA = 1 // MLX5_OPC_MOD_MMO_DMA (providers/mlx5/wqe.h)

	// maxCap bounds the QP's size capabilities: far above a device's,
	// low enough that sizes computed from them cannot overflow.
	maxCap = 1 << 24
)

// AH is an address handle: the address vector a DCI work request carries.
type AH struct {
	AV mlx.WQEAV
}

// DEK is a data encryption key; mlx5dv_crypto_attr.dek points at one.
type DEK struct {
	ObjectID uint32 // its DEVX object id
}

// MW is a memory window (ibv_wr_bind_mw).
type MW struct {
	RKey uint32
}

// MWBindInfo is struct ibv_mw_bind_info.
type MWBindInfo struct {
	LKey        uint32 // the MR's lkey
	Addr        uint64
	Length      uint64
	AccessFlags mlx.AccessFlags
}

// Slot is what the CQ poller needs of the WQE that starts at a WQEBB.
type Slot struct {
	WRID    uint64 // the caller's wr_id
	WQEHead uint32 // the work request counter: head + the WQE's place in its batch
	// WRData is the completion opcode (ibv_wc_opcode) of work requests
	// whose CQE does not tell it; 0 otherwise. libmlx5 keeps it in 32
	// bits; every value it stores fits 16.
	WRData uint16
	// Opcode is the WQE's opcode as posted: an error CQE does not carry
	// it (libmlx5 reports IBV_WC_SEND for every error completion), so the
	// poller reads it here to say what failed.
	Opcode uint8
	_      uint8
}

// Doorbell is what the last successful Complete did to tell the device.
type Doorbell struct {
	Rung      bool // the doorbell record was updated
	BlueFlame bool // the WQE was copied to the BlueFlame register (else an 8-byte doorbell)
	Offset    int  // offset in the BlueFlame window
	Length    int  // bytes written there
}

// SQ is a send queue writer.
//
// Concurrency: one goroutine at a time writes (Start, the builders and
// setters, Complete, Abort, the Post forms, SetWRID, SetWRFlags, and
// the accessors of the writer's own state: CurPost, FmCache, BFOffset,
// Last, Slots). While it does, one other goroutine may poll the CQ this
// queue completes to: the poller's calls (Completed, Retire, Head,
// Outstanding, and reading Slots of posted work requests) hand off
// through atomics, not a lock: the writer publishes its head before the
// doorbell, the poller its tail; the writer reads the tail again only
// when the ring looks full. Close may be called from any goroutine at any
// time: it waits for a batch in progress (Start to Complete or Abort, or
// one Post call) to end. Two goroutines writing at once are not
// supported: serialise them with a lock of your own.
type SQ struct {
	ring    unsafe.Pointer
	mem     *qmem.Memory
	qend    int
	n       uint32 // WQEBBs in the ring
	mask    uint32
	maxPost int // QP.MaxPost, or the largest int
	qpn     uint32
	dci     bool
	xts     bool  // QP.CryptoMultiBlock: the tweak in the multi-block engine's byte order
	sig     uint8 // sq_signal_bits
	bf      BlueFlame
	bfOff   int
	// bfMax is the largest WQE, in 16-byte units, that a batch of one
	// copies to the BlueFlame register: 0 when the QP never does
	// (ShutUpBF, no UUAR); computed once, as the configuration fixes it.
	bfMax int
	db8   unsafe.Pointer // the register's first byte, when Complete may store the 8-byte doorbell itself (New)
	pd    PD

	// head and tail are the writer's: the work requests it posted, and
	// the poller's tail as the writer last read it (pub.tail is ahead of
	// it or equal: the writer reads it again when the ring looks full).
	curPost, head, tail uint32
	fmCache             uint8
	closeWait           time.Duration

	wrID    uint64
	wrFlags uint32

	// the batch
	rbFmCache uint8   // fmCache at Start, for rollback
	nreq      uint32  // work requests written in this batch, SET_PSVs included; 0 between batches
	inl       bool    // an inline setter or an mkey configuration ran (BlueFlame)
	curCtrl   int     // offset of the WQE being built
	curData   int     // where its next segment goes
	curSize   int     // its size so far, in 16-byte units (ds)
	umr       umrSegs // the open mkey configuration's UMR fields, written when it finishes
	sigImg    sigCache

	// start[w & mask] is the producer index at which work request w
	// starts, for the outstanding ones; limit is the producer index WQEs
	// must stay below: the start of the oldest one, plus the ring's size.
	start []uint32
	limit uint32
	// startp and slotp are &start[0] and &Slots[0], for claim, which
	// must stay small enough to inline.
	startp, slotp unsafe.Pointer
	// fastEnd bounds the fast paths (fast.go): while curPost is below it,
	// a work request of one WQEBB or more fits both the ring (limit) and
	// max_post, so a fast builder tests one word where it tested both.
	// Each work request moves curPost on by at least one WQEBB and counts
	// one against max_post, so a value computed once stays safe as the
	// batch grows (it only errs low, and the general path then refreshes
	// it); resetLimit computes it. On a DCI it is curPost (fastMax is 0):
	// the fast paths do not write an address vector.
	fastEnd uint32
	fastMax int // maxPost, or 0 on a DCI: resetLimit's bound on fastEnd

	// Per WQEBB, what libmlx5 keeps for its CQ poller, at the slot where
	// a WQE starts. The writer keeps its own pointer to the array (slotp):
	// read it, do not replace it.
	Slots []Slot

	// Last is what the last Complete did to tell the device.
	Last Doorbell

	// fcs is the fm_ce_se the QP's sq_sig_all and the current wr_flags
	// give a WQE; keepFm is 0 when those flags fence (the cached fence is
	// replaced), 0xff otherwise. SetWRFlags computes them.
	fcs, keepFm uint8
	// fcsWord is fcs as a run's WQEs store it (ctrl bytes 8..11, the
	// device's byte order), and qpnDs3 the ctrl segment's second word of a
	// one-SGE RDMA write (QPN, ds 3), as a value and as stored: the
	// writes' fast paths store them as they are, not shifted, ORed and
	// swapped again every work request.
	fcsWord    mlx.BE32
	qpnDs3     uint64
	qpnDs3Word mlx.BE32
	sndDBR     unsafe.Pointer // &mem.DBR[4]: the send doorbell record (MLX5_SND_DBR)
	oneOK      uint8          // the one-call forms' builders whole with an SGE and offered with the current wr_flags (setOneOK)

	chk wrcheck.Chain // the rules; it owns the batch's open/error state and the mkeys'

	// What the writer and the poller hand each other, each word on a
	// cache line of its own: the writer's published head, the poller's
	// tail; and the gate Close waits at.
	pub struct {
		head gate.Word // the writer's, beside its gate mark
		gate gate.Gate
		_    [52]byte
		tail gate.Word // the poller's, on a line of its own
		_    [60]byte
	}
}

// New makes a writer for a send queue, empty or with outstanding work
// requests (Config.Head, Tail and Starts).
func New(c Config) (*SQ, error) {
	if c.Mem == nil {
		return nil, errors.New("sq: no queue memory")
	}
	if err := barrier.Check(); err != nil {
		return nil, fmt.Errorf("sq: %w", err)
	}
	if err := c.Mem.Check(); err != nil {
		return nil, err
	}
	if c.BF.Size < 0 || c.BF.Size%wqebb != 0 || c.Mem.BFSize < c.BF.Size {
		return nil, fmt.Errorf("sq: BlueFlame halves of %d bytes need a register with halves that large (have %d)", c.BF.Size, c.Mem.BFSize)
	}
	if c.QP.Type != mlx.QPRC && c.QP.Type != mlx.QPDCI {
		return nil, fmt.Errorf("sq: QP type %v is not supported (RC and DCI are)", c.QP.Type)
	}
	if c.QP.Streams && c.QP.Type != mlx.QPDCI {
		return nil, errors.New("sq: only a DCI has streams")
	}
	if q := &c.QP; q.MaxInlineData < 0 || q.MaxInlineData > maxCap || q.MaxSendSGE < 0 || q.MaxSendSGE > maxCap ||
		q.MaxPost < 0 || q.LogNumConcurent < 0 || q.LogNumConcurent > 16 {
		return nil, fmt.Errorf("sq: QP capabilities out of range (max_inline_data %d, max_send_sge %d, max_post %d, log_num_concurent %d)",
			q.MaxInlineData, q.MaxSendSGE, q.MaxPost, q.LogNumConcurent)
	}
	if err := checkWQESizes(&c.QP); err != nil {
		return nil, err
	}
	if c.QP.MaxMemcpy > 1<<31 {
		// A memcpy's data segments count bytes in 32 bits, 0 meaning 2 GiB.
		return nil, fmt.Errorf("sq: max_wr_memcpy_length %d is above the 2 GiB a memcpy WQE can move", c.QP.MaxMemcpy)
	}
	n := c.Mem.WQEBBs()
	qp := wrcheck.QP(c.QP) // the checker keeps its own copy
	q := &SQ{
		ring: c.Mem.SQBase(), mem: c.Mem, qend: n * wqebb, n: uint32(n), mask: uint32(n - 1),
		maxPost: c.QP.MaxPost,
		qpn:     c.QPN, qpnDs3: uint64(c.QPN<<8 | (2 + mlx.WQERaddrSegSize/16)),
		dci: c.QP.Type == mlx.QPDCI, xts: c.QP.CryptoMultiBlock, bf: c.BF, pd: c.PD,
		curPost: c.CurPost, head: c.Head, tail: c.Tail, fmCache: c.FmCache,
		start:     make([]uint32, n),
		Slots:     make([]Slot, n),
		closeWait: c.CloseWait,
	}
	q.qpnDs3Word = mlx.ToBE32(uint32(q.qpnDs3))
	if q.closeWait <= 0 {
		q.closeWait = DefaultCloseWait
	}
	q.pub.head.Publish(c.Head)
	q.pub.tail.Publish(c.Tail)
	if q.maxPost == 0 {
		q.maxPost = int(^uint(0) >> 1)
	}
	if !q.dci {
		q.fastMax = q.maxPost
	}
	if err := q.outstanding(&c); err != nil {
		return nil, err
	}
	q.resetLimit()
	if c.SigAll {
		q.sig = ce
	}
	q.sndDBR = unsafe.Pointer(&c.Mem.DBR[4])
	q.startp, q.slotp = unsafe.Pointer(unsafe.SliceData(q.start)), unsafe.Pointer(unsafe.SliceData(q.Slots))
	// The 8-byte doorbell as one inlined store where mmio.Write8 would
	// make that store: both halves of the register inside it, and the
	// ring's WQEs 8-byte aligned (the ctrl segment is the source).
	if bf := c.Mem.BF; mmio.Direct8(bf, c.Mem.Device) && q.bf.Size%8 == 0 && len(bf) >= q.bf.Size+8 &&
		uintptr(q.ring)%8 == 0 {
		q.db8 = unsafe.Pointer(unsafe.SliceData(bf))
	}
	if !q.bf.ShutUpBF && q.bf.UUARN != 0 {
		q.bfMax = q.bf.Size / 16
	}
	q.chk.Init(&qp)
	_ = q.SetWRFlags(0) // 0 is always valid
	return q, nil
}

// CurPost returns the producer index in WQEBBs (unmasked, 32-bit).
func (q *SQ) CurPost() uint32 { return q.curPost }

// FmCache returns the fence cached for the next WQE.
func (q *SQ) FmCache() uint8 { return q.fmCache }

// BFOffset returns the half of the BlueFlame register the next doorbell
// uses.
func (q *SQ) BFOffset() int { return q.bfOff }

// SetWRID sets ibv_qp_ex.wr_id for the next builders.
func (q *SQ) SetWRID(id uint64) { q.wrID = id }

// SetWRFlags sets ibv_qp_ex.wr_flags (ibv_send_flags) for the next
// builders. A bit outside enum ibv_send_flags (rule ibv_wr.flags, checked
// by the work-request state machine) is refused with a *mlx5dv.RuleError
// and the flags stay as they were; inside a batch the error is latched
// too, so the batch fails at Complete as after a failing builder, even if
// the caller drops it.
func (q *SQ) SetWRFlags(f mlx.SendFlags) error {
	if err := q.chk.WRFlags(mlx.FnQPToQPEx, f); err != nil {
		return err
	}
	q.wrFlags = uint32(f)
	q.chk.EndRun() // a run's work requests take the flags the first one found
	q.fcs, q.keepFm = q.sig, 0xff
	if f&mlx.IBV_SEND_FENCE != 0 {
		q.fcs, q.keepFm = q.fcs|fence, 0
	}
	if f&mlx.IBV_SEND_SIGNALED != 0 {
		q.fcs |= ce
	}
	if f&mlx.IBV_SEND_SOLICITED != 0 {
		q.fcs |= se
	}
	q.fcsWord = mlx.ToBE32(uint32(q.fcs))
	q.setOneOK()
	return nil
}

// --- ring access

func (q *SQ) at(off int) unsafe.Pointer { return unsafe.Add(q.ring, off) }

func (q *SQ) bytes(off, n int) []byte { return unsafe.Slice((*byte)(q.at(off)), n) }

func (q *SQ) wrap(off int) int {
	if off == q.qend {
		return 0
	}
	return off
}

// copyWrap copies data to off, continuing at the start of the ring when it
// reaches the end; it returns the offset after the data.
func (q *SQ) copyWrap(off int, data []byte) int {
	if n := q.qend - off; len(data) > n {
		copy(q.bytes(off, n), data[:n])
		data, off = data[n:], 0
	}
	copy(q.bytes(off, len(data)), data)
	return off + len(data)
}

func (q *SQ) ctrl() *mlx.WQECtrlSeg { return (*mlx.WQECtrlSeg)(q.at(q.curCtrl)) }

// room checks that a WQE of size bytes fits at the producer index without
// reaching a WQEBB the device has not consumed; if not, it fails the batch
// with the sq_room rule. The work-request budget (max_post) keeps the ring
// safe only while no WQE is larger than the QP's max WQE size; this keeps
// it safe for every WQE.
func (q *SQ) room(fn mlx.Func, size int) error {
	if free, need := int(int32(q.limit-q.curPost)), (size+wqebb-1)/wqebb; free < need {
		if q.refresh() {
			return q.room(fn, size)
		}
		return q.chk.NoRoom(fn, need, free)
	}
	return nil
}

// budget checks that n more work requests fit the QP's max_post, with
// those outstanding and those of the batch (libmlx5's mlx5_wq_overflow);
// if not, it fails the batch with the sq_room rule.
func (q *SQ) budget(fn mlx.Func, n int) error {
	if q.fits(n) {
		return nil
	}
	return q.overBudget(fn, n)
}

// overBudget is budget's failure, out of line so that budget inlines
// into the builders.
//
//go:noinline
func (q *SQ) overBudget(fn mlx.Func, n int) error {
	if q.refresh() && q.fits(n) {
		return nil
	}
	return q.chk.TooMany(fn, q.used(n), q.maxPost)
}

// used is the number of work requests outstanding and in the batch, plus n.
func (q *SQ) used(n int) int { return int(q.head-q.tail+q.nreq) + n }

// fits reports whether n more work requests fit max_post.
func (q *SQ) fits(n int) bool { return q.used(n) <= q.maxPost }

// resetLimit recomputes limit: the producer index at the start of the
// oldest WQE in flight (posted or built), plus the ring's size; and
// fastEnd from it.
func (q *SQ) resetLimit() {
	lim := q.curPost + q.n
	if q.head+q.nreq != q.tail {
		lim = q.start[q.tail&q.mask] + q.n
	}
	q.limit = lim
	room := min(int(int32(lim-q.curPost)), q.fastMax-q.used(0))
	q.fastEnd = q.curPost + uint32(max(room, 0))
}

// --- batches

// Start opens a batch. rdma-core: mlx5_send_wr_start.
func (q *SQ) Start() error {
	if err := q.chk.Start(); err != nil {
		return err // a batch is open (and inside): the checker's error
	}
	if !q.pub.gate.EnterFast() && !q.pub.gate.Enter() {
		q.chk.Abort()
		return ErrClosed
	}
	// The poller's tail is not read here: every room check reads it again
	// when the ring looks full (room, budget, quick, the burst's and the
	// template's), so a batch pays for it only then. nreq is 0 already
	// (every way out of a batch leaves it so) and rollback finds the
	// producer index the batch started at in start: what Start does not
	// store is what a doorbell each pays per work request (issue 26).
	q.inl = false
	q.rbFmCache = q.fmCache
	return nil
}

// Abort discards the batch. rdma-core: mlx5_send_wr_abort.
func (q *SQ) Abort() {
	if q.chk.Abort() {
		q.rollback()
		q.pub.gate.Leave()
	}
}

// rollback forgets the WQEs the batch wrote: the producer index goes
// back to where its first work request started (claim and book record
// it in start before writing the WQE; a batch holds fewer work requests
// than start has entries), or stays if it wrote none.
func (q *SQ) rollback() {
	if q.nreq != 0 {
		q.curPost = q.start[q.head&q.mask]
	}
	q.fmCache, q.nreq = q.rbFmCache, 0
	q.resetLimit()
}

// Complete posts the batch: it updates the doorbell record and rings the
// doorbell (or copies the WQE to the BlueFlame register). If any call of
// the batch broke a rule it posts nothing, rolls the producer index back
// and returns that error. rdma-core: mlx5_send_wr_complete.
//
// Then it tells the device about the batch's work requests
// (ringDoorbell). rdma-core: post_send_db, with its fences:
// udma_to_device_barrier before the doorbell record, mmio_wc_start before
// the register (which orders the record before it too), mmio_flush_writes
// after. It fails then only if the doorbell register cannot be written
// (runtime/mmio); the batch is posted in the ring and the doorbell record
// by then.
func (q *SQ) Complete() error {
	if !q.chk.TryComplete() {
		if open, err := q.chk.Complete(mlx.FnWRComplete); err != nil {
			return q.completeFailed(open, err)
		}
	}
	nreq := q.nreq
	if nreq == 0 {
		q.Last = Doorbell{}
		q.pub.gate.Leave()
		return nil
	}
	q.nreq = 0
	if q.db8 != nil && !q.blueFlameWanted(nreq) {
		// ringDoorbell's common case, here: a call fewer per batch (a
		// doorbell each pays it per work request).
		q.head += nreq
		q.pub.head.Publish(q.head)
		off := q.bfOff
		barrier.Doorbell8(q.db8Args(off))
		q.rung8(off)
		return nil
	}
	return q.ringDoorbell(nreq)
}

// completeFailed is Complete's case of a batch that broke a rule.
func (q *SQ) completeFailed(open bool, err error) error {
	if open {
		q.rollback()
		q.pub.gate.Leave()
	}
	q.Last = Doorbell{}
	return err
}

// initWQE starts a WQE with opcode at the producer index: the ctrl
// segment's first word, bytes 8..11 (signature, stream id, fence and
// completion bits), and the bookkeeping. rdma-core: _common_wqe_init_op.
func (q *SQ) initWQE(opcode mlx.Opcode, wrData uint32, flags uint32) {
	slot := q.curPost & q.mask
	q.book(slot, wrData, uint8(opcode))
	q.curCtrl = int(slot) * wqebb
	c := q.ctrl()
	c.SetOpmodIdxOpcode(uint32(uint16(q.curPost))<<8 | uint32(opcode))
	// Bytes 8..11 in one store: signature 0, stream id 0, fm_ce_se.
	*(*mlx.BE32)(unsafe.Pointer(&c[8])) = mlx.ToBE32(uint32(q.fenceCEFlags(flags)))
}

// fenceCE consumes the cached fence and returns a WQE's fm_ce_se for
// the current wr_flags.
func (q *SQ) fenceCE() uint8 { return q.fenceCEFlags(q.wrFlags) }

// fenceCEFlags is fenceCE for flags: an explicit fence replaces the
// cached small fence; CE comes from sq_sig_all or SIGNALED, SE from
// SOLICITED.
func (q *SQ) fenceCEFlags(flags uint32) uint8 {
	f := q.fmCache
	if flags&uint32(mlx.IBV_SEND_FENCE) != 0 {
		f = fence
	}
	q.fmCache = 0
	fcs := q.sig | f
	if flags&uint32(mlx.IBV_SEND_SIGNALED) != 0 {
		fcs |= ce
	}
	if flags&uint32(mlx.IBV_SEND_SOLICITED) != 0 {
		fcs |= se
	}
	return fcs
}

// book records the bookkeeping of the WQE starting at slot, and counts
// its work request.
func (q *SQ) book(slot, wrData uint32, opcode uint8) {
	w := q.head + q.nreq
	if w == q.tail {
		q.limit = q.curPost + q.n // the oldest WQE in flight
	}
	// Both have mask+1 entries (New): no bounds checks. The Slot in two
	// stores, as claim writes it (through setSlot, book would not inline).
	*(*uint32)(unsafe.Add(q.startp, uintptr(w&q.mask)*4)) = q.curPost
	*(*[2]uint64)(unsafe.Add(q.slotp, uintptr(slot)*16)) = [2]uint64{q.wrID, uint64(w)<<slotHeadShift | uint64(wrData)<<slotDataShift | uint64(opcode)<<slotOpShift}
	q.nreq++
}

// finalize writes the WQE's size and moves the producer index past it.
// rdma-core: _common_wqe_finalize.
func (q *SQ) finalize() {
	q.ctrl().SetQPNDS(q.qpn<<8 | uint32(q.curSize))
	q.curPost += uint32(q.curSize+3) / 4
}
