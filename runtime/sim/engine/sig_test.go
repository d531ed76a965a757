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
// the receiver gets the data alone. With a CRC corrupted the SEND still
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
			q.SetMkeyLayoutList([]mlx.SGE{{Addr: a.addr(0), Length: memLen, Lkey: a.key}}), q.SetMkeySigBlock(sig))
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
		mem = binary.BigEndian.AppendUint32(mem, crc32.ChecksumIEEE(data[i:i+512]))
	}
	send := func(id uint64) {
		b.r.Post(id, []rq.Sge{{Addr: b.addr(0), Length: 4096, Lkey: b.key}})
		a.post(id, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.Send(); return q.SetSGE(key, 0, memLen) })
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
		e.Actual != uint64(want) || e.Expected != uint64(want^0x80000000) {
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
