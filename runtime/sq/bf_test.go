package sq_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestBlueFlameChoice: Complete copies the batch to the BlueFlame
// register exactly when libmlx5's post_send_db does: not shut up, one
// work request, a UUAR, inline data or prefer_bf, and a WQE of more than
// one and at most buf_size / 16 units of 16 bytes; otherwise it rings
// the 8-byte doorbell. Over the register's settings, one and two work
// requests, SGE and inline data of every size around the limit.
func TestBlueFlameChoice(t *testing.T) {
	for _, bf := range []sq.BlueFlame{
		{UUARN: 1, Size: 256}, {UUARN: 1, Size: 64}, {UUARN: 0, Size: 256},
		{UUARN: 1, Size: 256, ShutUpBF: true}, {UUARN: 1, Size: 64, PreferBF: true},
		{UUARN: 1, Size: 256, PreferBF: true, ShutUpBF: true},
	} {
		for nreq := 1; nreq <= 2; nreq++ {
			// -1: an SGE; -2: a send with an empty SGE, a WQE of one unit.
			for _, inline := range []int{-2, -1, 0, 1, 12, 28, 29, 60, 61, 220, 221, 300} {
				where := fmt.Sprintf("%+v, %d work requests, inline %d", bf, nreq, inline)
				q, mem := mustSQConf(t, 16, func(c *sq.Config) { c.BF = bf })
				if err := q.Start(); err != nil {
					t.Fatal(err)
				}
				for range nreq {
					switch {
					case inline == -2:
						q.Send()
						q.SetSGE(2, 0x2000, 0)
					case inline == -1:
						q.RDMAWrite(1, 0x1000)
						q.SetSGE(2, 0x2000, 64)
					default:
						q.RDMAWrite(1, 0x1000)
						q.SetInlineData(bytes.Repeat([]byte{0xab}, inline))
					}
				}
				if err := q.Complete(); err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				last := q.Last.Offset // the register's half written
				ctrl := mem.SQ[(nreq-1)*64*sizeWQEBBs(mem.SQ[7]&0x3f):]
				size := int(ctrl[7] & 0x3f) // the last WQE's ds
				want := !bf.ShutUpBF && nreq == 1 && bf.UUARN != 0 && (inline >= 0 || bf.PreferBF) && size > 1 && size <= bf.Size/16
				if q.Last.BlueFlame != want {
					t.Fatalf("%s: a WQE of %d units: BlueFlame %v, want %v", where, size, q.Last.BlueFlame, want)
				}
				n := 8
				if want {
					n = (size*16 + 63) &^ 63
				}
				if q.Last.Length != n || !bytes.Equal(mem.BF[last:last+n], ctrl[:n]) {
					t.Fatalf("%s: %d bytes in the register at %d, want %d of the WQE", where, q.Last.Length, last, n)
				}
			}
		}
	}
}

// sizeWQEBBs is the WQEBBs of a WQE of ds units of 16 bytes.
func sizeWQEBBs(ds byte) int { return (int(ds) + 3) / 4 }
