package engine_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestSignatureSend is mlx5dv_wr_set_mkey_sig_block(3) Example 1 run by
// the engine: a UMR work request (runtime/sq's mkey configure) gives an
// indirect mkey a list layout over an MR and CRC32 every 512 bytes in the
// memory domain; a SEND through the mkey checks and strips the CRCs, so
// the receiver gets the data alone. The SEND's SGE counts the 2048 data
// bytes, as the wire domain has no signature (rdma-core
// tests/test_mlx5_mkey.py test_mkey_sig_err). With a CRC corrupted the SEND still
// transfers, and the engine writes a signature-error CQE that the poller
// records on the mkey, where the mkey check reports the block.
func TestSignatureSend(t *testing.T) {
	f, a, b := pair(t, defaults)
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	f.Lock()
	key, err := a.d.Mkeys().Create(a.pd, flags, 4)
	memPSV, wirePSV, err2 := a.d.Mkeys().PSVs(key)
	f.Unlock()
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	mk := sq.NewMkey(key, flags, 4)
	mk.MemPSV, mk.WirePSV = memPSV, wirePSV
	sig := &mlx.SigBlockAttr{Mem: &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}, CheckMask: 0xf0}
	sig.Mem.SetSigCRC(&mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32, Seed: 0xffffffff})
	const memLen = 4 * 516
	a.post(1, mlx.IBV_SEND_SIGNALED|mlx.IBV_SEND_INLINE, func(q *sq.SQ) error {
		return firstErr(q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{}), q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE),
			q.SetMkeyLayoutList([]mlx.SGE{{Addr: a.addr(0), Length: memLen, LKey: a.key}}), q.SetMkeySigBlock(sig))
	})
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success || wc[0].Opcode != mlx.IBV_WC_DRIVER1 {
		t.Fatalf("mkey configure: %+v", wc)
	}
	m := &cq.Mkey{Mem: cq.SigCRC32}
	if err := a.c.AddMkey(key>>8, m); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 2048)
	for i := range data {
		data[i] = byte(i * 7)
	}
	mem := a.data.Bytes[:0]
	for i := 0; i < len(data); i += 512 {
		mem = append(mem, data[i:i+512]...)
		mem = binary.LittleEndian.AppendUint32(mem, crc32.ChecksumIEEE(data[i:i+512]))
	}
	send := func(id uint64) {
		b.r.Post(id, []rq.SGE{{Addr: b.addr(0), Length: 4096, LKey: b.key}})
		a.post(id, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.Send(); return q.SetSGE(key, 0, uint32(len(data))) })
		f.Drain(10)
		if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success || wc[0].WRID != id {
			t.Fatalf("send %d: %+v", id, wc)
		}
		if wc := b.poll(); len(wc) != 1 || wc[0].ByteLen != 2048 || !bytes.Equal(b.data.Bytes[:2048], data) {
			t.Fatalf("receive %d: %+v", id, wc)
		}
	}
	send(2)
	if e, _ := m.Check(); e.Type != mlx.MLX5DV_MKEY_NO_ERR {
		t.Fatalf("a clean send reported %+v", e)
	}
	a.data.Bytes[2*516+512] ^= 0x80 // block 2's CRC
	send(3)
	e, err := m.Check()
	want := crc32.ChecksumIEEE(data[1024:1536])
	if err != nil || e.Type != mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD || e.Offset != 2*516 ||
		e.Actual != uint64(want) || e.Expected != uint64(want^0x80) {
		t.Fatalf("mkey check: %+v, %v", e, err)
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// TestSignatureRemote is Examples 2 and 2.1 run by the engine: b's
// indirect mkey carries T10-DIF every 4 KiB in the wire domain over plain
// data; a's RDMA READ through it (an rkey) gets the data with generated
// DIF fields, a's RDMA WRITE of the same wire bytes is checked and
// stripped into b's memory, and a corrupted application tag is written
// anyway and reported by a signature-error CQE on b's CQ.
func TestSignatureRemote(t *testing.T) {
	f, a, b := pair(t, defaults)
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	f.Lock()
	key, err := b.d.Mkeys().Create(b.pd, flags, 4)
	memPSV, wirePSV, err2 := b.d.Mkeys().PSVs(key)
	f.Unlock()
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	mk := sq.NewMkey(key, flags, 4)
	mk.MemPSV, mk.WirePSV = memPSV, wirePSV
	const app, ref = 0x1234, 0x100
	wire := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_4096}
	wire.SetSigDif(&mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, AppTag: app, RefTag: ref, Flags: uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP)})
	b.post(1, mlx.IBV_SEND_SIGNALED|mlx.IBV_SEND_INLINE, func(q *sq.SQ) error {
		return firstErr(q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{}),
			q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE),
			q.SetMkeyLayoutList([]mlx.SGE{{Addr: b.addr(0), Length: 2 * 4096, LKey: b.key}}),
			q.SetMkeySigBlock(&mlx.SigBlockAttr{Wire: wire, CheckMask: 0xff}))
	})
	f.Drain(10)
	if wc := b.poll(); len(wc) != 1 || wc[0].Status != cq.Success {
		t.Fatalf("mkey configure: %+v", wc)
	}
	m := &cq.Mkey{Wire: cq.SigT10DIF}
	if err := b.c.AddMkey(key>>8, m); err != nil {
		t.Fatal(err)
	}
	for i := range 2 * 4096 {
		b.data.Bytes[i] = byte(i*13) ^ 0x21
	}
	data := append([]byte(nil), b.data.Bytes[:2*4096]...)
	const wireLen = 2 * 4104
	a.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMARead(key, 0); return q.SetSGE(a.key, a.addr(0), wireLen) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success || wc[0].ByteLen != wireLen {
		t.Fatalf("read: %+v", wc)
	}
	got := a.data.Bytes[:wireLen]
	for blk := range 2 {
		d, tuple := got[blk*4104:blk*4104+4096], got[blk*4104+4096:(blk+1)*4104]
		if !bytes.Equal(d, data[blk*4096:(blk+1)*4096]) || binary.BigEndian.Uint16(tuple[2:]) != app ||
			binary.BigEndian.Uint32(tuple[4:]) != ref+uint32(blk) {
			t.Fatalf("block %d: data or DIF tuple % x wrong", blk, tuple)
		}
	}
	clear(b.data.Bytes[:2*4096])
	got[4104+4096+3] ^= 1 // block 1's application tag
	a.post(3, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMAWrite(key, 0); return q.SetSGE(a.key, a.addr(0), wireLen) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success {
		t.Fatalf("write: %+v", wc)
	}
	if !bytes.Equal(b.data.Bytes[:2*4096], data) {
		t.Fatal("the write did not strip the DIF into b's memory")
	}
	if wc := b.poll(); len(wc) != 0 {
		t.Fatalf("b got completions %+v", wc)
	}
	e, err := m.Check()
	if err != nil || e.Type != mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG || e.Expected != app || e.Actual != app^1 || e.Offset != 4104 {
		t.Fatalf("mkey check: %+v, %v", e, err)
	}
}

// TestMkeyOtherPD: a QP cannot configure, nor move data through, an
// indirect mkey of another protection domain.
func TestMkeyOtherPD(t *testing.T) {
	f, a, _ := pair(t, defaults)
	pd2, _ := a.d.AllocPD()
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
	f.Lock()
	key, err := a.d.Mkeys().Create(pd2, flags, 4)
	f.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	a.post(1, mlx.IBV_SEND_SIGNALED|mlx.IBV_SEND_INLINE, func(q *sq.SQ) error {
		return q.MRList(sq.NewMkey(key, flags, 4), mlx.IBV_ACCESS_LOCAL_WRITE, []mlx.SGE{{Addr: a.addr(0), Length: 64, LKey: a.key}})
	})
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.LocProtErr {
		t.Fatalf("UMR of another PD's mkey: %+v", wc)
	}
}

// TestRecvThroughMkey: a receive whose SGE is an indirect mkey gets the
// message and nothing more: the bytes of the SGE past the message keep
// what they held.
func TestRecvThroughMkey(t *testing.T) {
	f, a, b := pair(t, defaults)
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
	f.Lock()
	key, err := b.d.Mkeys().Create(b.pd, flags, 4)
	f.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	b.post(1, mlx.IBV_SEND_INLINE, func(q *sq.SQ) error {
		return q.MRList(sq.NewMkey(key, flags, 4), mlx.IBV_ACCESS_LOCAL_WRITE, []mlx.SGE{{Addr: b.addr(0), Length: 256, LKey: b.key}})
	})
	f.Drain(10)
	for i := range 256 {
		b.data.Bytes[i] = 0xee
	}
	b.r.Post(2, []rq.SGE{{Addr: 0, Length: 256, LKey: key}})
	copy(a.data.Bytes, "8 bytes!")
	a.post(3, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.Send(); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Drain(10)
	if wc := b.poll(); len(wc) != 1 || wc[0].Status != cq.Success || wc[0].ByteLen != 8 {
		t.Fatalf("receive %+v", wc)
	}
	if string(b.data.Bytes[:8]) != "8 bytes!" || !bytes.Equal(b.data.Bytes[8:256], bytes.Repeat([]byte{0xee}, 248)) {
		t.Fatalf("memory behind the mkey: %q", b.data.Bytes[:16])
	}
}

// TestMkeyConfigureExample is mlx5dv_wr_mkey_configure(3)'s example run
// by the engine: b configures an indirect mkey with a list layout over two
// separate buffers and remote access, and a reaches them as one range
// through the mkey's rkey, with an RDMA WRITE and an RDMA READ.
func TestMkeyConfigureExample(t *testing.T) {
	f, a, b := pair(t, defaults)
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
	f.Lock()
	key, err := b.d.Mkeys().Create(b.pd, flags, 2)
	f.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	mk := sq.NewMkey(key, flags, 2)
	b.post(1, mlx.IBV_SEND_SIGNALED|mlx.IBV_SEND_INLINE, func(q *sq.SQ) error {
		return firstErr(q.MkeyConfigure(mk, 2, &mlx.MkeyConfAttr{}),
			q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE),
			q.SetMkeyLayoutList([]mlx.SGE{{Addr: b.addr(1000), Length: 10, LKey: b.key}, {Addr: b.addr(5000), Length: 20, LKey: b.key}}))
	})
	f.Drain(10)
	if wc := b.poll(); len(wc) != 1 || wc[0].Status != cq.Success || wc[0].Opcode != mlx.IBV_WC_DRIVER1 {
		t.Fatalf("mkey configure: %+v", wc)
	}
	copy(a.data.Bytes, "0123456789abcdefghijABCDEFGHIJ")
	a.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMAWrite(key, 0); return q.SetSGE(a.key, a.addr(0), 30) })
	a.post(3, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMARead(key, 5); return q.SetSGE(a.key, a.addr(100), 10) })
	a.post(4, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMAWrite(key, 25); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Drain(10)
	wc := a.poll()
	if len(wc) != 3 || wc[0].Status != cq.Success || wc[1].Status != cq.Success || wc[1].ByteLen != 10 || wc[2].Status != cq.RemAccessErr {
		t.Fatalf("%+v", wc)
	}
	if string(b.data.Bytes[1000:1010]) != "0123456789" || string(b.data.Bytes[5000:5020]) != "abcdefghijABCDEFGHIJ" {
		t.Fatalf("b's buffers: %q %q", b.data.Bytes[1000:1010], b.data.Bytes[5000:5020])
	}
	if string(a.data.Bytes[100:110]) != "56789abcde" {
		t.Fatalf("read across the two buffers: %q", a.data.Bytes[100:110])
	}
}
