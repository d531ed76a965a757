package sim_test

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestLengthBit31Refused: the RDMA write of 0x8000000c bytes that libmlx5
// posts (and the device completes successfully, sending the data
// segment's own lkey and address) is refused at post through the calls,
// the one-call form and the burst; so are a SEND of that length and a
// receive of 2^31 bytes. Nothing reaches the peer and no completion
// comes; a 12-byte write afterwards arrives as usual.
func TestLengthBit31Refused(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:length"))
	defer c.Close()
	p := devicetest.RCPair(t, c, nil)
	src, dst := devicetest.MRPair(t, p.PD, 4096)
	s := p.A.SQ()
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	const bad uint32 = 0x8000000c
	forms := map[string]func() error{
		"calls": func() error {
			if err := s.RDMAWrite(dst.RKey, dst.Addr); err != nil {
				return err
			}
			return s.SetSGE(src.LKey, src.Addr, bad)
		},
		"one-call": func() error { return s.RDMAWriteSGE(dst.RKey, dst.Addr, src.LKey, src.Addr, bad) },
		"burst": func() error {
			return s.RDMAWriteBurst([]sq.RDMAWriteReq{{WRID: 1, Raddr: dst.Addr, Addr: src.Addr, RKey: dst.RKey, LKey: src.LKey, Length: bad}})
		},
		"send": func() error { return s.SendSGE(src.LKey, src.Addr, bad) },
	}
	for name, post := range forms {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		err := post()
		var re *mlx.RuleError
		if !errors.As(err, &re) || re.Rule != "ibv_wr.sge_length" || !errors.Is(err, syscall.EINVAL) || re.Value != uint64(bad) {
			t.Fatalf("%s: %v, want rule ibv_wr.sge_length for length %#x", name, err, bad)
		}
		if cerr := s.Complete(); cerr != err {
			t.Fatalf("%s: Complete: %v, want %v", name, cerr, err)
		}
	}
	if err := p.B.RQ().Post(7, []rq.SGE{{Addr: dst.Addr, Length: 1 << 31, LKey: dst.LKey}}); err == nil {
		t.Fatal("a receive of 2^31 bytes was posted")
	}
	wc := make([]cq.WC, 4)
	for deadline := time.Now().Add(20 * time.Millisecond); time.Now().Before(deadline); {
		p.CQ.Progress()
		if n, err := p.CQ.Poll(wc); n != 0 || err != nil {
			t.Fatalf("%d completions (%v) after refused work requests: %+v", n, err, wc[:n])
		}
	}
	if i := bytes.IndexFunc(dst.Bytes(), func(r rune) bool { return r != 0 }); i >= 0 {
		t.Fatalf("the peer's buffer changed at %d: % x", i, dst.Bytes()[i:min(i+16, len(dst.Bytes()))])
	}
	devicetest.Write(t, p.A, 42, src, dst, 12)
	if w := devicetest.PollOne(t, p.CQ); w.WRID != 42 || w.Status != cq.Success {
		t.Fatalf("the 12-byte write: %+v (%v)", w, w.Status.Err())
	}
	if !bytes.Equal(dst.Bytes()[:12], src.Bytes()[:12]) || dst.Bytes()[12] != 0 {
		t.Fatalf("the 12-byte write left % x", dst.Bytes()[:16])
	}
}
