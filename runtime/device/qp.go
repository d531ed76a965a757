package device

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// QP is a queue pair: its send queue writer and receive queue writer over
// the device's rings, registered with the CQs it completes to.
type QP struct {
	c    *Context
	b    BackendQP
	n    *node
	kind QPKind
	mem  QPMemory
	sq   *sq.SQ
	rq   *rq.RQ
	psn  uint32

	mu    sync.Mutex // state transitions, queries and Close
	state mlx.QPState
	// The CQs the QP completes to (the same one, possibly), cleaned of
	// its CQEs when it moves to RESET.
	scq, rcq *CQ
}

// checkQPConfig refuses what no backend could create, naming the one
// field that is wrong: the Go values first (kinds, counts, ranges the C
// fields hold), then mlx5dv_create_qp's validators on the mirror of cfg,
// then the device's capabilities and the objects cfg names.
func (pd *PD) checkQPConfig(cfg *QPConfig) error {
	if cfg.Kind != RC && cfg.Kind != DCI && cfg.Kind != DCT {
		return cfgErr("QPConfig.Kind", int(cfg.Kind), "RC, DCI or DCT")
	}
	if err := checkQPCounts(cfg); err != nil {
		return err
	}
	if err := pd.checkQPStreams(cfg); err != nil {
		return err
	}
	dv := cfg.InitAttr()
	if err := dv.Validate(); err != nil {
		return named(err)
	}
	if err := checkQPSendOps(cfg); err != nil {
		return err
	}
	if err := pd.checkQPCaps(cfg); err != nil {
		return err
	}
	if err := pd.checkQPKind(cfg); err != nil {
		return err
	}
	return pd.checkQPSRQ(cfg)
}

// checkQPCounts refuses negative counts and counts a 32-bit ibv_qp_cap
// field cannot hold.
func checkQPCounts(cfg *QPConfig) error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"QPConfig.MaxSendWR", cfg.MaxSendWR}, {"QPConfig.MaxRecvWR", cfg.MaxRecvWR},
		{"QPConfig.MaxSendSGE", cfg.MaxSendSGE}, {"QPConfig.MaxRecvSGE", cfg.MaxRecvSGE},
		{"QPConfig.MaxInlineData", cfg.MaxInlineData},
	} {
		if err := inRange(f.name, f.v, 0, maxU32, ""); err != nil {
			return err
		}
	}
	return nil
}

// checkQPStreams checks the DCI streams: shifts the backends make, so
// never negative, and within the device's dci_streams_caps (libmlx5
// fails the creation otherwise: mlx5dv_create_qp(3), create_qp.dci_streams).
func (pd *PD) checkQPStreams(cfg *QPConfig) error {
	caps := pd.c.info.Caps
	c, e := cfg.LogNumConcurent, cfg.LogNumErrored
	switch {
	case c < 0:
		return cfgErr("QPConfig.LogNumConcurent", c, "a log2, not negative")
	case e < 0:
		return cfgErr("QPConfig.LogNumErrored", e, "a log2, not negative")
	case c == 0 && e == 0:
		return nil
	case cfg.Kind == RC:
		if c != 0 {
			return cfgErr("QPConfig.LogNumConcurent", c, "DCI streams on an RC QP (0)")
		}
		return cfgErr("QPConfig.LogNumErrored", e, "DCI streams on an RC QP (0)")
	case cfg.Kind == DCT:
		return nil // the mirror carries them: rule create_qp.dci_streams.dci_only refuses them
	case c == 0:
		return cfgErr("QPConfig.LogNumErrored", e, "errored streams without streams (QPConfig.LogNumConcurent 0)")
	case !caps.DCIStreams:
		return cfgErr("QPConfig.LogNumConcurent", c, "the device has no DCI streams (Caps.DCIStreams)")
	}
	if err := inRange("QPConfig.LogNumConcurent", c, 1, min(caps.MaxLogNumConcurent, 30), "Caps.MaxLogNumConcurent"); err != nil {
		return err
	}
	// More channels allowed to fail than there are streams means nothing
	// the device could do; the backends size the errored set by it.
	return inRange("QPConfig.LogNumErrored", e, 0, min(c, caps.MaxLogNumErrored), "QPConfig.LogNumConcurent and Caps.MaxLogNumErrored")
}

// The send operations libmlx5 lets each kind ask for
// (mlx5_qp_fill_wr_pfns, linux-rdma/rdma-core providers/mlx5/qp.c): RC and
// DCI take the same verbs builders (MLX5_SUPPORTED_SEND_OPS_FLAGS_RC and
// _DCI; not TSO or ATOMIC_WRITE), a DCI only the RAW_WQE and MEMCPY mlx5dv
// builders. Any other bit fails the creation with EOPNOTSUPP. The
// validators of mlx5dv_create_qp cannot see this (the QP type is in
// qp_attr, which the rules do not describe: rule create_qp.send_ops_flags
// says so); CreateQP knows the kind, so it refuses them before any backend
// sees the call.
const (
	rcSendOps = mlx.IBV_QP_EX_WITH_SEND | mlx.IBV_QP_EX_WITH_SEND_WITH_INV | mlx.IBV_QP_EX_WITH_SEND_WITH_IMM |
		mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | mlx.IBV_QP_EX_WITH_RDMA_READ |
		mlx.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | mlx.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		mlx.IBV_QP_EX_WITH_LOCAL_INV | mlx.IBV_QP_EX_WITH_BIND_MW
	dciMlxSendOps = mlx.MLX5DV_QP_EX_WITH_RAW_WQE | mlx.MLX5DV_QP_EX_WITH_MEMCPY
)

// checkQPSendOps refuses send operations the QP's kind cannot carry, with
// libmlx5's EOPNOTSUPP. A DCT has no send queue: checkQPKind names its
// send operations.
func checkQPSendOps(cfg *QPConfig) error {
	if cfg.Kind == DCT {
		return nil
	}
	if bad := cfg.SendOps &^ rcSendOps; bad != 0 {
		e := cfgErr("QPConfig.SendOps", cfg.SendOps, "has %v, which a%s QP cannot carry (allowed: %v)", bad, article(cfg.Kind), rcSendOps)
		e.Errno = syscall.EOPNOTSUPP
		return e
	}
	if bad := cfg.MlxSendOps &^ dciMlxSendOps; cfg.Kind == DCI && bad != 0 {
		e := cfgErr("QPConfig.MlxSendOps", cfg.MlxSendOps, "has %v, which a DCI cannot carry (allowed: %v)", bad, dciMlxSendOps)
		e.Errno = syscall.EOPNOTSUPP
		return e
	}
	return nil
}

// article makes "a DCI" and "an RC" read right.
func article(k QPKind) string {
	if k == RC {
		return "n " + k.String()
	}
	return " " + k.String()
}

// checkQPCaps checks the sizes against the device's capabilities, one
// field at a time.
func (pd *PD) checkQPCaps(cfg *QPConfig) error {
	caps := pd.c.info.Caps
	maxWR, maxSGE := capOr(caps.MaxQPWR, maxU32), capOr(caps.MaxSGE, maxU32)
	if cfg.Kind != DCT {
		if err := inRange("QPConfig.MaxSendWR", cfg.MaxSendWR, 1, maxWR, "Caps.MaxQPWR"); err != nil {
			return err
		}
	}
	if cfg.Kind == RC {
		if err := inRange("QPConfig.MaxRecvWR", cfg.MaxRecvWR, 0, maxWR, "Caps.MaxQPWR"); err != nil {
			return err
		}
	}
	if err := inRange("QPConfig.MaxSendSGE", cfg.MaxSendSGE, 0, maxSGE, "Caps.MaxSGE"); err != nil {
		return err
	}
	if err := inRange("QPConfig.MaxRecvSGE", cfg.MaxRecvSGE, 0, maxSGE, "Caps.MaxSGE"); err != nil {
		return err
	}
	return inRange("QPConfig.MaxInlineData", cfg.MaxInlineData, 0, capOr(caps.MaxInlineData, maxU32), "Caps.MaxInlineData")
}

// checkQPKind checks what cfg gives against what its kind can use, and
// the CQs it names.
func (pd *PD) checkQPKind(cfg *QPConfig) error {
	switch {
	case (cfg.Kind == DCI || cfg.Kind == DCT) && !pd.c.info.Caps.DC:
		return cfgErr("QPConfig.Kind", cfg.Kind, "the device has no DC transport (Caps.DC)")
	case cfg.SendCQ == nil:
		return cfgErr("QPConfig.SendCQ", nil, "nil")
	case cfg.SendCQ.c != pd.c:
		return cfgErr("QPConfig.SendCQ", nil, "belongs to another context")
	case cfg.RecvCQ != nil && cfg.RecvCQ.c != pd.c:
		return cfgErr("QPConfig.RecvCQ", nil, "belongs to another context")
	case cfg.Kind == DCT && cfg.SendOps != 0:
		return cfgErr("QPConfig.SendOps", cfg.SendOps, "a DCT has no send queue (0)")
	case cfg.Kind == DCT && cfg.MlxSendOps != 0:
		return cfgErr("QPConfig.MlxSendOps", cfg.MlxSendOps, "a DCT has no send queue (0)")
	case cfg.Kind == RC && cfg.DCAccessKey != 0:
		// mlx5dv_create_qp(3): dct_access_key is used only when creating
		// a DC target; an RC QP would silently drop it.
		return cfgErr("QPConfig.DCAccessKey", cfg.DCAccessKey, "the access key of a DC QP; an RC QP has none (0)")
	}
	return nil
}

// checkQPSRQ checks the SRQ of cfg: a DCT needs one, a DCI cannot have
// one, and with one the QP has no receive queue of its own.
func (pd *PD) checkQPSRQ(cfg *QPConfig) error {
	switch {
	case cfg.SRQ == nil && cfg.Kind == DCT:
		return cfgErr("QPConfig.SRQ", nil, "nil: a DCT receives through a shared receive queue (mlx5dv_create_qp(3))")
	case cfg.SRQ == nil:
		return nil
	case cfg.Kind == DCI:
		return cfgErr("QPConfig.SRQ", nil, "a DCI has no receive side (nil)")
	case cfg.SRQ.c != pd.c:
		return cfgErr("QPConfig.SRQ", nil, "belongs to another context")
	case cfg.MaxRecvWR != 0:
		return cfgErr("QPConfig.MaxRecvWR", cfg.MaxRecvWR, "a QP receiving through QPConfig.SRQ has no receive queue of its own (0)")
	case cfg.MaxRecvSGE != 0:
		return cfgErr("QPConfig.MaxRecvSGE", cfg.MaxRecvSGE, "a QP receiving through QPConfig.SRQ has no receive queue of its own (0)")
	}
	return nil
}

// CreateQP creates a queue pair in RESET, with its send queue writer,
// receive queue writer and their registration with the CQs.
func (pd *PD) CreateQP(cfg QPConfig) (*QP, error) {
	if err := pd.checkQPConfig(&cfg); err != nil {
		return nil, fmt.Errorf("device: CreateQP: %w", err)
	}
	if cfg.RecvCQ == nil {
		cfg.RecvCQ = cfg.SendCQ
	}
	q := &QP{c: pd.c, kind: cfg.Kind, state: mlx.IBV_QPS_RESET, psn: rand.Uint32() & 0xffffff, scq: cfg.SendCQ, rcq: cfg.RecvCQ}
	parents := []*node{pd.n, cfg.SendCQ.n}
	if cfg.RecvCQ != cfg.SendCQ {
		parents = append(parents, cfg.RecvCQ.n)
	}
	var bsrq BackendSRQ
	if cfg.SRQ != nil {
		parents, bsrq = append(parents, cfg.SRQ.n), cfg.SRQ.b
	}
	n, err := pd.c.create("CreateQP", parents, func() (string, func() error, error) {
		b, err := pd.b.CreateQP(cfg, cfg.SendCQ.b, cfg.RecvCQ.b, bsrq)
		if err != nil {
			return "", nil, err
		}
		unreg, err := q.build(b, pd.b.Opaque(), cfg)
		if err != nil {
			b.Close()
			return "", nil, err
		}
		return fmt.Sprintf("%v QP %#x", cfg.Kind, q.mem.QPN), q.closer(unreg, b), nil
	})
	if err != nil {
		return nil, err
	}
	q.n = n
	return q, nil
}

// build makes the writers over the backend's QP memory and registers them
// with the CQs; unreg takes them out again.
func (q *QP) build(b BackendQP, opaque sq.PD, cfg QPConfig) (unreg func(destroy func() error) error, err error) {
	m := b.Memory()
	q.b, q.mem = b, m
	if cfg.Kind != DCT {
		if m.SQ == nil {
			return nil, errors.New("the backend's QP has no send queue memory (QPMemory.SQ)")
		}
		qp := m.QP
		if p, perr := q.c.b.Port(); perr == nil && qp.MaxMsgSize == 0 {
			qp.MaxMsgSize = uint64(p.MaxMsgSize) // rule ibv_wr.msg_size: the writer refuses longer messages
		}
		q.sq, err = sq.New(sq.Config{Mem: m.SQ, QPN: m.QPN, QP: qp, SigAll: m.SigAll, BF: m.BF, PD: opaque})
		if err != nil {
			return nil, err
		}
	}
	if m.RQ.Ring != nil {
		q.rq, err = rq.New(rq.Config{Mem: m.RQ, Stride: m.RQStride, MaxPost: m.RQMaxPost, WQSig: m.WQSig, QPN: m.QPN})
		if err != nil {
			return nil, err
		}
	}
	if cfg.SRQ != nil && m.RQ.Ring != nil {
		return nil, errors.New("the backend's QP has a receive queue of its own (QPMemory.RQ) and an SRQ")
	}
	return q.register(cfg, m)
}

// register adds the QP (and its SRQ) to the CQs it completes to; the
// returned func takes them out again, around destroy (see unregister).
func (q *QP) register(cfg QPConfig, m QPMemory) (unreg func(destroy func() error) error, err error) {
	send := &cq.QP{QPN: m.QPN, UIdx: m.UIdx, RC: cfg.Kind == RC}
	if q.sq != nil {
		send.SQ = cq.SQ{Q: q.sq, Mem: m.SQ}
	}
	recv := *send
	recv.SQ = nil
	if q.rq != nil {
		recv.RQ = cq.RQ{Q: q.rq}
	}
	if cfg.SRQ != nil {
		recv.SRQ = cq.SRQ{Q: cfg.SRQ.w}
	}
	var regs []qpReg
	var detach func() error
	unreg = func(destroy func() error) error { return unregister(regs, detach, destroy) }
	add := func(c *CQ, qp *cq.QP) error {
		key := m.QPN
		if c.mem.CQEVersion == 1 {
			key = m.UIdx
		}
		if err := c.poll.AddQP(qp); err != nil {
			return err
		}
		regs = append(regs, qpReg{c, key})
		return nil
	}
	if cfg.SendCQ == cfg.RecvCQ {
		send.RQ, send.SRQ = recv.RQ, recv.SRQ
		err = add(cfg.SendCQ, send)
	} else if err = add(cfg.SendCQ, send); err == nil {
		err = add(cfg.RecvCQ, &recv)
	}
	if err == nil && cfg.SRQ != nil {
		detach, err = cfg.SRQ.attach(cfg.RecvCQ)
	}
	if err != nil {
		return nil, errors.Join(err, unreg(func() error { return nil }))
	}
	return unreg, nil
}

// qpReg is a QP's registration with one of its CQs.
type qpReg struct {
	c   *CQ
	key uint32
}

// unregister takes a QP out of its CQs around destroy, as libmlx5's
// mlx5_destroy_qp: the pollers of its CQs kept out, destroy (the
// backend's), then its CQEs cleaned from each CQ and its registrations
// removed (cq.RemoveQPAfter, nested for a QP on two CQs); then its SRQ's
// registration (detach, if any). If destroy fails, or a poll does not
// end, the QP stays registered and the error is returned.
func unregister(regs []qpReg, detach, destroy func() error) error {
	f := destroy
	for _, r := range regs {
		inner := f
		f = func() error { _, err := r.c.poll.RemoveQPAfter(r.key, inner); return err }
	}
	if err := f(); err != nil {
		return err
	}
	if detach != nil {
		return detach()
	}
	return nil
}

// closer is the QP's close: it holds the QP's lock, so that a Modify,
// State or Query running meanwhile finishes before the backend's QP is
// destroyed (and later ones see the QP closed).
//
// Unregistering waits for a poll in progress on the QP's CQs, and
// detaching for a batch or post in progress on its queues: only then may
// the backend free their memory. If one of them does not end (a batch
// left open by the goroutine closing the QP, say), the backend's QP is
// not destroyed and the error says so: its memory stays rather than be
// written after it is freed.
func (q *QP) closer(unreg func(destroy func() error) error, b BackendQP) func() error {
	return func() error {
		q.mu.Lock()
		defer q.mu.Unlock()
		if err := q.detach(); err != nil {
			return fmt.Errorf("%w; the QP stays allocated", err)
		}
		return unreg(b.Close)
	}
}

// detach makes the writers refuse work, waiting for a batch or post in
// progress, before the backend frees their memory.
func (q *QP) detach() error {
	var errs []error
	if q.sq != nil {
		errs = append(errs, q.sq.Close())
	}
	if q.rq != nil {
		errs = append(errs, q.rq.Close())
	}
	return errors.Join(errs...)
}

// QPN returns the QP's number.
func (q *QP) QPN() uint32 { return q.mem.QPN }

// Kind returns the QP's transport.
func (q *QP) Kind() QPKind { return q.kind }

// SQ returns the send queue writer (nil for a DCT).
func (q *QP) SQ() *sq.SQ { return q.sq }

// RQ returns the receive queue writer (nil without a receive queue).
func (q *QP) RQ() *rq.RQ { return q.rq }

// Close destroys the QP.
func (q *QP) Close() error {
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	return closeNode(q.n)
}
