package wrcheck

import (
	"fmt"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// trySigCase is one state TestTrySigBlockAgrees builds on two chains.
type trySigCase struct {
	room    int                   // the QP's max_inline_data
	flags   mlx.MkeyInitAttrFlags // the configured mkey's kind
	other   bool                  // the mkey whose attributes are not the snapshot's
	pre     []mlx.Func            // the setters called before
	extra   uint8                 // setters announced after this one
	fail    bool                  // a setter failed before (the batch has an error)
	errUpd  bool                  // a signature-error update pending
	variant func(*sigAttrs) *mlx.SigBlockAttr
}

// build makes the chain, its mkeys and the attributes of tc. The first
// batch configures the other mkey with attributes that have a memory
// domain, then the mkey with attributes that have none (the snapshot
// they leave); the second opens the configuration.
func (tc *trySigCase) build(t *testing.T, proto *Chain) (*Chain, *Mkey, *mlx.SigBlockAttr) {
	c := clone(proto)
	const sigFlags = mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	inline := uint32(mlx.IBV_SEND_INLINE)
	m, o := NewMkey(0x100, sigFlags, 8), NewMkey(0x200, sigFlags, 8)
	c.Start()
	for _, x := range []struct {
		m     *Mkey
		noMem bool
	}{{o, false}, {m, true}} {
		c.MkeyConfigure(mlx.FnWRMkeyConfigure, inline, x.m, 1, &mlx.MkeyConfAttr{})
		if _, err := c.MkeySigBlock(mlx.FnWRSetMkeySigBlock, &newSigAttrs(x.noMem).attr); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Complete(mlx.FnWRComplete); err != nil {
		t.Fatal(err)
	}
	if tc.other {
		m = o
	}
	m.Flags = mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | tc.flags
	c.Start()
	c.MkeyConfigure(mlx.FnWRMkeyConfigure, inline, m, uint8(len(tc.pre))+1+tc.extra, &mlx.MkeyConfAttr{})
	m.ErrCountUpdated = tc.errUpd // as a taken signature error leaves it
	for _, fn := range tc.pre {
		switch fn {
		case mlx.FnWRSetMkeyAccessFlags:
			c.MkeyAccess(fn, uint32(mlx.IBV_ACCESS_LOCAL_WRITE))
		case mlx.FnWRSetMkeyLayoutList:
			c.MkeyLayout(fn, Layout{Entries: 3, Length: 3 * 512}) // 48 bytes, 64 in the WQE
		case mlx.FnWRSetMkeySigBlock:
			c.MkeySigBlock(fn, &newSigAttrs(true).attr)
		}
	}
	if tc.fail {
		if _, err := c.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, 1<<30); err == nil {
			t.Fatal("access flags 1<<30 accepted")
		}
	}
	return c, m, tc.variant(newSigAttrs(true))
}

// TestTrySigBlockAgrees: where TrySigBlock answers, MkeySigBlock gives
// the same answer and leaves the same work request, mkey, snapshot and
// rollback entries; where it does not, it changed nothing. The states:
// the snapshot's mkey or another, of each kind; the setters called
// before (access flags, a list layout, a signature already), a failed
// one, and whether this one is the last; a pending signature-error update; the same
// values in other memory, changed values, a copy mask, comp_mask, or nil;
// a QP whose inline room holds the BSF after the layout, only before
// the layout is padded to 64 bytes, or not.
func TestTrySigBlockAgrees(t *testing.T) {
	taken := 0
	const sig, crypto = mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
	access, layout, sigBlock := mlx.FnWRSetMkeyAccessFlags, mlx.FnWRSetMkeyLayoutList, mlx.FnWRSetMkeySigBlock
	variants := map[string]func(a *sigAttrs) *mlx.SigBlockAttr{
		"same values":  func(a *sigAttrs) *mlx.SigBlockAttr { return &a.attr },
		"app tag":      func(a *sigAttrs) *mlx.SigBlockAttr { a.dif.AppTag++; return &a.attr },
		"memory added": func(a *sigAttrs) *mlx.SigBlockAttr { a.attr.Mem = &a.mem; return &a.attr },
		"comp_mask":    func(a *sigAttrs) *mlx.SigBlockAttr { a.attr.CompMask = 1; return &a.attr },
		"copy mask": func(a *sigAttrs) *mlx.SigBlockAttr {
			a.attr.Flags, a.attr.CopyMask = mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK, 0xff
			return &a.attr
		},
		"nil": func(a *sigAttrs) *mlx.SigBlockAttr { return nil },
	}
	pres := [][]mlx.Func{nil, {access}, {layout}, {access, layout}, {sigBlock}}
	for _, room := range []int{60, 120, 316} {
		proto := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: room, MaxSendSGE: 2})
		for _, flags := range []mlx.MkeyInitAttrFlags{0, sig, sig | crypto} {
			for _, other := range []bool{false, true} {
				for _, pre := range pres {
					for _, extra := range []uint8{0, 1} {
						for _, errUpd := range []bool{false, true} {
							for _, fail := range []bool{false, true} {
								for vname, variant := range variants {
									tc := trySigCase{room: room, flags: flags, other: other, pre: pre, extra: extra, errUpd: errUpd, fail: fail, variant: variant}
									name := fmt.Sprintf("inline %d, flags %v, other %v, before %v, %d after, errs %v, failed %v, %s",
										room, flags, other, pre, extra, errUpd, fail, vname)
									if trySigAgrees(t, &tc, proto, name) {
										taken++
									}
								}
							}
						}
					}
				}
			}
		}
	}
	// The snapshot's mkey of a signature kind, the same values, no update
	// pending, no failure, the setter the last: the four lists of setters
	// before it without a signature on the widest room, the two without a
	// layout on each of the narrower ones.
	if taken != 8 {
		t.Fatalf("TrySigBlock answered %d states, not the 8 of its common case", taken)
	}
}

// trySigAgrees checks one case and reports whether TrySigBlock answered.
func trySigAgrees(t *testing.T, tc *trySigCase, proto *Chain, name string) bool {
	a, ma, attrA := tc.build(t, proto)
	b, mb, attrB := tc.build(t, proto)
	if !sameWR(a, b) || !ma.SameState(mb) {
		t.Fatalf("%s: the chains were not built alike", name)
	}
	u := a.TrySigBlock(attrA)
	if u == nil {
		if !sameWR(a, b) || !ma.SameState(mb) || a.sig.gen != b.sig.gen || !sameTouched(a, b) {
			t.Fatalf("%s: TrySigBlock refused but changed wr %+v (was %+v)", name, a.wr, b.wr)
		}
		return false
	}
	want, err := b.MkeySigBlock(mlx.FnWRSetMkeySigBlock, attrB)
	if err != nil || want == nil || !sameWR(a, b) || !ma.SameState(mb) || a.sig.gen != b.sig.gen || !sameTouched(a, b) {
		t.Fatalf("%s: TrySigBlock answered; MkeySigBlock %v, %v\nwr %+v, want %+v", name, want, err, a.wr, b.wr)
	}
	x, y := *u, *want
	x.Mkey, y.Mkey = nil, nil
	if x != y {
		t.Fatalf("%s: TrySigBlock %+v, MkeySigBlock %+v", name, x, y)
	}
	return true
}
