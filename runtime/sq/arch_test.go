package sq_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/barrier"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestNewNeedsBarriers: New refuses an architecture without DMA barriers,
// naming it, rather than post with none.
func TestNewNeedsBarriers(t *testing.T) {
	mem, err := qmem.Plain(8, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	_, err = sq.New(sq.Config{Mem: mem, QPN: qpn, QP: sq.QP{Type: mlx.QPRC, SendOps: 0x3ff}})
	if barrier.Check() == nil {
		if err != nil {
			t.Fatalf("%s: %v", runtime.GOARCH, err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "GOARCH="+runtime.GOARCH) {
		t.Fatalf("%s: New = %v, want a refusal naming the GOARCH", runtime.GOARCH, err)
	}
}

// TestDeviceDoorbell rings a register marked as a device's: with 64-bit
// stores, or on s390x with s390_pci_mmio_write, which refuses anonymous
// memory, so Complete returns the system call's error after posting the
// work request to the ring and the doorbell record.
func TestDeviceDoorbell(t *testing.T) {
	for _, inline := range []bool{false, true} { // an 8-byte doorbell, then BlueFlame
		q, mem := newSQ(t, 8, 0)
		mem.Device = true
		q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		if err := q.RDMAWrite(1, 0x1000); err != nil {
			t.Fatal(err)
		}
		if inline {
			q.SetInlineData([]byte("inline"))
		} else {
			q.SetSGE(2, 0x2000, 64)
		}
		err := q.Complete()
		if got := binary.BigEndian.Uint32(mem.DBR[4:]); got != 1 || !q.Last.Rung {
			t.Fatalf("doorbell record %d, rung %v", got, q.Last.Rung)
		}
		if runtime.GOARCH == "s390x" {
			if err == nil || !strings.Contains(err.Error(), "s390_pci_mmio_write") || !bytes.Equal(mem.BF, make([]byte, len(mem.BF))) {
				t.Fatalf("s390x: Complete = %v, register % x", err, mem.BF[:16])
			}
			var re *mlx.RuleError
			if errors.As(err, &re) {
				t.Fatalf("a register write failure is not a rule: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := q.Last.Length; !bytes.Equal(mem.BF[:n], mem.SQ[:n]) || n == 0 || q.Last.BlueFlame != inline {
			t.Fatalf("register % x, doorbell %+v", mem.BF[:16], q.Last)
		}
	}
}
