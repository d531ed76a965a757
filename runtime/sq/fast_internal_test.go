package sq

import (
	"bytes"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// TestFastMatchesGeneral: the fast paths of the data builders, SetSGE and
// the one-call forms write what the general paths write, with any flags,
// a cached fence, empty SGEs and a ring wrap.
func TestFastMatchesGeneral(t *testing.T) {
	for _, flags := range []mlx.SendFlags{0, mlx.IBV_SEND_SIGNALED, mlx.IBV_SEND_FENCE | mlx.IBV_SEND_SOLICITED} {
		var qs [2]*SQ
		var mems [2]*qmem.Memory
		for i := range qs {
			mem, err := qmem.Plain(8, 0, 256)
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			q, err := New(Config{Mem: mem, QPN: 0x1234, SigAll: flags == 0,
				QP: QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 64, MaxSendSGE: 2}})
			if err != nil {
				t.Fatal(err)
			}
			qs[i], mems[i] = q, mem
		}
		for round := range 5 { // 8 WQEBBs: the producer index wraps
			for i, q := range qs {
				q.SetWRFlags(mlx.IBV_SEND_INLINE)
				q.Start()
				q.LocalInv(1) // a small fence for the next WQE
				q.SetWRFlags(flags)
				fast := i == 0
				for k := range 3 {
					q.SetWRID(uint64(10*round + k))
					length := uint32(k * 32)
					fn, op, hdr := mlx.FnWRRDMAWrite, mlx.MLX5_OPCODE_RDMA_WRITE, mlx.WQERaddrSegSize
					if k == 1 {
						fn, op, hdr = mlx.FnWRSend, mlx.MLX5_OPCODE_SEND, 0
					}
					var err error
					switch {
					case round%2 == 1 && fast:
						err = q.postSGE(fn, op, oneWrite|oneSend, hdr, 0x55, 0x1000, 0x66, 0x2000, length, false)
					case round%2 == 1:
						err = q.postSGESlow(fn, op, 0, hdr, 0x55, 0x1000, 0x66, 0x2000, length)
					case fast:
						if err = q.post(fn, op, hdr, 0x55, 0x1000); err == nil {
							err = q.SetSGE(0x66, 0x2000, length)
						}
					default:
						if err = q.postSlow(fn, op, hdr, 0x55, 0x1000); err == nil {
							err = q.setSGE(0x66, 0x2000, length)
						}
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				if err := q.Complete(); err != nil {
					t.Fatal(err)
				}
				q.Completed(q.Outstanding())
			}
			if !bytes.Equal(mems[0].SQ, mems[1].SQ) || !bytes.Equal(mems[0].DBR, mems[1].DBR) || qs[0].Last != qs[1].Last {
				t.Fatalf("flags %v, round %d: the fast and the general paths wrote different queues", flags, round)
			}
			for i := range qs[0].Slots {
				if qs[0].Slots[i] != qs[1].Slots[i] {
					t.Fatalf("flags %v: slot %d: %+v, %+v", flags, i, qs[0].Slots[i], qs[1].Slots[i])
				}
			}
		}
	}
}

// TestRoomReadWhenFull: Start does not read the poller's tail; a builder
// that finds the fast paths' room used up reads it (requick) and goes on
// on the fast path, in every form, batch after batch of a full ring.
func TestRoomReadWhenFull(t *testing.T) {
	forms := map[string]func(q *SQ) error{
		"RDMAWrite+SetSGE": func(q *SQ) error {
			if err := q.RDMAWrite(1, 0x1000); err != nil {
				return err
			}
			return q.SetSGE(2, 0x2000, 64)
		},
		"Send+SetSGE": func(q *SQ) error {
			if err := q.Send(); err != nil {
				return err
			}
			return q.SetSGE(2, 0x2000, 64)
		},
		"RDMAWriteSGE": func(q *SQ) error { return q.RDMAWriteSGE(1, 0x1000, 2, 0x2000, 64) },
		"SendSGE":      func(q *SQ) error { return q.SendSGE(2, 0x2000, 64) },
	}
	for name, post := range forms {
		t.Run(name, func(t *testing.T) {
			mem, err := qmem.Plain(8, 0, 256)
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			q, err := New(Config{Mem: mem, QPN: 0x1234,
				QP: QP{Type: mlx.QPRC, SendOps: 0x3ff, MaxInlineData: 64, MaxSendSGE: 1}})
			if err != nil {
				t.Fatal(err)
			}
			for round := range 4 {
				if err := q.Start(); err != nil {
					t.Fatal(err)
				}
				if round > 0 && q.tail == q.pub.tail.Load() {
					t.Fatalf("round %d: Start read the poller's tail", round)
				}
				for k := range 8 { // the ring's 8 WQEBBs, one per work request
					if err := post(q); err != nil {
						t.Fatalf("round %d, work request %d: %v", round, k, err)
					}
					if q.tail != q.pub.tail.Load() {
						t.Fatalf("round %d, work request %d: the tail was not read with the ring full", round, k)
					}
				}
				if err := q.Complete(); err != nil {
					t.Fatal(err)
				}
				if q.fastEnd != q.curPost {
					t.Fatalf("round %d: %d WQEBBs of fast room left in a full ring", round, q.fastEnd-q.curPost)
				}
				if err := q.Completed(8); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestRequick: with the fast paths' room used up, requick reads the
// poller's tail and reports whether a builder may take the fast path now.
func TestRequick(t *testing.T) {
	mem, err := qmem.Plain(8, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	q, err := New(Config{Mem: mem, QPN: 0x1234, QP: QP{Type: mlx.QPRC, SendOps: 0x3ff, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	if q.requick(mlx.FnWRRDMAWrite) {
		t.Fatal("requick with room left: the fast path was not missed for room")
	}
	for range 8 {
		q.RDMAWriteSGE(1, 0x1000, 2, 0x2000, 64)
	}
	q.Complete()
	q.Start()
	if q.requick(mlx.FnWRRDMAWrite) {
		t.Fatal("requick with nothing completed: true")
	}
	q.Completed(3)
	if !q.requick(mlx.FnWRRDMAWrite) || q.fastEnd-q.curPost != 3 {
		t.Fatalf("requick after 3 completions: fast room %d, want 3", q.fastEnd-q.curPost)
	}
	q.Abort()
}

// TestRunFlags: RDMAWriteSGE starts a run that its next call takes,
// and new wr_flags end it (a run's writes take the builder's flag checks
// the first one passed).
func TestRunFlags(t *testing.T) {
	mem, err := qmem.Plain(8, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	q, err := New(Config{Mem: mem, QPN: 0x1234, QP: QP{Type: mlx.QPRC, SendOps: 0x3ff, MaxInlineData: 64, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := q.RDMAWriteSGE(1, 0x1000, 2, 0x2000, 64); err != nil {
			t.Fatal(err)
		}
		if !q.chk.InRun(mlx.FnWRRDMAWrite) {
			t.Fatalf("write %d: no run", i)
		}
	}
	if err := q.SetWRFlags(mlx.IBV_SEND_SIGNALED); err != nil {
		t.Fatal(err)
	}
	if q.chk.InRun(mlx.FnWRRDMAWrite) {
		t.Fatal("new wr_flags left the run")
	}
}
