package device

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// SRQConfig describes a shared receive queue (ibv_create_srq).
type SRQConfig struct {
	MaxWR  int // work requests outstanding at once (the device may give more)
	MaxSGE int // scatter/gather elements per work request
}

// SRQMemory is what a backend's SRQ hands the writer (mlx5dv_init_obj's
// mlx5dv_srq): the API builds rq.SRQ from it.
type SRQMemory struct {
	SRQN uint32
	// Mem is the ring (a power-of-two number of WQEs of Stride bytes,
	// a wait queue included) and the SRQ's own doorbell record. Both stay
	// valid until the SRQ is closed.
	Mem    rq.Memory
	Stride int
	// Head and Tail bound the free list of a new SRQ (mlx5dv_srq.head and
	// tail). WQEs past Tail are libmlx5's wait queue, which the writer
	// keeps apart. The API lays the ring out as libmlx5 does for a new
	// SRQ (rq.SRQConfig.Init), so a backend may hand it over zeroed.
	Head, Tail uint16
}

// BackendSRQ is a shared receive queue.
type BackendSRQ interface {
	Memory() SRQMemory
	Close() error
}

// SRQ is a shared receive queue: the runtime/rq writer over the device's
// ring, registered with the CQs of the QPs receiving through it.
type SRQ struct {
	c   *Context
	b   BackendSRQ
	n   *node
	mem SRQMemory
	w   *rq.SRQ
	// cqs counts, per receive CQ, the open QPs using the SRQ there: a CQ
	// with cqe_version 0 finds the SRQ by its number (cq.AddSRQ) while
	// one is left.
	cqs map[*CQ]int
}

// checkSRQConfig refuses what no backend could create, naming the field.
func (pd *PD) checkSRQConfig(cfg SRQConfig) error {
	caps := pd.c.info.Caps
	// The writer's ring holds below rq.MaxSRQWQEs/2 work requests: a
	// device reporting more is refused at the writer's bound, named as
	// such rather than as the device's.
	hi, limit := capOr(caps.MaxSRQWR, maxU32), "Caps.MaxSRQWR"
	if w := rq.MaxSRQWQEs/2 - 1; w < hi {
		hi, limit = w, "rq.MaxSRQWQEs/2-1"
	}
	if err := inRange("SRQConfig.MaxWR", cfg.MaxWR, 1, hi, limit); err != nil {
		return err
	}
	if err := inRange("SRQConfig.MaxSGE", cfg.MaxSGE, 1, capOr(caps.MaxSRQSGE, maxU32), "Caps.MaxSRQSGE"); err != nil {
		return err
	}
	return validateSRQ(cfg)
}

// CreateSRQ creates a shared receive queue (ibv_create_srq) with its
// writer. RC QPs and DCTs receive through it (QPConfig.SRQ).
func (pd *PD) CreateSRQ(cfg SRQConfig) (*SRQ, error) {
	if err := pd.checkSRQConfig(cfg); err != nil {
		return nil, fmt.Errorf("device: CreateSRQ: %w", err)
	}
	s := &SRQ{c: pd.c, cqs: map[*CQ]int{}}
	n, err := pd.c.create("CreateSRQ", []*node{pd.n}, func() (string, func() error, error) {
		b, err := pd.b.CreateSRQ(cfg)
		if err != nil {
			return "", nil, err
		}
		if err := s.build(b, cfg); err != nil {
			b.Close()
			return "", nil, err
		}
		return fmt.Sprintf("SRQ %#x", s.mem.SRQN), func() error {
			if err := s.w.Close(); err != nil {
				return fmt.Errorf("%w; the SRQ stays allocated", err)
			}
			return b.Close()
		}, nil
	})
	if err != nil {
		return nil, err
	}
	s.n = n
	return s, nil
}

// build lays out the backend's ring and makes the writer over it.
func (s *SRQ) build(b BackendSRQ, cfg SRQConfig) error {
	m := b.Memory()
	if m.Mem.Ring == nil || m.Mem.DBR == nil || m.Stride <= 0 {
		return errors.New("the backend's SRQ has no ring, doorbell record or stride (SRQMemory)")
	}
	if m.SRQN == 0 || m.SRQN > 0xffffff {
		return fmt.Errorf("the backend's SRQ number %#x is not a non-zero 24-bit number", m.SRQN)
	}
	wqes := len(m.Mem.Ring) / m.Stride
	w, err := rq.NewSRQ(rq.SRQConfig{Mem: m.Mem, Stride: m.Stride, Head: m.Head, Tail: m.Tail,
		Counter: uint16(binary.BigEndian.Uint32(m.Mem.DBR[:])), Init: true, WaitQueue: int(m.Tail)+1 < wqes})
	if err != nil {
		return err
	}
	if got := int(m.Tail) - int(m.Head); got < cfg.MaxWR || w.MaxGS() < cfg.MaxSGE {
		return fmt.Errorf("the backend's SRQ holds %d work requests of %d SGEs, %d of %d were asked for", got, w.MaxGS(), cfg.MaxWR, cfg.MaxSGE)
	}
	s.b, s.mem, s.w = b, m, w
	return nil
}

// SRQN returns the SRQ's number.
func (s *SRQ) SRQN() uint32 { return s.mem.SRQN }

// RQ returns the writer that posts to the SRQ (ibv_post_srq_recv). It
// takes the SRQ's lock, so posting may run beside the pollers of the CQs
// its QPs complete to; it refuses work (rq.ErrClosed) once the SRQ is
// closed.
func (s *SRQ) RQ() *rq.SRQ { return s.w }

// MaxWR returns how many work requests may be outstanding: the free
// list's length (one WQE always stays on it).
func (s *SRQ) MaxWR() int { return int(s.mem.Tail) - int(s.mem.Head) }

// SRQLimiter is an optional interface of a BackendSRQ: ArmLimit arms the
// SRQ's limit event (ibv_modify_srq with IBV_SRQ_LIMIT; SRQ.ArmLimit
// checked limit against MaxWR).
type SRQLimiter interface {
	ArmLimit(limit int) error
}

// ArmLimit arms the SRQ's "low watermark" (ibv_modify_srq(3) with
// IBV_SRQ_LIMIT): once fewer than limit work requests are posted to the
// SRQ, the device raises IBV_EVENT_SRQ_LIMIT_REACHED (Context.AsyncEvent,
// with the SRQ's number in AsyncEvent.SRQN) once, and disarms; arm it
// again to hear of the next time. limit is 0 to MaxWR (more is EINVAL, as
// mlx5_ib_modify_srq refuses it, Linux drivers/infiniband/hw/mlx5/srq.c);
// 0 leaves the SRQ unarmed. It fails with an error matching
// errors.ErrUnsupported on a backend that cannot arm it.
func (s *SRQ) ArmLimit(limit int) error {
	s.c.mu.Lock() // Close takes it too: the backend's SRQ stays while we arm it
	defer s.c.mu.Unlock()
	if err := s.n.check("ArmLimit"); err != nil {
		return err
	}
	if err := inRange("srq_limit", limit, 0, s.MaxWR(), "SRQ.MaxWR"); err != nil {
		return fmt.Errorf("device: %s: ArmLimit: %w", s.n.what, err)
	}
	l, ok := s.b.(SRQLimiter)
	if !ok {
		return fmt.Errorf("device: %s: ArmLimit: the backend cannot arm an SRQ limit (ibv_modify_srq): %w", s.n.what, errors.ErrUnsupported)
	}
	if err := l.ArmLimit(limit); err != nil {
		return fmt.Errorf("device: %s: ArmLimit(%d): %w", s.n.what, limit, err)
	}
	return nil
}

// Close destroys the SRQ, and first the QPs receiving through it.
func (s *SRQ) Close() error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return closeNode(s.n)
}

// attach registers the SRQ for a QP completing its receives to c; the
// returned func undoes it. The caller holds the context's lock.
func (s *SRQ) attach(c *CQ) (func() error, error) {
	if c.mem.CQEVersion == 0 && s.cqs[c] == 0 {
		if err := c.poll.AddSRQ(s.mem.SRQN, cq.SRQ{Q: s.w}); err != nil {
			return nil, err
		}
	}
	s.cqs[c]++
	return func() error {
		if s.cqs[c]--; s.cqs[c] == 0 {
			delete(s.cqs, c)
			if c.mem.CQEVersion == 0 {
				_, err := c.poll.RemoveSRQ(s.mem.SRQN)
				return err
			}
		}
		return nil
	}, nil
}
