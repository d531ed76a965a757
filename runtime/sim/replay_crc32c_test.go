package sim_test

import (
	"bytes"
	"hash/crc32"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// crc32cDomain is the CRC32C domain both changchengx/irdma programs set:
// seed 0xffffffff, 4096-byte blocks.
func crc32cDomain() *mlx.SigBlockDomain {
	d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_4096}
	d.SetSigCRC(&mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, Seed: 0xffffffff})
	return d
}

// interleaved4100 is the programs' requester layout: 4096 data bytes in
// one MR and the 4-byte CRC in another, once.
func interleaved4100(data, pi uint32, dataAddr, piAddr uint64) func(*sq.SQ) error {
	return func(q *sq.SQ) error {
		return q.SetMkeyLayoutInterleaved(1, []mlx.MRInterleaved{
			{Addr: dataAddr, BytesCount: 4096, LKey: data}, {Addr: piAddr, BytesCount: 4, LKey: pi}})
	}
}

// TestReplayReadCRC32CReqCheck replays changchengx/irdma
// crc32c/rdma_read_crc32c_reqck.c (run on an mlx5 RoCE port, its header
// shows mlx5_0): the responder's mkey is a list over 4096 random bytes
// with CRC32C in the wire domain only; the requester's mkey interleaves
// a 4096-byte data MR and a 4-byte PI MR with CRC32C in both domains; an
// RDMA READ of SGE (0, 4096+4) through the requester's mkey ("4096 + 4
// here because it's attached with wire domain") from address 0 of the
// responder's mkey completes, and the program compares the PI read as a
// native uint32_t on x86 with its software CRC-32C: the field is the CRC
// little-endian.
func TestReplayReadCRC32CReqCheck(t *testing.T) {
	r := newRPRig(t)
	src := r.mr(4096, 0)
	copy(src.Bytes(), rpPattern(4096, 0x3c))
	resp := r.sigMkey(4)
	r.configure(false, resp, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE,
		func(q *sq.SQ) error {
			return q.SetMkeyLayoutList([]mlx.SGE{{Addr: src.Addr, Length: 4096, LKey: src.LKey}})
		},
		&mlx.SigBlockAttr{Wire: crc32cDomain(), CheckMask: uint8(mlx.MLX5DV_SIG_MASK_CRC32C)})

	data, pi := r.mr(4096, 0), r.mr(4, 0)
	req := r.sigMkey(4)
	r.configure(true, req, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE,
		interleaved4100(data.LKey, pi.LKey, data.Addr, pi.Addr),
		&mlx.SigBlockAttr{Mem: crc32cDomain(), Wire: crc32cDomain(), CheckMask: uint8(mlx.MLX5DV_SIG_MASK_CRC32C)})

	wc := r.post(true, func(q *sq.SQ) error { q.RDMARead(resp.LKey(), 0); return q.SetSGE(req.LKey(), 0, 4096+4) })
	if wc.Status != cq.Success || wc.Opcode != mlx.IBV_WC_RDMA_READ || wc.ByteLen != 4100 {
		t.Fatalf("RDMA READ: %+v, want success with 4100 wire bytes", wc)
	}
	sum := crc32.Checksum(src.Bytes(), castagnoli)
	if !bytes.Equal(data.Bytes(), src.Bytes()) || !bytes.Equal(pi.Bytes(), crcLE(sum)) {
		t.Fatalf("PI % x, want the CRC-32C %#x little-endian; data copied: %v", pi.Bytes(), sum, bytes.Equal(data.Bytes(), src.Bytes()))
	}
	r.check("requester", req, cq.MkeyErr{})
	r.check("responder", resp, cq.MkeyErr{})
}

// TestReplayCheckRDMACRC32C replays changchengx/irdma
// crc32c/check_rdma_crc32c.c, run on a ConnectX-6 Dx (mlx5_4, its
// header's mst status): the mkey interleaves a 4096-byte data MR and a
// 4-byte PI MR with CRC32C (seed 0xffffffff) in the memory domain and
// none on the wire; an RDMA READ with a 20-byte header SGE and an SGE
// (0, 4096) through the mkey ("do not use 4096 + 4": the wire has no
// signature, so the SGE counts data bytes) reads 20 'b' and 4096 'a'
// bytes, and the program prints success when the PI read as a native
// uint32_t is 0x26c74ca2, python's crc32c(b"a" * 4096): the bytes a2 4c
// c7 26. The same READ with an SGE of 4096+4 is not whole data blocks: a
// local length error.
func TestReplayCheckRDMACRC32C(t *testing.T) {
	for _, c := range []struct {
		sge  uint32
		want cq.Status
	}{{4096, cq.Success}, {4096 + 4, cq.LocLenErr}} {
		r := newRPRig(t)
		src := r.mr(20+4096+4, 'a')
		copy(src.Bytes(), bytes.Repeat([]byte{'b'}, 20))
		data, pi, header := r.mr(4096, 'a'), r.mr(4, 0xee), r.mr(20, 'c')
		mk := r.sigMkey(4)
		r.configure(true, mk, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE,
			interleaved4100(data.LKey, pi.LKey, data.Addr, pi.Addr),
			&mlx.SigBlockAttr{Mem: crc32cDomain(), CheckMask: uint8(mlx.MLX5DV_SIG_MASK_CRC32C)})
		wc := r.post(true, func(q *sq.SQ) error {
			q.RDMARead(src.RKey, src.Addr)
			return q.SetSGEList([]mlx.SGE{{Addr: header.Addr, Length: 20, LKey: header.LKey}, {Addr: 0, Length: c.sge, LKey: mk.LKey()}})
		})
		if wc.Status != c.want {
			t.Fatalf("SGE %d through the mkey: %+v, want %v", c.sge, wc, c.want)
		}
		if c.want != cq.Success {
			continue
		}
		if wc.ByteLen != 20+4096 || !bytes.Equal(header.Bytes(), bytes.Repeat([]byte{'b'}, 20)) {
			t.Fatalf("READ %+v, header %q", wc, header.Bytes())
		}
		if want := []byte{0xa2, 0x4c, 0xc7, 0x26}; !bytes.Equal(pi.Bytes(), want) {
			t.Fatalf("PI % x, want % x (0x26c74ca2 as a little-endian uint32_t)", pi.Bytes(), want)
		}
		r.check("mkey", mk, cq.MkeyErr{})
	}
}
