package mkey_test

import (
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// benchMkey makes an mkey over 32 KiB for a benchmark.
func benchMkey(b *testing.B, sig *mlx.SigBlockAttr, crypto bool) (*rig, uint32) {
	r := newRigXTS(b, true)
	buf := make([]byte, 8*4096)
	k := r.mem.reg(0x1000, buf, rw)
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
	if sig != nil {
		flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	}
	var cr *mlx.CryptoAttr
	if crypto {
		flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
		id, _ := r.tab.CreateDEK(pattern(64, 1), nil)
		cr = cryptoAttr(&sq.DEK{ObjectID: id}, true, 0, mlx.MLX5DV_BLOCK_SIZE_4096, 0)
	}
	mk := r.create(flags, 4)
	if err := r.configure(mk, rw, []mlx.SGE{{Addr: 0x1000, Length: uint32(len(buf)), LKey: k}}, sig, cr); err != nil {
		b.Fatal(err)
	}
	return r, mk.LKey
}

// BenchmarkGather32K: a 32 KiB RDMA READ through a plain mkey, one with a
// T10-DIF wire domain every 4 KiB, and one with AES-XTS as well.
func BenchmarkGather32K(b *testing.B) {
	dif := &mlx.SigBlockAttr{Wire: difDomain(0, 1, 2, 1, mlx.MLX5DV_BLOCK_SIZE_4096), CheckMask: 0xff}
	for _, c := range []struct {
		name   string
		sig    *mlx.SigBlockAttr
		crypto bool
	}{{"plain", nil, false}, {"t10dif", dif, false}, {"aes-xts", nil, true}} {
		b.Run(c.name, func(b *testing.B) {
			r, key := benchMkey(b, c.sig, c.crypto)
			dst := make([]byte, 0, 40000)
			b.SetBytes(8 * 4096)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.tab.Gather(key, 0, 8*4096, true, dst[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
