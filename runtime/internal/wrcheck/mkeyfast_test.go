package wrcheck

import (
	"fmt"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
)

// sameWR reports whether two chains' open work requests are equal but
// for the mkey they name (each chain configures its own copy).
func sameWR(a, b *Chain) bool {
	x, y := a.wr, b.wr
	x.mkey, y.mkey = nil, nil
	return x == y && (a.wr.mkey == nil) == (b.wr.mkey == nil)
}

// sameTouched reports whether two chains hold the same rollback entries
// (each for its own mkey).
func sameTouched(a, b *Chain) bool {
	if len(a.touched) != len(b.touched) {
		return false
	}
	for i := range a.touched {
		x, y := a.touched[i], b.touched[i]
		x.m, y.m = nil, nil
		x.attrTag, y.attrTag = 0, 0 // which copy the values came from, not state
		if x != y {
			return false
		}
	}
	return true
}

// clone is a fresh chain of proto's QP (New builds its tables: most of
// these tests' time), with no batch state of its own yet.
func clone(proto *Chain) *Chain {
	c := *proto
	c.touched = nil
	return &c
}

// TestMkeyConfigureOKAgrees: where MkeyConfigureOK holds, OpenMkey
// records what MkeyConfigure records (which accepts the call and does not
// finish the configuration), over the QP's tag support, the mkey's kind,
// tag, signature state and pending signature errors, the batch, wr_flags,
// the attributes and the setter count. Two chains are built alike, one
// for each.
func TestMkeyConfigureOKAgrees(t *testing.T) {
	taken := 0
	inline := uint32(mlx.IBV_SEND_INLINE)
	attrs := []*mlx.MkeyConfAttr{nil, {}, {ConfFlags: mlx.MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR}, {CompMask: 1}}
	const sig, crypto = mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
	for _, tags := range []bool{false, true} {
		proto := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 64, MaxSendSGE: 2, MkeyTagSupported: tags})
		for _, flags := range []mlx.MkeyInitAttrFlags{0, sig, sig | crypto} {
			for _, lkey := range []uint32{0x100, 0x105} {
				for _, st := range []SigState{SigInit, SigReset, SigUpdated} {
					for _, errs := range []bool{false, true} {
						for _, started := range []bool{false, true} {
							for _, wrFlags := range []uint32{0, inline} {
								for ai, attr := range attrs {
									for _, n := range []uint8{0, 1, 3} {
										for _, nilMkey := range []bool{false, true} {
											build := func() (*Chain, *Mkey) {
												c := clone(proto)
												m := NewMkey(lkey, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|flags, 8)
												m.Sig, m.Crypto = st, CryptoUpdated
												if errs {
													m.SigError()
												}
												if started {
													c.Start()
												}
												return c, m
											}
											a, ma := build()
											b, mb := build()
											if nilMkey {
												ma, mb = nil, nil
											}
											name := fmt.Sprintf("tags %v, flags %#x, lkey %#x, %v, errs %v, started %v, wr_flags %#x, attr %d, %d setters, nil %v",
												tags, flags, lkey, st, errs, started, wrFlags, ai, n, nilMkey)
											if !a.MkeyConfigureOK(wrFlags, ma, n, attr) {
												continue
											}
											taken++
											a.OpenMkey(ma, n)
											u, err := b.MkeyConfigure(mlx.FnWRMkeyConfigure, wrFlags, mb, n, attr)
											if err != nil || u != nil || !sameWR(a, b) || a.wrs != b.wrs || !sameTouched(a, b) || !ma.SameState(mb) {
												t.Fatalf("%s: MkeyConfigureOK took it; MkeyConfigure %v, %v\nwr %+v, want %+v\nmkey %+v, want %+v",
													name, u, err, a.wr, b.wr, *ma, *mb)
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if taken == 0 {
		t.Fatal("MkeyConfigureOK took nothing")
	}
}

// TestFinishSigAgrees: where finishSig answers, finish gives the same
// answer and leaves the same work request and mkey; where it does not,
// it changed nothing. The states are those just before finish, after a
// signature setter was counted as the last: the mkey's kind and crypto
// state, a pending error-count update, an unknown state, the domains
// present, the length, a copy mask and the translation against the
// UMR's room.
func TestFinishSigAgrees(t *testing.T) {
	taken := 0
	const sig, crypto = mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
	for _, inline := range []int{60, 316} {
		proto := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: inline, MaxSendSGE: 2})
		for _, flags := range []mlx.MkeyInitAttrFlags{sig, sig | crypto} {
			for _, cst := range []CryptoState{CryptoInit, CryptoSet, CryptoUpdated} {
				for _, errUpd := range []bool{false, true} {
					for _, unknown := range []bool{false, true} {
						for domains := range 4 {
							for _, length := range []uint64{4096, 1 << 32} {
								for _, sf := range []mlx.SigBlockAttrFlags{0, mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK} {
									for _, entries := range []int{1, 4, 8, 16} {
										build := func() (*Chain, *Mkey) {
											c := clone(proto)
											m := NewMkey(0x100, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|flags, 16)
											c.Start()
											if _, err := c.MkeyConfigure(mlx.FnWRMkeyConfigure, uint32(mlx.IBV_SEND_INLINE), m, 1, &mlx.MkeyConfAttr{}); err != nil {
												t.Fatal(err)
											}
											// The signature setter's part before finish, on
											// values set directly.
											m.Crypto, m.ErrCountUpdated, m.Unknown = cst, errUpd, unknown
											m.Mem.Present, m.Wire.Present = domains&1 != 0, domains&2 != 0
											m.Mem.Domain.BlockSize, m.Wire.Domain.BlockSize = mlx.MLX5DV_BLOCK_SIZE_512, mlx.MLX5DV_BLOCK_SIZE_512
											m.Length, m.SigFlags, m.Sig = length, sf, SigUpdated
											c.wr.xlat, c.wr.sigGen = int32(16*entries), 7
											if !c.counted(mlx5rules.GroupSignature) {
												t.Fatal("the signature setter was not the last")
											}
											return c, m
										}
										a, ma := build()
										b, mb := build()
										name := fmt.Sprintf("inline %d, flags %#x, %v, errs %v, unknown %v, domains %d, length %#x, sig flags %#x, %d entries",
											inline, flags, cst, errUpd, unknown, domains, length, sf, entries)
										u := a.finishSig(ma)
										if u == nil {
											if !sameWR(a, b) || !ma.SameState(mb) {
												t.Fatalf("%s: finishSig refused but changed wr %+v (was %+v)", name, a.wr, b.wr)
											}
											continue
										}
										taken++
										want, err := b.finish(mlx.FnWRSetMkeySigBlock)
										if err != nil || want == nil || !sameWR(a, b) || !ma.SameState(mb) {
											t.Fatalf("%s: finishSig answered; finish %v, %v", name, want, err)
										}
										x, y := *u, *want
										x.Mkey, y.Mkey = nil, nil
										if x != y {
											t.Fatalf("%s: finishSig %+v, finish %+v", name, x, y)
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if taken == 0 {
		t.Fatal("finishSig answered nothing")
	}
}
