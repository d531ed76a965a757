package rq

// Reset starts the writer over on an empty ring, as libmlx5's
// mlx5_modify_qp does when a QP moves to RESET (mlx5_init_qp_indices, then
// the receive doorbell record zeroed): the device forgot every receive
// WQE, so the next one is posted at index 0 and the receive counter starts
// at 0 again; the work requests posted before are dropped without a
// completion.
//
// Fields touched: head, tail and the doorbell record (MLX5_RCV_DBR, its
// 4 bytes). The kept wr_ids are rewritten before they are read again. A
// closed writer stays closed.
//
// Call it only while nothing posts on the writer and nothing polls the
// CQ it completes to (runtime/device calls it from QP.Modify to RESET,
// after the backend moved the QP there and its CQEs were cleaned).
func (q *RQ) Reset() {
	if !q.pub.gate.Enter() {
		return // closed: the memory may be gone
	}
	q.head, q.tail = 0, 0
	q.pub.head.Publish(0)
	q.pub.tail.Publish(0)
	if q.dbr != nil {
		clear(q.dbr[:])
	}
	q.pub.gate.Leave()
}
