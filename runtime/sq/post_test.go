package sq_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestPostMatchesCalls: PostRDMAWriteSGE, PostRDMAReadSGE and PostSendSGE
// answer what Start, the builder, SetSGE and Complete answer, and post the
// same queue (ring, doorbell record, register, bookkeeping), on their fast
// path and off it: every QP of the one-call test (a DCI, no RDMA read, no
// SGE, a small max_post), any flags, a fence cached by an earlier batch,
// lengths the rules refuse, a full ring, a call inside an open batch, the
// ring's wrap. A Post that fails writes nothing at all, where the calls
// leave the bytes of their accepted calls past the producer index (rolled
// back, never rung): those are not compared.
func TestPostMatchesCalls(t *testing.T) {
	flagSets := []mlx.SendFlags{0, mlx.IBV_SEND_SIGNALED, mlx.IBV_SEND_FENCE | mlx.IBV_SEND_SOLICITED, mlx.IBV_SEND_INLINE}
	lengths := []uint32{0, 1, 64, 1 << 31, 0xffffffff}
	for name, cfg := range oneCallQPs() {
		for _, preferBF := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/preferBF=%v", name, preferBF), func(t *testing.T) {
				cfg.BF.PreferBF = preferBF
				var p oneCallPair
				p.one, p.oneMem = newPostSide(t, cfg)
				p.two, p.twoMem = newPostSide(t, cfg)
				r := rand.New(rand.NewPCG(3, uint64(len(name))))
				for i := range 300 {
					flags := flagSets[r.IntN(len(flagSets))]
					switch r.IntN(6) {
					case 0: // a batch that caches a small fence
						for _, q := range []*sq.SQ{p.one, p.two} {
							q.Start()
							q.LocalInv(7)
							q.Complete()
						}
					case 2: // a batch with inline data: its BlueFlame choice must not carry over
						for _, q := range []*sq.SQ{p.one, p.two} {
							q.Start()
							q.Send()
							q.SetInlineData([]byte("inline"))
							q.Complete()
						}
					case 1: // inside an open batch: Start's error, and the batch goes on
						p.one.Start()
						p.two.Start()
						sameError(t, p.one.PostRDMAWriteSGE(1, 2, 3, 4, 64), p.two.Start())
						sameError(t, p.one.Complete(), p.two.Complete())
					}
					p.one.SetWRFlags(flags)
					p.two.SetWRFlags(flags)
					p.one.SetWRID(uint64(i))
					p.two.SetWRID(uint64(i))
					length := lengths[r.IntN(len(lengths))]
					kind := r.IntN(3)
					rkey, raddr, lkey, addr := uint32(i), uint64(i)<<12, uint32(i+1), uint64(i)<<8
					before := bytes.Join([][]byte{p.oneMem.SQ, p.oneMem.BF, p.oneMem.DBR}, nil)
					slots := slices.Clone(p.one.Slots)
					e1 := oneCallForm(p.one, postKinds[kind], true, rkey, raddr, lkey, addr, length)
					e2 := postByCalls(p.two, kind, rkey, raddr, lkey, addr, length)
					sameError(t, e1, e2)
					if e1 != nil {
						if !bytes.Equal(before, bytes.Join([][]byte{p.oneMem.SQ, p.oneMem.BF, p.oneMem.DBR}, nil)) || !slices.Equal(slots, p.one.Slots) {
							t.Fatalf("post %d: a failed Post (%v) wrote to the queue", i, e1)
						}
						copy(p.twoMem.SQ, p.oneMem.SQ) // the calls' rolled-back bytes and bookkeeping
						copy(p.two.Slots, p.one.Slots)
					}
					samePosted(t, &p, i)
					if r.IntN(3) == 0 { // else the ring fills: the full ring's errors, then room again
						n := uint32(r.IntN(int(p.one.Outstanding()) + 1))
						p.one.Completed(n)
						p.two.Completed(n)
					}
				}
			})
		}
	}
}

func newPostSide(t *testing.T, cfg sq.Config) (*sq.SQ, *qmem.Memory) {
	mem, err := qmem.Plain(8, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	cfg.Mem = mem
	q, err := sq.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q, mem
}

// oneCallForm calls the one-call form of builder (ibv_wr_rdma_write,
// ibv_wr_rdma_read, ibv_wr_send), or with post its Post form.
func oneCallForm(q *sq.SQ, builder string, post bool, rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) error {
	switch {
	case builder == "ibv_wr_rdma_write" && post:
		return q.PostRDMAWriteSGE(rkey, raddr, lkey, addr, length)
	case builder == "ibv_wr_rdma_write":
		return q.RDMAWriteSGE(rkey, raddr, lkey, addr, length)
	case builder == "ibv_wr_rdma_read" && post:
		return q.PostRDMAReadSGE(rkey, raddr, lkey, addr, length)
	case builder == "ibv_wr_rdma_read":
		return q.RDMAReadSGE(rkey, raddr, lkey, addr, length)
	case post:
		return q.PostSendSGE(lkey, addr, length)
	}
	return q.SendSGE(lkey, addr, length)
}

// postKinds are the builders TestPostMatchesCalls posts, by kind.
var postKinds = [3]string{"ibv_wr_rdma_write", "ibv_wr_rdma_read", "ibv_wr_send"}

// postByCalls is what the Post form of kind stands for: Start, the
// builder, SetSGE and Complete.
func postByCalls(q *sq.SQ, kind int, rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) error {
	if err := q.Start(); err != nil {
		return err
	}
	var err error
	switch kind {
	case 0:
		err = q.RDMAWrite(rkey, raddr)
	case 1:
		err = q.RDMARead(rkey, raddr)
	default:
		err = q.Send()
	}
	if err == nil {
		err = q.SetSGE(lkey, addr, length)
	}
	if cerr := q.Complete(); err == nil {
		err = cerr // else Complete returns the latched error again; nothing is posted
	}
	return err
}

// samePosted fails if the two queues differ in what was posted.
func samePosted(t *testing.T, p *oneCallPair, i int) {
	t.Helper()
	if !bytes.Equal(p.oneMem.SQ, p.twoMem.SQ) || !bytes.Equal(p.oneMem.BF, p.twoMem.BF) || !bytes.Equal(p.oneMem.DBR, p.twoMem.DBR) {
		t.Fatalf("post %d: PostRDMAWriteSGE and the calls wrote different queues", i)
	}
	if p.one.CurPost() != p.two.CurPost() || p.one.FmCache() != p.two.FmCache() || p.one.Last != p.two.Last ||
		p.one.Head() != p.two.Head() || p.one.BFOffset() != p.two.BFOffset() {
		t.Fatalf("post %d: state differs: producer index %d, %d; doorbell %+v, %+v", i, p.one.CurPost(), p.two.CurPost(), p.one.Last, p.two.Last)
	}
	for k := range p.one.Slots {
		if p.one.Slots[k] != p.two.Slots[k] {
			t.Fatalf("post %d: bookkeeping of slot %d: %+v, %+v", i, k, p.one.Slots[k], p.two.Slots[k])
		}
	}
}

// TestPostCloseRace: a writer posting with PostRDMAWriteSGE (or
// PostConfigureMkey), a poller completing beside it and Close from a third
// goroutine. Close returns only when the writer is outside; after it
// nothing changes in the queue's memory and every later post returns
// ErrClosed. Run with -race.
func TestPostCloseRace(t *testing.T) {
	tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, nil)
	if err != nil {
		t.Fatal(err)
	}
	mk := sq.NewMkey(0x4500, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	sges := []mlx.SGE{{Addr: 0x1000, Length: 64, LKey: 7}}
	for _, post := range []struct {
		name string
		call func(q *sq.SQ, i int) error
	}{
		{"PostRDMAWriteSGE", func(q *sq.SQ, i int) error { return q.PostRDMAWriteSGE(1, uint64(i), 2, uint64(i), 64) }},
		{"PostConfigureMkey", func(q *sq.SQ, _ int) error { return q.PostConfigureMkey(mk, tmpl, sges) }},
	} {
		t.Run(post.name, func(t *testing.T) { postCloseRace(t, post.call) })
	}
}

func postCloseRace(t *testing.T, post func(q *sq.SQ, i int) error) {
	for round := range 20 {
		mem, err := qmem.Plain(8, 0, 256)
		if err != nil {
			t.Fatal(err)
		}
		q, err := sq.New(sq.Config{Mem: mem, QPN: 9, QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE,
			MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE, MaxSendSGE: 1, MaxInlineData: 64}})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.SetWRFlags(mlx.IBV_SEND_INLINE); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg, writer sync.WaitGroup
		wg.Add(1)
		writer.Add(1)
		var posted atomic.Int64
		var last error
		go func() { // the writer: retries while the ring is full
			defer writer.Done()
			for i := 0; ; i++ {
				err := post(q, i)
				if errors.Is(err, sq.ErrClosed) {
					last = err
					return
				}
				if err == nil {
					posted.Add(1)
				}
			}
		}()
		go func() { // the poller
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				q.Completed(q.Outstanding())
			}
		}()
		// Close once the writer is under way (slow emulators schedule the
		// goroutines late), at a different moment each round.
		for deadline := time.Now().Add(10 * time.Second); posted.Load() < int64(1+round); {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the writer posted %d in 10 s", round, posted.Load())
			}
			time.Sleep(100 * time.Microsecond)
		}
		time.Sleep(time.Duration(round%5) * time.Millisecond)
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		// The writer may still be trying: what it does now must change
		// nothing. Then this goroutine is the writer.
		snap := bytes.Join([][]byte{mem.SQ, mem.DBR, mem.BF}, nil)
		head := q.Head()
		writer.Wait()
		for range 100 {
			if err := post(q, 0); !errors.Is(err, sq.ErrClosed) {
				t.Fatalf("round %d: a post after Close: %v", round, err)
			}
		}
		close(stop)
		wg.Wait()
		if !bytes.Equal(snap, bytes.Join([][]byte{mem.SQ, mem.DBR, mem.BF}, nil)) || q.Head() != head {
			t.Fatalf("round %d: the queue changed after Close returned", round)
		}
		if last == nil {
			t.Fatalf("round %d: %d posted, and the writer did not see ErrClosed", round, posted.Load())
		}
		mem.Close()
	}
}
