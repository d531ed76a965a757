//go:build cgo

package verbs

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

type vsrq struct {
	srq mv.IBVSRQ
	mem device.SRQMemory
}

// CreateSRQ creates an SRQ with ibv_create_srq and maps its ring with
// mlx5dv_init_obj (MLX5DV_OBJ_SRQ, asking for the SRQ number).
func (p *vpd) CreateSRQ(cfg device.SRQConfig) (device.BackendSRQ, error) {
	attr := mlx.SRQInitAttr{Attr: mlx.SRQAttr{MaxWR: uint32(cfg.MaxWR), MaxSGE: uint32(cfg.MaxSGE)}}
	srq, err := mv.CreateSRQ(p.pd, &attr)
	if err != nil {
		return nil, err
	}
	out := mlx.SRQ{CompMask: uint64(mlx.MLX5DV_SRQ_MASK_SRQN)}
	var pin runtime.Pinner
	pin.Pin(&out)
	err = mv.InitObj(&mlx.Obj{SRQIn: srq.Ptr(), SRQOut: &out}, uint64(mlx.MLX5DV_OBJ_SRQ))
	pin.Unpin()
	var mem device.SRQMemory
	if err == nil {
		mem, err = srqMemory(&out, cfg.MaxWR, p.c.info.Caps.MaxSRQWR)
	}
	if err != nil {
		mv.DestroySRQ(srq)
		return nil, err
	}
	srqNums.Store(srq.Ptr(), mem.SRQN)
	return &vsrq{srq: srq, mem: mem}, nil
}

// srqMemory maps what mlx5dv_init_obj reported. mlx5dv_srq does not give
// the ring's WQE count; libmlx5 (mlx5_alloc_srq_buf) makes it tail + 1,
// or twice that when it keeps a wait queue past tail, which it does when
// 2 * max_wr + 1 work requests fit the device's SRQ limit.
func srqMemory(out *mlx.SRQ, maxWR, devMax int) (device.SRQMemory, error) {
	if mlx.SRQCompMask(out.CompMask)&mlx.MLX5DV_SRQ_MASK_SRQN == 0 {
		return device.SRQMemory{}, fmt.Errorf("verbs: mlx5dv_init_obj did not report the SRQ's number (comp_mask %#x)", out.CompMask)
	}
	wqes := int(out.Tail) + 1
	if 2*maxWR+1 <= devMax {
		wqes *= 2
	}
	if out.Buf == nil || out.Dbrec == nil || out.Head != 0 || wqes > rq.MaxSRQWQEs || wqes&(wqes-1) != 0 || out.Stride < 32 {
		return device.SRQMemory{}, fmt.Errorf("verbs: mlx5dv_init_obj reported an SRQ this backend does not know: head %d, tail %d, stride %d",
			out.Head, out.Tail, out.Stride)
	}
	return device.SRQMemory{
		SRQN:   out.SRQN,
		Mem:    rq.Memory{Ring: unsafe.Slice((*byte)(out.Buf), wqes*int(out.Stride)), DBR: (*[4]byte)(out.Dbrec)},
		Stride: int(out.Stride),
		Head:   uint16(out.Head),
		Tail:   uint16(out.Tail),
	}, nil
}

func (s *vsrq) Memory() device.SRQMemory { return s.mem }

// Close destroys the SRQ; its number leaves srqNums first, before the
// struct ibv_srq * can be reused.
func (s *vsrq) Close() error {
	srqNums.Delete(s.srq.Ptr())
	return mv.DestroySRQ(s.srq)
}

// ArmLimit arms the SRQ's limit event with ibv_modify_srq(IBV_SRQ_LIMIT)
// (device.SRQLimiter); the API checked limit against max_wr.
func (s *vsrq) ArmLimit(limit int) error {
	attr := mlx.SRQAttr{SRQLimit: uint32(limit)}
	return mv.ModifySRQ(s.srq, &attr, mlx.IBV_SRQ_LIMIT)
}

// srqNums maps each SRQ's struct ibv_srq * to its number, for the SRQ
// events decodeEvent names (IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_SRQ_ERR).
var srqNums sync.Map
