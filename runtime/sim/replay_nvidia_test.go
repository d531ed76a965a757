package sim_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// NVIDIA's signature offload sample, Mellanox/hw_offload_api_examples
// dv_signature_offload_api_example/sig_example.c (a client and a server
// over rdma_cm on ConnectX hardware), with its defaults: 8 blocks of 512
// bytes. The client's mkey INSERTs (no memory signature, the signature on
// the wire, a list over its bs*nb data bytes); the server's CHECKs (the
// signature in both domains, over (bs+pi)*nb bytes: one buffer with the
// fields interleaved, or a data and a PI buffer through an interleaved
// layout). "Write": the server RDMA-READs (bs+pi)*nb bytes ("length is
// calculated according to wire domain") through its mkey from address 0
// of the client's. "Read": both mkeys CHECK, the server corrupts one byte
// of its memory (its -o option) and RDMA-WRITEs (bs+pi)*nb bytes through
// its mkey to address 0 of the client's; mlx5dv_mkey_check on the
// server's mkey reports the corrupted block, and so does the client's,
// whose wire check sees the field the server copied to the wire. The sample only prints the
// PI (CRCs through ntohl); the byte order asserted here is the one the
// ConnectX-6 Dx programs of changchengx/irdma show (replay_crc32c_test.go).

const (
	nvBS = 512
	nvNB = 8
)

type nvSig struct {
	name   string
	pi     int
	domain func() *mlx.SigBlockDomain
	mask   uint8
	field  func(blk []byte, i int) []byte // the field the device generates for block i
}

func nvSigs() []nvSig {
	crc := func(t mlx.SigCRCType, tab *crc32.Table) nvSig {
		return nvSig{pi: 4, mask: uint8(mlx.MLX5DV_SIG_MASK_CRC32),
			domain: func() *mlx.SigBlockDomain {
				d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
				d.SetSigCRC(&mlx.SigCRC{Type: t, Seed: 0xffffffff})
				return d
			},
			field: func(blk []byte, _ int) []byte { return crcLE(crc32.Checksum(blk, tab)) }}
	}
	t10 := func(flags mlx.SigT10DIFFlags, remap bool) nvSig {
		return nvSig{pi: 8, mask: 0xff,
			domain: func() *mlx.SigBlockDomain {
				d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
				d.SetSigDif(&mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, BG: 0xffff, AppTag: 0x5678, RefTag: 0xabcdef90, Flags: uint16(flags)})
				return d
			},
			field: func(blk []byte, i int) []byte {
				ref := uint32(0xabcdef90)
				if remap {
					ref += uint32(i)
				}
				return dif(crc16T10(0xffff, blk), 0x5678, ref)
			}}
	}
	s := []nvSig{crc(mlx.MLX5DV_SIG_CRC_TYPE_CRC32, crc32.IEEETable), crc(mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, castagnoli),
		t10(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP|mlx.MLX5DV_SIG_T10DIF_FLAG_APP_ESCAPE, true),
		t10(mlx.MLX5DV_SIG_T10DIF_FLAG_APP_REF_ESCAPE, false)}
	s[0].name, s[1].name, s[2].name, s[3].name = "crc32", "crc32c", "t10dif-type1", "t10dif-type3"
	return s
}

// nvSide is one program's buffers: data (and pi, without interleave).
type nvSide struct {
	data, pi *device.MR
	mk       *device.Mkey
}

// protected returns the side's memory as blocks with their fields.
func (s *nvSide) protected(sg nvSig) []byte {
	if s.pi == nil {
		return s.data.Bytes()
	}
	var out []byte
	for i := range nvNB {
		out = append(out, s.data.Bytes()[i*nvBS:(i+1)*nvBS]...)
		out = append(out, s.pi.Bytes()[i*sg.pi:(i+1)*sg.pi]...)
	}
	return out
}

// checkLayout is the sample's CHECK-mode layout: a list over the whole
// interleaved buffer, or data and PI interleaved by the device.
func (s *nvSide) checkLayout(sg nvSig) func(*sq.SQ) error {
	if s.pi == nil {
		return listOf(s.data, uint32(s.data.Len()))
	}
	return func(q *sq.SQ) error {
		return q.SetMkeyLayoutInterleaved(nvNB, []mlx.MRInterleaved{{Addr: s.data.Addr, BytesCount: nvBS, LKey: s.data.LKey},
			{Addr: s.pi.Addr, BytesCount: uint32(sg.pi), LKey: s.pi.LKey}})
	}
}

func nvNewSide(r *rpRig, sg nvSig, interleave bool) *nvSide {
	s := &nvSide{mk: r.sigMkey(4)}
	if interleave {
		s.data = r.mr((nvBS+sg.pi)*nvNB, 1)
	} else {
		s.data, s.pi = r.mr(nvBS*nvNB, 1), r.mr(sg.pi*nvNB, 1)
	}
	return s
}

// TestReplayNVIDIASigExample runs the sample's write and read for every
// signature type it has (type 2 is configured as type 1), with and
// without interleave, corrupting a data byte of block 3 (BAD_GUARD) and,
// for T10-DIF, a byte of block 3's application tag (type 1) or reference
// tag (type 3).
func TestReplayNVIDIASigExample(t *testing.T) {
	for _, sg := range nvSigs() {
		for _, interleave := range []bool{true, false} {
			stride := nvBS + sg.pi
			corrupt := []int{3*stride + 100}
			switch sg.name {
			case "t10dif-type1":
				corrupt = append(corrupt, 3*stride+nvBS+2)
			case "t10dif-type3":
				corrupt = append(corrupt, 3*stride+nvBS+4)
			}
			for _, at := range corrupt {
				t.Run(fmt.Sprintf("%s-interleave-%v-corrupt-%d", sg.name, interleave, at), func(t *testing.T) {
					nvRun(t, sg, interleave, at)
				})
			}
		}
	}
}

func nvRun(t *testing.T, sg nvSig, interleave bool, corruptAt int) {
	r := newRPRig(t)
	client, server := nvNewSide(r, sg, interleave), nvNewSide(r, sg, interleave)
	data := rpPattern(nvBS*nvNB, byte(sg.pi))
	copy(client.data.Bytes(), data)
	rw := mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_WRITE
	insert := &mlx.SigBlockAttr{Wire: sg.domain(), CheckMask: sg.mask}
	check := &mlx.SigBlockAttr{Mem: sg.domain(), Wire: sg.domain(), CheckMask: sg.mask}
	wireLen := uint32((nvBS + sg.pi) * nvNB)

	// Write: the client INSERTs, the server READs through its CHECK mkey.
	r.configure(true, client.mk, rw, listOf(client.data, nvBS*nvNB), insert)
	r.configure(false, server.mk, rw, server.checkLayout(sg), check)
	wc := r.post(false, func(q *sq.SQ) error { q.RDMARead(client.mk.LKey(), 0); return q.SetSGE(server.mk.LKey(), 0, wireLen) })
	if wc.Status != cq.Success || wc.ByteLen != wireLen {
		t.Fatalf("server READ: %+v", wc)
	}
	var want []byte
	for i := range nvNB {
		blk := data[i*nvBS : (i+1)*nvBS]
		want = append(append(want, blk...), sg.field(blk, i)...)
	}
	if got := server.protected(sg); !bytes.Equal(got, want) {
		t.Fatalf("server memory after the READ: block 0 field % x, want % x", got[nvBS:nvBS+sg.pi], want[nvBS:nvBS+sg.pi])
	}
	r.check("server after the write", server.mk, cq.MkeyErr{})
	r.drain(true)
	r.check("client after the write", client.mk, cq.MkeyErr{})

	// Read: both mkeys invalidated and CHECK again; a corrupted byte.
	for _, side := range []struct {
		a bool
		s *nvSide
	}{{true, client}, {false, server}} {
		if wc := r.post(side.a, func(q *sq.SQ) error { return q.LocalInv(side.s.mk.LKey()) }); wc.Status != cq.Success {
			t.Fatalf("local invalidate: %+v", wc)
		}
		r.configure(side.a, side.s.mk, rw, side.s.checkLayout(sg), check)
	}
	nvCorrupt(server, sg, corruptAt)
	sent := server.protected(sg)
	wc = r.post(false, func(q *sq.SQ) error { q.RDMAWrite(client.mk.LKey(), 0); return q.SetSGE(server.mk.LKey(), 0, wireLen) })
	if wc.Status != cq.Success {
		t.Fatalf("server WRITE: %+v", wc)
	}
	wantErr := nvWantErr(sg, want, sent, corruptAt)
	r.check("server after the read", server.mk, wantErr)
	// The client's wire check sees the same block: with the same
	// signature type in both domains the server copied its memory field
	// to the wire (the man page's automatic copy_mask), so the stale
	// guard, or the corrupted tag, travels, fails the client's check at
	// the same offset and lands in the client's memory.
	r.drain(true)
	r.check("client after the read", client.mk, wantErr)
	if !bytes.Equal(client.protected(sg), sent) {
		t.Fatal("client memory after the read is not the server's bytes, fields copied")
	}
}

// nvCorrupt flips the byte at offset at of the server's protected view,
// as the sample's find_corrupt_pos maps it to its buffers.
func nvCorrupt(s *nvSide, sg nvSig, at int) {
	stride := nvBS + sg.pi
	switch {
	case s.pi == nil:
		s.data.Bytes()[at] ^= 0xff
	case at%stride < nvBS:
		s.data.Bytes()[at/stride*nvBS+at%stride] ^= 0xff
	default:
		s.pi.Bytes()[at/stride*sg.pi+at%stride-nvBS] ^= 0xff
	}
}

// nvWantErr is what mlx5dv_mkey_check reports on the server's mkey: the
// corrupted block's failed part (libmlx5's order), its offset in the
// checked memory domain, blocks counted with their fields.
func nvWantErr(sg nvSig, good, sent []byte, at int) cq.MkeyErr {
	stride := nvBS + sg.pi
	b := at / stride
	blk, field := sent[b*stride:b*stride+nvBS], sent[b*stride+nvBS:(b+1)*stride]
	e := cq.MkeyErr{Offset: uint64(b * stride), Type: mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD}
	switch {
	case sg.pi == 4:
		e.Expected = uint64(binary.LittleEndian.Uint32(field))
		e.Actual = uint64(binary.LittleEndian.Uint32(sg.field(blk, b)))
	case at%stride < nvBS:
		e.Expected = uint64(binary.BigEndian.Uint16(field))
		e.Actual = uint64(crc16T10(0xffff, blk))
	case at%stride < nvBS+4:
		e.Type, e.Expected, e.Actual = mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG, 0x5678, uint64(binary.BigEndian.Uint16(field[2:]))
	default:
		e.Type = mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG
		e.Expected, e.Actual = uint64(binary.BigEndian.Uint32(good[b*stride+nvBS+4:])), uint64(binary.BigEndian.Uint32(field[4:]))
	}
	return e
}
