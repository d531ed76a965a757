package qmem

import (
	"math"
	"strings"
	"testing"
)

func TestPlain(t *testing.T) {
	m, err := Plain(256, 128, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.WQEBBs() != 256 || len(m.DBR) != 8 || len(m.BF) != 512 || len(m.CQ) != 128*64 || len(m.CQDBR) != 8 {
		t.Errorf("sizes: %d %d %d %d %d", m.WQEBBs(), len(m.DBR), len(m.BF), len(m.CQ), len(m.CQDBR))
	}
	if err := m.Check(); err != nil {
		t.Error(err)
	}
	if uintptr(m.SQBase())%4096 != 0 {
		t.Error("the ring is not page-aligned")
	}
	m.SQ[len(m.SQ)-1] = 1 // writable
	t.Logf("pinned: %v", m.Pinned)
	if err := m.Close(); err != nil || m.SQ != nil {
		t.Errorf("close: %v", err)
	}
}

func TestPlainRejectsBadSizes(t *testing.T) {
	for _, c := range []struct{ w, cq, bf int }{{100, 0, 0}, {0, 0, 0}, {64, -1, 0}, {64, 0, 100},
		// Sizes whose arithmetic would overflow.
		{16, 0, huge}, {huge, 0, 0}, {16, huge >> 2, 0}, {16, 0, huge + huge>>1}} {
		if _, err := Plain(c.w, c.cq, c.bf); err == nil || !strings.HasPrefix(err.Error(), "qmem: ") {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// A register without BlueFlame buffers still takes 8-byte doorbells.
func TestPlainWithoutBlueFlame(t *testing.T) {
	m, err := Plain(8, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.BFSize != 0 || len(m.BF) < 8 {
		t.Fatalf("BlueFlame size %d, register of %d bytes", m.BFSize, len(m.BF))
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	bad := *m
	bad.BF = bad.BF[:4]
	if err := bad.Check(); err == nil {
		t.Fatal("a 4-byte doorbell register passed")
	}
}

// TestCheckOverflow: a BlueFlame size whose double overflows does not pass
// Check (it did: 2*BFSize wrapped negative).
func TestCheckOverflow(t *testing.T) {
	m, err := Plain(16, 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, size := range []int{huge, -64, 96, len(m.BF)} {
		bad := *m
		bad.BFSize = size
		if err := bad.Check(); err == nil {
			t.Errorf("BlueFlame size %d passed", size)
		}
	}
}

// huge is far beyond any ring or register size, on 32- and 64-bit targets
// alike (sums of it overflow int, as the checks must notice).
const huge = math.MaxInt >> 1
