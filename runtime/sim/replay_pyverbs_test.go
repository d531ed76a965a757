package sim_test

import (
	"bytes"
	"hash/crc32"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// The rdma-core pyverbs tests of signature mkeys, tests/test_mlx5_mkey.py
// (NVIDIA's, run on ConnectX hardware by rdma-core's CI): each player's
// MR is msg_size (1024) bytes, the client's filled with 'c' and the
// server's with 's'; the mkeys are lists over the first bytes of the MRs;
// the client SENDs through its mkey with SGE (0, 512) into a receive
// SGE (0, 512) through the server's, and the server's MR must then be
// 'c'*512 followed by 's'*512.

const pyMsgSize = 1024

// pySendRecv runs the test's traffic once: it returns the client's send
// and the server's receive completions.
func pySendRecv(r *rpRig, client, server *mlx.SGE) (cq.WC, cq.WC) {
	r.t.Helper()
	r.recv(false, *server)
	send := r.post(true, func(q *sq.SQ) error { q.Send(); return q.SetSGE(client.LKey, client.Addr, client.Length) })
	_, c := r.side(false)
	return send, devicetest.PollOne(r.t, c)
}

// TestReplayPyverbsSigWire replays test_mkey_sig_t10dif and
// test_mkey_sig_crc: both mkeys have no memory signature and T10-DIF
// (CRC guard, bg 0xffff, app tag 0xabcd, ref tag 0x01234567, REF_REMAP)
// or CRC32 (seed 0xffffffff) every 512 bytes on the wire, over 512 bytes
// of the MRs; the SGEs count memory bytes (the wire carries a
// signature), 512 on each side, and the receiver's memory gets the 512
// data bytes. The receive's byte_len is the 520 or 516 wire bytes (the
// simulator's choice; the test does not look at it).
func TestReplayPyverbsSigWire(t *testing.T) {
	t10 := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	t10.SetSigDif(&mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, BG: 0xffff, AppTag: 0xabcd, RefTag: 0x01234567,
		Flags: uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP)})
	crc := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	crc.SetSigCRC(&mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32, Seed: 0xffffffff})
	for _, c := range []struct {
		name string
		attr *mlx.SigBlockAttr
		wire uint32
	}{
		{"t10dif", &mlx.SigBlockAttr{Wire: t10, CheckMask: 0xff}, 520},
		{"crc", &mlx.SigBlockAttr{Wire: crc, CheckMask: uint8(mlx.MLX5DV_SIG_MASK_CRC32)}, 516},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRPRig(t)
			cm, sm := r.mr(pyMsgSize, 'c'), r.mr(pyMsgSize, 's')
			ck, sk := r.sigMkey(4), r.sigMkey(4)
			r.configure(true, ck, mlx.IBV_ACCESS_LOCAL_WRITE, listOf(cm, 512), c.attr)
			r.configure(false, sk, mlx.IBV_ACCESS_LOCAL_WRITE, listOf(sm, 512), c.attr)
			for i := range 3 { // the test's iterations, fewer
				copy(sm.Bytes(), bytes.Repeat([]byte{'s'}, pyMsgSize))
				send, recv := pySendRecv(r, &mlx.SGE{Length: 512, LKey: ck.LKey()}, &mlx.SGE{Length: 512, LKey: sk.LKey()})
				if send.Status != cq.Success || recv.Status != cq.Success || recv.ByteLen != c.wire {
					t.Fatalf("iteration %d: send %+v, receive %+v", i, send, recv)
				}
				want := append(bytes.Repeat([]byte{'c'}, 512), bytes.Repeat([]byte{'s'}, 512)...)
				if !bytes.Equal(sm.Bytes(), want) {
					t.Fatalf("iteration %d: the server's buffer is not 'c'*512 + 's'*512", i)
				}
				r.check("server", sk, cq.MkeyErr{})
				r.check("client", ck, cq.MkeyErr{})
			}
		})
	}
}

// TestReplayPyverbsSigErr replays test_mkey_sig_err: the server's mkey is
// a plain list over 512 bytes of its MR; the client's a list over 512+4
// bytes of its MR with CRC32 (seed 0xffffffff) in the memory domain and
// none on the wire, whose CRC field the test never writes ('cccc'). A
// SEND with SGE (0, 512) through it (data bytes: the wire has no
// signature) succeeds, the server gets 'c'*512, and the client's mkey
// reports BAD_GUARD while the server's reports nothing.
func TestReplayPyverbsSigErr(t *testing.T) {
	r := newRPRig(t)
	cm, sm := r.mr(pyMsgSize, 'c'), r.mr(pyMsgSize, 's')
	ck, sk := r.sigMkey(4), r.sigMkey(4)
	crc := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	crc.SetSigCRC(&mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32, Seed: 0xffffffff})
	r.configure(false, sk, mlx.IBV_ACCESS_LOCAL_WRITE, listOf(sm, 512), nil)
	r.configure(true, ck, mlx.IBV_ACCESS_LOCAL_WRITE, listOf(cm, 512+4),
		&mlx.SigBlockAttr{Mem: crc, CheckMask: uint8(mlx.MLX5DV_SIG_MASK_CRC32)})
	send, recv := pySendRecv(r, &mlx.SGE{Length: 512, LKey: ck.LKey()}, &mlx.SGE{Length: 512, LKey: sk.LKey()})
	if send.Status != cq.Success || recv.Status != cq.Success || recv.ByteLen != 512 {
		t.Fatalf("send %+v, receive %+v", send, recv)
	}
	if want := append(bytes.Repeat([]byte{'c'}, 512), bytes.Repeat([]byte{'s'}, 512)...); !bytes.Equal(sm.Bytes(), want) {
		t.Fatal("the server's buffer is not 'c'*512 + 's'*512")
	}
	r.check("client", ck, cq.MkeyErr{Type: mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, Expected: 0x63636363,
		Actual: uint64(crc32.ChecksumIEEE(bytes.Repeat([]byte{'c'}, 512)))})
	r.check("server", sk, cq.MkeyErr{})
}

// listOf is a list layout over the first n bytes of m.
func listOf(m *device.MR, n uint32) func(*sq.SQ) error {
	return func(q *sq.SQ) error { return q.SetMkeyLayoutList([]mlx.SGE{{Addr: m.Addr, Length: n, LKey: m.LKey}}) }
}
