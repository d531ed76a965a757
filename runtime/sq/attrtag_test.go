package sq_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestMkeyAttrsFollowConfigurations: after every configuration an mkey
// holds the signature attributes that configuration applied (the four
// calls' sig block, a template's, none after a reset), and after an
// aborted batch the ones it held before, however the configurations
// alternate attributes, templates, forms and queues. The writer skips
// copying attributes the mkey already holds (a tag names them), so this
// is what holds the tag to the values.
func TestMkeyAttrsFollowConfigurations(t *testing.T) {
	attrs := []*mlx.SigBlockAttr{
		{Wire: difDomain(1, 2, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff},
		{Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, 0xffffffff, mlx.MLX5DV_BLOCK_SIZE_4096), CheckMask: 0xf0},
		{Mem: difDomain(3, 4, mlx.MLX5DV_BLOCK_SIZE_520), Wire: difDomain(3, 5, mlx.MLX5DV_BLOCK_SIZE_520), CheckMask: 0x3f},
	}
	var tmpls []*sq.MkeyTemplate
	for _, a := range attrs {
		tm, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, a)
		if err != nil {
			t.Fatal(err)
		}
		tmpls = append(tmpls, tm)
	}
	sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}}
	var qs [2]*sq.SQ // the mkey moves between two queues (two checkers)
	for i := range qs {
		qs[i], _ = newSQ(t, 64, 0)
		qs[i].SetWRFlags(mlx.IBV_SEND_INLINE)
	}
	mk := sq.NewMkey(0x4500, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	mk.MemPSV, mk.WirePSV = 0x31, 0x32
	rng := rand.New(rand.NewPCG(26, 38))
	var held *mlx.SigBlockAttr // what the mkey must hold; nil: no domain
	// The sequences the tag could confuse, then random ones.
	fixed := []int{0, 3, 0, 6, 0, 9, 1, 4, 7, 1, 12, 1, 13, 4, 2, 14, 8, 5, 0, 15, 1}
	for step := range 400 {
		op := rng.IntN(16)
		if step < len(fixed) {
			op = fixed[step]
		}
		q := qs[rng.IntN(len(qs))]
		k := op % 3
		var err error
		switch {
		case op < 3: // the four calls with attrs[k]
			err = fourCalls(q, mk, attrs[k], sges)
			held = attrs[k]
		case op < 6: // ConfigureMkey in a batch
			err = inBatch(q, func() error { return q.ConfigureMkey(mk, tmpls[k], sges) })
			held = attrs[k]
		case op < 9:
			err = q.PostConfigureMkey(mk, tmpls[k], sges)
			held = attrs[k]
		case op < 12: // reset: no domain
			err = inBatch(q, func() error {
				q.MkeyConfigure(mk, 2, &mlx.MkeyConfAttr{ConfFlags: mlx.MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR})
				q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
				return q.SetMkeyLayoutList(sges)
			})
			held = nil
		case op == 12: // a configuration aborted: the mkey as it was
			q.Start()
			q.ConfigureMkey(mk, tmpls[(step+1)%3], sges)
			q.Abort()
		case op == 13:
			q.Start()
			fourCallsOpen(q, mk, attrs[(step+2)%3], sges)
			q.Abort()
		case op == 15: // a reset aborted
			q.Start()
			q.MkeyConfigure(mk, 2, &mlx.MkeyConfAttr{ConfFlags: mlx.MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR})
			q.Abort()
		default: // a batch that fails at Complete: nothing posted
			q.Start()
			q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{})
			q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
			q.SetMkeySigBlock(attrs[(step+1)%3]) // the layout missing
			if q.Complete() == nil {
				t.Fatalf("step %d: a configuration without its layout posted", step)
			}
		}
		if err != nil {
			t.Fatalf("step %d (op %d): %v", step, op, err)
		}
		if err := q.Completed(q.Outstanding()); err != nil {
			t.Fatal(err)
		}
		if why := holds(mk, held); why != "" {
			t.Fatalf("step %d (op %d): the mkey holds other attributes than it was configured with: %s", step, op, why)
		}
	}
}

func inBatch(q *sq.SQ, f func() error) error {
	if err := q.Start(); err != nil {
		return err
	}
	if err := f(); err != nil {
		q.Abort()
		return err
	}
	return q.Complete()
}

func fourCalls(q *sq.SQ, mk *sq.Mkey, a *mlx.SigBlockAttr, sges []mlx.SGE) error {
	return inBatch(q, func() error { return fourCallsOpen(q, mk, a, sges) })
}

// fourCallsOpen sets a's signature (set, not reset: an unknown mkey's
// next configuration must do one of the two) in the open batch.
func fourCallsOpen(q *sq.SQ, mk *sq.Mkey, a *mlx.SigBlockAttr, sges []mlx.SGE) error {
	q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{})
	q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
	q.SetMkeyLayoutList(sges)
	return q.SetMkeySigBlock(a)
}

// holds says how mk's signature attributes differ from a's ("" if not).
func holds(mk *sq.Mkey, a *mlx.SigBlockAttr) string {
	if a == nil {
		if mk.Mem.Present || mk.Wire.Present {
			return "a domain after a reset"
		}
		return ""
	}
	if mk.SigFlags != a.Flags || mk.CheckMask != a.CheckMask || mk.CopyMask != a.CopyMask {
		return fmt.Sprintf("flags %v/%v, check mask %#x/%#x, copy mask %#x/%#x", mk.SigFlags, a.Flags, mk.CheckMask, a.CheckMask, mk.CopyMask, a.CopyMask)
	}
	for _, d := range []struct {
		name string
		got  *sq.Domain
		want *mlx.SigBlockDomain
	}{{"memory", &mk.Mem, a.Mem}, {"wire", &mk.Wire, a.Wire}} {
		g, w := d.got, d.want
		switch {
		case g.Present != (w != nil):
			return fmt.Sprintf("%s domain present %v", d.name, g.Present)
		case w == nil:
		case g.Domain.SigType != w.SigType || g.Domain.BlockSize != w.BlockSize || g.Domain.CompMask != w.CompMask:
			return fmt.Sprintf("%s domain %+v, want %+v", d.name, g.Domain, *w)
		case w.SigType == mlx.MLX5DV_SIG_TYPE_T10DIF && g.T10dif != *w.SigDif():
			return fmt.Sprintf("%s T10-DIF %+v, want %+v", d.name, g.T10dif, *w.SigDif())
		case w.SigType == mlx.MLX5DV_SIG_TYPE_CRC && g.Crc != *w.SigCRC():
			return fmt.Sprintf("%s CRC %+v, want %+v", d.name, g.Crc, *w.SigCRC())
		}
	}
	return ""
}

// TestMkeyCryptoRollback: an aborted batch leaves an mkey's crypto
// attributes as the last posted configuration set them (a configuration
// saves them only when it changes them).
func TestMkeyCryptoRollback(t *testing.T) {
	q, _ := newSQ(t, 64, 0)
	q.SetWRFlags(mlx.IBV_SEND_INLINE)
	mk := sq.NewMkey(0x4400, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 8)
	dek := sq.DEK{ObjectID: 0x77}
	attr := func(tag byte) *mlx.CryptoAttr {
		a := &mlx.CryptoAttr{DataUnitSize: mlx.MLX5DV_BLOCK_SIZE_512, DEK: unsafe.Pointer(&dek)}
		a.Keytag[0] = tag
		return a
	}
	configure := func(a *mlx.CryptoAttr) {
		q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{})
		q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
		q.SetMkeyLayoutList([]mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}})
		q.SetMkeyCrypto(a)
	}
	q.Start()
	configure(attr(1))
	if err := q.Complete(); err != nil {
		t.Fatal(err)
	}
	q.Start()
	configure(attr(2))
	q.Abort()
	if mk.CryptoAttr != *attr(1) || !mk.Unknown {
		t.Fatalf("after an aborted batch: keytag %d, unknown %v; want 1, true", mk.CryptoAttr.Keytag[0], mk.Unknown)
	}
}
