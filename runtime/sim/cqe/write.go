package cqe

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// Req writes a requester success CQE: the WQE's opcode and QPN, the QP's
// user index (read with cqe_version 1), the WQE's index (wqe_counter) and,
// for an RDMA READ, the bytes read. false: no room.
func (r *Ring) Req(qpn, uidx uint32, op mlx.Opcode, ctr uint16, byteCnt uint32) bool {
	b := r.next()
	if b == nil {
		return false
	}
	be.PutUint32(b[32:36], uidx&0xffffff)
	be.PutUint32(b[44:48], byteCnt)
	be.PutUint32(b[56:60], uint32(op)<<24|qpn&0xffffff)
	be.PutUint16(b[60:62], ctr)
	r.commit(b, mlx.MLX5_CQE_REQ, 0)
	return true
}

// Resp is a responder completion.
type Resp struct {
	Op      mlx.CQEOpcode // MLX5_CQE_RESP_SEND, _SEND_IMM, _SEND_INV or _WR_IMM
	QPN     uint32        // the receiving QP
	SRQN    uint32        // its SRQ (0: the QP's receive queue)
	Ctr     uint16        // the receive WQE's index
	ByteCnt uint32
	Imm     uint32 // immediate data (as the sender's __be32 read big-endian) or the invalidated rkey
	SrcQP   uint32
	SLID    uint16
	SL      uint8
	G       uint8 // flags_rqpn's g bits [29:28]: non-zero when a GRH came with the message
	SE      bool  // solicited event
}

// Resp writes a responder success CQE. false: no room.
func (r *Ring) Resp(c *Resp) bool {
	b := r.next()
	if b == nil {
		return false
	}
	be.PutUint16(b[22:24], c.SLID)
	fr := uint32(c.SL&0xf)<<24 | c.SrcQP&0xffffff
	fr |= uint32(c.G&3) << 28
	be.PutUint32(b[24:28], fr)
	be.PutUint32(b[32:36], c.SRQN&0xffffff)
	be.PutUint32(b[36:40], c.Imm)
	be.PutUint32(b[44:48], c.ByteCnt)
	be.PutUint32(b[56:60], c.QPN&0xffffff)
	be.PutUint16(b[60:62], c.Ctr)
	low := uint8(0)
	if c.SE {
		r.Solicited = r.pi + 1
		low = 2
	}
	r.commit(b, c.Op, low)
	return true
}

// Err is an error completion.
type Err struct {
	Resp     bool // a receive's (MLX5_CQE_RESP_ERR), else a send's
	QPN      uint32
	SRQN     uint32
	Op       mlx.Opcode // the send WQE's opcode (0 for a receive)
	Ctr      uint16
	Syndrome mlx.CQESyndrome
	Vendor   uint8
}

// Err writes an error CQE. false: no room.
func (r *Ring) Err(c *Err) bool {
	b := r.next()
	if b == nil {
		return false
	}
	be.PutUint32(b[32:36], c.SRQN&0xffffff)
	b[54], b[55] = c.Vendor, uint8(c.Syndrome)
	be.PutUint32(b[56:60], uint32(c.Op)<<24|c.QPN&0xffffff)
	be.PutUint16(b[60:62], c.Ctr)
	op := mlx.MLX5_CQE_REQ_ERR
	if c.Resp {
		op = mlx.MLX5_CQE_RESP_ERR
	}
	r.Solicited = r.pi + 1
	r.commit(b, op, 0)
	return true
}

// Sig is a signature error, as cq.c's mlx5_sigerr_cqe carries it.
type Sig struct {
	Syndrome               uint16 // REFTAG 1<<11, APPTAG 1<<12, GUARD 1<<13
	ExpectedSig, ActualSig uint32 // the transaction signature (guard, or CRC)
	ExpectedRef, ActualRef uint32 // the reference tag (or the CRC's low half)
	SigType                uint8  // 0: block signature
	Domain                 uint8  // 0: wire, 1: memory
	Mkey                   uint32
	Offset                 uint64
	QPN                    uint32
}

// Sig writes a signature-error CQE (MLX5_CQE_SIG_ERR). false: no room.
func (r *Ring) Sig(c *Sig) bool {
	b := r.next()
	if b == nil {
		return false
	}
	be.PutUint32(b[16:20], c.ExpectedSig)
	be.PutUint32(b[20:24], c.ActualSig)
	be.PutUint32(b[24:28], c.ExpectedRef)
	be.PutUint32(b[28:32], c.ActualRef)
	be.PutUint16(b[32:34], c.Syndrome)
	b[34], b[35] = c.SigType, c.Domain
	be.PutUint32(b[36:40], c.Mkey)
	be.PutUint64(b[40:48], c.Offset)
	be.PutUint32(b[56:60], c.QPN&0xffffff)
	r.commit(b, mlx.MLX5_CQE_SIG_ERR, 0)
	return true
}
