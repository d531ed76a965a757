package engine

import (
	"encoding/binary"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// send executes SEND, SEND_IMM and SEND_INVAL: the gathered message lands
// in p's next receive WQE. [ledger: syndrome-receiver, max-msg-size]
func (q *QP) send(w []byte, off int, ctrl *mlx.WQECtrlSeg, p *QP) status {
	if segmentBytes(w, off, len(w)) > uint64(q.dev.caps.MaxMsgSize) {
		return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, "a message longer than the port's max_msg_sz")
	}
	if st := p.recvReady(q); st.synd != 0 || st.wait {
		return st
	}
	x := &q.dev.fab.x
	x.sigCQ, x.sigQPN = q.scq, q.qpn
	if st := x.segments(&x.src, q.dev, q.pd, w, off, len(w), 0); st.synd != 0 {
		return st
	}
	rw, idx, srqn := p.takeRecv()
	x.sigCQ, x.sigQPN = p.rcq, p.qpn
	x.dst.limit = x.src.total
	if st := x.segments(&x.dst, p.dev, p.pd, rw, 0, len(rw), mlx.IBV_ACCESS_LOCAL_WRITE); st.synd != 0 {
		p.respError(idx, srqn, mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR)
		return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_OP_ERR, "the receiver's buffer: "+st.fault)
	}
	if x.src.total > x.dst.total {
		p.respError(idx, srqn, mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR)
		return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, "the message is longer than the receive buffer")
	}
	copySGL(&x.dst, &x.src)
	if st := x.scatter(&x.dst, p.dev); st.synd != 0 {
		p.respError(idx, srqn, mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR)
		return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_OP_ERR, "the receiver's mkey: "+st.fault)
	}
	op, imm := mlx.MLX5_CQE_RESP_SEND, uint32(0)
	switch ctrl.Opcode() {
	case mlx.MLX5_OPCODE_SEND_IMM:
		op, imm = mlx.MLX5_CQE_RESP_SEND_IMM, ctrl.Imm()
	case mlx.MLX5_OPCODE_SEND_INVAL:
		op, imm = mlx.MLX5_CQE_RESP_SEND_INV, ctrl.Imm()
		if !p.dev.invalidate(imm, p.pd) {
			p.respError(idx, srqn, mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR)
			return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, "send with invalidate of a key the receiver cannot invalidate")
		}
	}
	p.respCQE(q, op, idx, srqn, uint32(x.src.total), imm, ctrl.Se() != 0)
	x.sigErrors()
	return ok
}

// invalidate invalidates an rkey of the device (a memory window, or an
// indirect mkey); false if it is neither, or not of pd.
func (d *Device) invalidate(key, pd uint32) bool {
	if d.keys.IsMW(key) {
		return d.keys.Invalidate(key, pd, 0, &d.fab.x.fault) == nil
	}
	if isMkey(key) {
		return d.mkeys.RemoteInvalidate(key) == nil
	}
	return false
}

// write executes RDMA_WRITE and RDMA_WRITE_IMM: the gathered data lands
// at the remote address; with immediate data it also consumes a receive.
func (q *QP) write(w []byte, off int, ctrl *mlx.WQECtrlSeg, p *QP) status {
	if len(w) < off+mlx.WQERaddrSegSize {
		return malformed("an RDMA WQE without a remote address segment")
	}
	imm := ctrl.Opcode() == mlx.MLX5_OPCODE_RDMA_WRITE_IMM
	if imm {
		if st := p.recvReady(q); st.synd != 0 || st.wait {
			return st
		}
	}
	ra := (*mlx.WQERaddrSeg)(w[off : off+mlx.WQERaddrSegSize])
	if segmentBytes(w, off+mlx.WQERaddrSegSize, len(w)) > uint64(q.dev.caps.MaxMsgSize) {
		return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, "a message longer than the port's max_msg_sz")
	}
	x := &q.dev.fab.x
	x.sigCQ, x.sigQPN = q.scq, q.qpn
	if st := x.segments(&x.src, q.dev, q.pd, w, off+mlx.WQERaddrSegSize, len(w), 0); st.synd != 0 {
		return st
	}
	if x.src.total > 0 {
		x.sigCQ, x.sigQPN = p.rcq, p.qpn
		if st := x.span(&x.dst, p.dev, p.pd, ra.RKey(), ra.Raddr(), x.src.total, mlx.IBV_ACCESS_REMOTE_WRITE, true, false); st.synd != 0 {
			return st
		}
		copySGL(&x.dst, &x.src)
		if st := x.scatter(&x.dst, p.dev); st.synd != 0 {
			return st
		}
	}
	if imm {
		_, idx, srqn := p.takeRecv()
		p.respCQE(q, mlx.MLX5_CQE_RESP_WR_IMM, idx, srqn, uint32(x.src.total), ctrl.Imm(), ctrl.Se() != 0)
	}
	x.sigErrors()
	return ok
}

// land completes the READs and atomics in flight: their responses arrive
// (a step after they were sent, so that work requests after them may run
// first unless fenced). A later work request that failed meanwhile does
// not stop them: on the wire their responses come before its error. [ledger: read-atomic-in-flight, read-survives-later-error]
func (q *QP) land() {
	s := &q.sq
	x := &q.dev.fab.x
	for _, f := range s.flight[:s.nflight] {
		c := q.comps.at(f.comp)
		if q.flushFlights || c.ready {
			// The program moved the QP to error, or a READ before
			// this one failed: flushed. [ledger: read-survives-later-error]
			c.synd, c.signaled, c.ready = mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR, true, true
			continue
		}
		w := s.at(f.start, f.bbs)
		ctrl := (*mlx.WQECtrlSeg)(w[:mlx.WQECtrlSegSize])
		off := mlx.WQECtrlSegSize
		if q.typ == DCI {
			off += mlx.WQEAVSize
		}
		x.begin()
		var st status
		switch {
		case !f.peer.receiving() || !f.peer.accepts(q):
			// Gone, or reconnected to another QP since: the request is
			// dropped (see accepts). [ledger: wrong-peer-dropped]
			st = fail(mlx.MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, "the peer went away")
		case ctrl.Opcode() == mlx.MLX5_OPCODE_RDMA_READ:
			st = q.read(w[:int(ctrl.DS())*16], off, f.peer, c)
		default:
			st = q.atomic(w[:int(ctrl.DS())*16], off, ctrl.Opcode(), f.peer)
		}
		c.ready = true
		if st.synd != 0 {
			c.synd, c.signaled = st.synd, true
			q.trace(ctrl.Opcode(), c.ctr, st)
			q.errorAfter(f.comp)
		}
	}
	s.nflight = 0
}

// errorAfter moves the QP to error because the completion in slot i
// failed: the completions queued after it are flushed.
func (q *QP) errorAfter(i uint32) {
	q.toError()
	for j := i + 1; j != q.comps.tail; j++ {
		c := q.comps.at(j)
		c.synd, c.signaled, c.ready = mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR, true, true
	}
}

// read lands an RDMA READ's response in the local segments.
func (q *QP) read(w []byte, off int, p *QP, c *comp) status {
	if len(w) < off+mlx.WQERaddrSegSize {
		return malformed("an RDMA WQE without a remote address segment")
	}
	ra := (*mlx.WQERaddrSeg)(w[off : off+mlx.WQERaddrSegSize])
	x := &q.dev.fab.x
	// The response first (bounded by the responder's memory), then the
	// local segments it lands in, staged for no more than arrived. The
	// request asks for the wire bytes of the local segments.
	n, st := segmentWire(q.dev, w, off+mlx.WQERaddrSegSize, len(w))
	if st.synd != 0 {
		return st
	}
	if n > uint64(q.dev.caps.MaxMsgSize) {
		return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, "a READ longer than the port's max_msg_sz")
	}
	if n > 0 {
		x.sigCQ, x.sigQPN = p.rcq, p.qpn
		if st := x.span(&x.src, p.dev, p.pd, ra.RKey(), ra.Raddr(), n, mlx.IBV_ACCESS_REMOTE_READ, true, true); st.synd != 0 {
			return st
		}
	}
	x.sigCQ, x.sigQPN = q.scq, q.qpn
	x.dst.limit = x.src.total
	if st := x.segments(&x.dst, q.dev, q.pd, w, off+mlx.WQERaddrSegSize, len(w), mlx.IBV_ACCESS_LOCAL_WRITE); st.synd != 0 {
		return st
	}
	copySGL(&x.dst, &x.src)
	if st := x.scatter(&x.dst, q.dev); st.synd != 0 {
		return st
	}
	// byte_len counts the wire bytes that arrived, as for a SEND's
	// receiver; no published program shows what a ConnectX reports for a
	// READ or receive through a signature mkey. [ledger: byte-len-wire-bytes]
	c.byteCnt = uint32(x.src.total)
	x.sigErrors()
	return ok
}

// atomic lands a compare-and-swap or fetch-and-add: 8 bytes, 8-byte
// aligned, in the responder's byte order (the host's: mlx5 drivers ask
// the device for host-endian atomics); the original value goes to the
// local segment. [ledger: atomic-host-endian]
func (q *QP) atomic(w []byte, off int, op mlx.Opcode, p *QP) status {
	if len(w) < off+mlx.WQERaddrSegSize+mlx.WQEAtomicSegSize {
		return malformed("an atomic WQE without its remote address and atomic segments")
	}
	ra := (*mlx.WQERaddrSeg)(w[off : off+mlx.WQERaddrSegSize])
	at := (*mlx.WQEAtomicSeg)(w[off+mlx.WQERaddrSegSize : off+mlx.WQERaddrSegSize+mlx.WQEAtomicSegSize])
	x := &q.dev.fab.x
	x.dst.limit = 8
	if st := x.segments(&x.dst, q.dev, q.pd, w, off+mlx.WQERaddrSegSize+mlx.WQEAtomicSegSize, len(w), mlx.IBV_ACCESS_LOCAL_WRITE); st.synd != 0 {
		return st
	}
	if x.dst.total != 8 || x.dst.nind != 0 {
		return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, "an atomic's local buffer is not 8 bytes of an MR")
	}
	if ra.Raddr()%8 != 0 {
		return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, "an atomic's remote address is not 8-byte aligned")
	}
	b, f := p.dev.keys.Bytes(ra.RKey(), p.pd, ra.Raddr(), 8, mlx.IBV_ACCESS_REMOTE_ATOMIC, true, &x.fault)
	if f != nil {
		return fail(mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, f.Why)
	}
	old := binary.NativeEndian.Uint64(b)
	switch op {
	case mlx.MLX5_OPCODE_ATOMIC_CS:
		if old == at.Compare() {
			binary.NativeEndian.PutUint64(b, at.SwapAdd())
		}
	default:
		binary.NativeEndian.PutUint64(b, old+at.SwapAdd())
	}
	binary.NativeEndian.PutUint64(x.res[:], old)
	x.src.reset()
	x.src.add(x.res[:])
	copySGL(&x.dst, &x.src)
	return ok
}
