package sq

// Reset starts the writer over on an empty ring, as libmlx5's
// mlx5_modify_qp does when a QP moves to RESET (mlx5_init_qp_indices, then
// the send doorbell record zeroed): the device forgot every WQE, so the
// writer's producer index, work request counters and the send counter of
// the doorbell record go back to 0, and the next WQE is written at slot 0,
// where a reset device starts reading.
//
// An open batch is aborted first (nothing of it was posted). Fields
// touched: curPost, head, tail, nreq (through Abort), limit and the
// doorbell record's bytes 4..7 (MLX5_SND_DBR). The fence cache, wr_id,
// wr_flags, the BlueFlame half and the per-slot bookkeeping are kept, as
// libmlx5 keeps them: each is rewritten before it is read again. A
// closed writer stays closed.
//
// Call it only while nothing posts on the writer and nothing polls the
// CQs it completes to (runtime/device calls it from QP.Modify to RESET,
// after the backend moved the QP there and its CQEs were cleaned).
func (q *SQ) Reset() {
	q.Abort()
	if !q.pub.gate.Enter() {
		return // closed: the memory may be gone
	}
	q.curPost, q.head, q.tail = 0, 0, 0
	q.pub.head.Publish(0)
	q.pub.tail.Publish(0)
	q.resetLimit()
	if len(q.mem.DBR) >= 8 {
		clear(q.mem.DBR[4:8])
	}
	q.pub.gate.Leave()
}
