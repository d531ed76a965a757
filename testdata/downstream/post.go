package downstream

import (
	"example.com/downstream/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// NewRC makes a send-queue writer for an RC QP that offers RDMA writes,
// over mem; the QP's type and send ops are this module's constants.
func NewRC(mem *qmem.Memory, qpn uint32) (*sq.SQ, error) {
	return sq.New(sq.Config{
		Mem: mem,
		QPN: qpn,
		QP: sq.QP{
			Type:          mlx5dv.QPRC,
			SendOps:       mlx5dv.IBV_QP_EX_WITH_RDMA_WRITE,
			MaxInlineData: 64,
			MaxSendSGE:    1,
		},
	})
}

// WriteSignaled posts one RDMA write of length bytes at addr (lkey) to
// raddr (rkey) that asks for a completion, and rings the doorbell.
func WriteSignaled(q *sq.SQ, id uint64, lkey uint32, addr uint64, length, rkey uint32, raddr uint64) error {
	q.SetWRID(id)
	q.SetWRFlags(mlx5dv.IBV_SEND_SIGNALED)
	if err := q.Start(); err != nil {
		return err
	}
	if err := q.RDMAWrite(rkey, raddr); err != nil {
		return err
	}
	if err := q.SetSGE(lkey, addr, length); err != nil {
		return err
	}
	return q.Complete()
}
