package wrcheck_test

import (
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// TestConfigureMkeyFastPath: the template path takes the common case and
// leaves the others to the calls one by one.
func TestConfigureMkeyFastPath(t *testing.T) {
	qp := &wrcheck.QP{Type: mlx.QPRC, SendOps: ruletest.RCSendOps, MlxSendOps: ruletest.RCMlxSendOps, MaxInlineData: 316, MaxSendSGE: 8}
	c := wrcheck.New(qp)
	dif := &mlx.SigT10DIF{BG: 0xffff, AppTag: 1, RefTag: 2}
	wire := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	wire.SetSigDif(dif)
	tmpl, err := wrcheck.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, &mlx.SigBlockAttr{Wire: wire})
	if err != nil {
		t.Fatal(err)
	}
	m := wrcheck.NewMkey(0x100, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	inline := uint32(mlx.IBV_SEND_INLINE)
	fn := mlx.FnWRMkeyConfigure
	c.Start()
	if c.ConfigureMkey(fn, inline, m, tmpl, wrcheck.Layout{Entries: 2, Length: 1024}) != nil {
		t.Fatal("took a fresh mkey, whose error-count update is pending")
	}
	c.MkeyConfigure(fn, inline, m, 3, &mlx.MkeyConfAttr{})
	c.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, uint32(mlx.IBV_ACCESS_LOCAL_WRITE))
	c.MkeyLayout(mlx.FnWRSetMkeyLayoutList, wrcheck.Layout{Entries: 2, Length: 1024})
	c.MkeySigBlock(mlx.FnWRSetMkeySigBlock, tmpl.SigAttr())
	u := c.ConfigureMkey(fn, inline, m, tmpl, wrcheck.Layout{Entries: 2, Length: 2048})
	if u == nil {
		t.Fatal("the common case was not taken")
	}
	if u.Mkey != m || !u.SigBSF || !u.PSVs || u.WRs != 2 || u.Xlat != 64 || m.Length != 2048 || m.Sig != wrcheck.SigUpdated {
		t.Fatalf("UMR %+v, mkey %+v", u, m)
	}
	if c.ConfigureMkey(fn, 0, m, tmpl, wrcheck.Layout{Entries: 2, Length: 2048}) != nil {
		t.Fatal("took a configuration without IBV_SEND_INLINE")
	}
	if c.ConfigureMkey(fn, inline, m, tmpl, wrcheck.Layout{Entries: 5, Length: 2048}) != nil {
		t.Fatal("took more entries than the mkey has")
	}
	if _, err := c.Complete(mlx.FnWRComplete); err != nil {
		t.Fatal(err)
	}
	c.Start()
	c.MkeyConfigure(fn, inline, m, 2, &mlx.MkeyConfAttr{})
	c.Abort() // the mkey's state is now unknown
	c.Start()
	if c.ConfigureMkey(fn, inline, m, tmpl, wrcheck.Layout{Entries: 2, Length: 2048}) != nil {
		t.Fatal("took an mkey in an unknown state")
	}
}

// TestNilArguments: the state machine's entry points take nil mkeys,
// templates, attributes and address handles without a panic: a rule
// error, or (ConfigureMkey) the general path that names it.
func TestNilArguments(t *testing.T) {
	qp := &wrcheck.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_SEND, MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE | mlx.MLX5DV_QP_EX_WITH_MR_LIST,
		MaxInlineData: 316, MaxSendSGE: 8}
	c := wrcheck.New(qp)
	inline := uint32(mlx.IBV_SEND_INLINE)
	tmpl, err := wrcheck.NewMkeyTemplate(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := wrcheck.NewMkey(0x100, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 4)
	want := func(err error, rule string) {
		t.Helper()
		if re, ok := err.(*mlx.RuleError); !ok || re.Rule != rule {
			t.Fatalf("got %v, want rule %s", err, rule)
		}
	}
	fn := mlx.FnWRMkeyConfigure
	for _, c2 := range []struct {
		rule string
		call func() error
	}{
		{"mkey_configure.mkey", func() error { return errOf(c.MkeyConfigure(fn, inline, nil, 0, &mlx.MkeyConfAttr{})) }},
		{"mkey_configure.attr", func() error { return errOf(c.MkeyConfigure(fn, inline, m, 0, nil)) }},
		{"wr_post.mr_list.mkey", func() error {
			return errOf(c.MR(mlx.FnWRMRList, inline, nil, 0, wrcheck.Layout{Entries: 1, Length: 64}))
		}},
		{"sig.attr", func() error {
			c.MkeyConfigure(fn, inline, m, 1, &mlx.MkeyConfAttr{})
			return errOf(c.MkeySigBlock(mlx.FnWRSetMkeySigBlock, nil))
		}},
		{"crypto.attr", func() error {
			c.MkeyConfigure(fn, inline, m, 1, &mlx.MkeyConfAttr{})
			return errOf(c.MkeyCrypto(mlx.FnWRSetMkeyCrypto, nil))
		}},
	} {
		c.Start()
		if c.ConfigureMkey(fn, inline, nil, tmpl, wrcheck.Layout{Entries: 1, Length: 64}) != nil || c.ConfigureMkey(fn, inline, m, nil, wrcheck.Layout{Entries: 1, Length: 64}) != nil {
			t.Fatal("the template path took a nil mkey or template")
		}
		want(c2.call(), c2.rule)
		c.Abort()
	}
	dci := wrcheck.New(&wrcheck.QP{Type: mlx.QPDCI, SendOps: mlx.IBV_QP_EX_WITH_SEND, MaxSendSGE: 1})
	dci.Start()
	dci.Builder(mlx.FnWRSend, 0)
	want(errOf(dci.DCAddr(mlx.FnWRSetDCAddr, nil, -1)), "wr_post.dc_addr.ah")
}

// TestConfigureMkeyRoom: the template path takes as many entries as the
// calls one by one accept, and no more: the translation within
// max_inline_data + 4, and with a signature the BSF too.
func TestConfigureMkeyRoom(t *testing.T) {
	dif := &mlx.SigT10DIF{BG: 0xffff, AppTag: 1, RefTag: 2}
	wire := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	wire.SetSigDif(dif)
	sigT, err := wrcheck.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, &mlx.SigBlockAttr{Wire: wire})
	if err != nil {
		t.Fatal(err)
	}
	plainT, err := wrcheck.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, nil)
	if err != nil {
		t.Fatal(err)
	}
	inline := uint32(mlx.IBV_SEND_INLINE)
	fn := mlx.FnWRMkeyConfigure
	for _, inl := range []int{60, 124, 188, 316, 400} {
		qp := &wrcheck.QP{Type: mlx.QPRC, SendOps: ruletest.RCSendOps, MlxSendOps: ruletest.RCMlxSendOps, MaxInlineData: inl, MaxSendSGE: 8}
		for _, sig := range []bool{false, true} {
			for n := 1; n <= 32; n++ {
				tmpl, flags := plainT, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
				if sig {
					tmpl, flags = sigT, flags|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
				}
				// What the calls one by one say, on a chain of its own.
				ref := wrcheck.New(qp)
				m := wrcheck.NewMkey(0x100, flags, 64)
				m.ErrCountUpdated = false
				ref.Start()
				setters := uint8(2)
				if sig {
					setters = 3
				}
				ref.MkeyConfigure(fn, inline, m, setters, &mlx.MkeyConfAttr{})
				ref.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, uint32(mlx.IBV_ACCESS_LOCAL_WRITE))
				_, err := ref.MkeyLayout(mlx.FnWRSetMkeyLayoutList, wrcheck.Layout{Entries: n, Length: 4096})
				if err == nil && sig {
					_, err = ref.MkeySigBlock(mlx.FnWRSetMkeySigBlock, tmpl.SigAttr())
				}
				c := wrcheck.New(qp)
				m2 := wrcheck.NewMkey(0x100, flags, 64)
				m2.ErrCountUpdated = false
				c.Start()
				if took := c.ConfigureMkey(fn, inline, m2, tmpl, wrcheck.Layout{Entries: n, Length: 4096}) != nil; took && err != nil {
					t.Errorf("max_inline_data %d, signature %v, %d entries: the template path took what the calls reject: %v", inl, sig, n, err)
				} else if !took && err == nil {
					t.Errorf("max_inline_data %d, signature %v, %d entries: the template path left the common case to the calls", inl, sig, n)
				}
			}
		}
	}
}

// TestListSumAgrees: the template path's ListSum gives ListLayout's
// length, and its longest entry is over MaxKLMLength exactly when
// ListLayout names a long entry (the template path then leaves the list
// to the calls one by one, which name it).
func TestListSumAgrees(t *testing.T) {
	lengths := []uint32{0, 1, 4096, wrcheck.MaxKLMLength - 1, wrcheck.MaxKLMLength, wrcheck.MaxKLMLength + 1, ^uint32(0)}
	for _, a := range lengths {
		for _, b := range lengths {
			for _, c := range lengths {
				sges := []mlx.SGE{{Length: a}, {Length: b}, {Length: c}}
				for n := 0; n <= len(sges); n++ {
					l := wrcheck.ListLayout(sges[:n])
					sum, hi := wrcheck.ListSum(sges[:n])
					if sum != l.Length || (hi > wrcheck.MaxKLMLength) != (l.Long != 0) {
						t.Fatalf("%d entries %d, %d, %d: ListSum %d, longest %d; ListLayout %+v", n, a, b, c, sum, hi, l)
					}
				}
			}
		}
	}
}
