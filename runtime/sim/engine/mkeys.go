package engine

import (
	"github.com/mlx5gen/mlx5gen/runtime/sim/cqe"
)

// Mkeys is what the engine needs of a device's indirect mkeys: the
// runtime/sim/mkey table, wired in by the backend (Device.SetMkeys). The
// engine hands it UMR and SET_PSV WQEs whose key is one of its mkeys, and
// moves data through it for scatter/gather entries and rkeys that name
// one. Errors are the failed work request's; a *Fault among them gives
// its syndrome (local protection, remote access).
type Mkeys interface {
	// Is reports whether key is an indirect mkey of the table.
	Is(key uint32) bool
	// ExecUMR configures (or frees) an mkey: wqe is the whole UMR WQE,
	// control segment first, unwrapped from the ring.
	ExecUMR(wqe []byte) error
	// ExecSetPSV executes a SET_PSV WQE.
	ExecSetPSV(wqe []byte) error
	// Invalidate is a local invalidate of the mkey.
	Invalidate(key uint32) error
	// Gather appends to dst the wire bytes of n bytes at addr of the
	// mkey's address space.
	Gather(key uint32, addr, n uint64, remote bool, dst []byte) ([]byte, error)
	// Scatter writes the wire bytes arriving for addr to memory.
	Scatter(key uint32, addr uint64, wire []byte, remote bool) error
	// SigError returns and clears the signature error the last transfer
	// recorded on the mkey, as the signature-error CQE reports it.
	SigError(key uint32) (cqe.Sig, bool)
}

// FaultKind of an error an Mkeys call returns: which syndrome the failed
// work request gets.
type FaultKind uint8

// The kinds of Fault.
const (
	FaultLocalProtection FaultKind = iota + 1
	FaultRemoteAccess
	FaultLength
)

// Fault is an access an mkey refused; an Mkeys call returns one (through
// errors.As) to choose the error CQE's syndrome.
type Fault interface {
	error
	FaultKind() FaultKind
}
