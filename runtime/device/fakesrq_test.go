package device_test

import (
	"fmt"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// fakeSRQ is the fake device's side of an SRQ: it takes WQEs in the order
// of the free list linked in their next segments, as far as the doorbell
// record counts.
type fakeSRQ struct {
	c      *fakeCtx
	srqn   uint32
	reg    *dma.Region
	mem    device.SRQMemory
	head   uint16 // the next WQE to take
	taken  uint16
	closed bool
}

func (p *fakePD) CreateSRQ(cfg device.SRQConfig) (device.BackendSRQ, error) {
	stride := pow2(max(32, 16+16*cfg.MaxSGE))
	n := pow2(cfg.MaxWR + 1)
	r, err := dma.Map(dma.Options{Size: max(n*stride+64, 4096), Lock: dma.LockBestEffort})
	if err != nil {
		return nil, err
	}
	ring, _ := r.Alloc(n*stride, 64)
	dbr, _ := r.Alloc(64, 64)
	s := &fakeSRQ{c: p.c, reg: r, mem: device.SRQMemory{Mem: rq.Memory{Ring: ring.Bytes, DBR: (*[4]byte)(dbr.Bytes[0:4])},
		Stride: stride, Tail: uint16(n - 1)}}
	p.c.mu.Lock()
	s.srqn = p.c.id()
	p.c.mu.Unlock()
	s.mem.SRQN = s.srqn
	return s, nil
}

func (s *fakeSRQ) Memory() device.SRQMemory { return s.mem }

func (s *fakeSRQ) Close() error {
	s.c.mu.Lock()
	s.closed = true
	s.c.mu.Unlock()
	s.reg.Close()
	return s.c.closed(fmt.Sprintf("SRQ %#x", s.srqn))
}

// take returns the data segments of the next posted WQE and its index;
// false when none is posted.
func (s *fakeSRQ) take() ([]byte, uint16, bool) {
	if s.closed || uint16(mmio.LoadRecord32(s.mem.Mem.DBR)) == s.taken {
		return nil, 0, false
	}
	i := int(s.head)
	w := s.mem.Mem.Ring[i*s.mem.Stride : (i+1)*s.mem.Stride]
	s.head = be.Uint16(w[2:4])
	s.taken++
	return w[16:], uint16(i), true
}

// sendTo delivers msg (nil: the local SGE is not registered) to the
// remote QP's SRQ and writes its responder CQE; false when that CQE finds
// the CQ full, or when the SRQ has nothing posted (the fake retries for
// ever, as rnr_retry 7 does).
func (q *fakeQP) sendTo(msg []byte) (mlx.CQESyndrome, bool) {
	r := q.c.qps[q.remote]
	if msg == nil {
		return mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, true
	}
	if r == nil || r.srq == nil {
		return mlx.MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, true
	}
	if !r.recv.room() {
		return 0, false // the WQE stays posted until the CQ has room
	}
	segs, idx, ok := r.srq.take()
	if !ok {
		return 0, false // receiver not ready: the WQE waits, as with infinite RNR retries
	}
	left := msg
	for len(left) > 0 && len(segs) >= 16 {
		n, lkey, addr := be.Uint32(segs[0:4]), be.Uint32(segs[4:8]), be.Uint64(segs[8:16])
		if lkey == mlx.MLX5_INVALID_LKEY {
			break
		}
		dst := q.c.bytes(lkey, addr, min(n, uint32(len(left))), mlx.IBV_ACCESS_LOCAL_WRITE)
		if dst == nil {
			return mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, true
		}
		left = left[copy(dst, left):]
		segs = segs[16:]
	}
	if len(left) > 0 {
		return mlx.MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, true
	}
	return 0, r.recv.writeResp(mlx.MLX5_CQE_RESP_SEND, 0, 0, r.qpn, idx, r.srq.srqn, uint32(len(msg)))
}

// room reports whether the CQ has an entry free.
func (q *fakeCQ) room() bool {
	return q.pi-mmio.LoadRecord32((*[4]byte)(q.mem.CQDBR[0:4]))&0xffffff < uint32(len(q.mem.CQ)/64)
}
