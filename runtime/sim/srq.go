package sim

import (
	"fmt"

	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
)

// simSRQ is a shared receive queue: its ring and doorbell record in a DMA
// region, which the engine reads in the order of the free list.
type simSRQ struct {
	c   *simCtx
	srq *engine.SRQ
	reg *dma.Region
	mem device.SRQMemory
}

// CreateSRQ sizes the SRQ as libmlx5 does without a wait queue: WQEs of
// a next segment and MaxSGE data segments (32 bytes at least, a power of
// two), MaxWR + 1 of them rounded up to a power of two, the last one the
// free list's tail. [ledger: srq-size]
func (p *simPD) CreateSRQ(cfg device.SRQConfig) (device.BackendSRQ, error) {
	caps := p.c.d.Caps()
	if cfg.MaxWR < 1 || cfg.MaxWR > caps.MaxSRQWR || cfg.MaxSGE < 0 || cfg.MaxSGE > caps.MaxSGE {
		return nil, fmt.Errorf("sim: create_srq: %d work requests of %d SGEs: the device offers 1 to %d of up to %d",
			cfg.MaxWR, cfg.MaxSGE, caps.MaxSRQWR, caps.MaxSGE)
	}
	stride := pow2(max(32, 16+16*cfg.MaxSGE))
	n := pow2(cfg.MaxWR + 1)
	reg, err := dma.Map(dma.Options{Size: max(n*stride+64, 4096), Lock: dma.LockBestEffort})
	if err != nil {
		return nil, err
	}
	ring, err := reg.Alloc(n*stride, 64)
	if err != nil {
		reg.Close()
		return nil, err
	}
	dbr, err := reg.Alloc(64, 64)
	if err != nil {
		reg.Close()
		return nil, err
	}
	e, err := p.c.d.CreateSRQ(ring.Bytes, stride, dbr.Bytes, 0)
	if err != nil {
		reg.Close()
		return nil, err
	}
	return &simSRQ{c: p.c, srq: e, reg: reg, mem: device.SRQMemory{SRQN: e.SRQN(),
		Mem:    rq.Memory{Ring: ring.Bytes, DBR: (*[4]byte)(dbr.Bytes[0:4])},
		Stride: stride, Tail: uint16(n - 1)}}, nil
}

func (s *simSRQ) Memory() device.SRQMemory { return s.mem }

func (s *simSRQ) Close() error {
	err := s.c.d.DestroySRQ(s.srq)
	s.reg.Close()
	return err
}

// engineSRQ is the engine's SRQ of a QP's configuration (nil: none).
func engineSRQ(b device.BackendSRQ) *engine.SRQ {
	if b == nil {
		return nil
	}
	return b.(*simSRQ).srq
}

// ArmLimit arms the SRQ's limit event (ibv_modify_srq with IBV_SRQ_LIMIT;
// device.SRQLimiter).
func (s *simSRQ) ArmLimit(limit int) error { return s.srq.ArmLimit(limit) }
