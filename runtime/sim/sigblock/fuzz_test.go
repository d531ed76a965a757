package sigblock

import (
	"math/rand/v2"
	"testing"
)

// FuzzFlip: generated blocks check clean; one changed byte anywhere is
// reported with the right part, block and offset, unless check_mask leaves
// the changed part out. Masks cover whole parts (all of the guard, the app
// tag, the ref tag), so a data change either must or must not fail.
func FuzzFlip(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(7), uint32(5), byte(1))
	f.Add(uint64(2), uint8(3), uint8(1), uint32(519), byte(0x80))
	f.Add(uint64(3), uint8(17), uint8(6), uint32(1043), byte(0xff))
	all := domains()
	f.Fuzz(func(t *testing.T, seed uint64, dsel, msel uint8, pos uint32, x byte) {
		d := all[int(dsel)%len(all)]
		if x == 0 {
			x = 1
		}
		rng := rand.New(rand.NewPCG(seed, 0))
		data := randBytes(rng, 2*d.BlockSize)
		prot := make([]byte, 2*d.Stride())
		d.Generate(prot, data, seed)
		var mask uint8
		guardMask := uint8(fullMask(&d))
		if d.Kind == KindT10DIF {
			guardMask = MaskT10DIFGuard
			for i, m := range []uint8{MaskT10DIFGuard, MaskT10DIFAppTag, MaskT10DIFRefTag} {
				if msel&(1<<i) != 0 {
					mask |= m
				}
			}
		} else if msel&1 != 0 {
			mask = fullMask(&d)
		}
		if e, _ := d.Check(prot, seed, mask); e.Failed != 0 {
			t.Fatalf("clean blocks fail: %+v", e)
		}
		p := int(pos % uint32(len(prot)))
		prot[p] ^= x
		e, err := d.Check(prot, seed, mask)
		if err != nil {
			t.Fatal(err)
		}
		blk, in := p/d.Stride(), p%d.Stride()
		var want Fail
		switch {
		case in < d.BlockSize || d.Kind == KindCRC:
			if mask&guardMask != 0 {
				want = FailGuard
			}
		default:
			j := in - d.BlockSize // byte of the tuple: guard 0-1, app 2-3, ref 4-7
			if mask&(0x80>>j) != 0 {
				want = [...]Fail{FailGuard, FailGuard, FailApp, FailApp, FailRef, FailRef, FailRef, FailRef}[j]
			}
		}
		if e.Failed != want {
			t.Fatalf("%+v mask %#x: byte %d ^ %#x: failed %v, want %v", d, mask, p, x, e.Failed, want)
		}
		if want != 0 && (e.Block != seed+uint64(blk) || e.Offset != uint64(blk*d.Stride())) {
			t.Fatalf("byte %d: block %d offset %d, want %d %d", p, e.Block, e.Offset, seed+uint64(blk), blk*d.Stride())
		}
	})
}
