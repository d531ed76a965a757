package cq

import (
	"fmt"
	"syscall"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// Status is a work completion's status (enum ibv_wc_status).
type Status mlx.WCStatus

// The statuses libmlx5's poller reports.
const (
	Success        = Status(mlx.IBV_WC_SUCCESS)
	LocLenErr      = Status(mlx.IBV_WC_LOC_LEN_ERR)
	LocQPOpErr     = Status(mlx.IBV_WC_LOC_QP_OP_ERR)
	LocProtErr     = Status(mlx.IBV_WC_LOC_PROT_ERR)
	WRFlushErr     = Status(mlx.IBV_WC_WR_FLUSH_ERR)
	MWBindErr      = Status(mlx.IBV_WC_MW_BIND_ERR)
	BadRespErr     = Status(mlx.IBV_WC_BAD_RESP_ERR)
	LocAccessErr   = Status(mlx.IBV_WC_LOC_ACCESS_ERR)
	RemInvReqErr   = Status(mlx.IBV_WC_REM_INV_REQ_ERR)
	RemAccessErr   = Status(mlx.IBV_WC_REM_ACCESS_ERR)
	RemOpErr       = Status(mlx.IBV_WC_REM_OP_ERR)
	RetryExcErr    = Status(mlx.IBV_WC_RETRY_EXC_ERR)
	RNRRetryExcErr = Status(mlx.IBV_WC_RNR_RETRY_EXC_ERR)
	RemAbortErr    = Status(mlx.IBV_WC_REM_ABORT_ERR)
	GeneralErr     = Status(mlx.IBV_WC_GENERAL_ERR)
)

// String returns the C name (IBV_WC_SUCCESS, ...).
func (s Status) String() string { return mlx.WCStatus(s).String() }

// Errno classifies the status as an errno, for errors.Is: 0 for success;
// EMSGSIZE for a length error; EACCES for protection and access errors;
// ECANCELED for a flushed work request; ETIMEDOUT for exhausted retries;
// EREMOTEIO for what the remote side refused or aborted; EINVAL for an
// operation the QP cannot do; EIO otherwise.
func (s Status) Errno() syscall.Errno {
	switch s {
	case Success:
		return 0
	case LocLenErr:
		return syscall.EMSGSIZE
	case LocProtErr, LocAccessErr, RemAccessErr, MWBindErr:
		return syscall.EACCES
	case WRFlushErr:
		return syscall.ECANCELED
	case RetryExcErr, RNRRetryExcErr, Status(mlx.IBV_WC_RESP_TIMEOUT_ERR):
		return syscall.ETIMEDOUT
	case RemInvReqErr, RemOpErr, RemAbortErr, BadRespErr, Status(mlx.IBV_WC_REM_INV_RD_REQ_ERR):
		return syscall.EREMOTEIO
	case LocQPOpErr:
		return syscall.EINVAL
	}
	return syscall.EIO
}

// Err returns nil for success and a *StatusError otherwise. It knows the
// status only; WC.Err says which work request failed and why.
func (s Status) Err() error {
	if s == Success {
		return nil
	}
	return &StatusError{Status: s}
}

// StatusError is a failed work completion as an error; errors.Is matches
// its Errno. From WC.Err it names the work request (wr_id, QPN, the
// opcode it was posted with) and the CQE's syndrome with its meaning: the
// status alone (IBV_WC_REM_ACCESS_ERR) does not say which request failed,
// and libmlx5's opcode of an error completion is always IBV_WC_SEND.
type StatusError struct {
	Status    Status
	VendorErr uint32
	// What WC.Err adds; zero from Status.Err.
	WRID     uint64
	QPNum    uint32
	Syndrome mlx.CQESyndrome // 0: the completion had no error CQE
	// PostedOpcode is the send WQE's opcode; 0 when not known (a receive
	// error), in which case Error leaves it out.
	PostedOpcode mlx.Opcode
	fromWC       bool
}

// Error formats only here, so that polling never allocates for it.
func (e *StatusError) Error() string {
	if !e.fromWC {
		return fmt.Sprintf("work completion %v (vendor error %#x)", e.Status, e.VendorErr)
	}
	b := make([]byte, 0, 256)
	b = fmt.Appendf(b, "work completion %v: wr_id %#x on QPN %#x", e.Status, e.WRID, e.QPNum)
	if e.PostedOpcode != 0 {
		b = fmt.Appendf(b, ", posted as %v", e.PostedOpcode)
	}
	if e.Syndrome != 0 {
		b = fmt.Appendf(b, ": syndrome %v", e.Syndrome)
		if m := e.Syndrome.Meaning(); m != "" {
			b = fmt.Appendf(b, " (%s)", m)
		}
	}
	b = fmt.Appendf(b, ", vendor error %#x", e.VendorErr)
	return string(b)
}

// Is reports whether target is the status's errno.
func (e *StatusError) Is(target error) bool {
	errno, ok := target.(syscall.Errno)
	return ok && errno == e.Status.Errno()
}

// Err returns nil for a successful completion, else a *StatusError that
// names the work request, the opcode it was posted with and the syndrome.
// It allocates only for a failed completion.
func (wc *WC) Err() error {
	if wc.Status == Success {
		return nil
	}
	return &StatusError{
		Status: wc.Status, VendorErr: wc.VendorErr, WRID: wc.WRID, QPNum: wc.QPNum,
		Syndrome: mlx.CQESyndrome(wc.Syndrome), PostedOpcode: mlx.Opcode(wc.PostedOpcode), fromWC: true,
	}
}

// WC is a work completion (struct ibv_wc). A field libmlx5 does not write
// for a completion is 0 here (testdata/cqe-vectors/README.md says which:
// byte_len of a requester SEND, say), except what a CQE handled in the
// completion's place left, as in libmlx5: the status and vendor_err of an
// SRQ ODP page fault.
type WC struct {
	WRID      uint64
	Status    Status
	Opcode    mlx.IBVWCOpcode
	VendorErr uint32
	ByteLen   uint32
	// Imm is the immediate data as the sender gave it to htobe32 (with
	// IBV_WC_WITH_IMM), or the invalidated rkey (with IBV_WC_WITH_INV):
	// ibv_wc's union read as a number.
	Imm          uint32
	QPNum        uint32
	SrcQP        uint32
	Flags        mlx.WCFlags
	PkeyIndex    uint16
	SLID         uint16
	SL           uint8
	DLIDPathBits uint8
	// Syndrome is the error CQE's syndrome (an mlx.CQESyndrome:
	// MLX5_CQE_SYNDROME_*), 0 for a completion without one.
	Syndrome uint8
	// PostedOpcode is the opcode (an mlx.Opcode: MLX5_OPCODE_*) the failed
	// send work request was posted with, from the send queue's bookkeeping
	// (see SlotOpcoder); 0 when not known, as for a receive error. Opcode
	// stays IBV_WC_SEND for every error, as libmlx5 reports it. Both fit
	// the padding that ended WC, which stays 48 bytes.
	PostedOpcode uint8
}

// UnknownError is a CQE the poller could not attribute: its QPN, user
// index, SRQ number, SRQ WQE index or mkey is not registered (libmlx5's
// CQ_POLL_ERR). The CQE was consumed, as libmlx5 consumes it.
type UnknownError struct {
	Index  uint32 // the consumer index of the CQE
	Opcode mlx.CQEOpcode
	What   string // "QPN", "user index", "SRQ", "SRQ WQE index", "mkey", "opcode"
	Value  uint32
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("cq: CQE %d (%v): unknown %s %#x", e.Index, e.Opcode, e.What, e.Value)
}

// Is matches syscall.EIO.
func (e *UnknownError) Is(target error) bool { return target == syscall.EIO }
