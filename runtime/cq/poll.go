package cq

import (
	"encoding/binary"
	"errors"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// result is what parsing one CQE gave (libmlx5's CQ_OK, CQ_EMPTY,
// CQ_POLL_ERR, CQ_POLL_NODATA).
type result int

const (
	cqOK result = iota
	cqEmpty
	cqPollErr
	cqNoData // the CQ held CQEs, all handled inside the poller
)

const (
	opReq      = uint8(mlx.MLX5_CQE_REQ)
	opRespImm  = uint8(mlx.MLX5_CQE_RESP_WR_IMM)
	opRespSend = uint8(mlx.MLX5_CQE_RESP_SEND)
	opRespSImm = uint8(mlx.MLX5_CQE_RESP_SEND_IMM)
	opRespSInv = uint8(mlx.MLX5_CQE_RESP_SEND_INV)
	opResize   = uint8(mlx.MLX5_CQE_RESIZE_CQ)
	opNoPacket = uint8(mlx.MLX5_CQE_NO_PACKET)
	opSigErr   = uint8(mlx.MLX5_CQE_SIG_ERR)
	opReqErr   = uint8(mlx.MLX5_CQE_REQ_ERR)
	opRespErr  = uint8(mlx.MLX5_CQE_RESP_ERR)

	appTagMatching = 1 // MLX5_CQE_APP_TAG_MATCHING
)

var be = binary.BigEndian

// Poll polls up to len(wc) completions into wc and returns how many it
// filled. A CQE it cannot attribute stops the poll: it returns the
// completions before it and an *UnknownError (valid until the next call);
// the CQE is consumed. Every call writes the consumer index to the
// doorbell record, as ibv_poll_cq does. rdma-core: poll_cq, mlx5_poll_one.
func (c *CQ) Poll(wc []WC) (int, error) {
	if c.session || !c.gate.EnterFast() && !c.gate.Enter() {
		return 0, c.refused()
	}
	c.curQP, c.curSRQ = nil, nil
	n := 0
	var err error
	for n < len(wc) {
		if !c.noFast {
			if n += c.pollFast(wc[n:]); n == len(wc) {
				break
			}
		}
		off, cqe := c.nextCQE()
		if cqe == nil {
			break
		}
		c.flushRetire()
		r := c.parse(off, cqe, &wc[n], false)
		if r == cqOK {
			n++
			continue
		}
		if r == cqPollErr {
			err = &c.unk
		}
		break
	}
	c.flushRetire()
	c.updateConsIndex()
	c.gate.Leave()
	return n, err
}

// refused is the error of a poll that could not enter: the CQ is closed,
// or a StartPoll session is open (Poll would consume its CQEs).
//
//go:noinline
func (c *CQ) refused() error {
	if c.session {
		return errors.New("cq: Poll during a StartPoll session (EndPoll first)")
	}
	return ErrClosed
}

// unknown records an unattributable CQE for the error Poll returns.
func (c *CQ) unknown(cqe []byte, what string, v uint32) result {
	c.unk = UnknownError{Index: c.ci - 1, Opcode: mlx.CQEOpcode(cqe[63] >> 4), What: what, Value: v}
	return cqPollErr
}

// parse handles one consumed CQE; wc is nil in a lazy session.
// Signature errors and SRQ ODP page faults are handled here and the next
// CQE is parsed in their place. rdma-core: mlx5_parse_cqe.
func (c *CQ) parse(off int, cqe []byte, wc *WC, lazy bool) result {
	if !lazy {
		// Fields libmlx5 does not write for this completion are 0; a
		// CQE handled in its place (a signature error, an ODP page
		// fault) may have written some, and they stay, as in libmlx5.
		*wc = WC{}
	}
	for {
		qpn := be.Uint32(cqe[56:60]) & 0xffffff
		if lazy {
			c.ex.off, c.ex.cqe = off, cqe
			c.ex.raw, c.ex.rxCsum = false, false
		} else {
			wc.Flags, wc.QPNum = 0, qpn
		}
		var r result
		again := false
		switch op := cqe[63] >> 4; op {
		case opReq:
			r = c.req(off, cqe, qpn, wc, lazy)
		case opRespImm, opRespSend, opRespSImm, opRespSInv:
			r = c.resp(off, cqe, qpn, wc, lazy)
		case opNoPacket:
			// Tag matching is not supported: its NO_PACKET CQEs are
			// unknown, as libmlx5 reports NO_PACKET without it.
			return c.unknown(cqe, "NO_PACKET CQE (app)", uint32(cqe[40]))
		case opSigErr:
			r, again = c.sigErr(cqe)
		case opReqErr, opRespErr:
			r, again = c.errCQE(cqe, qpn, wc, lazy)
		default:
			// RESIZE_CQ and reserved opcodes count as completions.
		}
		if !again {
			return r
		}
		if off, cqe = c.nextCQE(); cqe == nil {
			return cqNoData
		}
	}
}

// lookupQP finds the QP of a QPN (cqe_version 0) or user index (1).
// rdma-core: get_req_context, get_qp_ctx.
func (c *CQ) lookupQP(key uint32) *QP {
	if c.curQP == nil || c.curKey != key {
		c.curQP, c.curKey = c.qps[key], key
	}
	return c.curQP
}

func (c *CQ) keyName() string {
	if c.v1 {
		return "user index"
	}
	return "QPN"
}

// req handles a requester completion. rdma-core: the MLX5_CQE_REQ case
// of mlx5_parse_cqe, handle_good_req.
func (c *CQ) req(off int, cqe []byte, qpn uint32, wc *WC, lazy bool) result {
	key := qpn
	if c.v1 {
		key = be.Uint32(cqe[32:36]) & 0xffffff
	}
	qp := c.lookupQP(key)
	if qp == nil || qp.SQ == nil {
		return c.unknown(cqe, c.keyName(), key)
	}
	ctr := uint32(be.Uint16(cqe[60:62]))
	wrID, head, wrData := qp.SQ.Slot(ctr & (qp.SQ.Slots() - 1))
	sop := mlx.Opcode(cqe[56])
	scat := cqe[63] & (mlx.MLX5_INLINE_SCATTER_32 | mlx.MLX5_INLINE_SCATTER_64)
	if lazy {
		st := Success
		switch sop {
		case mlx.MLX5_OPCODE_UMR, mlx.MLX5_OPCODE_SET_PSV, mlx.MLX5_OPCODE_NOP, mlx.MLX5_OPCODE_MMO:
			c.ex.cached = mlx.IBVWCOpcode(wrData)
		case mlx.MLX5_OPCODE_RDMA_READ:
			if scat != 0 {
				st = c.copyToSendWQE(qp, ctr, off, cqe, be.Uint32(cqe[44:48]))
			}
		case mlx.MLX5_OPCODE_ATOMIC_CS, mlx.MLX5_OPCODE_ATOMIC_FA:
			if scat != 0 {
				st = c.copyToSendWQE(qp, ctr, off, cqe, 8)
			}
		}
		c.ex.wrID, c.ex.status = wrID, st
		c.ex.raw = wrData == uint32(mlx.IBV_WC_DRIVER2)
	} else {
		handleGoodReq(wc, cqe, sop, wrData)
		if scat != 0 {
			wc.Status = c.copyToSendWQE(qp, ctr, off, cqe, wc.ByteLen)
		}
		wc.WRID = wrID
	}
	qp.SQ.Retire(head + 1)
	return cqOK
}

// handleGoodReq sets the opcode (and byte_len) of a requester success.
// rdma-core: handle_good_req.
func handleGoodReq(wc *WC, cqe []byte, sop mlx.Opcode, wrData uint32) {
	switch sop {
	case mlx.MLX5_OPCODE_RDMA_WRITE_IMM:
		wc.Flags |= mlx.IBV_WC_WITH_IMM
		wc.Opcode = mlx.IBV_WC_RDMA_WRITE
	case mlx.MLX5_OPCODE_RDMA_WRITE:
		wc.Opcode = mlx.IBV_WC_RDMA_WRITE
	case mlx.MLX5_OPCODE_SEND_IMM:
		wc.Flags |= mlx.IBV_WC_WITH_IMM
		wc.Opcode = mlx.IBV_WC_SEND
	case mlx.MLX5_OPCODE_SEND, mlx.MLX5_OPCODE_SEND_INVAL:
		wc.Opcode = mlx.IBV_WC_SEND
	case mlx.MLX5_OPCODE_RDMA_READ:
		wc.Opcode = mlx.IBV_WC_RDMA_READ
		wc.ByteLen = be.Uint32(cqe[44:48])
	case mlx.MLX5_OPCODE_ATOMIC_CS:
		wc.Opcode, wc.ByteLen = mlx.IBV_WC_COMP_SWAP, 8
	case mlx.MLX5_OPCODE_ATOMIC_FA:
		wc.Opcode, wc.ByteLen = mlx.IBV_WC_FETCH_ADD, 8
	case mlx.MLX5_OPCODE_UMR, mlx.MLX5_OPCODE_SET_PSV, mlx.MLX5_OPCODE_NOP, mlx.MLX5_OPCODE_MMO:
		wc.Opcode = mlx.IBVWCOpcode(wrData)
	case mlx.MLX5_OPCODE_TSO:
		wc.Opcode = mlx.IBV_WC_TSO
	}
	if wrData == uint32(mlx.IBV_WC_DRIVER2) { // a raw WQE
		wc.Opcode = mlx.IBV_WC_DRIVER2
	}
}

// getCurRsc finds the receive side of a responder or error CQE: an SRQ
// (by srqn with cqe_version 0, through the user index's QP with 1) or a
// QP's receive queue. rdma-core: get_cur_rsc, get_resp_ctx_v1,
// get_srq_ctx, get_qp_ctx.
func (c *CQ) getCurRsc(cqe []byte, qpn, srqnUidx uint32) (*QP, SharedRecvQueue, result) {
	switch {
	case c.v1:
		qp := c.lookupQP(srqnUidx)
		if qp == nil {
			return nil, nil, c.unknown(cqe, "user index", srqnUidx)
		}
		return qp, qp.SRQ, cqOK
	case srqnUidx != 0:
		if c.curSRQ == nil || c.curSN != srqnUidx {
			c.curSRQ, c.curSN = c.srqs[srqnUidx], srqnUidx
		}
		if c.curSRQ == nil {
			return nil, nil, c.unknown(cqe, "SRQ", srqnUidx)
		}
		return nil, c.curSRQ, cqOK
	}
	qp := c.lookupQP(qpn)
	if qp == nil {
		return nil, nil, c.unknown(cqe, "QPN", qpn)
	}
	return qp, nil, cqOK
}

// recvWRID takes the wr_id of a receive completion: from the SRQ by the
// CQE's WQE counter (freeing the WQE), or from the QP's receive queue at
// the CQE's WQE counter, as rdma-core 55.0 and later do (rule
// cq.recv_wrid_by_counter; 44.0 took the queue's tail).
func (c *CQ) recvWRID(cqe []byte, qp *QP, srq SharedRecvQueue) (wrID uint64, idx uint32, r result) {
	ctr := uint32(be.Uint16(cqe[60:62]))
	if srq != nil {
		if ctr >= srq.Size() {
			return 0, 0, c.unknown(cqe, "SRQ WQE index", ctr)
		}
		wrID = srq.WRID(ctr)
		if !srq.Free(ctr) {
			return 0, 0, c.unknown(cqe, "posted SRQ WQE", ctr)
		}
		return wrID, ctr, cqOK
	}
	if qp.RQ == nil {
		return 0, 0, c.unknown(cqe, "receive queue of QP", qp.QPN)
	}
	idx = ctr & (qp.RQ.Slots() - 1)
	wrID, ok := qp.RQ.Consume(idx)
	if !ok {
		return 0, 0, c.unknown(cqe, "outstanding receive WQE", idx)
	}
	return wrID, idx, cqOK
}
