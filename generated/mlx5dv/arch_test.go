package mlx5dv_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// shift16 is the pattern Go 1.26 compiles wrongly on ppc64 and ppc64le
// (a 24-bit mask where uint16 needs 16 bits).
//
//go:noinline
func shift16(v uint32) uint64 { return uint64(uint16(v >> 8)) }

// TestPartShiftPPC64 reads bit ranges whose plain uint16(uint32 >> n)
// form the compiler gets wrong on ppc64/ppc64le; the generated getters
// shift in 64 bits. scripts/test-slow.sh runs it under qemu-ppc64le.
func TestPartShiftPPC64(t *testing.T) {
	if got := shift16(0x0100002f); got != 0 {
		// Not a failure of this package: it shows that this run does
		// exercise the compiler bug the getters avoid.
		t.Logf("%s/%s: uint64(uint16(0x0100002f >> 8)) = %d (compiler bug present)", runtime.GOOS, runtime.GOARCH, got)
	}
	var ctrl mlx5dv.WQECtrlSeg
	for _, v := range []uint32{0x0100002f, 0xffffffff, 0x01ffff00, 0x00ffff00, 0xff000000, 0x12345678} {
		ctrl.SetOpmodIdxOpcode(v)
		if got, want := uint64(ctrl.WQEIndex()), uint64(v>>8)&0xffff; got != want {
			t.Errorf("opmod_idx_opcode %#08x: WqeIndex %#x, want %#x", v, got, want)
		}
		if got, want := int(ctrl.WQEIndex()), int(v>>8&0xffff); got != want {
			t.Errorf("opmod_idx_opcode %#08x: int(WqeIndex) %#x, want %#x", v, got, want)
		}
		if got, want := uint64(ctrl.Opmod()), uint64(v>>24); got != want {
			t.Errorf("opmod_idx_opcode %#08x: Opmod %#x, want %#x", v, got, want)
		}
		if got, want := uint64(ctrl.Opcode()), uint64(v&0xff); got != want {
			t.Errorf("opmod_idx_opcode %#08x: Opcode %#x, want %#x", v, got, want)
		}
	}
}

// TestMirrorLayout: the mirrors match C (the build checked them) on the
// LP64 targets, and say they do not elsewhere (386, arm: ILP32).
func TestMirrorLayout(t *testing.T) {
	err := mlx5dv.MirrorLayout()
	switch runtime.GOARCH {
	case "amd64", "arm64", "ppc64le", "ppc64", "s390x", "riscv64", "loong64", "mips64", "mips64le":
		if err != nil {
			t.Fatalf("%s: %v", runtime.GOARCH, err)
		}
	default:
		if err == nil || !strings.Contains(err.Error(), "GOARCH="+runtime.GOARCH) {
			t.Fatalf("%s: MirrorLayout = %v, want an error naming the GOARCH", runtime.GOARCH, err)
		}
	}
}
