package device

import (
	"errors"
	"fmt"
	"unsafe"
)

// Native is an optional interface of a backend object that stands for a
// C object of libibverbs and libmlx5 (runtime/device/verbs implements it
// on every object): Native returns the C pointer — struct ibv_context *,
// ibv_pd *, ibv_cq *, ibv_qp *, ibv_srq * — which the generated bindings
// take through their handle constructors (mlx5verbs.IBVContextFrom, ...).
// It is how a program calls a function of mlx5dv.h the device API does
// not wrap (docs/downstream.md, "Calling what the device API does not
// wrap").
type Native interface {
	Native() unsafe.Pointer
}

// ErrNoNative: the backend has no C object behind its objects (the
// simulator models the device in Go; there is no struct ibv_context to
// hand out). It matches errors.ErrUnsupported.
var ErrNoNative = fmt.Errorf("the backend has no libibverbs object behind it (only runtime/device/verbs has): %w", errors.ErrUnsupported)

// native is the C pointer behind b, or the error naming the object and
// the call: b's object is closed (ErrClosed) or has no C object
// (ErrNoNative).
func native(n *node, b any, op string) (unsafe.Pointer, error) {
	if err := n.check(op); err != nil {
		return nil, err
	}
	nb, ok := b.(Native)
	if !ok {
		return nil, fmt.Errorf("device: %s: %s: %w", n.what, op, ErrNoNative)
	}
	p := nb.Native()
	if p == nil {
		return nil, fmt.Errorf("device: %s: %s: %w", n.what, op, ErrNoNative)
	}
	return p, nil
}

// Native returns the context's struct ibv_context * for the generated
// bindings (mlx5verbs.IBVContextFrom). The pointer stays valid until the
// context is closed; the caller must not close or free it, nor use it
// after Close, and closes what it creates with it before closing the
// context. Native may run concurrently with any call but Close. On a
// backend without C objects (the simulator) it returns an error matching
// ErrNoNative.
func (c *Context) Native() (unsafe.Pointer, error) { return native(c.root, c.b, "Native") }

// Native returns the PD's struct ibv_pd * (the bindings take it as the
// mirror *mlx5dv.IBVPD: (*mlx5dv.IBVPD)(p)), valid until the PD is
// closed; as Context.Native otherwise.
func (pd *PD) Native() (unsafe.Pointer, error) { return native(pd.n, pd.b, "Native") }

// Native returns the CQ's struct ibv_cq * (mlx5verbs.IBVCQFrom), valid
// until the CQ is closed; as Context.Native otherwise.
func (q *CQ) Native() (unsafe.Pointer, error) { return native(q.n, q.b, "Native") }

// Native returns the QP's struct ibv_qp * (mlx5verbs.IBVQPFrom), valid
// until the QP is closed; as Context.Native otherwise. A program that
// changes the QP's state through it leaves QP.State stale: use Query.
func (q *QP) Native() (unsafe.Pointer, error) { return native(q.n, q.b, "Native") }

// Native returns the SRQ's struct ibv_srq * (mlx5verbs.IBVSRQFrom),
// valid until the SRQ is closed; as Context.Native otherwise.
func (s *SRQ) Native() (unsafe.Pointer, error) { return native(s.n, s.b, "Native") }
