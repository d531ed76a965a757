package device

import (
	"errors"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// StreamResetter is an optional interface of a BackendQP: ResetStream
// takes a DCI stream out of error (mlx5dv_dci_stream_id_reset(3)).
// QP.ResetStream checked that the QP is a DCI with streams, in RTS, and
// that id is one of its streams.
type StreamResetter interface {
	ResetStream(id uint16) error
}

// ResetStream resets DCI stream id after an error put it in error
// (mlx5dv_dci_stream_id_reset(3)). A stream error fails that work request
// and flushes the stream's later ones while the DCI stays in RTS and its
// other streams go on (check with State after an error completion); once
// the stream's work requests are flushed, ResetStream lets it carry work
// again. Too many streams in error (QPConfig.LogNumErrored) move the DCI
// itself to error, which ResetStream does not undo: that needs RESET.
//
// It refuses, naming the field, a QP that is not a DCI created with
// streams (QPConfig.LogNumConcurent) and a stream id past its streams,
// and a QP not in RTS (as libmlx5 does, with EOPNOTSUPP there); it fails
// with an error matching errors.ErrUnsupported on a backend that cannot
// reset a stream.
func (q *QP) ResetStream(id uint16) error {
	if err := q.n.check("ResetStream"); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.n.check("ResetStream"); err != nil { // closed while we waited
		return err
	}
	if err := q.checkStream(id); err != nil {
		return fmt.Errorf("device: %s: ResetStream(%d): %w", q.n.what, id, err)
	}
	r, ok := q.b.(StreamResetter)
	if !ok {
		return fmt.Errorf("device: %s: ResetStream(%d): the backend cannot reset a DCI stream (mlx5dv_dci_stream_id_reset): %w",
			q.n.what, id, errors.ErrUnsupported)
	}
	if err := r.ResetStream(id); err != nil {
		return fmt.Errorf("device: %s: ResetStream(%d): %w", q.n.what, id, err)
	}
	return nil
}

// checkStream refuses what mlx5dv_dci_stream_id_reset could not do on
// this QP; the caller holds q.mu.
func (q *QP) checkStream(id uint16) error {
	sq := q.mem.QP
	if q.kind != DCI || !sq.Streams || sq.LogNumConcurent <= 0 {
		return cfgErr("qp", q.kind.String(), "a DCI created with streams (QPConfig.LogNumConcurent)")
	}
	if n := 1 << sq.LogNumConcurent; int(id) >= n {
		return cfgErr("stream_id", id, "0 to %d, the DCI's streams (QPConfig.LogNumConcurent %d)", n-1, sq.LogNumConcurent)
	}
	q.refresh()
	if q.state != mlx.IBV_QPS_RTS {
		return fmt.Errorf("the QP is in %v, not RTS: only a DCI in RTS has streams to reset (a DCI in error needs RESET)", q.state)
	}
	return nil
}
