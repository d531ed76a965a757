package verify

import (
	"bytes"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen/verify/cref"
	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// The Go side of each helper, written with the generated setters the way a
// builder uses them.

func goSetCtrl(s *mlx5dv.WQECtrlSeg, pi uint16, opcode, opmod uint8, qpn uint32, fmCeSe, ds, signature uint8, imm uint32) {
	s.SetOpmodIdxOpcode(uint32(opmod)<<24 | uint32(pi)<<8 | uint32(opcode))
	s.SetQPNDS(qpn<<8 | uint32(ds))
	s.SetFmCeSe(mlx5dv.WQECtrlFlags(fmCeSe))
	s.SetSignature(signature)
	// The C helper stores imm as given: the caller has already put it in
	// network order, so the Go side stores the host value that gives the
	// same bytes.
	b := [4]byte{byte(imm), byte(imm >> 8), byte(imm >> 16), byte(imm >> 24)}
	s.SetImm(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
}

func goSetData(s *mlx5dv.WQEDataSeg, length, lkey uint32, addr uint64) {
	s.SetByteCount(length)
	s.SetLKey(lkey)
	s.SetAddr(addr)
}

func goSetDgram(s *mlx5dv.WQEDatagramSeg, key uint64, dqpDct uint32, ext, statRateSl, flMlid uint8, rlid uint16,
	rmac [6]byte, tclass, hopLimit uint8, grhGidFl uint32, rgid [16]byte) {
	av := s.AV()
	av.SetKeyDCKey(key)
	av.SetDqpDCT(uint32(ext)<<31 | dqpDct)
	av.SetStatRateSL(statRateSl)
	av.SetFlMlid(flMlid)
	av.SetRlid(rlid)
	av.SetRmac(rmac)
	av.SetTclass(tclass)
	av.SetHopLimit(hopLimit)
	av.SetGRHGIDFl(grhGidFl)
	av.SetRgid(rgid)
}

func goSetEth(b []byte, csFlags uint8, mss, inlineHdrSz uint16, hdr []byte) {
	s := (*mlx5dv.WQEEthSeg)(b[:mlx5dv.WQEEthSegSize])
	s.SetCsFlags(csFlags)
	s.SetMss(mss)
	s.SetInlineHdrSz(inlineHdrSz)
	// Like the C helper, the header runs on from inline_hdr_start past the
	// end of the segment.
	copy(b[14:14+int(inlineHdrSz)], hdr)
}

func checkCtrl(t *testing.T, pi uint16, opcode, opmod uint8, qpn uint32, fmCeSe, ds, signature uint8, imm uint32) {
	t.Helper()
	// The helper leaves dci_stream_channel_id alone: start both from the
	// same junk so that untouched bytes compare too.
	var c, x, g [16]byte
	for i := range c {
		c[i], x[i], g[i] = 0x5a, 0x5a, 0x5a
	}
	cref.SetCtrlSeg(&c, pi, opcode, opmod, qpn, fmCeSe, ds, signature, imm)
	goSetCtrl((*mlx5dv.WQECtrlSeg)(&g), pi, opcode, opmod, qpn, fmCeSe, ds, signature, imm)
	if c != g {
		t.Fatalf("ctrl(pi=%d opcode=%d opmod=%d qpn=%#x fm_ce_se=%#x ds=%d sig=%d imm=%#x):\n   C %x\n  Go %x", pi, opcode, opmod, qpn, fmCeSe, ds, signature, imm, c, g)
	}
	if cref.HaveX86() {
		// The SSE variant stores all 16 bytes, so it zeroes
		// dci_stream_channel_id, which the scalar helper leaves alone.
		(*mlx5dv.WQECtrlSeg)(&g).SetDCIStreamChannelID(0)
		cref.X86SetCtrlSeg(&x, pi, opcode, opmod, qpn, fmCeSe, ds, signature, imm)
		if x != g {
			t.Fatalf("x86 ctrl(pi=%d ...):\n   C %x\n  Go %x", pi, x, g)
		}
	}
}

func checkData(t *testing.T, length, lkey uint32, addr uint64) {
	t.Helper()
	var c, x, g [16]byte
	cref.SetDataSeg(&c, length, lkey, addr)
	goSetData((*mlx5dv.WQEDataSeg)(&g), length, lkey, addr)
	if c != g {
		t.Fatalf("data(%#x, %#x, %#x):\n   C %x\n  Go %x", length, lkey, addr, c, g)
	}
	if cref.HaveX86() {
		cref.X86SetDataSeg(&x, length, lkey, addr)
		if x != g {
			t.Fatalf("x86 data(%#x, %#x, %#x):\n   C %x\n  Go %x", length, lkey, addr, x, g)
		}
	}
}

func checkDgram(t *testing.T, key uint64, dqpDct uint32, ext, statRateSl, flMlid uint8, rlid uint16, rmac [6]byte, tclass, hopLimit uint8, grhGidFl uint32, rgid [16]byte) {
	t.Helper()
	var c, g [48]byte
	for i := range c {
		c[i], g[i] = 0xa5, 0xa5
	}
	cref.SetDgramSeg(&c, key, dqpDct, ext, statRateSl, flMlid, rlid, &rmac, tclass, hopLimit, grhGidFl, &rgid)
	goSetDgram((*mlx5dv.WQEDatagramSeg)(&g), key, dqpDct, ext, statRateSl, flMlid, rlid, rmac, tclass, hopLimit, grhGidFl, rgid)
	if c != g {
		t.Fatalf("dgram(key=%#x dqp=%#x ext=%d ...):\n   C %x\n  Go %x", key, dqpDct, ext, c, g)
	}
}

func checkEth(t *testing.T, csFlags uint8, mss uint16, hdr []byte) {
	t.Helper()
	c := bytes.Repeat([]byte{0x3c}, 64)
	g := bytes.Repeat([]byte{0x3c}, 64)
	n := uint16(len(hdr))
	cref.SetEthSeg(c, csFlags, mss, n, hdr)
	goSetEth(g, csFlags, mss, n, hdr)
	if !bytes.Equal(c, g) {
		t.Fatalf("eth(cs=%#x mss=%d hdr=%x):\n   C %x\n  Go %x", csFlags, mss, hdr, c, g)
	}
}

func TestCtrlSegMatchesC(t *testing.T) {
	checkCtrl(t, 0, 8, 0, 0x1234, 8, 3, 0, 0)
	checkCtrl(t, 0xffff, 0xff, 0xff, 0xffffff, 0xff, 0x3f, 0xff, 0xffffffff)
	checkCtrl(t, 0x1234, uint8(mlx5dv.MLX5_OPCODE_UMR), 1, 0xabcdef, 0x28, 12, 7, 0x12345678)
	t.Logf("SSE variants compiled: %v", cref.HaveX86())
}

func TestDataSegMatchesC(t *testing.T) {
	checkData(t, 4096, 0x55667788, 0x1111222233334444)
	checkData(t, 0, 0, 0)
	checkData(t, 0xffffffff, 0xffffffff, 0xffffffffffffffff)
}

func TestDgramSegMatchesC(t *testing.T) {
	checkDgram(t, 0x0102030405060708, 0xabcdef, 1, 2, 3, 0x4455, [6]byte{1, 2, 3, 4, 5, 6}, 7, 64, 0x89abcdef,
		[16]byte{0xfe, 0x80, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14})
	checkDgram(t, 0, 0, 0, 0, 0, 0, [6]byte{}, 0, 0, 0, [16]byte{})
}

func TestEthSegMatchesC(t *testing.T) {
	checkEth(t, uint8(mlx5dv.MLX5_ETH_WQE_L3_CSUM|mlx5dv.MLX5_ETH_WQE_L4_CSUM), 1460, []byte{0xde, 0xad})
	checkEth(t, 0, 0, nil)
	checkEth(t, 0xc0, 9000, bytes.Repeat([]byte{0x11, 0x22, 0x33}, 6)) // 18 bytes: past the segment's end
}

func FuzzCtrlSeg(f *testing.F) {
	f.Add(uint16(0), uint8(8), uint8(0), uint32(0x1234), uint8(8), uint8(3), uint8(0), uint32(0))
	f.Fuzz(func(t *testing.T, pi uint16, opcode, opmod uint8, qpn uint32, fmCeSe, ds, signature uint8, imm uint32) {
		// The helper shifts qp_num left by 8 into a 32-bit word: its top
		// byte and ds above 6 bits spill into neighbouring fields in both
		// languages alike.
		checkCtrl(t, pi, opcode, opmod, qpn, fmCeSe, ds, signature, imm)
	})
}

func FuzzDataSeg(f *testing.F) {
	f.Add(uint32(4096), uint32(0x55667788), uint64(0x1111222233334444))
	f.Fuzz(func(t *testing.T, length, lkey uint32, addr uint64) { checkData(t, length, lkey, addr) })
}

func FuzzDgramSeg(f *testing.F) {
	f.Add(uint64(1), uint32(2), uint8(1), uint8(3), uint8(4), uint16(5), []byte("rmac!!"), uint8(6), uint8(7), uint32(8), []byte("0123456789abcdef"))
	f.Fuzz(func(t *testing.T, key uint64, dqpDct uint32, ext, statRateSl, flMlid uint8, rlid uint16, rmac []byte, tclass, hopLimit uint8, grhGidFl uint32, rgid []byte) {
		var m [6]byte
		var g [16]byte
		copy(m[:], rmac)
		copy(g[:], rgid)
		// ext is a one-bit field shifted to bit 31, as in C.
		checkDgram(t, key, dqpDct, ext, statRateSl, flMlid, rlid, m, tclass, hopLimit, grhGidFl, g)
	})
}

func FuzzEthSeg(f *testing.F) {
	f.Add(uint8(0xc0), uint16(1460), []byte{1, 2})
	f.Fuzz(func(t *testing.T, csFlags uint8, mss uint16, hdr []byte) {
		if len(hdr) > 50 {
			hdr = hdr[:50]
		}
		checkEth(t, csFlags, mss, hdr)
	})
}
