package cq

// SlotOpcoder is what a SendQueue may also implement so that an error
// completion names the operation that failed: the opcode (MLX5_OPCODE_*)
// of the WQE posted at slot idx (< Slots()). libmlx5 reports IBV_WC_SEND
// as the opcode of every error completion, so without it a failed RDMA
// write and a failed send look alike. The SQ adapter implements it.
type SlotOpcoder interface {
	SlotOpcode(idx uint32) uint8
}

// slotOpcode returns the opcode posted at slot idx of q, or 0 if q does
// not keep it. Only error completions ask: the type assertion stays off
// the success path.
func slotOpcode(q SendQueue, idx uint32) uint8 {
	if so, ok := q.(SlotOpcoder); ok {
		return so.SlotOpcode(idx)
	}
	return 0
}

// isErrCQE reports whether the CQE is a requester or responder error.
func isErrCQE(cqe []byte) bool {
	op := cqe[63] >> 4
	return op == opReqErr || op == opRespErr
}
