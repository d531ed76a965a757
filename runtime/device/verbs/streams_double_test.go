//go:build mlx5gen_double && cgo

package verbs

import (
	"encoding/binary"
	"errors"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
)

// TestResetStreamDouble: ResetStream calls mlx5dv_dci_stream_id_reset
// with the QP's struct ibv_qp * and the stream id, and libmlx5's errno
// comes back wrapped.
func TestResetStreamDouble(t *testing.T) {
	p := mv.DoubleAlloc(64)
	defer mv.DoubleFree(p)
	q := &vqp{qp: mv.IBVQPFrom(p)}
	mv.DoubleReset(0, 0)
	if err := q.ResetStream(0x1234); err != nil {
		t.Fatal(err)
	}
	// The double records a uint16_t as its two bytes.
	oneCall(t, mlx.FnDCIStreamIDReset, binary.NativeEndian.AppendUint16(args{}.ptr(p), 0x1234))
	mv.DoubleReset(int64(syscall.EOPNOTSUPP), 0)
	if err := q.ResetStream(1); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Fatalf("a refused reset: %v, want EOPNOTSUPP", err)
	}
}
