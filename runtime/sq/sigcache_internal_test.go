package sq

import (
	"bytes"
	"encoding/binary"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// TestSigCacheFollowsValues: the four calls of a signature configuration
// take the BSF and the SET_PSVs' transient signatures from the writer's
// cache only while the attributes hold the values it was built from: the
// same attribute structs changed in place, another mkey (its own PSV
// indexes), a domain added, and a return to the first values each write
// what the BSF and the signatures of the mkey's state are (computed here
// afresh); attributes made invalid in place after valid ones are refused.
func TestSigCacheFollowsValues(t *testing.T) {
	q := newSigCacheSQ(t)
	dif := mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, BG: 0xffff, AppTag: 1, RefTag: 2}
	wire := mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	wire.SetSigDif(&dif)
	crc := mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, Seed: 0xffffffff}
	memDom := mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_4096}
	memDom.SetSigCRC(&crc)
	attr := mlx.SigBlockAttr{Wire: &wire, CheckMask: 0xff}
	const flags = mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	mkA, mkB := NewMkey(0x100, flags, 4), NewMkey(0x200, flags, 4)
	mkA.MemPSV, mkA.WirePSV, mkB.MemPSV, mkB.WirePSV = 0x11, 0x12, 0x21, 0x22
	sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}, {Addr: 0x3000, Length: 512, LKey: 7}}
	steps := []struct {
		name   string
		mk     *Mkey
		change func()
		bad    bool
	}{
		{name: "first", mk: mkA},
		{name: "again", mk: mkA},
		{name: "another mkey", mk: mkB},
		{name: "app tag changed in place", mk: mkA, change: func() { dif.AppTag = 7 }},
		{name: "check mask", mk: mkA, change: func() { attr.CheckMask = 0x0f }},
		{name: "memory domain added", mk: mkB, change: func() { attr.Mem = &memDom }},
		{name: "crc seed changed in place", mk: mkB, change: func() { crc.Seed = 0 }},
		{name: "bg type made invalid in place", mk: mkA, change: func() { dif.BGType = 9 }, bad: true},
		{name: "comp_mask set", mk: mkA, change: func() { dif.BGType = mlx.MLX5DV_SIG_T10DIF_CRC; attr.CompMask = 1 }, bad: true},
		{name: "back to the first", mk: mkA, change: func() { attr = mlx.SigBlockAttr{Wire: &wire, CheckMask: 0xff}; dif.AppTag = 1 }},
		{name: "the first again on the other mkey", mk: mkB},
	}
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		q.SetWRFlags(mlx.IBV_SEND_INLINE | mlx.IBV_SEND_SIGNALED)
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		base := int(q.curPost&q.mask) * wqebb
		q.MkeyConfigure(s.mk, 3, &mlx.MkeyConfAttr{})
		q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
		q.SetMkeyLayoutList(sges)
		errSig := q.SetMkeySigBlock(&attr)
		err := q.Complete()
		if s.bad {
			if errSig == nil || err == nil {
				t.Errorf("%s: accepted (SetMkeySigBlock %v, Complete %v)", s.name, errSig, err)
			}
			q.Abort()
			continue
		}
		if errSig != nil || err != nil {
			t.Fatalf("%s: SetMkeySigBlock %v, Complete %v", s.name, errSig, err)
		}
		mk := s.mk.check()
		var want mlx.BSF
		sigBSF(&want, mk, false)
		bsf := base + umrFixed + align64(16*len(sges))
		if got := q.bytes(bsf, mlx.BSFSize); !bytes.Equal(got, want[:]) {
			t.Errorf("%s: BSF\n got %x\nwant %x", s.name, got, want[:])
		}
		psv := bsf + mlx.BSFSize
		for _, d := range []struct {
			present bool
			ts      uint64
		}{{mk.Mem.Present, transientSig(&mk.Mem)}, {mk.Wire.Present, transientSig(&mk.Wire)}} {
			if !d.present {
				continue
			}
			if got := binary.BigEndian.Uint64(q.bytes(psv+24, 8)); got != d.ts {
				t.Errorf("%s: SET_PSV signature %#x, want %#x", s.name, got, d.ts)
			}
			psv += wqebb
		}
		if err := q.Completed(q.Outstanding()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSigCacheFromValidatedValues: the BSF of a signature set by
// SetMkeySigBlock is built from the attributes as the call gave them, as
// libmlx5 builds it from its own copy: a program that changes the mkey's
// exported copy before the configuration's last setter changes neither
// that configuration's BSF nor the next one's.
func TestSigCacheFromValidatedValues(t *testing.T) {
	q := newSigCacheSQ(t)
	dif := mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, BG: 0xffff, AppTag: 1, RefTag: 2}
	wire := mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	wire.SetSigDif(&dif)
	attr := mlx.SigBlockAttr{Wire: &wire, CheckMask: 0xff}
	mk := NewMkey(0x100, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	mk.WirePSV = 0x12
	sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}}
	// The BSF of attr's values, with the mkey's PSV index.
	want := Mkey{WirePSV: mk.WirePSV, CheckMask: attr.CheckMask}
	want.Wire.Present, want.Wire.Domain.SigType, want.Wire.Domain.BlockSize, want.Wire.T10dif = true, wire.SigType, wire.BlockSize, dif
	var bsfWant mlx.BSF
	sigBSF(&bsfWant, want.check(), false)
	for round := range 2 {
		q.SetWRFlags(mlx.IBV_SEND_INLINE)
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		base := int(q.curPost&q.mask) * wqebb
		q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{})
		q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
		q.SetMkeySigBlock(&attr)
		if round == 0 {
			mk.Wire.T10dif.AppTag = 0x999 // the program's copy, changed before the last setter
		}
		q.SetMkeyLayoutList(sges)
		if err := q.Complete(); err != nil {
			t.Fatal(err)
		}
		if got := q.bytes(base+umrFixed+wqebb, mlx.BSFSize); !bytes.Equal(got, bsfWant[:]) {
			t.Errorf("round %d: BSF\n got %x\nwant %x", round, got, bsfWant[:])
		}
		if err := q.Completed(q.Outstanding()); err != nil {
			t.Fatal(err)
		}
	}
}

// newSigCacheSQ is an RC writer with every builder on a plain queue of 64
// WQEBBs, room for every configuration of the tests above without a wrap.
func newSigCacheSQ(t *testing.T) *SQ {
	mem, err := qmem.Plain(64, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	q, err := New(Config{Mem: mem, QPN: 0x99,
		QP: QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 316, MaxSendSGE: 2, MaxPost: 16}})
	if err != nil {
		t.Fatal(err)
	}
	return q
}
