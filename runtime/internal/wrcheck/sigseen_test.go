package wrcheck

import (
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// sigAttrs is a signature attribute struct with its two domains and
// their members, all its own memory.
type sigAttrs struct {
	attr      mlx.SigBlockAttr
	mem, wire mlx.SigBlockDomain
	dif       mlx.SigT10DIF
	crc       mlx.SigCRC
	noMem     bool
}

func newSigAttrs(noMem bool) *sigAttrs {
	s := &sigAttrs{noMem: noMem}
	s.dif = mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, BG: 0xffff, AppTag: 0x1234, RefTag: 0x5678,
		Flags: uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP)}
	s.crc = mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, Seed: 0xffffffff}
	s.wire = mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	s.wire.SetSigDif(&s.dif)
	s.mem = mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_4096}
	s.mem.SetSigCRC(&s.crc)
	s.attr = mlx.SigBlockAttr{Wire: &s.wire, CheckMask: 0xff, Flags: 0}
	if !noMem {
		s.attr.Mem = &s.mem
	}
	return s
}

// TestSigSeenSame: the snapshot matches equal values in other memory,
// and no longer matches once any value a rule reads differs: each field
// of the attributes, of either domain and of the member of its type, a
// domain added or removed, the union pointer cleared, or the domain's
// type changed (whose member is then another struct).
func TestSigSeenSame(t *testing.T) {
	for _, noMem := range []bool{false, true} {
		var s sigSeen
		if s.same(&newSigAttrs(noMem).attr) || s.same(&mlx.SigBlockAttr{}) {
			t.Fatal("an empty snapshot matched")
		}
		s.take(&newSigAttrs(noMem).attr)
		if s.same(nil) {
			t.Fatal("nil matched")
		}
		if a := newSigAttrs(noMem); !s.same(&a.attr) {
			t.Fatalf("noMem %v: equal values in other memory do not match", noMem)
		}
		changes := map[string]func(a *sigAttrs){
			"flags":           func(a *sigAttrs) { a.attr.Flags = mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK },
			"check_mask":      func(a *sigAttrs) { a.attr.CheckMask = 0x0f },
			"copy_mask":       func(a *sigAttrs) { a.attr.CopyMask = 1 },
			"comp_mask":       func(a *sigAttrs) { a.attr.CompMask = 1 << 40 },
			"wire removed":    func(a *sigAttrs) { a.attr.Wire = nil },
			"wire sig_type":   func(a *sigAttrs) { a.wire.SigType = mlx.MLX5DV_SIG_TYPE_CRC; a.wire.SetSigCRC(&a.crc) },
			"wire block_size": func(a *sigAttrs) { a.wire.BlockSize = mlx.MLX5DV_BLOCK_SIZE_4096 },
			"wire comp_mask":  func(a *sigAttrs) { a.wire.CompMask = 1 },
			"wire sig nil":    func(a *sigAttrs) { a.wire.Sig = nil },
			"bg_type":         func(a *sigAttrs) { a.dif.BGType = mlx.MLX5DV_SIG_T10DIF_CSUM },
			"bg":              func(a *sigAttrs) { a.dif.BG = 0 },
			"app_tag":         func(a *sigAttrs) { a.dif.AppTag = 0x1235 },
			"ref_tag":         func(a *sigAttrs) { a.dif.RefTag = 1 << 31 },
			"dif flags":       func(a *sigAttrs) { a.dif.Flags = 0 },
			"mem toggled": func(a *sigAttrs) {
				if a.attr.Mem == nil {
					a.attr.Mem = &a.mem
				} else {
					a.attr.Mem = nil
				}
			},
		}
		if !noMem {
			changes["mem block_size"] = func(a *sigAttrs) { a.mem.BlockSize = mlx.MLX5DV_BLOCK_SIZE_520 }
			changes["mem comp_mask"] = func(a *sigAttrs) { a.mem.CompMask = 1 << 63 }
			changes["crc type"] = func(a *sigAttrs) { a.crc.Type = mlx.MLX5DV_SIG_CRC_TYPE_CRC32 }
			changes["crc seed"] = func(a *sigAttrs) { a.crc.Seed = 0 }
			changes["crc seed high"] = func(a *sigAttrs) { a.crc.Seed |= 1 << 60 }
		}
		for name, change := range changes {
			a := newSigAttrs(noMem)
			change(a)
			if s.same(&a.attr) {
				t.Errorf("noMem %v: %s: still matches", noMem, name)
			}
		}
	}
}
