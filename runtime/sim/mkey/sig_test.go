package mkey_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// crc16 is the T10-DIF guard computed bit by bit (polynomial 0x8BB7,
// MSB first, register from 0, no final XOR), independently of sigblock's
// table.
func crc16(p []byte) uint16 {
	var r uint16
	for _, b := range p {
		r ^= uint16(b) << 8
		for i := 0; i < 8; i++ {
			if r&0x8000 != 0 {
				r = r<<1 ^ 0x8BB7
			} else {
				r <<= 1
			}
		}
	}
	return r
}

// withCRC32 lays data out as memory with a CRC32 field after each 512
// bytes: hash/crc32's IEEE CRC, stored little-endian as the device stores it.
func withCRC32(data []byte) []byte {
	var out []byte
	for i := 0; i < len(data); i += 512 {
		out = append(out, data[i:i+512]...)
		out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(data[i:i+512]))
	}
	return out
}

// withDIF lays data out as T10-DIF blocks of 4096 bytes: guard, app tag,
// ref tag (incremented per block) big-endian.
func withDIF(data []byte, app uint16, ref uint32) []byte {
	var out []byte
	for i := 0; i < len(data); i += 4096 {
		out = append(out, data[i:i+4096]...)
		out = binary.BigEndian.AppendUint16(out, crc16(data[i:i+4096]))
		out = binary.BigEndian.AppendUint16(out, app)
		out = binary.BigEndian.AppendUint32(out, ref+uint32(i/4096))
	}
	return out
}

// TestSigExample1 is mlx5dv_wr_set_mkey_sig_block(3) Examples 1 and 1.1:
// CRC32 every 512 bytes in the memory domain, none on the wire. A SEND
// gathers, checks and strips; a RECV scatters and generates the fields.
// Its SGE counts wire (data) bytes, as the wire domain has no signature
// (rdma-core tests/test_mlx5_mkey.py test_mkey_sig_err: SGE 512 through
// an mkey of 516). A
// corrupted CRC is reported in the memory domain with the field and the
// computed values and the block's offset.
func TestSigExample1(t *testing.T) {
	r := newRig(t)
	data := pattern(4*512, 9)
	memBuf := withCRC32(data)
	k := r.mem.reg(0x40000, memBuf, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	sig := &mlx.SigBlockAttr{Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32, 0xffffffff, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xf0}
	sges := []mlx.SGE{{Addr: 0x40000, Length: uint32(len(memBuf)), LKey: k}}
	if err := r.configure(mk, mlx.IBV_ACCESS_LOCAL_WRITE, sges, sig, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := r.tab.SpanWire(mk.LKey, 2048, false); err != nil || n != 2048 {
		t.Fatalf("wire length of 4 blocks: %d, %v", n, err)
	}
	var f *mkey.Fault
	if _, err := r.tab.Gather(mk.LKey, 0, uint64(len(memBuf)), false, nil); !errors.As(err, &f) || f.Kind != mkey.FaultBounds {
		t.Fatalf("an SGE of the memory length (not whole data blocks): %v", err)
	}
	// Example 1: the SEND.
	wire, err := r.tab.Gather(mk.LKey, 0, uint64(len(data)), false, nil)
	if err != nil || !bytes.Equal(wire, data) {
		t.Fatalf("SEND gathered %d bytes (%v), want the 2048 data bytes", len(wire), err)
	}
	if e, ok := r.tab.SigError(mk.LKey); ok {
		t.Fatalf("a clean gather reported %+v", e)
	}
	// Example 1.1: the RECV generates the CRCs.
	clear(memBuf)
	if err := r.tab.Scatter(mk.LKey, 0, data, false); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(memBuf, withCRC32(data)) {
		t.Fatal("RECV did not write data with generated CRC32s")
	}
	// A corrupted CRC in block 2: the SEND still transfers, and the mkey
	// records the error.
	memBuf[2*516+512] ^= 0x80
	wire, err = r.tab.Gather(mk.LKey, 0, uint64(len(data)), false, nil)
	if err != nil || !bytes.Equal(wire, data) {
		t.Fatalf("a failed check must still transfer: %v", err)
	}
	e, ok := r.tab.SigError(mk.LKey)
	want := crc32.ChecksumIEEE(data[1024:1536])
	if !ok || e.Domain != mkey.DomainMemory || e.Syndrome != cq.SigSyndromeGuard || e.Offset != 2*516 ||
		e.ActualTransSig != want || e.ExpectedTransSig != want^0x80 || e.Key != mk.LKey {
		t.Fatalf("signature error %+v (ok %v), want a memory guard error at 1032", e, ok)
	}
	if _, ok := r.tab.SigError(mk.LKey); ok {
		t.Fatal("SigError did not clear the error")
	}
	checkCQE(t, e, &cq.Mkey{Mem: cq.SigCRC32}, cq.MkeyErr{Type: mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD,
		Expected: uint64(want ^ 0x80), Actual: uint64(want), Offset: 2 * 516})
}

// TestSigExample2 is Examples 2 and 2.1: T10-DIF every 4 KiB in the wire
// domain only. A remote RDMA READ gathers the data and generates the
// fields; a remote RDMA WRITE checks and strips them. Corrupted data, app
// and ref tags are each reported with which tag failed, the expected and
// actual values and the offset, and come back through the CQE and
// runtime/cq's mkey check.
func TestSigExample2(t *testing.T) {
	r := newRig(t)
	data := pattern(3*4096, 0x21)
	memBuf := append([]byte{}, data...)
	k := r.mem.reg(0x80000, memBuf, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	const app, ref = 0x1234, 0x100
	sig := &mlx.SigBlockAttr{Wire: difDomain(0, app, ref, uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP), mlx.MLX5DV_BLOCK_SIZE_4096), CheckMask: 0xff}
	sges := []mlx.SGE{{Addr: 0x80000, Length: uint32(len(memBuf)), LKey: k}}
	if err := r.configure(mk, mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE, sges, sig, nil); err != nil {
		t.Fatal(err)
	}
	wantWire := withDIF(data, app, ref)
	// A local SGE through it counts memory bytes (the wire has a
	// signature); a remote span counts wire bytes.
	if n, err := r.tab.SpanWire(mk.LKey, uint64(len(data)), false); err != nil || n != uint64(len(wantWire)) {
		t.Fatalf("wire length of a %d-byte local SGE: %d, %v", len(data), n, err)
	}
	if n, err := r.tab.SpanWire(mk.LKey, 4104, true); err != nil || n != 4104 {
		t.Fatalf("wire length of a remote span: %d, %v", n, err)
	}
	// Example 2: the RDMA READ of the whole mkey, then of its last block
	// (its address and length in wire bytes), whose first block takes the
	// initial ref tag: numbering starts at the transfer's first block.
	wire, err := r.tab.Gather(mk.LKey, 0, uint64(len(wantWire)), true, nil)
	if err != nil || !bytes.Equal(wire, wantWire) {
		t.Fatalf("RDMA READ: %v, wire differs from generated T10-DIF", err)
	}
	wire, err = r.tab.Gather(mk.LKey, 2*4104, 4104, true, nil)
	if err != nil || !bytes.Equal(wire, withDIF(data[2*4096:], app, ref)) {
		t.Fatalf("RDMA READ of block 2 (ref tag 0x100): %v", err)
	}
	var f *mkey.Fault
	if _, err = r.tab.Gather(mk.LKey, 4096, 4104, true, nil); !errors.As(err, &f) || f.Kind != mkey.FaultBounds || !f.Remote {
		t.Fatalf("a READ at a wire offset inside a block: %v", err)
	}
	// Example 2.1: the RDMA WRITE.
	clear(memBuf)
	if err := r.tab.Scatter(mk.LKey, 0, wantWire, true); err != nil || !bytes.Equal(memBuf, data) {
		t.Fatalf("RDMA WRITE: %v, or the memory is not the stripped data", err)
	}
	if e, ok := r.tab.SigError(mk.LKey); ok {
		t.Fatalf("a clean write reported %+v", e)
	}
	guard1 := crc16(data[4096:8192])
	cases := []struct {
		name    string
		at      int // byte of the wire to flip
		syn     uint16
		typ     mlx.MkeyErrType
		exp, ac uint64
	}{
		{"data", 4104 + 7, cq.SigSyndromeGuard, mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, uint64(guard1), 0},
		{"app tag", 4104 + 4096 + 3, cq.SigSyndromeAppTag, mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG, app, app ^ 1},
		{"ref tag", 4104 + 4096 + 7, cq.SigSyndromeRefTag, mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG, ref + 1, (ref + 1) ^ 1},
	}
	for _, c := range cases {
		bad := append([]byte{}, wantWire...)
		bad[c.at] ^= 1
		if c.name == "data" {
			c.ac = uint64(crc16(bad[4104 : 4104+4096]))
		}
		if err := r.tab.Scatter(mk.LKey, 0, bad, true); err != nil {
			t.Fatalf("%s: a failed check must still transfer: %v", c.name, err)
		}
		e, ok := r.tab.SigError(mk.LKey)
		if !ok || e.Domain != mkey.DomainWire || e.Syndrome != c.syn || e.Offset != 4104 {
			t.Fatalf("%s: %+v (ok %v), want syndrome %#x in the wire domain at 4104", c.name, e, ok, c.syn)
		}
		checkCQE(t, e, &cq.Mkey{Wire: cq.SigT10DIF}, cq.MkeyErr{Type: c.typ, Expected: c.exp, Actual: c.ac, Offset: 4104})
	}
}

// checkCQE writes e as a signature-error CQE into a CQ, polls it with
// runtime/cq (the CQE is absorbed by the mkey, not returned) and checks
// what mlx5dv_mkey_check reports.
func checkCQE(t *testing.T, e mkey.SigErr, m *cq.Mkey, want cq.MkeyErr) {
	t.Helper()
	qm, err := qmem.New(qmem.Options{WQEBBs: 1, CQEs: 8, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer qm.Close()
	for i := 63; i < len(qm.CQ); i += 64 {
		qm.CQ[i] = uint8(mlx.MLX5_CQE_INVALID)<<4 | 1 // as create_cq leaves them
	}
	c, err := cq.New(cq.Config{Mem: qm, CQN: 7})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddMkey(e.Key>>8, m); err != nil {
		t.Fatal(err)
	}
	if err := e.PutCQE(qm.CQ[:64], false); err != nil {
		t.Fatal(err)
	}
	var wc [2]cq.WC
	if n, err := c.Poll(wc[:]); n != 0 || err != nil || c.ConsIndex() != 1 {
		t.Fatalf("poll of a signature-error CQE: %d completions, %v, consumer index %d", n, err, c.ConsIndex())
	}
	got, err := m.Check()
	if err != nil || got != want {
		t.Fatalf("mkey check %+v (%v), want %+v", got, err, want)
	}
}

// TestSigBothDomains: T10-DIF in memory and on the wire with different
// ref tags (same block structure: guard and app tag copied, ref tag
// regenerated), and memory T10-DIF with a CRC32C wire (different
// structures: checked, stripped, generated anew).
func TestSigBothDomains(t *testing.T) {
	r := newRig(t)
	data := pattern(2*512, 0x33)
	var memBuf []byte
	for i := 0; i < 2; i++ {
		blk := data[i*512 : (i+1)*512]
		memBuf = append(memBuf, blk...)
		memBuf = binary.BigEndian.AppendUint16(memBuf, crc16(blk))
		memBuf = binary.BigEndian.AppendUint16(memBuf, 7)
		memBuf = binary.BigEndian.AppendUint32(memBuf, 50+uint32(i))
	}
	k := r.mem.reg(0x1000, memBuf, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	remap := uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP)
	sig := &mlx.SigBlockAttr{Mem: difDomain(0, 7, 50, remap, mlx.MLX5DV_BLOCK_SIZE_512), Wire: difDomain(0, 7, 900, remap, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	sges := []mlx.SGE{{Addr: 0x1000, Length: uint32(len(memBuf)), LKey: k}}
	if err := r.configure(mk, rw, sges, sig, nil); err != nil {
		t.Fatal(err)
	}
	wire, err := r.tab.Gather(mk.LKey, 0, uint64(len(memBuf)), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		f := wire[i*520+512 : (i+1)*520]
		if !bytes.Equal(f[:4], memBuf[i*520+512:i*520+516]) || binary.BigEndian.Uint32(f[4:]) != 900+uint32(i) {
			t.Fatalf("block %d: wire field %x, want the memory guard and app tag and ref tag %d", i, f, 900+i)
		}
	}
	// Memory T10-DIF, wire CRC32C: the wire gets the catalogue CRC-32C.
	sig = &mlx.SigBlockAttr{Mem: difDomain(0, 7, 50, remap, mlx.MLX5DV_BLOCK_SIZE_512),
		Wire: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, 0xffffffff, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	if err := r.configure(mk, rw, sges, sig, nil); err != nil {
		t.Fatal(err)
	}
	wire, err = r.tab.Gather(mk.LKey, 0, uint64(len(memBuf)), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	for i := 0; i < 2; i++ {
		if got := binary.LittleEndian.Uint32(wire[i*516+512:]); got != crc32.Checksum(data[i*512:(i+1)*512], tab) {
			t.Fatalf("block %d: wire CRC32C %#x", i, got)
		}
	}
	// A reset (MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR) drops the signature.
	err = r.post(func(q *sq.SQ) error {
		return q.MkeyConfigure(mk, 0, &mlx.MkeyConfAttr{ConfFlags: mlx.MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR})
	})
	if err != nil {
		t.Fatal(err)
	}
	wire, err = r.tab.Gather(mk.LKey, 0, uint64(len(memBuf)), false, nil)
	if err != nil || !bytes.Equal(wire, memBuf) {
		t.Fatalf("after a reset the memory goes out as it is: %v", err)
	}
}
