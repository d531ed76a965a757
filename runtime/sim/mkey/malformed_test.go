package mkey_test

import (
	"encoding/binary"
	"errors"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// The places in a UMR with one KLM WQEBB, a signature and a crypto BSF.
const (
	atUMRCtrl = 16
	atCtx     = 64
	atXlat    = 128
	atBSF     = 192
	atCrypto  = 256
)

// TestMalformedUMR: truncated WQEs, bad ds, opcode, KLM counts, mask
// bits and BSF fields, BSFs on an mkey created without them, and bad
// SET_PSVs are errors naming the field; the mkey stays unconfigured.
func TestMalformedUMR(t *testing.T) {
	r := newRigXTS(t, true)
	buf := make([]byte, 8*520)
	k := r.mem.reg(0x1000, buf, rw)
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
	mk := r.create(flags, 4)
	plain, err := r.tab.Create(1, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := r.tab.CreateDEK(pattern(32, 1), nil)
	sig := &mlx.SigBlockAttr{Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32, 0, mlx.MLX5DV_BLOCK_SIZE_512),
		Wire: difDomain(0, 1, 2, 0, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	cr := cryptoAttr(&sq.DEK{ObjectID: id}, true, mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_BEFORE_CRYPTO_ON_TX, mlx.MLX5DV_BLOCK_SIZE_520, 0)
	ws := r.build(func(q *sq.SQ) error {
		if err := q.MkeyConfigure(mk, 4, &mlx.MkeyConfAttr{}); err != nil {
			return err
		}
		q.SetMkeyAccessFlags(rw)
		q.SetMkeyLayoutList([]mlx.SGE{{Addr: 0x1000, Length: 4 * 516, LKey: k}})
		q.SetMkeySigBlock(sig)
		return q.SetMkeyCrypto(cr)
	})
	if len(ws) != 3 || len(ws[0]) != 320 {
		t.Fatalf("%d WQEs, the UMR of %d bytes: the layout this test edits changed", len(ws), len(ws[0]))
	}
	umr, psv := ws[0], ws[1]
	// Five SGEs take 8 KLMs: too many for the table's 4-entry mkey.
	big := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	big = sq.NewMkey(big.LKey, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 8)
	many := r.build(func(q *sq.SQ) error {
		return q.MRList(big, rw, []mlx.SGE{{Addr: 0x1000, Length: 1, LKey: k}, {Addr: 0x1001, Length: 1, LKey: k}, {Addr: 0x1002, Length: 1, LKey: k},
			{Addr: 0x1003, Length: 1, LKey: k}, {Addr: 0x1004, Length: 1, LKey: k}})
	})[0]

	edit := func(w []byte, f func(w []byte)) []byte {
		c := append([]byte{}, w...)
		f(c)
		return c
	}
	umrCtrl := func(w []byte) *mlx.WQEUMRCtrlSeg { return (*mlx.WQEUMRCtrlSeg)(w[atUMRCtrl:atCtx]) }
	cases := []struct {
		name, field string
		wqe         []byte
		psv         bool
	}{
		{"truncated", "ctrl.ds", umr[:200], false},
		{"no control segment", "ctrl", umr[:10], false},
		{"ds 0", "ctrl.ds", edit(umr, func(w []byte) { w[7] &^= 0x3f }), false},
		{"opcode", "ctrl.opcode", edit(umr, func(w []byte) { w[3] = 0x08 }), false},
		{"too many KLMs", "umr_ctrl.klm_octowords", many, false},
		{"KLMs past the WQE", "umr_ctrl.klm_octowords", edit(umr, func(w []byte) { umrCtrl(w).SetKLMOctowords(13) }), false},
		{"unknown flag bit", "umr_ctrl.flags", edit(umr, func(w []byte) { w[atUMRCtrl] |= 1 }), false},
		{"translation offset", "umr_ctrl.translation_offset", edit(umr, func(w []byte) {
			umrCtrl(w).SetFlags(umrCtrl(w).Flags() | mlx.MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET)
			umrCtrl(w).SetTranslationOffset(4)
		}), false},
		{"unknown mask bit", "umr_ctrl.mkey_mask", edit(umr, func(w []byte) { umrCtrl(w).SetMkeyMask(umrCtrl(w).MkeyMask() | 4) }), false},
		{"BSFs without BSF_ENABLE", "umr_ctrl.bsf_octowords", edit(umr, func(w []byte) {
			umrCtrl(w).SetMkeyMask(umrCtrl(w).MkeyMask() &^ uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE))
		}), false},
		{"three BSFs", "umr_ctrl.bsf_octowords", edit(umr, func(w []byte) { umrCtrl(w).SetBSFOctowords(12) }), false},
		{"extended BSF", "bsf.ext", edit(umr, func(w []byte) { w[atBSF+16] = 1 }), false},
		{"block selector", "bsf.m block selector", edit(umr, func(w []byte) { w[atBSF+3] = 5 }), false},
		{"block format", "bsf.m_bfs", edit(umr, func(w []byte) { w[atBSF+12] = 0x32 }), false},
		{"guard type", "bsf.w_inl.sig_type", edit(umr, func(w []byte) { w[atBSF+32+8] = 3 }), false},
		{"escape bits", "bsf.w_inl.dif_inc_ref_guard_check", edit(umr, func(w []byte) { w[atBSF+32+13] = 3 }), false},
		{"crypto standard", "crypto_bsf.enc_standard", edit(umr, func(w []byte) { w[atCrypto+3] = 1 }), false},
		{"crypto order", "crypto_bsf.enc_order", edit(umr, func(w []byte) { w[atCrypto+1] = 9 }), false},
		{"unit selector", "crypto_bsf.bs_pointer", edit(umr, func(w []byte) { w[atCrypto+8] = 0 }), false},
		{"unknown DEK", "crypto_bsf.dek", edit(umr, func(w []byte) { binary.BigEndian.PutUint32(w[atCrypto+32:], 0x777) }), false},
		{"BSFs on a plain mkey", "bsf", edit(umr, func(w []byte) { (*mlx.WQECtrlSeg)(w[:16]).SetImm(plain) }), false},
		{"PSV index", "set_psv.psv_index", edit(psv, func(w []byte) { (*mlx.WQESetPSVSeg)(w[16:32]).SetPSVIndex(0x999) }), true},
		{"PSV truncated", "ctrl.ds", psv[:20], true},
	}
	for _, c := range cases {
		var err error
		if c.psv {
			err = r.tab.ExecSetPSV(c.wqe)
		} else {
			err = r.tab.ExecUMR(c.wqe)
		}
		var we *mkey.WQEError
		if !errors.As(err, &we) || we.Field != c.field {
			t.Errorf("%s: %v, want a WQE error in %s", c.name, err, c.field)
		}
		var f *mkey.Fault
		if _, err := r.tab.Gather(mk.LKey, 0, 516, false, nil); !errors.As(err, &f) || f.Kind != mkey.FaultKey {
			t.Fatalf("%s: the rejected WQE configured the mkey (%v)", c.name, err)
		}
	}
	// The WQEs as written configure it.
	for _, w := range ws {
		if w[3] == byte(mlx.MLX5_OPCODE_UMR) {
			err = r.tab.ExecUMR(w)
		} else {
			err = r.tab.ExecSetPSV(w)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.tab.Gather(mk.LKey, 0, 516, false, nil); err != nil {
		t.Fatal(err)
	}
	// CHECK_FREE on the configured mkey is refused.
	checkFree := edit(umr, func(w []byte) { umrCtrl(w).SetFlags(umrCtrl(w).Flags() | mlx.MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE) })
	var f *mkey.Fault
	if err := r.tab.ExecUMR(checkFree); !errors.As(err, &f) || f.Kind != mkey.FaultState {
		t.Fatalf("CHECK_FREE on a configured mkey: %v", err)
	}
}
