package cq

import (
	"syscall"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// ErrEmpty is what StartPoll and NextPoll return when no completion is
// ready (ENOENT, as ibv_start_poll and ibv_next_poll).
var ErrEmpty error = syscall.ENOENT

var zeroCQE [64]byte

// exState is the current completion of a lazy session: libmlx5 keeps the
// CQE (cq->cqe64), ibv_cq_ex's wr_id and status, the cached opcode and
// the lazy flags.
type exState struct {
	off    int
	cqe    []byte
	wrID   uint64
	status Status
	cached mlx.IBVWCOpcode
	raw    bool // MLX5_CQ_FLAGS_RAW_WQE
	rxCsum bool // MLX5_CQ_FLAGS_RX_CSUM_VALID
}

// StartPoll opens a session on the first ready completion: nil, ErrEmpty
// (nothing ready, or only CQEs the poller handles itself; no session is
// open), or an *UnknownError (its CQE is consumed; no session is open).
// The doorbell record is written by EndPoll only. rdma-core:
// mlx5_start_poll.
//
// A session is the poller inside its CQ, as a Poll call is: Close waits
// for EndPoll.
func (c *CQ) StartPoll() error {
	if !c.session && !c.gate.Enter() {
		return ErrClosed
	}
	c.session = true
	c.curQP, c.curSRQ = nil, nil
	off, cqe := c.nextCQE()
	if cqe == nil {
		c.endSession()
		return ErrEmpty
	}
	if err := c.lazy(off, cqe); err != nil {
		c.endSession()
		return err
	}
	return nil
}

// endSession leaves the CQ at the end of a session, or where StartPoll
// opened none.
func (c *CQ) endSession() {
	c.session = false
	c.gate.Leave()
}

// NextPoll moves the session to the next completion: nil, ErrEmpty or an
// *UnknownError. rdma-core: mlx5_next_poll.
func (c *CQ) NextPoll() error {
	if !c.session {
		return c.StartPoll()
	}
	off, cqe := c.nextCQE()
	if cqe == nil {
		return ErrEmpty
	}
	return c.lazy(off, cqe)
}

func (c *CQ) lazy(off int, cqe []byte) error {
	switch c.parse(off, cqe, nil, true) {
	case cqOK:
		return nil
	case cqNoData:
		return ErrEmpty
	}
	return &c.unk
}

// EndPoll closes the session and writes the consumer index to the
// doorbell record. rdma-core: _mlx5_end_poll.
func (c *CQ) EndPoll() {
	if !c.session {
		return // StartPoll opened none: nothing to end
	}
	c.updateConsIndex()
	c.endSession()
}

// WRID returns the current completion's wr_id (ibv_cq_ex.wr_id).
func (c *CQ) WRID() uint64 { return c.ex.wrID }

// Status returns the current completion's status (ibv_cq_ex.status).
func (c *CQ) Status() Status { return c.ex.status }

func (c *CQ) cur() []byte {
	if c.ex.cqe == nil {
		return zeroCQE[:] // no completion read yet
	}
	return c.ex.cqe
}

// ReadOpcode returns the completion's opcode; 0 (IBV_WC_SEND) for an
// error CQE, as libmlx5. rdma-core: mlx5_cq_read_wc_opcode.
func (c *CQ) ReadOpcode() mlx.IBVWCOpcode {
	cqe := c.cur()
	switch cqe[63] >> 4 {
	case opRespImm:
		return mlx.IBV_WC_RECV_RDMA_WITH_IMM
	case opRespSend, opRespSImm, opRespSInv:
		return mlx.IBV_WC_RECV
	case opReq:
		if c.ex.raw {
			return mlx.IBV_WC_DRIVER2
		}
		switch mlx.Opcode(cqe[56]) {
		case mlx.MLX5_OPCODE_RDMA_WRITE_IMM, mlx.MLX5_OPCODE_RDMA_WRITE:
			return mlx.IBV_WC_RDMA_WRITE
		case mlx.MLX5_OPCODE_SEND_IMM, mlx.MLX5_OPCODE_SEND, mlx.MLX5_OPCODE_SEND_INVAL:
			return mlx.IBV_WC_SEND
		case mlx.MLX5_OPCODE_RDMA_READ:
			return mlx.IBV_WC_RDMA_READ
		case mlx.MLX5_OPCODE_ATOMIC_CS:
			return mlx.IBV_WC_COMP_SWAP
		case mlx.MLX5_OPCODE_ATOMIC_FA:
			return mlx.IBV_WC_FETCH_ADD
		case mlx.MLX5_OPCODE_UMR, mlx.MLX5_OPCODE_SET_PSV, mlx.MLX5_OPCODE_NOP, mlx.MLX5_OPCODE_MMO:
			return c.ex.cached
		case mlx.MLX5_OPCODE_TSO:
			return mlx.IBV_WC_TSO
		}
	}
	return 0
}

// ReadQPNum returns the QPN the CQE names. rdma-core:
// mlx5_cq_read_wc_qp_num.
func (c *CQ) ReadQPNum() uint32 { return be.Uint32(c.cur()[56:60]) & 0xffffff }

// ReadFlowTag returns the flow tag: the same 24 bits as ReadQPNum.
// rdma-core: mlx5_cq_read_flow_tag.
func (c *CQ) ReadFlowTag() uint32 { return be.Uint32(c.cur()[56:60]) & 0xffffff }

// ReadFlags returns the completion's flags: WITH_IMM and WITH_INV for
// responder completions only (a requester SEND_IMM has none here, unlike
// Poll). rdma-core: mlx5_cq_read_wc_flags.
func (c *CQ) ReadFlags() mlx.WCFlags {
	cqe := c.cur()
	var f mlx.WCFlags
	if c.ex.rxCsum {
		f = csumOK(cqe)
	}
	switch cqe[63] >> 4 {
	case opRespImm, opRespSImm:
		f |= mlx.IBV_WC_WITH_IMM
	case opRespSInv:
		f |= mlx.IBV_WC_WITH_INV
	}
	if be.Uint32(cqe[24:28])>>28&3 != 0 {
		f |= mlx.IBV_WC_GRH
	}
	return f
}

// ReadByteLen returns the CQE's byte count, for every opcode (8 is not
// substituted for atomics here). rdma-core: mlx5_cq_read_wc_byte_len.
func (c *CQ) ReadByteLen() uint32 { return be.Uint32(c.cur()[44:48]) }

// ReadVendorErr returns byte 54 of the CQE: the vendor syndrome of an
// error CQE (a timestamp byte otherwise). rdma-core:
// mlx5_cq_read_wc_vendor_err.
func (c *CQ) ReadVendorErr() uint32 { return uint32(c.cur()[54]) }

// ReadImmData returns the immediate data as the sender gave it to
// htobe32, or for a SEND_WITH_INV the invalidated rkey. rdma-core:
// mlx5_cq_read_wc_imm_data.
func (c *CQ) ReadImmData() uint32 { return be.Uint32(c.cur()[36:40]) }

// ReadInvalidatedRKey returns the invalidated rkey of a SEND_WITH_INV
// (ibv_wc_read_invalidated_rkey).
func (c *CQ) ReadInvalidatedRKey() uint32 { return be.Uint32(c.cur()[36:40]) }

// ReadSLID returns the source LID. rdma-core: mlx5_cq_read_wc_slid.
func (c *CQ) ReadSLID() uint32 { return uint32(be.Uint16(c.cur()[22:24])) }

// ReadSL returns the service level. rdma-core: mlx5_cq_read_wc_sl.
func (c *CQ) ReadSL() uint8 { return uint8(be.Uint32(c.cur()[24:28]) >> 24 & 0xf) }

// ReadSrcQP returns the source QPN. rdma-core: mlx5_cq_read_wc_src_qp.
func (c *CQ) ReadSrcQP() uint32 { return be.Uint32(c.cur()[24:28]) & 0xffffff }

// ReadDLIDPathBits returns the DLID path bits. rdma-core:
// mlx5_cq_read_wc_dlid_path_bits.
func (c *CQ) ReadDLIDPathBits() uint8 { return c.cur()[17] & 0x7f }

// ReadCompletionTS returns the raw completion timestamp. rdma-core:
// mlx5_cq_read_wc_completion_ts.
func (c *CQ) ReadCompletionTS() uint64 { return be.Uint64(c.cur()[48:56]) }

// ReadCVLAN returns the CQE's VLAN field. rdma-core:
// mlx5_cq_read_wc_cvlan.
func (c *CQ) ReadCVLAN() uint16 { return be.Uint16(c.cur()[30:32]) }

// ReadSyndrome returns the syndrome of an error completion
// (MLX5_CQE_SYNDROME_*; its Meaning says why the request failed), or 0
// for a completion without an error CQE.
func (c *CQ) ReadSyndrome() mlx.CQESyndrome {
	cqe := c.cur()
	if !isErrCQE(cqe) {
		return 0
	}
	return mlx.CQESyndrome(cqe[55])
}

// ReadPostedOpcode returns the opcode (MLX5_OPCODE_*) the failed send
// work request of a requester error completion was posted with, read from
// the send queue's bookkeeping (SlotOpcoder) now: call it before posting
// into the slot again. 0 when not known: a receive error, a success, or a
// send queue that does not keep opcodes.
func (c *CQ) ReadPostedOpcode() mlx.Opcode {
	cqe := c.cur()
	if cqe[63]>>4 != opReqErr {
		return 0
	}
	key := be.Uint32(cqe[56:60]) & 0xffffff
	if c.v1 {
		key = be.Uint32(cqe[32:36]) & 0xffffff
	}
	qp := c.lookupQP(key)
	if qp == nil || qp.SQ == nil {
		return 0
	}
	return mlx.Opcode(slotOpcode(qp.SQ, uint32(be.Uint16(cqe[60:62]))&(qp.SQ.Slots()-1)))
}
