package main

import (
	"errors"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
)

// TestOnSimulator runs the program on the simulated device, as CI does.
func TestOnSimulator(t *testing.T) {
	if err := run("sim:example-t10dif"); err != nil {
		t.Fatal(err)
	}
}

// TestCRC16 checks the guard against the CRC-16/T10-DIF check value
// ("123456789" gives 0xD0DB).
func TestCRC16(t *testing.T) {
	if got := crc16T10([]byte("123456789")); got != 0xd0db {
		t.Fatalf("%#04x", got)
	}
}

// TestSigErrLaterCQ: a CQ created after the signature mkey records its
// signature errors too (the context's CQs all look it up): a corrupted
// write through a QP pair completing there is reported by Check.
func TestSigErrLaterCQ(t *testing.T) {
	region, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	s, err := open("sim:example-t10dif-later", region)
	if err != nil {
		t.Fatal(err)
	}
	defer s.ctx.Close()
	if err := s.configure(); err != nil {
		t.Fatal(err)
	}
	later, err := s.ctx.CreateCQ(device.CQConfig{CQEs: 16})
	if err != nil {
		t.Fatal(err)
	}
	cfg := device.QPConfig{Kind: device.RC, SendCQ: later, MaxSendWR: 8, MaxSendSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}
	init, err1 := s.pd.CreateQP(cfg)
	target, err2 := s.pd.CreateQP(cfg)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	ei, err1 := init.Endpoint()
	et, err2 := target.Endpoint()
	if err := errors.Join(err1, err2, init.Connect(et), target.Connect(ei)); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, blocks*block)
	protect(s.wire.Bytes(), data)
	s.wire.Bytes()[15] ^= 0x80 // in block 0's data
	if err := s.writeOn(init, later); err != nil {
		t.Fatal(err)
	}
	e, err := s.mk.Check()
	if err != nil || e.Type != mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD || e.Offset != 0 {
		t.Fatalf("write completing on the later CQ: Check %+v, %v; want a bad guard at offset 0", e, err)
	}
}
