package wrcheck_test

import (
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// The success path allocates nothing: validators, the state machine, and
// an mkey configuration with a signature.
func TestNoAllocations(t *testing.T) {
	qp := &wrcheck.QP{Type: mlx.QPRC, SendOps: ruletest.RCSendOps, MlxSendOps: ruletest.RCMlxSendOps, MaxInlineData: 316, MaxSendSGE: 8, MaxMemcpy: 1 << 31}
	c := wrcheck.New(qp)
	m := wrcheck.NewMkey(0x1200, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 16)
	crc := &mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, Seed: 0xffffffff}
	wire := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_4096}
	wire.SetSigCRC(crc)
	sig := &mlx.SigBlockAttr{Wire: wire, CheckMask: 0xff}
	conf := &mlx.MkeyConfAttr{}
	inline := uint32(mlx.IBV_SEND_INLINE)
	run := func() {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if err := c.Builder(mlx.FnWRRDMAWrite, 0); err != nil {
			t.Fatal(err)
		}
		if whole, err := c.Data(mlx.FnWRSetSGE, 1, 0); err != nil || !whole {
			t.Fatal(whole, err)
		}
		if _, err := c.MkeyConfigure(mlx.FnWRMkeyConfigure, inline, m, 3, conf); err != nil {
			t.Fatal(err)
		}
		if _, err := c.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, uint32(mlx.IBV_ACCESS_LOCAL_WRITE)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.MkeyLayout(mlx.FnWRSetMkeyLayoutList, wrcheck.Layout{Entries: 4, Length: 16384}); err != nil {
			t.Fatal(err)
		}
		if u, err := c.MkeySigBlock(mlx.FnWRSetMkeySigBlock, sig); err != nil || u.Mkey != m {
			t.Fatal(u, err)
		}
		if _, err := c.Complete(mlx.FnWRComplete); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(1000, run); n != 0 {
		t.Errorf("%v allocations per batch", n)
	}
}

func BenchmarkChainRDMAWrite(b *testing.B) {
	c := wrcheck.New(&wrcheck.QP{Type: mlx.QPRC, SendOps: ruletest.RCSendOps, MaxInlineData: 124, MaxSendSGE: 8})
	b.ReportAllocs()
	for b.Loop() {
		c.Start()
		c.Builder(mlx.FnWRRDMAWrite, 0)
		c.Data(mlx.FnWRSetSGE, 1, 0)
		c.Complete(mlx.FnWRComplete)
	}
}
