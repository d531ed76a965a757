package engine_test

import (
	"bytes"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

func TestRDMAWrite(t *testing.T) {
	f, a, b := pair(t, defaults)
	copy(a.data.Bytes[0:], "hello, simulated fabric")
	a.post(7, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.RDMAWrite(b.key, b.addr(100))
		return q.SetSGE(a.key, a.addr(0), 23)
	})
	if n := f.Drain(10); n == 0 {
		t.Fatal("the engine did nothing")
	}
	wc := a.poll()
	if len(wc) != 1 || wc[0].WRID != 7 || wc[0].Status != cq.Success || wc[0].Opcode != mlx.IBV_WC_RDMA_WRITE {
		t.Fatalf("completions %+v", wc)
	}
	if got := b.data.Bytes[100:123]; !bytes.Equal(got, []byte("hello, simulated fabric")) {
		t.Fatalf("remote memory %q", got)
	}
	if a.q.Outstanding() != 0 {
		t.Fatalf("outstanding %d", a.q.Outstanding())
	}
}

// TestFastPathAgrees: a single-SGE RDMA write takes the engine's fast path
// unless fenced; both ways write the same data and the same CQE bytes.
func TestFastPathAgrees(t *testing.T) {
	var cqes [2][]byte
	for i, fl := range []mlx.SendFlags{mlx.IBV_SEND_SIGNALED, mlx.IBV_SEND_SIGNALED | mlx.IBV_SEND_FENCE} {
		f, a, b := pair(t, defaults)
		copy(a.data.Bytes, "same either way")
		a.post(5, fl, func(q *sq.SQ) error { q.RDMAWrite(b.key, b.addr(64)); return q.SetSGE(a.key, a.addr(0), 15) })
		f.Drain(10)
		cqes[i] = append([]byte(nil), a.mem.CQ[:64]...)
		if string(b.data.Bytes[64:79]) != "same either way" {
			t.Fatalf("flags %v: data %q", fl, b.data.Bytes[64:79])
		}
	}
	if !bytes.Equal(cqes[0], cqes[1]) {
		t.Fatalf("CQEs differ:\nfast    %x\ngeneral %x", cqes[0], cqes[1])
	}
}
