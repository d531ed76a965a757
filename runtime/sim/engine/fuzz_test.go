package engine_test

import (
	"encoding/binary"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// FuzzEngine fills a send ring (and the peer's receive ring) with the
// fuzzer's bytes, raw (the ring's size, 1 to 16 WQEBBs, and the WQEBBs posted,
// up to more than the ring holds, from its first byte), rings the
// doorbell and runs the engine: whatever the WQEs say (unknown opcodes,
// ds 0, ds past what is posted, bad keys, stray inline lengths), the
// engine must not panic, must stop (every step either progresses or
// waits), and must leave the send queue either executed or in error.
func FuzzEngine(f *testing.F) {
	f.Add(validRing(f))
	f.Add(make([]byte, 64*8+1))
	f.Add([]byte{3, 0, 0, 0, 0x08, 0, 0, 0, 0})
	// A one-WQEBB ring, 30 WQEBBs claimed posted, a SEND of ds 63 naming
	// the QP (the fabric's first QPN, 0x100): a WQE larger than the ring.
	f.Add([]byte{10, 0, 0, 0, 0x0a, 0x00, 0x01, 0x00, 0x3f})
	f.Fuzz(fuzzRing)
}

func fuzzRing(t *testing.T, data []byte) {
	if len(data) < 1 {
		return
	}
	o := defaults
	o.wqebbs, o.cqes = 1<<(data[0]>>5%5), 64 // 1 to 16 WQEBBs
	fab, a, b := pairRNR(t, o, 1)
	n := uint32(data[0]&31) * 3 // up to more than the ring holds
	data = data[1:]
	copy(a.mem.SQ, data)
	if len(data) > len(a.mem.SQ) {
		fillRecv(b, data[len(a.mem.SQ):])
	}
	binary.BigEndian.PutUint32(a.mem.DBR[4:8], n)
	binary.BigEndian.PutUint32(a.mem.BF[4:8], a.qp.QPN()<<8|1)
	a.mem.BF[0] = 1
	if steps := fab.Drain(1000); steps >= 1000 {
		t.Fatalf("the engine did not settle: %d steps", steps)
	}
	if st := a.qp.State(); st != mlx.IBV_QPS_RTS && st != mlx.IBV_QPS_ERR {
		t.Fatalf("state %v", st)
	}
}

// fillRecv writes the fuzzer's bytes over the receive WQEs, raw, and
// says in the receive doorbell record that they are posted.
func fillRecv(s *side, data []byte) {
	n := uint32(0)
	for ; len(data) > 0 && n < s.r.WQEs(); n++ {
		data = data[copy(s.r.Scatter(n), data):]
	}
	binary.BigEndian.PutUint32(s.mem.DBR[0:4], n)
}

// validRing returns a seed: a ring of real work requests runtime/sq
// wrote, with its WQEBB count first.
func validRing(f *testing.F) []byte {
	o := defaults
	o.wqebbs = 16
	_, a, b := pair(f, o)
	a.q.Start()
	a.q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	a.q.RDMAWrite(b.key, b.addr(0))
	a.q.SetSGE(a.key, a.addr(0), 8)
	a.q.RDMARead(b.key, b.addr(0))
	a.q.SetSGE(a.key, a.addr(0), 8)
	a.q.AtomicFetchAdd(b.key, b.addr(8), 1)
	a.q.SetSGE(a.key, a.addr(16), 8)
	a.q.SetWRFlags(mlx.IBV_SEND_SIGNALED | mlx.IBV_SEND_INLINE)
	a.q.Send()
	a.q.SetInlineData([]byte("inline"))
	a.q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	a.q.Memcpy(a.key, a.addr(64), a.key, a.addr(0), 8)
	if err := a.q.Complete(); err != nil {
		f.Fatal(err)
	}
	return append([]byte{4<<5 | byte((a.q.CurPost()+2)/3)}, a.mem.SQ...)
}
