package benchlibmlx5

import (
	"errors"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// The queue and the work requests of every path: those of gen/verify's
// post and mkey benchmarks, so that the rows of both compare.
const (
	WQEBBs    = 256
	QPN       = 0x1234
	Raddr     = 0x0102030405060708
	RKey      = 0x11223344
	LKey      = 0x55667788
	Addr      = 0x1111222233334444
	Len       = 4096
	BFSize    = 256
	UUARN     = 1
	MaxPost   = WQEBBs / 4
	MaxGS     = 8
	MaxInline = 316
	SendOps   = 0x3ff // every RC verbs builder
	MlxOps    = 0x1f  // every mlx5dv builder
	Batch     = 32    // work requests per Start/Complete on the batched paths

	MkeyLKey    = 0x12300
	MkeyEntries = 4
	MemPSV      = 0x100
	WirePSV     = 0x101
	MkeyAccess  = mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_WRITE
)

// NewMem is the queue memory of one side.
func NewMem() (*qmem.Memory, error) { return qmem.Plain(WQEBBs, 0, BFSize) }

// NewSQ is runtime/sq's writer on mem, configured as the harness's QP.
func NewSQ(mem *qmem.Memory) (*sq.SQ, error) {
	return sq.New(sq.Config{
		Mem: mem, QPN: QPN,
		QP: sq.QP{Type: mlx.QPRC, SendOps: SendOps, MlxSendOps: MlxOps, MaxInlineData: MaxInline, MaxSendSGE: MaxGS,
			MaxPost: MaxPost, MaxMemcpy: 1 << 31},
		BF: sq.BlueFlame{UUARN: UUARN, Size: BFSize},
	})
}

// PostWrites posts n RDMA writes (one SGE, unsignaled) batch per
// Start/Complete with the per-call builders; write i moves Len bytes from
// Addr + i*Len to Raddr + i*Len. Every batch completes before the next:
// Complete, then Completed (the poller's stand-in), written out in each
// loop as the C loops write ibv_wr_complete and completed (a helper
// around the two was a call per batch the C loops do not make: 10 of the
// 373 instructions of a work request with a doorbell each).
func PostWrites(q *sq.SQ, n, batch int) error {
	a := uint64(Addr)
	delta := uint64(Raddr) - a // wraps, as in C
	for done := 0; done < n; {
		if err := q.Start(); err != nil {
			return err
		}
		k := min(batch, n-done)
		for range k {
			q.RDMAWrite(RKey, a+delta)
			q.SetSGE(LKey, a, Len)
			a += Len
		}
		if err := q.Complete(); err != nil {
			return err
		}
		if err := q.Completed(q.Outstanding()); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// PostWritesOneCall posts the same writes with RDMAWriteSGE.
func PostWritesOneCall(q *sq.SQ, n, batch int) error {
	a := uint64(Addr)
	delta := uint64(Raddr) - a // wraps, as in C
	for done := 0; done < n; {
		if err := q.Start(); err != nil {
			return err
		}
		k := min(batch, n-done)
		for range k {
			q.RDMAWriteSGE(RKey, a+delta, LKey, a, Len)
			a += Len
		}
		if err := q.Complete(); err != nil {
			return err
		}
		if err := q.Completed(q.Outstanding()); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// PostEach posts the same writes one per doorbell with PostRDMAWriteSGE
// (Start, RDMAWriteSGE and Complete in one call), completing each.
func PostEach(q *sq.SQ, n int) error {
	a := uint64(Addr)
	delta := uint64(Raddr) - a // wraps, as in C
	for range n {
		if err := q.PostRDMAWriteSGE(RKey, a+delta, LKey, a, Len); err != nil {
			return err
		}
		if err := q.Completed(q.Outstanding()); err != nil {
			return err
		}
		a += Len
	}
	return nil
}

// Burst holds the prepared requests of PostBursts, so that the loop
// allocates nothing.
type Burst struct{ reqs [64]sq.RDMAWriteReq }

// PostBursts posts the same writes with RDMAWriteBurst, batch at a time.
func (b *Burst) PostBursts(q *sq.SQ, n, batch int) error {
	if batch < 1 || batch > len(b.reqs) {
		return errors.New("benchlibmlx5: burst size outside 1..64")
	}
	for i := range b.reqs {
		b.reqs[i] = sq.RDMAWriteReq{RKey: RKey, LKey: LKey, Length: Len}
	}
	a := uint64(Addr)
	delta := uint64(Raddr) - a // wraps, as in C
	for done := 0; done < n; {
		if err := q.Start(); err != nil {
			return err
		}
		k := min(batch, n-done)
		for i := range b.reqs[:k] {
			r := &b.reqs[i]
			r.Raddr, r.Addr = a+delta, a
			a += Len
		}
		if err := q.RDMAWriteBurst(b.reqs[:k]); err != nil {
			return err
		}
		if err := q.Complete(); err != nil {
			return err
		}
		if err := q.Completed(q.Outstanding()); err != nil {
			return err
		}
		done += k
	}
	return nil
}
