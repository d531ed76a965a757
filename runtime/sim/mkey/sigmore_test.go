package mkey_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc64"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// sigMkey makes a signature mkey over one region of size bytes configured
// with sig and full access, and returns it with the region.
func sigMkey(t *testing.T, r *rig, size int, sig *mlx.SigBlockAttr) (*sq.Mkey, []byte) {
	t.Helper()
	buf := make([]byte, size)
	k := r.mem.reg(0x100000, buf, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	if err := r.configure(mk, rw, []mlx.SGE{{Addr: 0x100000, Length: uint32(size), LKey: k}}, sig, nil); err != nil {
		t.Fatal(err)
	}
	return mk, buf
}

// csum is the IP checksum of RFC 1071, computed word by word.
func csum(p []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(p); i += 2 {
		s += uint32(p[i])<<8 | uint32(p[i+1])
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// TestSigBlockSizes: every block size, generated on the wire (T10-DIF
// with the IP checksum guard) by a remote read and checked and stripped
// by a remote write.
func TestSigBlockSizes(t *testing.T) {
	sizes := map[mlx.BlockSize]int{mlx.MLX5DV_BLOCK_SIZE_512: 512, mlx.MLX5DV_BLOCK_SIZE_520: 520,
		mlx.MLX5DV_BLOCK_SIZE_4048: 4048, mlx.MLX5DV_BLOCK_SIZE_4096: 4096, mlx.MLX5DV_BLOCK_SIZE_4160: 4160}
	for sel, bs := range sizes {
		r := newRig(t)
		d := difDomain(0, 0xabcd, 7, 0, sel)
		d.SigDif().BGType = mlx.MLX5DV_SIG_T10DIF_CSUM
		mk, buf := sigMkey(t, r, 2*bs, &mlx.SigBlockAttr{Wire: d, CheckMask: 0xff})
		data := pattern(2*bs, byte(bs))
		copy(buf, data)
		wire, err := r.tab.Gather(mk.LKey, 0, uint64(2*(bs+8)), true, nil) // a remote span counts wire bytes
		if err != nil || len(wire) != 2*(bs+8) {
			t.Fatalf("block size %d: %v, %d wire bytes", bs, err, len(wire))
		}
		for i := 0; i < 2; i++ {
			f := wire[i*(bs+8)+bs:]
			if binary.BigEndian.Uint16(f) != csum(data[i*bs:(i+1)*bs]) || binary.BigEndian.Uint16(f[2:]) != 0xabcd || binary.BigEndian.Uint32(f[4:]) != 7 {
				t.Fatalf("block size %d, block %d: field %x", bs, i, f[:8])
			}
		}
		clear(buf)
		if err := r.tab.Scatter(mk.LKey, 0, wire, true); err != nil || !bytes.Equal(buf, data) {
			t.Fatalf("block size %d: write back %v", bs, err)
		}
		if _, ok := r.tab.SigError(mk.LKey); ok {
			t.Fatalf("block size %d: the round trip failed its check", bs)
		}
		if _, err := r.tab.Gather(mk.LKey, 0, uint64(bs/2), true, nil); err == nil {
			t.Fatalf("block size %d: half a block gathered through a signature mkey", bs)
		}
	}
}

// TestSigMasksAndEscapes: check_mask leaves parts unchecked, every failed
// part of a block is in the CQE's syndrome and libmlx5's mkey check
// reports the reference tag of them first (providers/mlx5/verbs.c
// mlx5_decode_sigerr), an escaped block is not checked, and copy_mask
// takes bytes from the input domain.
func TestSigMasksAndEscapes(t *testing.T) {
	r := newRig(t)
	data := pattern(512, 5)
	field := func(guard, app uint16, ref uint32) []byte {
		f := binary.BigEndian.AppendUint16(nil, guard)
		f = binary.BigEndian.AppendUint16(f, app)
		return binary.BigEndian.AppendUint32(f, ref)
	}
	wire := func(f []byte) []byte { return append(append([]byte{}, data...), f...) }
	esc := uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_APP_ESCAPE)
	mk, _ := sigMkey(t, r, 512, &mlx.SigBlockAttr{Wire: difDomain(0, 9, 100, esc, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff})
	// Guard and ref tag bad: both syndrome bits, the ref tag reported.
	if err := r.tab.Scatter(mk.LKey, 0, wire(field(crc16(data)^1, 9, 101)), true); err != nil {
		t.Fatal(err)
	}
	e, ok := r.tab.SigError(mk.LKey)
	if !ok || e.Syndrome != cq.SigSyndromeGuard|cq.SigSyndromeRefTag || e.ExpectedTransSig != uint32(crc16(data)^1)<<16|9 ||
		e.ActualTransSig != uint32(crc16(data))<<16|9 || e.ExpectedRefTag != 100 || e.ActualRefTag != 101 {
		t.Fatalf("guard and ref tag bad: %+v, want both parts in the CQE", e)
	}
	checkCQE(t, e, &cq.Mkey{Wire: cq.SigT10DIF}, cq.MkeyErr{Type: mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG, Expected: 100, Actual: 101})
	// App tag 0xffff escapes the block.
	if err := r.tab.Scatter(mk.LKey, 0, wire(field(0, 0xffff, 0)), true); err != nil {
		t.Fatal(err)
	}
	if e, ok := r.tab.SigError(mk.LKey); ok {
		t.Fatalf("an escaped block reported %+v", e)
	}
	// check_mask of the guard only: a bad ref tag passes.
	mk, _ = sigMkey(t, r, 512, &mlx.SigBlockAttr{Wire: difDomain(0, 9, 100, 0, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xc0})
	if err := r.tab.Scatter(mk.LKey, 0, wire(field(crc16(data), 9, 555)), true); err != nil {
		t.Fatal(err)
	}
	if e, ok := r.tab.SigError(mk.LKey); ok {
		t.Fatalf("a masked ref tag reported %+v", e)
	}
	// copy_mask 0x0f: the memory gets the wire's ref tag, not its own.
	sig := &mlx.SigBlockAttr{Mem: difDomain(0, 9, 100, 0, mlx.MLX5DV_BLOCK_SIZE_512), Wire: difDomain(0, 9, 200, 0, mlx.MLX5DV_BLOCK_SIZE_512),
		Flags: mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK, CheckMask: 0xf0, CopyMask: 0x0f}
	mk, buf := sigMkey(t, r, 520, sig)
	if err := r.tab.Scatter(mk.LKey, 0, wire(field(crc16(data), 9, 0x77)), true); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, wire(field(crc16(data), 9, 0x77))) {
		t.Fatalf("copy_mask 0x0f: memory field %x", buf[512:])
	}
}

// TestSetPSV: SET_PSV's transient signature is the domain's initial
// state: a later SET_PSV moves the first reference tag, and a CRC seed of
// 0 gives the CRC with the register from 0.
func TestSetPSV(t *testing.T) {
	r := newRig(t)
	data := pattern(1024, 0x11)
	sig := &mlx.SigBlockAttr{Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC64_XP10, ^uint64(0), mlx.MLX5DV_BLOCK_SIZE_512),
		Wire: difDomain(0, 3, 0x100, uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP), mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	buf := make([]byte, 1040)
	k := r.mem.reg(0x1000, buf, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	ws := r.build(func(q *sq.SQ) error {
		if err := q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{}); err != nil {
			return err
		}
		q.SetMkeyAccessFlags(rw)
		q.SetMkeyLayoutList([]mlx.SGE{{Addr: 0x1000, Length: 1040, LKey: k}})
		return q.SetMkeySigBlock(sig)
	})
	for _, w := range ws[:1] {
		if err := r.tab.ExecUMR(w); err != nil {
			t.Fatal(err)
		}
	}
	// The memory SET_PSV, edited to seed 0; the wire one to ref tag 0x500.
	mem, wire := ws[1], ws[2]
	(*mlx.WQESetPSVSeg)(mem[16:32]).SetTransientSignature(0)
	(*mlx.WQESetPSVSeg)(wire[16:32]).SetTransientSignature(uint64(3)<<32 | 0x500)
	for _, w := range [][]byte{mem, wire} {
		if err := r.tab.ExecSetPSV(w); err != nil {
			t.Fatal(err)
		}
	}
	xp10 := crc64.MakeTable(0x9A6C9329AC4BC9B5) // see sigblock's polyXP10 for the source
	for i := 0; i < 2; i++ {
		blk := data[i*512 : (i+1)*512]
		copy(buf[i*520:], blk)
		// Register from 0: hash/crc64 inverts on entry, so start it at all ones.
		binary.LittleEndian.PutUint64(buf[i*520+512:], crc64.Update(^uint64(0), xp10, blk))
	}
	out, err := r.tab.Gather(mk.LKey, 0, 1040, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := r.tab.SigError(mk.LKey); ok {
		t.Fatalf("CRC64_XP10 with seed 0 from the PSV: %+v", e)
	}
	for i := 0; i < 2; i++ {
		if ref := binary.BigEndian.Uint32(out[i*520+516:]); ref != 0x500+uint32(i) {
			t.Fatalf("block %d: ref tag %#x, want the PSV's 0x500 + %d", i, ref, i)
		}
	}
	// The catalogue CRC (seed all ones) now fails the check.
	binary.LittleEndian.PutUint64(buf[512:], crc64.Checksum(data[:512], xp10))
	if _, err := r.tab.Gather(mk.LKey, 0, 1040, false, nil); err != nil {
		t.Fatal(err)
	}
	if e, ok := r.tab.SigError(mk.LKey); !ok || e.Domain != mkey.DomainMemory || e.Offset != 0 {
		t.Fatalf("a seed-all-ones CRC under a seed-0 PSV: %+v %v", e, ok)
	}
}

// TestTransfersAllocateNothing: in steady state a transfer through a
// plain mkey, and one through an mkey with a signature in both domains
// and crypto, allocates nothing.
func TestTransfersAllocateNothing(t *testing.T) {
	r := newRigXTS(t, true)
	buf := make([]byte, 4*520)
	k := r.mem.reg(0x1000, buf, rw)
	plain := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	sges := []mlx.SGE{{Addr: 0x1000, Length: 2 * 520, LKey: k}, {Addr: 0x1000 + 2*520, Length: 2 * 520, LKey: k}}
	if err := r.configure(plain, rw, sges, nil, nil); err != nil {
		t.Fatal(err)
	}
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
	full := r.create(flags, 4)
	id, _ := r.tab.CreateDEK(pattern(64, 3), nil)
	sig := &mlx.SigBlockAttr{Mem: difDomain(0, 1, 2, 1, mlx.MLX5DV_BLOCK_SIZE_512), Wire: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, 0, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	cr := cryptoAttr(&sq.DEK{ObjectID: id}, true, mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_BEFORE_CRYPTO_ON_TX, mlx.MLX5DV_BLOCK_SIZE_512, 0)
	if err := r.configure(full, rw, sges, sig, cr); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 0, 4096)
	// A remote span counts wire bytes: 4 blocks of 512+4 with the CRC32C.
	for name, c := range map[string]struct{ key, n uint32 }{"plain": {plain.LKey, 4 * 520}, "signature and crypto": {full.LKey, 4 * 516}} {
		key := c.key
		run := func() {
			out, err := r.tab.Gather(key, 0, uint64(c.n), true, dst[:0])
			if err != nil {
				t.Fatal(err)
			}
			if err := r.tab.Scatter(key, 0, out, true); err != nil {
				t.Fatal(err)
			}
			r.tab.SigError(key)
		}
		run()
		if n := testing.AllocsPerRun(20, run); n != 0 && !raceEnabled {
			t.Errorf("%s: %v allocations per transfer", name, n)
		}
	}
}

// TestSigInterleaved: the interleaved example of mlx5dv_wr_mkey_configure(3)
// as it is meant, 512 data bytes in one region and an 8-byte T10-DIF field
// in another per block, under a memory-domain signature: a SEND checks
// and strips the fields kept apart from the data, a RECV generates them
// there.
func TestSigInterleaved(t *testing.T) {
	r := newRig(t)
	data := pattern(2*512, 0x6c)
	dataMR, piMR := append([]byte{}, data...), make([]byte, 16)
	for i := 0; i < 2; i++ {
		f := piMR[8*i:]
		binary.BigEndian.PutUint16(f, crc16(data[512*i:512*(i+1)]))
		binary.BigEndian.PutUint16(f[2:], 0x42)
		binary.BigEndian.PutUint32(f[4:], 10+uint32(i))
	}
	kd, kp := r.mem.reg(0x10000, dataMR, rw), r.mem.reg(0x20000, piMR, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 3)
	sig := &mlx.SigBlockAttr{Mem: difDomain(0, 0x42, 10, uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP), mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	err := r.post(func(q *sq.SQ) error {
		if err := q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{}); err != nil {
			return err
		}
		q.SetMkeyAccessFlags(rw)
		q.SetMkeyLayoutInterleaved(2, []mlx.MRInterleaved{{Addr: 0x10000, BytesCount: 512, LKey: kd}, {Addr: 0x20000, BytesCount: 8, LKey: kp}})
		return q.SetMkeySigBlock(sig)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The wire has no signature: the SGE counts the 1024 data bytes.
	wire, err := r.tab.Gather(mk.LKey, 0, 1024, false, nil)
	if err != nil || !bytes.Equal(wire, data) {
		t.Fatalf("SEND: %v", err)
	}
	if e, ok := r.tab.SigError(mk.LKey); ok {
		t.Fatalf("fields kept apart failed their check: %+v", e)
	}
	want := append([]byte{}, piMR...)
	clear(piMR)
	clear(dataMR)
	if err := r.tab.Scatter(mk.LKey, 0, data, false); err != nil || !bytes.Equal(dataMR, data) || !bytes.Equal(piMR, want) {
		t.Fatalf("RECV: %v, fields %x, want %x", err, piMR, want)
	}
}

// TestTagUpdate: an mkey created with UPDATE_TAG takes the tag of the
// lkey it is configured with; the old key is stale.
func TestTagUpdate(t *testing.T) {
	r := newRig(t)
	buf := make([]byte, 64)
	k := r.mem.reg(0x1000, buf, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG, 1)
	old := mk.LKey
	mk.LKey |= 0x5a
	if err := r.configure(mk, rw, []mlx.SGE{{Addr: 0x1000, Length: 64, LKey: k}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !r.tab.Is(mk.LKey) || r.tab.Is(old) {
		t.Fatalf("after the tag update: Is(new) %v, Is(old) %v", r.tab.Is(mk.LKey), r.tab.Is(old))
	}
	if _, err := r.tab.Gather(old, 0, 1, false, nil); err == nil {
		t.Fatal("the old tag still works")
	}
	if _, err := r.tab.Gather(mk.LKey, 0, 64, false, nil); err != nil {
		t.Fatal(err)
	}
}
