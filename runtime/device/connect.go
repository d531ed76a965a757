package device

import (
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// legal says whether a QP may move from one state to another
// (ibv_modify_qp(3)'s state machine, the states this API uses).
func legal(from, to mlx.QPState) bool {
	switch to {
	case mlx.IBV_QPS_RESET, mlx.IBV_QPS_ERR:
		return true
	case mlx.IBV_QPS_INIT:
		return from == mlx.IBV_QPS_RESET || from == mlx.IBV_QPS_INIT
	case mlx.IBV_QPS_RTR:
		return from == mlx.IBV_QPS_INIT
	case mlx.IBV_QPS_RTS:
		return from == mlx.IBV_QPS_RTR || from == mlx.IBV_QPS_RTS
	}
	return false
}

// checkQPAttr runs ibv_modify_qp's validators on the transition, then
// checks what the Go fields hold that the C ones cannot, one field at a
// time.
func checkQPAttr(kind QPKind, state mlx.QPState, attr QPAttr) error {
	if err := validateModify(kind, state, attr); err != nil {
		return err
	}
	const max24 = 0xffffff // PSNs and QPNs are 24-bit
	switch {
	case attr.MTU != 0 && (attr.MTU < mlx.IBV_MTU_256 || attr.MTU > mlx.IBV_MTU_4096):
		return cfgErr("QPAttr.MTU", int(attr.MTU), "IBV_MTU_256 to IBV_MTU_4096")
	case attr.Remote.PSN > max24:
		return cfgErr("QPAttr.Remote.PSN", attr.Remote.PSN, "24 bits (0 to %#x)", max24)
	case attr.SQPSN > max24:
		return cfgErr("QPAttr.SQPSN", attr.SQPSN, "24 bits (0 to %#x)", max24)
	case attr.Remote.QPN > max24:
		return cfgErr("QPAttr.Remote.QPN", attr.Remote.QPN, "24 bits (0 to %#x)", max24)
	}
	// ibv_global_route.sgid_index is a uint8_t.
	return inRange("QPAttr.Remote.GIDIndex", attr.Remote.GIDIndex, 0, 255, "")
}

// Modify moves the QP to state with attr (see QPAttr for what each
// transition uses). A transition the state machine does not allow is
// refused before the backend sees it (from the state the device has the
// QP in: see State).
//
// Moving to RESET is how a QP the device moved to error is used again:
// Modify(IBV_QPS_RESET), then Connect (or Activate) as for a new QP, then
// post. As libmlx5 does, the move to RESET also starts the program's side
// over: the QP's CQEs not yet polled leave its CQs (a receive through an
// SRQ gives its WQE back), the send and receive queue writers go back to
// index 0 with zeroed doorbell records, and the work requests posted
// before are forgotten without completions. Do not post on the QP or
// poll its CQs while it moves to RESET.
func (q *QP) Modify(state mlx.QPState, attr QPAttr) error {
	if err := q.n.check("Modify"); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.n.check("Modify"); err != nil { // closed while we waited
		return err
	}
	if err := checkQPAttr(q.kind, state, attr); err != nil {
		return fmt.Errorf("device: %s: Modify %v -> %v: %w", q.n.what, q.state, state, err)
	}
	if !legal(q.state, state) {
		q.refresh() // the device may have moved the QP to error
	}
	if !legal(q.state, state) {
		return fmt.Errorf("device: %s: Modify %v -> %v: %w", q.n.what, q.state, state,
			cfgErr("state", state, "not a transition ibv_modify_qp(3) allows from %v", q.state))
	}
	if q.kind == DCT && state == mlx.IBV_QPS_RTS {
		return fmt.Errorf("device: %s: Modify -> RTS: %w", q.n.what, cfgErr("state", state, "a DCT stops at RTR"))
	}
	if err := q.b.Modify(state, attr); err != nil {
		return fmt.Errorf("device: %s: Modify %v -> %v: %w", q.n.what, q.state, state, err)
	}
	q.state = state
	if state == mlx.IBV_QPS_RESET {
		if err := q.resetQueues(); err != nil {
			return fmt.Errorf("device: %s: Modify -> RESET: %w", q.n.what, err)
		}
	}
	return nil
}

// Endpoint returns what the remote side of an RC connection needs of this
// QP: its number, its first send PSN and port 1's address.
func (q *QP) Endpoint() (Endpoint, error) {
	if err := q.n.check("Endpoint"); err != nil {
		return Endpoint{}, err
	}
	p, err := q.c.Port()
	if err != nil {
		return Endpoint{}, err
	}
	return Endpoint{QPN: q.mem.QPN, PSN: q.psn, LID: p.LID, GID: p.GID, GIDIndex: p.GIDIndex, Ethernet: p.Ethernet}, nil
}

// DefaultAccess is the remote access Connect and Activate grant: RDMA
// write, read and atomics, and local write.
const DefaultAccess = mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_WRITE |
	mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_ATOMIC

// defaults are the transition attributes Connect and Activate use.
func (q *QP) defaults() (QPAttr, error) {
	p, err := q.c.Port()
	if err != nil {
		return QPAttr{}, err
	}
	mtu := p.MTU
	if mtu == 0 {
		mtu = mlx.IBV_MTU_1024
	}
	return QPAttr{Access: DefaultAccess, MTU: mtu, SQPSN: q.psn, MinRNR: 12, Timeout: 14, Retry: 7, RNRRetry: 7, RdAtomic: 1}, nil
}

// Connect connects an RC QP in RESET to remote: RESET → INIT → RTR → RTS,
// with DefaultAccess, the port's active MTU and common timeouts. Use
// Modify for other attributes.
func (q *QP) Connect(remote Endpoint) error {
	if q.kind != RC {
		return fmt.Errorf("device: %s: Connect: only an RC QP connects (Activate a %v)", q.n.what, q.kind)
	}
	if remote.QPN == 0 {
		return fmt.Errorf("device: %s: Connect: Endpoint.QPN is 0", q.n.what)
	}
	return q.walk(remote, mlx.IBV_QPS_INIT, mlx.IBV_QPS_RTR, mlx.IBV_QPS_RTS)
}

// Activate readies a DC QP in RESET: a DCI to RTS (its work requests
// carry the address), a DCT to RTR.
func (q *QP) Activate() error {
	switch q.kind {
	case DCI:
		return q.walk(Endpoint{}, mlx.IBV_QPS_INIT, mlx.IBV_QPS_RTR, mlx.IBV_QPS_RTS)
	case DCT:
		return q.walk(Endpoint{}, mlx.IBV_QPS_INIT, mlx.IBV_QPS_RTR)
	}
	return fmt.Errorf("device: %s: Activate: only DC QPs activate (Connect an RC QP)", q.n.what)
}

func (q *QP) walk(remote Endpoint, states ...mlx.QPState) error {
	if err := q.n.check("Connect"); err != nil {
		return err
	}
	a, err := q.defaults()
	if err != nil {
		return err
	}
	a.Remote = remote
	for _, s := range states {
		if err := q.Modify(s, a); err != nil {
			return err
		}
	}
	return nil
}
