package device

import (
	"errors"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// ErrNoQuery is the error of QP.Query on a backend that cannot read a
// QP's attributes back (no QPQuerier).
var ErrNoQuery = errors.New("the backend cannot query a QP")

// State returns the QP's state as the device has it. The device moves a
// QP to IBV_QPS_ERR by itself when a work request fails (its error
// completion is written then), so for a QP in RTR or RTS State asks the
// backend (QPQuerier: the simulator's engine, ibv_query_qp on hardware,
// a system call there) and reports what the device says; in RESET, INIT
// and ERR, which only the program leaves, and on a backend that cannot
// tell, it is the state the last transition left. A closed QP reports
// the state it had.
func (q *QP) State() mlx.QPState {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.refresh()
	return q.state
}

// refresh learns the device's state of a QP the device may have moved to
// error; the caller holds q.mu. An error of the backend keeps the state
// known (Query reports it).
func (q *QP) refresh() {
	if q.state != mlx.IBV_QPS_RTR && q.state != mlx.IBV_QPS_RTS {
		return
	}
	qr, ok := q.b.(QPQuerier)
	if !ok || q.n.closed.Load() {
		return
	}
	if info, err := qr.Query(); err == nil {
		q.state = info.State
	}
}

// Query returns the QP's state and attributes as the device reports them
// (ibv_query_qp(3)): the state, what the transitions set (QPInfo says
// which are meaningful when) and the capabilities the QP got. It fails
// with ErrNoQuery on a backend that cannot tell, and with ErrClosed after
// Close. The state it reports becomes the one State and Modify start
// from.
func (q *QP) Query() (QPInfo, error) {
	if err := q.n.check("Query"); err != nil {
		return QPInfo{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.n.check("Query"); err != nil { // closed while we waited
		return QPInfo{}, err
	}
	qr, ok := q.b.(QPQuerier)
	if !ok {
		return QPInfo{}, fmt.Errorf("device: %s: Query: %w", q.n.what, ErrNoQuery)
	}
	info, err := qr.Query()
	if err != nil {
		return QPInfo{}, fmt.Errorf("device: %s: Query: %w", q.n.what, err)
	}
	q.state = info.State
	return info, nil
}

// resetQueues does for the program's side of the queues what libmlx5's
// mlx5_modify_qp does after a move to RESET: the QP's CQEs leave its CQs
// (receive CQ first, as mlx5_cq_clean runs), then the writers start over
// at index 0 with zeroed doorbell records (mlx5_init_qp_indices). The
// caller holds q.mu, and the QP is open, so its CQs are too (closing a CQ
// closes its QPs first, which waits for q.mu).
func (q *QP) resetQueues() error {
	cqs := []*CQ{q.rcq}
	if q.scq != q.rcq {
		cqs = append(cqs, q.scq)
	}
	for _, c := range cqs {
		key := q.mem.QPN
		if c.mem.CQEVersion == 1 {
			key = q.mem.UIdx
		}
		if err := c.poll.Clean(key); err != nil {
			return err
		}
	}
	if q.sq != nil {
		q.sq.Reset()
	}
	if q.rq != nil {
		q.rq.Reset()
	}
	return nil
}
