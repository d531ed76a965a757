package sim

import (
	"fmt"
	"strings"
	"syscall"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// bfSize is the bytes of each half of a QP's BlueFlame register.
const bfSize = 256

// simQP is a QP: the send ring, doorbell record and register in qmem
// memory, the receive ring in a DMA region.
type simQP struct {
	c     *simCtx
	qp    *engine.QP
	mem   *qmem.Memory
	rqReg *dma.Region
	qpMem device.QPMemory
	// What the transitions since the last RESET set that the engine does
	// not model (PSNs, MTU, timeouts), and the last state they reached,
	// for Query; caps are what the QP was created with. [ledger: transport-timing-not-modelled]
	set     device.QPAttr
	destRd  uint8
	reached mlx.QPState
	caps    device.QPCaps
}

// wqeBBs is how many WQEBBs the largest work request of cfg takes, at
// least 4 (an mkey configuration with a signature takes that many). [ledger: sq-size]
func wqeBBs(cfg device.QPConfig) int {
	size := 16 + 32 // control, remote address (or atomic) segments
	if cfg.Kind == device.DCI {
		size += mlx.WQEAVSize
	}
	size += max(16*cfg.MaxSendSGE, (4+cfg.MaxInlineData+15)&^15)
	return max((size+qmem.WQEBB-1)/qmem.WQEBB, 4)
}

func (p *simPD) CreateQP(cfg device.QPConfig, send, recv device.BackendCQ, srq device.BackendSRQ) (device.BackendQP, error) {
	caps := p.c.d.Caps()
	if cfg.MaxSendWR > caps.MaxQPWR || cfg.MaxRecvWR > caps.MaxQPWR || cfg.MaxSendSGE > caps.MaxSGE ||
		cfg.MaxRecvSGE > caps.MaxSGE || cfg.MaxInlineData > caps.MaxInlineData {
		return nil, fmt.Errorf("sim: create_qp: the capabilities asked (%d/%d WRs, %d/%d SGEs, %d inline) exceed the device's (%d, %d, %d)",
			cfg.MaxSendWR, cfg.MaxRecvWR, cfg.MaxSendSGE, cfg.MaxRecvSGE, cfg.MaxInlineData, caps.MaxQPWR, caps.MaxSGE, caps.MaxInlineData)
	}
	if err := modelledFlags(cfg.CreateFlags); err != nil {
		return nil, err
	}
	q := &simQP{c: p.c}
	ec := engine.QPConfig{PD: p.pdn, SendCQ: send.(*simCQ).cq, RecvCQ: recv.(*simCQ).cq, DCKey: cfg.DCAccessKey, SRQ: engineSRQ(srq)}
	switch cfg.Kind {
	case device.RC:
		ec.Type = engine.RC
	case device.DCI:
		ec.Type, ec.RecvCQ = engine.DCI, nil
		if cfg.LogNumConcurent != 0 || cfg.LogNumErrored != 0 {
			// The API checks the streams against the caps; a shift out of
			// range here would panic, so refuse it rather than trust that.
			lc, le := log2(caps.MaxDCIStreams), log2(caps.MaxErrStreams)
			if cfg.LogNumConcurent < 0 || cfg.LogNumConcurent > lc || cfg.LogNumErrored < 0 || cfg.LogNumErrored > min(cfg.LogNumConcurent, le) {
				return nil, fmt.Errorf("sim: create_qp: DCI streams log %d, errored log %d (0 to %d, errored at most the streams and %d)",
					cfg.LogNumConcurent, cfg.LogNumErrored, lc, le)
			}
			ec.DCIStreams, ec.DCIErrStreams = 1<<cfg.LogNumConcurent, 1<<cfg.LogNumErrored
		}
	case device.DCT:
		ec.Type, ec.SendCQ = engine.DCT, nil
	default:
		return nil, fmt.Errorf("sim: create_qp: QP kind %v", cfg.Kind)
	}
	if err := q.alloc(cfg, &ec); err != nil {
		q.free()
		return nil, err
	}
	e, err := p.c.d.CreateQP(ec)
	if err != nil {
		q.free()
		return nil, err
	}
	q.qp = e
	q.memory(cfg)
	q.caps = device.QPCaps{MaxSendWR: cfg.MaxSendWR, MaxRecvWR: cfg.MaxRecvWR, MaxSendSGE: cfg.MaxSendSGE,
		MaxRecvSGE: cfg.MaxRecvSGE, MaxInlineData: cfg.MaxInlineData}
	return q, nil
}

// alloc maps the QP's queues.
func (q *simQP) alloc(cfg device.QPConfig, ec *engine.QPConfig) error {
	if cfg.Kind == device.DCT {
		return nil
	}
	wqebbs := pow2(max(cfg.MaxSendWR, 1) * wqeBBs(cfg))
	var err error
	if q.mem, err = qmem.New(qmem.Options{WQEBBs: wqebbs, BFSize: bfSize, Lock: dma.LockBestEffort}); err != nil {
		return err
	}
	ec.Mem = q.mem
	if cfg.Kind != device.RC || cfg.MaxRecvWR == 0 {
		return nil
	}
	stride := pow2(16 * max(cfg.MaxRecvSGE, 1))
	n := pow2(cfg.MaxRecvWR)
	if q.rqReg, err = dma.Map(dma.Options{Size: max(n*stride, 4096), Lock: dma.LockBestEffort}); err != nil {
		return err
	}
	ring, err := q.rqReg.Alloc(n*stride, 64)
	if err != nil {
		return err
	}
	ec.RQ, ec.RQStride = ring.Bytes, stride
	q.qpMem.RQ = rq.Memory{Ring: ring.Bytes, DBR: (*[4]byte)(q.mem.DBR[0:4])}
	q.qpMem.RQStride, q.qpMem.RQMaxPost = stride, cfg.MaxRecvWR
	return nil
}

// memory fills what the API builds the writers from.
func (q *simQP) memory(cfg device.QPConfig) {
	caps := q.c.d.Caps()
	m := &q.qpMem
	m.QPN, m.SQ, m.SigAll = q.qp.QPN(), q.mem, cfg.SigAll
	if q.mem == nil {
		return
	}
	m.BF = sq.BlueFlame{UUARN: 1, Size: bfSize}
	typ := mlx.QPRC
	if cfg.Kind == device.DCI {
		typ = mlx.QPDCI
	}
	m.QP = sq.QP{Type: typ, SendOps: cfg.SendOps, MlxSendOps: cfg.MlxSendOps,
		MaxInlineData: cfg.MaxInlineData, MaxSendSGE: cfg.MaxSendSGE, MaxPost: max(cfg.MaxSendWR, 1),
		Streams: cfg.LogNumConcurent > 0, LogNumConcurent: cfg.LogNumConcurent,
		MaxMemcpy: caps.MaxMemcpy, MkeyTagSupported: true,
		// The writers' tweak byte order is the device's engine's, the one
		// its mkey table reads (engine.Caps.CryptoMultiBlock).
		CryptoSingleBlock: true, CryptoMultiBlock: caps.CryptoMultiBlock}
}

func (q *simQP) Memory() device.QPMemory { return q.qpMem }

func (q *simQP) Modify(state mlx.QPState, attr device.QPAttr) error {
	if state == mlx.IBV_QPS_INIT {
		q.qp.SetAccess(attr.Access)
	}
	if state == mlx.IBV_QPS_RESET && q.mem != nil {
		// As libmlx5's modify_qp to RESET: the doorbell record starts
		// over with the queues. [ledger: qp-reset-forgets]
		clear(q.mem.DBR[0:8])
	}
	var r *engine.Remote
	if state == mlx.IBV_QPS_RTR && q.qp.Type() == engine.RC {
		e := attr.Remote
		r = &engine.Remote{LID: e.LID, GID: e.GID, GRH: e.Ethernet, QPN: e.QPN, RNRRetry: attr.RNRRetry}
	}
	if err := q.qp.Modify(state, r); err != nil {
		return err
	}
	q.record(state, attr)
	return nil
}

// record keeps what a transition to state set, as ibv_modify_qp's mask
// for it (runtime/device/verbs) names; a move to RESET forgets all.
func (q *simQP) record(state mlx.QPState, a device.QPAttr) {
	s := &q.set
	switch state {
	case mlx.IBV_QPS_RESET:
		*s, q.destRd = device.QPAttr{}, 0
	case mlx.IBV_QPS_INIT:
		s.Access, s.PKeyIdx = a.Access, a.PKeyIdx
	case mlx.IBV_QPS_RTR:
		s.MTU, s.MinRNR, q.destRd = a.MTU, a.MinRNR, a.RdAtomic
		if q.qp.Type() == engine.RC {
			s.Remote = a.Remote
		}
	case mlx.IBV_QPS_RTS:
		s.SQPSN, s.Timeout, s.Retry, s.RNRRetry, s.RdAtomic = a.SQPSN, a.Timeout, a.Retry, a.RNRRetry, a.RdAtomic
	}
	if state != mlx.IBV_QPS_ERR {
		q.reached = state
	}
}

// Query answers ibv_query_qp from the engine's QP: its state (an error
// completion moved it to IBV_QPS_ERR), the remote access it accepts and
// its peer; the rest is what the transitions set.
func (q *simQP) Query() (device.QPInfo, error) {
	e := q.qp.Attrs()
	info := device.QPInfo{State: e.State, Attr: q.set, DestRdAtomic: q.destRd, Caps: q.caps}
	if q.reached != mlx.IBV_QPS_RESET {
		info.Attr.Access = e.Access
	}
	if q.qp.Type() == engine.RC && (q.reached == mlx.IBV_QPS_RTR || q.reached == mlx.IBV_QPS_RTS) {
		r := &info.Attr.Remote
		r.QPN, r.LID, r.GID, r.Ethernet = e.Remote.QPN, e.Remote.LID, e.Remote.GID, e.Remote.GRH
	}
	return info, nil
}

func (q *simQP) Close() error {
	err := q.c.d.DestroyQP(q.qp)
	q.free()
	return err
}

func (q *simQP) free() {
	if q.mem != nil {
		q.mem.Close()
	}
	if q.rqReg != nil {
		q.rqReg.Close()
	}
}

// ResetStream takes DCI stream id out of error
// (mlx5dv_dci_stream_id_reset; device.StreamResetter).
func (q *simQP) ResetStream(id uint16) error { return q.qp.ResetStream(id) }

// unmodelledFlags are the MLX5DV_QP_CREATE_* flags whose behaviour the
// simulator does not have, refused rather than ignored so that a program
// relying on them learns it here: SIG_PIPELINING (a signature error
// drains the send queue, IBV_EVENT_SQ_DRAINED, until the program cancels
// and moves the QP back to RTS) and the raw packet QP's tunnel and
// loopback flags. [ledger: sig-pipelining-not-modelled] Scatter to CQE
// (ALLOW or DISABLE) and packet-based credits change neither bytes nor
// statuses a program sees, so they are taken.
const unmodelledFlags = mlx.MLX5DV_QP_CREATE_SIG_PIPELINING | mlx.MLX5DV_QP_CREATE_TUNNEL_OFFLOADS |
	mlx.MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC | mlx.MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC

// modelledFlags refuses the flags of unmodelledFlags with a ConfigError
// naming QPConfig.CreateFlags, as every other refused configuration is,
// and EOPNOTSUPP, which is errors.ErrUnsupported (syscall.Errno.Is) and
// what libmlx5 returns for a flag the device lacks.
func modelledFlags(f mlx.QPCreateFlags) error {
	if bad := f & unmodelledFlags; bad != 0 {
		return fmt.Errorf("sim: create_qp: %w", &device.ConfigError{Field: "QPConfig.CreateFlags", Value: fmt.Sprintf("%#x", uint32(bad)),
			Why: "the simulator does not model " + flagNames(bad), Errno: syscall.EOPNOTSUPP})
	}
	return nil
}

func flagNames(f mlx.QPCreateFlags) string {
	var names []string
	for _, n := range []struct {
		f    mlx.QPCreateFlags
		name string
	}{{mlx.MLX5DV_QP_CREATE_SIG_PIPELINING, "MLX5DV_QP_CREATE_SIG_PIPELINING"},
		{mlx.MLX5DV_QP_CREATE_TUNNEL_OFFLOADS, "MLX5DV_QP_CREATE_TUNNEL_OFFLOADS"},
		{mlx.MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC, "MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC"},
		{mlx.MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC, "MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC"}} {
		if f&n.f != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ", ")
}
