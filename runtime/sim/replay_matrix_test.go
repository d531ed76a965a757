package sim_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// mxDomain is a signature domain of the matrix and how it lays 4096 data
// bytes out (nil domain: no signature).
type mxDomain struct {
	name   string
	domain func() *mlx.SigBlockDomain
	bs, pi int
	field  func(blk []byte, i int) []byte
}

func mxDomains() []mxDomain {
	return []mxDomain{
		{name: "none"},
		{name: "t10dif512", bs: 512, pi: 8,
			domain: func() *mlx.SigBlockDomain {
				d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
				d.SetSigDif(&mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, AppTag: 0x42, RefTag: 7, Flags: uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP)})
				return d
			},
			field: func(blk []byte, i int) []byte { return dif(crc16T10(0, blk), 0x42, 7+uint32(i)) }},
		{name: "crc32c4096", bs: 4096, pi: 4, domain: crc32cDomain,
			field: func(blk []byte, _ int) []byte { return crcLE(crc32.Checksum(blk, castagnoli)) }},
		{name: "crc32-512", bs: 512, pi: 4,
			domain: func() *mlx.SigBlockDomain {
				d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
				d.SetSigCRC(&mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32, Seed: 0xffffffff})
				return d
			},
			field: func(blk []byte, _ int) []byte { return binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(blk)) }},
	}
}

// layout lays data out in d's format.
func (d mxDomain) layout(data []byte) []byte {
	if d.domain == nil {
		return append([]byte(nil), data...)
	}
	var out []byte
	for i := 0; i < len(data)/d.bs; i++ {
		blk := data[i*d.bs : (i+1)*d.bs]
		out = append(append(out, blk...), d.field(blk, i)...)
	}
	return out
}

// TestReplayLengthMatrix runs every operation through a signature mkey
// in every combination of memory and wire domains (none, T10-DIF every
// 512 bytes, CRC32C every 4096, CRC32 every 512): an RDMA READ and an
// RDMA WRITE from the peer name it with wire addresses and lengths; a
// SEND, a RECV and an RDMA READ through it name it with a local SGE that
// counts memory bytes when the wire has a signature and data bytes when
// it has none. Each moves 4096 data bytes, the wire carrying the wire
// domain's fields and the memory the memory domain's, without a
// signature error.
func TestReplayLengthMatrix(t *testing.T) {
	data := rpPattern(4096, 0x5e)
	for _, mem := range mxDomains() {
		for _, wire := range mxDomains() {
			t.Run(mem.name+"-"+wire.name, func(t *testing.T) { mxRun(t, data, mem, wire) })
		}
	}
}

func mxRun(t *testing.T, data []byte, mem, wire mxDomain) {
	r := newRPRig(t)
	memBytes, wireBytes := mem.layout(data), wire.layout(data)
	local := uint32(len(memBytes)) // a local SGE: memory bytes when the wire has a signature
	if wire.domain == nil {
		local = uint32(len(data))
	}
	W := uint32(len(wireBytes))
	bm, peer := r.mr(len(memBytes), 0), r.mr(len(wireBytes), 0)
	mk := r.sigMkey(4)
	var attr *mlx.SigBlockAttr
	if mem.domain != nil || wire.domain != nil {
		attr = &mlx.SigBlockAttr{CheckMask: 0xff}
		if mem.domain != nil {
			attr.Mem = mem.domain()
		}
		if wire.domain != nil {
			attr.Wire = wire.domain()
		}
	}
	r.configure(false, mk, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE, listOf(bm, uint32(len(memBytes))), attr)
	step := func(what string, wc cq.WC, got, want []byte) {
		t.Helper()
		if wc.Status != cq.Success || !bytes.Equal(got, want) {
			t.Fatalf("%s: %+v, bytes equal %v", what, wc, bytes.Equal(got, want))
		}
		r.drain(true)
		r.drain(false)
		if attr != nil {
			r.check(what, mk, cq.MkeyErr{})
		}
	}
	// Peer's RDMA READ (responder side) and RDMA WRITE (target side).
	copy(bm.Bytes(), memBytes)
	wc := r.post(true, func(q *sq.SQ) error { q.RDMARead(mk.LKey(), 0); return q.SetSGE(peer.LKey, peer.Addr, W) })
	step("remote READ", wc, peer.Bytes(), wireBytes)
	clear(bm.Bytes())
	wc = r.post(true, func(q *sq.SQ) error { q.RDMAWrite(mk.LKey(), 0); return q.SetSGE(peer.LKey, peer.Addr, W) })
	step("remote WRITE", wc, bm.Bytes(), memBytes)
	// SEND from the mkey to the peer's receive.
	clear(peer.Bytes())
	r.recv(true, mlx.SGE{Addr: peer.Addr, Length: W, LKey: peer.LKey})
	wc = r.post(false, func(q *sq.SQ) error { q.Send(); return q.SetSGE(mk.LKey(), 0, local) })
	if recv := devicetest.PollOne(t, r.cqA); recv.Status != cq.Success || recv.ByteLen != W {
		t.Fatalf("receive of the SEND: %+v, want %d wire bytes", recv, W)
	}
	step("SEND", wc, peer.Bytes(), wireBytes)
	// RECV into the mkey.
	clear(bm.Bytes())
	r.recv(false, mlx.SGE{Length: local, LKey: mk.LKey()})
	if wc := r.post(true, func(q *sq.SQ) error { q.Send(); return q.SetSGE(peer.LKey, peer.Addr, W) }); wc.Status != cq.Success {
		t.Fatalf("SEND to the mkey: %+v", wc)
	}
	wc = devicetest.PollOne(t, r.cqB)
	if wc.ByteLen != W {
		t.Fatalf("RECV: byte_len %d, want %d", wc.ByteLen, W)
	}
	step("RECV", wc, bm.Bytes(), memBytes)
	// RDMA READ into the mkey.
	clear(bm.Bytes())
	wc = r.post(false, func(q *sq.SQ) error { q.RDMARead(peer.RKey, peer.Addr); return q.SetSGE(mk.LKey(), 0, local) })
	if wc.ByteLen != W {
		t.Fatalf("local READ: byte_len %d, want %d", wc.ByteLen, W)
	}
	step("local READ", wc, bm.Bytes(), memBytes)
}
