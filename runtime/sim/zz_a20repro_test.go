package sim_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

func a20post(q *device.QP, id uint64, src, dst *device.MR) error {
	s := q.SQ()
	for {
		s.SetWRID(id)
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		if err := s.Start(); err != nil {
			return err
		}
		err := errors.Join(s.RDMAWrite(dst.RKey, dst.Addr), s.SetSGE(src.LKey, src.Addr, 8), s.Complete())
		if err == nil || !errors.Is(err, syscall.ENOMEM) {
			return err
		}
		runtime.Gosched()
	}
}

func TestA20Split(t *testing.T) {
	c, _ := device.Open("sim:a20")
	p := devicetest.RCPair(t, c, nil)
	src, dst := devicetest.MRPair(t, p.PD, 64)
	const n = 2000
	werr := make(chan error, 1)
	go func() {
		for i := uint64(0); i < n; i++ {
			if err := a20post(p.A, i, src, dst); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	wc := make([]cq.WC, 8)
	next := uint64(0)
	deadline := time.Now().Add(20 * time.Second)
	for next < n && time.Now().Before(deadline) {
		k, err := p.CQ.Poll(wc)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wc[:k] {
			if w.WRID != next || w.Status != cq.Success {
				t.Fatalf("got wr_id %d status %v, want %d", w.WRID, w.Status, next)
			}
			next++
		}
	}
	t.Logf("completed %d of %d in order; writer: %v", next, n, <-werr)
}

func TestA20CloseCtx(t *testing.T) {
	hung := 0
	for r := 0; r < 200; r++ {
		c, _ := device.Open("sim:a20c")
		p := devicetest.RCPair(t, c, nil)
		src, dst := devicetest.MRPair(t, p.PD, 64)
		done := make(chan error, 2)
		go func() {
			for i := uint64(0); ; i++ {
				if err := a20post(p.A, i, src, dst); err != nil {
					done <- err
					return
				}
			}
		}()
		go func() {
			wc := make([]cq.WC, 4)
			for {
				if _, err := p.CQ.Poll(wc); err != nil {
					done <- err
					return
				}
			}
		}()
		time.Sleep(time.Duration(r%5) * 20 * time.Microsecond)
		c.Close()
		for k := 0; k < 2; k++ {
			select {
			case <-done:
			case <-time.After(time.Second):
				hung++
			}
		}
	}
	t.Logf("200 rounds of Context.Close racing a writer and a poller: no fault; %d loops did not end within 1 s", hung)
}

func TestA20WaitClose(t *testing.T) {
	c, _ := device.Open("sim:a20w")
	ch, _ := c.CreateCompChannel()
	q, _ := c.CreateCQ(device.CQConfig{CQEs: 4, Channel: ch})
	res := make(chan error, 2)
	go func() { res <- q.Wait(context.Background()) }()
	go func() { _, err := c.AsyncEvent(context.Background()); res <- err }()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	q.Close()
	ch.Close()
	c.Close()
	for k := 0; k < 2; k++ {
		select {
		case err := <-res:
			t.Logf("a wait returned after %v: %v (errors.Is ErrClosed: %v)", time.Since(start), err, errors.Is(err, device.ErrClosed))
		case <-time.After(2 * time.Second):
			t.Errorf("a wait still blocked 2 s after Close")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	c2, _ := device.Open("sim:a20w2")
	ev, err := c2.AsyncEvent(ctx)
	t.Logf("timed-out AsyncEvent: %+v, %v", ev, err)
}

func TestA20Overrun(t *testing.T) {
	c, _ := device.Open("sim:a20o")
	pd, _ := c.AllocPD()
	q, _ := c.CreateCQ(device.CQConfig{CQEs: 4})
	cfg := device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 32, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}
	a, _ := pd.CreateQP(cfg)
	b, _ := pd.CreateQP(cfg)
	devicetest.ConnectPair(t, a, b)
	src, dst := devicetest.MRPair(t, pd, 64)
	for i := uint64(0); i < 16; i++ {
		if err := a20post(a, i, src, dst); err != nil {
			t.Fatal(err)
		}
	}
	wc := make([]cq.WC, 32)
	total := 0
	var last error
	for k := 0; k < 100; k++ {
		n, err := q.Poll(wc)
		total += n
		last = err
		if err != nil {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	t.Logf("16 signaled writes on a %d-entry CQ: %d completions, then Poll's error: %v", q.CQEs(), total, last)
}

func TestA20ErrorCompletion(t *testing.T) {
	c, _ := device.Open("sim:a20e")
	p := devicetest.RCPair(t, c, nil)
	buf := devicetest.Buffer(t, 64)
	src, _ := p.PD.RegMR(buf, mlx.IBV_ACCESS_LOCAL_WRITE)
	ro, _ := p.PD.RegMR(devicetest.Buffer(t, 64), mlx.IBV_ACCESS_LOCAL_WRITE)
	if err := a20post(p.A, 77, src, ro); err != nil {
		t.Fatal(err)
	}
	w := devicetest.PollOne(t, p.CQ)
	t.Logf("error completion: %s", a20explain(&w))
	t.Logf("QP state after it: %v", p.A.State())
	_ = fmt.Sprint
}
