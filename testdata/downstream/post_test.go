package downstream

import (
	"bytes"
	"errors"
	"testing"

	"example.com/downstream/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// TestWriteSignaled posts a work request through runtime/sq with this
// module's constants and checks the WQE's bytes, and decodes them with
// this module's segment types.
func TestWriteSignaled(t *testing.T) {
	mem, err := qmem.Plain(8, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	q, err := NewRC(mem, 0x1234)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSignaled(q, 7, 0x55667788, 0x1112131415161718, 0x1000, 0x11223344, 0x0102030405060708); err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0, 0, 0, 0x08, 0, 0x12, 0x34, 3, 0, 0, 0, 0x08, 0, 0, 0, 0, // ctrl: RDMA_WRITE, qpn, ds 3, CQ_UPDATE
		1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, // raddr
		0, 0, 0x10, 0, 0x55, 0x66, 0x77, 0x88, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, // data
	}
	if got := mem.SQ[:len(want)]; !bytes.Equal(got, want) {
		t.Fatalf("WQE\n%x, want\n%x", got, want)
	}
	ctrl := (*mlx5dv.WQECtrlSeg)(mem.SQ[:mlx5dv.WQECtrlSegSize])
	if ctrl.Opcode() != mlx5dv.MLX5_OPCODE_RDMA_WRITE || ctrl.DS() != 3 || ctrl.FmCeSe()&mlx5dv.MLX5_WQE_CTRL_CQ_UPDATE == 0 {
		t.Fatalf("control segment %v", ctrl)
	}
}

// TestRuleError: the runtime's errors are this module's RuleError.
func TestRuleError(t *testing.T) {
	mem, err := qmem.Plain(8, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	q, err := NewRC(mem, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	err = q.SetSGE(1, 0, 8) // a setter before any builder
	var re *mlx5dv.RuleError
	if !errors.As(err, &re) || re.Func != mlx5dv.FnWRSetSGE {
		t.Fatalf("SetSGE before a builder: %v (%T), want a *mlx5dv.RuleError", err, err)
	}
	if q.Complete() == nil {
		t.Fatal("the batch posted after a rule error")
	}
}
