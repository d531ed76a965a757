package rq

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/internal/gate"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"
)

const (
	nextSize = mlx.WQESRQNextSegSize // the next segment that starts an SRQ WQE

	// MaxSRQWQEs bounds a shared receive queue: WQE indexes are 16-bit
	// (next_wqe_index, a CQE's wqe_counter).
	MaxSRQWQEs = 1 << 16
)

// What a WQE of the SRQ is to the writer.
const (
	wqeFree     uint8 = iota // on the free list
	wqePosted                // posted, not yet retired
	wqeReserved              // neither: the wait queue past Tail at Init
)

// SRQConfig describes a shared receive queue, as mlx5dv_init_obj reports
// it (mlx5dv_srq: buf, dbrec, stride, head, tail).
type SRQConfig struct {
	Mem    Memory
	Stride int // bytes per WQE: 1 << wqe_shift, 32 at least (mlx5dv_srq.stride)

	// The free list runs from Head to Tail, following each WQE's
	// next_wqe_index. For a new SRQ: Head 0 and Tail the WQE count - 1,
	// or, when libmlx5 kept a wait queue, align(max_wr + 1) - 1.
	Head, Tail uint16
	Counter    uint16 // WQEs posted so far (srq->counter, the doorbell record's value)

	// Init lays the SRQ out in its memory as mlx5_alloc_srq_buf and
	// mlx5_create_srq do for a new one: the ring zeroed, WQEs Head to
	// Tail linked in order into the free list, WQEs past Tail linked into
	// the wait queue when WaitQueue is set (the writer never posts
	// those), and the doorbell record set to Counter. Without Init, the
	// list is read from the ring, and every WQE not on it counts as
	// posted.
	Init      bool
	WaitQueue bool

	// CloseWait bounds how long Close waits for a call in progress on
	// another goroutine; 0 is DefaultCloseWait.
	CloseWait time.Duration
}

// SRQ writes receive WQEs into a shared receive queue and keeps its free
// list. Posting (Post, PostList) and the pollers' calls (Retire,
// RepostODP, WRID) take the SRQ's lock, as libmlx5 holds its SRQ lock
// around posting and freeing: several CQs may complete its receives, each
// polled on its own goroutine. Close waits for a call in progress.
type SRQ struct {
	ring    []byte
	dbr     *[4]byte
	stride  int
	n       int
	maxGS   int
	head    uint16
	tail    uint16
	counter uint16
	wrid    []uint64 // srq->wrid, by WQE index
	state   []uint8  // wqeFree, wqePosted or wqeReserved, by WQE index

	// The wait queue (srq->waitq_head, waitq_tail) of an SRQ laid out by
	// Init with WaitQueue, where an ODP-faulted WQE cools down; waitq is
	// false without one.
	waitq              bool
	waitqHead, waitqTl uint16

	// mu serialises the writer and the pollers of the CQs whose QPs
	// receive through the SRQ (several, possibly, each on its goroutine),
	// as libmlx5's SRQ lock does: both change the free list. gate lets
	// Close wait for a call in progress.
	mu   sync.Mutex
	gate gate.Gate
	wait time.Duration

	errv mlx.RuleError
	rerr RetireError
	lerr ListError
}

// ListError is a post the SRQ refused because the WQE at the head of its
// free list links to a WQE that is not free: memory shared with other
// code was changed. It is the SRQ's until its next such refusal.
type ListError struct {
	WQE, Next, WQEs uint32
}

func (e *ListError) Error() string {
	return fmt.Sprintf("rq: the SRQ's free list is corrupt: WQE %d links to %d, which is not a free WQE of the %d", e.WQE, e.Next, e.WQEs)
}

// NewSRQ makes a writer for a shared receive queue.
func NewSRQ(c SRQConfig) (*SRQ, error) {
	n, err := c.Mem.check("shared receive queue", c.Stride, 2*nextSize, MaxSRQWQEs)
	if err != nil {
		return nil, err
	}
	if int(c.Head) >= n || int(c.Tail) >= n {
		return nil, fmt.Errorf("rq: free list head %d or tail %d outside the %d WQEs", c.Head, c.Tail, n)
	}
	s := &SRQ{
		ring: c.Mem.Ring, dbr: c.Mem.DBR, stride: c.Stride, n: n,
		maxGS: (c.Stride - nextSize) / segSize, head: c.Head, tail: c.Tail, counter: c.Counter,
		wrid: make([]uint64, n), state: make([]uint8, n), wait: c.CloseWait,
	}
	if s.wait <= 0 {
		s.wait = DefaultCloseWait
	}
	if c.Init {
		if c.Head > c.Tail {
			return nil, fmt.Errorf("rq: a new SRQ's free list runs from head %d up to tail %d", c.Head, c.Tail)
		}
		s.init(c.WaitQueue)
		if c.WaitQueue && int(c.Tail)+1 < n {
			s.waitq, s.waitqHead, s.waitqTl = true, c.Tail+1, uint16(n-1)
		}
		return s, nil
	}
	if c.WaitQueue {
		return nil, fmt.Errorf("rq: WaitQueue is for Init: an existing SRQ's list is read from its ring")
	}
	return s, s.readList()
}

// init writes a new SRQ's memory, as mlx5_alloc_srq_buf (memset, then
// set_srq_buf_ll over the free list and the wait queue): WQE i points at
// i + 1, but for the last of each list, whose link is never followed.
func (s *SRQ) init(waitq bool) {
	clear(s.ring)
	for i := range s.state {
		s.state[i] = wqeReserved
	}
	for i := int(s.head); i <= int(s.tail); i++ {
		s.state[i] = wqeFree
		if i < int(s.tail) {
			s.setNext(i, uint16(i+1))
		}
	}
	if waitq {
		for i := int(s.tail) + 1; i < s.n-1; i++ {
			s.setNext(i, uint16(i+1))
		}
	}
	mmio.Record32(s.dbr, uint32(s.counter))
}

// readList walks an existing free list from head to tail; WQEs not on it
// are posted. A list that leaves the ring or loops is refused.
func (s *SRQ) readList() error {
	for i := range s.state {
		s.state[i] = wqePosted
	}
	i := s.head
	for steps := 0; ; steps++ {
		if steps == s.n || s.state[i] == wqeFree {
			return fmt.Errorf("rq: the SRQ's free list from %d loops before reaching tail %d", s.head, s.tail)
		}
		s.state[i] = wqeFree
		if i == s.tail {
			return nil
		}
		next := s.next(int(i))
		if int(next) >= s.n {
			return fmt.Errorf("rq: WQE %d of the SRQ's free list points at %d, outside the %d WQEs", i, next, s.n)
		}
		i = next
	}
}

func (s *SRQ) wqe(i int) []byte {
	off := i * s.stride
	return s.ring[off : off+s.stride : off+s.stride]
}

func (s *SRQ) next(i int) uint16 {
	return (*mlx.WQESRQNextSeg)(s.wqe(i)[:nextSize]).NextWQEIndex()
}

func (s *SRQ) setNext(i int, v uint16) {
	(*mlx.WQESRQNextSeg)(s.wqe(i)[:nextSize]).SetNextWQEIndex(v)
}

// MaxGS returns how many SGEs a work request may have (srq->max_gs).
func (s *SRQ) MaxGS() int { return s.maxGS }

// Head returns the free list's head: the WQE the next work request takes.
func (s *SRQ) Head() uint16 { return s.head }

// Tail returns the free list's tail: where Retire links a freed WQE.
func (s *SRQ) Tail() uint16 { return s.tail }

// Counter returns the WQEs posted so far, modulo 2^16.
func (s *SRQ) Counter() uint16 { return s.counter }

// Close detaches the writer from its SRQ, before the SRQ's memory is
// released (runtime/device calls it when its SRQ is closed): every later
// Post, PostList and poller call fails (ErrClosed; the poller's calls
// report nothing posted) and writes nothing, and a call in progress on
// another goroutine is waited for. Any goroutine may call it, at any
// time; it is idempotent. It fails only if a call stays in progress
// longer than SRQConfig.CloseWait: the memory must then stay.
func (s *SRQ) Close() error {
	if err := s.gate.Close(s.wait); err != nil {
		return fmt.Errorf("rq: SRQ: %w", err)
	}
	return nil
}

// enter takes the SRQ for a call: its lock, then the gate (false once
// closed, with neither held).
func (s *SRQ) enter() bool {
	s.mu.Lock()
	if !s.gate.Enter() {
		s.mu.Unlock()
		return false
	}
	return true
}

func (s *SRQ) leave() {
	s.gate.Leave()
	s.mu.Unlock()
}

// Post posts one work request: all of it, or nothing and an error.
// rdma-core: mlx5_post_srq_recv with a one-element list.
func (s *SRQ) Post(wrID uint64, sges []SGE) error {
	if !s.enter() {
		return ErrClosed
	}
	defer s.leave()
	next, err := s.check(0, sges)
	if err != nil {
		return err
	}
	s.write(wrID, sges, next)
	s.counter++
	ringDBR(s.dbr, uint32(s.counter))
	return nil
}

// PostList posts a list as ibv_post_srq_recv does: in order, stopping at
// the first work request that fails its checks, which writes nothing. It
// returns how many were posted and the error; the doorbell record is
// updated once, for the ones posted. rdma-core: mlx5_post_srq_recv.
func (s *SRQ) PostList(wrs []RecvWR) (int, error) {
	if !s.enter() {
		return 0, ErrClosed
	}
	defer s.leave()
	var err error
	n := 0
	for i := range wrs {
		var next uint16
		if next, err = s.check(i, wrs[i].SGEs); err != nil {
			break
		}
		s.write(wrs[i].WRID, wrs[i].SGEs, next)
		n++
	}
	if n > 0 {
		s.counter += uint16(n)
		ringDBR(s.dbr, uint32(s.counter))
	}
	return n, err
}

// check is libmlx5's order of checks: the SGE count (then the SGE
// lengths, which libmlx5 does not check), then a WQE left on the free
// list (head reaching tail means full). It also checks the link
// the head's WQE holds, which the device could not have changed but
// memory shared with other code could; it returns that link.
func (s *SRQ) check(wr int, sges []SGE) (uint16, error) {
	if len(sges) > s.maxGS {
		return 0, ruleErr(&s.errv, mlx5rules.ChainRQSGECount, mlx.FnPostSRQRecv, wr,
			"num_sge", mlx.TestMax, uint64(len(sges)), uint64(s.maxGS), "max_gs")
	}
	if err := sgeLengths(&s.errv, mlx.FnPostSRQRecv, wr, sges); err != nil {
		return 0, err
	}
	if s.head == s.tail {
		return 0, ruleErr(&s.errv, mlx5rules.ChainRQRoom, mlx.FnPostSRQRecv, wr,
			"free WQEs", mlx.TestMin, 0, 1, "")
	}
	next := s.next(int(s.head))
	if int(next) >= s.n || s.state[next] != wqeFree {
		s.lerr = ListError{WQE: uint32(s.head), Next: uint32(next), WQEs: uint32(s.n)}
		return 0, &s.lerr
	}
	return next, nil
}

// write fills the WQE at the head of the free list and moves the head to
// next. Unlike the receive queue, every SGE is written, zero-length or not.
func (s *SRQ) write(wrID uint64, sges []SGE, next uint16) {
	ind := int(s.head)
	s.wrid[ind] = wrID
	s.state[ind] = wqePosted
	scat := s.wqe(ind)[nextSize:]
	for i := range sges {
		g := &sges[i]
		dataSeg(scat[i*segSize:], g.Length, g.LKey, g.Addr)
	}
	if len(sges) < s.maxGS {
		endSeg(scat[len(sges)*segSize:])
	}
	s.head = next
}

// Retire is what the CQ poller does for a completion of the SRQ whose
// wqe_counter is ind: it returns the WQE's wr_id and puts the WQE back at
// the tail of the free list (v44: wr_id = srq->wrid[wqe_ctr], then
// mlx5_free_srq_wqe). It fails, changing nothing, for a WQE that is not
// posted.
func (s *SRQ) Retire(ind uint16) (uint64, error) {
	if !s.enter() {
		return 0, ErrClosed
	}
	defer s.leave()
	if int(ind) >= s.n || s.state[ind] != wqePosted {
		s.rerr = RetireError{SRQ: true, WQE: uint32(ind), WQEs: uint32(s.n)}
		return 0, &s.rerr
	}
	s.setNext(int(s.tail), ind)
	s.tail = ind
	s.state[ind] = wqeFree
	return s.wrid[ind], nil
}

// WRID returns the wr_id kept for WQE ind (0 outside the ring).
func (s *SRQ) WRID(ind uint16) uint64 {
	if int(ind) >= s.n {
		return 0
	}
	s.mu.Lock() // written by Post, maybe on another goroutine
	defer s.mu.Unlock()
	return s.wrid[ind]
}

// Scatter returns the data segments of WQE ind, after its next segment:
// max_gs segments of 16 bytes (nil outside the ring). The CQ poller
// copies data scattered to the CQE through them (mlx5_copy_to_recv_srq);
// v44 reads 1 << (wqe_shift - 4) segments from there, one more than the
// WQE holds.
func (s *SRQ) Scatter(ind uint16) []byte {
	if int(ind) >= s.n {
		return nil
	}
	return s.wqe(int(ind))[nextSize:]
}

// WQEs returns the number of WQEs in the ring (srq->max).
func (s *SRQ) WQEs() uint32 { return uint32(s.n) }

// WQE returns the whole of WQE ind, its next segment and its data
// segments (nil outside the ring).
func (s *SRQ) WQE(ind uint16) []byte {
	if int(ind) >= s.n {
		return nil
	}
	return s.wqe(int(ind))
}

// RepostODP is what the CQ poller does for an SRQ WQE on which the device
// reported an ODP page fault (v44: mlx5_complete_odp_fault): WQE ind goes
// back on the free list (at its tail; with a wait queue, at the wait
// queue's tail, and the wait queue's head joins the free list instead),
// then its wr_id and data segments, up to the end segment, are posted
// again in the WQE at the free list's head, and the counter and doorbell
// record move on. It fails, changing nothing, for a WQE that is not posted
// or a free list whose head links to a WQE that is not free.
func (s *SRQ) RepostODP(ind uint16) error {
	if !s.enter() {
		return ErrClosed
	}
	defer s.leave()
	if int(ind) >= s.n || s.state[ind] != wqePosted {
		s.rerr = RetireError{SRQ: true, WQE: uint32(ind), WQEs: uint32(s.n)}
		return &s.rerr
	}
	// The WQE that joins the free list at its tail.
	join := ind
	if s.waitq {
		join = s.waitqHead
	}
	next := join // the head's link once join is linked, if the head is the tail
	if s.head != s.tail {
		next = s.next(int(s.head))
		if int(next) >= s.n || s.state[next] != wqeFree {
			s.lerr = ListError{WQE: uint32(s.head), Next: uint32(next), WQEs: uint32(s.n)}
			return &s.lerr
		}
	}
	if s.waitq {
		// srq_cooldown_wqe: the wait queue's head joins the free list,
		// ind waits at the wait queue's tail.
		newHead := s.next(int(s.waitqHead))
		if s.waitqHead == s.waitqTl {
			newHead = ind // a wait queue of one WQE (libmlx5 makes none)
		}
		s.setNext(int(s.tail), join)
		s.tail, s.state[join] = join, wqeFree
		s.setNext(int(s.waitqTl), ind)
		s.waitqHead, s.waitqTl, s.state[ind] = newHead, ind, wqeReserved
	} else {
		s.setNext(int(s.tail), ind)
		s.tail, s.state[ind] = ind, wqeFree
	}
	// srq_repost: the head's WQE takes ind's work request.
	h := int(s.head)
	s.wrid[h] = s.wrid[ind]
	s.state[h] = wqePosted
	src, dst := s.wqe(int(ind))[nextSize:], s.wqe(h)[nextSize:]
	for g := 0; g < s.maxGS; g++ {
		seg := src[g*segSize : (g+1)*segSize]
		copy(dst[g*segSize:], seg)
		if binary.BigEndian.Uint32(seg[4:8]) == mlx.MLX5_INVALID_LKEY {
			break
		}
	}
	s.head = next
	s.counter++
	ringDBR(s.dbr, uint32(s.counter))
	return nil
}
