package engine

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/cqe"
)

// run executes one WQE (w: ds*16 bytes, control segment first) and
// returns its status; c gets what its completion reports.
func (q *QP) run(w []byte, ctrl *mlx.WQECtrlSeg, c *comp) status {
	off := mlx.WQECtrlSegSize
	var peer *QP
	st := ok
	op := ctrl.Opcode()
	remote := op != mlx.MLX5_OPCODE_NOP && op != mlx.MLX5_OPCODE_UMR && op != mlx.MLX5_OPCODE_SET_PSV && op != mlx.MLX5_OPCODE_MMO
	if q.typ == DCI {
		if len(w) < off+mlx.WQEAVSize {
			return malformed("a DCI WQE without an address vector")
		}
		if q.streams > 0 && int(ctrl.DCIStreamChannelID()) >= q.streams {
			return malformed("a DCI stream id past the DCI's streams")
		}
		av := (*mlx.WQEAV)(w[off : off+mlx.WQEAVSize])
		off += mlx.WQEAVSize
		if remote {
			peer, st = q.resolveDCT(av)
		}
	} else if remote {
		peer, st = q.target()
	}
	if st.synd != 0 {
		return st
	}
	if peer != nil && peer.access&needs(op) != needs(op) {
		return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, "the target QP does not accept the operation (qp_access_flags)")
	}
	switch op {
	case mlx.MLX5_OPCODE_NOP:
		return ok
	case mlx.MLX5_OPCODE_SEND, mlx.MLX5_OPCODE_SEND_IMM, mlx.MLX5_OPCODE_SEND_INVAL:
		return q.send(w, off, ctrl, peer)
	case mlx.MLX5_OPCODE_RDMA_WRITE, mlx.MLX5_OPCODE_RDMA_WRITE_IMM:
		return q.write(w, off, ctrl, peer)
	case mlx.MLX5_OPCODE_RDMA_READ, mlx.MLX5_OPCODE_ATOMIC_CS, mlx.MLX5_OPCODE_ATOMIC_FA:
		if q.sq.nflight == q.sq.maxFlight {
			return status{wait: true} // max_rd_atomic in flight [ledger: max-rd-atomic]
		}
		return status{flight: true, peer: peer}
	case mlx.MLX5_OPCODE_UMR:
		return q.umr(w, ctrl)
	case mlx.MLX5_OPCODE_SET_PSV:
		if err := q.dev.mkeys.ExecSetPSV(w); err != nil {
			return mkeyFault(err)
		}
		return ok
	case mlx.MLX5_OPCODE_MMO:
		return q.memcpy(w, off, ctrl, c)
	}
	return malformed("unknown opcode")
}

// needs returns the qp_access_flags a responder needs for op.
func needs(op mlx.Opcode) mlx.AccessFlags {
	switch op {
	case mlx.MLX5_OPCODE_RDMA_WRITE, mlx.MLX5_OPCODE_RDMA_WRITE_IMM:
		return mlx.IBV_ACCESS_REMOTE_WRITE
	case mlx.MLX5_OPCODE_RDMA_READ:
		return mlx.IBV_ACCESS_REMOTE_READ
	case mlx.MLX5_OPCODE_ATOMIC_CS, mlx.MLX5_OPCODE_ATOMIC_FA:
		return mlx.IBV_ACCESS_REMOTE_ATOMIC
	}
	return 0
}

// target returns an RC QP's peer: a QP of the fabric at the address
// Modify gave, ready to receive and connected to q; else the requests go
// unanswered (dropped, see accepts) and the transport retries are
// exhausted. [ledger: peer-unreachable]
func (q *QP) target() (*QP, status) {
	p := q.resolve()
	if p == nil || !p.receiving() {
		return nil, fail(mlx.MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, "no QP at the peer's address, or not ready")
	}
	if !p.accepts(q) {
		return nil, fail(mlx.MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR,
			"the QP at the peer's address is connected to another QP (its remote QPN, LID or GID): it drops the requests")
	}
	return p, ok
}

// resolveDCT finds the DCT a DCI WQE's address vector names: by LID, or
// by GID when the LID is 0; the DC key must match. [ledger: dct-dc-key, peer-unreachable]
func (q *QP) resolveDCT(av *mlx.WQEAV) (*QP, status) {
	var d *Device
	if lid := av.Rlid(); lid != 0 {
		d = q.dev.fab.byLID(lid)
	} else {
		d = q.dev.fab.byGID(*av.Rgid())
	}
	if d == nil {
		return nil, fail(mlx.MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, "no device at the address vector's LID or GID")
	}
	p := d.qps[av.DqpDCT()&0xffffff]
	if p == nil || p.typ != DCT || !p.receiving() || p.dcKey != av.KeyDCKey() {
		return nil, fail(mlx.MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, "no ready DCT of that number and DC key")
	}
	return p, ok
}

// recvReady checks that p has a receive WQE for a message from q: if not,
// the receiver is not ready (RNR): q waits and retries, rnr_retry times
// (7: forever), then fails. [ledger: rnr-retry, rc-no-receive-queue]
func (p *QP) recvReady(q *QP) status {
	if p.srq != nil && p.srq.pending() > 0 || p.srq == nil && p.rq.pending() > 0 {
		return ok
	}
	if p.srq == nil && p.rq.ring == nil {
		return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, "the target has no receive queue")
	}
	if q.rnrRetry == 7 {
		return status{wait: true}
	}
	if q.rnrCount++; q.rnrCount > q.rnrRetry {
		return fail(mlx.MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, "no receive posted at the peer")
	}
	return status{wait: true, nak: true}
}

// takeRecv consumes p's next receive WQE: its data segments, its index
// and the SRQ's number (0: the QP's own queue).
func (p *QP) takeRecv() ([]byte, uint16, uint32) {
	if p.srq != nil {
		w, i := p.srq.take()
		return w, i, p.srq.srqn
	}
	w, i := p.rq.take()
	return w, i, 0
}

// respError fails a receive at p (its receive WQE idx): an error CQE, and
// an RC QP moves to error. [ledger: responder-error]
func (p *QP) respError(idx uint16, srqn uint32, synd mlx.CQESyndrome) {
	if !p.rcq.ring.Err(&cqe.Err{Resp: true, QPN: p.qpn, SRQN: srqn, Ctr: idx, Syndrome: synd}) {
		p.cqFull(p.rcq)
	}
	p.rcq.wrote = true
	if p.typ == RC {
		p.toError()
	}
}

// respCQE writes p's responder completion of a message from q.
func (p *QP) respCQE(q *QP, op mlx.CQEOpcode, idx uint16, srqn, n, imm uint32, se bool) {
	r := cqe.Resp{Op: op, QPN: p.qpn, SRQN: srqn, Ctr: idx, ByteCnt: n, Imm: imm,
		SrcQP: q.qpn, SLID: q.dev.lid, SE: se}
	if q.remGRH {
		r.G = 1
	}
	if !p.rcq.ring.Resp(&r) {
		p.cqFull(p.rcq)
	}
	p.rcq.wrote = true
}
