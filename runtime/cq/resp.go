package cq

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// resp handles a responder success CQE. rdma-core: the MLX5_CQE_RESP_*
// cases of mlx5_parse_cqe, handle_responder, handle_responder_lazy.
func (c *CQ) resp(off int, cqe []byte, qpn uint32, wc *WC, lazy bool) result {
	qp, srq, r := c.getCurRsc(cqe, qpn, be.Uint32(cqe[32:36])&0xffffff)
	if r != cqOK {
		return r
	}
	if lazy && cqe[40] == appTagMatching {
		// Tag matching is not supported (see parse); only the lazy
		// path of libmlx5 tells its CQEs apart.
		return c.unknown(cqe, "tag-matching CQE (app)", uint32(cqe[40]))
	}
	wrID, idx, r := c.recvWRID(cqe, qp, srq)
	if r != cqOK {
		return r
	}
	byteLen := be.Uint32(cqe[44:48])
	st := Success
	if cqe[63]&(mlx.MLX5_INLINE_SCATTER_32|mlx.MLX5_INLINE_SCATTER_64) != 0 {
		st = c.copyToRecv(qp, srq, idx, off, cqe, byteLen)
	}
	csum := srq == nil && qp.RxCsum
	if lazy {
		c.ex.wrID, c.ex.status, c.ex.rxCsum = wrID, st, csum
		return cqOK
	}
	wc.ByteLen, wc.WRID, wc.Status = byteLen, wrID, st
	if csum {
		wc.Flags |= csumOK(cqe)
	}
	if st != Success {
		return cqOK // the address fields stay unwritten
	}
	switch cqe[63] >> 4 {
	case opRespImm:
		wc.Opcode = mlx.IBV_WC_RECV_RDMA_WITH_IMM
		wc.Flags |= mlx.IBV_WC_WITH_IMM
		wc.Imm = be.Uint32(cqe[36:40])
	case opRespSend:
		wc.Opcode = mlx.IBV_WC_RECV
	case opRespSImm:
		wc.Opcode = mlx.IBV_WC_RECV
		wc.Flags |= mlx.IBV_WC_WITH_IMM
		wc.Imm = be.Uint32(cqe[36:40])
	case opRespSInv:
		wc.Opcode = mlx.IBV_WC_RECV
		wc.Flags |= mlx.IBV_WC_WITH_INV
		wc.Imm = be.Uint32(cqe[36:40])
	}
	fr := be.Uint32(cqe[24:28])
	wc.SLID = be.Uint16(cqe[22:24])
	wc.SL = uint8(fr >> 24 & 0xf)
	wc.SrcQP = fr & 0xffffff
	wc.DLIDPathBits = cqe[17] & 0x7f
	if fr>>28&3 != 0 {
		wc.Flags |= mlx.IBV_WC_GRH
	}
	wc.PkeyIndex = uint16(be.Uint32(cqe[36:40]))
	return cqOK
}

// csumOK returns IBV_WC_IP_CSUM_OK when the CQE says the IPv4 and L4
// checksums were good. rdma-core: get_csum_ok.
func csumOK(cqe []byte) mlx.WCFlags {
	ok := cqe[28]&(mlx.MLX5_CQE_L4_OK|mlx.MLX5_CQE_L3_OK) == mlx.MLX5_CQE_L4_OK|mlx.MLX5_CQE_L3_OK
	if ok && cqe[29]>>2&3 == mlx.MLX5_CQE_L3_HDR_TYPE_IPV4 {
		return mlx.IBV_WC_IP_CSUM_OK
	}
	return 0
}

// handleErrorCQE maps an error syndrome to a status. rdma-core:
// mlx5_handle_error_cqe.
func handleErrorCQE(synd uint8) Status {
	switch mlx.CQESyndrome(synd) {
	case mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR:
		return LocLenErr
	case mlx.MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR:
		return LocQPOpErr
	case mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR:
		return LocProtErr
	case mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR:
		return WRFlushErr
	case mlx.MLX5_CQE_SYNDROME_MW_BIND_ERR:
		return MWBindErr
	case mlx.MLX5_CQE_SYNDROME_BAD_RESP_ERR:
		return BadRespErr
	case mlx.MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR:
		return LocAccessErr
	case mlx.MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:
		return RemInvReqErr
	case mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR:
		return RemAccessErr
	case mlx.MLX5_CQE_SYNDROME_REMOTE_OP_ERR:
		return RemOpErr
	case mlx.MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:
		return RetryExcErr
	case mlx.MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR:
		return RNRRetryExcErr
	case mlx.MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR:
		return RemAbortErr
	}
	return GeneralErr
}

// errCQE handles a requester or responder error CQE; again says an SRQ
// ODP page fault was handled and the next CQE takes its place.
// rdma-core: the MLX5_CQE_REQ_ERR / RESP_ERR case of mlx5_parse_cqe.
func (c *CQ) errCQE(cqe []byte, qpn uint32, wc *WC, lazy bool) (r result, again bool) {
	srqnUidx := be.Uint32(cqe[32:36]) & 0xffffff
	synd, vendor := cqe[55], cqe[54]
	st := handleErrorCQE(synd)
	if lazy {
		c.ex.status = st
	} else {
		wc.Status, wc.VendorErr, wc.Syndrome = st, uint32(vendor), synd
	}
	odp := mlx.CQESyndrome(synd) == mlx.MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR && vendor == mlx.MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT
	if mlx.CQESyndrome(synd) != mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR &&
		mlx.CQESyndrome(synd) != mlx.MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR && !odp && c.log != nil {
		c.log(LogErrorCQE, cqe)
	}
	var wrID uint64
	if cqe[63]>>4 == opReqErr {
		key := qpn
		if c.v1 {
			key = srqnUidx
		}
		qp := c.lookupQP(key)
		if qp == nil || qp.SQ == nil {
			return c.unknown(cqe, c.keyName(), key), false
		}
		idx := uint32(be.Uint16(cqe[60:62])) & (qp.SQ.Slots() - 1)
		id, head, _ := qp.SQ.Slot(idx)
		wrID = id
		if !lazy {
			// Read before Retire, which may free the slot.
			wc.PostedOpcode = slotOpcode(qp.SQ, idx)
		}
		qp.SQ.Retire(head + 1)
	} else {
		qp, srq, r := c.getCurRsc(cqe, qpn, srqnUidx)
		if r != cqOK {
			return r, false
		}
		if srq != nil && odp {
			ctr := uint32(be.Uint16(cqe[60:62]))
			if ctr >= srq.Size() {
				return c.unknown(cqe, "SRQ WQE index", ctr), false
			}
			if !srq.RepostODP(ctr) {
				return c.unknown(cqe, "posted SRQ WQE to repost", ctr), false
			}
			return cqOK, true
		}
		if wrID, _, r = c.recvWRID(cqe, qp, srq); r != cqOK {
			return r, false
		}
	}
	if lazy {
		c.ex.wrID = wrID
	} else {
		wc.WRID = wrID
	}
	return cqOK, false
}

// sigErr records a signature-error CQE on its mkey; the next CQE takes
// its place. rdma-core: the MLX5_CQE_SIG_ERR case of mlx5_parse_cqe.
func (c *CQ) sigErr(cqe []byte) (result, bool) {
	idx := be.Uint32(cqe[36:40]) >> 8
	m := c.mkeys[idx]
	if m == nil || !m.RecordSigErr(getSigErrInfo(cqe)) {
		return c.unknown(cqe, "mkey index", idx), false
	}
	return cqOK, true
}
